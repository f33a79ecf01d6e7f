"""What a grading was graded against, so a rerun knows what to regrade and a change of points never needs one.

A grading records its exercise's fingerprint: a hash of each thing that can change a check's verdict (the
checks module's source, the exercise's data files and the settings in exercise.toml that the checks run
under, the grader's version), and apart from them, of the checks' words (the messages of `fail`, `Text` and
`CheckFailed`, the checks' titles, docstrings). A rerun regrades the results whose fingerprint differs and says why;
when only the words changed, only the results whose feedback quotes them (a check that did not pass) are graded
again, the others keep their stored outcomes. Points are kept apart: every score is computed again from the stored
per-check outcomes and the current points (`rescore`), so a change of points alone regrades nothing; so are the
checks' titles, read again from the checks module. Never imports torch.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from dataclasses import replace
from pathlib import Path

from grader.version import __version__
from grader.course.exercises import Exercise, data_files
from grader.judge.result import Result
from grader.text import Text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PARTS = {"checks": "checks", "messages": "messages", "data": "data files", "settings": "time limit or settings",
         "grader": "grader"}
WORDS = ("fail", "Text", "CheckFailed")  # calls whose arguments are what a learner reads, never a verdict
GRADING_SETTINGS = ("time_limit", "device", "preload")  # exercise.toml keys that change how the checks run


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def checks_hash(path: Path) -> tuple[str, str]:
    """(the checks module as its syntax tree, with the points of each `@check(...)`, comments and the words a learner
    reads left out; those words): a hash of each. The raw bytes for both where it does not parse."""
    try:
        source = path.read_bytes()
    except OSError:
        return _hash(b""), _hash(b"")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _hash(source), _hash(source)
    words: list[str] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            _words([body[0].value], words)  # a docstring
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        if name == "check":
            node.keywords = [kw for kw in node.keywords if kw.arg != "points"]
            node.args = node.args[:1] + node.args[2:]  # the title and zh are now its first two
            _words([*node.args[:2], *(kw.value for kw in node.keywords if kw.arg in ("title", "zh"))], words)
        elif name in WORDS:
            _words([*node.args, *(kw.value for kw in node.keywords)], words)
    return _hash(ast.dump(tree).encode()), _hash("\0".join(words).encode())


def _words(nodes: list, into: list[str]) -> None:
    """Move the strings of `nodes` (and what they hold) into `into`, leaving "" in their place."""
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                into.append(sub.value)
                sub.value = ""


def verdict_hashes(exercise: Exercise) -> dict[str, str]:
    """A hash per part an exercise's verdicts depend on (PARTS), points left out."""
    data = b"".join(p.relative_to(exercise.folder).as_posix().encode() + b"\0" + p.read_bytes() + b"\0"
                    for p in data_files(exercise))
    try:
        meta = tomllib.loads((exercise.folder / "exercise.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        meta = {}
    settings = repr([meta.get(key) for key in GRADING_SETTINGS]).encode()
    checks, messages = checks_hash(exercise.checks)
    return {"checks": checks, "messages": messages, "data": _hash(data), "settings": _hash(settings),
            "grader": __version__}


def changed(recorded: dict | None, current: dict[str, str]) -> list[str]:
    """The parts that differ between a result's recorded fingerprint and the current one (all of them for a
    result graded before fingerprints were recorded)."""
    if not recorded:
        return ["checks"]
    return [part for part in PARTS if recorded.get(part) != current[part]]


def regrade(result: Result, parts: list[str]) -> bool:
    """Whether `result` must be graded again for the `parts` of its fingerprint that changed: when only the checks'
    words did, only if its feedback quotes them (a check that did not pass)."""
    if parts == ["messages"]:
        return any(not c.passed for c in result.checks)
    return bool(parts)


def why(exercise_id: str, parts: list[str]) -> str:
    """'hw1's checks changed', 'hw1's checks and data files changed', 'the grader's version changed'; for the words
    alone, why those results are graded again."""
    if parts == ["grader"]:
        return "the grader's version changed"
    if parts == ["messages"]:
        return f"{exercise_id}'s messages changed, which their feedback quotes (the others keep their outcomes)"
    names = [PARTS[p] for p in parts if p != "grader"]
    said = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{exercise_id}'s {said} changed"


def rescore(result: Result, exercise: Exercise, points: dict[str, float] | None = None) -> Result:
    """`result` scored with the exercise's current points (`points`: its check_points(), when already read): each
    passed check earns its current points, the maximum is the exercise's current total less its skipped checks.
    The stored outcomes are kept as they are; `result` itself is not changed."""
    if result.grader_failure:
        return result
    points = exercise.check_points() if points is None else points
    if not result.checks:
        return replace(result, max_score=exercise.points)
    titles = {c["id"]: Text(c["title"], c["zh"] or c["title"]) for c in exercise.declared_checks()
              if c["title"] != f"test_{c['id']}"}  # as written now (a title not written as a literal: as stored)
    checks = []
    for c in result.checks:
        # a parametrized check not overridden by its id: its function's points
        max_points = points.get(c.id, points.get(c.id.split("[")[0], c.max_points))
        checks.append(replace(c, max_points=max_points, points=max_points if c.passed else 0.0,
                              title=titles.get(c.id, c.title)))
    known = sum(c.max_points for c in checks if c.id != "unreported")
    checks = [replace(c, max_points=max(0.0, exercise.points - known)) if c.id == "unreported" else c for c in checks]
    skipped = sum(c.max_points for c in checks if c.outcome == "skipped")
    max_score = exercise.points - skipped
    score = 0.0 if result.status == "tampered" else min(sum(c.points for c in checks), max_score)
    return replace(result, checks=checks, score=round(score, 4), max_score=round(max_score, 4))
