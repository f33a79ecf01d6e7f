"""Grade one submission: fork a judge that runs pytest over the exercise's hidden checks.

The calling process is the warm parent: it has imported torch, pytest and the grader but never
computes, so forks are cheap and safe (docs/security.md). The judge forks the sandbox that runs the
learner's code; results come back to the parent line by line through a pipe the sandbox never
sees, so nothing learner code prints or does can forge them. On the portable backend (sandbox/backend.py) nothing
forks: the judge is a process started by multiprocessing's `spawn` (`_spawned_judge_main`), its sandbox another,
and the result lines come on a multiprocessing pipe, one message each.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import multiprocessing.connection
import os
import pickle
import random
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # is_available() stays fork-safe

import pytest
import pytest_timeout
import torch

from grader import framing
from grader.sandbox import backend, isolation, portable, probe_shipping, safefs, scrub, warmup, zygote
from grader.checking import routes
from grader.course.exercises import CHECKS_DIR, PACKAGE_DIR, SOLUTIONS_DIR, Exercise
from grader.judge.plugin import JudgePlugin
from grader.judge.result import CheckResult, Result, text
from grader.sandbox.limits import Limits
from grader.sandbox.probes import seed_torch
from grader.sandbox.source import Source
from grader.text import Text, verbatim
from grader.course.variants import default_draw
from grader.course.collection import AUTOLOAD, only_given_plugins

torch.set_num_threads(1)  # forked children must never inherit a multi-threaded OpenMP pool


# pytest's own plugins a judge has no use for (or that would get in its way): each costs time in every forked
# judge's session. Its logging plugin stays: without it, judges forked from a pytest process (the suite grades
# in-process) saw the calls of ex07's training loops run until killed.
UNUSED = ("cacheprovider", "unraisableexception", "threadexception", "faulthandler", "doctest", "pastebin",
          "legacypath", "recwarn", "stepwise", "setuponly", "setupplan", "debugging", "junitxml", "python_path",
          "tmpdir", "monkeypatch", "nose")
DISABLED = [arg for name in UNUSED for arg in ("-p", f"no:{name}")]


JUDGE_MEMORY = 8 << 30  # a judge's address space (torch and pytest take about 0.7 GiB): past it, a grader failure


def prewarm(exercises: Sequence[Exercise] = ()) -> None:
    """For processes that grade many submissions (batch, watch, validate): import what torch loads
    lazily on first use, once here rather than once per forked judge and sandbox. The first
    `backward(gradient=...)` imports sympy through torch.fx (1-2 s); pytest's plugins, the exercises'
    `preload` modules and their checks are imported too."""
    from _pytest.config import default_plugins

    for name in ("_argcomplete", *(p for p in default_plugins if p not in UNUSED)):  # each judge's pytest.main's
        importlib.import_module(f"_pytest.{name}")
    import torch.fx.experimental.symbolic_shapes  # noqa: F401

    zygote.shared()  # started now, importing torch while we import the checks
    for exercise in exercises:
        preload(exercise)
        import_checks(exercise)
        limits = limits_for(exercise)  # what a sandbox may read: computed once here
        if zygote.enabled():
            probe_bundle(exercise)  # made once here, inherited by every judge
        if not backend.portable():  # a spawned judge inherits nothing
            prepare(exercise, timeout_for(limits))
    warmup.run()  # the judges' own first modules, backward and optimizers: run once here


def import_checks(exercise: Exercise):
    """The exercise's checks module, imported as pytest will (a course's checks folder first on sys.path, as
    pytest puts a folder that is not a package), so the judge finds it imported. Two courses may each have an
    exercise of the same name (a course and its release, a teacher's hw1 and another's): one process keeps one
    module by that name, so one of another file is dropped first, with what was made of it (`_forget_checks`)."""
    name = exercise.checks_module
    module = sys.modules.get(name)
    if module is not None and not _same_file(getattr(module, "__file__", None), exercise.checks):
        _forget_checks(name)
    if not exercise.home.checks_package:
        folder = str(exercise.home.checks_dir)
        if sys.path[:1] != [folder]:
            sys.path[:] = [folder, *(p for p in sys.path if p != folder)]
    return importlib.import_module(name)


def _same_file(path: str | None, expected: Path) -> bool:
    try:
        return path is not None and os.path.samefile(path, expected)
    except OSError:
        return False


def _forget_checks(name: str) -> None:
    """Drop the checks module `name` (another course's, of the same name), its probe bundle and its probes; a spare
    judge forked before is stale (`_warm_state`)."""
    from grader.sandbox.probes import PROBES

    global _forgotten
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]
    _bundles.pop(name, None)
    for key in [k for k in PROBES if k.startswith(name + ".")]:
        del PROBES[key]
    _forgotten += 1


_forgotten = 0  # checks modules dropped for another of the same name: a spare judge forked before is stale


def preload(exercise: Exercise) -> None:
    """Import the modules the exercise's metadata names (`preload`), such as torch._dynamo, which the
    first optimizer imports (seconds): in the judge, before the sandbox forks, that cost stays out of
    the learner's timed calls, and what the import rebinds is part of the sandbox's baseline."""
    for name in exercise.preload:
        importlib.import_module(name)


def probe_bundle(exercise: Exercise) -> dict:
    """The code of the probes a sandbox of this exercise may run (its checks' and those of the modules they use),
    as it travels to a sandbox started by the zygote (probe_shipping.py)."""
    from grader.sandbox.probes import PROBES

    checks = import_checks(exercise)  # this exercise's own, whichever course last used its name
    made = _bundles.get(exercise.checks_module)
    if made is None or made[0] is not checks:
        used = {getattr(value, "__module__", None) for value in vars(checks).values()}
        modules = {fn.__module__ for fn in PROBES.values()} & (used | {exercise.checks_module})
        secret = scrub.check_modules(PROBES, hidden_paths(exercise))
        made = checks, probe_shipping.bundle(PROBES, modules, secret)
        _bundles[exercise.checks_module] = made
    return made[1]


# checks module name -> (the module, its bundle). What a bundle names was imported with the module, so the check
# modules imported later (more probes, more modules kept out of sandboxes) never change it.
_bundles: dict[str, tuple] = {}


def hidden_paths(exercise: Exercise, extra=()) -> tuple[str, ...]:
    """Folders learner code must never see: the reference solutions, the hidden checks, the known mistakes
    (in a clone), and what the caller adds (a batch's submissions and gradebook)."""
    courses = {exercise.course.root: exercise.course, exercise.home.root: exercise.home}.values()
    folders = {SOLUTIONS_DIR, CHECKS_DIR, PACKAGE_DIR.parent / "tests", *map(Path, extra),
               *(folder for c in courses for folder in (c.solutions_dir, c.checks_dir, c.mistakes_dir, c.variants_dir))}
    return tuple(sorted(str(f.resolve()) for f in folders if f.is_dir()))


def limits_for(exercise: Exercise, memory: int | None = None, time_limit: float | None = None,
               device: str = "cpu", hidden=()) -> Limits:
    """The sandbox limits: the exercise's time limit and the default memory, unless overridden; the
    folders it must not see; the GPU's device files with `device="cuda"`."""
    limits = Limits(time=time_limit or exercise.time_limit, hidden=hidden_paths(exercise, hidden),
                    cuda=device == "cuda")
    if memory:
        limits.memory = memory
    isolation.Plan("", list(limits.hidden), limits.cuda).readable()  # computed here once, inherited by forks
    return limits


def timeout_for(limits: Limits) -> int:
    """pytest-timeout's bound on one check (its calls into the sandbox are bounded by `limits.time` each)."""
    return int(limits.time * 3 + 10)


def pytest_args(exercise: Exercise, timeout: int) -> list[str]:
    """A judge's pytest command line: the exercise's checks, none of pytest's plugins it has no use for, no capture
    (the judge's output goes nowhere), pytest-timeout by signal (by a thread where there is no SIGALRM: Windows,
    where a check past its time ends the judge, a grader failure rather than a verdict)."""
    return [str(exercise.checks), "-c", str(CHECKS_DIR / "pytest.ini"), "--rootdir", str(exercise.home.checks_dir),
            *DISABLED, "--noconftest", "--assert=plain", "--capture=no", "-q", "--tb=line",
            "--timeout", str(timeout), "--timeout-method", "signal" if hasattr(signal, "SIGALRM") else "thread"]


class Prepared:
    """pytest configured, and one exercise's checks collected, once in a warm parent (`prepare`): a judge forked after
    it runs them at once (`run`), where pytest.main spent 30-50 ms before the first check in every judge, beside the
    sandbox's start on a machine of two cores. The configuration is the one pytest.main makes (the same arguments),
    its plugin is given each grading in the judge (`JudgePlugin.bind`). It uses pytest's private `_prepareconfig`
    and `_do_configure`, as pytest.main does: where they fail (another pytest) or the checks do not collect, no
    Prepared is made and each judge runs pytest.main as before."""

    def __init__(self, exercise: Exercise, timeout: int):
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        before = _open_fds()
        self.plugin = JudgePlugin.unbound()
        self.output = open(os.devnull, "w")  # pytest's terminal writes here, in every judge
        with contextlib.redirect_stdout(self.output), contextlib.redirect_stderr(self.output), only_given_plugins():
            self.config = _prepareconfig(pytest_args(exercise, timeout), [self.plugin, pytest_timeout])
            self.config._do_configure()
            self.session = Session.from_config(self.config)
            self.session.exitstatus = 0
            self.config.hook.pytest_sessionstart(session=self.session)
            self.config.hook.pytest_collection(session=self.session)
        self.fds = _open_fds() - before  # the files pytest keeps open (its output, its log file): a judge keeps them
        self.ok = not self.session.testsfailed and bool(self.session.items)

    def run(self) -> None:
        """In the judge, its plugin bound: the checks, as pytest.main runs them once collected."""
        session, hook = self.session, self.config.hook
        self.plugin.pytest_collection_finish(session)  # the first event, as in pytest.main
        try:
            hook.pytest_runtestloop(session=session)
        finally:
            hook.pytest_sessionfinish(session=session, exitstatus=session.exitstatus)


# (checks file, timeout) -> pytest prepared for them in this process, or None where it could not be
_prepared: dict[tuple[str, int], Prepared | None] = {}


def prepared_key(exercise: Exercise, timeout: int) -> tuple[str, int]:
    return str(exercise.checks), timeout


def prepare(exercise: Exercise, timeout: int) -> Prepared | None:
    """pytest prepared for the exercise's checks in this (warm) process, once; None where it cannot be."""
    key = prepared_key(exercise, timeout)
    if key not in _prepared:
        try:
            made: Prepared | None = Prepared(exercise, timeout)
        except Exception:  # another pytest's internals, checks that do not import: pytest.main then
            made = None
        _prepared[key] = made if made is not None and made.ok else None
    return _prepared[key]


def _open_fds() -> set[int]:
    """The file descriptors open now (not the one that listed them)."""
    listed = {int(name) for name in os.listdir("/proc/self/fd")}
    return {fd for fd in listed if _is_open(fd)}


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _judge_main(fd: int, exercise: Exercise, source: Source, seed: int, lang: str, device: str,
                limits: Limits, languages: tuple[str, ...], variant: dict, spawner: int | None) -> None:
    """The judge process: run the checks under pytest, emit results on `fd`. Never returns.

    It holds nothing of the parent's but its own pipe and its connection to the zygote (`spawner`): in a batch,
    the other judges' pipes are closed.
    """
    os.setsid()
    isolation.die_with_parent()
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2) if not os.environ.get("GRADER_DEBUG") else (0,):
        os.dup2(null, std)
    prepared = _prepared.get(prepared_key(exercise, timeout_for(limits)))
    isolation.close_all_but({fd, spawner if spawner is not None else fd, *(prepared.fds if prepared else ())})
    if spawner is not None:
        import socket

        zygote.use(zygote.Channel(socket.socket(fileno=spawner), tuple(exercise.preload),
                                  lambda: probe_bundle(exercise), judge=True))
    out = os.fdopen(fd, "w", buffering=1)
    try:
        _run_judge(exercise, source, seed, lang, device, limits, languages, variant, prepared,
                   lambda event: out.write(framing.encode(event).decode()))
    finally:
        try:
            out.close()  # the parent has every result now, not once this process's memory is unmapped
        finally:
            os._exit(0)


def _run_judge(exercise: Exercise, source: Source, seed: int, lang: str, device: str, limits: Limits,
               languages: tuple[str, ...], variant: dict, prepared: Prepared | None, emit) -> None:
    """A judge's work, once its process is set up: pytest over the checks (prepared in the parent, or run here),
    each event given to `emit`."""
    if not os.environ.get("GRADER_DEBUG"):  # a caller's own sys.stdout (pytest's capture, a notebook) too
        sys.stdout = sys.stderr = open(os.devnull, "w")
    os.environ[AUTOLOAD] = "1"  # only our plugins: faster, and nothing else
    if device == "cpu":  # CUDA maps far more address space than it uses: no bound there
        with contextlib.suppress(ImportError, ValueError, OSError):  # no rlimits on Windows; macOS may refuse
            import resource

            bound = max(JUDGE_MEMORY, limits.memory + (2 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
    preload(exercise)
    seed_torch(seed, device != "cpu")
    grading = (source, limits, seed, lang, device, emit, languages, exercise.overrides, variant)
    if prepared is not None:
        prepared.plugin.bind(*grading)
        prepared.plugin.proxy.launch()  # it loads the learner's code; the first check waits for it
        prepared.run()
    else:
        plugin = JudgePlugin(*grading)
        try:
            import_checks(exercise)  # as pytest will, so that the probes are known before the sandbox starts
        except Exception:  # a check module that cannot be imported: pytest reports it
            pass
        else:
            plugin.proxy.launch()  # it loads the learner's code while pytest collects the checks
        # the plugins as modules, not `-p`: no search of entry points
        pytest.main(pytest_args(exercise, timeout_for(limits)), plugins=[plugin, pytest_timeout])


def _spawned_judge_main(conn, exercise: Exercise, source: Source, seed: int, lang: str, device: str, limits: Limits,
                        languages: tuple[str, ...], variant: dict) -> None:  # pragma: no cover - a spawned process
    """The judge on the portable backend, a process of its own started by `spawn`: run the checks, send each event
    on `conn` (one message each). Its sandboxes are spawned too (portable.py); it ends with its parent."""
    try:
        portable.watch_parent()
        if hasattr(os, "setsid"):
            os.setsid()  # the parent kills its group at the deadline (the sandbox keeps a group of its own)
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2) if not os.environ.get("GRADER_DEBUG") else (0,):
            os.dup2(null, std)
        portable.use(portable.Shipping(tuple(exercise.preload), lambda: probe_bundle(exercise)))
        _run_judge(exercise, source, seed, lang, device, limits, languages, variant, None,
                   lambda event: conn.send_bytes(framing.encode(event)))
    finally:
        try:
            conn.close()
        finally:
            os._exit(0)


class SpareJudge:
    """A judge forked ahead by a warm parent that grades one submission at a time (the service), while it is idle: it
    waits for its grading on a pipe (`Grading(..., spare=)`), so that a grading's path has no fork of the parent
    (12-15 ms of a 300 MiB process). It is forked from the state a judge forked on request starts from and holds only
    what such a judge holds (its result pipe, its zygote connection, pytest's files) and the pipe its grading comes on.
    One made before the parent imported or prepared anything more, or before a new zygote, is not used (`fresh`)."""

    def __init__(self):
        self.state = _warm_state()
        gc.freeze()
        isolation.protect_self()
        spawner = zygote.connect()
        order_r, self.order = os.pipe()
        self.fd, write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - runs in the spare
            os.close(self.order)
            os.close(self.fd)
            _spare_main(order_r, write_fd, spawner.fileno() if spawner else None)
        os.close(order_r)
        os.close(write_fd)
        if spawner is not None:
            spawner.close()

    def fresh(self) -> bool:
        return self.state == _warm_state()

    def start(self, *grading) -> bool:
        """Hand it its grading (`_judge_main`'s arguments after the result pipe and before the zygote connection);
        False if it is gone (then it is discarded)."""
        data = pickle.dumps((os.getcwd(), grading))
        try:
            while data:
                data = data[os.write(self.order, data):]
        except OSError:
            self.discard()
            return False
        os.close(self.order)
        return True

    def discard(self) -> None:
        for fd in (self.order, self.fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def _warm_state() -> tuple:
    """What a spare judge must have been forked with to be used: the same modules, prepared pytests and zygote."""
    return len(sys.modules), len(_prepared), len(_bundles), _forgotten, zygote.shared()


def _spare_main(order: int, fd: int, spawner: int | None) -> None:  # pragma: no cover - runs in the spare
    """Wait for the grading, then be its judge; end with the parent (or when it closes the pipe unused)."""
    try:
        isolation.die_with_parent()
        prepared = {n for made in _prepared.values() if made for n in made.fds}
        isolation.close_all_but({order, fd, spawner if spawner is not None else fd, *prepared})
        data = b""
        while chunk := os.read(order, 1 << 16):
            data += chunk
        os.close(order)
        if data:
            cwd, (exercise, source, seed, lang, device, limits, languages, variant) = pickle.loads(data)
            os.chdir(cwd)  # where the parent is now, as a judge forked now would be
            _judge_main(fd, exercise, source, seed, lang, device, limits, languages, variant, spawner)
    finally:
        os._exit(0)


class Grading:
    """One grading in flight: a forked judge whose result lines arrive on a pipe.

    `grade` waits for one; batch grading keeps several in flight and feeds each as its pipe
    becomes readable (`fileno`, `feed`), killing any that pass their deadline. A `spare` judge forked ahead grades it
    if it is `fresh` (else it is discarded and a judge forked).
    """

    def __init__(self, exercise: Exercise, source: Source, *, seed: int | None = None, lang: str = "en",
                 device: str = "cpu", memory: int | None = None, time_limit: float | None = None,
                 languages: tuple[str, ...] = (), hidden=(), variant: dict | None = None,
                 spare: SpareJudge | None = None):
        self.exercise, self.source, self.lang = exercise, source, lang
        self.variant = default_draw(exercise) if variant is None else variant  # what a kata attempt drew
        self.seed = random.randrange(2**31) if seed is None else seed
        limits = limits_for(exercise, memory, time_limit, device, hidden)
        # removed here, whatever the judge does
        self.workroot = limits.workroot = tempfile.mkdtemp(prefix="torch-katas-")
        os.chmod(self.workroot, 0o711)  # a dedicated uid reaches its own work dir in it, and lists nothing
        self.started = time.monotonic()
        self.deadline = self.started + max(60.0, limits.time * 20)
        self.events: list[dict] = []
        self.timed_out = False
        self._buf = b""
        self.process: multiprocessing.process.BaseProcess | None = None  # a spawned judge (the portable backend)
        if backend.portable():
            self._spawn(exercise, source, lang, device, limits, languages)
            return
        if spare is not None and not spare.fresh():
            spare.discard()
        elif spare is not None and spare.start(exercise, source, self.seed, lang, device, limits, languages,
                                               self.variant):
            self.pid, self.fd = spare.pid, spare.fd
            return
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()  # the warm parent's objects: never collected in children, pages stay shared
        isolation.protect_self()  # no process of our uid opens our /proc/<pid>/fd; judges inherit it
        spawner = zygote.connect()  # the judge's own connection to the zygote that starts its sandboxes
        if spawner is not None and exercise.checks_module in sys.modules:
            probe_bundle(exercise)  # made here once, inherited by this exercise's next judges
        read_fd, write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - runs in the child
            os.close(read_fd)
            _judge_main(write_fd, exercise, source, self.seed, lang, device, limits, languages, self.variant,
                        spawner.fileno() if spawner else None)
        os.close(write_fd)
        if spawner is not None:
            spawner.close()
        self.fd = read_fd

    def _spawn(self, exercise: Exercise, source: Source, lang: str, device: str, limits: Limits,
               languages: tuple[str, ...]) -> None:
        """The judge as a spawned process (the portable backend), its events on a multiprocessing pipe."""
        self.conn, theirs = portable.context().Pipe(duplex=False)
        self.process = portable.context().Process(
            target=_spawned_judge_main, name="torch-katas-judge",
            args=(theirs, exercise, source, self.seed, lang, device, limits, languages, self.variant))
        self.process.start()
        theirs.close()
        assert self.process.pid is not None
        self.pid, self.fd = self.process.pid, self.conn.fileno()

    def fileno(self) -> int:
        return self.fd

    def waitable(self):
        """What `multiprocessing.connection.wait` waits on for this grading (a pipe's handle is no descriptor on
        Windows)."""
        return self.conn if self.process is not None else self

    def feed(self) -> bool:
        """Read what the judge sent; True once it has finished (end of the pipe)."""
        if self.process is not None:
            try:
                chunk = self.conn.recv_bytes() + b"\n"
            except (EOFError, OSError):
                chunk = b""
        else:
            chunk = os.read(self.fd, 65536)
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        for line in filter(bytes.strip, lines):
            try:
                self.events.append(framing.decode(line))
            except framing.FrameError:
                self.events.append({"event": "garbled"})  # refused by `assemble`
        return not chunk

    def kill(self) -> None:
        """Stop a judge past its deadline (its sandbox dies with it)."""
        self.timed_out = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (AttributeError, ProcessLookupError, PermissionError):  # no groups (Windows), or not its own yet
            if self.process is not None:
                self.process.kill()

    def result(self) -> Result:
        """Reap the judge (or leave a judge that sent its end, and is exiting, to be reaped later) and assemble its
        result."""
        if self.process is not None:
            self.conn.close()
            self.process.join()
            status = self.process.exitcode or 0
            self.process.close()
        else:
            os.close(self.fd)
            _reap_ended()
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if not pid and not any(e.get("event") == "end" for e in self.events):
                _, status = os.waitpid(self.pid, 0)
            elif not pid:
                _ending.append(self.pid)
        safefs.remove_tree(self.workroot)  # what a killed judge left, whatever modes learner code set
        judge_failed = not self.timed_out and status != 0
        result = assemble(self.exercise, self.source, self.events, self.timed_out, self.seed,
                          time.monotonic() - self.started, judge_failed)
        result.title = Text(self.exercise.title, self.exercise.zh.get("title"))
        result.lang = self.lang
        return result


def finished(gradings, ready) -> list[Grading]:
    """Of the `gradings` in flight, those that are done: their judge's pipe ended (read if `select` found it in
    `ready`) or their deadline passed (then the judge is killed)."""
    done = []
    for grading in list(gradings):
        ended = grading in ready and grading.feed()
        if not ended and time.monotonic() >= grading.deadline:
            grading.kill()
            ended = True
        if ended:
            done.append(grading)
    return done


_ending: list[int] = []  # judges that sent their end and were exiting when their result was assembled


def _reap_ended() -> None:
    for pid in list(_ending):
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                _ending.remove(pid)
        except ChildProcessError:
            _ending.remove(pid)


def grade(exercise: Exercise, source: Source, **options) -> Result:
    """Grade `source` as `exercise`; return its Result (`to_json()`: the --json schema).

    Options: seed, lang, device, memory (bytes), time_limit (seconds per call), languages (also give
    each check's message in these languages, under "messages"), variant (the draw of the exercise's
    parameters a kata attempt was rendered from; default: the exercise as it stands).
    """
    grading = Grading(exercise, source, **options)
    while True:
        left = grading.deadline - time.monotonic()
        if left <= 0:
            grading.kill()
            break
        if multiprocessing.connection.wait([grading.waitable()], left) and grading.feed():
            break
    return grading.result()


def grader_failure(why: str) -> Text:
    return Text("The grader itself failed while grading this submission ({why}). This is not a grade: grade it "
                "again.", "评分器在评这份提交时自身出错了（{why}）。这不是成绩：请重新评分。", why=verbatim(why))


def check_stream(exercise: Exercise, events: list[dict]) -> str | None:
    """None if the judge's events are what a judge sends: the checks it collected, then one result for
    each of them with its declared points, then one `end`. Else what is wrong with them."""
    if not events or events[0].get("event") != "collected":
        return "no list of collected checks"
    if events[0].get("problem"):
        return events[0]["problem"]
    declared = {c["id"]: c["max_points"] for c in events[0].get("checks", [])}
    seen = set()
    for i, e in enumerate(events[1:], 1):
        kind = e.get("event")
        if kind == "end":
            return None if i == len(events) - 1 else "events after the end"
        if kind != "check":
            return f"an unexpected event {kind!r}"
        cid = e.get("id")
        if cid not in declared or cid in seen:
            return f"a result for {'an unknown' if cid not in declared else 'the same'} check {cid!r}"
        seen.add(cid)
        if e.get("max_points") != declared[cid] or e.get("points") not in (0.0, declared[cid]) \
                or bool(e.get("passed")) != (e.get("points") == declared[cid] and e.get("outcome") == "passed"):
            return f"points that do not match check {cid!r}"
    return None  # no end (yet): the judge stopped early, told apart by the caller


def assemble(exercise: Exercise, source: Source, events: list[dict], timed_out: bool, seed: int,
             duration: float, judge_failed: bool = False) -> Result:
    """The result: checks as reported, plus a failed entry for points no check reported.

    A judge that died without finishing (killed from outside, out of memory) or whose events are not
    well-formed gives a grader failure: status "error" with `grader_failure`, never a score.
    """
    end = next((e for e in events if e.get("event") == "end"), None)
    broken = check_stream(exercise, events)
    if broken is None and end is None and judge_failed:
        broken = "the judge process ended before it finished"
    result = Result(exercise=exercise.id, name=exercise.name, submission=str(source.path), status="error",
                    score=0.0, max_score=exercise.points, duration_s=round(duration, 3), seed=seed,
                    notes=list(source.notes), hidden_points=exercise.hidden_points or None,
                    flags=routes.scan(source.chunks, exercise.banned))  # for a person to look at; never a score
    checks = [CheckResult.from_json(e) for e in events if e.get("event") == "check"] if broken is None else []
    for c in checks:  # as exercise.toml and the course set it, over @check's
        c.visibility = exercise.visibility_of(c.id, c.visibility)
    reported = sum(c.max_points for c in checks)
    if broken is None and end is not None and reported < exercise.points:  # the checks collected are not the
        broken = (f"its checks are worth {reported:g} points, the exercise {exercise.points:g}: "  # exercise's
                  "the checks graded are not this exercise's")
    if broken is not None:
        result.grader_failure, result.message = True, grader_failure(broken)
        return result
    if reported < exercise.points:
        checks.append(CheckResult(
            id="unreported", title=Text("Checks that never reported", "没有报告结果的检查"), outcome="failed",
            points=0.0, max_points=exercise.points - reported,
            message=Text("The grading stopped before these checks ran.", "评分在这些检查运行之前就停止了。")))
    result.checks = checks
    result.status = end["status"] if end else "timeout" if timed_out else "crashed"
    result.max_score = round(exercise.points - result.skipped_points, 4)
    score = 0.0 if result.status == "tampered" else min(sum(c.points for c in checks), result.max_score)
    result.score = round(score, 4)
    if end:
        result.message, result.output = text(end["message"]), end["output"]
        result.curves, result.isolation = end.get("curves", []), end.get("isolation", [])
    else:
        result.message = Text("The grading stopped before it finished.", "评分没有完成就停止了。")
    return result
