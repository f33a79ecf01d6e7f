"""Routes an exercise forbids ("by hand": no autograd; "do not use torch.optim"), seen two ways.

An exercise declares them as data, in its exercise.toml: `[banned]` maps a function to the routes it must
not take: a route of ROUTES (`linear_grads = ["autograd"]`), or the dotted name of a built-in
(`softmax = ["torch.nn.functional.softmax", "torch.Tensor.softmax"]`), which the scan finds however it is
reached: `F.softmax`, `x.softmax()`, `from torch.nn.functional import softmax`, `getattr(F, "softmax")`.
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
import os
import re
import sys

from grader.sandbox.guarded_parse import Unparsed, parse

# per route: attribute names, modules imported, and words in string literals that reach it
ROUTES = {
    "autograd": {  # a derivative by a machine: autograd in either mode, torch.func, a computer algebra system
        "attributes": {"backward", "autograd", "_execution_engine", "run_backward", "functorch", "vjp", "jvp",
                       "jacrev", "jacfwd", "jacobian", "hessian", "vmap", "_C", "forward_ad", "make_dual",
                       "unpack_dual", "dual_level", "saved_tensors_hooks", "_top_saved_tensors_default_hooks",
                       "diff", "Derivative", "lambdify"},
        "torch_attributes": {"func"},  # torch.func
        "modules": ("torch.autograd", "torch.func", "functorch", "torch._C", "torch._functorch", "sympy"),
        "words": ("autograd", "backward", "_execution_engine", "functorch", "torch.func", "forward_ad", "sympy"),
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
# where a route is banned, what could take it out of the probes' sight: other threads and processes, the hooks
OUT_OF_SIGHT = {"modules": ("threading", "_thread", "multiprocessing", "concurrent", "ctypes", "subprocess"),
                "attributes": {"fork", "forkpty", "register_at_fork", "setprofile", "settrace", "gettrace"}}
WHAT = {"en": "flagged for a look", "zh": "需要人工查看"}


def _flag(node: ast.AST, route: str, what: str) -> dict:
    return {"route": route, "line": getattr(node, "lineno", 0), "what": what}


def _imports(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def _dotted(node: ast.AST, routes: set[str]) -> list[dict]:
    """The flags of `node` for the dotted names among `routes`: an attribute of that name (but `self.name`, the
    learner's own), an import of it, or its name as getattr's text."""
    flags = []
    for route in sorted(r for r in routes if r not in ROUTES and _DOTTED.fullmatch(r)):
        name = route.rsplit(".", 1)[1]
        if isinstance(node, ast.Attribute) and node.attr == name and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            flags.append(_flag(node, route, f"`.{name}`"))
        if any(module == route or module.startswith(route + ".") for module in _imports(node)):
            flags.append(_flag(node, route, f"import of `{route}`"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
                len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == name:
            flags.append(_flag(node, route, f"`getattr(..., {name!r})`"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value and \
                _NAME.fullmatch(node.value) and route.endswith(node.value):
            flags.append(_flag(node, route, f"the name {node.value[:40]!r} spelled as text"))
    return flags


def scan_tree(tree: ast.AST, routes: set[str]) -> list[dict]:
    """The places in `tree` that take one of `routes`, or reach code indirectly (getattr with a computed name,
    importlib, eval...), one flag each."""
    flags = []
    for node in ast.walk(tree):
        flags += _dotted(node, routes)
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
        if routes and (hidden := [m for m in _imports(node) if m.split(".")[0] in OUT_OF_SIGHT["modules"]]):
            flags.append(_flag(node, "indirect", f"import of `{hidden[0]}`"))
        if routes and isinstance(node, ast.Attribute) and node.attr in OUT_OF_SIGHT["attributes"]:
            flags.append(_flag(node, "indirect", f"`.{node.attr}`"))
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
        tree = parse(code)  # the learner's: hostile input
        if isinstance(tree, Unparsed):
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


# What differentiates in a machine's stead, as a profile hook sees its entry (a C function called from Python):
MACHINES = {"run_backward": "torch.autograd", "_enter_dual_level": "forward-mode AD", "_make_dual": "forward-mode AD",
            "_grad_increment_nesting": "torch.func", "_vmap_increment_nesting": "torch.func",
            "_jvp_increment_nesting": "torch.func"}
_forks = [0]  # forks from Python in this process (os.fork, multiprocessing): counted by an at-fork hook


def machine_derivatives(call, module=None, loss: str | None = None) -> tuple[object, list[str]]:
    """Run `call()`; return its value and the machines that differentiated for it, whatever route reached them
    (trusted probe code, in the sandbox): the autograd engine in this thread (its saved tensors unpacked: `engine_ran`)
    or in any thread the call starts (the engine's entry seen by a profile hook, as are forward-mode AD's dual numbers
    and torch.func's transforms), a child process (where any of them could run out of sight: a fork, or its CPU time
    once reaped), a computer algebra system (sympy), and `module.<loss>` evaluated at more than one point (finite
    differences). Each is named in the list, once. Code that targets the hooks themselves (`sys.setprofile(None)`,
    a fork through ctypes that is never reaped) can hide from them; the static scan (`scan`) flags those names."""
    import resource
    import threading

    seen: dict[str, None] = {}
    loss_code = getattr(getattr(module, loss, None), "__code__", None) if loss else None
    points: list[int] = []

    def watch(frame, event, arg):
        if event == "c_call" and getattr(arg, "__name__", "") in MACHINES:
            seen.setdefault(MACHINES[arg.__name__])
        elif event == "call":
            if frame.f_code is loss_code:
                points.append(1)
            elif str(frame.f_globals.get("__name__", "")).split(".")[0] == "sympy":
                seen.setdefault("sympy")

    if not _forks[1:]:
        os.register_at_fork(after_in_parent=lambda: _forks.__setitem__(0, _forks[0] + 1))
        _forks.append(1)
    forks, reaped, children = _forks[0], _child_time(resource), set(_children())
    before = sys.getprofile()
    sys.setprofile(watch)
    threading.setprofile(watch)
    try:
        value, unpacked = engine_ran(call)
    finally:
        sys.setprofile(before)
        threading.setprofile(None)
    if unpacked:
        seen.setdefault("torch.autograd")
    if _forks[0] > forks or _child_time(resource) > reaped or set(_children()) - children:
        seen.setdefault("a child process")
    if len(points) > 1 and not seen:  # (forward-mode AD evaluates the loss once per direction too)
        seen.setdefault("finite differences")
    return value, list(seen)


def _child_time(resource) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _children() -> list[str]:
    """This process's children still there (a zombie not yet reaped among them)."""
    try:
        return [pid for task in os.listdir("/proc/self/task")
                for pid in open(f"/proc/self/task/{task}/children").read().split()]
    except OSError:
        return []
