"""Hidden checks of fs07: RMSNorm from scratch, its forward and its backward by hand in an autograd.Function.

Forward: the judge draws inputs per seed (several shapes, one row, a size-1 last dimension, an empty batch; rows of
tiny values and an all-zero row, where eps decides; float16 rows near 300, whose squares overflow float16, and
bfloat16 rows) and compares with torch's own `F.rms_norm` in float64. A wrong value is named only when it is what a
known slip computes, each computed here: the variance (mean subtracted) for the mean of squares, eps outside the
square root or missing, the sum (or the norm) of squares for their mean, no square root, the wrong dimension, the
scale forgotten or applied the other way (weight for 1 + weight, or the reverse).

Backward: probes run the learner's forward on float64 inputs and call its backward directly (the raw values it
returned); the judge compares them with autograd through `F.rms_norm` (float64) and, when they differ, with finite
differences of the learner's own forward, and names the slips of the derivation: the rms treated as a constant,
LayerNorm's mean term added, the scale forgotten in grad_x, grad_weight without x_hat or not summed over the batch,
grad_output ignored.

The built-ins are forbidden: forward must not call `F.rms_norm` (a TorchFunctionMode probe sees `nn.RMSNorm` and
`torch.rms_norm` too), backward must not call autograd; a value computed so earns nothing (the ex05 rule), and the
by-hand check names it.

Kata variants: `variant("scale")` is how the normalized values are scaled: by weight (LLaMA, T5), or by 1 + weight
with weight starting at 0 (Gemma); the reference, the expected gradients and the messages follow it.
"""

import torch
import torch.nn.functional as F

