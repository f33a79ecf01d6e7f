"""Kata mode: redo an exercise from a blank stub, timed, with a fresh variant, on a spaced-repetition schedule.

`grade kata ex05` opens attempt K in <workspace>/practice/<name>/attempt-K/ (the stub and statement rendered
from a draw of the exercise's variants: the failed one again after a failure, else one other than the last
attempt's); the learner's solved file and progress stay as they are. An attempt still open is never replaced: `grade
kata` resumes it, `--give-up` closes it. `grade today` offers the attempt open, the katas due, then new ones among
the exercises of the workspace's tracks the learner has finished, and when a few days went by with nothing due, the
kata due soonest, early.

The timer counts active time: the time from the start to the first full score, less the breaks. The signs of work
are the start, each grading, hint and save of the attempt's file (seen by its modification time); a gap of more than
BREAK_S between two of them is a break (the learner was away: overnight, a meeting) and counts nothing, however
often or seldom they saved. Each attempt keeps its gradings, hints and active time; a pass or an attempt closed
after a grading is one review of the kata's FSRS card (the `fsrs` package), rated from those signals; after a
failure the card comes back within FAILED_BACK.

A pass whose code is the same as the learner's own (an earlier passing attempt's, their solved file of the
exercise) or the reference solution's (names, layout, no-op lines and unused helpers aside: grader/learner/same_code.py)
is judged by the time it took: typed anew from memory, in at least the time typing its bodies takes at
TYPING_CHARS_PER_MIN, it is a pass like any other (knowing it by heart is the point of a kata); in less, it was
pasted: a review rated hard, never a clean pass or a best time. An attempt closed before any grading is no attempt:
it counts nowhere.

The state is one JSON file in the workspace, versioned, kept by the learner's one store (grader/learner/store.py):
every change re-reads it under an exclusive lock and replaces it atomically, so a crash never leaves half a file and
two processes never lose each other's change; a file that is not JSON is kept aside, never overwritten.
The clock is TORCH_KATAS_NOW's (an ISO time) when it is set, so that a month of katas can be played in a minute
(README, "Katas"; tests/test_kata.py). Never imports torch.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from grader.course import stub_text, variants
from grader.course.exercises import Exercise
from grader.judge.result import Result
from grader.learner.same_code import fingerprint, interface, size
from grader.learner.store import Corrupt, Store
from grader.text import Text, verbatim

STATE_FILE = ".torch-katas-kata.json"
VERSION = 3  # 1: "seconds" from the start to the pass, however long the learner was away; 2: a gap over 5 minutes
# between two signs of work counted 5 minutes (a 20-minute sitting with one save: 5:00)
PRACTICE_DIR = "practice"
NOW_ENV = "TORCH_KATAS_NOW"
NEW_PER_DAY = 2
MINUTES_BY_DIFFICULTY = {1: 5, 2: 10, 3: 20}  # a first kata's estimate, before the learner has a time of their own
BREAK_S = 45 * 60  # a longer gap between two signs of work (start, grading, hint, save) is a break: it counts nothing
MAX_ACTIVE_S = 2 * 3600  # a version-1 pass's time, from its start, is taken as this at most (its breaks are unknown)
TYPING_CHARS_PER_MIN = 200  # a brisk typist's pace: a pass of known code in less time than this takes was pasted
FAILED_BACK = timedelta(days=1)  # a failed kata is due again within this
EARLY_AFTER_DAYS = 2  # `grade today` offers a kata early after this many days without one due or done
AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4  # fsrs.Rating's values
RATING_NAMES = {AGAIN: "again", HARD: "hard", GOOD: "good", EASY: "easy"}


class KataError(ValueError):
    """A kata command that cannot run (no attempt open, a state file from a newer version); raised with a Text."""


class AttemptOpen(KataError):
    """`grade kata` for an exercise whose attempt is still open: resumed, never replaced (`attempt`: that one)."""

    def __init__(self, message, attempt: dict):
        super().__init__(message)
        self.attempt = attempt


def now() -> datetime:
    """The current time (UTC), or TORCH_KATAS_NOW's."""
    fake = os.environ.get(NOW_ENV)
    if fake:
        moment = datetime.fromisoformat(fake)
        return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return datetime.now(timezone.utc)


