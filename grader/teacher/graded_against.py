"""What a grading was graded against, so a rerun knows what to regrade and a change of points never needs one.

A grading records its exercise's fingerprint: a hash of each thing that can change a check's verdict (the
checks module's source, the exercise's data files and the settings in exercise.toml that the checks run
under, the grader's version). A rerun regrades the results whose fingerprint differs and says why. Points are
kept apart: every score is computed again from the stored per-check outcomes and the current points
(`rescore`), so a change of points alone regrades nothing. Never imports torch.
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

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PARTS = {"checks": "checks", "data": "data files", "settings": "time limit or settings", "grader": "grader"}
GRADING_SETTINGS = ("time_limit", "device", "preload")  # exercise.toml keys that change how the checks run


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def checks_hash(path: Path) -> str:
    """The checks module as its syntax tree, with the points of each `@check(...)` left out (and comments,
    which change no verdict); the raw bytes where it does not parse."""
    try:
        source = path.read_bytes()
    except OSError:
        return _hash(b"")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _hash(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "check":
            node.keywords = [kw for kw in node.keywords if kw.arg != "points"]
            node.args = node.args[:1] + node.args[2:]
    return _hash(ast.dump(tree).encode())


def verdict_hashes(exercise: Exercise) -> dict[str, str]:
    """A hash per part an exercise's verdicts depend on (PARTS), points left out."""
    data = b"".join(p.relative_to(exercise.folder).as_posix().encode() + b"\0" + p.read_bytes() + b"\0"
                    for p in data_files(exercise))
    try:
        meta = tomllib.loads((exercise.folder / "exercise.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        meta = {}
    settings = repr([meta.get(key) for key in GRADING_SETTINGS]).encode()
    return {"checks": checks_hash(exercise.checks), "data": _hash(data), "settings": _hash(settings),
            "grader": __version__}


def changed(recorded: dict | None, current: dict[str, str]) -> list[str]:
    """The parts that differ between a result's recorded fingerprint and the current one (all of them for a
    result graded before fingerprints were recorded)."""
    if not recorded:
        return ["checks"]
    return [part for part in PARTS if recorded.get(part) != current[part]]


def why(exercise_id: str, parts: list[str]) -> str:
    """'hw1's checks changed', 'hw1's checks and data files changed', 'the grader's version changed'."""
    if parts == ["grader"]:
        return "the grader's version changed"
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
    checks = []
    for c in result.checks:
        # a parametrized check not overridden by its id: its function's points
        max_points = points.get(c.id, points.get(c.id.split("[")[0], c.max_points))
        checks.append(replace(c, max_points=max_points, points=max_points if c.passed else 0.0))
    known = sum(c.max_points for c in checks if c.id != "unreported")
    checks = [replace(c, max_points=max(0.0, exercise.points - known)) if c.id == "unreported" else c for c in checks]
    skipped = sum(c.max_points for c in checks if c.outcome == "skipped")
    max_score = exercise.points - skipped
    score = 0.0 if result.status == "tampered" else min(sum(c.points for c in checks), max_score)
    return replace(result, checks=checks, score=round(score, 4), max_score=round(max_score, 4))