from grader.checking import (Text, check, describe, expect_close, expect_tensor, fail, function_backward,
                             function_forward, function_forwards, function_values, matches, variant, verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.devices import expect_cpu_only
from grader.gradients import autograd_gradient, expect_gradient, numerical_jacobian

NAMES = ("x", "weight")
FUNCTION = "RMSNormFunction"
WRAPPER = "rms_norm"

# -- judge-side helpers (the probes are grader/checking/function_probes.py's) ---------------------

def one_plus() -> bool:
    """Whether this draw scales by 1 + weight (Gemma) instead of weight (LLaMA)."""
    return variant("scale")["name"] == "one_plus"


def scale_of(w):
    return 1 + w if one_plus() else w


def reference(x, w, eps):
    """F.rms_norm over the last dimension in float64, scaled as this draw asks."""
    return F.rms_norm(x.double(), (x.shape[-1],), scale_of(w.double()), eps)


def normalize(x, eps, dim=-1, centred=False, outside=False, no_eps=False, summed=False, no_sqrt=False):
    x = x.double()
    z = x - x.mean(dim=dim, keepdim=True) if centred and x.numel() else x
    ms = (z * z).sum(dim=dim, keepdim=True) if summed else (z * z).mean(dim=dim, keepdim=True) if x.numel() else \
        (z * z).sum(dim=dim, keepdim=True)
    if no_eps:
        return z / ms.sqrt()
    if no_sqrt:
        return z / (ms + eps)
    return z / (ms.sqrt() + eps) if outside else z / (ms + eps).sqrt()


def slips(x, w, eps) -> list:
    """(value, key, English, Chinese) of the known forward slips, in float64."""
    s = scale_of(w.double())
    other = w.double() if one_plus() else 1 + w.double()
    found = [
        (normalize(x, eps, centred=True) * s, "variance-for-mean-square",
         "the mean was subtracted first, so that is the variance (LayerNorm's statistic); RMSNorm divides by the root "
         "mean square of x itself, sqrt(mean(x ** 2) + eps), nothing subtracted.",
         "先减去了均值，所以这是方差（LayerNorm 的统计量）；RMSNorm 除以的是 x 本身的均方根 sqrt(mean(x ** 2) + eps)，"
         "不减任何东西。"),
        (normalize(x, eps, outside=True) * s, "eps-outside-sqrt",
         "eps was added outside the square root, x / (sqrt(mean(x ** 2)) + eps); RMSNorm divides by "
         "sqrt(mean(x ** 2) + eps). On tiny values the two differ a lot.",
         "eps 加在了平方根外面，即 x / (sqrt(mean(x ** 2)) + eps)；RMSNorm 除以的是 sqrt(mean(x ** 2) + eps)。"
         "在很小的值上，两者相差很大。"),
        (normalize(x, eps, summed=True) * s, "sum-of-squares",
         "the squares were summed (or x.norm() taken): that is sqrt(D) times too large a divisor; RMSNorm takes their "
         "mean, mean(x ** 2).",
         "对平方求了和（或者用了 x.norm()）：除数大了 sqrt(D) 倍；RMSNorm 取的是它们的平均 mean(x ** 2)。"),
        (normalize(x, eps, no_sqrt=True) * s, "no-sqrt",
         "x was divided by the mean square itself; RMSNorm divides by its square root (the root mean square).",
         "x 除以的是均方本身；RMSNorm 除以的是它的平方根（均方根）。"),
        (normalize(x, eps), "scale-forgotten",
         "that is x_hat alone: multiply it by {scale}.", "这只是 x_hat：还要乘以 {scale}。"),
        (normalize(x, eps) * other, "scale-other-way",
         "x_hat was multiplied by {other_scale}; this RMSNorm scales by {scale}.",
         "x_hat 乘的是 {other_scale}；这个 RMSNorm 乘的是 {scale}。"),
    ]
    if x.dim() == 2 and x.shape[0] > 1:
        found.append((normalize(x, eps, dim=0) * s, "wrong-dim",
                      "the mean square was taken over dimension 0 (the batch); RMSNorm takes it over the last "
                      "dimension, each row on its own.",
                      "均方是在第 0 维（batch）上计算的；RMSNorm 在最后一维上计算，每一行单独计算。"))
    return found


def by_hand_forward(info, what) -> None:
    used = forbidden_calls("rms_norm", info["calls"])
    if used:
        fail("{what} calls torch's own `{name}` (F.rms_norm, nn.RMSNorm): its values are torch's. Compute the root "
             "mean square and x_hat yourself.",
             "{what} 调用了 torch 自带的 `{name}`（F.rms_norm、nn.RMSNorm）：这些值是 torch 算的。请自己计算均方根和 "
             "x_hat。", what=what, name=verbatim(used[0]), key="builtin-rms-norm")


def expect_function(info, what) -> None:
    if info["node"] is None:
        other = info.get("node_other")
        fail("The output of {what} was not made by RMSNormFunction.apply{why}: forward must go through your Function, "
             "so that autograd calls your backward.",
             "{what} 的输出不是由 RMSNormFunction.apply 产生的{why}：forward 必须经过你的 Function，autograd 才会调用你的 "
             "backward。", what=what, why=Text(" (its grad_fn is {g})", "（它的 grad_fn 是 {g}）", g=verbatim(other))
             if other else "", key="not-through-function")


def draw_weight(rng, d, dtype):
    """Gemma's weight starts at 0 and LLaMA's at 1; drawn around those, so that weight and 1 + weight differ."""
    base = 0.0 if one_plus() else 1.0
    return (base + 0.5 * torch.randn(d, generator=rng)).to(dtype)


def what_of(x, w, eps=None) -> Text:
    args = f"x{list(x.shape)}, weight{list(w.shape)}" + ("" if eps is None else f", eps={eps:.3g}")
    return Text("`rms_norm({args})`", "`rms_norm({args})`", args=verbatim(f"{args}"))


def judge_forward(submission, x, w, eps, rtol=1e-4, atol=1e-5, info=None) -> torch.Tensor:
    what = what_of(x, w, eps)
    if info is None or "raised" in info:
        info = submission.probe(function_forward, WRAPPER, [x, w], eps, what=what)
    by_hand_forward(info, what)
    out = expect_tensor(info["out"], what, shape=list(x.shape), floating=True)
    if out.dtype != x.dtype:
        fail("{what} returned {got} for {want} inputs: compute in float32 if you like, then cast back with "
             ".to(x.dtype).",
             "{what} 对 {want} 的输入返回了 {got}：可以用 float32 计算，但最后要用 .to(x.dtype) 转换回来。", what=what,
             got=str(out.dtype).removeprefix("torch."), want=str(x.dtype).removeprefix("torch."), key="wrong-dtype")
    expected = reference(x, w, 1e-6 if eps is None else eps)
    if matches(out, expected, rtol=rtol, atol=atol, equal_nan=True):
        expect_function(info, what)
        return out
    if eps is None:
        for other in (1e-5, 1e-8, 1e-12, float(torch.finfo(x.dtype).eps)):
            if matches(out, reference(x, w, other), atol=1e-5, equal_nan=True):
                fail("{what} uses eps={got:.3g} by default; the statement's default is eps=1e-6: write it in the "
                     "signature of forward (and of rms_norm).",
                     "{what} 默认使用 eps={got:.3g}；题目规定的默认值是 eps=1e-6：请写在 forward（以及 rms_norm）的签名里。",
                     what=what, got=other, key="default-eps")
    bad = ~torch.isfinite(out.double()) & torch.isfinite(expected)
    if bad.any():
        fail("{what} has NaN or inf where RMSNorm is finite: on a row of zeros the mean square is 0, and x / "
             "sqrt(mean(x ** 2)) is 0 / 0. eps is there for that: divide by sqrt(mean(x ** 2) + eps).",
             "{what} 在 RMSNorm 有限的位置出现了 NaN 或 inf：在全为 0 的行上均方为 0，x / sqrt(mean(x ** 2)) 就是 0 / 0。"
             "eps 正是为此而设：请除以 sqrt(mean(x ** 2) + eps)。", what=what, key="no-eps")
    scale = verbatim("1 + weight" if one_plus() else "weight")
    other_scale = verbatim("weight" if one_plus() else "1 + weight")
    for value, key, en, zh in slips(x, w, 1e-6 if eps is None else eps):
        if matches(out, value, rtol=rtol, atol=atol, equal_nan=True):
            fail("{what} is wrong: " + en, "{what} 不对：" + zh, what=what, scale=scale, other_scale=other_scale,
                 key=key)
    return expect_close(out.double(), expected, what, rtol=rtol, atol=atol)


# -- forward ------------------------------------------------------------------------------------

@check("forward matches F.rms_norm on fresh inputs of several shapes (one row, a size-1 dimension, an empty batch)",
       points=2, zh="forward 在多种形状的随机输入上与 F.rms_norm 一致（只有一行、大小为 1 的维度、空 batch）")
def test_forward(submission, rng):
    eps = float(10 ** torch.empty(()).uniform_(-7, -5, generator=rng))
    d = int(torch.randint(4, 7, (), generator=rng))
    n = int(torch.randint(2, 5, (), generator=rng))
    cases = []
    for shape in ((n, d), (2, 3, d), (1, d), (n, 1), (0, d)):
        x = away_from_zero(2 * torch.randn(shape, generator=rng) + 0.5)  # not centred: variance != mean square
        cases.append([x, draw_weight(rng, shape[-1], torch.float32)])
    infos = submission.probe(function_forwards, WRAPPER, cases, eps, what=Text("`rms_norm`", "`rms_norm`"))
    for (x, w), info in zip(cases, infos):
        judge_forward(submission, x, w, eps, info=info)
    expect_cpu_only(submission, [("rms_norm", [*cases[0], eps])])  # a GPU at hand changes nothing


@check("eps sits inside the square root: rows of tiny values and a row of zeros, the default eps included", points=1,
       zh="eps 在平方根里面：在很小的值组成的行和全 0 的行上，包括默认 eps", depends="forward")
def test_eps(submission, rng):
    d = int(torch.randint(4, 7, (), generator=rng))
    x = 1e-3 * torch.randn(4, d, generator=rng, dtype=torch.float64)  # mean square about 1e-6, near eps
    x[0] = 0.0  # a row of zeros: 0 / 0 without eps
    w = draw_weight(rng, d, torch.float64)
    judge_forward(submission, x, w, float(10 ** torch.empty(()).uniform_(-6, -5, generator=rng)))
    judge_forward(submission, x, w, None)


HALF = {torch.float16: (1e-2, 2e-3), torch.bfloat16: (3e-2, 1e-2)}  # (rtol, atol) a half-precision result meets


@check("float16 and bfloat16 inputs keep their dtype and stay finite and right, rows near 300 too (their squares "
       "overflow float16)", points=1,
       zh="float16 和 bfloat16 输入保持其 dtype，结果有限且正确，在 300 附近的行上也是（它们的平方会让 float16 溢出）",
       depends="forward")
def test_half(submission, rng):
    d = int(torch.randint(4, 7, (), generator=rng))
    for dtype, (rtol, atol) in HALF.items():
        x = torch.randn(4, d, generator=rng)
        x[int(torch.randint(0, 4, (), generator=rng))] += 300  # 300 ** 2 = 90000 > 65504, float16's largest
        x, w = x.to(dtype), draw_weight(rng, d, dtype)
        what = what_of(x, w, 1e-6)
        out = submission.probe(function_forward, WRAPPER, [x, w], 1e-6, what=what)["out"]
        out = expect_tensor(out, what, shape=list(x.shape), floating=True)
        if out.dtype != dtype:
            fail("{what} returned {got} for {want} inputs: compute in float32 if you like, then cast back with "
                 ".to(x.dtype).",
                 "{what} 对 {want} 的输入返回了 {got}：可以用 float32 计算，但最后要用 .to(x.dtype) 转换回来。",
                 what=what, got=str(out.dtype).removeprefix("torch."), want=str(dtype).removeprefix("torch."),
                 key="wrong-dtype")
        expected = reference(x, w, 1e-6)
        if not torch.isfinite(out.double()).all() or (out.double().abs().amax(-1) == 0).any():
            fail("{what} gives inf, NaN or a row of zeros on a {dtype} row near 300: x ** 2 is 90000 there, beyond "
                 "float16's largest value (65504), so the mean square is inf and x / inf is 0. Square in float32: "
                 "x.float(), then cast the result back with .to(x.dtype).",
                 "在 300 附近的 {dtype} 行上，{what} 得到了 inf、NaN 或全 0 的行：那里 x ** 2 是 90000，超过了 float16 "
                 "的最大值（65504），于是均方是 inf，x / inf 就是 0。请在 float32 中求平方：x.float()，最后再用 "
                 ".to(x.dtype) 把结果转换回来。", what=what, dtype=str(dtype).removeprefix("torch."),
                 key="half-overflow")
        expect_close(out.double(), expected, what, rtol=rtol, atol=atol)


# -- ctx and backward ---------------------------------------------------------------------------

@check("forward keeps what backward needs with ctx.save_for_backward", points=1,
       zh="forward 用 ctx.save_for_backward 保存 backward 需要的东西", depends="forward")
def test_save_for_backward(submission, rng):
    (x, w), _ = backward_inputs(rng)
    what = what_of(x, w, 1e-6)
    info = submission.probe(function_forward, WRAPPER, [x, w], 1e-6, what=what)
    expect_function(info, what)
    if info["tensor_attrs"]:
        fail("forward stores tensors as attributes of ctx ({attrs}): keep them with ctx.save_for_backward(...) and "
             "read them back with ctx.saved_tensors, so autograd can detect in-place changes and free them.",
             "forward 把 tensor 存成了 ctx 的属性（{attrs}）：请用 ctx.save_for_backward(...) 保存，"
             "在 backward 中用 ctx.saved_tensors 取回，这样 autograd 才能检测原地修改并及时释放内存。",
             attrs=verbatim(", ".join(f"ctx.{a}" for a in info["tensor_attrs"])), key="ctx-attributes")
    if info["n_saved"] == 0:
        fail("forward saved no tensor with ctx.save_for_backward, yet backward needs x_hat (or x), the rms and weight.",
             "forward 没有用 ctx.save_for_backward 保存任何 tensor，但 backward 需要 x_hat（或 x）、均方根和 weight。",
             key="nothing-saved")


def away_from_zero(x: torch.Tensor) -> torch.Tensor:
    """x moved 1 away from 0: every row's mean square is 1 or more, so the eps of the forward and backward checks
    (1e-5 at most, 1e-9 in backward) changes less than their tolerance, whatever the draw. Where eps goes is the eps
    check's lesson, decided there on rows where it matters; here it would decide on some seeds and not others."""
    return x + x.sign()


def backward_inputs(rng, batch3=False):
    """float64 (x, weight) and grad_output: small, never square, weight far from 1 (and 1 + weight from 1)."""
    d = int(torch.randint(4, 6, (), generator=rng))
    shape = (2, 3, d) if batch3 else (3, d)
    x = away_from_zero(2 * torch.randn(shape, generator=rng, dtype=torch.float64) + 0.5)
    return [x, draw_weight(rng, d, torch.float64)], torch.randn(shape, generator=rng, dtype=torch.float64)


BACKWARD = Text("`RMSNormFunction.apply(x, weight, eps)` and then its `backward(ctx, grad_output)`",
                "`RMSNormFunction.apply(x, weight, eps)` 及其 `backward(ctx, grad_output)`")


def raw_grads(submission, tensors, eps, g, by_hand=False) -> list:
    info = submission.probe(function_backward, FUNCTION, tensors, eps, g, what=BACKWARD)
    if info["node"] is None:
        fail("RMSNormFunction.apply(x, weight, eps) returned {got} without RMSNormFunction's grad_fn, so autograd "
             "cannot call your backward.",
             "RMSNormFunction.apply(x, weight, eps) 返回了 {got}，没有 RMSNormFunction 的 grad_fn，autograd 无法调用你的 "
             "backward。", got=describe(info.get("out")), key="not-through-function")
    if by_hand and info["autograd"]:
        fail("RMSNormFunction.backward calls {api}: it lets autograd differentiate the forward again instead of using "
             "the formula you derived. Compute the gradients from grad_output and what forward saved.",
             "RMSNormFunction.backward 调用了 {api}：它让 autograd 再对 forward 求一次导，而不是用你推导的公式。"
             "请用 grad_output 和 forward 保存的张量计算梯度。", api=verbatim(f"`{info['autograd'][0]}`"),
             key="backward-by-autograd")
    return info["grads"]


@check("backward returns three values: grad_x and grad_weight shaped like their inputs, None for eps", points=1,
       zh="backward 返回三个值：形状与各自输入相同的 grad_x 和 grad_weight，以及 eps 对应的 None", depends="forward")
def test_backward_shapes(submission, rng):
    for batch3 in (False, True):
        tensors, g = backward_inputs(rng, batch3)
        grads = raw_grads(submission, tensors, 1e-6, g)
        if len(grads) != 3:
            fail("RMSNormFunction.backward returned {n} value(s); forward takes three inputs after ctx (x, weight, "
                 "eps), so backward returns three: (grad_x, grad_weight, None), None for the float eps.",
                 "RMSNormFunction.backward 返回了 {n} 个值；forward 在 ctx 之后有三个输入（x、weight、eps），所以 "
                 "backward 要返回三个：(grad_x, grad_weight, None)，浮点数 eps 对应 None。", n=len(grads),
                 key="wrong-gradient-count")
        if grads[2] is not None:
            fail("The third value backward returns, the gradient of eps, should be None (eps is a float), got {got}.",
                 "backward 返回的第三个值，即 eps 的梯度，应为 None（eps 是浮点数），实际为 {got}。",
                 got=describe(grads[2]), key="eps-gradient")
        for name, grad, t in zip(NAMES, grads, tensors):
            label = f"grad_{name}"
            if not isinstance(grad, torch.Tensor):
                fail("{label} should be a tensor of {name}'s shape {want}, got {got}.",
                     "{label} 应是形状与 {name} 相同（{want}）的 tensor，实际为 {got}。", label=label, name=name,
                     want=list(t.shape), got=describe(grad), key="missing-gradient")
            if grad.shape != t.shape:
                if name == "weight" and grad.dim() > 1 and grad.shape[-1] == t.shape[-1]:
                    fail("grad_weight has shape {got}, not weight's {want}: weight was broadcast over every batch "
                         "dimension in forward, so its gradient sums over all of them.",
                         "grad_weight 的形状为 {got}，而不是 weight 的 {want}：forward 中 weight 在每个 batch 维度上都广播了，"
                         "所以它的梯度要对所有这些维度求和。", got=list(grad.shape), want=list(t.shape),
                         key="not-summed-over-batch")
                fail("{label} should have {name}'s shape {want}, got {got}.",
                     "{label} 的形状应与 {name} 相同，即 {want}，实际为 {got}。", label=label, name=name,
                     want=list(t.shape), got=list(grad.shape), key="wrong-shape")


def vjp_expected(tensors, g, eps) -> list:
    """dL/d input for L = sum(grad_output * rms_norm(...)), by autograd through F.rms_norm, float64."""
    return autograd_gradient(lambda x, w: (g * reference(x, w, eps)).sum(), tensors)


def grad_x_slips(x, w, g, eps) -> list:
    """(value, key, English, Chinese) of the known slips of grad_x, float64."""
    rstd = ((x * x).mean(dim=-1, keepdim=True) + eps).rsqrt()
    x_hat = x * rstd
    gs = g * scale_of(w)
    return [
        (gs * rstd, "constant-rms",
         "that is grad_output * {scale} / rms, as if the rms were a constant; it depends on every x of the row, which "
         "adds a term: rstd * (g - x_hat * mean(g * x_hat)), g = grad_output * {scale}.",
         "这是 grad_output * {scale} / rms，就好像均方根是常数；但它依赖这一行的每个 x，于是多出一项："
         "rstd * (g - x_hat * mean(g * x_hat))，其中 g = grad_output * {scale}。"),
        (rstd * (gs - gs.mean(dim=-1, keepdim=True) - x_hat * (gs * x_hat).mean(dim=-1, keepdim=True)),
         "layernorm-mean-term",
         "that has LayerNorm's mean term, - mean(g); RMSNorm subtracts no mean in forward, so its backward has no such "
         "term: rstd * (g - x_hat * mean(g * x_hat)).",
         "这里多了 LayerNorm 的均值项 - mean(g)；RMSNorm 的 forward 不减均值，所以 backward 也没有这一项："
         "rstd * (g - x_hat * mean(g * x_hat))。"),
        (rstd * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True)), "scale-forgotten-in-grad",
         "{scale} is missing from grad_x: the chain goes through y = x_hat * {scale}, so use g = grad_output * {scale}.",
         "grad_x 中少了 {scale}：链式法则要经过 y = x_hat * {scale}，所以要用 g = grad_output * {scale}。"),
        (rstd * (g * w - x_hat * (g * w * x_hat).mean(dim=-1, keepdim=True)) if one_plus() else
         rstd * (g * (1 + w) - x_hat * (g * (1 + w) * x_hat).mean(dim=-1, keepdim=True)), "scale-other-way",
         "grad_x went through the other scale; this RMSNorm multiplies x_hat by {scale}.",
         "grad_x 用了另一种缩放；这个 RMSNorm 是把 x_hat 乘以 {scale}。"),
    ]


