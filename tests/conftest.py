"""Shared helpers of the test suite: run the real `grade` CLI and read its JSON."""

import io
import json
import locale
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox import isolation
from grader.service import address, client

ROOT = Path(__file__).resolve().parent.parent
os.environ["TORCH_KATAS_NO_SERVER"] = "1"  # the suite never starts the user's grading service (test_server.py: its own)


def run_grade(*args, cwd=ROOT, timeout=300, env=None, input=None):
    """Run `grade ARGS` as a learner would (a fresh process, typing `input`); return the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env, input=input,
                          stdin=subprocess.DEVNULL if input is None else None)


def grade_json(*args, **kwargs) -> dict:
    """Run `grade ARGS --json` (in a fork of this process where it may: `grade_here`); stdout must be
    exactly one JSON object."""
    proc = (grade_here if runs_here(args) else run_grade)(*args, "--json", **kwargs)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


# `grade_here` runs a command in a fork of this warm process, as the service's front runs a relayed command in a fork
# of its own (grader/cli/front.py), rather than in a Python that starts anew and imports torch each time: a command
# that grades nothing, or a single grading (`grade ex05 ...`, the command the front relays).
GRADES_NOTHING = {"list", "show", "next", "hint", "init", "lang", "reset", "solution", "notebook", "today", "stats",
                  "review", "export", "gradescope", "new", "release", "--help", "-h", "--version"}


def runs_here(args) -> bool:
    """Whether `grade ARGS` may run in a fork of this process (`grade_here`): it grades nothing and starts nothing
    (`release --check` grades, `review --serve` serves), or it is a single grading."""
    from grader.cli.main import relayable

    args = [str(a) for a in args]
    command = _command_of(args)
    nothing = command in GRADES_NOTHING and not (command == "release" and "--check" in args) and "--serve" not in args
    return nothing or relayable(args)


def grade_here(*args, cwd=ROOT, timeout=300, env=None, input=None):
    """`run_grade` in a fork of this process, with the CLI, torch and the judge already imported: the fork gets the
    command's own stdin, stdout and stderr (files), folder, environment (all of it: `env`, else this process's) and
    arguments, runs `grade` as its entry does and exits with its status; a grading forks its judges from it, and
    their sandboxes come from this process's zygote. Same CompletedProcess. A batch, a service, or an `env` that changes
    how Python starts needs `run_grade`."""
    args = [str(a) for a in args]
    assert runs_here(args), f"`grade {' '.join(args)}` is not one grading and may grade or serve: use run_grade"
    env = dict(os.environ if env is None else env)
    assert all(env.get(k) == os.environ.get(k) for k in ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD")), \
        "this environment changes how Python starts: run it with run_grade"
    _warm()
    with tempfile.TemporaryDirectory(prefix="tk-here-") as tmp:
        files = [Path(tmp, name) for name in ("stdin", "stdout", "stderr")]
        for file, text in zip(files, (input or "", "", "")):
            file.write_text(text, encoding="utf-8")
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the command's own process
            _become_grade(args, cwd, env, files)
        deadline = time.monotonic() + timeout
        while (status := os.waitpid(pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["grade", *args], timeout)
            time.sleep(0.005)
        stdout, stderr = (f.read_text(encoding="utf-8", errors="replace") for f in files[1:])
    return subprocess.CompletedProcess(["grade", *args], os.waitstatus_to_exitcode(status[1]), stdout, stderr)


def _command_of(args: list[str]) -> str:
    """The command's name in `grade ARGS` (past the group's own options), or --help."""
    rest = list(args)
    while rest and rest[0].split("=")[0] in ("--course", "--lang"):
        rest = rest[1 if "=" in rest[0] else 2:]
    return rest[0] if rest else "--help"


def _warm() -> None:
    """What a fork should find imported and started: the CLI, torch, pytest and the judge (grader/judge/grading.py,
    which keeps torch single-threaded, as a warm parent that forks must), and this process's zygote, which starts the
    sandboxes of every grading of the session as the service's does for its judges."""
    import grader.cli.main
    import grader.judge.grading  # noqa: F401
    from grader.sandbox import zygote

    zygote.shared()  # started once (again if it died)


