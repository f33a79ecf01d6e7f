"""`grade doctor`: what isolates learner code on this machine, proved by a test sandbox.

A small self-test runs as learner code in a real sandbox, set up exactly as for grading, and tries what a
hostile submission would: read the reference solutions, see and signal the grading process, open its
descriptors, ptrace it, connect to a TCP port this process opens, write outside its work dir, read the
grader's environment (and its block in memory), reach the hidden checks and the grader's variables in
memory, have the grader read a file through a link in its work dir, run a program; and the grader parses a
malformed notebook. What it managed is reported beside the layers the sandbox applied.
"""

from __future__ import annotations

import os
import platform
import secrets
import shutil
import socket
import sys
import tempfile
import time
import types
from pathlib import Path

from grader import isolation, zygote
from grader.exercises import CHECKS_DIR, current_course
from grader.sandbox import LearnerProblem, Limits, Submission
from grader.source import Source, SubmissionError, load_source
from grader.text import Text

SELF_TEST = '''
import ctypes, os, socket, subprocess, sys

def attempts(solution, grader_pid, port, secret, outside, linked):
    done = {}
    def attempt(name, action):
        try:
            action()
            done[name] = True
        except Exception:
            done[name] = False
    attempt("read the reference solutions", lambda: open(solution).read(1))
    done["see other processes"] = any(p.isdigit() and int(p) != os.getpid() for p in os.listdir("/proc"))
    attempt("signal the grading process", lambda: os.kill(grader_pid, 0))
    attempt("open the grading process's descriptors", lambda: os.listdir(f"/proc/{grader_pid}/fd"))
    libc = ctypes.CDLL(None, use_errno=True)
    def ptrace():
        if libc.ptrace(0x4206, grader_pid, None, None) != 0:  # PTRACE_SEIZE: attaches without stopping
            raise OSError(ctypes.get_errno(), "ptrace")
        libc.ptrace(17, grader_pid, None, None)  # PTRACE_DETACH
    attempt("ptrace the grading process", ptrace)
    attempt("connect to a TCP port on 127.0.0.1", lambda: socket.create_connection(("127.0.0.1", port), 2).close())
    attempt("write outside its work dir", lambda: open(outside, "w").write("x"))
    done["read the grader's environment"] = secret in os.environ
    attempt("run a program", lambda: subprocess.run(["true"], check=True))
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])
    done["read the grader's environment block in memory"] = ctypes.string_at(start, end - start).strip(b"\\0") != b""
    done["reach the hidden checks in memory"] = any(getattr(m, "REFERENCE", None) == secret
                                                   for m in list(sys.modules.values()))
    frame, seen = sys._getframe(), False
    while frame is not None:
        outer = frame.f_code.co_filename != "self_test.py"
        seen = seen or outer and secret in [v for v in frame.f_locals.values() if isinstance(v, str)]
        frame = frame.f_back
    done["read the grader's variables (the frames it was forked in)"] = seen
    for name in os.listdir("."):
        os.unlink(name)
    os.symlink(linked, ".output")  # a judge that reads its output by name would read the link's target
    return done
'''

LAYERS = {
    "namespaces": "other processes invisible, no network, private /tmp, /run and /dev/shm, solutions and checks masked",
    "landlock": "files: read-only Python and libraries, writes only in the work dir, nothing run; TCP refused; "
                "signals, ptrace and abstract sockets kept inside the sandbox",
    "dedicated uid": "learner code runs as a uid that owns nothing",
    "seccomp": "ptrace, process_vm_*, mount, bpf, kexec, io_uring and new namespaces refused",
    "process limit": "fewer processes and threads at once than the limit: a fork bomb stops there",
    "non-dumpable grader": "same-uid processes cannot open the grader's /proc/<pid>/fd or mem",
}


def _hidden_checks(secret: str) -> str:
    """A stand-in for a check module the grader imported (in the checks folder, holding a reference value)."""
    module = types.ModuleType("grader.checks._doctor_reference")
    module.__file__ = str(CHECKS_DIR / "_doctor_reference.py")
    module.REFERENCE = secret  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return module.__name__


def _malformed_notebook_raises(folder: Path) -> bool:
    """Whether reading a notebook nested 100 000 deep (or with a cell source that is a number) escapes as
    anything but the submission's own error."""
    for name, text in (("deep.ipynb", "[" * 100_000 + "]" * 100_000),
                       ("number.ipynb", '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, '
                                        '"cells": [{"cell_type": "code", "source": 5, "metadata": {}}]}')):
        (folder / name).write_text(text)
        try:
            load_source(folder / name)
        except SubmissionError:
            pass
        except BaseException:  # noqa: BLE001 - exactly what this looks for
            return True
    return False


