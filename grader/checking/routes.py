"""Routes an exercise forbids ("by hand": no autograd; "do not use torch.optim"), seen two ways.

An exercise declares them as data, in its exercise.toml: `[banned]` maps a function to the routes it must
not take, e.g. `linear_grads = ["autograd"]`.
- At run time a probe observes them (`engine_ran`: whether the autograd engine ran a backward pass while a
  call ran, by whatever entry point: `.backward()`, `torch.autograd.grad`, `Variable._execution_engine`,
  `torch.func`, `functional.jacobian`). A value earned by a forbidden route is not earned. Code that targets the probe
  itself can fool it (it runs in the learner's process), hence:
- A static scan of the submission's source (`scan`): the forbidden routes and the indirect ways to reach
  them (importlib, getattr with a computed name, eval...) are listed as flags for a person to look at.
  A flag never changes a score by itself; the learner cannot patch it at run time.
"""

from __future__ import annotations

import ast
import re

# per route: attribute names, modules imported, and words in string literals that reach it
ROUTES = {
    "autograd": {
        "attributes": {"backward", "autograd", "_execution_engine", "run_backward", "functorch", "vjp", "jvp",
                       "jacrev", "jacfwd", "jacobian", "hessian", "vmap", "_C"},
        "torch_attributes": {"func"},  # torch.func
        "modules": ("torch.autograd", "torch.func", "functorch", "torch._C", "torch._functorch"),
        "words": ("autograd", "backward", "_execution_engine", "functorch", "torch.func"),
    },
    "torch.optim": {
        "attributes": {"optim"},
        "torch_attributes": set(),
        "modules": ("torch.optim",),
        "words": ("optim",),
    },
}
_NAME = re.compile(r"[\w.]{1,80}")  # a string that could be a name looked up (not a docstring)
INDIRECT = {"getattr", "__import__", "eval", "exec", "compile", "globals", "vars", "importlib"}
WHAT = {"en": "flagged for a look", "zh": "需要人工查看"}


def _flag(node: ast.AST, route: str, what: str) -> dict:
    return {"route": route, "line": getattr(node, "lineno", 0), "what": what}


def _imports(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def scan_tree(tree: ast.AST, routes: set[str]) -> list[dict]:
    """The places in `tree` that take one of `routes`, or reach code indirectly (getattr with a computed name,
    importlib, eval...), one flag each."""
    flags = []
    for node in ast.walk(tree):
        for route in sorted(routes & set(ROUTES)):
            spec = ROUTES[route]
            torch_attribute = (node.attr in spec["torch_attributes"] and isinstance(node.value, ast.Name)
                               and node.value.id == "torch") if isinstance(node, ast.Attribute) else False
            if isinstance(node, ast.Attribute) and (node.attr in spec["attributes"] or torch_attribute):
                flags.append(_flag(node, route, f"`.{node.attr}`"))
            for module in _imports(node):
                prefixes = tuple(spec["modules"])
                if module.startswith(prefixes) or module == "torch" and any(
                        f"torch.{a.name}".startswith(prefixes) for a in getattr(node, "names", [])):
                    flags.append(_flag(node, route, f"import of `{module}`"))
                    break
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NAME.fullmatch(node.value) and any(
                    word in node.value for word in spec["words"]):
                flags.append(_flag(node, route, f"the name {node.value[:40]!r} spelled as text"))
        if routes and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in INDIRECT:
            computed = node.func.id != "getattr" or len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)
            if computed:
                flags.append(_flag(node, "indirect", f"`{node.func.id}(...)`"))
        if routes and any(m.split(".")[0] == "importlib" for m in _imports(node)):
            flags.append(_flag(node, "indirect", "import of `importlib`"))
    unique = {(f["route"], f["line"], f["what"]): f for f in flags}
    return sorted(unique.values(), key=lambda f: (f["line"], f["route"], f["what"]))


def scan(chunks: list[tuple[str, str]], banned: dict[str, list[str]]) -> list[dict]:
    """The flags of a submission's code (its chunks: a file, or a notebook's cells) for the routes `banned`
    forbids. Never raises: code that does not parse gives no flag (the grading says what is wrong with it)."""
    routes = {route for names in banned.values() for route in names}
    if not routes:
        return []
    flags = []
    for label, code in chunks:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        flags += [{**f, "where": label} for f in scan_tree(tree, routes)]
    return flags


def engine_ran(call) -> tuple[object, int]:
    """Run `call()`; return its value and how many saved tensors the autograd engine unpacked meanwhile: any
    entry point that runs a backward pass over what the call computed unpacks them (`.backward()`,
    `torch.autograd.grad`, `Variable._execution_engine`, `functional.jacobian`). torch.func's transforms refuse
    to run under these hooks: that refusal counts as a run. Trusted probe code: it runs in the sandbox. (A
    dispatch mode would see every operation, but its first use imports torch._dynamo: seconds per sandbox.)"""
    import torch

    runs = [0]

    def unpack(tensor):
        runs[0] += 1
        return tensor

    try:
        with torch.autograd.graph.saved_tensors_hooks(lambda tensor: tensor, unpack):
            value = call()
    except RuntimeError as exc:
        if "saved tensor hooks" not in str(exc):
            raise
        return None, 1
    return value, runs[0]
