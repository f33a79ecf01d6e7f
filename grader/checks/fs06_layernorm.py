"""Hidden checks of fs06: LayerNorm from scratch, its forward and its backward by hand in an autograd.Function.

Forward: the judge draws inputs per seed (several shapes, two normalized dimensions, one row, a size-1 normalized
dimension, an empty batch; rows of nearly constant values and an exactly constant row, where eps decides) and
compares with torch's own `F.layer_norm` in float64. A wrong value is named only when it is what a known slip
computes, each computed here: the unbiased variance (torch.var's default), eps outside the square root or missing,
normalized over the wrong dimensions, weight and bias swapped or missing.

Backward: probes run the learner's forward on float64 inputs and call its backward directly
(`out.grad_fn.apply(grad_output)`: the raw values it returned, before the engine would sum a wrongly shaped
gradient). The judge compares those vector-Jacobian products with autograd through `F.layer_norm` (float64) and,
when they differ, with finite differences of the learner's own forward, and names the classic slips of the
derivation: the mean and the variance treated as constants, one of their two terms missing, grad_weight without
x_hat, grads of weight and bias swapped, a sign, grad_output ignored.

The built-ins are forbidden: forward must not call `F.layer_norm` (a TorchFunctionMode probe sees every spelling,
`nn.LayerNorm`, `torch.layer_norm`, `torch.native_layer_norm`), backward must not call autograd
(`torch.autograd.grad`, `.backward()`); a value computed so earns nothing (the ex05 rule), and the by-hand check
names it.

Kata variants: `variant("layout")` is where LayerNorm normalizes: over the last weight.dim() dimensions, as
F.layer_norm (weight shaped like them), or over the channels, dim 1 of [N, C, ...] (weight [C], as ConvNeXt's
channels-first LayerNorm); the inputs drawn, the reference and the messages follow it.
"""

import torch
import torch.nn.functional as F

from grader.checking import (Text, check, describe, expect_close, expect_tensor, explain, fail, function_backward,
                             function_forward, function_forwards, function_values, matches, variant, verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.gradients import autograd_gradient, expect_gradient, numerical_jacobian

NAMES = ("x", "weight", "bias")
FUNCTION = "LayerNormFunction"
WRAPPER = "layer_norm"

# -- judge-side helpers (the probes are grader/checking/function_probes.py's) ---------------------

def channels_first() -> bool:
    """Whether this draw normalizes over dim 1 (channels) instead of the last weight.dim() dimensions."""
    return variant("layout")["name"] == "channels_first"


def reference(x, w, b, eps):
    """F.layer_norm in float64, along this draw's dimensions."""
    x, w, b = x.double(), w.double(), b.double()
    if channels_first():
        return F.layer_norm(x.movedim(1, -1), w.shape, w, b, eps).movedim(-1, 1)
    return F.layer_norm(x, w.shape, w, b, eps)


def dims_of(x, w) -> tuple:
    return (1,) if channels_first() else tuple(range(x.dim() - w.dim(), x.dim()))


def affine(w, b, x):
    """weight and bias shaped to broadcast against x."""
    if channels_first():
        shape = [-1] + [1] * (x.dim() - 2)
        return w.reshape(shape), b.reshape(shape)
    return w, b


def normalize(x, dims, eps, unbiased=False, eps_outside=False, no_eps=False):
    x = x.double()
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, unbiased=unbiased) if x.numel() else x.sum(dim=dims, keepdim=True)
    if no_eps:
        return (x - mean) / var.sqrt()
    return (x - mean) / (var.sqrt() + eps) if eps_outside else (x - mean) / (var + eps).sqrt()


