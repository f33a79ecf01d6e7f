"""The mutant families beyond the slips: answers that break what the statement says, what only a GPU shows, and
what only an edge input shows (issue 36: an outside set of wrong answers found these where the slips found none).

- spec: a rule stated in prose, broken while the values stay right. Only where the exercise declares the rule, in
  its exercise.toml: `[rules]` maps a function to the rules its statement states for it (`RULES` below), e.g.
  `fit = ["optimizer"]`; a rule nothing declares is no rule, and its mutant would be a correct answer.
- device: a GPU branch a CPU never takes: a device, a tensor or a seeding or determinism setting behind
  `torch.cuda.is_available()`, a device type or MPS check. Wherever the solution names a device, makes a tensor,
  seeds or sets determinism. The same choice made once, at import (`DEVICE` at module level), for the devices and
  tensors of a function: a check that pretends a GPU only after the import never sees it.
- edge: code right on the inputs a probe usually draws and wrong on others: non-contiguous or negative-stride
  inputs, size-1 dimensions, negative or NaN values, a model without buffers or biases, a guard for a corner
  dropped, a seed from `hash()` (it differs from process to process), a path that does not end in `.pt`.

Each operator yields (operator, replacement node) for one node of the solution's tree, as the slips do; a
replacement is a new tree (the original is never changed).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator

# -- spec: the statement's rules, per function --------------------------------------------------------

RULES = {  # a rule an exercise.toml's [rules] may name -> what its mutants do
    "optimizer": "another torch.optim optimizer than the one asked (SGD <-> Adam)",
    "model-dtype": "the model converted to float64 (and back) instead of the data",
    "builtin": "the forbidden built-in reached through a sibling (torch.logcumsumexp, torch.special, the method, "
               "a private or torch.ops.aten op)",
    "optim-functional": "the update through torch.optim's functional form where torch.optim is forbidden",
    "backward-per-loss": "a loss's gradient taken with torch.autograd.grad instead of backward()",
    "vectorized": "a reduction as a Python loop, over the features or over the rows",
    "no-cuda-call": "`.cuda()` behind a device-type check instead of `.to(device)`",
}
OPTIMIZERS = {"SGD": "Adam", "Adam": "SGD", "AdamW": "SGD", "RMSprop": "SGD", "Adagrad": "SGD"}
SIBLINGS = {  # a built-in reimplemented by hand -> routes to it that do not spell its name ({0}, {1}: the parameters)
    "logsumexp": ["torch.logcumsumexp({0}, {1}).select({1}, -1)", "torch.special.logsumexp({0}, {1})",
                  "{0}.logsumexp({1})"],
    "softmax": ["torch._softmax({0}, {1}, False)", "torch.ops.aten._softmax({0}, {1}, False)"],
    "log_softmax": ["torch._log_softmax({0}, {1}, False)", "torch.ops.aten._log_softmax({0}, {1}, False)"],
    "gelu": ["torch.ops.aten.gelu({0}, approximate={1})", "torch._C._nn.gelu({0}, approximate={1})"],
    "silu": ["torch.ops.aten.silu({0})", "torch._C._nn.silu({0})"],
}
REDUCTIONS = {"sum", "mean"}


def _name(node: ast.AST) -> str:
    """`torch.optim.SGD` for a chain of attributes, '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _expr(code: str) -> ast.expr:
    return ast.parse(code, mode="eval").body


def _stmts(code: str) -> list[ast.stmt]:
    return ast.parse(code).body


def _dim(call: ast.Call) -> ast.expr | None:
    """The `dim` of a reduction call: its keyword or its first argument."""
    for keyword in call.keywords:
        if keyword.arg == "dim":
            return keyword.value
    return call.args[0] if call.args else None


