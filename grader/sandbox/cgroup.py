"""One memory budget per sandbox: a memory cgroup of its own, where the kernel lets this process make one.

A process's address-space limit (RLIMIT_AS) holds one process; the files learner code writes to its tmpfs and
the processes it starts are outside it. A memory cgroup counts them all: every page of every process of the
sandbox, the tmpfs pages they write, up to `--memory`; past it the kernel kills a process of the sandbox (the
judge reads the cgroup's OOM count and says so). Made where this process may: as root, in the cgroup v1 memory
hierarchy under its own cgroup, or in cgroup v2 at the top; elsewhere (an ordinary user without a delegated
cgroup) the sandbox has its tmpfs inside the budget and each process its own address-space limit, and
`grade doctor` says which.

Runs in: the sandbox's first process (`join`, before it drops its uid and makes its namespaces), and the zygote
or the judge that reaped it (`remove`). Costs about a millisecond.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time

V1 = "/sys/fs/cgroup/memory"
V2 = "/sys/fs/cgroup"
PREFIX = "torch-katas-sandbox-"


def parent() -> tuple[str | None, str]:
    """The folder the sandboxes' cgroups are made in, and the cgroup version ("v1", "v2"); (None, why) where this
    process may make none."""
    try:
        lines = open("/proc/self/cgroup").read().splitlines()
    except OSError as exc:
        return None, f"no /proc/self/cgroup ({exc.strerror})"
    own = next((line.split(":", 2)[2] for line in lines if line.split(":")[1:2] == ["memory"]), None)
    if own is not None and os.path.isdir(V1):
        base = os.path.normpath(f"{V1}/{own}")
        return (base, "v1") if os.access(base, os.W_OK) else (None, f"{base} is not writable by this user")
    try:
        controllers = open(f"{V2}/cgroup.subtree_control").read().split()
    except OSError:
        return None, "no memory cgroup hierarchy is mounted"
    if "memory" not in controllers:
        return None, f"the memory controller is not enabled for the cgroups under {V2}"
    return (V2, "v2") if os.access(V2, os.W_OK) else (None, f"{V2} is not writable by this user (no delegated cgroup)")


def path_for(pid: int) -> str | None:
    """The cgroup of the sandbox whose first process is `pid` (None where none is made here)."""
    base, _ = parent()
    return None if base is None else f"{base}/{PREFIX}{pid}"


def join(limit: int) -> str:
    """Make this process's sandbox cgroup, limited to `limit` bytes of memory (swap included), and move this
    process into it: what it starts after is counted too. Raises OSError where it cannot."""
    base, version = parent()
    if base is None:
        raise OSError(0, version)
    path = f"{base}/{PREFIX}{os.getpid()}"
    os.mkdir(path)
    try:
        settings = [("memory.limit_in_bytes", limit), ("memory.memsw.limit_in_bytes", limit)] if version == "v1" \
            else [("memory.max", limit), ("memory.swap.max", 0)]
        for name, value in settings:
            if os.path.exists(f"{path}/{name}") or name in ("memory.limit_in_bytes", "memory.max"):
                with open(f"{path}/{name}", "w") as f:
                    f.write(str(value))
        with open(f"{path}/cgroup.procs", "w") as f:
            f.write("0")
    except OSError:
        with contextlib.suppress(OSError):
            os.rmdir(path)
        raise
    return path


def oom_kills(path: str) -> int:
    """How many processes the kernel killed in the cgroup for passing its limit."""
    for name in ("memory.events", "memory.oom_control"):  # v2, v1
        with contextlib.suppress(OSError):
            for line in open(f"{path}/{name}"):
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return 0


def remove(pid: int) -> bool:
    """Remove the cgroup of the sandbox `pid` once its processes are gone (the first one reaped, the others exiting
    as its PID namespace ends: up to 0.2 s; else `sweep` removes it later); True if the kernel killed one of them
    for its memory."""
    path = path_for(pid)
    if path is None or not os.path.isdir(path):
        return False
    killed = oom_kills(path) > 0
    for _ in range(40):
        try:
            os.rmdir(path)
            break
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                break
            time.sleep(0.005)
    return killed


def sweep() -> None:
    """Remove the cgroups sandboxes left (their zygote was killed before it could): each has no process left."""
    base, _ = parent()
    if base is None:
        return
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            if name.startswith(PREFIX):
                with contextlib.suppress(OSError):
                    os.rmdir(f"{base}/{name}")