GRAD_HINTS = {
    "sign": ("backward returns dL/d input itself; the minus sign of gradient descent belongs to the optimizer.",
             "backward 返回的就是 dL/d input 本身；梯度下降的负号属于优化器。"),
    "zero": ("backward returns zeros: is a gradient computed at all?", "backward 返回的全是 0：是否真的计算了梯度？"),
}


def judge_grads(submission, rng, which) -> None:
    by_hand_only(submission, rng)
    scale = verbatim("1 + weight" if one_plus() else "weight")
    for batch3 in (False, True):
        tensors, g = backward_inputs(rng, batch3)
        eps = 1e-9  # no eps, or eps outside the root, change grads by 5e-10 of their scale here: the eps check's to judge
        grads = raw_grads(submission, tensors, eps, g, by_hand=True)
        expected = vjp_expected(tensors, g, eps)
        if not all(i < len(grads) and isinstance(grads[i], torch.Tensor) and grads[i].shape == tensors[i].shape
                   for i in which):
            fail("backward's gradients do not have their inputs' shapes yet (see the shapes check above), so their "
                 "values cannot be compared.", "backward 返回的梯度形状还不对（见上面关于形状的检查），因此无法比较数值。",
                 key="no-comparable-gradient")
        if all(matches(grads[i], expected[i], rtol=1e-6, atol=1e-8, equal_nan=True) for i in which):
            continue
        ones = autograd_gradient(lambda x, w: reference(x, w, eps).sum(), tensors)
        jacobians = numerical_jacobian(lambda *t: submission.probe(function_values, FUNCTION, list(t), eps), tensors)
        numerical = [(g.reshape(-1) @ jac).reshape(t.shape) for jac, t in zip(jacobians, tensors)]
        forward_ok = all(torch.allclose(a, e, rtol=1e-4, atol=1e-6) for a, e in zip(numerical, expected))
        x, w = tensors
        for i in which:
            name, grad = NAMES[i], grads[i]
            if matches(grad, expected[i], rtol=1e-6, atol=1e-8, equal_nan=True):
                continue
            if matches(grad, ones[i], rtol=1e-6, atol=1e-8, equal_nan=True):
                fail("grad_{name} is what backward gives for grad_output = all ones: multiply by grad_output (chain "
                     "rule: dL/d input = grad_output times d out/d input).",
                     "grad_{name} 相当于 grad_output 全为 1 时的结果：要乘以 grad_output（链式法则：dL/d input = "
                     "grad_output 乘以 d out/d input）。", name=name, key="grad-output-ignored")
            if i == 0:
                for value, key, en, zh in grad_x_slips(x, w, g, eps):
                    if matches(grad, value, rtol=1e-6, atol=1e-8, equal_nan=True):
                        fail("grad_x is wrong: " + en, "grad_x 不对：" + zh, scale=scale, key=key)
            if i == 1:
                batch = tuple(range(x.dim() - 1))
                if matches(grad, g.sum(dim=batch), rtol=1e-6, atol=1e-8, equal_nan=True):
                    fail("grad_weight is grad_output summed over the batch: weight multiplies x_hat, so grad_weight sums "
                         "grad_output * x_hat.",
                         "grad_weight 是 grad_output 对 batch 的和：weight 乘的是 x_hat，所以 grad_weight 是对 "
                         "grad_output * x_hat 求和。", key="weight-grad-without-xhat")
            if not forward_ok and matches(grad, numerical[i], equal_nan=True):
                fail("grad_{name} matches finite differences of your forward, but your forward is not RMSNorm: fix "
                     "forward first (see the forward check).",
                     "grad_{name} 与对你的 forward 做有限差分的结果一致，但你的 forward 不是 RMSNorm：请先修正 forward"
                     "（见前面 forward 的检查）。", name=name, key="forward-wrong")
            expect_gradient(grad, expected[i], name, numerical=numerical[i] if forward_ok else None, rtol=1e-6,
                            atol=1e-8, hints=GRAD_HINTS)


