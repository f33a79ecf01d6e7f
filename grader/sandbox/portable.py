"""The portable isolation backend (backend.py): only what Python offers on every platform, for Linux without the
kernel's layers, macOS and Windows.

The learner's code runs in a process started by multiprocessing's `spawn` (never `fork`): a fresh interpreter that
holds nothing of its judge's memory, with the learner's environment only (`process.learner_environment`), its work
dir as its home and current folder, stdout and stderr in the output file the judge reads, and its stdin closed. It
reads its setup (the source, the limits, the probes' code) from its one connection to the judge, plain data as a
sandbox of the zygote's does (wire.py), then serves the judge as every sandbox does (`process.serve`). Its time is
bounded by the judge, which kills it (handle.py); its memory, CPU time and file sizes by rlimits where the platform
has them (`limits.apply`: not on Windows, where a Job object holds the sandbox's processes to its memory budget
together, and ends them with it: `job_object`, prepared and not run here); on macOS a Seatbelt
profile (the one `sandbox-exec` applies, by the same library call) denies it the network, writes outside its work dir
and reads of the hidden folders and of the user's home. It ends when its judge does (`watch_parent`).

What it does NOT do: hide the machine from the code. On Linux and Windows the code can read what its user can read,
reach the network and see other processes. That is enough for grading one's own code (the checks run in a judge the
code cannot reach, and the verdicts are the same), not for a class's: `grade batch` refuses it unless told.

Runs in: the judge (`start`, `use`: trusted) and the sandbox (`main`: untrusted once learner code runs).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import socket
import sys
import threading
from collections.abc import Callable

from grader.sandbox import backend


@dataclasses.dataclass
class Shipping:
    """What a judge's sandboxes need of its grading: the modules to import before learner code (`preload`) and the
    probes' code (`probes`, probe_shipping.py's bundle), made on first use."""

    preload: tuple[str, ...] = ()
    probes: Callable[[], dict] = dict


_shipping = Shipping()


def use(shipping: Shipping) -> None:
    """In a judge: what its sandboxes are given."""
    global _shipping
    _shipping = shipping


def shipping() -> Shipping:
    return _shipping


def context():
    return multiprocessing.get_context("spawn")


def start(conn: socket.socket, env: dict[str, str]) -> multiprocessing.process.BaseProcess:
    """Start a sandbox serving `conn`, with `env` as its whole environment (the judge's own is put back at once)."""
    process = context().Process(target=main, args=(conn,), name="torch-katas-sandbox")
    if sys.platform == "win32":  # pragma: no cover - Python does not start without them there
        env = {**env, **{k: v for k, v in os.environ.items() if k.upper() in ("SYSTEMROOT", "WINDIR")}}
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        process.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return process


def wait_status(exitcode: int | None) -> int:
    """A spawned process's exit code as a wait status (a signal's number where it was killed by one)."""
    if exitcode is None:
        return 0
    if os.name != "posix":  # pragma: no cover
        return exitcode
    return -exitcode if exitcode < 0 else exitcode << 8


def watch_parent() -> None:
    """End this process when the one that started it ends (a thread waiting on its sentinel): a judge killed at its
    deadline takes its sandbox with it, as PR_SET_PDEATHSIG does on Linux."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def wait() -> None:
        parent.join()
        os._exit(3)

    threading.Thread(target=wait, name="torch-katas-parent", daemon=True).start()


def main(conn: socket.socket) -> None:  # pragma: no cover - runs in the spawned sandbox (tests reach it there)
    """The sandbox: read the setup, apply what the platform offers, serve the judge. Never returns."""
    try:
        watch_parent()
        multiprocessing.set_start_method(None, force=True)  # learner code's processes (DataLoader workers) start as
        # the platform starts them (fork on Linux), not as `spawn` started this one (it re-imports a main module)
        if hasattr(os, "setsid"):
            os.setsid()  # its own group: the judge kills what it starts with it
        from grader.sandbox import probe_shipping, probes, process, warmup, wire, zygote

        setup, _ = wire.recv(conn)
        source, limits, seed = process.setup_of(setup)
        workdir = setup["workdir"]
        os.chdir(workdir)
        out = os.open(os.path.join(workdir, ".output"), os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        if not zygote.preload(setup.get("preload", []), limits.hidden):
            warmup.run()  # torch's first module, backward and DataLoader: before the learner's time starts, as the
            # zygote runs it before its forks (preload ran it already where it imported anything)
        for name in setup.get("probe_modules", []):  # probes that cannot travel as code: their modules, imported
            __import__(name)
        sys.modules.update(probe_shipping.install(setup["probes"], probes.PROBES))
        process.SHIPPED = not setup.get("probe_modules")  # a fresh process: no module of a hidden folder, unless named
        walls: dict = {"applied": ["spawned process (portable backend)"], "missing": {}}
        if backend.seatbelt_present():
            try:
                seatbelt(workdir, list(limits.hidden))
                walls["applied"].append("seatbelt")
            except OSError as exc:
                walls["missing"]["seatbelt"] = str(exc)
        if sys.platform == "win32":  # pragma: no cover - prepared, not run here
            try:
                job_object(limits.memory)
                walls["applied"].append("job object")
            except (OSError, AttributeError, ValueError) as exc:
                walls["missing"]["job object"] = f"{exc}: memory is not bounded, time is (by the judge)"
        del setup
        wire.send(conn, {"started": True})  # the judge times the learner's code from here, not Python's start
    except BaseException:  # a sandbox that cannot be set up reports through its exit status
        os._exit(4)
    process.serve(conn, source, limits, seed, walls)


def seatbelt_profile(workdir: str, hidden: list[str]) -> str:
    """The Seatbelt profile (SBPL, as `sandbox-exec -p` takes; where rules overlap, the last one decides): no
    network, no program but this Python, writes only in the work dir; nothing of the user's home read but Python's
    import path (a venv, a checkout may lie there) and the work dir, and never the `hidden` folders (the solutions and
    checks, which lie on the import path when the grader is installed)."""
    def paths(folders) -> str:
        return " ".join(f'(subpath "{os.path.realpath(f)}")' for f in folders if f)

    python = sorted({sys.prefix, sys.base_prefix, os.path.dirname(os.__file__),  # and a checkout on sys.path
                     *(p for p in sys.path if p and os.path.isdir(p))})
    work = os.path.realpath(workdir)
    return "\n".join([
        "(version 1)", "(allow default)", "(deny network*)",
        "(deny process-exec)", f'(allow process-exec (literal "{os.path.realpath(sys.executable)}"))',
        "(deny file-write*)", f'(allow file-write* (subpath "{work}") (literal "/dev/null"))',
        f"(deny file-read* {paths([os.path.expanduser('~')])})",
        f'(allow file-read* {paths(python)} (subpath "{work}"))',
        *([f"(deny file-read* {paths(hidden)})"] if hidden else []),
    ])


def seatbelt(workdir: str, hidden: list[str]) -> None:  # pragma: no cover - macOS only; prepared, not run here
    """Apply `seatbelt_profile` to this process (sandbox_init(3), the call `sandbox-exec` makes); OSError if not."""
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("System") or "/usr/lib/libSystem.B.dylib")
    error = ctypes.c_char_p()
    lib.sandbox_init.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_char_p)]
    if lib.sandbox_init(seatbelt_profile(workdir, hidden).encode(), 0, ctypes.byref(error)) != 0:
        raise OSError(f"sandbox_init: {(error.value or b'refused').decode(errors='replace')}")


def job_object(memory: int) -> None:  # pragma: no cover - Windows only; prepared, not run here
    """Put this process (and what it starts) in a new Windows Job object: `memory` bytes for all of them together,
    all killed when the last handle closes (this process's end). OSError if Windows refuses."""
    import ctypes
    from ctypes import wintypes

    class Basic(ctypes.Structure):
        _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                    ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                    ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                    ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                    ("SchedulingClass", wintypes.DWORD)]

    class Extended(ctypes.Structure):
        _fields_ = [("BasicLimitInformation", Basic), ("IoInfo", ctypes.c_uint64 * 6),
                    ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                    ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

    job_memory, kill_on_close, extended_limits = 0x200, 0x2000, 9
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    job = kernel32.CreateJobObjectW(None, None)
    if not job:
        raise ctypes.WinError(ctypes.get_last_error())  # type: ignore[attr-defined]
    info = Extended()
    info.BasicLimitInformation.LimitFlags = job_memory | kill_on_close
    info.JobMemoryLimit = memory
    handle, this = wintypes.HANDLE(job), wintypes.HANDLE(kernel32.GetCurrentProcess())
    if not kernel32.SetInformationJobObject(handle, extended_limits, ctypes.byref(info), ctypes.sizeof(info)) \
            or not kernel32.AssignProcessToJobObject(handle, this):
        raise ctypes.WinError(ctypes.get_last_error())  # type: ignore[attr-defined]
    # the handle stays open until this process ends: then the job, and every process in it, ends