def run_self_test() -> dict:
    """Start a sandbox as grading does, run the self-test in it; return what was applied and what it managed."""
    isolation.protect_self()
    secret = f"TORCH_KATAS_DOCTOR_{secrets.token_hex(4)}"
    os.environ[secret] = "1"
    solutions = current_course().solutions_dir
    solution = next(iter(sorted(solutions.glob("*.py"))), None) if solutions.is_dir() else None
    outside_dir = Path(tempfile.mkdtemp(prefix="torch-katas-doctor-"))
    outside_dir.chmod(0o777)
    linked = outside_dir / "grader-only.txt"
    linked.write_text(secret)
    linked.chmod(0o600)
    checks = _hidden_checks(secret)
    server = socket.create_server(("127.0.0.1", 0))
    limits = Limits(time=20, hidden=tuple(str(p) for p in [solutions, CHECKS_DIR] if p.is_dir()))
    submission = Submission(Source(chunks=[("self_test.py", SELF_TEST)], filename="self_test.py",
                                   path=Path("self_test.py")), limits)
    spawner = zygote.connect()  # the test sandbox starts as a grading's does: from the zygote, where there is one
    zygote.use(zygote.Channel(spawner) if spawner else None)
    try:
        started = time.perf_counter()
        try:
            done = submission.call("attempts", str(solution or "/nonexistent"), os.getpid(),
                                   server.getsockname()[1], secret, str(outside_dir / "written"), str(linked))
        except LearnerProblem as problem:  # the test sandbox itself failed: say so, never pretend
            done = {f"finish the self-test ({problem.message})": True}
        elapsed = time.perf_counter() - started
        outside = "write outside its work dir"
        done[outside] = done.get(outside) or (outside_dir / "written").exists()
        if solution is None:
            done.pop("read the reference solutions", None)
        submission.close()
        done["have the grader read a file through a link in its work dir"] = secret in submission.output()
        done["crash the grader with a malformed notebook"] = _malformed_notebook_raises(outside_dir)
    finally:
        submission.close()
        zygote.use(None)
        if spawner is not None:
            spawner.close()
        server.close()
        shutil.rmtree(outside_dir, ignore_errors=True)
        del os.environ[secret]
        sys.modules.pop(checks, None)
    return {"applied": submission.isolation.get("applied", []), "missing": submission.isolation.get("missing", {}),
            "managed": done, "setup_s": elapsed}


def summary_line(report: dict, lang: str = "en") -> str:
    """One line for batch and the Gradescope runner, in `lang` (the layers' names are code: `landlock`...)."""
    def code(names) -> str:
        return ", ".join(f"`{name}`" for name in names)

    line = Text("Isolation of student code: {applied}", "学生代码的隔离：{applied}",
                applied=code(report["applied"]) if report["applied"] else Text("none", "无")).render(lang)
    if report["missing"]:
        line += Text("; missing: {names}", "；缺少：{names}", names=code(report["missing"])).render(lang)
    managed = [name for name, ok in report["managed"].items() if ok]
    if managed:
        line += Text("; WARNING, student code could still: {names}", "；警告：学生代码仍然可以：{names}",
                     names=", ".join(managed)).render(lang)
    elif not report["applied"]:
        line += Text(" (plain processes only)", "（只是普通进程）").render(lang)
    return line + Text(" (`grade doctor` for details)", "（详见 `grade doctor`）").render(lang)


def render(report: dict) -> str:
    import torch

    cuda = "CUDA available" if torch.cuda.is_available() else "no CUDA device"
    lines = [f"Python {platform.python_version()} ({sys.executable}) · torch {torch.__version__} · {cuda}",
             f"Linux {platform.release()}, running as {'root' if os.geteuid() == 0 else f'uid {os.geteuid()}'}", "",
             "Layers isolating learner code here:"]
    for layer, covers in LAYERS.items():
        applied = next((a for a in report["applied"] if a.startswith(layer)), None)
        if layer == "non-dumpable grader":
            applied = layer
        why = report["missing"].get(layer)
        if layer == "dedicated uid" and os.geteuid() != 0:
            applied, covers = None, ""
            why = "not needed: the grader runs as an ordinary user, whose uid the sandbox keeps without capabilities"
        mark = "yes" if applied else "no "
        lines.append(f"  {mark} {applied or layer}: {covers if applied else why or 'not applied'}")
    if "capabilities" in report["missing"]:
        lines.append(f"  no  dropping capabilities: {report['missing']['capabilities']}")
    lines += ["", "A test sandbox, set up as for grading, just tried to:"]
    for name, managed in report["managed"].items():
        lines.append(f"  {'COULD   ' if managed else 'refused '} {name}")
    lines.append("")
    if any(report["managed"].values()):
        lines.append("Learner code is NOT fully isolated here: grade untrusted code in a container or VM.")
    else:
        lines.append("Every attempt was refused.")
    lines.append(f"Starting the sandbox and running the self-test took {report['setup_s'] * 1000:.0f} ms. "
                 "What still needs a container or VM: kernel exploits and side channels (see docs/security.md).")
    return "\n".join(lines)
