"""The result of grading one submission: the one record every report renders (the terminal table, `--json`,
the HTML and Markdown feedback, JUnit, Gradescope's results.json, the gradebook). docs/results.md documents
each field; `grade --json` prints one, and `grade batch` appends one per line to results.jsonl.
"""

from __future__ import annotations

from typing import TypedDict

OUTCOMES = ("passed", "failed", "not_started", "skipped", "not_run")
STATUSES = ("graded", "error", "timeout", "crashed", "tampered")


class CheckResult(TypedDict, total=False):
    id: str  # the check's function name without test_ ("dw", "init_weights[Linear]")
    title: str  # in the asked language
    outcome: str  # one of OUTCOMES
    passed: bool
    points: float  # earned: max_points if passed, else 0
    max_points: float
    message: str  # what went wrong and the likely cause, in the asked language; "" when passed or not run
    key: str | None  # the diagnosed mistake ("sign", "zero-grad-missing"), None when none was named
    after: str  # present when it failed (or earned nothing) after a check it builds on did not pass: that check's id
    visibility: str  # "public", "hidden" or "after_due_date", as @check declares it
    messages: dict[str, str]  # grade validate only: the message in each language


class Result(TypedDict, total=False):
    exercise: str  # the exercise's id ("ex05", "hw1_backprop")
    name: str  # its folder name ("ex05_manual_backward")
    title: str
    submission: str  # the graded file
    status: str  # one of STATUSES
    score: float
    max_score: float  # the exercise's points, less the points of skipped checks
    checks: list[CheckResult]
    duration_s: float
    seed: int  # the seed of the checks' inputs: `--seed` reproduces the run
    message: str  # the grading's own message: why the file did not load, the tampering, a timeout...
    output: str  # the last 500 characters the learner's code printed
    notes: list[str]  # about the submission: skipped notebook cells, magics...
    curves: list[dict]  # what the checks recorded for the HTML report's charts
    isolation: list[str]  # the OS isolation layers the sandbox applied
    grader_failure: bool  # present and true when the grader itself failed: not a grade (status "error")
    student: str  # batch only: the student's folder (or LMS id)
    sha256: str | None  # batch only: of the graded file, so a rerun skips what is graded
    fingerprint: dict[str, str]  # batch only: what it was graded against (grader/fingerprint.py)
    needs_look: str  # batch only: why the file could not be read (no score until the teacher decides)
    late: bool  # batch only: the LMS flagged it late
    submitted: str  # batch only: the submission time the download stored (ISO 8601)
    hidden_points: float  # in a release: the points of the checks that run when the teacher grades