def slips(x, w, b, eps) -> list:
    """(value, key, English, Chinese) of the known forward slips, in float64."""
    dims = dims_of(x, w)
    wb, bb = affine(w.double(), b.double(), x)
    found = [
        (normalize(x, dims, eps, unbiased=True) * wb + bb, "unbiased-variance",
         "the variance is the unbiased one (divided by D - 1, torch.var's and x.std()'s default); LayerNorm divides "
         "by D: var(unbiased=False), or ((x - mean) ** 2).mean().",
         "方差用的是无偏估计（除以 D - 1，这是 torch.var 和 x.std() 的默认值）；LayerNorm 除以 D："
         "var(unbiased=False)，或 ((x - mean) ** 2).mean()。"),
        (normalize(x, dims, eps, eps_outside=True) * wb + bb, "eps-outside-sqrt",
         "eps was added outside the square root, (x - mean) / (sqrt(var) + eps); LayerNorm divides by "
         "sqrt(var + eps). On a row of nearly equal values the two differ a lot.",
         "eps 加在了平方根外面，即 (x - mean) / (sqrt(var) + eps)；LayerNorm 除以的是 sqrt(var + eps)。"
         "在数值几乎相等的行上，两者相差很大。"),
        (normalize(x, dims, eps) * bb + wb, "weight-bias-swapped",
         "weight and bias are swapped: y = x_hat * weight + bias.", "weight 和 bias 对调了：y = x_hat * weight + bias。"),
        (normalize(x, dims, eps), "no-affine",
         "that is x_hat alone: scale it by weight and shift it by bias.", "这只是 x_hat：还要乘以 weight、加上 bias。"),
        (normalize(x, dims, eps) * wb, "bias-forgotten", "the bias is not added.", "没有加上 bias。"),
    ]
    found = [(*slip, {}) for slip in found]
    if x.numel():
        found.append((normalize(x, tuple(range(x.dim())), eps) * wb + bb, "normalized-over-everything",
                      "the mean and the variance were taken over the whole tensor, batch included; LayerNorm takes them "
                      "per sample, over the dimensions {dims} only.",
                      "均值和方差是对整个 tensor（包括 batch）计算的；LayerNorm 对每个样本单独计算，只在维度 {dims} 上。",
                      {}))
    others = [(x.dim() - 1,)] if channels_first() else [(1,)] if x.dim() > 2 else []
    if not channels_first() and w.dim() > 1:
        others.append((x.dim() - 1,))
    for other in others:
        if other != dims and x.shape[other[0]] > 1:
            found.append((normalize(x, other, eps) * wb + bb, "wrong-dims",
                          "the statistics were taken over the dimension {got} instead of {dims}.",
                          "统计量是在维度 {got} 上计算的，而不是维度 {dims}。", {"got": list(other)}))
    return found


def by_hand_forward(info, what) -> None:
    used = forbidden_calls("layer_norm", info["calls"])
    if used:
        fail("{what} calls torch's own `{name}`, a normalisation that computes a layer norm (as F.layer_norm and "
             "nn.LayerNorm do): its values are torch's. Compute the mean, the variance and x_hat yourself.",
             "{what} 调用了 torch 自带的 `{name}`，这个归一化能算出 layer norm（和 F.layer_norm、nn.LayerNorm 一样）："
             "这些值是 torch 算的。请自己计算均值、方差和 x_hat。", what=what, name=verbatim(used[0]),
             key="builtin-layer-norm")


def expect_function(info, what) -> None:
    """The output came from the learner's LayerNormFunction (its grad_fn), not from autograd's own operations."""
    if info["node"] is None:
        other = info.get("node_other")
        fail("The output of {what} was not made by LayerNormFunction.apply{why}: forward must go through your "
             "Function, so that autograd calls your backward.",
             "{what} 的输出不是由 LayerNormFunction.apply 产生的{why}：forward 必须经过你的 Function，autograd 才会"
             "调用你的 backward。", what=what, why=Text(" (its grad_fn is {g})", "（它的 grad_fn 是 {g}）",
                                                       g=verbatim(other)) if other else "", key="not-through-function")


def draw_affine(rng, shape, dtype):
    w = (1 + 0.5 * torch.randn(shape, generator=rng)).to(dtype)
    b = (0.5 * torch.randn(shape, generator=rng)).to(dtype)
    return w, b


