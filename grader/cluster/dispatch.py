"""`grade batch --cluster`: the batch's submissions graded by a Dask cluster's workers instead of this machine.

This process stays the batch (grader.teacher.batch collects, records results.jsonl as results arrive, writes the
gradebook); only the grading moves. A Dask worker plugin (grader.cluster.worker_plugin) starts one warm grading
process per worker (grader.cluster.worker_grader), which forks a judge and a sandbox per submission as a local batch
does. The course travels with the plugin, as a zip of its exercises and checks (the built-in course is part of
the grader), and a worker grades only where the grader, course, torch and Python it would grade with have the
batch's fingerprint, and where its sandbox has the isolation layers required. Submissions travel as their
loaded source: no filesystem is shared. Dask regrades elsewhere what a dying worker held; a submission is
recorded once, when its result arrives; the grader's own failure is graded again once, then kept as one.
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
import zipfile
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from grader.judge.result import error_result
from grader.judge.job import Job
from grader.course.exercises import PACKAGE_DIR, Course, current_course
from grader.judge.result import Result
from grader.sandbox.source import SubmissionError, load_source
from grader.text import Text, message_of, say

INSTALL = "--cluster needs Dask: pip install 'torch-katas[cluster]'"
LAYERS = ("namespaces", "landlock", "dedicated uid", "seccomp", "process limit")  # grader.judge.doctor.LAYERS' names
IN_FLIGHT = 1000  # submissions handed to the scheduler at once: more wait here, so memory stays bounded
FAILED = ("The cluster could not grade this submission ({why}). This is not a grade: grade it again.",
          "集群没能为这份提交评分（{why}）。这不是成绩：请重新评分。")


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


@dataclass
class Target:
    """Where to grade: a scheduler address (tcp://host:8786), a scheduler file (.json) or local:N, and the
    isolation layers every worker's sandbox must have."""

    address: str
    require_layers: tuple[str, ...] = ()


# -- what a worker must grade with ------------------------------------------------------------------

def _skipped(path: Path) -> bool:
    return any(part == "__pycache__" or part.startswith(".") for part in path.parts)


def course_files(course: Course) -> dict[str, Path]:
    """The files of `course` that decide a grade, by the name they travel under: course.toml, the exercises'
    folders (metadata, stubs) and the checks folder."""
    files = {}
    if (course.root / "course.toml").is_file() and not course.built_in:
        files["course.toml"] = course.root / "course.toml"
    for top, folder in (("exercises", course.exercises_dir), ("checks", course.checks_dir)):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            relative = path.relative_to(folder)
            if path.is_file() and not path.is_symlink() and not _skipped(relative):
                files[f"{top}/{relative.as_posix()}"] = path
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


def worker_line(status: dict, lang: str = "en") -> str:
    where = f"{status['worker']} ({status.get('host', '?')})"
    if status.get("refused"):
        return say(lang, "{where}: REFUSED, {why}", where=where, why=status["refused"])
    return f"{where}: {status['summary']}"


def grade_on_cluster(target: Target, jobs: list[Job], record, options: dict, out: Path) -> bool:
    """Grade `jobs` on the cluster, `record`ing each result as it arrives; write out/workers.json (what each
    worker is and the isolation it applies); return True if interrupted by Ctrl-C. Raise ClusterError
    (a usage problem) when no worker accepts the batch."""
    from grader.cluster.worker_plugin import GradingPlugin

    course = current_course()
    lang = options.get("lang", "en")
    name = f"torch-katas-{secrets.token_hex(6)}"  # this batch's plugin and the Dask resource its workers offer
    config = {"course": "torch-katas" if course.built_in else None, "fingerprint": grading_environment(course),
              "require": list(target.require_layers), "exercises": sorted({job.exercise.name for job in jobs}),
              "lang": lang}
    client, local = connect(target.address)
    statuses: dict[str, dict] = {}
    registered = False
    lock = threading.Lock()

    def joined(event) -> None:  # a worker that set the plugin up, now or later (from Dask's thread)
        status = event[1]
        with lock:
            if status["worker"] not in statuses:
                statuses[status["worker"]] = status
                click.echo(worker_line(status, lang), err=True)
                (out / "workers.json").write_text(json.dumps(list(statuses.values()), indent=1), encoding="utf-8")

    try:
        client.subscribe_topic(name, joined)
        if not client.scheduler_info()["workers"]:
            click.echo(say(lang, "Waiting for a worker at {address}...", address=target.address), err=True)
            client.wait_for_workers(1)
        client.register_plugin(GradingPlugin(name, config, course_zip(course)), name=name)
        registered = True
        for status in client.run(_status_of, name).values():
            joined((None, status))
        if not any(s.get("ready") for s in statuses.values()):
            raise ClusterError(Text("no worker of the cluster can grade this batch: {workers}",
                                    "集群中没有能为这批提交评分的 worker：{workers}",
                                    workers="; ".join(worker_line(s, lang) for s in statuses.values())))
        return _grade_all(client, name, jobs, record, options, lang)
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


def _grade_all(client, name: str, jobs: list[Job], record, options: dict, lang: str) -> bool:
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
                   "options": wanted}
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

        try:
            fill()
            for future, reply in waiting:
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
                    continue
                record(result, job)
                bar.update(1)
                fill()
        except KeyboardInterrupt:
            client.cancel([entry[0] for entry in in_flight.values()])
            return True
    return False
