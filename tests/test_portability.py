"""The grader off Linux (issue 48): nothing Linux-only at import, and the portable isolation backend
(grader/sandbox/portable.py) choosing itself and grading with the same verdicts as the Linux one."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent

# What Windows lacks (and macOS, for the Linux-only ones), made unavailable in a fresh interpreter before any module
# of the grader is imported. Third-party packages are imported first: their own builds differ per platform.
WITHOUT_LINUX = textwrap.dedent('''
    import ctypes, importlib, json, os, pkgutil, signal, socket, sys, traceback
    import numpy, pytest, torch  # noqa: F401 - built for each platform: not ours to judge
    for optional in ("psutil", "distributed"):
        try:
            importlib.import_module(optional)
        except ImportError:
            pass
    for name in ("fcntl", "resource", "termios", "pwd", "grp", "pty", "tty"):
        sys.modules[name] = None  # `import fcntl` raises ImportError from now on
    for owner, names in ((os, ("fork", "forkpty", "setsid", "killpg", "getuid", "geteuid", "getpgid", "pidfd_open",
                               "WIFSIGNALED", "WTERMSIG", "WEXITSTATUS", "WIFEXITED", "O_DIRECTORY", "O_PATH",
                               "O_NOFOLLOW", "O_CLOEXEC", "pread")),
                         (socket, ("AF_UNIX", "SO_PEERCRED", "send_fds", "recv_fds", "sendmsg", "recvmsg")),
                         (signal, ("SIGKILL", "SIGALRM", "SIGXCPU", "SIGXFSZ", "SIGSTOP"))):
        for name in names:
            if hasattr(owner, name):
                delattr(owner, name)
    class CDLL(ctypes.CDLL):
        def __init__(self, name, *args, **kwargs):
            if name is None:  # as on Windows: no "this process's own symbols"
                raise TypeError("expected str, bytes or os.PathLike object, not NoneType")
            super().__init__(name, *args, **kwargs)
    ctypes.CDLL = CDLL
    import types
    msvcrt = sys.modules["msvcrt"] = types.ModuleType("msvcrt")  # Windows's locking, standing in (one process here)
    msvcrt.LK_LOCK, msvcrt.LK_UNLCK, msvcrt.locking = 1, 0, lambda fd, mode, n: None
''')


def run_without_linux(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_LINUX + textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=600)


def test_the_linux_only_names_are_really_gone():
    """The test below proves nothing if the names it removes are still there."""
    proc = run_without_linux('''
        gone = []
        for attempt in ("import fcntl", "import resource", "os.fork", "socket.AF_UNIX", "ctypes.CDLL(None)"):
            try:
                exec(attempt)
            except (ImportError, AttributeError, TypeError):
                gone.append(attempt)
        print(json.dumps(gone))
    ''')
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == ["import fcntl", "import resource", "os.fork",
                                                         "socket.AF_UNIX", "ctypes.CDLL(None)"]


# The Linux backend's own modules, which may need what only Linux has as they are imported. None does today: each
# module of the Linux backend loads its C library, fcntl and resource on first use.
LINUX_BACKEND: set[str] = set()


def test_every_module_imports_without_what_only_linux_has():
    proc = run_without_linux('''
        import grader
        failed = {}
        for info in pkgutil.walk_packages(grader.__path__, "grader."):
            if info.name == "grader.__main__":  # `python -m grader`: importing it runs the command
                continue
            try:
                importlib.import_module(info.name)
            except BaseException as exc:
                where = traceback.extract_tb(exc.__traceback__)[-1]
                failed[info.name] = f"{type(exc).__name__}: {exc} ({where.filename}:{where.lineno})"
        print(json.dumps(failed))
    ''')
    assert proc.returncode == 0, proc.stderr
    failed = json.loads(proc.stdout.splitlines()[-1])
    assert set(failed) <= LINUX_BACKEND, failed


def test_the_learners_commands_run_without_what_only_linux_has(tmp_path):
    """`grade --help`, `list`, `show`, `hint`, `next` and a grading on a system without fork, fcntl or AF_UNIX: the
    portable backend is chosen there, and none of them needs more."""
    proc = run_without_linux('''
        from click.testing import CliRunner
        from grader.cli.main import main
        from grader.sandbox import backend
        out = {"backend": backend.name()}
        solution = "solutions/ex05_manual_backward.py"  # graded too: the command's side of a grading (its judge
        for args in (["--help"], ["list"], ["show", "ex05"], ["hint", "ex05"], ["next"],  # and sandbox are fresh
                     ["check", "ex05", "--file", solution, "--no-server", "--seed", "7"]):  # interpreters, unblocked)
            result = CliRunner().invoke(main, args)
            out[" ".join(args)] = [result.exit_code, repr(result.exception) if result.exception and
                                   not isinstance(result.exception, SystemExit) else None, result.output[-600:]]
        print(json.dumps(out))
    ''', env={"TORCH_KATAS_ISOLATION": "portable", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path),
              "XDG_STATE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out.pop("backend") == "portable"
    for command, (code, exception, output) in out.items():
        assert exception is None and code == 0, (command, exception, output)
        assert output.strip(), command
    assert "Score: 10/10" in out["check ex05 --file solutions/ex05_manual_backward.py --no-server --seed 7"][2]


def test_the_backend_is_linux_on_linux_unless_asked_and_portable_elsewhere(monkeypatch):
    from grader.sandbox import backend

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv(backend.ENV, raising=False)
    assert backend.name() == "linux"
    monkeypatch.setenv(backend.ENV, "portable")
    assert backend.name() == "portable"
    for platform in ("darwin", "win32"):
        monkeypatch.setattr(sys, "platform", platform)
        monkeypatch.setenv(backend.ENV, "linux")  # what only Linux has cannot be asked for elsewhere
        assert backend.name() == "portable"


def test_the_portable_backend_wants_no_service(monkeypatch):
    from grader.service import address

    monkeypatch.delenv("TORCH_KATAS_NO_SERVER", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TORCH_KATAS_ISOLATION", "linux")
    assert address.wanted()
    monkeypatch.setenv("TORCH_KATAS_ISOLATION", "portable")
    assert not address.wanted()


def test_a_batch_refuses_the_portable_backend_unless_told(tmp_path):
    """Nothing keeps student code from the teacher's files there (off macOS): said, and graded only with
    --isolation none."""
    from tests.conftest import run_grade

    (tmp_path / "subs" / "alice").mkdir(parents=True)
    env = {**os.environ, "TORCH_KATAS_ISOLATION": "portable"}
    refused = run_grade("batch", tmp_path / "subs", "--out", tmp_path / "grades", env=env)
    assert refused.returncode == 2 and "--isolation none" in refused.stderr and "portable" in refused.stderr
    assert not (tmp_path / "grades").exists()
    told = run_grade("batch", tmp_path / "subs", "--out", tmp_path / "grades", "--isolation", "none", env=env)
    assert told.returncode == 0, told.stderr
    state = json.loads((tmp_path / "grades" / "batch.json").read_text())
    assert state["isolation"] == {"backend": "portable", "file_walls": [], "waived": True}


def verdict(result) -> dict:
    """What must be the same whichever backend graded (bench/bench_portable.py compares the same for every file)."""
    return {"status": result.status, "score": result.score, "grader_failure": result.grader_failure,
            "checks": [[c.id, c.outcome, c.points, c.key] for c in result.checks]}


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_portable_backend_gives_the_linux_verdicts(monkeypatch):
    """ex05's solution, stub, a known mistake and a variant, each graded by both backends with one seed."""
    from grader.course.exercises import find_exercise
    from grader.judge.grading import grade
    from grader.sandbox.source import load_source

    exercise = find_exercise("ex05")
    files = [exercise.solution, exercise.stub, ROOT / "tests" / "mistakes" / exercise.name / "loss_without_mean.py",
             ROOT / "tests" / "variants" / exercise.name / "matrix_form.py"]
    scores = []
    for path in files:
        monkeypatch.setenv("TORCH_KATAS_ISOLATION", "linux")
        linux = grade(exercise, load_source(path), seed=7)
        monkeypatch.setenv("TORCH_KATAS_ISOLATION", "portable")
        portable = grade(exercise, load_source(path), seed=7)
        assert verdict(portable) == verdict(linux), path.name
        assert portable.isolation == ["spawned process (portable backend)"] and "seccomp" in linux.isolation
        scores.append(portable.score)
    full = exercise.points
    assert scores[0] == full and scores[1] < full and scores[2] < full and scores[3] == full


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_check_in_a_notebook_grades_with_the_portable_backend(tmp_path, monkeypatch):
    from grader.learner.jupyter import check
    from tests.conftest import run_grade

    assert run_grade("init", tmp_path / "ws").returncode == 0
    monkeypatch.chdir(tmp_path / "ws")
    monkeypatch.setenv("TORCH_KATAS_ISOLATION", "portable")
    solution = (ROOT / "solutions" / "ex05_manual_backward.py").read_text()
    assert check("ex05", cells=[solution], lang="en").passed
    assert not check("ex05", cells=[solution.replace("2 * ", "")], lang="en").passed