def spec_expression_slips(node: ast.AST, rules: set[str]) -> Iterator[tuple[str, ast.AST]]:
    """The spec mutants of one expression of a function with `rules`."""
    if not isinstance(node, ast.Call):
        return
    name = _name(node.func)
    last = name.rsplit(".", 1)[-1]
    if "optimizer" in rules and last in OPTIMIZERS and (name.startswith(("torch.optim.", "optim.")) or name == last):
        lr = [k for k in node.keywords if k.arg == "lr"] or (
            [ast.keyword("lr", node.args[1])] if len(node.args) > 1 else [])
        other = ast.Attribute(copy.deepcopy(node.func.value), OPTIMIZERS[last], ast.Load()) \
            if isinstance(node.func, ast.Attribute) else ast.Name(OPTIMIZERS[last], ast.Load())
        yield "swap-optimizer", ast.Call(other, node.args[:1], lr)
    if "vectorized" in rules and isinstance(node.func, ast.Attribute) and node.func.attr in REDUCTIONS:
        dim, keep = _dim(node), any(k.arg == "keepdim" for k in node.keywords)
        if dim is not None and not keep:
            reduced = node.func.value
            d = ast.unparse(dim)
            loop = f"sum(({ast.unparse(reduced)}).select({d}, j) for j in range(({ast.unparse(reduced)}).shape[{d}]))"
            if node.func.attr == "mean":
                loop = f"({loop}) / ({ast.unparse(reduced)}).shape[{d}]"
            yield "loop-features", _expr(loop)
            if d != "0":
                value = dim.value if isinstance(dim, ast.Constant) and isinstance(dim.value, int) else None
                row_dim = f"({d}) - 1 if ({d}) > 0 else ({d})" if value is None else \
                    str(value - 1 if value > 0 else value)
                yield "loop-rows", _expr(f"torch.stack([row.{node.func.attr}(dim={row_dim}) "
                                         f"for row in {ast.unparse(reduced)}])")
    if "no-cuda-call" in rules and isinstance(node.func, ast.Attribute) and node.func.attr == "to" \
            and len(node.args) == 1 and not node.keywords and not _is_dtype(node.args[0]):
        target, device = ast.unparse(node.func.value), ast.unparse(node.args[0])
        yield "cuda-call", _expr(f"({target}.cuda() if torch.device({device}).type == 'cuda' "
                                 f"else {target}.to({device}))")


