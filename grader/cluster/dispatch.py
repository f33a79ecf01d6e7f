"""`grade batch --cluster`: the batch's submissions graded by a Dask cluster's workers instead of this machine.

This process stays the batch (grader.teacher.batch collects, records results.jsonl as results arrive, writes the
gradebook); only the grading moves. A Dask worker plugin (grader.cluster.worker_plugin) starts one warm grading
process per worker (grader.cluster.worker_grader), which forks a judge and a sandbox per submission as a local batch
does. The course travels with the plugin, as a zip of its exercises and checks (the built-in course is part of
the grader), and a worker grades only where the grader, course, torch and Python it would grade with have the
batch's fingerprint, and where its sandbox has the isolation layers required. Submissions travel as their
loaded source: no filesystem is shared. Dask regrades elsewhere what a dying worker held; a submission is
recorded once, when its result arrives; the grader's own failure is graded again once, then kept as one.
The batch watches the workers (`Health`): each one lost is said as it happens and kept in workers.json; with no
worker left that can grade, it says so once a minute, and after a timeout it stops, keeping what is done.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
import secrets
import signal
import sys
import threading
import time
import zipfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from grader.judge.result import error_result
from grader.judge.job import Job
from grader.course.exercises import PACKAGE_DIR, Course, current_course, installed_courses
from grader.judge.result import Result
from grader.sandbox.source import SubmissionError, load_source
from grader.text import Text, message_of, say

INSTALL = "--cluster needs Dask: pip install 'torch-katas[cluster]'"
LAYERS = ("namespaces", "landlock", "dedicated uid", "seccomp", "process limit")  # grader.judge.doctor.LAYERS' names
BORROWED = "borrowed"  # course_files' folder of the courses a course borrows exercises from
IN_FLIGHT = 1000  # submissions handed to the scheduler at once: more wait here, so memory stays bounded
FAILED = ("The cluster could not grade this submission ({why}). This is not a grade: grade it again.",
          "集群没能为这份提交评分（{why}）。这不是成绩：请重新评分。")
TIMEOUT = 600.0  # seconds without a worker that can grade, after which the batch stops (--cluster-timeout)
CHECK_EVERY = 2.0  # seconds between two looks at the cluster's workers
POLL = 0.1  # seconds between two looks for completed gradings
SAY_EVERY = 60.0  # seconds between two lines while no worker can grade


class MissingExtra(ImportError):
    """Dask is not installed."""


def require() -> None:
    """Raise MissingExtra, with the line that installs it, where distributed is not importable."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise MissingExtra(Text(INSTALL)) from None


class ClusterError(RuntimeError):
    """The cluster cannot grade the batch: its scheduler is out of reach, or no worker accepts the batch
    (another grader or course, missing isolation layers)."""


class ClusterStopped(ClusterError):
    """The batch stopped grading: no worker could grade it for longer than its timeout (what was done is kept)."""


@dataclass
class Target:
    """Where to grade: a scheduler address (tcp://host:8786), a scheduler file (.json) or local:N, the isolation
    layers every worker's sandbox must have, and how long to wait while no worker can grade (seconds)."""

    address: str
    require_layers: tuple[str, ...] = ()
    timeout: float = TIMEOUT


# -- what a worker must grade with ------------------------------------------------------------------

def _skipped(path: Path) -> bool:
    return any(part == "__pycache__" or part.startswith(".") for part in path.parts)


def course_files(course: Course) -> dict[str, Path]:
    """The files of `course` that decide a grade, by the name they travel under: course.toml, the exercises'
    folders (metadata, stubs) and the checks folder; those of the courses it borrows exercises from under
    borrowed/<course>/ (a worker has them already: they count in the fingerprint, and do not travel)."""
    files = {}
    if (course.root / "course.toml").is_file() and not course.built_in:
        files["course.toml"] = course.root / "course.toml"
    for top, folder in (("exercises", course.exercises_dir), ("checks", course.checks_dir)):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            relative = path.relative_to(folder)
            if path.is_file() and not path.is_symlink() and not _skipped(relative):
                files[f"{top}/{relative.as_posix()}"] = path
    for other in course.borrowed():
        files.update({f"{BORROWED}/{other.name}/{name}": path for name, path in course_files(other).items()})
    return files