# A container's default seccomp profile (Docker's, Podman's) refuses user namespaces and Landlock to an unprivileged
# process: this child refuses them the same way (EPERM) before it becomes `grade`, and every process it starts
# inherits the filter, as in a container.
CONTAINER = textwrap.dedent('''
    import ctypes, os, struct, sys
    from grader.sandbox import isolation as iso
    LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
    ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    prog = [iso._bpf(LD, 0, 0, 4), iso._bpf(JEQ, 1, 0, iso.AUDIT_ARCH_X86_64), iso._bpf(RET, 0, 0, ALLOW),
            iso._bpf(LD, 0, 0, 0)]
    for number in (272, 444, 445, 446):  # unshare, landlock_create_ruleset, _add_rule, _restrict_self
        prog += [iso._bpf(JEQ, 0, 1, number), iso._bpf(RET, 0, 0, EPERM)]
    prog += [iso._bpf(JEQ, 0, 1, 435), iso._bpf(RET, 0, 0, ENOSYS)]  # clone3: libc falls back to clone
    prog += [iso._bpf(JEQ, 0, 3, 56), iso._bpf(LD, 0, 0, 16), iso._bpf(JSET, 0, 1, iso.CLONE_NEWUSER),
             iso._bpf(RET, 0, 0, EPERM), iso._bpf(RET, 0, 0, ALLOW)]
    program = b"".join(prog)
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(program) // 8, ctypes.addressof(filters)), 16)
    iso.prctl(iso.PR_SET_NO_NEW_PRIVS, 1)
    iso.prctl(iso.PR_SET_SECCOMP, iso.SECCOMP_MODE_FILTER, ctypes.addressof(fprog))
    os.execv(sys.executable, [sys.executable, "-m", "grader", *sys.argv[1:]])
''')


