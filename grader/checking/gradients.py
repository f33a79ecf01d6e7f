"""Gradient comparison for the checks: the learner's gradients against autograd and against
finite differences, in float64, with a message that names the likely mistake.

The function differentiated may live in the judge (a closed form the check wrote) or in the
sandbox (a learner's forward, called through the `submission` proxy): `numerical_jacobian`
only needs a callable from float64 tensors to a tensor, as torch.autograd.gradcheck does.
"""

from __future__ import annotations

import itertools

import torch

from grader.checking.expect import describe, fail, relation, relation_cause, relation_key, relation_text
from grader.text import Text, joined


__all__ = ["autograd_gradient", "expect_gradient", "gradient_lines", "numerical_gradient", "numerical_jacobian"]


def numerical_jacobian(f, inputs: list[torch.Tensor], eps: float = 1e-6) -> list[torch.Tensor]:
    """Central differences: for each input, a Jacobian of shape [out.numel(), input.numel()], its columns in the
    input's row-major order. Each entry is perturbed where it lies, whatever the input's strides (a transposed or
    sliced input keeps its layout, and is perturbed, not a copy of it)."""
    inputs = [x.detach().double().clone() for x in inputs]
    jacobians = []
    for x in inputs:
        columns = []
        for index in itertools.product(*map(range, x.shape)):
            orig = float(x[index])
            x[index] = orig + eps
            plus = torch.as_tensor(f(*inputs), dtype=torch.float64).reshape(-1)
            x[index] = orig - eps
            minus = torch.as_tensor(f(*inputs), dtype=torch.float64).reshape(-1)
            x[index] = orig
            columns.append((plus - minus) / (2 * eps))
        jacobians.append(torch.stack(columns, dim=1) if columns else torch.zeros(0, 0, dtype=torch.float64))
    return jacobians


def numerical_gradient(f, inputs: list[torch.Tensor], eps: float = 1e-6) -> list[torch.Tensor]:
    """Gradients of a scalar function by central differences, shaped like the inputs."""
    return [jac.reshape(x.shape) for jac, x in zip(numerical_jacobian(f, inputs, eps), inputs)]


def autograd_gradient(f, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Autograd's gradients of scalar `f(*inputs)` in float64 (zeros where an input is unused)."""
    leaves = [x.detach().double().clone().requires_grad_(True) for x in inputs]
    grads = torch.autograd.grad(f(*leaves), leaves, allow_unused=True)
    return [torch.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]


def _index(flat_index: int, shape) -> str:
    idx = []
    for size in reversed(list(shape)):
        idx.append(flat_index % size if size else 0)
        flat_index //= size if size else 1
    return ", ".join(map(str, reversed(idx)))


def gradient_lines(yours: torch.Tensor, expected: torch.Tensor, label: str, numerical: torch.Tensor | None = None,
                   most: int = 3) -> Text:
    """The worst few entries as 'd loss/d w[0]: yours 0.5, expected 0.25 (rel.err 1.0e+00)', joined."""
    a, e = yours.double().reshape(-1), expected.double().reshape(-1)
    err = (a - e).abs()
    rel = err / e.abs().clamp_min(1e-12)
    lines = []
    for k in torch.argsort(err, descending=True)[:most].tolist():
        if err[k] == 0:
            break
        num = Text(", numerical {v:.4g}", "，有限差分 {v:.4g}", v=float(numerical.reshape(-1)[k])) \
            if numerical is not None else ""
        lines.append(Text("{label}[{idx}]: yours {a:.4g}, expected {e:.4g}{num} (rel.err {r:.1e})",
                          "{label}[{idx}]：你的 {a:.4g}，期望 {e:.4g}{num}（相对误差 {r:.1e}）",
                          label=label, idx=_index(k, yours.shape), a=float(a[k]), e=float(e[k]), num=num,
                          r=float(rel[k])))
    return joined(lines, "; ", "；")


def expect_gradient(yours, expected: torch.Tensor, name: str, *, of: str = "loss",
                    numerical: torch.Tensor | None = None, rtol: float = 1e-4, atol: float = 1e-6,
                    hints: dict | None = None, n: int | None = None) -> None:
    """Fail unless the learner's gradient `yours` of `of` with respect to `name` matches `expected`.

    `numerical` (finite differences) is shown beside autograd's value when given; `hints` maps a
    relation ("sign", "factor 2", "factor", "zero", "transpose", "shape") to a likely cause in the
    learner's words (a Text or an (English, Chinese) pair); `n` is the batch size, so that factors N
    and 1/N are recognised.
    """
    label = f"d {of}/d {name}"  # symbols read the same in both languages
    if yours is None:
        fail("{label} is None: did you compute and return it?", "{label} 是 None：有没有计算并返回它？",
             label=label, key="returned-none")
    if not isinstance(yours, torch.Tensor):
        fail("{label} should be a tensor, got {got}.", "{label} 应该是 tensor，实际得到{got}。",
             label=label, got=describe(yours), key="not-a-tensor")
    if yours.shape != expected.shape:
        more = Text("", "")
        if yours.numel() > expected.numel():
            more = Text(" Per-sample values? Reduce them (sum or mean over the batch) to the shape of {name}.",
                        "是否保留了每个样本的梯度？需要对 batch 维度求和/平均，化为 {name} 的形状。", name=name)
        cause = relation_cause("shape", hints)
        fail("{label} should have the shape of {name}, {want}, got {got}.{more}{cause}",
             "{label} 的形状应与 {name} 相同，即 {want}，实际为 {got}。{more}{cause}",
             label=label, name=name, want=list(expected.shape), got=list(yours.shape), more=more,
             cause=Text(" {c}", "{c}", c=cause) if cause else "", key="wrong-shape")
    if not yours.is_floating_point():
        fail("{label} should be floating point, got {dtype}.", "{label} 应为浮点类型，实际为 {dtype}。",
             label=label, dtype=yours.dtype, key="wrong-dtype")
    a, e = yours.double(), expected.double()
    if not torch.isfinite(a).all():
        fail("{label} contains NaN or inf.", "{label} 含有 NaN 或 inf。", label=label, key="nan")
    if torch.allclose(a, e, rtol=rtol, atol=atol):
        return
    rel = relation(a, e, n)
    details = gradient_lines(a, e, label, numerical)
    if rel is None:
        fail("{label} is wrong: {details}.", "{label} 不对：{details}。", label=label, details=details,
             key="wrong-values")
    cause = relation_cause(rel, hints)
    fail("{label} {relation}: {details}.{cause}", "{label} {relation}：{details}。{cause}",
         label=label, relation=relation_text(rel, bool(cause)), details=details,
         cause=Text(" {c}", "{c}", c=cause) if cause else "", key=relation_key(rel))
