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
