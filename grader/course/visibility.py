"""Public and hidden checks: what a release ships so that the released folder grades itself.

A check is `@check(..., visibility="public")` (shipped in a release: students run it with `grade hw1`),
`"hidden"` (the default: it runs only where the teacher grades, batch and Gradescope) or `"after_due_date"`
(hidden in a release; on Gradescope its result shows after the due date). exercise.toml's `public = ["values"]`
makes checks public without touching the checks module, and course.toml's `[visibility."torch-katas:ex05"]`
(`public`, `hidden`, `after_due_date`: lists of check ids) sets them for any exercise of the course, another
course's too; the course wins, then exercise.toml, then @check. `public_source` writes a checks module with its
public checks only, and only what they use (helpers, constants, imports); `release_points` splits an exercise's
points into what the release's checks are worth and what waits for grading time.
Never imports torch.
"""

from __future__ import annotations

import ast
from pathlib import Path

VISIBILITIES = ("public", "hidden", "after_due_date")
GRADESCOPE = {"public": "visible", "after_due_date": "after_due_date", "hidden": "after_published"}


def _check_call(node: ast.AST) -> ast.Call | None:
    for deco in getattr(node, "decorator_list", []):
        if isinstance(deco, ast.Call) and getattr(deco.func, "id", getattr(deco.func, "attr", "")) == "check":
            return deco
    return None


def visibility_of(node: ast.AST) -> str:
    """The visibility a `@check(...)` declares (a literal), "hidden" when it says none."""
    call = _check_call(node)
    for kw in call.keywords if call else []:
        if kw.arg == "visibility" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    return "hidden"


def _is_hidden_check(node: ast.stmt, visibility: dict[str, str]) -> bool:
    return isinstance(node, ast.FunctionDef) and node.name.startswith("test_") \
        and visibility.get(node.name.removeprefix("test_"), visibility_of(node)) != "public"


def _names_used(nodes: list[ast.stmt]) -> set[str]:
    used = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                used.add(sub.id)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.isidentifier():
                used.add(sub.value)  # a name in a string (a fixture, a getattr) keeps what it names
    return used


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        return names if len(names) == len(targets) else set()
    return set()


def public_source(path: Path, visibility: dict[str, str] | None = None) -> str:
    """The checks module at `path` with its public checks only (`visibility`: check id -> what exercise.toml and
    the course set, over @check's): hidden checks left out, then every top-level function, class, constant and
    import that nothing kept uses, until nothing more goes."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    docstring = ast.get_docstring(tree)
    body = [n for n in tree.body if not _is_hidden_check(n, visibility or {})]
    if docstring is not None:
        body = body[1:]
    while True:
        kept: list[ast.stmt] = []
        for node in body:
            others = _names_used([n for n in body if n is not node])
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                aliases = [a for a in node.names if (a.asname or a.name).split(".")[0] in others or a.name == "*"]
                if aliases:
                    kept.append(node if len(aliases) == len(node.names) else
                                type(node)(**{**{f: getattr(node, f) for f in node._fields}, "names": aliases},
                                           lineno=node.lineno, end_lineno=node.end_lineno))
            elif _defined(node) and not (_defined(node) & others) and not node_is_check(node):
                continue
            else:
                kept.append(node)
        done = _size(kept) == _size(body)
        body = kept
        if done:
            break
    parts = [f'"""{docstring}\n\nAs released: the public checks only; the hidden ones run when the teacher grades."""'
             if docstring is not None else '"""The public checks (the hidden ones run when the teacher grades)."""']
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            parts.append(ast.unparse(node))
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        parts.append("\n".join(lines[start - 1:node.end_lineno]))
    return "\n\n".join(parts).replace("\n\nimport", "\nimport").replace("\n\nfrom", "\nfrom") + "\n"


def _size(nodes: list[ast.stmt]) -> int:
    return sum(len(n.names) if isinstance(n, (ast.Import, ast.ImportFrom)) else 1 for n in nodes)


def node_is_check(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef) and node.name.startswith("test_")


def release_points(exercise) -> tuple[dict[str, float], dict[str, float], float]:
    """(declared points of the public checks, the public checks' course overrides, the points left to the hidden
    checks) of `exercise` as the course (and assignment) scores it."""
    public = {c["id"]: c["points"] for c in exercise.checks_as_released() if c["visibility"] == "public"}
    overrides = {cid: points for cid, points in exercise.overrides.items() if cid in public}
    public_total = sum(overrides.get(cid, p) for cid, p in public.items())
    return public, overrides, round(exercise.points - public_total, 4)
