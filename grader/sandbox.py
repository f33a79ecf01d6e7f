"""The sandbox: learner code runs here, in a forked process with its own directory and limits.

Judge side, `Sandbox` starts the process and exchanges plain-data messages with it (see wire.py);
`Submission` is the proxy the checks use (`submission.linear_grads(x, y, w, b)`). Sandbox side,
`_serve` loads the learner's code as a module and answers `call` and `probe` requests until the
judge closes the connection. The judge never imports learner code.
"""

from __future__ import annotations

import dataclasses
import fcntl
import io
import os
import random
import resource
import select
import signal
import socket
import sys
import tempfile
import time
import traceback
import types
from dataclasses import dataclass
from typing import NoReturn

import torch

from grader import isolation, probecode, safefs, scrub, wire, zygote
from grader.options import MEMORY_MIB
from grader.probing import cell_name, frame, where
from grader.source import NotebookShell, Source
from grader.text import Text, joined, quoted, verbatim

OUTPUT_SHOWN = 500
TOP_LEVEL = Text("your file's top-level code", "你的文件的顶层代码")


@dataclass
class Limits:
    """What one sandbox may use and see."""

    time: float = 10.0  # wall seconds per call (and for loading the code)
    cpu: int = 120  # CPU seconds for the whole sandbox
    memory: int = MEMORY_MIB << 20  # address space, bytes
    output: int = 1 << 20  # bytes of stdout/stderr kept on disk
    file_size: int = 64 << 20  # largest file learner code may write
    disk: int = 512 << 20  # the work dir's size: a tmpfs of the sandbox's own (with namespaces)
    workroot: str | None = None  # the folder work dirs are made in (the grading parent removes it whatever happens)
    hidden: tuple[str, ...] = ()  # folders masked even where no other layer denies them (solutions, checks...)
    cuda: bool = False  # let learner code open the GPU's device files


# -- what can go wrong on the learner's side (judge side exceptions) -----------------------

class LearnerProblem(Exception):
    """Base: learner code did not produce a value. `text` is learner-facing, `key` names the problem."""

    status = "graded"
    key = "learner-problem"

    def __init__(self, text: Text):
        super().__init__(text.render("en"))
        self.text = text

    @property
    def message(self) -> str:
        return self.text.render("en")


class LearnerError(LearnerProblem):
    """Learner code raised an exception."""

    def __init__(self, text: Text, *, exc_type: str = "", not_started: bool = False, key: str | None = None):
        super().__init__(text)
        self.exc_type = exc_type
        self.not_started = not_started
        self.key = key or ("not-started" if not_started else f"raised-{exc_type or 'error'}")


class LearnerTimeout(LearnerProblem):
    status = "timeout"
    key = "timeout"


class LearnerCrashed(LearnerProblem):
    status = "crashed"
    key = "crashed"


class Tampered(LearnerProblem):
    """Learner code replaced part of torch, the test runner or the grader."""

    status = "tampered"
    key = "tampered"


class LoadFailed(LearnerProblem):
    """The learner's file could not be loaded (syntax error, exception at import)."""

    status = "error"
    key = "load-failed"


class CellsFailed(LearnerProblem):
    """Notebook cells raised: the checks ran with what the other cells defined."""

    key = "cell-raised"


# -- the sandbox process -------------------------------------------------------------------

PROBES: dict[str, types.FunctionType] = {}
SHIPPED = False  # started by the zygote: no module of a hidden folder, the probes rebuilt from shipped code (scrub.py)


def probe(fn):
    """Mark a check-module function as a probe: trusted code run inside the sandbox.

    A probe receives the learner's module first, then the plain-data arguments the judge sent,
    and returns plain data. It is how checks observe behaviour (count zero_grad calls, record a
    loss curve) without the judge ever importing learner code.
    """
    PROBES[f"{fn.__module__}.{fn.__name__}"] = fn
    fn.probe_name = f"{fn.__module__}.{fn.__name__}"
    return fn


