"""What one sandbox may use: time, CPU, memory, output, disk, and what it must not see.

Runs in: the judge (which sets the limits) and the sandbox (which applies them). Plain data, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

MEMORY_MIB = 4096  # the default memory limit of learner code


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
