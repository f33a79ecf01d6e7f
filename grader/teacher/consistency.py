"""Equal code, equal score: the seed each exercise of a batch is graded with, and the checks whose outcome differs
between students who handed in the same code.

A batch grades every submission of an exercise with one seed (drawn once, kept in batch.json, `--seed` overrides
it), so two students with the same code get the same inputs and the same verdicts. What can still tell them
apart (a check that depends on the clock, learner code that draws its own random numbers, a rerun under another
seed) is flagged on the class page: submissions whose code is the same once comments, docstrings and layout are
left out (`code_hash`) and where a check passed for one and not for the other.

Runs in: the `grade` process of a batch or a review. No torch.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
from collections import defaultdict
from pathlib import Path

from grader.judge.result import CheckResult, Result
from grader.sandbox.guarded_parse import Unparsed, parse
from grader.sandbox.source import SubmissionError, load_source
from grader.text import Text

STATE_FILE = "batch.json"  # grader/teacher/review.py writes it: the seeds are one of its fields


def exercise_seeds(out: Path, exercises: set[str], given: int | None) -> dict[str, int]:
    """The seeds a previous run of this batch recorded, with the seed of each exercise in `exercises`: `given`
    (--seed) for all, else the recorded one, else a new one."""
    recorded: dict[str, int] = {}
    path = Path(out) / STATE_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")).get("seeds", {}) if path.is_file() else {}
    except (OSError, ValueError):
        pass
    draw = random.SystemRandom()
    return {**recorded, **{ex: given if given is not None else recorded.get(ex, draw.randrange(2**31))
                           for ex in sorted(exercises)}}


def code_hash(path: Path) -> tuple[str | None, Text | None]:
    """(a hash of the code at `path` (a .py or a notebook's cells) with comments, docstrings and layout left out,
    why it was left unread): no hash for a file that cannot be read, nor for code too large or too deep to parse
    here (grader/sandbox/guarded_parse.py), which is that reason."""
    try:
        chunks = [code for _, code in load_source(path).chunks]
    except SubmissionError:
        return None, None
    digest = hashlib.sha256()
    for code in chunks:
        tree = parse(code)
        if isinstance(tree, Unparsed):
            if tree.refused:
                return None, tree.reason
            digest.update(" ".join(code.split()).encode())  # a syntax error: compared as text
            continue
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]  # a docstring
        digest.update(ast.dump(tree).encode())
    return digest.hexdigest()[:16], None


def differing_checks(results: list[Result], lang: str = "en") -> list[dict]:
    """Each check whose outcome differs between submissions of an exercise with the same code: {exercise, check,
    title, outcomes: {outcome: [students]}, seeds}, for a person to look at (a teacher's override is no such
    difference)."""
    same: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for r in results:
        if r.code_hash and not r.grader_failure and r.checks:
            same[(r.exercise, r.code_hash)].append(r)
    found = []
    for (exercise, _), group in sorted(same.items()):
        if len(group) < 2:
            continue
        for first in group[0].checks:
            outcomes: dict[str, list[str]] = defaultdict(list)
            for r in group:
                mine = next((c for c in r.checks if c.id == first.id), None)
                if mine is None or not mine.reviewed:
                    outcomes[own_outcome(mine) if mine else "missing"].append(r.student or "")
            if len(outcomes) > 1:
                found.append({"exercise": exercise, "check": first.id, "title": first.title.render(lang),
                              "outcomes": dict(sorted(outcomes.items())),
                              "seeds": sorted({r.seed for r in group if r.seed is not None})})
    return found


def own_outcome(check: CheckResult) -> str:
    """A check's verdict on its own: a check that failed only because one it builds on did is no difference of its
    own (that one's is)."""
    return check.alone["outcome"] if check.alone else check.outcome


def seeds_used(results: list[Result]) -> dict[str, list[int]]:
    """The seeds each exercise's current results were graded with (one, unless reruns used another)."""
    seeds: dict[str, set[int]] = defaultdict(set)
    for r in results:
        if r.seed is not None and not r.grader_failure:
            seeds[r.exercise].add(r.seed)
    return {exercise: sorted(used) for exercise, used in sorted(seeds.items())}