def seed_torch(seed: int, gpu: bool) -> None:
    """Seed torch: the CPU's generator, and the GPU's where the process may use one. torch.manual_seed seeds every
    device torch knows of, and for each one not initialised yet records the caller's stack to seed it later (about
    3 ms from a judge's stack): a process that cannot reach a GPU seeds the CPU's alone, the same numbers."""
    if gpu:
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(seed)


def _set_limits(limits: Limits) -> None:
    for name, value in (
        ("RLIMIT_AS", limits.memory),
        ("RLIMIT_CPU", limits.cpu),
        ("RLIMIT_FSIZE", limits.file_size),
        ("RLIMIT_CORE", 0),
    ):
        res = getattr(resource, name)
        soft, hard = resource.getrlimit(res)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(res, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails instead of killing


def _hide_solutions() -> None:
    """Reference solutions are never importable from learner code."""
    sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or ".", "solutions"))]
    if SHIPPED:  # the zygote never imports them; and going through sys.modules would copy a page per name (4 ms)
        return
    for name in [m for m in sys.modules if m == "solutions" or m.startswith("solutions.")]:
        del sys.modules[name]


WATCHED = {
    "torch": ["allclose", "equal", "isclose", "eq"],
    "torch.Tensor": ["__eq__", "__torch_function__", "allclose", "equal", "backward"],
    "torch.testing": ["assert_close"],
    "torch.autograd": ["gradcheck", "gradgradcheck", "backward", "grad"],
    "builtins": ["isinstance", "len", "abs", "float", "int", "type", "getattr", "__import__"],
    "_pytest.runner": ["call_and_report", "runtestprotocol"],
    "_pytest.python": ["Function"],
    "_pytest.reports": ["TestReport"],
    "grader.wire": ["encode", "send", "recv"],
    "grader.sandbox": ["_answer", "_error_reply"],
    "os": ["_exit", "write"],
}


def _watched_objects() -> dict[str, object]:
    """What learner code has no business replacing (comparisons, gradcheck, the test runner, us)."""
    import builtins
    import importlib

    found = {}
    for owner_name, names in WATCHED.items():
        owner: object
        if owner_name == "torch.Tensor":
            owner = torch.Tensor
        elif owner_name.startswith("_pytest") and owner_name not in sys.modules:
            continue  # a sandbox from the zygote has no pytest to patch
        else:
            owner = builtins if owner_name == "builtins" else importlib.import_module(owner_name)
        for name in names:
            found[f"{owner_name}.{name}"] = (owner.__dict__.get(name) if isinstance(owner, type)
                                             else getattr(owner, name, None))
    found["grader.sandbox.PROBES"] = sys.modules["grader.sandbox"].__dict__.get("PROBES")
    return found | _probe_objects()


def _probe_objects() -> dict[str, object]:
    """The probes, their code and what they use: replacing any of them is tampering too."""
    found: dict[str, object] = {}
    for key, fn in PROBES.items():
        found[f"PROBES[{key}]"] = fn
        found[f"PROBES[{key}].__code__"] = fn.__code__
        for name, value in fn.__globals__.items():
            found[f"PROBES[{key}]: {name}"] = value
            if isinstance(value, types.FunctionType):
                found[f"PROBES[{key}]: {name}.__code__"] = value.__code__
    return found


_ZYGOTE_FINALIZERS: list = []  # inherited, never run here: each looks itself up in the (new) registry first


def _forget(limits: Limits) -> None:
    """Drop what the sandbox inherited and must not hold (see scrub.py), with no finaliser of the judge's or
    the parent's objects run here (a temporary folder of theirs is theirs to remove)."""
    import weakref

    inherited, weakref.finalize._registry = weakref.finalize._registry, {}  # type: ignore[attr-defined]
    if SHIPPED:  # the zygote's (torch's own): kept, as freeing them would only copy the pages they share (about 3 ms)
        _ZYGOTE_FINALIZERS.append(inherited)
    else:  # the judge's, which may name its files
        inherited.clear()
    hook, sys.unraisablehook = sys.unraisablehook, lambda _: None
    try:
        scrub.scrub(PROBES, limits.hidden, sys._getframe(1), shipped=SHIPPED)
    finally:
        sys.unraisablehook = hook


def _tampered(baseline: dict[str, object]) -> list[str]:
    now = _watched_objects()
    return sorted(name for name, obj in baseline.items() if now.get(name) is not obj)


