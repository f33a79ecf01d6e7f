"""A job: one file to grade as one exercise for one student (of a batch, a cluster's batch, the mutants of
`grade validate --mutants`).

Runs in: the batch's process before it grades anything, a cluster worker's. Plain data, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from grader.course.exercises import Exercise


@dataclass
class Job:
    """One file to grade as one exercise for one student."""

    student: str
    exercise: Exercise
    path: Path
    sha256: str
    lms: dict = field(default_factory=dict)  # what the LMS said of it: {"lms_late": bool} (Canvas's _LATE marker)
    seed: int | None = None  # in a batch: its exercise's seed (one per exercise: equal code, equal score)