def spec_function_slips(fn: ast.FunctionDef, rules: set[str]) -> Iterator[tuple[str, ast.FunctionDef]]:
    """The spec mutants that change a whole function with `rules` (its body, not one expression)."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if "model-dtype" in rules and "model" in params:
        yield "convert-model", _model_in_double(fn)
    if "builtin" in rules and fn.name in SIBLINGS:
        for route in SIBLINGS[fn.name]:
            if max(int(i) for i in re.findall(r"\{(\d)\}", route)) < len(params):
                yield "sibling-builtin", _with_body(fn, _stmts(f"return {route.format(*params)}"))
    if "optim-functional" in rules:
        changed = _functional_updates(fn)
        if changed is not None:
            yield "functional-optim", changed
    if "backward-per-loss" in rules:
        changed = _first_backward_by_grad(fn)
        if changed is not None:
            yield "grad-not-backward", changed


def _with_body(fn: ast.FunctionDef, body: list[ast.stmt]) -> ast.FunctionDef:
    new = copy.deepcopy(fn)
    docstring = new.body[:1] if new.body and isinstance(new.body[0], ast.Expr) and \
        isinstance(new.body[0].value, ast.Constant) and isinstance(new.body[0].value.value, str) else []
    new.body = docstring + body
    return new


def _model_in_double(fn: ast.FunctionDef) -> ast.FunctionDef:
    """`model.double()` first, every `model(x)` as `model(x.double()).float()`, `model.float()` before returning."""
    new = copy.deepcopy(fn)

    class Convert(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            if isinstance(node.func, ast.Name) and node.func.id == "model" and len(node.args) == 1:
                return _expr(f"model(({ast.unparse(node.args[0])}).double()).float()")
            return node

        def visit_Return(self, node: ast.Return) -> list[ast.stmt]:
            self.generic_visit(node)
            return [*_stmts("model.float()"), node]

    new.body = [Convert().visit(s) for s in new.body]
    new.body = [s for item in new.body for s in (item if isinstance(item, list) else [item])]
    body = _with_body(new, [])
    body.body += _stmts("model.double()") + new.body[len(body.body):]
    return ast.fix_missing_locations(body)


def _functional_updates(fn: ast.FunctionDef) -> ast.FunctionDef | None:
    """Each `p -= lr * p.grad` as a call of torch.optim's functional SGD; None where the function has none."""
    new = copy.deepcopy(fn)
    found = []

    class Route(ast.NodeTransformer):
        def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
            value = node.value
            if isinstance(node.op, ast.Sub) and isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
                sides = [value.left, value.right]
                grads = [s for s in sides if _name(s).endswith(".grad")]
                if grads:
                    lr = sides[1 - sides.index(grads[0])]
                    found.append(node)
                    return _stmts(f"torch_sgd([{ast.unparse(node.target)}], [{ast.unparse(grads[0])}], [None], "
                                  f"weight_decay=0.0, momentum=0.0, lr={ast.unparse(lr)}, dampening=0.0, "
                                  "nesterov=False, maximize=False)")[0]
            return node

    new.body = [Route().visit(s) for s in new.body]
    if not found:
        return None
    body = _with_body(new, [])
    body.body += _stmts("from torch.optim.sgd import sgd as torch_sgd") + new.body[len(body.body):]
    return ast.fix_missing_locations(body)


def _first_backward_by_grad(fn: ast.FunctionDef) -> ast.FunctionDef | None:
    """The first of two `loss.backward()` statements as `leaf.grad = torch.autograd.grad(loss, leaf, ...)` (the
    leaf: the first whose `.grad` a later statement reads); None without two backward statements and such a leaf."""
    body = fn.body
    backwards = [i for i, s in enumerate(body) if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                 and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "backward"]
    if len(backwards) < 2:
        return None
    first = backwards[0]
    leaf = next((_name(n.value) for s in body[first + 1:] for n in ast.walk(s)
                 if isinstance(n, ast.Attribute) and n.attr == "grad" and _name(n.value)), None)
    if leaf is None:
        return None
    loss = ast.unparse(body[first].value.func.value)  # type: ignore[attr-defined]
    new = copy.deepcopy(fn)
    new.body[first:first + 1] = _stmts(f"{leaf}.grad = torch.autograd.grad({loss}, {leaf}, retain_graph=True)[0]")
    return ast.fix_missing_locations(new)


# -- device: a GPU branch the CPU never takes --------------------------------------------------------

AVAILABLE = "torch.cuda.is_available()"
GPU = f"('cuda' if {AVAILABLE} else 'cpu')"
FACTORIES = {"zeros", "ones", "empty", "full", "randn", "rand", "randint", "arange", "tensor", "as_tensor", "eye",
             "linspace"}
SEEDING = ("manual_seed", "seed", "use_deterministic_algorithms", "deterministic", "determinism", "benchmark",
           "environ")
DTYPE_WORDS = {"float", "double", "half", "bfloat16", "float16", "float32", "float64", "long", "int", "int32",
               "int64", "bool", "dtype"}


def _is_dtype(node: ast.AST) -> bool:
    name = _name(node)
    return name.rsplit(".", 1)[-1] in DTYPE_WORDS or "dtype" in name