def _learner_frames(tb, source: Source) -> list[dict]:
    """The last frames of a traceback in the learner's code, as data (see `probing.frame`)."""
    labels = {label for label, _ in source.chunks}
    frames = [f for f in traceback.extract_tb(tb) if f.filename in labels]
    return [frame("" if f.filename == source.filename else f.filename, f.lineno or 0, f.name, f.line)
            for f in frames[-3:]]


class _NoStdin(io.TextIOBase):
    """The sandbox's stdin: reading it (`input()`) raises an EOFError that says why."""

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise EOFError("your code called input(): graded code cannot read the keyboard; "
                       "remove it or give the value directly")

    read = readline


def _pointer(exc: SyntaxError) -> str:
    """The offending line with a caret under the column, as Python shows a SyntaxError."""
    if not exc.text or not exc.text.strip():
        return ""
    line = exc.text.rstrip("\n")
    under = "".join(c if c == "\t" else " " for c in line[:max((exc.offset or 1) - 1, 0)])
    return f"\n    {line}\n    {under}^"


def _error_reply(exc: BaseException, source: Source) -> dict:
    if isinstance(exc, SystemExit):
        text = f"SystemExit({exc.code!r}): your code called sys.exit() or exit()"
    elif isinstance(exc, KeyboardInterrupt):
        text = "KeyboardInterrupt raised by your code"
    elif isinstance(exc, SyntaxError) and exc.filename in {label for label, _ in source.chunks}:
        text = f"{type(exc).__name__} at line {exc.lineno}: {exc.msg}"
    else:
        text = f"{type(exc).__name__}: {exc}".strip()
    return {
        "ok": False,
        "type": type(exc).__name__,
        "message": text[:600] + (_pointer(exc) if isinstance(exc, SyntaxError) else ""),
        "frames": _learner_frames(exc.__traceback__, source),
        "not_started": isinstance(exc, NotImplementedError),
    }


def _load_module(source: Source) -> tuple[types.ModuleType, list[dict]]:
    """Run the learner's chunks, in order, as the module `submission`; return it and the cells that raised.

    A .py file is all or nothing, as an import is: its exception propagates. A notebook runs as
    Jupyter runs it: a cell that raises is reported (an error reply with its `cell`) and the next
    cells still run, with `get_ipython()` and `display()` defined.
    """
    import linecache

    sys.stdin = _NoStdin()
    module = types.ModuleType("submission")
    module.__file__ = source.filename
    sys.modules["submission"] = module
    if source.notebook:
        vars(module).update(NotebookShell().namespace())
    failed = []
    for label, code in source.chunks:
        shown = source.cells.get(label, code)  # tracebacks quote the cell as written, magics and all
        linecache.cache[label] = (len(shown), None, shown.splitlines(keepends=True), label)
        try:
            exec(compile(code, label, "exec", dont_inherit=True), module.__dict__)
        except BaseException as exc:  # noqa: BLE001 - in a notebook, the next cell runs whatever this one raised
            if not source.notebook:
                raise
            failed.append({**_error_reply(exc, source), "cell": label})
    return module, failed


def _answer(module, header: dict, blobs: list[bytes], source: Source) -> tuple[dict, list[bytes]]:
    args = wire.decode(header.get("args", []), blobs, restore_grad=True)
    kwargs = wire.decode(header.get("kwargs", {"__dict__": {}}), blobs, restore_grad=True)
    try:
        if header["op"] == "call":
            fn = getattr(module, header["name"], None)
            if fn is None:
                return {"ok": False, "missing": True, "name": header["name"], "type": "AttributeError",
                        "message": f"no `{header['name']}` defined", "frames": [], "not_started": False}, []
            value = fn(*args, **kwargs)
        else:
            value = PROBES[header["name"]](module, *args, **kwargs)
    except AttributeError as exc:
        if getattr(exc, "obj", None) is module:  # a probe reached for something the file lacks
            return {"ok": False, "missing": True, "name": exc.name, "type": "AttributeError",
                    "message": str(exc), "frames": [], "not_started": False}, []
        return _error_reply(exc, source), []
    except BaseException as exc:  # noqa: BLE001 - learner code may raise anything, SystemExit too
        return _error_reply(exc, source), []
    out: list[bytes] = []
    try:
        reply = {"ok": True, "value": wire.encode(value, out)}
        if header.get("echo_args"):
            reply["args"] = wire.encode(list(args), out)
    except Exception as exc:  # noqa: BLE001 - a value that cannot travel is said so, never a crash
        detail = str(exc) if isinstance(exc, wire.Unsendable) else f"a {type(value).__name__}"
        return {"ok": False, "unsendable": True, "type": type(exc).__name__, "message": detail,
                "frames": [], "not_started": False}, []
    return reply, out