def parse_time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def at(text: str) -> datetime:
    """A time the state always has (an attempt's start, a review's), read back."""
    return datetime.fromisoformat(text)


def clock(seconds: float | None) -> str:
    """4:12, or 1:02:03."""
    if seconds is None:
        return "-"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def ordinal(n: int, lang: str) -> str:
    if lang == "zh":
        return f"第 {n} 次"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# -- the state file -------------------------------------------------------------------------------

class State:
    """The kata state of a workspace: {"version": 3, "katas": {exercise id: {"attempts": [...], "card": {...},
    "reviews": [...]}}}; a file of an older version is read as this one (`upgraded`). Read and changed through the
    learner's one store (grader/learner/store.py)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.store = Store(self.root / STATE_FILE, lambda: {"version": VERSION, "katas": {}}, self._checked)
        self.path = self.store.path

    def _checked(self, data) -> dict:
        if not isinstance(data, dict):
            raise Corrupt()
        if isinstance(data.get("version"), int) and data["version"] > VERSION:
            raise KataError(Text("{path} was written by a newer torch-katas (version {version}): upgrade",
                                 path=verbatim(self.path), version=data["version"]))
        if not well_formed(data):
            raise KataError(Text("{path} is not a kata state file: move it away to start afresh",
                                 path=verbatim(self.path)))
        return upgraded(data)

    def load(self) -> dict:
        return self.store.read()

    @contextlib.contextmanager
    def change(self):
        """Yield the state, read afresh under the store's lock; written back atomically afterwards."""
        with self.store.change() as data:
            yield data
            data["version"] = VERSION

    def kata(self, exercise: Exercise) -> dict:
        return self.load()["katas"].get(exercise.id, {})


ATTEMPT_FIELDS = {"n": int, "started": str, "folder": str, "file": str, "variant": dict, "gradings": int,
                  "hints": int}
TIMED = {1: "seconds", 2: "active_s", 3: "active_s"}  # a passed attempt's time, by version


def well_formed(data) -> bool:
    """Whether `data` has the shape this module writes (the file is the learner's: it may have been edited)."""
    try:
        if not isinstance(data, dict) or not isinstance(data["katas"], dict) \
                or not isinstance(data.get("version"), int):
            return False
        for kata in data["katas"].values():
            for attempt in kata["attempts"]:
                if not all(isinstance(attempt.get(k), t) for k, t in ATTEMPT_FIELDS.items()):
                    return False
                parse_time(attempt["started"])
                parse_time(attempt.get("last_active"))
                if attempt.get("passed") and not (parse_time(attempt["passed"]) and isinstance(
                        attempt.get(TIMED.get(data["version"], "active_s")), (int, float))):
                    return False
            for review in kata.get("reviews", []):
                parse_time(review["at"])
            card = kata.get("card")
            if card is not None:
                parse_time(card["due"])
                if not isinstance(card["state"], int) or not all(isinstance(card.get(k), (int, float, type(None)))
                                                                 for k in ("stability", "difficulty")):
                    return False
        return True
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def upgraded(data: dict) -> dict:
    """A state of an older version as this one. Version 1: a pass's time from the start, however long the learner
    was away, becomes its active time, at most MAX_ACTIVE_S (the breaks are not known any more); the last sign of
    work of an open attempt is its start. Version 2 counted 5 minutes at most between two signs of work: an attempt
    whose start and last sign of work lie within BREAK_S of each other had no break, so its time is that span (a
    20-minute sitting with one save, recorded 5:00, is 20:00); a longer one keeps its time (the gaps are unknown)."""
    if data["version"] == 1:
        for kata in data["katas"].values():
            for attempt in kata["attempts"]:
                seconds = attempt.pop("seconds", None)
                attempt["active_s"] = min(float(seconds), MAX_ACTIVE_S) if attempt.get("passed") else 0.0
                attempt["last_active"] = attempt.get("passed") or attempt["started"]
    elif data["version"] == 2:
        for kata in data["katas"].values():
            for attempt in kata["attempts"]:
                span = (at(attempt.get("last_active") or attempt["started"]) - at(attempt["started"])).total_seconds()
                if 0 <= span <= BREAK_S:
                    attempt["active_s"] = max(float(attempt.get("active_s") or 0.0), span)
    data["version"] = VERSION
    return data