class _ParentsZygote:
    """The `process` of the zygote a fork inherits from this process: the fork cannot wait on its parent's child, so
    the zygote counts as alive as its parent found it just before forking (a dead one fails the grading loudly)."""

    def poll(self):
        return None

    def wait(self, timeout=None):
        return None


def _become_grade(args, cwd, env, files) -> None:  # pragma: no cover - runs in the fork
    """In the fork: become `python -m grader ARGS` run in `cwd` with `env` and the three files; never return."""
    code = 3
    try:
        for std, (path, mode) in enumerate(zip(files, (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY))):
            fd = os.open(path, mode)
            os.dup2(fd, std)
            os.close(fd)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGALRM):
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        try:
            locale.setlocale(locale.LC_CTYPE, "")  # as Python does as it starts, from this environment
        except locale.Error:
            pass
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout, sys.stderr = (io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8",
                                                   errors="strict" if fd == 1 else "backslashreplace")
                                  for fd in (1, 2))
        sys.argv = [str(ROOT / "grader" / "__main__.py"), *args]
        from grader.cli import common, main
        from grader.course.exercises import use_course

        from grader.sandbox import zygote

        use_course(None)  # as a fresh process: no course chosen, no --lang noted
        common.remember_lang([])
        if zygote._shared is not None:
            zygote._shared.process = _ParentsZygote()
        try:
            main.run(prog_name="python -m grader")
            code = 0
        except SystemExit as exit_:  # as Python's own exit: a number is the status, None 0, anything else printed, 1
            code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
            if code == 1 and not isinstance(exit_.code, int):
                print(exit_.code, file=sys.stderr)
    except BaseException:  # uncaught, as Python's own: the traceback, status 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


@pytest.fixture
def root() -> Path:
    return ROOT


# -- running the grader as an ordinary user (the attack tests run as root and as such a user) ----------

ORDINARY_USER = "tkgrader"


def ordinary_user_or_skip() -> str:
    """The name of an unprivileged user that can run this checkout's grader; skip with the reason if
    there is none (not root, no useradd, or Python or its packages not readable by other users)."""
    import pwd
    import shutil

    if os.geteuid() != 0:
        pytest.skip("creating an ordinary user needs root; the tests already run as one")
    try:
        pwd.getpwnam(ORDINARY_USER)
    except KeyError:
        if not shutil.which("useradd"):
            pytest.skip("no useradd to create an ordinary user")
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ORDINARY_USER],
                       check=True, capture_output=True)
    skip_unless_others_can_run_the_grader("an ordinary user")
    return ORDINARY_USER


def skip_unless_others_can_run_the_grader(who: str) -> None:
    """Skip, saying why, where another uid (`who`) cannot read the Python, packages and grader these tests use."""
    blocked = isolation.readable_by_others([*user_pythonpath(), str(ROOT / "grader"), user_python()])
    if blocked:
        pytest.skip(f"{blocked} is not readable by {who}")


def user_python() -> str:
    """A Python interpreter an ordinary user can run, of this one's version: this one if it is readable,
    else the system's (pyenv keeps its interpreters under /root)."""
    if not isolation.readable_by_others([sys.base_prefix]):
        return sys.executable
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not Path(system).exists():
        pytest.skip(f"{sys.base_prefix} is not readable by an ordinary user and there is no {system}")
    return system


def user_pythonpath() -> list[str]:
    import site

    return [p for p in site.getsitepackages() if Path(p).is_dir()]


def dedicated_uid_or_skip() -> str:
    """DEDICATED, for tests run as root with a Python and packages other users can read, as in Docker or
    Gradescope: each sandbox then runs as a uid of its own. Skip with the reason where there is none."""
    if os.geteuid() != 0:
        pytest.skip("a dedicated uid per sandbox is for a grader run as root")
    skip_unless_others_can_run_the_grader("other users, so root keeps its uid")
    return DEDICATED


DEDICATED = "root, a dedicated uid per sandbox"


def run_grade_as(user: str | None, *args, cwd=ROOT, timeout=300, env=None):
    """Run `grade ARGS` as root with this Python (user None), as root with a Python other users can read
    (DEDICATED), or as the ordinary `user`, with the same installed packages."""
    if user is None:
        return run_grade(*args, cwd=cwd, timeout=timeout, env=env)
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([*user_pythonpath(), str(ROOT)])
    as_user = [] if user == DEDICATED else ["runuser", "-u", user, "--"]
    command = [*as_user, "env", *(f"{k}={v}" for k, v in env.items() if k in PASSED_ENV),
               f"PYTHONPATH={env['PYTHONPATH']}", user_python(), "-m", "grader.cli.main", *map(str, args)]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)