def _sandbox_main(sock: socket.socket, source: Source, plan: isolation.Plan, limits: Limits, seed: int,
                  output: int) -> None:
    """The sandbox's first process: its own session, the isolation layers, then learner code. Never returns.

    With namespaces, this process stays outside the new PID namespace and only waits: its child, PID 1
    of the namespace, runs learner code, and this process ends as that child ended, so the judge reads
    the child's exit status (a segfault, an `os._exit`) as its own. Killing this process kills the child
    and everything it started (PR_SET_PDEATHSIG, then the end of the PID namespace).
    """
    try:
        os.setsid()
        report = isolation.Report()
        namespaces = isolation.enter_before_fork(plan, report)
        isolation.die_with_parent()  # after any uid change, which clears it
        if namespaces:
            alive_r, alive_w = os.pipe()
            child = os.fork()
            if child:
                isolation.close_all_but({alive_w}, start=0)
                _, status = os.waitpid(child, 0)
                _end_as(status)
            isolation.die_with_parent()
            os.close(alive_w)
            if select.select([alive_r], [], [], 0)[0]:  # the waiting parent died before PDEATHSIG was set
                os._exit(3)
            os.close(alive_r)
        isolation.enter_after_fork(plan, report, namespaces)
    except BaseException:  # noqa: BLE001 - a sandbox that cannot be set up reports through its exit status
        os._exit(4)
    _serve(sock, source, plan.workdir, limits, seed, report, output)


