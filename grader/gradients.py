"""Gradient comparison for the checks: the learner's gradients against autograd and against
finite differences, in float64, with a message that names the likely mistake.

The function differentiated may live in the judge (a closed form the check wrote) or in the
sandbox (a learner's forward, called through the `submission` proxy): `numerical_jacobian`
only needs a callable from float64 tensors to a tensor, as torch.autograd.gradcheck does.
"""

from __future__ import annotations

import torch

from grader.checking import describe, fail, relation, relation_text


def numerical_jacobian(f, inputs: list[torch.Tensor], eps: float = 1e-6) -> list[torch.Tensor]:
    """Central differences: for each input, a Jacobian of shape [out.numel(), input.numel()]."""
    inputs = [x.detach().double().clone() for x in inputs]
    jacobians = []
    for i, x in enumerate(inputs):
        columns = []
        flat = x.reshape(-1)
        for j in range(flat.numel()):
            orig = float(flat[j])
            flat[j] = orig + eps
            plus = torch.as_tensor(f(*inputs), dtype=torch.float64).reshape(-1)
            flat[j] = orig - eps
            minus = torch.as_tensor(f(*inputs), dtype=torch.float64).reshape(-1)
            flat[j] = orig
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


WORDS = {"en": ("yours", "expected", "numerical", "rel.err"), "zh": ("你的", "期望", "数值", "相对误差")}


def gradient_lines(yours: torch.Tensor, expected: torch.Tensor, label: str, numerical: torch.Tensor | None = None,
                   most: int = 3, lang: str = "en") -> list[str]:
    """The worst few entries as 'd loss/d w[0]: yours 0.5, expected 0.25 (rel.err 1.0e+00)'."""
    w_yours, w_expected, w_numerical, w_rel = WORDS[lang]
    a, e = yours.double().reshape(-1), expected.double().reshape(-1)
    err = (a - e).abs()
    rel = err / e.abs().clamp_min(1e-12)
    lines = []
    for k in torch.argsort(err, descending=True)[:most].tolist():
        if err[k] == 0:
            break
        num = f", {w_numerical} {float(numerical.reshape(-1)[k]):.4g}" if numerical is not None else ""
        lines.append(f"{label}[{_index(k, yours.shape)}]: {w_yours} {float(a[k]):.4g}, {w_expected} {float(e[k]):.4g}"
                     f"{num} ({w_rel} {float(rel[k]):.1e})")
    return lines


def expect_gradient(yours, expected: torch.Tensor, name: str, *, of: str = "loss",
                    numerical: torch.Tensor | None = None, rtol: float = 1e-4, atol: float = 1e-6,
                    hints: dict[str, tuple[str, str]] | None = None) -> None:
    """Fail unless the learner's gradient `yours` of `of` with respect to `name` matches `expected`.

    `numerical` (finite differences) is shown beside autograd's value when given; `hints` maps a
    relation ("sign", "factor", "zero", "transpose", "shape") to a likely cause in the learner's words.
    """
    hints = hints or {}
    label = f"d {of}/d {name}"  # symbols read the same in both languages
    if yours is None:
        fail(f"{label} is None: did you compute and return it?", f"{label} 是 None：有没有计算并返回它？")
    if not isinstance(yours, torch.Tensor):
        fail(f"{label} should be a tensor, got {describe(yours)}.", f"{label} 应该是 tensor，实际得到 {describe(yours)}。")
    if yours.shape != expected.shape:
        en = f"{label} should have the shape of {name}, {list(expected.shape)}, got {list(yours.shape)}."
        zh = f"{label} 的形状应与 {name} 相同，即 {list(expected.shape)}，实际为 {list(yours.shape)}。"
        if yours.numel() > expected.numel():
            en += f" Per-sample values? Reduce them (sum or mean over the batch) to the shape of {name}."
            zh += f" 是否保留了每个样本的梯度？需要对 batch 维度求和/平均，化为 {name} 的形状。"
        cause = hints.get("shape")
        fail(f"{en} {cause[0]}" if cause else en, f"{zh} {cause[1]}" if cause else zh)
    if not yours.is_floating_point():
        fail(f"{label} should be floating point, got {yours.dtype}.", f"{label} 应为浮点类型，实际为 {yours.dtype}。")
    a, e = yours.double(), expected.double()
    if not torch.isfinite(a).all():
        fail(f"{label} contains NaN or inf.", f"{label} 含有 NaN 或 inf。")
    if torch.allclose(a, e, rtol=rtol, atol=atol):
        return
    rel = relation(a, e)
    details = "; ".join(gradient_lines(a, e, label, numerical))
    details_zh = "；".join(gradient_lines(a, e, label, numerical, lang="zh"))
    if rel is None:
        fail(f"{label} is wrong: {details}.", f"{label} 不对：{details_zh}。")
    rel_en, rel_zh = relation_text(rel)
    cause = hints.get(rel) or hints.get(rel.split()[0])
    en = f"{label} {rel_en}: {details}." + (f" {cause[0]}" if cause else "")
    zh = f"{label} {rel_zh}：{details_zh}。" + (cause[1] if cause else "")
    fail(en, zh)