def _kata(data: dict, exercise: Exercise) -> dict:
    return data["katas"].setdefault(exercise.id, {"attempts": [], "reviews": []})


def open_attempt(kata: dict) -> dict | None:
    """The latest attempt, if it is neither passed nor closed."""
    last = kata.get("attempts", [])[-1:] or [None]
    attempt = last[0]
    return attempt if attempt and not attempt.get("passed") and not attempt.get("closed") else None


def latest_attempt(kata: dict) -> dict | None:
    return (kata.get("attempts") or [None])[-1]


def counted(kata: dict) -> list[dict]:
    """The attempts that count: those graded at least once (an attempt closed before any grading is none)."""
    return [a for a in kata.get("attempts", []) if a["gradings"] or a.get("passed")]


def passes(kata: dict) -> list[dict]:
    return [a for a in kata.get("attempts", []) if a.get("passed")]


def timed_passes(kata: dict) -> list[dict]:
    """The passes that count as times: not an earlier answer or the reference pasted (`copy_of`)."""
    return [a for a in passes(kata) if not a.get("copy_of")]


def best_time(kata: dict, before: int | None = None) -> float | None:
    """The fastest pass in active time (of the attempts numbered below `before`), pasted answers left out."""
    times = [a["active_s"] for a in timed_passes(kata) if before is None or a["n"] < before]
    return min(times, default=None)


def clean_passes(kata: dict) -> int:
    """Passes without a hint, pasted answers left out."""
    return sum(1 for a in timed_passes(kata) if not a["hints"])


# -- active time --------------------------------------------------------------------------------------

def active_until(attempt: dict, when: datetime, saved: datetime | None = None) -> float:
    """The attempt's active time at `when`, had it a sign of work then (and a save of its file at `saved`, counted
    between the last sign of work and `when` only): each gap since the last sign of work counts whole, but one over
    BREAK_S, a break, counts nothing."""
    active, last = attempt["active_s"], at(attempt["last_active"])
    for moment in sorted(m for m in (saved, when) if m is not None and last < m <= when):
        gap = (moment - last).total_seconds()
        active += gap if gap <= BREAK_S else 0.0
        last = moment
    return active


def worked(attempt: dict, when: datetime, saved: datetime | None = None) -> None:
    """Count a sign of work at `when` (a grading, a hint; `saved`: the file's last save before it) in the open
    attempt's active time."""
    if attempt.get("passed") or attempt.get("closed"):
        return
    attempt["active_s"] = active_until(attempt, when, saved)
    attempt["last_active"] = max(at(attempt["last_active"]), when).isoformat()


def saved_at(root: Path, attempt: dict) -> datetime | None:
    """When the attempt's file was last saved (None when it cannot be read)."""
    try:
        return datetime.fromtimestamp(attempt_file(root, attempt).stat().st_mtime, timezone.utc)
    except (OSError, ValueError, OverflowError):
        return None


# -- scheduling (FSRS) ------------------------------------------------------------------------------

def scheduler():
    """Katas are reviewed in days, never minutes: no learning steps; no random fuzz (reproducible)."""
    from fsrs import Scheduler

    return Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def rating(passed: bool, seconds: float | None, best: float | None, hints: int, gradings: int) -> int:
    """An FSRS rating from objective signals: not passed -> again; hints used -> hard; slower than twice the
    best or more than 4 gradings -> hard; the best time (or better) within 2 gradings -> easy; else good."""
    if not passed:
        return AGAIN
    if hints:
        return HARD
    if best is None or seconds is None:
        return GOOD if gradings <= 4 else HARD
    if seconds > 2 * best or gradings > 4:
        return HARD
    if seconds <= best and gradings <= 2:
        return EASY
    return GOOD