def device_expression_slips(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Device mutants of one expression: a device chosen as the GPU when one is available, a new tensor put there,
    an MPS device preferred to CUDA."""
    if isinstance(node, ast.Call):
        name = _name(node.func)
        last = name.rsplit(".", 1)[-1]
        if isinstance(node.func, ast.Attribute) and last == "to" and node.args and not _is_dtype(node.args[0]):
            args = [_expr(f"'cuda' if {AVAILABLE} else {ast.unparse(node.args[0])}"), *node.args[1:]]
            yield "gpu-when-available", ast.Call(node.func, args, node.keywords)
        for k, keyword in enumerate(node.keywords):
            if keyword.arg == "device":
                value = _expr(f"'cuda' if {AVAILABLE} else {ast.unparse(keyword.value)}")
                yield "gpu-when-available", ast.Call(node.func, node.args, [
                    *node.keywords[:k], ast.keyword("device", value), *node.keywords[k + 1:]])
        if name.startswith("torch.") and name.count(".") == 1 and last in FACTORIES \
                and not any(k.arg == "device" for k in node.keywords):
            yield "gpu-factory", ast.Call(node.func, node.args, [*node.keywords, ast.keyword("device", _expr(GPU))])
    if isinstance(node, ast.IfExp) and "is_available" in ast.unparse(node.test):
        yield "mps-first", _expr(f"'mps' if torch.backends.mps.is_available() else ({ast.unparse(node)})")


DEVICE_AT_IMPORT = f"DEVICE = 'cuda' if {AVAILABLE} else 'cpu'"  # what the *-at-import mutants add to the module


def device_import_slips(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Device mutants of one expression in a function, the device chosen at import (`DEVICE_AT_IMPORT`, which
    `with_device_at_import` adds): a device that is DEVICE when DEVICE is the GPU, a new tensor put on DEVICE."""
    for operator, new in device_expression_slips(node):
        if operator in ("gpu-when-available", "gpu-factory"):
            code = ast.unparse(new).replace(f"'cuda' if {AVAILABLE} else 'cpu'", "DEVICE")
            yield f"{operator}-at-import", _expr(code.replace(f"'cuda' if {AVAILABLE} else",
                                                              "DEVICE if DEVICE == 'cuda' else"))


def imports_torch(tree: ast.Module) -> bool:
    """Whether the module imports torch by that name and binds no DEVICE of its own (the *-at-import mutants)."""
    names = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    bound = {target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
             if isinstance(target, ast.Name)}
    return "torch" in names and "DEVICE" not in bound


def with_device_at_import(tree: ast.Module) -> None:
    """Add `DEVICE_AT_IMPORT` to the module, after the imports above its first function or class."""
    at = 0
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            at = i + 1
    tree.body.insert(at, ast.parse(DEVICE_AT_IMPORT).body[0])


def device_statement_slips(stmt: ast.stmt, params: list[str]) -> Iterator[tuple[str, list[ast.stmt]]]:
    """Device mutants of one statement: a seeding or determinism setting made only with a GPU, or only without
    one; a move to the device made only when it is a GPU."""
    code = ast.unparse(stmt)
    docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    if isinstance(stmt, (ast.Expr, ast.Assign)) and not docstring and any(word in code for word in SEEDING):
        yield "gpu-only", [ast.If(_expr(AVAILABLE), [stmt], [])]
        yield "cpu-only", [ast.If(_expr(f"not {AVAILABLE}"), [stmt], [])]
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to" \
            and value.args and not _is_dtype(value.args[0]):
        device = next((p for p in params if p.startswith("device")), None)
        if device is not None:
            yield "device-type-guard", [ast.If(_expr(f"torch.device({device}).type == 'cuda'"), [stmt], [])]


# -- edge: right on the usual inputs, wrong on others --------------------------------------------------

def edge_expression_slips(node: ast.AST, params: list[str], arrays: set[str]) -> Iterator[tuple[str, ast.AST]]:
    """Edge mutants of one expression of a function with parameters `params`, `arrays` those annotated as NumPy
    arrays."""
    if isinstance(node, ast.Call):
        func, name = node.func, _name(node.func)
        last = name.rsplit(".", 1)[-1]
        if isinstance(func, ast.Attribute) and func.attr == "reshape":
            yield "view-for-reshape", ast.Call(ast.Attribute(func.value, "view", ast.Load()), node.args, node.keywords)
        if isinstance(func, ast.Attribute) and func.attr == "squeeze" and (node.args or node.keywords):
            yield "squeeze-all", ast.Call(func, [], [])
        if name in ("torch.tensor", "torch.as_tensor") and node.args and isinstance(node.args[0], ast.Name) \
                and node.args[0].id in arrays:
            shared = f"torch.from_numpy({node.args[0].id})" + (".clone()" if last == "tensor" else "")
            yield "numpy-strides", _expr(shared)
        if name == "torch.where" and len(node.args) == 3:
            yield "drop-guard", node.args[1]
        if last == "abs" and (isinstance(func, ast.Attribute) and not node.args and _name(func.value) != "torch"):
            yield "drop-abs", func.value
        if name == "torch.abs" and len(node.args) == 1:
            yield "drop-abs", node.args[0]
        if name == "torch.isfinite" and len(node.args) == 1:
            x = ast.unparse(node.args[0])
            yield "positive-inf-only", _expr(f"({x} != float('inf'))")
            yield "nan-blind", _expr(f"({x}.abs() != float('inf'))")
        if isinstance(func, ast.Attribute) and func.attr == "state_dict" and not node.args \
                and "model" in _name(func.value):
            yield "params-not-state", _expr(f"dict({ast.unparse(func.value)}.named_parameters())")
        if isinstance(func, ast.Attribute) and func.attr == "parameters" and not node.args \
                and "model" in _name(func.value):
            yield "weights-only", _expr(f"[p for p in {ast.unparse(node)} if p.dim() > 1]")
        if last in ("manual_seed", "seed") and len(node.args) == 1 and not isinstance(node.args[0], ast.Constant):
            seed = _expr(f"hash(str({ast.unparse(node.args[0])})) % 2 ** 32")
            yield "hash-seed", ast.Call(func, [seed], node.keywords)
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Name) and arg.id in params and "path" in arg.id:
                suffixed = _expr(f"({arg.id} if str({arg.id}).endswith('.pt') else str({arg.id}) + '.pt')")
                yield "path-suffix", ast.Call(func, [*node.args[:i], suffixed, *node.args[i + 1:]], node.keywords)
    if isinstance(node, ast.IfExp):
        yield "drop-guard", node.body