def _end_as(status: int) -> None:
    """End this process as the waited-for child ended: the same signal, or the same exit code."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 3)


def learner_environment(workdir: str) -> dict[str, str]:
    """The environment learner code sees: nothing of the grader's (tokens, keys, paths), only what Python
    and torch need, with the work dir as home and temp dir."""
    env = {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
           "PYTORCH_NVML_BASED_CUDA_CHECK": "1", "TORCH_KATAS_SANDBOX": "1"}  # check() in a graded notebook: no-op
    env.update({k: v for k, v in os.environ.items() if k in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH")})
    return env


def _serve(sock: socket.socket, source: Source, workdir: str, limits: Limits, seed: int,
           report: isolation.Report, out: int) -> None:
    """The process that runs learner code: load it, then answer calls and probes. Never returns.

    `out` is the output file the judge opened before the fork: stdout and stderr go there, and the
    judge reads it back through its own descriptor, whatever learner code does to names in its work dir."""
    status = 0
    try:
        os.chdir(workdir)
        # only the connection and the output stay open, at the top of the range: an object of the judge's or the
        # parent's that `_forget` frees closes a number it once owned, never these
        top = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 4096) - 2
        out = fcntl.fcntl(out, fcntl.F_DUPFD, top + 1)
        sock = socket.socket(fileno=fcntl.fcntl(sock.detach(), fcntl.F_DUPFD, top))
        os.closerange(0, top)
        env = learner_environment(workdir)
        os.environ.clear()
        _forget(limits)
        os.environ.update(env)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.closerange(3, sock.fileno())
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        tempfile.tempdir = None  # tempfile reads TMPDIR again
        torch.set_num_threads(1)
        seed_torch(seed, limits.cuda)
        random.seed(seed)
        _hide_solutions()
        _set_limits(limits)
        sys.argv = [source.filename]
        baseline = _watched_objects()
        try:
            module, failed = _load_module(source)
            ready = {"ok": True, "failed_cells": failed}
        except BaseException as exc:  # noqa: BLE001 - SyntaxError, SystemExit and the rest alike
            module = None
            ready = _error_reply(exc, source)
        ready["tampered"] = _tampered(baseline)
        ready["isolation"] = {"applied": report.applied, "missing": report.missing}
        wire.send(sock, ready)
        while module is not None:
            try:
                header, blobs = wire.recv(sock)
            except EOFError:
                break
            reply, out_blobs = _answer(module, header, blobs, source)
            reply["tampered"] = _tampered(baseline)
            sys.stdout.flush()
            wire.send(sock, reply, out_blobs)
    except BaseException:  # noqa: BLE001 - the sandbox reports through its exit status only
        status = 3
    os._exit(status)


# -- judge side ----------------------------------------------------------------------------

def _describe_exit(status: int) -> tuple[type[LearnerProblem], Text]:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return LearnerTimeout, Text("used up its CPU time limit", "用完了 CPU 时间限额")
        if sig == signal.SIGSEGV:
            return LearnerCrashed, Text("crashed with a segmentation fault (SIGSEGV)", "因段错误（SIGSEGV）崩溃了")
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return LearnerCrashed, Text("was killed by signal {name}", "被信号 {name} 终止了", name=name)
    code = os.WEXITSTATUS(status)
    return LearnerCrashed, Text("ended the process with exit status {code} (os._exit() or similar)",
                                "以退出状态 {code} 结束了进程（os._exit() 或类似调用）", code=code)


class ZygoteLost(LearnerProblem):
    """The zygote that starts sandboxes is gone (outside a judge: `grade doctor`'s test sandbox)."""

    status = "error"
    key = "grader-failure"


def _grader_lost(channel: zygote.Channel) -> NoReturn:
    """The zygote is gone. A judge ends without its `end`, which the parent records as the grader's failure (never
    a grade); elsewhere the caller is told."""
    if channel.judge:
        os._exit(70)
    raise ZygoteLost(Text("the process that starts sandboxes (the zygote) ended", "启动沙箱的进程（zygote）已结束"))


class Sandbox:
    """One sandbox process for one submission, driven by the judge (forked by the zygote, or by the judge itself
    when there is none: see zygote.py)."""

    def __init__(self, source: Source, limits: Limits, seed: int = 0):
        self.source = source
        self.limits = limits
        self.seed = seed
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.spawner: zygote.Channel | None = None
        self.asked = False  # a sandbox asked of the zygote, whose pid is not read yet (`_spawned`)
        self.workdir = tempfile.mkdtemp(prefix="torch-katas-", dir=limits.workroot)
        self.output_fd = os.open(os.path.join(self.workdir, ".output"),
                                 os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        self.load_reply: dict = {}
        self.problem: LearnerProblem | None = None  # set once the process died or hung

    def launch(self) -> None:
        """Start the process, which loads the learner's code while the caller goes on (`start` waits for it)."""
        parent, child = socket.socketpair()
        plan = isolation.Plan(self.workdir, list(self.limits.hidden), self.limits.cuda, disk=self.limits.disk)
        self.spawner = zygote.channel()
        probes = None
        if self.spawner is not None:
            try:
                probes = self.spawner.probes()
            except probecode.NotShippable:  # a course's probe that cannot travel: forked here, as before the zygote
                self.spawner = None
        if self.spawner is not None:
            self._spawn(parent, child, plan, probes)
        else:
            self.pid = os.fork()
            if self.pid == 0:  # pragma: no cover - runs in the child
                parent.close()
                _sandbox_main(child, self.source, plan, self.limits, self.seed, self.output_fd)
        child.close()
        self.sock = parent

    def start(self) -> dict:
        """The load reply: launched first if it was not (the learner's code is loaded, or why it was not)."""
        if self.sock is None:
            self.launch()
        self._spawned()
        self.load_reply = self._receive(self.limits.time, TOP_LEVEL)[0]
        return self.load_reply

    def _spawn(self, parent: socket.socket, child: socket.socket, plan: isolation.Plan, probes) -> None:
        """A sandbox from the zygote: it forks a clean child, which reads this setup from its connection. Its pid
        is read when it is needed (`_spawned`): the judge goes on meanwhile."""
        assert self.spawner is not None
        try:
            self.spawner.request(child, self.output_fd, self.limits.hidden)
        except zygote.Lost:
            _grader_lost(self.spawner)
        self.asked = True
        source = self.source
        setup = {"source": {"chunks": [list(chunk) for chunk in source.chunks], "filename": source.filename,
                            "path": str(source.path), "notebook": source.notebook, "cells": source.cells},
                 "plan": {"workdir": plan.workdir, "hidden": plan.hidden, "cuda": plan.cuda, "private": plan.private,
                          "disk": plan.disk, "allowed": plan.readable()},  # computed once in the parent
                 "limits": dataclasses.asdict(self.limits), "seed": self.seed, "probes": probes}
        try:
            wire.send(parent, setup)
        except OSError:
            pass  # it died at once: _receive reports how

    def _spawned(self) -> None:
        """The pid of the sandbox asked of the zygote, once the zygote answered."""
        if self.asked:
            assert self.spawner is not None
            self.asked = False
            try:
                self.pid = self.spawner.spawned()
            except zygote.Lost:
                _grader_lost(self.spawner)

    @property
    def alive(self) -> bool:
        return (self.pid is not None or self.asked) and self.problem is None

    def request(self, header: dict, blobs: list[bytes], what: str | Text) -> tuple[dict, list[bytes]]:
        assert self.sock is not None, "start() first"
        try:
            wire.send(self.sock, header, blobs)
        except OSError:
            pass  # the process is gone: _receive reports how it ended
        return self._receive(self.limits.time, what)

    def _receive(self, timeout: float, what: str | Text) -> tuple[dict, list[bytes]]:
        assert self.sock is not None, "start() first"
        self.sock.settimeout(timeout)
        try:
            return wire.recv(self.sock)
        except TimeoutError:
            self.kill()
            self.problem = LearnerTimeout(Text(
                "{what} did not finish within {timeout:g} s: is there an endless loop, or a loop that never stops?",
                "{what} 在 {timeout:g} 秒内没有完成：是否有死循环，或者循环没有结束条件？", what=what, timeout=timeout))
        except (EOFError, OSError, wire.ProtocolError):
            status = self.kill(grace=0.5)
            kind, text = _describe_exit(status)
            self.problem = kind(Text("While running {what}, your code {text}.", "运行 {what} 时，你的代码{text}。",
                                     what=what, text=text))
        raise self.problem

    def kill(self, grace: float = 0.0) -> int:
        """Kill the sandbox's whole process group; return its wait status.

        With `grace`, a process that is already ending gets that long to exit by itself first, so
        its own exit status (not our SIGKILL) is what gets reported.
        """
        self._spawned()
        if self.pid is None:
            return 0
        if self.spawner is not None:
            return self._end_spawned(grace)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._kill_group()
                self.pid = None
                return status
            time.sleep(0.01)
        self._kill_group()
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 0
        self.pid = None
        return status

    def _end_spawned(self, grace: float) -> int:
        """`kill` for a sandbox of the zygote's: its wait status comes from the zygote, which reaped it."""
        assert self.spawner is not None and self.pid is not None
        try:
            status = self.spawner.wait(self.pid, grace) if grace else None
            self._kill_group()
            if status is None:
                status = self.spawner.wait(self.pid, zygote.READY_TIMEOUT)
        except zygote.Lost:
            status = None
        if status is None:  # the zygote is gone, and its sandboxes with it (PR_SET_PDEATHSIG)
            if self.spawner.judge:
                _grader_lost(self.spawner)
            status = signal.SIGKILL  # the wait status of a process killed by SIGKILL
        self.pid = None
        return status

    def _kill_group(self) -> None:
        if self.pid is None:
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # not yet its own group leader
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def output(self) -> str:
        """What learner code printed: read through the descriptor opened before it ran (never by name)."""
        try:
            data = safefs.read_fd(self.output_fd, self.limits.output)
        except OSError:
            return ""
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        if self.spawner is not None:  # the zygote reaps it: its exit status is of no use any more, nor worth a wait
            self._spawned()
            try:
                if self.pid is not None and self.spawner.wait(self.pid, 0.001) is None:  # not reaped yet: still ours
                    self._kill_group()
            except zygote.Lost:
                pass  # the zygote is gone, and its sandboxes with it
            self.pid = None
        self.kill()
        if self.sock is not None:
            self.sock.close()
        if self.output_fd >= 0:
            os.close(self.output_fd)
            self.output_fd = -1
        safefs.remove_tree(self.workdir)


def does_not_define(name: str) -> Text:
    """The message for a name the learner's file lacks."""
    return Text("Your file does not define `{name}`: was it renamed or deleted?",
                "你的文件里没有定义 `{name}`：是不是被改名或删除了？", name=name)


def describe_arg(value) -> str:
    """How an argument reads in a call shown to the learner: `x[8, 1]`-style for tensors."""
    if isinstance(value, torch.Tensor):
        return f"tensor{list(value.shape)}"
    if isinstance(value, (list, tuple)) and len(value) > 4:
        return f"{type(value).__name__}[{len(value)}]"
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


class Submission:
    """The proxy checks receive as the `submission` fixture.

    `submission.fn(*args)` calls the learner's `fn` in the sandbox and returns its value as plain
    data; `submission.probe(probe_fn, *args)` runs a trusted probe there. A sandbox that died
    or hung is replaced by a fresh one for the next check; a file that failed to load is one
    problem (`load_problem`), and no check runs.
    """

    def __init__(self, source: Source, limits: Limits, seed: int = 0):
        self._source = source
        self._limits = limits
        self._seed = seed
        self._sandbox: Sandbox | None = None
        self.load_problem: LearnerProblem | None = None  # the file did not load: no check can run
        self._hung: dict[str, LearnerTimeout] = {}  # a call that timed out once fails at once after
        self.problems: list[LearnerProblem] = []
        self.outputs: list[str] = []
        self.isolation: dict = {}  # the last sandbox's isolation: {"applied": [layers], "missing": {layer: why}}
        self._shared: dict = {}  # what `once` made

    # -- lifecycle --
    def launch(self) -> None:
        """Start the first sandbox now, so that it loads the learner's code while the judge's pytest collects the
        checks; the first request waits for it."""
        if self._sandbox is None:
            self._sandbox = Sandbox(self._source, self._limits, self._seed)
            self._sandbox.launch()

    def _ready(self) -> Sandbox:
        if self.load_problem is not None:
            raise self.load_problem
        if self._sandbox is not None and self._sandbox.alive and self._sandbox.load_reply:
            return self._sandbox
        if self._sandbox is None or not self._sandbox.alive:
            self._retire()
            self._sandbox = Sandbox(self._source, self._limits, self._seed)
        try:
            reply = self._sandbox.start()
        except LearnerProblem as problem:
            self.load_problem = problem
            self.problems.append(problem)
            raise
        self._note_tampering(reply)
        self.isolation = reply.get("isolation", {})
        if not reply.get("ok"):
            self.load_problem = LoadFailed(Text("{error}{where}", "{error}{where}", error=verbatim(reply["message"]),
                                                where=where(reply)))  # the report says it could not be loaded
            self.problems.append(self.load_problem)
            raise self.load_problem
        self._note_failed_cells(reply.get("failed_cells"))
        return self._sandbox

    def _note_failed_cells(self, failed: list[dict] | None) -> None:
        if failed and not any(isinstance(p, CellsFailed) for p in self.problems):
            cells = joined([Text("\n  {cell}: {error}{where}", "\n  {cell}：{error}{where}", cell=cell_name(f["cell"]),
                                 error=verbatim(f["message"]), where=where(f)) for f in failed], "")
            self.problems.append(CellsFailed(Text(
                "Notebook cells that raised an error (the checks ran with what the other cells define):{cells}",
                "以下单元格抛出了错误（检查使用了其他单元格定义的内容）：{cells}", cells=cells)))

    def _retire(self) -> None:
        if self._sandbox is not None:
            self.outputs.append(self._sandbox.output())
            self._sandbox.close()
            self._sandbox = None

    def close(self) -> None:
        self._retire()

    def output(self) -> str:
        """The learner's printed output (the last OUTPUT_SHOWN characters)."""
        text = "".join(self.outputs)
        return text if len(text) <= OUTPUT_SHOWN else "..." + text[-OUTPUT_SHOWN:]

    def once(self, key, make):
        """What `make()` returns, made once per grading for `key`: the checks that judge the same run share it (the
        first check that asks draws its inputs). A `make` that raised is tried again by the next check that asks."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]

    # -- requests --
    def _request(self, header: dict, args, kwargs, what: str):
        if header["name"] in self._hung:
            raise self._hung[header["name"]]
        sandbox = self._ready()
        blobs: list[bytes] = []
        header = {**header, "args": wire.encode(list(args), blobs), "kwargs": wire.encode(dict(kwargs), blobs)}
        try:
            reply, out = sandbox.request(header, blobs, what)
        except LearnerProblem as problem:
            self.problems.append(problem)
            if isinstance(problem, LearnerTimeout):
                self._hung[header["name"]] = problem
            raise
        self._note_tampering(reply)
        if not reply.get("ok"):
            raise self._error(reply, what)
        return reply, out

    def _note_tampering(self, reply: dict) -> None:
        names = reply.get("tampered")
        if names and not any(isinstance(p, Tampered) for p in self.problems):
            listed = verbatim(", ".join(map(str, names[:5])))
            self.problems.append(Tampered(Text("Your code replaced {listed}: that is tampering, and the score is 0.",
                                               "你的代码替换了 {listed}：这属于篡改评分，得分为 0。", listed=listed)))

    def _error(self, reply: dict, what) -> LearnerError:
        if reply.get("missing"):
            name = reply.get("name") or str(what).strip("`").split("(")[0]
            return LearnerError(does_not_define(name), exc_type="AttributeError", key="missing-name")
        if reply.get("not_started"):
            return LearnerError(Text("Not started: {what} still raises NotImplementedError (fill in its TODO).",
                                     "尚未开始：{what} 仍然抛出 NotImplementedError（请完成其中的 TODO）。", what=what),
                                exc_type="NotImplementedError", not_started=True)
        if reply.get("unsendable"):
            return LearnerError(Text("{what} returned a value that cannot be sent back: {detail}",
                                     "{what} 返回的值无法传回评分器：{detail}",
                                     what=what, detail=quoted(reply["message"])),
                                exc_type=reply["type"], key="unsendable-value")
        if reply.get("type") == "MemoryError" or "can't allocate memory" in reply.get("message", ""):
            return LearnerError(Text("{what} ran out of memory (the limit is {limit} MiB): is a tensor far larger than "
                                     "needed?{where}",
                                     "{what} 内存不足（上限 {limit} MiB）：是不是创建了过大的 tensor？{where}",
                                     what=what, limit=self._limits.memory >> 20, where=where(reply)),
                                exc_type="MemoryError", key="out-of-memory")
        return LearnerError(Text("{what} raised {error}{where}", "{what} 抛出了异常 {error}{where}",
                                 what=what, error=quoted(reply["message"]), where=where(reply)),
                            exc_type=reply.get("type", ""))

    def call(self, name: str, *args, **kwargs):
        """Call the learner's `name(*args, **kwargs)` and return its value."""
        what = f"`{name}({', '.join(map(describe_arg, args))})`"
        reply, out = self._request({"op": "call", "name": name}, args, kwargs, what)
        return wire.decode(reply["value"], out)

    def call_with_args(self, name: str, *args, **kwargs):
        """Like `call`, but also return the arguments as they were after the call (in-place changes)."""
        what = f"`{name}({', '.join(map(describe_arg, args))})`"
        reply, out = self._request({"op": "call", "name": name, "echo_args": True}, args, kwargs, what)
        return wire.decode(reply["value"], out), wire.decode(reply["args"], out)

    def probe(self, fn, *args, what: str | None = None, **kwargs):
        """Run the probe `fn` (see `probe`) in the sandbox and return its plain-data result."""
        what = what or f"`{fn.__name__}`"
        reply, out = self._request({"op": "probe", "name": fn.probe_name}, args, kwargs, what)
        return wire.decode(reply["value"], out)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs)
