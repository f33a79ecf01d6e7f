"""Grade one file as the learner's commands do (`grade ex05`, `grade watch`): by the warm service when there is one
(or can be started), else here. Either way the same result.

Runs in: the `grade` process or a fork of the front, `grade watch`. Grading here imports torch (through the judge),
once; by the service, nothing of it.
"""

from __future__ import annotations

from pathlib import Path

from grader.course.exercises import Exercise
from grader.judge.result import Result
from grader.sandbox.source import Source
from grader.service.client import served


def grade(exercise: Exercise, source: Source, *, server: bool = True, **options) -> Result:
    """Grade `source` as `exercise` (`judge.grade`'s options): by the service, else here."""
    result = served(exercise, Path(source.path), options) if server else None
    return grade_here(exercise, source, **options) if result is None else result


def grade_here(exercise: Exercise, source: Source, *, warm: bool = False, **options) -> Result:
    """Grade in this process (torch imported); `warm`: more gradings will follow (watch), so import what every
    exercise's grading needs once, now."""
    from grader.sandbox import zygote

    zygote.shared()  # its torch import runs beside ours
    from grader.judge.grading import grade as judge_grade
    from grader.judge.grading import prewarm

    if warm:
        prewarm()
    return judge_grade(exercise, source, **options)
