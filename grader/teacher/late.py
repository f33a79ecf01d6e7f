"""Late work: the LMS's late flag and submission time, and the course's optional due date and late policy, with
each student's extension or excuse.

In course.toml (or in one assignment's table, which wins):

    [late]
    due = 2026-03-01T23:59:00+08:00   # a TOML date-time (without an offset: UTC), or a day (its end)
    penalty = 0.1                     # the share of the score taken per day late (started days)
    accept_days = 7                   # optional: later than this, the work earns 0
    excused = ["dee_104"]             # optional: students excused: no penalty, missing work counts neither way
    [late.extensions]                 # optional: a student's own due date, or days more than `due`
    ana_101 = 2026-03-04T23:59:00+08:00
    ben_102 = 2

A student is named as in grades.csv's student column, or by their id, e-mail or SIS login; a roster's `extension`
(a date-time or days) and `excused` (yes, true, x, 1) columns say the same per student. Work is late when its
submission time is after the student's due date, or, without a due date, when the LMS flagged it (Canvas's
`_LATE_`): then it is flagged and shown, and no penalty is applied (the LMS applies its own policy).
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from datetime import date, datetime, time, timedelta, timezone

from grader.course.exercises import COURSE_FILE, Course
from grader.judge.result import Result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class LateError(ValueError):
    """A late policy that cannot be used."""


def late_policy(course: Course, assignment: str | None = None) -> dict:
    """The course's [late] table, completed by the assignment's [assignments.NAME.late]; {} without one. `due` and
    each extension that is a date become ISO 8601 text."""
    path = course.root / COURSE_FILE
    if not path.is_file():
        return {}
    try:
        meta = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    policy = {**meta.get("late", {}), **meta.get("assignments", {}).get(assignment or "", {}).get("late", {})}
    if "due" in policy:
        policy["due"] = _moment(policy["due"], f"{path}: late.due")
    if not isinstance(policy.get("excused", []), list):
        raise LateError(f"{path}: late.excused is a list of students")
    extensions = policy.get("extensions", {})
    if not isinstance(extensions, dict):
        raise LateError(f"{path}: late.extensions is a table: student = a date-time or a number of days")
    policy["extensions"] = {str(k): _extension(v, f"{path}: late.extensions.{k}") for k, v in extensions.items()}
    return policy


def _moment(value, where: str) -> str:
    """A TOML date-time or day (its end), or such text, as ISO 8601 text with an offset (UTC when it has none)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value) if "T" in value or " " in value else date.fromisoformat(value)
        except ValueError:
            raise LateError(f"{where} is not a date-time ({value!r})") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time(23, 59, 59))  # a day: its end
    if not isinstance(value, datetime):
        raise LateError(f"{where} is not a date-time ({value!r})")
    return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()


def _extension(value, where: str) -> float | str:
    """An extension: days more (a number), or a due date of the student's own (ISO 8601 text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value.strip().replace(".", "", 1).isdigit():
        return float(value)
    return _moment(value.strip() if isinstance(value, str) else value, where)


def student_policy(policy: dict, student: str, identity: dict | None = None) -> dict:
    """The policy as it applies to one student (named by their key, or their id, e-mail or SIS login in the course's
    tables; the roster's `extension` and `excused` columns too): their own `due` (`extended`), and `excused`."""
    identity = identity or {}
    names = {student, *(identity.get(f) for f in ("id", "email", "sis_login_id", "sis_user_id") if identity.get(f))}
    excused = bool(names & set(map(str, policy.get("excused", [])))) or \
        str(identity.get("excused", "")).strip().lower() in ("yes", "true", "x", "1", "excused")
    extension = next((policy["extensions"][n] for n in names if n in policy.get("extensions", {})), None)
    if extension is None and identity.get("extension"):
        extension = _extension(identity["extension"], f"the roster's extension of {student}")
    mine = {**policy, "excused": excused}
    if isinstance(extension, float) and policy.get("due"):
        mine.update(due=(datetime.fromisoformat(policy["due"]) + timedelta(days=extension)).isoformat(), extended=True)
    elif isinstance(extension, str):
        mine.update(due=extension, extended=True)
    return mine


def lateness(result: Result, policy: dict) -> dict | None:
    """How late the work of `result` is under a student's policy: {"late": True, "days": ..., "penalty": share
    taken, "due", "extended"?}; {"excused": True} for an excused student's late work; None if on time."""
    submitted = result.submitted
    due = policy.get("due")
    extended = {"extended": True} if policy.get("extended") else {}
    if due and submitted:
        seconds = (datetime.fromisoformat(submitted) - datetime.fromisoformat(due)).total_seconds()
        if seconds <= 0:
            return None
        if policy.get("excused"):
            return {"excused": True}
        days = math.ceil(seconds / 86400)
        penalty = min(1.0, float(policy.get("penalty", 0)) * days)
        if "accept_days" in policy and days > float(policy["accept_days"]):
            penalty = 1.0
        return {"late": True, "days": days, "penalty": round(penalty, 4), "due": due, **extended}
    if result.late and not extended:  # the LMS's flag is of its own due date, not of an extension
        return {"excused": True} if policy.get("excused") else {"late": True}
    return None


def apply_late(result: Result | None, policy: dict) -> Result | None:
    """`result` with its lateness attached (`late_work`) and the policy's penalty taken from its score."""
    if result is None or result.grader_failure:
        return result
    late = lateness(result, policy)
    if late is None:
        return result
    return replace(result, late_work=late, score=round(result.score * (1 - late.get("penalty", 0.0)), 4))
