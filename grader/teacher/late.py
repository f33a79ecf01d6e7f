"""Late work: the LMS's late flag and submission time, and the course's optional due date and late policy.

In course.toml (or in one assignment's table, which wins):

    [late]
    due = 2026-03-01T23:59:00+08:00   # a TOML date-time (without an offset: UTC), or a day (its end)
    penalty = 0.1                     # the share of the score taken per day late (started days)
    accept_days = 7                   # optional: later than this, the work earns 0

Work is late when its submission time is after `due`, or, without a due date, when the LMS flagged it (Canvas's
`_LATE_`): then it is flagged and shown, and no penalty is applied (the LMS applies its own policy).
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from datetime import date, datetime, time, timezone

from grader.course.exercises import COURSE_FILE, Course
from grader.judge.result import Result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class LateError(ValueError):
    """A late policy that cannot be used."""


def late_policy(course: Course, assignment: str | None = None) -> dict:
    """The course's [late] table, completed by the assignment's [assignments.NAME.late]; {} without one."""
    path = course.root / COURSE_FILE
    if not path.is_file():
        return {}
    try:
        meta = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    policy = {**meta.get("late", {}), **meta.get("assignments", {}).get(assignment or "", {}).get("late", {})}
    due = policy.get("due")
    if isinstance(due, str):
        try:
            due = datetime.fromisoformat(due)
        except ValueError:
            raise LateError(f"{path}: late.due is not a date-time ({due!r})") from None
    if isinstance(due, date) and not isinstance(due, datetime):
        due = datetime.combine(due, time(23, 59, 59))  # a day: its end
    if isinstance(due, datetime):
        policy["due"] = (due if due.tzinfo else due.replace(tzinfo=timezone.utc)).isoformat()
    return policy


def lateness(result: Result, policy: dict) -> dict | None:
    """How late the work of `result` is: {"late": True, "days": ..., "penalty": share taken}; None if on time."""
    submitted = result.submitted
    due = policy.get("due")
    if due and submitted:
        seconds = (datetime.fromisoformat(submitted) - datetime.fromisoformat(due)).total_seconds()
        if seconds <= 0:
            return None
        days = math.ceil(seconds / 86400)
        penalty = min(1.0, float(policy.get("penalty", 0)) * days)
        if "accept_days" in policy and days > float(policy["accept_days"]):
            penalty = 1.0
        return {"late": True, "days": days, "penalty": round(penalty, 4), "due": due}
    if result.late:
        return {"late": True}
    return None


def apply_late(result: Result | None, policy: dict) -> Result | None:
    """`result` with its lateness attached (`late_work`) and the policy's penalty taken from its score."""
    if result is None or result.grader_failure:
        return result
    late = lateness(result, policy)
    if late is None:
        return result
    return replace(result, late_work=late, score=round(result.score * (1 - late.get("penalty", 0.0)), 4))
