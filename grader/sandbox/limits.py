"""What one sandbox may use: time, CPU, memory, output, disk, and what it must not see.

Runs in: the judge (which sets the limits) and the sandbox (which applies them: `apply`, with the standard
library's `resource` where the platform has it). Plain data, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

MEMORY_MIB = 4096  # the default memory limit of learner code


@dataclass
class Limits:
    """What one sandbox may use and see."""

    time: float = 10.0  # wall seconds per call (and for loading the code)
    cpu: int = 120  # CPU seconds for the whole sandbox
    memory: int = MEMORY_MIB << 20  # the sandbox's memory budget, bytes: its processes and its files together
    output: int = 1 << 20  # bytes of stdout/stderr kept on disk
    file_size: int = 64 << 20  # largest file learner code may write
    disk: int = 512 << 20  # at most this much of `memory` for what learner code writes (its tmpfs)
    workroot: str | None = None  # the folder work dirs are made in (the grading parent removes it whatever happens)
    hidden: tuple[str, ...] = ()  # folders masked even where no other layer denies them (solutions, checks...)
    cuda: bool = False  # let learner code open the GPU's device files

    def scratch(self) -> int:
        """The bytes of the budget its files may take (the sandbox's one tmpfs): `disk`, at most a quarter of it."""
        return min(self.disk, self.memory // 4)

    def address_space(self) -> int:
        """Each process's address-space limit: the budget less what the files may take, so that one process and the
        files stay within it (a memory cgroup, where there is one, also holds its children to it)."""
        return self.memory - self.scratch()


def apply(limits: Limits) -> dict[str, str]:
    """In the sandbox, before learner code runs: each process's address space, the sandbox's CPU time, the largest
    file it may write, no core dump (rlimits, where the platform has them: not on Windows). Returns the limits that
    could not be set, each with why."""
    try:
        import resource
        import signal
    except ImportError:  # pragma: no cover (Windows)
        return {"rlimits": "this platform has no resource limits (Windows): time is bounded by the judge alone"}
    missing = {}
    for name, value in (("RLIMIT_AS", limits.address_space()), ("RLIMIT_CPU", limits.cpu),
                        ("RLIMIT_FSIZE", limits.file_size), ("RLIMIT_CORE", 0)):
        try:
            res = getattr(resource, name)
            soft, hard = resource.getrlimit(res)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(res, (value, value))
        except (AttributeError, ValueError, OSError) as exc:  # macOS refuses some limits below what is mapped
            missing[name] = str(exc) or type(exc).__name__
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails instead of killing
    return missing