def forward_cases(rng):
    """(x, weight, bias) in float32: this draw's layouts, one sample, a size-1 normalized dimension, an empty
    batch. D is small (4 to 6), so that an unbiased variance is off by several percent."""
    d = int(torch.randint(4, 7, (), generator=rng))
    n = int(torch.randint(2, 5, (), generator=rng))
    f32 = torch.float32
    if channels_first():
        shapes = [((n, d), (d,)), ((n, d, 7), (d,)), ((2, d, 3, 7), (d,)), ((1, d, 7), (d,)), ((n, 1, 7), (1,)),
                  ((0, d, 7), (d,))]  # 7 > C: a weight broadcast against the last dimension fails loudly
    else:
        shapes = [((n, d), (d,)), ((2, 3, d), (d,)), ((n, 3, d), (3, d)), ((1, d), (d,)), ((n, 1), (1,)),
                  ((0, d), (d,))]
    cases = []
    for xs, ws in shapes:
        x = 2 * torch.randn(xs, generator=rng) + 1
        cases.append((x, *draw_affine(rng, ws, f32)))
    return cases


CHANNELS = Text("weight [C] does not line up with x [N, C, ...]: as it stands, it broadcasts against the last dimension. "
                "Here LayerNorm normalizes the channels, dim 1: take the mean and the variance over dim 1, and reshape "
                "weight and bias to [C, 1, ...].",
                "weight [C] 与 x [N, C, ...] 对不齐：直接使用时它会沿最后一维广播。这里 LayerNorm 归一化的是通道，"
                "即第 1 维：在第 1 维上求均值和方差，并把 weight 和 bias reshape 成 [C, 1, ...]。")


def what_of(x, w, eps=None) -> Text:
    args = f"x{list(x.shape)}, weight{list(w.shape)}, bias" + ("" if eps is None else f", eps={eps:.3g}")
    return Text("`layer_norm({args})`", "`layer_norm({args})`", args=verbatim(args))


def judge_forward(submission, x, w, b, eps, info=None) -> None:
    what = what_of(x, w, eps)
    with explain({"must match the size": CHANNELS} if channels_first() else {}, key="channels-not-broadcast"):
        if info is None or "raised" in info:
            info = submission.probe(function_forward, WRAPPER, [x, w, b], eps, what=what)
    by_hand_forward(info, what)
    out = expect_tensor(info["out"], what, shape=list(x.shape), floating=True)
    if out.dtype != x.dtype:
        fail("{what} returned {got} for {want} inputs: keep the input's dtype.",
             "{what} 对 {want} 的输入返回了 {got}：请保持输入的 dtype。", what=what,
             got=str(out.dtype).removeprefix("torch."), want=str(x.dtype).removeprefix("torch."), key="wrong-dtype")
    expected = reference(x, w, b, 1e-5 if eps is None else eps)
    if matches(out, expected, atol=1e-5, equal_nan=True):
        expect_function(info, what)
        return
    dims = list(dims_of(x, w))
    if eps is None:
        for other in (1e-6, 1e-8, 1e-12, float(torch.finfo(x.dtype).eps)):
            if matches(out, reference(x, w, b, other), atol=1e-5, equal_nan=True):
                fail("{what} uses eps={got:.3g} by default; the statement's default is eps=1e-5: write it in the "
                     "signature of forward (and of layer_norm).",
                     "{what} 默认使用 eps={got:.3g}；题目规定的默认值是 eps=1e-5：请写在 forward（以及 layer_norm）的签名里。",
                     what=what, got=other, key="default-eps")
    bad = ~torch.isfinite(out.double()) & torch.isfinite(expected)
    if bad.any():
        fail("{what} has NaN or inf where LayerNorm is finite: on a row of equal values the variance is 0, and "
             "(x - mean) / sqrt(var) is 0 / 0. eps is there for that: divide by sqrt(var + eps).",
             "{what} 在 LayerNorm 有限的位置出现了 NaN 或 inf：在数值全相等的行上方差为 0，(x - mean) / sqrt(var) "
             "就是 0 / 0。eps 正是为此而设：请除以 sqrt(var + eps)。", what=what, key="no-eps")
    for value, key, en, zh, extra in slips(x, w, b, 1e-5 if eps is None else eps):
        if matches(out, value, atol=1e-5, equal_nan=True):
            fail("{what} is wrong: " + en, "{what} 不对：" + zh, what=what, dims=dims, **extra, key=key)
    expect_close(out, expected, what, rtol=1e-4, atol=1e-5)


