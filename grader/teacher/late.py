"""Late work: whether each file was late, decided from instants only: the LMS's word where it gives one, the time
the teacher collected the files where nothing else is known; never a time the student's files carry.

Runs in: the `grade` process of a batch, a review or an export. No torch.

In course.toml (or in one assignment's table, which wins):

    [late]
    due = 2026-03-01T23:59:00+08:00   # a TOML date-time with its offset, or a day (its end), or without an offset
    timezone = "Asia/Shanghai"        # ... when the course declares its zone (here or at the top of course.toml)
    penalty = 0.1                     # the share of the score taken per day late (started days)
    accept_days = 7                   # optional: later than this, the work earns 0
    excused = ["dee_104"]             # optional: students excused: no penalty, missing work counts neither way
    [late.extensions]                 # optional: a student's own due date, or days more than `due`
    ana_101 = 2026-03-04T23:59:00+08:00
    ben_102 = 2

A student is named as in grades.csv's student column, or by their id, e-mail or SIS login; a name nobody in the
class has is an error that says the closest one. A roster's `extension` (a date-time or days) and `excused` (yes,
true, x, 1) columns say the same per student, and its `submitted` column (Moodle's grading worksheet's "Last
modified (submission)") when the LMS recorded each student's submission.

What decides (`lateness`):
- the submission time is the LMS's record (the roster's `submitted`), else the instant the teacher collected the
  files (`grade batch --collected-at`), else unknown. The times of files and of zip members never count: a student
  writes them, and they carry no zone.
- Canvas's download marks late work `_LATE` in the file's name: that decides whether it is late (except within an
  extension of ours, which Canvas does not know); the submission time, when one is after the due date, says how
  many days. Elsewhere the submission time against the due date decides.
- where Canvas's marker and our due date disagree (late by Canvas, before our due date; on time by Canvas, after
  our due date by the LMS's own record), no penalty is taken and the student's row says so.
"""

from __future__ import annotations

import difflib
import math
import sys
from dataclasses import replace
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from grader.course.exercises import COURSE_FILE, Course
from grader.judge.result import Result
from grader.text import Text, verbatim

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MOODLE_TIMES = ("%A, %d %B %Y, %I:%M %p", "%A, %d %b %Y, %I:%M %p")  # "Sunday, 1 March 2026, 11:59 PM"
NONE_SAID = ("", "-")  # Moodle's worksheet: no submission
SUBMITTED = "submitted.json"  # in a grades folder: what the LMS and the teacher said of each file (batch.py)


class LateError(ValueError):
    """A late policy, or a time, that cannot be used."""


def late_policy(course: Course, assignment: str | None = None) -> dict:
    """The course's [late] table, completed by the assignment's [assignments.NAME.late]; {} without one. `due` and
    each extension that is a date become ISO 8601 text with an offset; `timezone` is the course's zone, if declared."""
    path = course.root / COURSE_FILE
    if not path.is_file():
        return {}
    try:
        meta = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    policy = {**meta.get("late", {}), **meta.get("assignments", {}).get(assignment or "", {}).get("late", {})}
    zone = policy.get("timezone", meta.get("timezone"))
    if zone is not None:
        policy["timezone"] = zone_name(zone, f"{path}: timezone")
    if "due" in policy:
        policy["due"] = moment(policy["due"], f"{path}: late.due", policy.get("timezone"))
    if not isinstance(policy.get("excused", []), list):
        raise LateError(f"{path}: late.excused is a list of students")
    extensions = policy.get("extensions", {})
    if not isinstance(extensions, dict):
        raise LateError(f"{path}: late.extensions is a table: student = a date-time or a number of days")
    policy["extensions"] = {str(k): extension(v, f"{path}: late.extensions.{k}", policy.get("timezone"))
                            for k, v in extensions.items()}
    policy["where"] = str(path)
    return policy


def zone_name(value, where: str) -> str:
    """A time zone's IANA name, checked (`Asia/Shanghai`)."""
    try:
        ZoneInfo(str(value))
    except (ZoneInfoNotFoundError, ValueError):
        raise LateError(Text("{where}: no time zone {zone} (an IANA name such as Asia/Shanghai)",
                             "{where}：没有时区 {zone}（应是 IANA 名称，例如 Asia/Shanghai）", where=verbatim(where),
                             zone=verbatim(value))) from None
    return str(value)