def edge_statement_slips(stmt: ast.stmt) -> Iterator[tuple[str, list[ast.stmt]]]:
    """Edge mutants of one statement: a guard without `else` dropped, its body always run."""
    if isinstance(stmt, ast.If) and not stmt.orelse and not any(isinstance(n, (ast.Return, ast.Raise, ast.Break,
                                                                                   ast.Continue))
                                                                for n in ast.walk(stmt)):
        yield "drop-guard", stmt.body


FAMILY = {**dict.fromkeys(("swap-optimizer", "loop-features", "loop-rows", "cuda-call", "convert-model",
                           "sibling-builtin", "functional-optim", "grad-not-backward"), "spec"),
          **dict.fromkeys(("gpu-when-available", "gpu-factory", "mps-first", "gpu-only", "cpu-only",
                           "device-type-guard", "gpu-when-available-at-import", "gpu-factory-at-import"), "device"),
          **dict.fromkeys(("view-for-reshape", "squeeze-all", "numpy-strides", "drop-guard", "drop-abs",
                           "positive-inf-only", "nan-blind", "params-not-state", "weights-only", "hash-seed",
                           "path-suffix"), "edge")}
FAMILIES = ("slip", "spec", "device", "edge")


def family(operator: str) -> str:
    """The family of an operator: spec, device, edge, or slip (the operators of mutants.py)."""
    return FAMILY.get(operator, "slip")