PASSED_ENV = ("PATH", "LANG", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "NO_COLOR", "TMPDIR")


def gets_a_dedicated_uid(user: str | None) -> bool:
    """Whether the grader run as `user` (see run_grade_as) gives each sandbox a uid of its own, decided from the
    machine as the grader decides it (`grade doctor` says the same): root, with an interpreter and packages
    other users can read."""
    if user not in (None, DEDICATED) or os.geteuid() != 0:
        return False
    if user is None:
        return isolation.readable_by_others(isolation.python_paths()) is None
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join([*user_pythonpath(), str(ROOT)])}
    probe = ("from grader.sandbox import isolation; "
             "print(isolation.readable_by_others(isolation.python_paths()) is None)")
    proc = subprocess.run([user_python(), "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    return proc.stdout.strip() == "True"


@pytest.fixture
def world_readable_tmp(tmp_path):
    """A temporary folder an ordinary user can read and write (pytest's own tmp_path is root's alone)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="torch-katas-test-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def namespaces_work() -> bool:
    """Whether this kernel lets this process make the sandbox's namespaces (tried in a throwaway child)."""
    pid = os.fork()
    if pid == 0:
        try:
            isolation.unshare_all()
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


NAMESPACES = namespaces_work()  # this kernel lets an unprivileged process make user namespaces


# -- one exercise's tests: `python -m pytest --exercise ex05` ----------------------------------------------------

def pytest_addoption(parser):
    parser.addoption("--exercise", metavar="ID", help="Only the tests of this one exercise (any id `grade` takes: 5, "
                     "ex05, ex05_manual_backward): those parametrized by it, slow ones included unless -m says not.")


def pytest_collection_modifyitems(config, items):
    """With --exercise: keep the tests parametrized by that exercise (an Exercise, its id or its name), deselect the
    rest."""
    key = config.getoption("--exercise")
    if not key:
        return
    from grader.course.exercises import Exercise, find_exercise

    exercise = find_exercise(key)

    def of_it(item) -> bool:
        params = item.callspec.params.values() if hasattr(item, "callspec") else ()
        return any(p.id == exercise.id if isinstance(p, Exercise) else p in (exercise.id, exercise.name)
                   for p in params if isinstance(p, (Exercise, str)))

    kept = [item for item in items if of_it(item)]
    config.hook.pytest_deselected(items=[item for item in items if not of_it(item)])
    items[:] = kept


# -- a warm grading service of a test's own (test_server.py, test_service_door.py) ---------------------------

gone = client.exited  # a zombie waiting for its parent, pid 1 here, counts as exited


def wait_for(condition, what: str, limit: float = 300):
    """Poll `condition` until true; the limit only stops a broken run from hanging the suite."""
    end = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.05)


class Service:
    """A test's own service folder and the environment that points `grade` at it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.env = {k: v for k, v in os.environ.items() if k not in (address.NO_SERVER_ENV, "CI")}
        self.env[address.DIR_ENV] = str(folder)
        self.pids: set[int] = set()

    def grade(self, *args, **kwargs):
        return run_grade(*args, env={**self.env, **kwargs.pop("env", {})}, **kwargs)

    def status(self) -> dict | None:
        info = client.status(self.folder)
        if info:
            self.pids.update(pid for pid in (info["pid"], info["front"], info["spare"]) if pid)
        return info

    def left(self) -> list[str]:
        return sorted(p.name for p in self.folder.iterdir())


@pytest.fixture
def service(monkeypatch):
    folder = Path(tempfile.mkdtemp(prefix="tk-srv-"))  # short: a socket's path is at most 107 bytes
    for var in (address.NO_SERVER_ENV, "CI", client.IDLE_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(address.DIR_ENV, str(folder))
    svc = Service(folder)
    yield svc
    svc.status()
    client.stop(folder)
    for pid in svc.pids:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: gone(pid), f"the killed service {pid} has exited")  # noqa: B023 - called at once
    left = svc.left()
    shutil.rmtree(folder, ignore_errors=True)
    assert all(gone(pid) for pid in svc.pids) and left == [], left