@check("grad_x matches autograd through F.rms_norm and finite differences (float64)", points=2,
       zh="grad_x 与经过 F.rms_norm 的 autograd 以及有限差分一致（float64）", depends="backward_shapes")
def test_backward_x(submission, rng):
    judge_grads(submission, rng, [0])


@check("grad_weight matches autograd and finite differences (float64)", points=1,
       zh="grad_weight 与 autograd 以及有限差分一致（float64）", depends="backward_shapes")
def test_backward_weight(submission, rng):
    judge_grads(submission, rng, [1])


# -- by hand ------------------------------------------------------------------------------------

def by_hand_only(submission, rng) -> None:
    """Fail when forward called a built-in RMSNorm or backward called autograd, probed once per grading."""
    def probe_once():
        tensors, g = backward_inputs(rng)
        forward = submission.probe(function_forward, WRAPPER, tensors, 1e-6, what=what_of(tensors[0], tensors[1], 1e-6))
        backward = submission.probe(function_backward, FUNCTION, tensors, 1e-6, g, what=BACKWARD)
        return {"calls": forward["calls"], "autograd": backward.get("autograd", [])}

    seen = submission.once("by_hand", probe_once)
    by_hand_forward(seen, Text("RMSNormFunction.forward", "RMSNormFunction.forward"))
    if seen["autograd"]:
        fail("RMSNormFunction.backward calls {api}: it lets autograd differentiate the forward again instead of using "
             "the formula you derived.",
             "RMSNormFunction.backward 调用了 {api}：它让 autograd 再对 forward 求一次导，而不是用你推导的公式。",
             api=verbatim(f"`{seen['autograd'][0]}`"), key="backward-by-autograd")


@check("forward computes RMSNorm itself and backward its gradients itself (no F.rms_norm, no autograd)", points=1,
       zh="forward 自己计算 RMSNorm，backward 自己计算梯度（不用 F.rms_norm，也不用 autograd）",
       depends=("forward", "backward_x"))
def test_by_hand(submission, rng):
    by_hand_only(submission, rng)
