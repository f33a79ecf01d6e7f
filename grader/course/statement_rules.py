"""The statement-to-check trace: every rule of "What the checks verify" names the checks that verify it.

A rule is a bullet of that section of README.md (and of "检查内容" in README.zh.md), with its continuation
lines and sub-bullets; it ends with a marker naming check ids (function names without `test_`), which
Markdown does not render (and `grade show` leaves out):

    - `accuracy` is a Python float, the argmax over dim 1 <!-- checks: accuracy -->

`grade validate` fails a rule with no marker, a marker naming no such check, and a check no rule names
(in a statement that has the section).
"""

from __future__ import annotations

import ast
import re

from grader.course.exercises import Exercise
from grader.text import Text, verbatim

HEADINGS = {"README.md": "## What the checks verify", "README.zh.md": "## 检查内容"}
MARKER = re.compile(r"<!--\s*checks:\s*([^>]*?)\s*-->")


def rules(statement: str, heading: str) -> list[tuple[str, list[str]]] | None:
    """(first line of the rule, check ids its marker names) for each top-level bullet of the section
    under `heading`; None if the statement has no such section."""
    lines = statement.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    except StopIteration:
        return None
    found: list[tuple[str, list[str]]] = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("- "):
            found.append((line[2:].strip(), []))
        elif not (line.startswith(" ") and found):
            continue  # prose around the rules
        for match in MARKER.finditer(line):
            found[-1][1].extend(i.strip() for i in match.group(1).split(",") if i.strip())
    return found


def check_ids(exercise: Exercise) -> set[str]:
    """The checks of `exercise` as the trace names them: its `test_` functions without the prefix (a
    parametrized check is one name)."""
    tree = ast.parse(exercise.checks.read_text(encoding="utf-8"))
    return {node.name.removeprefix("test_") for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def trace_problems(exercise: Exercise) -> list[Text]:
    """What breaks the trace of `exercise`'s statements to its checks; empty when every rule names a check
    and every check is named."""
    ids = check_ids(exercise)
    problems = []
    for file, heading in HEADINGS.items():
        path = exercise.folder / file
        if not path.is_file():
            continue
        found = rules(path.read_text(encoding="utf-8"), heading)
        if found is None:
            continue  # a statement without the section promises no rules
        named = set()
        for rule, checks in found:
            quoted_rule = verbatim(rule[:60])
            if not checks:
                problems.append(Text("{file}: the rule '{rule}' names no check (<!-- checks: id, ... -->)",
                                     "{file}：规则 '{rule}' 没有指出任何检查（<!-- checks: id, ... -->）",
                                     file=file, rule=quoted_rule))
            for unknown in sorted(set(checks) - ids):
                problems.append(Text("{file}: the rule '{rule}' names '{unknown}', which is no check",
                                     "{file}：规则 '{rule}' 指出的 '{unknown}' 不是一个检查", file=file,
                                     rule=quoted_rule, unknown=verbatim(unknown)))
            named.update(checks)
        for missing in sorted(ids - named):
            problems.append(Text("{file}: no rule names the check '{missing}'", "{file}：没有规则指出检查 '{missing}'",
                                 file=file, missing=missing))
    return problems