def _digest(files: dict[str, Path]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        data = files[name].read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def grading_environment(course: Course) -> dict[str, str]:
    """What a grade depends on besides the submission: the grader's code and messages, the course's checks
    and metadata, torch's and Python's versions."""
    grader = {p.relative_to(PACKAGE_DIR).as_posix(): p for p in sorted(PACKAGE_DIR.rglob("*"))
              if p.suffix in (".py", ".toml", ".ini") and not _skipped(p.relative_to(PACKAGE_DIR))
              and p.relative_to(PACKAGE_DIR).parts[0] != "_bundle"}
    try:
        torch = version("torch")
    except PackageNotFoundError:
        torch = "none"
    return {"grader": _digest(grader), "course": _digest(course_files(course)), "torch": torch,
            "python": platform.python_version_tuple()[0] + "." + platform.python_version_tuple()[1]}


def differences(batch: dict[str, str], worker: dict[str, str]) -> list[str]:
    """The parts of two fingerprints that differ ("torch: the batch's 2.13.0, this worker's 2.12.0")."""
    return [f"{part}: the batch's {batch[part][:12]}, this worker's {worker.get(part, 'none')[:12]}"
            for part in batch if batch[part] != worker.get(part)]


def course_zip(course: Course) -> bytes | None:
    """The course as a zip a worker unpacks and grades with; None for the built-in course (part of the grader)."""
    if course.built_in:
        return None
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in course_files(course).items():
            if not name.startswith(f"{BORROWED}/"):
                zf.write(path, name)
    return buffer.getvalue()


def missing_layers(applied: list[str], required: tuple[str, ...]) -> list[str]:
    """The required layers a sandbox did not apply (its applied layers read as `grade doctor` names them)."""
    return [layer for layer in required if not any(a.startswith(layer) for a in applied)]


# -- the batch's side --------------------------------------------------------------------------------

def connect(address: str):
    """A Dask client for `address`, and the LocalCluster made for `local:N` (None otherwise)."""
    import dask
    from distributed import Client, LocalCluster

    if address.startswith("local:"):
        dask.config.set({"distributed.worker.profile.enabled": False})  # sampling stacks: CPU grading could use
        cluster = LocalCluster(n_workers=int(address.removeprefix("local:")), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster), cluster
    try:
        if address.endswith(".json"):
            return Client(scheduler_file=address), None
        return Client(address), None
    except (OSError, ValueError) as exc:  # unreachable, refused, timed out, not an address
        raise ClusterError(Text("cannot reach a Dask scheduler at {address}: {error}",
                                "无法连接 {address} 上的 Dask 调度器：{error}", address=address, error=exc)) from None


def failure(job: Job, why: str | Text, lang: str) -> Result:
    """The result of a submission the cluster could not grade: the grader's failure, never the student's."""
    ex = job.exercise
    return Result(exercise=ex.id, name=ex.name, submission=str(job.path), status="error", score=0.0,
                  max_score=ex.points, title=Text(ex.title, ex.zh.get("title")), message=Text(*FAILED, why=why),
                  grader_failure=True, lang=lang)


def stopped_text(timeout: float) -> Text:
    return Text("no worker of the cluster could grade this batch for {timeout} s: stopped; what was graded is kept, "
                "and the same command goes on", "集群中有 {timeout} 秒没有能为这批提交评分的 worker：已停止；已评分的"
                "都保留，再运行同一条命令即可继续", timeout=f"{timeout:g}")


def worker_line(status: dict, lang: str = "en") -> str:
    where = where_of(status)
    if status.get("refused"):
        return say(lang, "{where}: REFUSED, {why}", where=where, why=status["refused"])
    return f"{where}: {status['summary']}"


@dataclass
class Health:
    """The cluster's workers as a batch watches them (`statuses`: address -> what its plugin said): each worker lost is
    said as it happens and marked in out/workers.json; while no worker that can grade is left, a line a minute; after
    `timeout` seconds of that, `check` says to stop."""

    client: object
    out: Path
    lang: str
    timeout: float
    statuses: dict[str, dict] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    checked: float = float("-inf")
    idle_since: float | None = None
    said: float = float("-inf")

    def joined(self, event) -> None:
        """A worker that set the plugin up, now or later (from Dask's thread), or came back."""
        status = event[1]
        with self.lock:
            if status["worker"] not in self.statuses or self.statuses[status["worker"]].get("lost"):
                self.statuses[status["worker"]] = status
                click.echo(worker_line(status, self.lang), err=True)
                self.save()

    def save(self) -> None:
        (self.out / "workers.json").write_text(json.dumps(list(self.statuses.values()), indent=1), encoding="utf-8")

    def check(self, last: bool = False) -> bool:
        """Look at the cluster's workers (every CHECK_EVERY seconds at most, but for the `last` look); True when none
        could grade for longer than the timeout."""
        now = time.monotonic()
        if now - self.checked < CHECK_EVERY and not last:
            return False
        self.checked = now
        present = set(self.client.scheduler_info()["workers"])  # type: ignore[attr-defined]
        with self.lock:
            for address, status in self.statuses.items():
                if address not in present and not status.get("lost"):
                    status["lost"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
                    click.echo(say(self.lang, "{where}: LOST; what it was grading goes to another worker.",
                                   where=where_of(status)), err=True)
                    self.save()
            ready = any(s.get("ready") and not s.get("lost") for s in self.statuses.values())
        return self.waiting(now, ready)

    def waiting(self, now: float, ready: bool) -> bool:
        """Say, once a minute, that no worker can grade; True once that has lasted longer than the timeout."""
        if ready:
            self.idle_since = None
            return False
        if self.idle_since is None:
            self.idle_since, self.said = now, float("-inf")
        waited = now - self.idle_since
        if now - self.said >= SAY_EVERY:
            self.said = now
            click.echo(say(self.lang, "No worker of the cluster can grade this batch: waiting for one ({waited} s so "
                                      "far; the batch stops after {timeout} s, --cluster-timeout).",
                           waited=f"{waited:.0f}", timeout=f"{self.timeout:g}"), err=True)
        return waited >= self.timeout


def where_of(status: dict) -> str:
    return f"{status['worker']} ({status.get('host', '?')})"


def grade_on_cluster(target: Target, jobs: list[Job], record, options: dict, out: Path) -> bool:
    """Grade `jobs` on the cluster, `record`ing each result as it arrives; write out/workers.json (what each
    worker is, the isolation it applies, when it was lost); return True if interrupted by Ctrl-C. Raise ClusterError
    (a usage problem) when no worker accepts the batch, ClusterStopped when no worker could grade for longer than the
    target's timeout (what was graded is recorded)."""
    from grader.cluster.worker_plugin import GradingPlugin

    course = current_course()
    lang = options.get("lang", "en")
    here_only = [c for c in course.borrowed() if not (c.built_in or c.spec in installed_courses())]
    if here_only:
        raise ClusterError(Text("{course} uses exercises of the course folder {folder}, which does not travel to the "
                                "workers: install that course as a package, or copy its exercises (docs/authoring.md)",
                                "{course} 用了课程文件夹 {folder} 中的练习，它不会被传到 worker 上：请把那门课程安装"
                                "成包，或复制它的练习（docs/authoring.md）", course=course.name,
                                folder=here_only[0].root))
    name = f"torch-katas-{secrets.token_hex(6)}"  # this batch's plugin and the Dask resource its workers offer
    config = {"course": "torch-katas" if course.built_in else None, "fingerprint": grading_environment(course),
              "require": list(target.require_layers), "exercises": sorted({job.exercise.name for job in jobs}),
              "lang": lang}
    client, local = connect(target.address)
    health = Health(client, out, lang, target.timeout)
    registered = False
    try:
        client.subscribe_topic(name, health.joined)
        if not client.scheduler_info()["workers"]:
            click.echo(say(lang, "Waiting for a worker at {address}...", address=target.address), err=True)
            while not client.scheduler_info()["workers"]:
                if health.waiting(time.monotonic(), False):
                    raise ClusterStopped(stopped_text(target.timeout))
                time.sleep(CHECK_EVERY)
        client.register_plugin(GradingPlugin(name, config, course_zip(course)), name=name)
        registered = True
        for status in client.run(_status_of, name).values():
            health.joined((None, status))
        if not any(s.get("ready") for s in health.statuses.values()):
            raise ClusterError(Text("no worker of the cluster can grade this batch: {workers}",
                                    "集群中没有能为这批提交评分的 worker：{workers}",
                                    workers="; ".join(worker_line(s, lang) for s in health.statuses.values())))
        return _grade_all(client, name, jobs, record, options, lang, health)
    finally:
        if registered:  # the workers' grading processes end
            try:
                client.unregister_worker_plugin(name)
            except Exception:  # the scheduler may be gone: nothing left to stop there
                pass
        client.close()
        if local is not None:
            local.close()


def _status_of(name: str, dask_worker=None) -> dict:
    """Run on each worker: its plugin's status."""
    return dask_worker.plugins[name].status


def _grade_all(client, name: str, jobs: list[Job], record, options: dict, lang: str, health: Health) -> bool:
    from distributed import as_completed

    from grader.cluster.worker_plugin import grade_task

    wanted = {k: v for k, v in options.items() if k != "hidden"}  # a worker hides its own folders
    queue = list(reversed(jobs))
    waiting = as_completed(with_results=True, raise_errors=False)  # results fetched as they complete
    in_flight: dict = {}  # key -> (future, job, source, attempt)
    count = iter(range(sys.maxsize))

    def submit(job: Job, source: dict, attempt: int) -> None:
        ex = job.exercise
        request = {"exercise": ex.name, "points": ex.points, "overrides": ex.overrides, "source": source,
                   "options": {**wanted, "seed": wanted.get("seed") if job.seed is None else job.seed}}
        future = client.submit(grade_task, name, request, key=f"grade-{ex.id}-{next(count)}-{name}",
                               resources={name: 1}, pure=False)
        in_flight[future.key] = (future, job, source, attempt)
        waiting.add(future)

    signal.signal(signal.SIGINT, signal.default_int_handler)
    label = Text("Grading", "评分中").render(lang)
    with click.progressbar(length=len(jobs), label=label, show_eta=True, file=sys.stderr,
                           hidden=not sys.stderr.isatty()) as bar:
        def fill() -> None:
            while queue and len(in_flight) < IN_FLIGHT:
                job = queue.pop()
                try:
                    source = asdict(load_source(job.path))
                except SubmissionError as exc:
                    result = error_result(job.student, job.exercise, message_of(exc), str(job.path), job.sha256)
                    result.needs_look = Text("the file cannot be read: {error}", "文件无法读取：{error}",
                                             error=message_of(exc)).render(lang)
                    record(result, job)
                    bar.update(1)
                    continue
                source["path"] = str(source["path"])
                submit(job, source, 0)

        def handle(future, reply) -> None:
            """One grading's end: its result recorded, or the grader's failure graded again once."""
            _, job, source, attempt = in_flight.pop(future.key)
            if future.status == "finished":  # the judge's result, as a local batch's judge gives it
                result = Result.from_json(reply)
                result.lang = lang
            else:  # its worker's grading process failed, or Dask gave up or lost it
                why = type(reply).__name__ if isinstance(reply, BaseException) else future.status
                result = failure(job, Text("the cluster's grading failed: {why}", "集群的评分失败了：{why}",
                                           why=why), lang)
            future.release()
            if result.grader_failure and attempt == 0:
                click.echo(f"{job.student}/{job.exercise.id}: {result.message.render(lang)} "
                           + say(lang, "Grading it again."), err=True)
                submit(job, source, 1)
                return
            record(result, job)
            bar.update(1)
            fill()

        try:
            fill()
            while in_flight:
                done = waiting.next_batch(block=False)  # what completed; and a look at the workers
                for future, reply in done:
                    handle(future, reply)
                if health.check():
                    client.cancel([entry[0] for entry in in_flight.values()])
                    raise ClusterStopped(stopped_text(health.timeout))
                if not done:
                    time.sleep(POLL)
            health.check(last=True)  # a worker lost while the others finished the batch is said too
        except KeyboardInterrupt:
            client.cancel([entry[0] for entry in in_flight.values()])
            return True
    return False
