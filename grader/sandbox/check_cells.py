"""The grader's own API in a learner's notebook is neutral when the notebook is graded.

A notebook written by `grade notebook` ends with `from grader import check, hint; check("ex05")`, and a learner
adds `hint("ex05")` cells or copies the check cell. Graded, these would run the grader inside the sandbox
(which cannot, and says so with a path of the install). So the top-level statements that import the grader or
call what such an import bound (`check(...)`, `hint(...)`, `grader.check(...)`, `r = check(...)`) are blanked
out, line numbers kept: never run, never reported. Everything else in the cell runs as written.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from grader.sandbox.guarded_parse import Unparsed, parse

PACKAGE = "grader"


def _is_grader(module: str | None) -> bool:
    return module is not None and (module == PACKAGE or module.startswith(PACKAGE + "."))


def _calls_grader(node: ast.AST, names: set[str]) -> bool:
    """A call of a name bound by a grader import, or of an attribute of one (`grader.check(...)`)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in names


def _parse(code: str) -> ast.Module | None:
    tree = parse(code)  # the learner's cell: hostile input
    return None if isinstance(tree, Unparsed) else tree  # its error is the learner's to see, when it runs


def _imports_grader(node: ast.stmt) -> TypeGuard[ast.Import | ast.ImportFrom]:
    return (isinstance(node, ast.Import) and all(_is_grader(alias.name) for alias in node.names)
            or isinstance(node, ast.ImportFrom) and node.level == 0 and _is_grader(node.module))


def grader_names(codes: list[str]) -> set[str]:
    """The names the grader's imports bind anywhere in these cells (`check`, `hint`, `grader`, an alias): cells
    run in any order in Jupyter, so a `check(...)` above the cell that imports it is the grader's too."""
    names: set[str] = set()
    for tree in filter(None, map(_parse, codes)):
        for node in tree.body:
            if _imports_grader(node):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def own_statements(tree: ast.Module, names: set[str]) -> list[ast.stmt]:
    """The top-level statements of the grader's own API: its imports, and calls of `names`."""
    return [node for node in tree.body if _imports_grader(node)
            or isinstance(node, (ast.Expr, ast.Assign)) and _calls_grader(node.value, names)]


def without_own_api(code: str, names: set[str]) -> str:
    """`code` with the grader's own statements blanked out (a statement sharing a line with others becomes
    `None`); `names`: `grader_names` of the whole notebook. Code that does not parse is returned as it is."""
    tree = _parse(code)
    if tree is None:
        return code
    lines = [line.encode() for line in code.split("\n")]  # ast's columns count UTF-8 bytes
    for node in reversed(own_statements(tree, names)):
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        before, after = lines[first][:node.col_offset], lines[last][node.end_col_offset:]
        if not before.strip() and after.strip() in (b"", b";"):
            lines[first:last + 1] = [b""] * (last - first + 1)
        elif first == last:  # `x = 1; check("ex05")`
            lines[first] = before + b"None" + after
    return "\n".join(line.decode() for line in lines)