# -- forward ------------------------------------------------------------------------------------

@check("forward matches F.layer_norm on fresh inputs of several shapes (one row, a size-1 dimension, an empty batch)",
       points=2, zh="forward 在多种形状的随机输入上与 F.layer_norm 一致（只有一行、大小为 1 的维度、空 batch）")
def test_forward(submission, rng):
    # eps small enough that where it sits never shows at this tolerance (its rows have a spread of about 2): that
    # is test_eps's lesson, on rows where eps decides; here it changed the verdict with the draw
    eps = float(10 ** torch.empty(()).uniform_(-8, -7, generator=rng))
    cases = forward_cases(rng)
    infos = submission.probe(function_forwards, WRAPPER, [list(case) for case in cases], eps,
                             what=Text("`layer_norm`", "`layer_norm`"))
    for (x, w, b), info in zip(cases, infos):
        judge_forward(submission, x, w, b, eps, info=info)


@check("eps sits inside the square root: rows of nearly equal values and a constant row, the default eps included",
       points=1, zh="eps 在平方根里面：在数值几乎相等的行和常数行上，包括默认 eps", depends="forward")
def test_eps(submission, rng):
    d = int(torch.randint(4, 7, (), generator=rng))
    shape, wshape = ((4, d, 3), (d,)) if channels_first() else ((4, d), (d,))
    x = 0.5 + 1e-3 * torch.randn(shape, generator=rng, dtype=torch.float64)  # variance about 1e-6, below eps
    x[0] = 0.25  # an exactly constant sample: variance 0
    w, b = draw_affine(rng, wshape, torch.float64)
    judge_forward(submission, x, w, b, float(10 ** torch.empty(()).uniform_(-5, -3, generator=rng)))
    judge_forward(submission, x, w, b, None)


# -- ctx and backward ---------------------------------------------------------------------------

@check("forward keeps what backward needs with ctx.save_for_backward", points=1,
       zh="forward 用 ctx.save_for_backward 保存 backward 需要的东西", depends="forward")
def test_save_for_backward(submission, rng):
    x, w, b = forward_cases(rng)[0]
    what = what_of(x, w, 1e-5)
    info = submission.probe(function_forward, WRAPPER, [x.double(), w.double(), b.double()], 1e-5, what=what)
    expect_function(info, what)
    if info["tensor_attrs"]:
        fail("forward stores tensors as attributes of ctx ({attrs}): keep them with ctx.save_for_backward(...) and "
             "read them back with ctx.saved_tensors, so autograd can detect in-place changes and free them.",
             "forward 把 tensor 存成了 ctx 的属性（{attrs}）：请用 ctx.save_for_backward(...) 保存，"
             "在 backward 中用 ctx.saved_tensors 取回，这样 autograd 才能检测原地修改并及时释放内存。",
             attrs=verbatim(", ".join(f"ctx.{a}" for a in info["tensor_attrs"])), key="ctx-attributes")
    if info["n_saved"] == 0:
        fail("forward saved no tensor with ctx.save_for_backward, yet backward needs x_hat (or x), the variance and "
             "weight.", "forward 没有用 ctx.save_for_backward 保存任何 tensor，但 backward 需要 x_hat（或 x）、方差和 weight。",
             key="nothing-saved")


BACKWARD_CASES = ("rows", "batch3", "shape2d")  # [N, D]; [2, 3, D]; [2, 3, D] normalized over [3, D]


def backward_inputs(rng, case="rows"):
    """float64 (x, weight, bias) and grad_output for backward: small, never square, weight and bias far from 1 and 0;
    `case` one of BACKWARD_CASES (a layout normalizing the channels has one of its own)."""
    d = int(torch.randint(4, 6, (), generator=rng))
    if channels_first():
        shape, wshape = ((2, d, 3), (d,))
    else:
        shape, wshape = {"rows": ((3, d), (d,)), "batch3": ((2, 3, d), (d,)), "shape2d": ((2, 3, d), (3, d))}[case]
    x = 2 * torch.randn(shape, generator=rng, dtype=torch.float64) + 0.5
    w, b = draw_affine(rng, wshape, torch.float64)
    return [x, w, b], torch.randn(shape, generator=rng, dtype=torch.float64)