def review(kata: dict, grade: int, when: datetime) -> None:
    """One review of the kata's card, rated `grade`, at `when`."""
    from fsrs import Card, Rating

    card = Card.from_dict(kata["card"]) if kata.get("card") else Card(due=when)
    card, _ = scheduler().review_card(card, Rating(grade), review_datetime=when)
    if grade == AGAIN:
        card.due = min(card.due, when + FAILED_BACK)
    kata["card"] = card.to_dict()
    kata.setdefault("reviews", []).append({"at": when.isoformat(), "rating": grade, "due": card.due.isoformat()})


def due_date(kata: dict) -> datetime | None:
    return parse_time(kata["card"]["due"]) if kata.get("card") else None


def retention(kata: dict, when: datetime) -> float | None:
    """The probability of recalling the kata now, by FSRS (None before its first review). After a failure, FSRS
    would say 100 % (the card was just reviewed): the learner last recalled it at their last pass, so the time counts
    from there, with the stability the failure left (lower than before it); never passed, 0."""
    if not kata.get("card"):
        return None
    from fsrs import Card

    card = Card.from_dict(kata["card"])
    reviews = kata.get("reviews", [])
    if reviews and reviews[-1]["rating"] == AGAIN:
        recalled = [r for r in reviews if r["rating"] != AGAIN]
        if not recalled:
            return 0.0
        card.last_review = at(recalled[-1]["at"])
    return scheduler().get_card_retrievability(card, when)


# -- attempts -----------------------------------------------------------------------------------------

def practice_folder(root: Path, exercise: Exercise, n: int) -> Path:
    return root / PRACTICE_DIR / exercise.name / f"attempt-{n}"


def start(root: Path, exercise: Exercise, *, lang: str = "en", notebook: bool = False,
          rng: random.Random | None = None) -> dict:
    """Open a new attempt: draw the variant the last attempt that counts failed, else one other than the last one;
    write the blank stub (or notebook) and statement in a fresh practice folder. Return the attempt. AttemptOpen
    while the last attempt is open: it is never replaced."""
    rng = rng or random.Random()
    when = now()
    state = State(root)
    with state.change() as data:
        kata = _kata(data, exercise)
        still_open = open_attempt(kata)
        if still_open is not None:
            raise AttemptOpen(Text("Attempt {n} of {ex} is still open, as you left it: {path}. `grade kata {ex} "
                                   "--give-up` closes it (once graded, it counts as forgotten).",
                                   n=still_open["n"], ex=exercise.id, path=verbatim(attempt_file(root, still_open))),
                              dict(still_open))
        last, graded = latest_attempt(kata), counted(kata)[-1:]
        n = (last["n"] if last else 0) + 1
        failed = variants.same_draw(exercise, graded[0]["variant"]) if graded and failed_attempt(graded[0]) else None
        draw = failed or variants.draw(exercise, rng, avoid=last.get("variant") if last else None)
        folder = practice_folder(root, exercise, n)
        stub = folder / exercise.stub.name
        folder.mkdir(parents=True, exist_ok=True)
        stub.write_text(stub_text.stub(exercise, lang, draw), encoding="utf-8")
        for language, name in (("en", "README.md"), ("zh", "README.zh.md")):
            if (exercise.folder / name).exists() or variants.template_of(exercise.folder / name).exists():
                (folder / name).write_text(variants.statement(exercise, draw, language), encoding="utf-8")
        file = stub
        if notebook:
            from grader.course.notebook_writer import write_notebook

            file = write_notebook(exercise, stub.read_text(encoding="utf-8"), folder / f"{exercise.name}.ipynb",
                                  lang,
                                  statement=variants.statement(exercise, draw, lang))
            stub.unlink()
        attempt = {"n": n, "started": when.isoformat(), "folder": str(folder.relative_to(root)), "file": file.name,
                   "variant": draw, "gradings": 0, "hints": 0, "best_score": 0.0, "passed": None, "active_s": 0.0,
                   "last_active": when.isoformat(), "rating": None, "closed": None, "copy_of": None,
                   "same_as": None}
        kata["attempts"].append(attempt)
    return attempt


