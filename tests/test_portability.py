"""The grader off Linux (issue 48): nothing Linux-only at import, and the portable isolation backend
(grader/sandbox/portable.py) choosing itself and grading with the same verdicts as the Linux one."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path


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
    """`grade --help`, `list`, `show`, `hint` and `next` on a system without fork, fcntl or AF_UNIX: the portable
    backend is chosen there, and none of them needs more."""
    proc = run_without_linux('''
        from click.testing import CliRunner
        from grader.cli.main import main
        from grader.sandbox import backend
        out = {"backend": backend.name()}
        for args in (["--help"], ["list"], ["show", "ex05"], ["hint", "ex05"], ["next"]):
            result = CliRunner().invoke(main, args)
            out[" ".join(args)] = [result.exit_code, repr(result.exception) if result.exception and
                                   not isinstance(result.exception, SystemExit) else None, result.output[:200]]
        print(json.dumps(out))
    ''', env={"TORCH_KATAS_ISOLATION": "portable", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path),
              "XDG_STATE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out.pop("backend") == "portable"
    for command, (code, exception, output) in out.items():
        assert exception is None and code == 0, (command, exception, output)
        assert output.strip(), command