BACKWARD = Text("`LayerNormFunction.apply(x, weight, bias, eps)` and then its `backward(ctx, grad_output)`",
                "`LayerNormFunction.apply(x, weight, bias, eps)` 及其 `backward(ctx, grad_output)`")


def raw_grads(submission, tensors, eps, g, by_hand=False) -> list:
    info = submission.probe(function_backward, FUNCTION, tensors, eps, g, what=BACKWARD)
    if info["node"] is None:
        fail("LayerNormFunction.apply(x, weight, bias, eps) returned {got} without LayerNormFunction's grad_fn, so "
             "autograd cannot call your backward.",
             "LayerNormFunction.apply(x, weight, bias, eps) 返回了 {got}，没有 LayerNormFunction 的 grad_fn，"
             "autograd 无法调用你的 backward。", got=describe(info.get("out")), key="not-through-function")
    if by_hand and info["autograd"]:
        fail("LayerNormFunction.backward calls {api}: it lets autograd differentiate the forward again instead of "
             "using the formula you derived. Compute the gradients from grad_output and what forward saved.",
             "LayerNormFunction.backward 调用了 {api}：它让 autograd 再对 forward 求一次导，而不是用你推导的公式。"
             "请用 grad_output 和 forward 保存的张量计算梯度。", api=verbatim(f"`{info['autograd'][0]}`"),
             key="backward-by-autograd")
    return info["grads"]


@check("backward returns four values: grad_x, grad_weight and grad_bias shaped like their inputs, None for eps",
       points=1, zh="backward 返回四个值：形状与各自输入相同的 grad_x、grad_weight、grad_bias，以及 eps 对应的 None",
       depends="forward")
def test_backward_shapes(submission, rng):
    for case in BACKWARD_CASES:
        tensors, g = backward_inputs(rng, case)
        grads = raw_grads(submission, tensors, 1e-5, g)
        if len(grads) != 4:
            fail("LayerNormFunction.backward returned {n} value(s); forward takes four inputs after ctx (x, weight, "
                 "bias, eps), so backward returns four: (grad_x, grad_weight, grad_bias, None), None for the float eps.",
                 "LayerNormFunction.backward 返回了 {n} 个值；forward 在 ctx 之后有四个输入（x、weight、bias、eps），"
                 "所以 backward 要返回四个：(grad_x, grad_weight, grad_bias, None)，浮点数 eps 对应 None。",
                 n=len(grads), key="wrong-gradient-count")
        if grads[3] is not None:
            fail("The fourth value backward returns, the gradient of eps, should be None (eps is a float), got {got}.",
                 "backward 返回的第四个值，即 eps 的梯度，应为 None（eps 是浮点数），实际为 {got}。",
                 got=describe(grads[3]), key="eps-gradient")
        for name, grad, t in zip(NAMES, grads, tensors):
            label = f"grad_{name}"
            if not isinstance(grad, torch.Tensor):
                fail("{label} should be a tensor of {name}'s shape {want}, got {got}.",
                     "{label} 应是形状与 {name} 相同（{want}）的 tensor，实际为 {got}。", label=label, name=name,
                     want=list(t.shape), got=describe(grad), key="missing-gradient")
            if grad.shape != t.shape:
                if name != "x" and grad.shape == g.shape:
                    fail("{label} has the shape of grad_output, {got}, not {name}'s {want}: {name} was broadcast over "
                         "the batch in forward, so its gradient sums over every batch dimension.",
                         "{label} 的形状与 grad_output 相同（{got}），而不是 {name} 的 {want}：forward 中 {name} 沿 batch "
                         "广播了，所以它的梯度要对所有 batch 维度求和。", label=label, name=name, got=list(grad.shape),
                         want=list(t.shape), key="not-summed-over-batch")
                fail("{label} should have {name}'s shape {want}, got {got}{why}",
                     "{label} 的形状应与 {name} 相同，即 {want}，实际为 {got}{why}", label=label, name=name,
                     want=list(t.shape), got=list(grad.shape), why=Text(
                         ": it sums over some batch dimensions only; sum over all but the normalized ones.",
                         "：只对部分 batch 维度求了和；要对除被归一化的维度以外的所有维度求和。")
                     if grad.dim() > t.dim() and name != "x" else Text(".", "。"), key="wrong-shape")


