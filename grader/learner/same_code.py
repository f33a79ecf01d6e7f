"""Whether two files hold the same code, names and layout aside: how a kata tells an answer pasted from an earlier
attempt or from the reference solution (grader/learner/kata.py).

A file's fingerprint is made of its top-level functions and classes, each with its docstrings, comments, type
annotations and layout gone and every name it binds or reads renamed in the order it first appears (attributes and
keyword names, the exercise's interface, stay), in any order. Imports, constants and the `if __name__ ==
"__main__":` demo are left out: a stub's demo kept or deleted changes nothing. The learner's file is hostile input,
read by grader/sandbox/guarded_parse.py: one that does not parse, or is too large or too deep to, has no fingerprint.
Never imports torch.
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
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

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


def fingerprint(code: str) -> str | None:
    """The fingerprint of `code` (None when it defines nothing, or cannot be read)."""
    tree = parse(code)
    if isinstance(tree, Unparsed):
        return None
    shapes = sorted(ast.dump(_Canonical().visit(node)) for node in tree.body if isinstance(node, DEFINITIONS))
    return hashlib.sha256("\n".join(shapes).encode()).hexdigest() if shapes else None