def moment(value, where: str, zone: str | None = None) -> str:
    """A TOML date-time or day (its end), or such text (ISO 8601, or Moodle's "Sunday, 1 March 2026, 11:59 PM"),
    as ISO 8601 text with an offset. One without a zone takes the course's `zone`; without that, it is refused:
    a time without a zone is never compared with one that has it."""
    if isinstance(value, str):
        value = _parsed(value.strip(), where)
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time(23, 59, 59))  # a day: its end
    if not isinstance(value, datetime):
        raise LateError(Text("{where} is not a date-time ({value})", "{where} 不是日期时间（{value}）",
                             where=verbatim(where), value=verbatim(repr(value))))
    if value.tzinfo is None:
        if zone is None:
            raise LateError(Text(
                "{where} ({value}) has no time zone: write its offset (2026-03-01T23:59:00+08:00), or the course's "
                "zone in course.toml's [late] (timezone = \"Asia/Shanghai\")",
                "{where}（{value}）没有时区：请写上偏移（2026-03-01T23:59:00+08:00），或在 course.toml 的 [late] 中写上"
                "课程的时区（timezone = \"Asia/Shanghai\"）", where=verbatim(where), value=verbatim(value.isoformat())))
        value = value.replace(tzinfo=ZoneInfo(zone))
    return value.isoformat()


def _parsed(text: str, where: str) -> date | datetime:
    try:
        return datetime.fromisoformat(text) if "T" in text or " " in text[:11] else date.fromisoformat(text)
    except ValueError:
        pass
    for layout in MOODLE_TIMES:
        try:
            return datetime.strptime(text, layout)
        except ValueError:
            pass
    raise LateError(Text("{where} is not a date-time ({value})", "{where} 不是日期时间（{value}）",
                         where=verbatim(where), value=verbatim(repr(text))))


