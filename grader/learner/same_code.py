"""Whether two files hold the same code, names and layout aside: how a kata tells an answer pasted from an earlier
attempt or from the reference solution (grader/learner/kata.py).

A file's fingerprint is made of its top-level functions and classes, each with its docstrings, comments, type
annotations and layout gone and every name it binds or reads renamed in the order it first appears (attributes and
keyword names, the exercise's interface, stay), in any order. Imports, constants and the `if __name__ ==
"__main__":` demo are left out: a stub's demo kept or deleted changes nothing; so are statements that do nothing
(`pass` beside others, a lone constant) and, given the exercise's interface (the names its stub defines), every
definition the interface never reaches: a no-op line or an unused helper added makes no new answer. The learner's file
is hostile input, read by grader/sandbox/guarded_parse.py: one that does not parse, or is too large or too deep to, has
no fingerprint. Never imports torch.
"""

from __future__ import annotations

import ast
import hashlib

from grader.sandbox.guarded_parse import Unparsed, parse

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class _Canonical(ast.NodeTransformer):
    """One definition with its names numbered in order of first appearance, docstrings and annotations dropped."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def name(self, name: str) -> str:
        return self.names.setdefault(name, f"n{len(self.names)}")

    def _body(self, node):
        return _without_no_ops(node)

    def visit_FunctionDef(self, node):
        node.name, node.returns = self.name(node.name), None
        self._body(node)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self.name(node.name)
        self._body(node)
        self.generic_visit(node)
        return node

    def visit_arg(self, node):
        node.arg, node.annotation = self.name(node.arg), None
        return node

    def visit_AnnAssign(self, node):
        if node.value is None:
            return None
        return self.visit(ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno))

    def visit_Name(self, node):
        node.id = self.name(node.id)
        return node

    def visit_ExceptHandler(self, node):
        if node.name:
            node.name = self.name(node.name)
        self.generic_visit(node)
        return node

    def visit_Global(self, node):
        node.names = [self.name(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global


def _no_op(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr)
                                               and isinstance(statement.value, ast.Constant))


def _without_no_ops(node):
    """`node` with the statements of every body in it that do nothing left out (a docstring is one)."""
    for inner in ast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(inner, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [s for s in body if not _no_op(s)]
                setattr(inner, field, kept or ([ast.Pass()] if field == "body" else []))
    return node


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def definitions(code: str, interface: set[str] | None = None) -> list[Definition] | None:
    """The top-level functions and classes of `code` (given `interface`, those it reaches by name only), without
    the statements that do nothing; None when `code` cannot be read."""
    tree = parse(code)
    if isinstance(tree, Unparsed):
        return None
    try:
        found: dict[str, Definition] = {node.name: node for node in tree.body if isinstance(node, DEFINITIONS)}
        if interface is not None:
            reached, todo = set(), [name for name in found if name in interface]
            while todo:
                name = todo.pop()
                if name not in reached:
                    reached.add(name)
                    todo += [n.id for n in ast.walk(found[name]) if isinstance(n, ast.Name) and n.id in found]
            found = {name: node for name, node in found.items() if name in reached}
        return [_without_no_ops(node) for node in found.values()]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def fingerprint(code: str, interface: set[str] | None = None) -> str | None:
    """The fingerprint of `code` (None when it defines nothing, or cannot be read)."""
    try:
        shapes = sorted(ast.dump(_Canonical().visit(node)) for node in definitions(code, interface) or [])
    except (ValueError, RecursionError, MemoryError):
        return None
    return hashlib.sha256("\n".join(shapes).encode()).hexdigest() if shapes else None


def size(code: str, interface: set[str] | None = None) -> int:
    """How many characters the bodies of `code`'s definitions hold, written plainly (no comments, docstrings,
    layout): about what a learner types to answer, the stub's signatures given."""
    try:
        return sum(len(ast.unparse(statement)) for node in definitions(code, interface) or []
                   for statement in node.body)
    except (ValueError, RecursionError, MemoryError):
        return 0


def interface(stub: str) -> set[str]:
    """The names a stub defines at the top level: what the exercise asks for."""
    return {node.name for node in definitions(stub) or []}
