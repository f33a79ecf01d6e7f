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
import time

from grader.sandbox.guarded_parse import Unparsed, parse

# per route: attribute names, modules imported, and words in string literals that reach it
ROUTES = {
    "autograd": {  # a derivative by a machine: autograd in either mode, torch.func, traced graphs, ATen's backward
        # kernels, a computer algebra system
        "attributes": {"backward", "autograd", "_execution_engine", "run_backward", "functorch", "vjp", "jvp",
                       "jacrev", "jacfwd", "jacobian", "hessian", "vmap", "_C", "forward_ad", "make_dual",
                       "unpack_dual", "dual_level", "saved_tensors_hooks", "_top_saved_tensors_default_hooks",
                       "diff", "Derivative", "lambdify", "make_fx", "fx", "_dynamo", "aot_function", "aot_module",
                       "complex64", "complex128", "cfloat", "cdouble", "imag"},
        "torch_attributes": {"func", "compile", "ops"},  # torch.func, torch.compile, torch.ops
        "modules": ("torch.autograd", "torch.func", "functorch", "torch._C", "torch._functorch", "sympy", "torch.fx",
                    "torch._dynamo", "torch._inductor", "torch.export"),
        "words": ("autograd", "backward", "_execution_engine", "functorch", "torch.func", "forward_ad", "sympy",
                  "make_fx", "_dynamo"),
    },
    "torch.optim": {
        "attributes": {"optim"},
        "torch_attributes": set(),
        "modules": ("torch.optim",),
        "words": ("optim",),
    },
}
_NAME = re.compile(r"[\w.]{1,80}")  # a string that could be a name looked up (not a docstring)
INDIRECT = {"getattr", "setattr", "delattr", "__import__", "eval", "exec", "compile", "globals", "vars", "importlib",
            "attrgetter", "methodcaller", "getattr_static"}
NAMED = {"getattr", "setattr", "delattr"}  # indirect only with a computed name: getattr(x, "name") is x.name
# attributes that reach any name however it is spelled (`sys.modules[...]`, `obj.__dict__[...]`)
INDIRECT_ATTRIBUTES = {"__dict__", "__getattribute__", "attrgetter", "methodcaller", "getattr_static"}
# where a route is banned, what could take it out of the probes' sight: other threads and processes, the hooks
OUT_OF_SIGHT = {"modules": ("threading", "_thread", "multiprocessing", "concurrent", "ctypes", "subprocess"),
                "attributes": {"fork", "forkpty", "register_at_fork", "setprofile", "settrace", "gettrace",
                               "getprofile", "start_new_thread", "start_new", "monitoring", "setprofile_all_threads",
                               "_setprofileallthreads", "multiprocessing"}}
# a class of the learner's own with these is arithmetic on its own numbers: dual numbers, where autograd is banned
ARITHMETIC = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__pow__", "__truediv__"}
# ATen's backward kernels by name: mse_loss_backward, _softmax_backward_data (but Function's ctx.save_for_backward)
_BACKWARD_NAME = re.compile(r"^(?!save_for_backward$)\w*\w_backward(_\w*)?$")
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


def _indirect(node: ast.AST, literal: set[int]) -> list[dict]:
    """The flags of `node` for a way to reach a name however it is spelled: a function that looks names up (getattr,
    setattr, attrgetter, eval, importlib...) called with a computed name, or passed on as a value (ids in `literal`:
    getattr and the like called with a name written out, which the name's own rules judge), `sys.modules`,
    `__dict__`."""
    if isinstance(node, ast.Name) and node.id in INDIRECT and id(node) not in literal:
        return [_flag(node, "indirect", f"`{node.id}`")]
    if isinstance(node, ast.ImportFrom) and (names := [a.name for a in node.names if a.name in INDIRECT]):
        return [_flag(node, "indirect", f"import of `{names[0]}`")]
    if isinstance(node, ast.Attribute) and (node.attr in INDIRECT_ATTRIBUTES or node.attr == "modules" and isinstance(
            node.value, ast.Name) and node.value.id == "sys"):
        return [_flag(node, "indirect", f"`.{node.attr}`")]
    return []


