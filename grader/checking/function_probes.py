"""Probes of a hand-written `torch.autograd.Function` behind a wrapper (fs06's `layer_norm` over
`LayerNormFunction`, fs07's `rms_norm` over `RMSNormFunction`): run in the sandbox, as every probe, over the learner's
module; they return plain data, and the judge decides.

Each takes the names it drives (`wrapper`, the learner's function that calls `Function.apply`; `function`, the
Function class) and the plain tensors the judge drew, made fresh leaves here:

- `function_forward` / `function_forwards`: the wrapper's output, the torch functions it called (a forbidden
  built-in shows), and what its forward left on ctx (how many tensors saved, which attributes hold tensors);
- `function_values`: `function.apply` under no_grad (for finite differences);
- `function_backward`: `function.apply`, then its backward called directly: the raw values it returned and the autograd
  entry points it called (a backward that lets autograd differentiate shows).
"""

from __future__ import annotations

from typing import Any

import torch

from grader.checking.expect import probe, recording_calls, watching_autograd

__all__ = ["function_backward", "function_forward", "function_forwards", "function_values", "tensor_attributes"]


def tensor_attributes(node) -> list[str]:
    """Names of ctx attributes that hold tensors (directly or in a list/tuple/dict)."""
    names = []
    for key, value in vars(node).items():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, torch.Tensor) for v in items):
            names.append(key)
    return sorted(names)


def _forward(module, wrapper: str, tensors, eps):
    """module.<wrapper>(*tensors[, eps]) on fresh leaves, recording the torch functions called: the output, and what
    forward left on ctx (tensors saved, tensor attributes). eps None: the wrapper's default."""
    names: set[str] = set()
    leaves = [t.detach().clone().requires_grad_(True) for t in tensors]
    call = getattr(module, wrapper)
    with recording_calls(names):
        out = call(*leaves) if eps is None else call(*leaves, eps)
    info = {"out": out.detach() if isinstance(out, torch.Tensor) else out, "calls": sorted(names), "node": None}
    node: Any = out.grad_fn if isinstance(out, torch.Tensor) else None  # a Function's node: saved_tensors, apply
    if node is not None and hasattr(node, "_forward_cls"):
        info["node"] = type(node).__name__
        info["n_saved"] = sum(t is not None for t in node.saved_tensors)
        info["tensor_attrs"] = tensor_attributes(node)
    elif node is not None:
        info["node_other"] = type(node).__name__
    return info


@probe
def function_forward(module, wrapper, tensors, eps):
    """One call of the learner's wrapper, described (see _forward)."""
    return _forward(module, wrapper, tensors, eps)


@probe
def function_forwards(module, wrapper, cases, eps):
    """_forward on each case (a list of tensors), in one trip to the sandbox; a case that raised is reported by
    name, so that the judge can call it again on its own and explain its error."""
    results = []
    for tensors in cases:
        try:
            results.append(_forward(module, wrapper, tensors, eps))
        except Exception as exc:  # judged case by case
            results.append({"raised": type(exc).__name__})
    return results


@probe
def function_values(module, function, tensors, eps):
    """The output of <function>.apply on float64 inputs, under no_grad (for finite differences)."""
    with torch.no_grad():
        out = getattr(module, function).apply(*tensors, eps)
    return out if isinstance(out, torch.Tensor) else torch.full((1,), float("nan"), dtype=torch.float64)


@probe
def function_backward(module, function, tensors, eps, grad_output):
    """<function>.apply on fresh leaves, then its backward called directly with grad_output: the raw values it
    returned, and the autograd entry points it called."""
    leaves = [t.detach().clone().requires_grad_(True) for t in tensors]
    out = getattr(module, function).apply(*leaves, eps)
    node: Any = out.grad_fn if isinstance(out, torch.Tensor) else None  # a Function's node: saved_tensors, apply
    if node is None or not hasattr(node, "_forward_cls"):
        return {"node": None, "out": out.detach() if isinstance(out, torch.Tensor) else out}
    used: list[str] = []
    with watching_autograd(module, used):
        raw = node.apply(grad_output)
    grads = raw if isinstance(raw, (tuple, list)) else (raw,)
    return {"node": type(node).__name__, "autograd": used,
            "grads": [g.detach() if isinstance(g, torch.Tensor) else g for g in grads]}