def extension(value, where: str, zone: str | None = None) -> float | str:
    """An extension: days more (a number), or a due date of the student's own (ISO 8601 text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value.strip().replace(".", "", 1).isdigit():
        return float(value)
    return moment(value, where, zone)


def check_class(policy: dict, people: dict[str, dict]) -> None:
    """LateError for a student the policy names who is not in the class (with the closest name), and for a roster's
    extension or submission time that cannot be read."""
    names = {str(n) for key, who in people.items() for n in _names(key, who)}
    where = policy.get("where", COURSE_FILE)
    for table, named in (("late.excused", policy.get("excused", [])), ("late.extensions", policy.get("extensions",
                                                                                                   {}))):
        for name in map(str, named):
            if name in names:
                continue
            close = difflib.get_close_matches(name, sorted(names), n=1)
            guess = Text(" (did you mean {name}?)", "（是不是 {name}？）", name=close[0]) if close else ""
            raise LateError(Text("{where}: {table} names {name}, who is not in this class{guess}",
                                 "{where}：{table} 写了 {name}，但这个班没有这个学生{guess}", where=verbatim(where),
                                 table=table, name=verbatim(name), guess=guess))
    for key, who in people.items():
        if who.get("extension"):
            extension(who["extension"], f"the roster's extension of {key}", policy.get("timezone"))
        if who.get("submitted", "") not in NONE_SAID:
            moment(who["submitted"], f"the roster's submission time of {key}", policy.get("timezone"))


def _names(student: str, identity: dict) -> set[str]:
    """The names a policy may give a student by: their key, and their id, e-mail or SIS login in the class list."""
    return {student, *(str(identity[f]) for f in ("id", "email", "sis_login_id", "sis_user_id") if identity.get(f))}


def student_policy(policy: dict, student: str, identity: dict | None = None) -> dict:
    """The policy as it applies to one student (named by their key, or their id, e-mail or SIS login in the course's
    tables; the roster's `extension` and `excused` columns too): their own `due` (`extended`), and `excused`."""
    identity = identity or {}
    names = _names(student, identity)
    excused = bool(names & set(map(str, policy.get("excused", [])))) or \
        str(identity.get("excused", "")).strip().lower() in ("yes", "true", "x", "1", "excused")
    extended = next((policy["extensions"][n] for n in names if n in policy.get("extensions", {})), None)
    if extended is None and identity.get("extension"):
        extended = extension(identity["extension"], f"the roster's extension of {student}", policy.get("timezone"))
    mine = {**policy, "excused": excused}
    if isinstance(extended, float) and policy.get("due"):
        mine.update(due=(datetime.fromisoformat(policy["due"]) + timedelta(days=extended)).isoformat(), extended=True)
    elif isinstance(extended, str):
        mine.update(due=extended, extended=True)
    return mine


def submission(identity: dict | None, facts: dict, policy: dict) -> dict:
    """When one file was submitted and what the LMS said of it: {"submitted": ISO 8601, "by": "lms" (the roster's
    record) or "collected" (the teacher's --collected-at), "lms_late": Canvas's marker (absent: the LMS said
    nothing)}, from the file's `facts` (grader/teacher/batch.py's submitted.json) and the student's identity."""
    said = {"lms_late": facts["lms_late"]} if "lms_late" in facts else {}
    recorded = (identity or {}).get("submitted", "")
    if recorded not in NONE_SAID:
        return {**said, "submitted": moment(recorded, "the roster's submission time", policy.get("timezone")),
                "by": "lms"}
    if facts.get("collected"):
        return {**said, "submitted": facts["collected"], "by": "collected"}
    return said


def lateness(when: dict, policy: dict) -> dict | None:
    """How late one file is under a student's policy, from `when` (`submission`): {"late": True, "days"?,
    "penalty"?, "due"?, "extended"?}; {"excused": True} for an excused student's late work; {"extended": True,
    "due"} for work within an extension; with "problem" ([English, Chinese]) where Canvas and our due date
    disagree; None when on time with nothing to say."""
    due, submitted, marker = policy.get("due"), when.get("submitted"), when.get("lms_late")
    extended = {"extended": True, "due": due} if policy.get("extended") else {}
    after = (datetime.fromisoformat(submitted) - datetime.fromisoformat(due)).total_seconds() \
        if due and submitted else None
    problem = None
    if marker is None or extended:  # nothing from the LMS, or an extension the LMS does not know: the time decides
        late = after is not None and after > 0
    elif marker and after is not None and after <= 0:
        late, after = True, None
        problem = ("Canvas marks it late, but it was {how} {when}, before the due date {due}: no penalty taken "
                   "(are the due dates the same?)",
                   "Canvas 标为迟交，但它在截止时间 {due} 之前（{when}）{how_zh}：没有扣分（两边的截止时间一样吗？）")
    elif not marker and after is not None and after > 0 and when.get("by") == "lms":
        late, after = False, None
        problem = ("Canvas says on time, but it was submitted {when}, after the due date {due}: no penalty taken",
                   "Canvas 说按时提交，但它在截止时间 {due} 之后（{when}）提交：没有扣分")
    else:
        late = marker
        if marker and due and after is None and float(policy.get("penalty", 0)):
            problem = ("Canvas marks it late, but nobody said when it came: no penalty taken (grade batch "
                       "--collected-at says when the files were collected)", "Canvas 标为迟交，但没有人说明它何时提交："
                       "没有扣分（grade batch --collected-at 可以说明文件何时收取）")
    said = {}
    if problem:
        how = {"lms": ("submitted", "提交"), "collected": ("collected", "收取")}[when.get("by", "lms")]
        values = {"when": submitted, "due": due}
        said["problem"] = [problem[0].format(how=how[0], **values), problem[1].format(how_zh=how[1], **values)]
    if not late:
        return {**extended, **said} or None
    if policy.get("excused"):
        return {"excused": True, **said}
    if after is None:  # late by the LMS; how late, nobody said
        return {"late": True, **extended, **said}
    days = math.ceil(after / 86400)
    penalty = min(1.0, float(policy.get("penalty", 0)) * days)
    if "accept_days" in policy and days > float(policy["accept_days"]):
        penalty = 1.0
    return {"late": True, "days": days, "penalty": round(penalty, 4), "due": due, **extended, **said}


def apply_late(result: Result | None, policy: dict, when: dict | None = None) -> Result | None:
    """`result` with its submission time and lateness attached (`submitted`, `late_work`) and the policy's penalty
    taken from its score; `when` as `submission` gives it."""
    if result is None:
        return result
    when = when or {}
    result = replace(result, submitted=when.get("submitted"), late=bool(when.get("lms_late")))
    late = None if result.grader_failure else lateness(when, policy)
    if late is None:
        return result
    return replace(result, late_work=late, score=round(result.score * (1 - late.get("penalty", 0.0)), 4))
