"""The result of grading one submission: the one record every report renders (the terminal table, `--json`,
the HTML and Markdown feedback, JUnit, Gradescope's results.json, the gradebook). docs/results.md documents
each field and its JSON; `grade --json` prints one, and `grade batch` appends one per line to results.jsonl.

What the grader itself says (a grading that stopped, a note on a notebook) is held as a `Text` and rendered in
the reader's language at the edge; what the judge sends is already in the language the grading asked for.
Plain dataclasses: the record is small, its JSON is written by hand to stay exactly docs/results.md's, and
nothing here needs validation beyond what `judge.check_stream` does on the judge's events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grader.text import Text

OUTCOMES = ("passed", "failed", "not_started", "skipped", "not_run")
STATUSES = ("graded", "error", "timeout", "crashed", "tampered")
MARKS = {"passed": "✓", "failed": "✗", "not_started": "·", "skipped": "–", "not_run": "○"}  # one per outcome
KIND_TEXT = {  # Result.outcome: what a teacher counts
    "full": Text("full", "满分"), "partial": Text("partial", "部分得分"), "zero": Text("zero", "零分"),
    "error": Text("error", "出错"), "timeout": Text("timeout", "超时"), "crashed": Text("crashed", "崩溃"),
    "tampered": Text("tampered", "篡改"), "grader error": Text("grader error", "评分器出错"),
    "needs a look": Text("needs a look", "需要查看"),
}


def text(value: Any) -> Text:
    """A field's text: a Text as it is, a string read back from JSON as the same words in every language."""
    return value if isinstance(value, Text) else Text(str(value or ""), str(value or ""))


def _message(data: dict) -> Text:
    """A check's message read back from JSON: in each language where the grading gave them (`translations`: a batch
    of a course in two languages), else its one text in every language."""
    said = data.get("translations")
    if isinstance(said, dict) and isinstance(said.get("en"), str):
        return Text(said["en"], *[said["zh"]] if isinstance(said.get("zh"), str) else [])
    return text(data.get("message", ""))


@dataclass
class CheckResult:
    id: str  # the check's function name without test_ ("dw", "init_weights[Linear]")
    title: Text
    outcome: str  # one of OUTCOMES
    points: float  # earned: max_points if passed, else 0
    max_points: float
    message: Text = field(default_factory=lambda: text(""))  # what went wrong and the likely cause
    key: str | None = None  # the diagnosed mistake ("sign", "zero-grad-missing"), None when none was named
    after: str | None = None  # the check it builds on, when it failed (or earned nothing) after that one did not pass
    depends: list[str] = field(default_factory=list)  # the checks it builds on (`@check(depends=...)`)
    alone: dict | None = None  # with `after`: its own verdict {outcome, message, key}, which a review may give back
    visibility: str = "hidden"  # "public", "hidden" or "after_due_date", as @check declares it
    messages: dict[str, str] | None = None  # grade validate only: the message in each language, values masked
    spliced: dict[str, list[str]] | None = None  # grade validate only: per language, sentences spliced into a clause
    reviewed: bool = False  # the gradebook's outputs only: the teacher's review overrode its points

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def to_json(self, lang: str = "en") -> dict:
        data = {"id": self.id, "title": self.title.render(lang), "outcome": self.outcome, "passed": self.passed,
                "points": self.points, "max_points": self.max_points, "message": self.message.render(lang),
                "key": self.key, "visibility": self.visibility}
        if self.depends:
            data["depends"] = self.depends
        if self.after:
            data["after"] = self.after
        if self.alone is not None:
            data["alone"] = self.alone
        if self.reviewed:
            data["reviewed"] = True
        if not self.message.values and len(set(self.message.templates.values())) > 1:  # a batch in two languages
            data["translations"] = dict(self.message.templates)
        if self.messages is not None:
            data["messages"] = self.messages
        if self.spliced is not None:
            data["spliced"] = self.spliced
        return data

    @classmethod
    def from_json(cls, data: dict) -> CheckResult:
        return cls(id=data["id"], title=text(data.get("title", data["id"])), outcome=data["outcome"],
                   points=float(data["points"]), max_points=float(data["max_points"]),
                   message=_message(data), key=data.get("key"), after=data.get("after"),
                   depends=list(data.get("depends", [])), alone=data.get("alone"),
                   visibility=data.get("visibility", "hidden"), messages=data.get("messages"),
                   spliced=data.get("spliced"), reviewed=bool(data.get("reviewed")))


