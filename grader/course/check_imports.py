"""What a course's check modules import: the check API only (grader.checking, grader.gradients, grader.devices),
as the import contracts hold the built-in checks to (pyproject.toml's `check-api`). `grade validate` reports any
other part of the grader a check module imports, so a course's own `checks/` keeps to the same line.

Runs in: `grade validate` (the author's process). Trusted: a check module is the course author's; it is parsed,
never imported here.
"""

from __future__ import annotations

import ast

from grader.course.exercises import Exercise
from grader.text import Text, verbatim

CHECK_API = ("grader.checking", "grader.gradients", "grader.devices")


def _in_check_api(module: str) -> bool:
    return not (module == "grader" or module.startswith("grader.")) or \
        any(module == api or module.startswith(api + ".") for api in CHECK_API)


def imported_modules(source: str) -> list[tuple[int, str]]:
    """(line, module) for each module the source imports, `from grader import x` as `grader.x`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "grader":
                found += [(node.lineno, f"grader.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def problems(exercise: Exercise) -> list[Text]:
    """One line for each import of the grader outside the check API in the exercise's check module."""
    try:
        source = exercise.checks.read_text(encoding="utf-8")
        modules = imported_modules(source)
    except (OSError, SyntaxError, ValueError):
        return []  # validating it grades it: that says what is wrong with the file
    return [Text("line {line} imports {module}: a check module imports only the check API ({api})",
                 "第 {line} 行导入了 {module}：检查模块只能导入检查 API（{api}）", line=line,
                 module=verbatim(module), api=verbatim(", ".join(CHECK_API)))
            for line, module in modules if not _in_check_api(module)]