def failed_attempt(attempt: dict) -> bool:
    """Closed after a grading without a pass: a review 'again'."""
    return bool(attempt.get("closed") and attempt["gradings"] and not attempt.get("passed"))


def close(kata: dict, when: datetime) -> dict | None:
    """Abandon the open attempt: graded and not passed, it counts as a review 'again'; never graded, it counts
    for nothing. Return it (None if none was open)."""
    attempt = open_attempt(kata)
    if attempt is None:
        return None
    attempt["closed"] = when.isoformat()
    if attempt["gradings"]:
        attempt["rating"] = AGAIN
        review(kata, AGAIN, when)
    return attempt


def give_up(root: Path, exercise: Exercise) -> dict | None:
    with State(root).change() as data:
        return close(_kata(data, exercise), now())


ATTEMPT_DIR = re.compile(r"attempt-(\d+)")


def attempt_of(exercise: Exercise, path: Path, root: Path | None = None) -> tuple[Path, dict] | None:
    """(workspace, attempt) when `path` is the file of one of the exercise's kata attempts; else None."""
    path = Path(path).resolve()
    folder = path.parent
    match = ATTEMPT_DIR.fullmatch(folder.name)
    if not match or folder.parent.name != exercise.name or folder.parent.parent.name != PRACTICE_DIR:
        return None
    workspace = root or folder.parent.parent.parent
    try:
        kata = State(workspace).kata(exercise)
    except KataError:
        return None
    attempt = next((a for a in kata.get("attempts", []) if a["n"] == int(match.group(1))), None)
    return (workspace, attempt) if attempt else None


def usable(exercise: Exercise, attempt: dict) -> dict:
    """`attempt` with its draw as the exercise has it now (its values' words may have changed since it began, not
    their names); KataError if the exercise has no such draw any more (an edited state file, variants removed)."""
    draw = variants.same_draw(exercise, attempt["variant"])
    if draw is None:
        raise KataError(Text("attempt {n} of {ex} was drawn from variants the exercise no longer has: "
                             "`grade kata {ex} --give-up` closes it, then `grade kata {ex}` starts a new one",
                             n=attempt["n"], ex=exercise.id))
    return {**attempt, "variant": draw}


def hints_asked(root: Path, exercise: Exercise, n: int) -> int:
    """How many hints attempt `n` of the exercise's kata has asked for so far."""
    return next((a["hints"] for a in State(root).kata(exercise).get("attempts", []) if a["n"] == n), 0)


def current(root: Path, exercise: Exercise) -> dict | None:
    """The latest attempt of the exercise's kata (None before the first)."""
    return latest_attempt(State(root).kata(exercise))


def attempt_file(root: Path, attempt: dict) -> Path:
    return root / attempt["folder"] / attempt["file"]


def record(root: Path, exercise: Exercise, attempt_n: int, result: Result, code: str | None = None) -> dict:
    """Count a grading of attempt `attempt_n` (`code`: what was graded); at its first full score stop its timer and
    review the card: a review rated hard when `code` is the same as an earlier passing attempt's or the reference
    solution's. Return {"attempt", "passed_now", "best_before", "best", "clean", "due"}: what the pass line says."""
    when = now()
    full = result.full and not result.grader_failure
    with State(root).change() as data:
        kata = _kata(data, exercise)
        attempt = next(a for a in kata["attempts"] if a["n"] == attempt_n)
        worked(attempt, when, saved_at(root, attempt))
        attempt["gradings"] += 1
        attempt["best_score"] = max(attempt["best_score"], result.score)
        attempt["max_score"] = result.max_score
        passed_now = full and not attempt["passed"] and not attempt["closed"]
        best_before = best_time(kata, before=attempt_n)
        if passed_now:
            attempt["passed"] = when.isoformat()
            asked = interface(stub_text.stub(exercise, "en", attempt["variant"]))
            attempt["fingerprint"] = fingerprint(code, asked) if code is not None else None
            attempt["same_as"] = same_as(root, exercise, kata, attempt, asked)
            attempt["copy_of"] = attempt["same_as"] if attempt["same_as"] is not None and not typed_anew(
                attempt, size(code or "", asked)) else None
            attempt["rating"] = HARD if attempt["copy_of"] else rating(
                True, attempt["active_s"], best_before, attempt["hints"], attempt["gradings"])
            review(kata, attempt["rating"], when)
        summary = {"attempt": dict(attempt), "passed_now": passed_now, "best_before": best_before,
                   "best": best_time(kata), "clean": clean_passes(kata),
                   "due": kata["card"]["due"] if kata.get("card") else None}
    return summary