def vjp_expected(tensors, g, eps) -> list:
    """dL/d input for L = sum(grad_output * layer_norm(...)), by autograd through F.layer_norm, float64."""
    return autograd_gradient(lambda x, w, b: (g * reference(x, w, b, eps)).sum(), tensors)


def grad_x_slips(x, w, g, eps) -> list:
    """(value, key, English, Chinese) of the known slips of grad_x, float64."""
    dims = dims_of(x, w)
    wb, _ = affine(w, w, x)
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    rstd = (var + eps).rsqrt()
    xhat = (x - mean) * rstd
    gw = g * wb
    return [
        (gw * rstd, "constant-statistics",
         "that is grad_output * weight / sqrt(var + eps), as if the mean and the variance were constants; they depend "
         "on every x of the row, which adds two terms: rstd * (g - mean(g) - x_hat * mean(g * x_hat)), g = "
         "grad_output * weight.",
         "这是 grad_output * weight / sqrt(var + eps)，就好像均值和方差是常数；但它们依赖这一行的每个 x，"
         "于是多出两项：rstd * (g - mean(g) - x_hat * mean(g * x_hat))，其中 g = grad_output * weight。"),
        (rstd * (gw - gw.mean(dim=dims, keepdim=True)), "variance-term-missing",
         "the mean's term is there but the variance's is missing: subtract x_hat * mean(g * x_hat) too.",
         "均值那一项有了，但少了方差那一项：还要减去 x_hat * mean(g * x_hat)。"),
        (rstd * (gw - xhat * (gw * xhat).mean(dim=dims, keepdim=True)), "mean-term-missing",
         "the variance's term is there but the mean's is missing: subtract mean(g) too.",
         "方差那一项有了，但少了均值那一项：还要减去 mean(g)。"),
        (rstd * (g - g.mean(dim=dims, keepdim=True) - xhat * (g * xhat).mean(dim=dims, keepdim=True)),
         "weight-forgotten", "weight is missing from grad_x: the chain goes through y = x_hat * weight, so use g = "
         "grad_output * weight.", "grad_x 中少了 weight：链式法则要经过 y = x_hat * weight，所以要用 g = grad_output * weight。"),
    ]


GRAD_HINTS = {
    "sign": ("backward returns dL/d input itself; the minus sign of gradient descent belongs to the optimizer.",
             "backward 返回的就是 dL/d input 本身；梯度下降的负号属于优化器。"),
    "zero": ("backward returns zeros: is a gradient computed at all?", "backward 返回的全是 0：是否真的计算了梯度？"),
}