def _machine_made(node: ast.AST) -> list[dict]:
    """The flags of `node` for a derivative a machine makes that the attribute rules cannot name: ATen's backward
    kernels (`torch.ops.aten.mse_loss_backward`), a complex number (complex step), a class of the learner's own that
    defines arithmetic (dual numbers)."""
    if isinstance(node, ast.Attribute) and _BACKWARD_NAME.search(node.attr):
        return [_flag(node, "autograd", f"`.{node.attr}`")]
    if isinstance(node, ast.Constant) and isinstance(node.value, complex):
        return [_flag(node, "autograd", f"the complex number {node.value!r}")]
    if isinstance(node, ast.ClassDef) and (defined := sorted(
            item.name for item in node.body if isinstance(item, ast.FunctionDef) and item.name in ARITHMETIC)):
        return [_flag(node, "autograd", f"`{node.name}` defines arithmetic (`{defined[0]}`): dual numbers?")]
    return []


def scan_tree(tree: ast.AST, routes: set[str]) -> list[dict]:
    """The places in `tree` that take one of `routes`, or reach code indirectly (getattr with a computed name,
    importlib, eval...), one flag each."""
    flags = []
    literal = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Name) and node.func.id in NAMED and len(node.args) >= 2
               and isinstance(node.args[1], ast.Constant)}
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
        if routes:
            flags += _indirect(node, literal)
        if "autograd" in routes:
            flags += _machine_made(node)
        if routes and any(m.split(".")[0] == "importlib" for m in _imports(node)):
            flags.append(_flag(node, "indirect", "import of `importlib`"))
        if routes and (hidden := [m for m in _imports(node) if set(m.split(".")) & set(OUT_OF_SIGHT["modules"])]):
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
    to run under these hooks: that refusal counts as a run, and so does a call that took these hooks away (-1).
    Trusted probe code: it runs in the sandbox. (A dispatch mode would see every operation, but its first use
    imports torch._dynamo: seconds per sandbox.)"""
    import torch

    runs = [0]

    def unpack(tensor):
        runs[0] += 1
        return tensor

    def pack(tensor):
        return tensor

    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            value = call()
            ours = torch._C._autograd._top_saved_tensors_default_hooks(True)
            if not ours or ours[0] is not pack or ours[1] is not unpack:
                return value, -1
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
# bound as the sandbox starts, before any learner code: a learner who replaces the module's names changes none of these
_SETPROFILE, _GETPROFILE = sys.setprofile, sys.getprofile
_PROCESS_NS, _THREAD_NS = time.process_time_ns, time.thread_time_ns
# names that tell a parameter copied (kept as a parameter) or shifted (a step added) as the Tensor methods spell them
_COPIES = {"to", "double", "float", "half", "bfloat16", "type", "clone", "detach", "detach_", "requires_grad_",
           "reshape", "view", "view_as", "flatten", "squeeze", "unsqueeze", "contiguous", "__getitem__", "expand",
           "expand_as"}
_SHIFTS = {"add", "sub", "__add__", "__sub__", "__radd__", "__rsub__", "add_", "sub_", "__iadd__", "__isub__", "rsub"}


def _witness(params, inputs, seen: dict):
    """A TorchFunctionMode over a judged call (this thread) that adds to `seen`: ATen's own backward kernels called,
    a complex tensor made (complex-step differentiation), one of `params` (or a copy of it: a dtype, a clone, a view)
    shifted by a step that comes from none of `inputs` (finite differences written inline). torch is imported here,
    by the probe, not by this module."""
    import torch
    from torch.overrides import TorchFunctionMode

    kept: list = []  # the tensors below, alive, so that no id is reused while the call runs
    derived = {id(t) for t in inputs}  # computed from the inputs (the constructors *_like excepted)
    copies = {id(t) for t in params}  # the parameters, and their copies (a dtype, a clone, a view)

    class Witness(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            result = func(*args, **kwargs)
            operands = [*args, *kwargs.values()]
            if any(_BACKWARD_NAME.search(part) for part in (name, *str(func).split("."))):  # aten.x_backward.default
                seen.setdefault("ATen's backward kernels")
            tensors = [v for v in operands if isinstance(v, torch.Tensor)]
            if any(t.is_complex() for t in tensors) or isinstance(result, torch.Tensor) and result.is_complex():
                seen.setdefault("complex-step differentiation")
            if name in _SHIFTS and len(operands) >= 2:
                first, second = operands[0], operands[1]
                if any(id(a) in copies and not (isinstance(b, torch.Tensor) and id(b) in derived)
                       for a, b in ((first, second), (second, first)) if isinstance(a, torch.Tensor)):
                    seen.setdefault("finite differences")
            if isinstance(result, torch.Tensor):
                kept.append(result)
                if not name.endswith("_like") and any(id(t) in derived for t in tensors):
                    derived.add(id(result))
                if name in _COPIES and tensors and id(tensors[0]) in copies:
                    copies.add(id(result))
            return result

    return Witness()


def entry_watch(seen: dict, loss_code=None, points: list | None = None, details: dict | None = None):
    """A profile function (for sys.setprofile and threading.setprofile) that adds to `seen` the machines whose entry
    it sees: the autograd engine's (`run_backward`), forward-mode AD's and torch.func's (`MACHINES`), ATen's backward
    kernels (`torch.ops.aten.mse_loss_backward`, with or without its overload), code that torch.fx generated (a graph
    traced at import), sympy's frames; and appends to `points` each call of the code `loss_code`. `details`, when
    given, gets the name seen first for each machine, as code spells it (`aten.mse_loss_backward`)."""
    import torch._ops

    overload = torch._ops.OpOverload.__call__.__code__  # its builtin has no name: the op is on `self`
    details = {} if details is None else details

    def found(machine: str, name: str) -> None:
        seen.setdefault(machine)
        details.setdefault(machine, name)

    def watch(frame, event, arg):
        if event == "c_call":
            name = getattr(arg, "__name__", "")
            if name in MACHINES:
                found(MACHINES[name], name)
            elif _BACKWARD_NAME.search(name):
                found("ATen's backward kernels", f"aten.{name}")
        elif event == "call":
            code = frame.f_code
            if code is loss_code and points is not None:
                points.append(1)
            elif code is overload:
                name = str(getattr(frame.f_locals.get("self"), "_name", "")).split("::")[-1]
                if _BACKWARD_NAME.search(name):
                    found("ATen's backward kernels", f"aten.{name}")
            elif code.co_filename.startswith("<eval_with_key>"):
                found("a traced graph", "torch.fx")
            elif str(frame.f_globals.get("__name__", "")).split(".")[0] == "sympy":
                found("sympy", "sympy")

    return watch


def machine_derivatives(call, module=None, loss: str | None = None, params=(), inputs=()) -> tuple[object, list[str]]:
    """Run `call()`; return its value and the machines that differentiated for it, whatever route reached them
    (trusted probe code, in the sandbox): the autograd engine in this thread (its saved tensors unpacked: `engine_ran`)
    or in any thread the call starts (the engine's entry seen by a profile hook, as are forward-mode AD's dual numbers
    and torch.func's transforms), ATen's backward kernels, a graph traced at import (torch.fx's generated code run),
    a child process alive at the call or started by it (where any of them could run out of sight: a fork, or its CPU
    time once reaped), another thread that worked while the call ran (whatever started it, whenever: the kernel's
    count of CPU time), a computer algebra system (sympy), complex-step differentiation, finite differences
    (`module.<loss>` evaluated at more than one point, or one of `params` shifted by a step that comes from none of
    `inputs`), and the watch itself switched off by the call (the profile hook or the saved-tensor hooks gone). Each
    is named in the list, once. Code can still hide by switching a hook off and on again around its work in this
    thread; the static scan (`scan`) flags the names that takes, however spelled."""
    import resource
    import threading

    seen: dict[str, None] = {}
    loss_code = getattr(getattr(module, loss, None), "__code__", None) if loss else None
    points: list[int] = []

    watch = entry_watch(seen, loss_code, points)

    if not _forks[1:]:
        os.register_at_fork(after_in_parent=lambda: _forks.__setitem__(0, _forks[0] + 1))
        _forks.append(1)
    forks, reaped, children = _forks[0], _child_time(resource), set(_children())
    witness = _witness(params, [*params, *inputs], seen)
    thread_ns, process_ns = _THREAD_NS(), _PROCESS_NS()
    before = _GETPROFILE()
    _SETPROFILE(watch)
    threading.setprofile(watch)
    try:
        with witness:
            value, unpacked = engine_ran(call)
    finally:
        switched_off = _GETPROFILE() is not watch
        _SETPROFILE(before)
        threading.setprofile(None)
        elsewhere = (_PROCESS_NS() - process_ns) - (_THREAD_NS() - thread_ns)  # CPU time of the other threads
    if unpacked:
        seen.setdefault("torch.autograd" if unpacked > 0 else "the grader's watch switched off")
    if switched_off:
        seen.setdefault("the grader's watch switched off")
    if _forks[0] > forks or _child_time(resource) > reaped or children or set(_children()):
        seen.setdefault("a child process")
    if elsewhere > 0:
        seen.setdefault("another thread")
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