def typed_anew(attempt: dict, chars: int) -> bool:
    """Whether the attempt's active time is enough to have typed `chars` characters at TYPING_CHARS_PER_MIN."""
    return attempt["active_s"] >= chars / TYPING_CHARS_PER_MIN * 60


def same_as(root: Path, exercise: Exercise, kata: dict, attempt: dict, asked: set[str]) -> str | int | None:
    """What the passing attempt's code (`asked`: the names its stub defines) is the same as: an earlier passing
    attempt (the latest one's number), the learner's own file of the exercise ("own file"), the reference solution
    ("reference", of any draw); None when none, or when its code has no fingerprint."""
    mine = attempt.get("fingerprint")
    if mine is None:
        return None
    for earlier in reversed(passes(kata)):
        if earlier["n"] != attempt["n"] and file_fingerprint(attempt_file(root, earlier), asked) == mine:
            return earlier["n"]
    if file_fingerprint(root / "exercises" / exercise.name / exercise.stub.name, asked) == mine:
        return "own file"
    if exercise.solution.is_file():
        try:
            references = {fingerprint(variants.rendered(exercise.solution, d), asked)
                          for d in variants.all_draws(exercise)}
        except (OSError, variants.VariantError):
            references = set()
        if mine in references:
            return "reference"
    return None


def file_fingerprint(path: Path, asked: set[str]) -> str | None:
    """The fingerprint of a file of the learner's (.py or notebook) as it is now; None when it cannot be read."""
    from grader.sandbox.source import SubmissionError, load_source

    try:
        source = load_source(path)
    except SubmissionError:
        return None
    return fingerprint(source_code(source), asked)


def source_code(source) -> str:
    """A submission's code as one text: a .py file, or a notebook's code cells one after the other."""
    return "\n\n".join(code for _, code in source.chunks)


def hint_used(root: Path, exercise: Exercise) -> dict | None:
    """Count a hint in the exercise's open attempt, if one is open, as a sign of work too; return the attempt (None
    without one)."""
    with State(root).change() as data:
        attempt = open_attempt(data["katas"].get(exercise.id, {}))
        if attempt is None:
            return None
        worked(attempt, now(), saved_at(root, attempt))
        attempt["hints"] += 1
        return dict(attempt)


# -- what to practise today -----------------------------------------------------------------------------

def estimate(exercise: Exercise, kata: dict) -> float:
    """Minutes a kata should take: the last timed pass's active time, else a guess from its difficulty."""
    done = timed_passes(kata)
    if done:
        return max(1.0, done[-1]["active_s"] / 60)
    return float(MINUTES_BY_DIFFICULTY.get(exercise.difficulty, 10))


def local_date(moment: datetime):
    return moment.astimezone().date()


def begun(kata: dict) -> list[dict]:
    """The attempts that count, and the open one: a kata is begun once one of them exists."""
    still_open = open_attempt(kata)
    return [a for a in kata.get("attempts", []) if a["gradings"] or a.get("passed") or a is still_open]


