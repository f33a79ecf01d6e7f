"""Shared helpers of the test suite: run the real `grade` CLI and read its JSON."""

import json
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
    """Run `grade ARGS --json`; stdout must be exactly one JSON object."""
    proc = run_grade(*args, "--json", **kwargs)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


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
