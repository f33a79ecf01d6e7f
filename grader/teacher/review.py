"""A teacher's word on a batch: review.toml in the grades folder, applied to every output of every run.

Each `[[review]]` entry names a student and an exercise, and may
- override the exercise's score (`score = 3.5`; above the exercise's points only as a bonus, `bonus = true`, said
  so wherever the review is shown) or a check's verdict (`checks = { dw = "passed" }`): the checks that
  build on an overridden one follow it (a check that passed on its own earns its points once those it builds on
  pass),
- add a comment the student reads (`comment = "..."`),
- choose which of two files for the exercise is graded (`file = "hw1_final.py"`),
- apply rubric items (`items = ["sign-db"]`): each `[[item]]` entry defines one per exercise, once (`exercise`,
  `name`, relative `points` such as -2 or 1, the `text` the student reads, and `checks` verdicts it overrides as a
  review's do); a later definition of the same name
  replaces it for every submission that has it, and each keeps who and when. An item moves the checks' score (not
  below 0 nor above the points); a score set by the teacher stays as set,
and records who wrote it (`by`: --by, $TORCH_KATAS_REVIEWER or the course's `reviewer`; none is recorded otherwise),
when (`at`) and of which file (`sha256`). `grade review` appends entries; a later entry for the same student and
exercise completes or replaces an earlier one's fields. A review of a file the student has since replaced is
stale: applied still, and marked so everywhere, until an entry for the new file confirms it (`--confirm`).
Nothing here regrades: results.jsonl keeps what the checks said, and the review is applied on top of it each
time the gradebook is written.

Also here: the state a batch leaves for `grade review` to rebuild the outputs without the submissions
(batch.json), and the kept copy of each graded file.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import shutil
import sys
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from grader.teacher.collect import natural_key
from grader.course.exercises import Exercise
from grader.judge.result import CheckResult, Result, blocked_failure, blocked_text, text
from grader.text import Text, verbatim

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REVIEW_FILE = "review.toml"
STATE_FILE = "batch.json"
KEPT = "files"  # out/files/<student>/<file>: the graded files, kept
VERDICTS = ("passed", "failed")
REVIEWED = {"passed": Text("Passed, by your teacher’s review.", "老师复核后判为已通过。"),
            "failed": Text("Not passed, by your teacher’s review.", "老师复核后判为未通过。")}
BLOCKING = ("failed", "not_started", "not_run")  # a check that builds on one of these earns nothing (judge/plugin.py)


class ReviewError(ValueError):
    """review.toml cannot be read, or a review names something that does not exist."""


def _read(out: Path) -> dict:
    path = Path(out) / REVIEW_FILE
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ReviewError(f"{path}: {exc}") from None


def read_items(out: Path) -> dict[tuple[str, str], dict]:
    """(exercise, item name) -> its rubric item as last defined: {name, points, text, by, at}."""
    return _items(_read(out), Path(out) / REVIEW_FILE)


def _items(data: dict, path: Path) -> dict[tuple[str, str], dict]:
    """read_items of review.toml's content `data`, read from `path`."""
    items: dict[tuple[str, str], dict] = {}
    for n, item in enumerate(data.get("item", []), 1):
        if not isinstance(item, dict) or not item.get("exercise") or not item.get("name") \
                or isinstance(item.get("points"), bool) or not isinstance(item.get("points"), (int, float)):
            raise ReviewError(Text("{path}: item {n} needs an exercise, a name and points",
                                   "{path}：第 {n} 个评分项需要写练习、名称和分数", path=path, n=n))
        checks = item.get("checks", {})
        if not isinstance(checks, dict) or any(v not in VERDICTS for v in checks.values()):
            raise ReviewError(Text("{path}: item {n}: a check's verdict is passed or failed",
                                   "{path}：第 {n} 个评分项：检查的结果只能是 passed 或 failed", path=path, n=n))
        items[(str(item["exercise"]), str(item["name"]))] = {
            "name": str(item["name"]), "points": float(item["points"]), "text": str(item.get("text", "")),
            **{k: item[k] for k in ("by", "at", "checks") if item.get(k)}}
    return items