def today(root: Path, exercises: list[Exercise], finished: set[str], new_per_day: int = NEW_PER_DAY) -> dict:
    """{"open": [...], "due": [...], "new": [...], "early": [...], "minutes": total}: each item {exercise, kata,
    minutes, due}, of `exercises` only (the workspace's tracks).

    Open: an attempt started and not passed. Due: a card due today or before. New: exercises `finished` (their ids)
    never practised as katas, in teaching order, as many as today's allowance of new katas leaves (those first
    begun today count). Early: when there is none of these and no kata was due or done in the last EARLY_AFTER_DAYS
    days, the one due soonest (FSRS takes an early review into account)."""
    day = local_date(now())
    katas = State(root).load()["katas"]
    items: dict[str, list] = {"open": [], "due": [], "new": [], "early": []}
    started_today = sum(1 for k in katas.values() if begun(k) and local_date(at(begun(k)[0]["started"])) == day)
    allowance = max(0, new_per_day - started_today)
    for ex in exercises:
        kata = katas.get(ex.id, {})
        item = {"exercise": ex, "kata": kata, "minutes": estimate(ex, kata), "due": due_date(kata)}
        if open_attempt(kata):
            items["open"].append(item)
        elif item["due"] is not None and local_date(item["due"]) <= day:
            items["due"].append(item)
        elif ex.id in finished and not begun(kata) and len(items["new"]) < allowance:
            items["new"].append(item)
    items["due"].sort(key=lambda i: i["due"])
    if not (items["open"] or items["due"] or items["new"]):
        items["early"] = early(katas, exercises, day)
    items["minutes"] = sum(i["minutes"] for kind in ("open", "due", "new", "early") for i in items[kind])
    return items


def early(katas: dict, exercises: list[Exercise], day) -> list[dict]:
    """[the item of the kata due soonest] when none was due or practised in the last EARLY_AFTER_DAYS days; else []."""
    scheduled = [(due, ex) for ex in exercises if (due := due_date(katas.get(ex.id, {}))) is not None]
    if not scheduled:
        return []
    last = max(local_date(at(r["at"])) for ex in exercises for r in katas.get(ex.id, {}).get("reviews", []))
    if (day - last).days <= EARLY_AFTER_DAYS:
        return []
    due, ex = min(scheduled, key=lambda pair: pair[0])
    return [{"exercise": ex, "kata": katas[ex.id], "minutes": estimate(ex, katas[ex.id]), "due": due}]


HISTORY = ("n", "started", "passed", "active_s", "hints", "gradings", "rating", "variant", "best_score", "max_score",
           "copy_of", "same_as")


def summary_rows(root: Path, exercises: list[Exercise], lang: str = "en") -> list[dict]:
    """Per exercise with attempts that count: attempts, passes, hints, best time, last done, due, retention now, and
    the attempts' history (its title in `lang`)."""
    when = now()
    katas = State(root).load()["katas"]
    rows = []
    for ex in exercises:
        kata = katas.get(ex.id, {})
        attempts = counted(kata)
        if not attempts:
            continue
        last = max((a.get("passed") or a.get("closed") or a["last_active"] for a in attempts), default=None)
        rows.append({"exercise": ex.id, "title": ex.text("title", lang), "attempts": len(attempts),
                     "passes": len(passes(kata)), "hints": sum(a["hints"] for a in attempts),
                     "best_s": best_time(kata), "last": last,
                     "due": kata["card"]["due"] if kata.get("card") else None, "retention": retention(kata, when),
                     "history": [{k: a.get(k) for k in HISTORY} for a in attempts],
                     "reviews": kata.get("reviews", [])})
    return rows


def days_until(moment: datetime | None) -> int | None:
    if moment is None:
        return None
    return (local_date(moment) - local_date(now())).days


def in_days(moment, lang: str) -> str:
    """'today', 'tomorrow', 'in 6 days' (or 'overdue by 2 days') in `lang`."""
    from grader.text import say

    days = days_until(parse_time(moment) if isinstance(moment, str) else moment)
    if days is None:
        return "-"
    if days < 0:
        return say(lang, "overdue by {n} days", n=-days) if days < -1 else say(lang, "overdue since yesterday")
    if days == 0:
        return say(lang, "today")
    return say(lang, "tomorrow") if days == 1 else say(lang, "in {n} days", n=days)