@dataclass
class Result:
    exercise: str  # the exercise's id ("ex05", "hw1_backprop")
    name: str  # its folder name ("ex05_manual_backward")
    submission: str  # the graded file
    status: str  # one of STATUSES
    score: float
    max_score: float  # the exercise's points, less the points of skipped checks
    checks: list[CheckResult] = field(default_factory=list)
    title: Text = field(default_factory=lambda: text(""))
    duration_s: float = 0.0
    seed: int | None = None  # the seed of the checks' inputs (`--seed` reproduces the run); None: nothing ran
    message: Text = field(default_factory=lambda: text(""))  # the grading's own message: a load error, a timeout
    output: str = ""  # the last 500 characters the learner's code printed
    notes: list[Text] = field(default_factory=list)  # about the submission: skipped notebook cells, magics
    curves: list[dict] = field(default_factory=list)  # what the checks recorded for the HTML report's charts
    isolation: list[str] = field(default_factory=list)  # the OS isolation layers the sandbox applied
    flags: list[dict] = field(default_factory=list)  # banned routes seen in the source: for a person, never a score
    grader_failure: bool = False  # the grader itself failed: not a grade (status "error")
    student: str | None = None  # batch only: the student's folder (or LMS id)
    sha256: str | None = None  # batch only: of the graded file, so a rerun skips what is graded
    fingerprint: dict[str, str] | None = None  # batch only: what it was graded against (teacher/graded_against.py)
    code_hash: str | None = None  # batch only: of its code, comments and layout left out (teacher/consistency.py)
    needs_look: str | None = None  # batch only: why the file could not be read (no score until the teacher decides)
    unread: str | None = None  # batch only: why the trusted side left its code unread (too large or too deep to parse)
    late: bool = False  # batch only: the LMS flagged it late
    submitted: str | None = None  # batch only: the submission time the download stored (ISO 8601)
    hidden_points: float | None = None  # in a release: the points of the checks that run when the teacher grades
    late_work: dict | None = None  # the gradebook's outputs only: the late policy applied {late, days, penalty, due}
    review: dict | None = None  # the gradebook's outputs only: the teacher's review {comment, by, at, score, checks}
    lang: str = "en"  # the language its texts are written in by default (not in the JSON)

    @property
    def full(self) -> bool:
        """Graded, with every point of the checks that ran: the one definition of a full score (exit code 0, the next
        exercise, a solution). In a release, never for an exercise with no public check: nothing was checked."""
        return self.status == "graded" and self.score >= self.max_score and (self.max_score > 0
                                                                              or not self.hidden_points)

    @property
    def done(self) -> bool:
        """Full, with no hidden check left for the teacher's grading: the exercise is done ("done" in `grade list`)."""
        return self.full and not self.hidden_points

    @property
    def outcome(self) -> str:
        """What a teacher counts (a key of KIND_TEXT): full, partial or zero when graded, "needs a look" for a file
        that could not be read, else the status."""
        if self.grader_failure:
            return "grader error"
        if self.needs_look:
            return "needs a look"
        if self.status != "graded":
            return self.status
        return "full" if self.score >= self.max_score else "partial" if self.score > 0 else "zero"

    @property
    def skipped_points(self) -> float:
        return sum(c.max_points for c in self.checks if c.outcome == "skipped")

    def first_to_fix(self) -> CheckResult | None:
        """The first check that failed (not one that was skipped or did not run)."""
        return next((c for c in self.checks if c.outcome == "failed"), None)

    def to_json(self, lang: str | None = None) -> dict:
        """The JSON object of docs/results.md, its texts in `lang` (default: the grading's)."""
        lang = lang or self.lang
        data: dict[str, Any] = {
            "exercise": self.exercise, "name": self.name, "title": self.title.render(lang),
            "submission": self.submission, "status": self.status, "score": self.score, "max_score": self.max_score,
            "checks": [c.to_json(lang) for c in self.checks], "duration_s": self.duration_s, "seed": self.seed,
            "message": self.message.render(lang), "output": self.output,
            "notes": [n.render(lang) for n in self.notes], "curves": self.curves, "isolation": self.isolation,
        }
        if self.flags:
            data["flags"] = self.flags
        if self.grader_failure:
            data["grader_failure"] = True
        if self.student is not None:
            data["student"] = self.student
            data["sha256"] = self.sha256
        for name in ("fingerprint", "code_hash", "needs_look", "unread", "submitted", "hidden_points", "late_work",
                     "review"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.late:
            data["late"] = True
        return data

    @classmethod
    def from_json(cls, data: dict) -> Result:
        """A result read back (results.jsonl): its texts are the words written there."""
        return cls(exercise=data["exercise"], name=data.get("name", data["exercise"]),
                   submission=data.get("submission", ""), status=data["status"], score=float(data["score"]),
                   max_score=float(data["max_score"]), checks=[CheckResult.from_json(c) for c in data["checks"]],
                   title=text(data.get("title", "")), duration_s=float(data.get("duration_s", 0.0)),
                   seed=data.get("seed"), message=text(data.get("message", "")), output=data.get("output", ""),
                   notes=[text(n) for n in data.get("notes", [])], curves=list(data.get("curves", [])),
                   isolation=list(data.get("isolation", [])), flags=list(data.get("flags", [])),
                   grader_failure=bool(data.get("grader_failure")),
                   student=data.get("student"), sha256=data.get("sha256"), fingerprint=data.get("fingerprint"),
                   code_hash=data.get("code_hash"),
                   needs_look=data.get("needs_look"), unread=data.get("unread"), late=bool(data.get("late")),
                   submitted=data.get("submitted"),
                   hidden_points=data.get("hidden_points"), late_work=data.get("late_work"),
                   review=data.get("review"))


def blocked_text(title: Text | str, short: bool = False) -> Text:
    """The message of a check that passed on its own after a check it builds on (titled `title`) did not; `short`:
    a check before it in the table said so in full."""
    if short:
        return Text("Waits for “{check}” too (above).", "同样要等“{check}”通过（见上）。", check=title)
    return Text("“{check}” above does not pass, and this check builds on it: it earns its points once that one passes.",
                "上面的“{check}”没有通过，而这个检查依赖它：那个通过后，这个才得分。", check=title)


def blocked_failure(title: Text | str, own: Text | str, short: bool = False) -> Text:
    """The message of a check that failed (`own`: its message) after a check it builds on (`title`) did not pass;
    `short`: a check before it in the table said so in full."""
    if short:
        return Text("Fix “{check}” first (above). {text}", "请先修正“{check}”（见上）。{text}", check=title, text=own)
    return Text("“{check}” above fails too, and this check builds on it: fix that first. {text}",
                "上面的“{check}”也没有通过，而这个检查依赖它：请先修正它。{text}", check=title, text=own)


def error_result(student: str, exercise, message: str | Text, submission: str = "",
                 sha256: str | None = None) -> Result:
    """A result for a submission that could not be graded at all (unreadable, two candidates, missing)."""
    return Result(exercise=exercise.id, name=exercise.name, submission=submission, status="error", score=0.0,
                  max_score=exercise.points, title=Text(exercise.title, exercise.zh.get("title")),
                  message=Text.of(message), student=student, sha256=sha256)