def read_reviews(out: Path) -> dict[tuple[str, str], dict]:
    """(student, exercise id) -> the review of it, later entries completing earlier ones; its rubric items as they
    are defined now."""
    path = Path(out) / REVIEW_FILE
    data = _read(out)  # review.toml read and parsed once, for its reviews and its items
    entries, items = data.get("review", []), _items(data, path)
    reviews: dict[tuple[str, str], dict] = {}
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not entry.get("student") or not entry.get("exercise"):
            raise ReviewError(Text("{path}: review {n} names no student or no exercise",
                                   "{path}：第 {n} 条复核没有写学生或练习", path=path, n=n))
        bad = [c for c, v in entry.get("checks", {}).items() if v not in VERDICTS]
        if bad:
            raise ReviewError(Text("{path}: review {n}: a check's verdict is passed or failed ({checks})",
                                   "{path}：第 {n} 条复核：检查的结果只能是 passed 或 failed（{checks}）", path=path,
                                   n=n, checks=", ".join(bad)))
        key = (str(entry["student"]), str(entry["exercise"]))
        before = reviews.get(key, {})
        reviews[key] = {**before, **entry, "checks": {**before.get("checks", {}), **entry.get("checks", {})}}
        if "score" in entry:  # a new score is a bonus only if it says so
            reviews[key]["bonus"] = bool(entry.get("bonus"))
        if entry.get("items"):
            names = list(dict.fromkeys([*before.get("items", []), *map(str, entry["items"])]))
            unknown = [name for name in names if (key[1], name) not in items]
            if unknown:
                raise ReviewError(Text("{path}: review {n}: {ex} has no item {items}",
                                       "{path}：第 {n} 条复核：{ex} 没有评分项 {items}", path=path, n=n, ex=key[1],
                                       items=", ".join(unknown)))
            reviews[key]["items"] = names
    for (_, exercise), review in reviews.items():
        if review.get("items"):
            review["rubric"] = [items[(exercise, name)] for name in review["items"]]
    return reviews


def closest(name: str, names) -> Text:
    """'; did you mean X?' with the one of `names` closest to `name` (difflib), or nothing."""
    close = difflib.get_close_matches(name, [str(n) for n in names], n=1, cutoff=0.5)
    return Text("; did you mean {close}?", "；是不是 {close}？", close=verbatim(close[0])) if close else Text("", "")


def score_problem(score: float, exercise: Exercise, bonus: bool) -> Text | None:
    """Why a review's score cannot be written as it is (below 0; above the exercise's points, unless a bonus)."""
    if not math.isfinite(score) or score < 0:
        return Text("the score is a number from 0 up, not {value}", "分数必须是不小于 0 的数，而不是 {value}",
                    value=f"{score:g}")
    if score > exercise.points and not bonus:
        return Text("the score {score} is above {ex}'s {points} points: mark it as a bonus to give it",
                    "分数 {score} 超过了 {ex} 的满分 {points}：要给出请标为加分", score=f"{score:g}", ex=exercise.id,
                    points=f"{exercise.points:g}")
    return None