def judge_grads(submission, rng, which) -> None:
    """The gradients `which` (indices into x, weight, bias) against autograd and finite differences, twice."""
    by_hand_only(submission, rng)
    for case in BACKWARD_CASES:
        tensors, g = backward_inputs(rng, case)
        eps = 1e-5
        grads = raw_grads(submission, tensors, eps, g, by_hand=True)
        expected = vjp_expected(tensors, g, eps)
        comparable = [i for i in which if i < len(grads) and isinstance(grads[i], torch.Tensor)
                      and grads[i].shape == tensors[i].shape]
        if len(comparable) < len(which):
            fail("backward's gradients do not have their inputs' shapes yet (see the shapes check above), so their "
                 "values cannot be compared.", "backward 返回的梯度形状还不对（见上面关于形状的检查），因此无法比较数值。",
                 key="no-comparable-gradient")
        if all(matches(grads[i], expected[i], rtol=1e-6, atol=1e-8, equal_nan=True) for i in which):
            continue
        ones = autograd_gradient(lambda x, w, b: reference(x, w, b, eps).sum(), tensors)
        jacobians = numerical_jacobian(lambda *t: submission.probe(function_values, FUNCTION, list(t), eps), tensors)
        numerical = [(g.reshape(-1) @ jac).reshape(t.shape) for jac, t in zip(jacobians, tensors)]
        forward_ok = all(torch.allclose(a, e, rtol=1e-4, atol=1e-6) for a, e in zip(numerical, expected))
        x, w, b = tensors
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
                        fail("grad_x is wrong: " + en, "grad_x 不对：" + zh, key=key)
            if i == 1 and matches(grad, expected[2], rtol=1e-6, atol=1e-8, equal_nan=True):
                fail("grad_weight is grad_output summed over the batch, the gradient of the bias: weight multiplies "
                     "x_hat, so grad_weight sums grad_output * x_hat.",
                     "grad_weight 是 grad_output 对 batch 的和，也就是 bias 的梯度：weight 乘的是 x_hat，所以 "
                     "grad_weight 是对 grad_output * x_hat 求和。", key="weight-grad-without-xhat")
            if i == 2 and matches(grad, expected[1], rtol=1e-6, atol=1e-8, equal_nan=True):
                fail("grad_bias is the gradient of the weight (grad_output * x_hat summed): the bias is added, so "
                     "grad_bias sums grad_output alone.",
                     "grad_bias 是 weight 的梯度（对 grad_output * x_hat 求和）：bias 是加上去的，所以 grad_bias "
                     "只对 grad_output 求和。", key="bias-grad-with-xhat")
            if not forward_ok and matches(grad, numerical[i], equal_nan=True):
                fail("grad_{name} matches finite differences of your forward, but your forward is not LayerNorm: fix "
                     "forward first (see the forward check).",
                     "grad_{name} 与对你的 forward 做有限差分的结果一致，但你的 forward 不是 LayerNorm：请先修正 forward"
                     "（见前面 forward 的检查）。", name=name, key="forward-wrong")
            expect_gradient(grad, expected[i], name, numerical=numerical[i] if forward_ok else None, rtol=1e-6,
                            atol=1e-8, hints=GRAD_HINTS)


@check("grad_x matches autograd through F.layer_norm and finite differences (float64)", points=2,
       zh="grad_x 与经过 F.layer_norm 的 autograd 以及有限差分一致（float64）", depends="backward_shapes")
def test_backward_x(submission, rng):
    judge_grads(submission, rng, [0])


@check("grad_weight and grad_bias match autograd and finite differences (float64)", points=2,
       zh="grad_weight 和 grad_bias 与 autograd 以及有限差分一致（float64）", depends="backward_shapes")
def test_backward_params(submission, rng):
    judge_grads(submission, rng, [1, 2])


# -- by hand ------------------------------------------------------------------------------------

def by_hand_only(submission, rng) -> None:
    """Fail when forward called a built-in LayerNorm or backward called autograd, probed once per grading."""
    def probe_once():
        tensors, g = backward_inputs(rng)
        forward = submission.probe(function_forward, WRAPPER, tensors, 1e-5, what=what_of(tensors[0], tensors[1], 1e-5))
        backward = submission.probe(function_backward, FUNCTION, tensors, 1e-5, g, what=BACKWARD)
        return {"calls": forward["calls"], "autograd": backward.get("autograd", [])}

    seen = submission.once("by_hand", probe_once)
    by_hand_forward(seen, Text("LayerNormFunction.forward", "LayerNormFunction.forward"))
    if seen["autograd"]:
        fail("LayerNormFunction.backward calls {api}: it lets autograd differentiate the forward again instead of "
             "using the formula you derived.",
             "LayerNormFunction.backward 调用了 {api}：它让 autograd 再对 forward 求一次导，而不是用你推导的公式。",
             api=verbatim(f"`{seen['autograd'][0]}`"), key="backward-by-autograd")


@check("forward computes LayerNorm itself and backward its gradients itself (no F.layer_norm, no autograd)",
       points=1, zh="forward 自己计算 LayerNorm，backward 自己计算梯度（不用 F.layer_norm，也不用 autograd）",
       depends=("forward", "backward_x"))
def test_by_hand(submission, rng):
    by_hand_only(submission, rng)