def in_a_container(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "TORCH_KATAS_NO_SERVER": "1", "TORCH_KATAS_ISOLATION": "linux"}
    return subprocess.run([sys.executable, "-c", CONTAINER, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env=env)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.skipif(not sys.platform.startswith("linux") or os.uname().machine != "x86_64",
                    reason="a seccomp filter written for x86-64 Linux")
def test_in_a_container_refusing_namespaces_and_landlock_the_linux_backend_keeps_what_it_can(tmp_path):
    solution = json.loads(in_a_container("ex05", "--file", ROOT / "solutions" / "ex05_manual_backward.py",
                                         "--json", "--seed", "7").stdout)
    stub = json.loads(in_a_container("ex05", "--file", ROOT / "exercises" / "ex05_manual_backward" /
                                     "ex05_manual_backward.py", "--json", "--seed", "7").stdout)
    assert solution["score"] == solution["max_score"] and stub["score"] < stub["max_score"]
    assert "seccomp" in solution["isolation"]
    assert not any(layer.startswith(("namespaces", "landlock", "process limit")) for layer in solution["isolation"])
    doctor = json.loads(in_a_container("doctor", "--json").stdout)
    assert {"namespaces", "landlock"} <= set(doctor["missing"]) and "seccomp" in doctor["applied"]
    assert doctor["backend"] == "linux"
    (tmp_path / "subs").mkdir()
    refused = in_a_container("batch", tmp_path / "subs", "--out", tmp_path / "grades")
    assert refused.returncode == 2 and "--isolation none" in refused.stderr