def _toml(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"{value:g}"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string


def add_review(out: Path, student: str, exercise: str, by: str | None = None, **fields) -> dict:
    """Append a review entry (the fields given, with who when given, when, and `sha256`: of the file reviewed) to
    out/review.toml; return it."""
    return add_reviews(out, [(student, exercise, fields)], by)[0]


def add_reviews(out: Path, reviews: list[tuple[str, str, dict]], by: str | None = None) -> list[dict]:
    """Append one entry per (student, exercise, fields) to out/review.toml at once, as add_review writes each;
    return them."""
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    entries = [{"student": student, "exercise": exercise,
                **{k: v for k, v in fields.items() if v not in (None, {}, "")}, **({"by": by} if by else {}),
                "at": at} for student, exercise, fields in reviews]
    lines = [line for entry in entries
             for line in ("", "[[review]]", *(f"{key} = {_toml(value)}" for key, value in entry.items()))]
    path = Path(out) / REVIEW_FILE
    with path.open("ab") as f:  # in one write: the page reads it without waiting for the lock
        head = "" if f.tell() else ("# The teacher's reviews of this batch (see docs/authoring.md): applied to every "
                                    "output, kept across reruns.\n")
        f.write((head + "\n".join(lines) + "\n").encode("utf-8"))
    read_reviews(out)  # what was written reads back
    return entries


def add_item(out: Path, exercise: str, name: str, points: float, text: str, by: str | None = None,
             checks: dict[str, str] | None = None) -> dict:
    """Define (or change, for every submission that has it) a rubric item of `exercise` in out/review.toml: its
    relative points, its text, and the checks' verdicts it overrides."""
    item = {"exercise": exercise, "name": name, "points": points, "text": text,
            **({"checks": checks} if checks else {}), **({"by": by} if by else {}),
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    with (Path(out) / REVIEW_FILE).open("ab") as f:
        f.write(("\n".join(["", "[[item]]", *(f"{key} = {_toml(value)}" for key, value in item.items())]) + "\n")
                .encode("utf-8"))
    read_reviews(out)  # what was written reads back
    return item


def apply_review(result: Result | None, review: dict | None, exercise: Exercise) -> Result | None:
    """`result` with the teacher's overrides applied and the review attached (`review`: the comment, who,
    when, what was overridden, and `stale` when it reviewed another file than the one graded); a score given for
    work that has no result makes one. A final score is final: no late penalty beside it."""
    if not review:
        return result
    shown = {k: review[k] for k in ("comment", "by", "at", "score", "checks", "bonus", "rubric")
             if review.get(k) not in (None, "", {}, False, [])}
    if result is None:
        if "score" not in review:
            return None
        result = Result(exercise=exercise.id, name=exercise.name, submission="", status="graded", score=0.0,
                        max_score=exercise.points, title=Text(exercise.title, exercise.zh.get("title")))
    if review.get("sha256") and result.sha256 and review["sha256"] != result.sha256:
        shown["stale"] = True  # the student handed in another file since
    verdicts = {k: v for item in review.get("rubric", []) for k, v in item.get("checks", {}).items()}
    verdicts.update(review.get("checks", {}))  # the review's own verdict over an item's
    checks = reviewed_checks(result.checks, verdicts)
    score = min(sum(c.points for c in checks), result.max_score) if verdicts else result.score
    if review.get("rubric"):  # relative points: within 0 and the exercise's points
        score = min(max(score + sum(item["points"] for item in review["rubric"]), 0.0), result.max_score)
    if "score" in review:
        score = float(review["score"])
    result = replace(result, checks=checks, score=round(score, 4), review=shown)
    if "score" in review:
        result.needs_look = None  # the teacher decided
        result.status = "graded"
        if result.late_work:
            result.late_work = {**result.late_work, "penalty": 0.0, "final": True}
    return result


def reviewed_checks(checks: list[CheckResult], verdicts: dict[str, str]) -> list[CheckResult]:
    """The checks with the teacher's verdicts, and those that build on them decided again as the judge decides: a
    check's own verdict (`alone`) counts once every check it builds on passes; else it fails, and says why."""
    if not verdicts:
        return checks
    now: dict[str, CheckResult] = {}
    for c in checks:
        verdict = verdicts.get(c.id)
        if verdict:
            c = replace(c, outcome=verdict, points=c.max_points if verdict == "passed" else 0.0, reviewed=True,
                        message=c.message if verdict == c.outcome else REVIEWED[verdict],
                        key=c.key if verdict == c.outcome == "failed" else None, after=None, alone=None)
        elif c.depends and (c.after is None or c.alone is not None):  # an older record without `alone`: as it is
            own = c.alone or {"outcome": c.outcome, "message": str(c.message), "key": c.key}
            blocking = next((now[d] for d in c.depends if d in now and now[d].outcome in BLOCKING), None)
            if blocking is None or own["outcome"] not in ("passed", "failed"):
                c = replace(c, outcome=own["outcome"], message=text(own["message"]), key=own["key"], after=None,
                            alone=None, points=c.max_points if own["outcome"] == "passed" else 0.0)
            else:
                message = blocked_text(blocking.title) if own["outcome"] == "passed" else \
                    blocked_failure(blocking.title, text(own["message"]))
                c = replace(c, outcome="failed", message=message, after=blocking.id, alone=own, points=0.0,
                            key=None if own["outcome"] == "passed" else own["key"])
        now[c.id] = c
    return list(now.values())


def make_picker(out: Path, pick: str | None):
    """The choice among two files for one exercise: review.toml's `file` for that student, else the latest
    file with `pick="latest"` (its time in the submission; the name breaks a tie), else none."""
    reviews = read_reviews(out)

    def choose(student: str, exercise: Exercise, files: list[tuple[Path, str]]):
        named = reviews.get((student, exercise.id), {}).get("file")
        if named:
            for path, label in files:
                if named in (label, Path(label).name):
                    return path, label
        if pick == "latest":
            return max(files, key=lambda f: (f[0].stat().st_mtime, natural_key(f[1])))
        return None

    return choose


def kept_copy(path: Path, out: Path, student: str) -> str:
    """Copy a graded file to out/files/<student>/ (a download's unpacked files are deleted after the batch);
    return the copy's path."""
    from grader.report.pages import file_name

    folder = Path(out) / KEPT / file_name(student)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / path.name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # a submission is data: no link followed
        with os.fdopen(fd, "rb") as source, target.open("wb") as copy:
            shutil.copyfileobj(source, copy)
    except OSError:
        return str(path)
    return str(target)


def save_state(out: Path, exercises: list[Exercise], problems: list[dict], students: dict, similar, lang: str,
               assignment: str | None = None, seeds: dict[str, int] | None = None,
               isolation: dict | None = None) -> None:
    """What `grade review` needs to write the outputs again without the submissions (the course too, wherever it
    runs), the seed of each exercise (grader/teacher/consistency.py), which the next run grades with, and how student
    code was isolated (`batch.graded_by`)."""
    from grader.course.exercises import current_course

    problems = [{**p, "message": Text.of(p["message"]).render(lang)} for p in problems]  # JSON: in the batch's words
    state = {"course": current_course().spec, "exercises": [ex.id for ex in exercises], "assignment": assignment,
             "problems": problems, "students": students, "similar": similar, "lang": lang, "seeds": seeds or {},
             "isolation": isolation}
    (Path(out) / STATE_FILE).write_text(json.dumps(state, indent=1, ensure_ascii=False), encoding="utf-8")


def students_of(out: Path) -> list[str] | None:
    """The students of a batch's gradebook (None without one)."""
    path = Path(out) / "gradebook.json"
    if not path.is_file():
        return None
    return [row["student"] for row in json.loads(path.read_text(encoding="utf-8"))["rows"]]


@contextmanager
def locked(out: Path):
    """One writer of out/review.toml at a time, and a rebuild that reads what was written: an exclusive flock on the
    grades folder, held while the block runs. A flock belongs to an open file description, so it excludes the review
    page's concurrent requests (threads of one process) as it excludes `grade review` in another process. Where
    there is no flock (Windows), the first byte of a lock file in the folder is locked instead (msvcrt)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (Windows)
        with _windows_lock(Path(out) / ".review.lock"):
            yield
        return
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and the lock with it


@contextmanager
def _windows_lock(path: Path):  # pragma: no cover (Windows)
    import msvcrt

    with open(path, "a+b") as lock:
        while True:
            try:
                lock.seek(0)
                msvcrt.locking(lock.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]  # retries for 10 s
                break
            except OSError:
                continue
        try:
            yield
        finally:
            lock.seek(0)
            msvcrt.locking(lock.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


def history(out: Path, student: str, exercise: str) -> list[dict]:
    """The review entries of one student's exercise as they were written, oldest first (read_reviews merges them),
    each with its rubric items as they are defined now."""
    data = _read(out)
    items = _items(data, Path(out) / REVIEW_FILE)
    return [{**e, **({"rubric": [items[(exercise, str(n))] for n in e["items"] if (exercise, str(n)) in items]}
                     if e.get("items") else {})}
            for e in data.get("review", [])
            if isinstance(e, dict) and (str(e.get("student")), str(e.get("exercise"))) == (student, exercise)]
