"""Hidden checks of ex08: a custom torch.autograd.Function (a linear layer) and a straight-through round.

The learner's Functions live in the sandbox. Probes run their forward on inputs the judge drew and call
their backward directly (`out.grad_fn.apply(grad_output)`: the raw values backward returned, before the
autograd engine would quietly sum a wrongly shaped bias gradient). The judge compares those
vector-Jacobian products with autograd of a reference expression written here and with finite
differences of the learner's own forward, in float64 (what torch.autograd.gradcheck does).
"""

import torch

from grader.checking import check, describe, expect_close, expect_tensor, fail, probe
from grader.gradients import autograd_gradient, expect_gradient, numerical_jacobian

NAMES = ("x", "weight", "bias")


# -- probes (run in the sandbox) ---------------------------------------------------------------

def _function_class(module, name):
    fn = getattr(module, name, None)
    return fn if isinstance(fn, type) and issubclass(fn, torch.autograd.Function) else None


def _leaves(tensors, requires):
    return [None if t is None else t.detach().clone().requires_grad_(bool(r)) for t, r in zip(tensors, requires)]


def _tensor_attributes(node) -> list[str]:
    """Names of ctx attributes that hold tensors (directly or in a list/tuple/dict)."""
    names = []
    for key, value in vars(node).items():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, torch.Tensor) for v in items):
            names.append(key)
    return sorted(names)


def _call(module, name, tensors, requires):
    """Run `name`.apply on fresh leaves; return (info dict, output) where info describes the result."""
    fn = _function_class(module, name)
    if fn is None:
        value = getattr(module, name, None)
        return {"is_function": False, "what": type(value).__name__ if not isinstance(value, type) else value.__name__,
                "missing": value is None}, None
    out = fn.apply(*_leaves(tensors, requires))
    info = {"is_function": True, "out": out.detach() if isinstance(out, torch.Tensor) else out, "node": None}
    node = out.grad_fn if isinstance(out, torch.Tensor) else None
    if node is not None and hasattr(node, "_forward_cls"):
        info["node"] = type(node).__name__
        info["n_saved"] = sum(t is not None for t in node.saved_tensors)
        info["tensor_attrs"] = _tensor_attributes(node)
    return info, (out if info["node"] else None)


@probe
def run_forward(module, name, tensors, requires):
    """Forward only: the output and what forward left on ctx."""
    return _call(module, name, tensors, requires)[0]


@probe
def forward_values(module, name, tensors):
    """The output of `name`.apply on float64 inputs (for finite differences)."""
    fn = _function_class(module, name)
    with torch.no_grad():
        out = fn.apply(*tensors)
    return out if isinstance(out, torch.Tensor) else torch.full((1,), float("nan"), dtype=torch.float64)


@probe
def run_backward(module, name, tensors, requires, grad_output):
    """Forward, then the learner's backward called directly with grad_output: its raw return value."""
    info, out = _call(module, name, tensors, requires)
    if out is None:
        return info
    raw = out.grad_fn.apply(grad_output)
    info["returned"] = type(raw).__name__
    grads = raw if isinstance(raw, (tuple, list)) else (raw,)
    info["grads"] = [g.detach() if isinstance(g, torch.Tensor) else g for g in grads]
    return info


@probe
def quantize_in_loss(module, x, y, step):
    """q = fake_quantize(x, step), then the gradient of mean((q - y)^2) with respect to x."""
    leaf = x.detach().clone().requires_grad_(True)
    q = module.fake_quantize(leaf, step)
    if not isinstance(q, torch.Tensor):
        return {"q": q, "grad": None, "connected": False}
    if not q.requires_grad:
        return {"q": q.detach(), "grad": None, "connected": False}
    loss = ((q - y) ** 2).mean()
    (grad,) = torch.autograd.grad(loss, [leaf], allow_unused=True)
    return {"q": q.detach(), "grad": grad, "connected": True}


# -- judge-side helpers --------------------------------------------------------------------------

def draw_linear(rng, n, fin, fout, dtype=torch.float64, bias=True):
    x = torch.randn(n, fin, generator=rng, dtype=dtype)
    w = torch.randn(fout, fin, generator=rng, dtype=dtype)
    b = torch.randn(fout, generator=rng, dtype=dtype) if bias else None
    return [x, w, b]


def reference(x, w, b=None):
    out = x @ w.t()
    return out if b is None else out + b


def expect_function(info, name):
    if not info["is_function"]:
        if info.get("missing"):
            fail(f"Your file does not define `{name}`.", f"你的文件里没有定义 `{name}`。")
        fail(f"`{name}` should be a class deriving from torch.autograd.Function, got {info['what']}: "
             f"write `class {name}(torch.autograd.Function)` with static forward and backward.",
             f"`{name}` 应该是继承 torch.autograd.Function 的类，实际是 {info['what']}："
             f"请写 `class {name}(torch.autograd.Function)`，并定义静态方法 forward 和 backward。")


def expect_node(info, name):
    expect_function(info, name)
    out = info["out"]
    if not isinstance(out, torch.Tensor):
        fail(f"{name}.forward should return a tensor, got {describe(out)}.",
             f"{name}.forward 应返回一个 tensor，实际得到 {describe(out)}。")
    if info["node"] is None:
        fail(f"The output of {name}.apply has no grad_fn from your Function although its input requires grad: "
             "does forward return an input unchanged, or a detached tensor?",
             f"输入 requires_grad，但 {name}.apply 的输出没有来自你的 Function 的 grad_fn："
             "forward 是不是原样返回了输入，或返回了 detach 过的 tensor？")


def raw_grads(submission, name, tensors, requires, grad_output, what):
    """The learner's backward called directly; fail on a wrong count or a tensor/None mismatch."""
    info = submission.probe(run_backward, name, tensors, requires, grad_output, what=what)
    expect_node(info, name)
    grads, n = info["grads"], len(tensors)
    if len(grads) != n:
        got = "a single value" if info["returned"] not in ("tuple", "list") else f"{len(grads)} values"
        inputs = ", ".join(NAMES[:n]) if n == 3 else "x"
        fail(f"{name}.backward returned {got}; forward takes {n} input(s) ({inputs}), so backward must return "
             f"exactly {n}, one per input (None where there is no gradient).",
             f"{name}.backward 返回了 {len(grads)} 个值；forward 有 {n} 个输入（{inputs}），backward 必须恰好返回 "
             f"{n} 个，每个输入一个（没有梯度的位置返回 None）。")
    return grads


def expect_grad_shape(grad, name, tensor, n):
    """A gradient that must exist: not None, a tensor of the input's shape, with a named cause if not."""
    label = f"grad_{name}"
    if grad is None:
        fail(f"backward returned None for {label}, although {name} requires grad: compute it "
             f"(ctx.needs_input_grad is True for it).",
             f"{name} 需要梯度，但 backward 为 {label} 返回了 None：请计算它（它的 ctx.needs_input_grad 为 True）。")
    if not isinstance(grad, torch.Tensor):
        fail(f"{label} should be a tensor, got {describe(grad)}.", f"{label} 应该是 tensor，实际得到 {describe(grad)}。")
    want, got = list(tensor.shape), list(grad.shape)
    if got == want:
        return
    if name == "bias" and got[-len(want):] == want and len(got) > len(want):
        fail(f"grad_bias has shape {got} but bias has shape {want}: the bias was broadcast over the {n} rows in "
             "forward, so backward must un-broadcast it: sum grad_output over the batch dimension.",
             f"grad_bias 的形状是 {got}，而 bias 的形状是 {want}：forward 里 bias 被广播到了 {n} 行上，"
             "backward 必须做 un-broadcast：把 grad_output 沿 batch 维度求和。")
    if len(got) == 2 and got[::-1] == want:
        fail(f"grad_{name} has shape {got}, the transpose of {name}'s shape {want}: is it transposed? "
             "Check the order of the matrix product.",
             f"grad_{name} 的形状是 {got}，正好是 {name} 形状 {want} 的转置：是不是转置了？检查矩阵乘法的顺序。")
    fail(f"grad_{name} should have the shape of {name}, {want}, got {got}.",
         f"grad_{name} 的形状应与 {name} 相同，即 {want}，实际为 {got}。")


GRAD_HINTS = {
    "sign": ("backward returns dL/d input itself; the minus sign of gradient descent belongs to the optimizer, not to backward.",
             "backward 返回的就是 dL/d input 本身；梯度下降的负号属于优化器，不属于 backward。"),
    "factor": ("A stray constant: the linear layer's gradients need no factor (no 2, no 1/N).",
               "多了一个常数：线性层的梯度不需要任何因子（没有 2，也没有 1/N）。"),
    "zero": ("backward returns zeros: is a gradient computed at all?", "backward 返回的全是 0：是否真的计算了梯度？"),
    "transpose": ("Check the order of the matrix product (which side is transposed).",
                  "检查矩阵乘法的顺序（哪一边需要转置）。"),
}


# -- LinearFunction ----------------------------------------------------------------------------------

@check("LinearFunction.apply computes x @ weight.T + bias", points=1, zh="LinearFunction.apply 计算 x @ weight.T + bias")
def test_linear_forward(submission, rng):
    for dtype, bias in ((torch.float32, True), (torch.float64, False)):
        tensors = draw_linear(rng, 6, 4, 3, dtype=dtype, bias=bias)
        info = submission.probe(run_forward, "LinearFunction", tensors, [True, True, bias],
                                what=f"`LinearFunction.apply(x, weight, {'bias' if bias else 'None'})`")
        expect_node(info, "LinearFunction")
        what = f"LinearFunction.apply(x, weight, {'bias' if bias else 'None'})"
        out = expect_tensor(info["out"], what, shape=[6, 3], dtype=dtype)
        expect_close(out, reference(*tensors), what, rtol=1e-5, atol=1e-5, hints={
            "transpose": ("Use x @ weight.T: weight has shape [out, in].", "应为 x @ weight.T：weight 的形状是 [out, in]。")})


@check("forward keeps tensors with ctx.save_for_backward", points=1, zh="forward 用 ctx.save_for_backward 保存 tensor")
def test_save_for_backward(submission, rng):
    tensors = draw_linear(rng, 5, 4, 3)
    info = submission.probe(run_forward, "LinearFunction", tensors, [True, True, True],
                            what="`LinearFunction.apply(x, weight, bias)`")
    expect_node(info, "LinearFunction")
    if info["tensor_attrs"]:
        attrs = ", ".join(f"ctx.{a}" for a in info["tensor_attrs"])
        fail(f"forward stores tensors as attributes of ctx ({attrs}): keep them with ctx.save_for_backward(...) and "
             "read them back with ctx.saved_tensors, so autograd can detect in-place changes and free them.",
             f"forward 把 tensor 存成了 ctx 的属性（{attrs}）：请用 ctx.save_for_backward(...) 保存，"
             "在 backward 中用 ctx.saved_tensors 取回，这样 autograd 才能检测原地修改并及时释放内存。")
    if info["n_saved"] == 0:
        fail("forward saved no tensor with ctx.save_for_backward, yet backward needs x and weight.",
             "forward 没有用 ctx.save_for_backward 保存任何 tensor，但 backward 需要 x 和 weight。")


@check("backward returns one gradient per input, shaped like the input", points=2,
       zh="backward 为每个输入返回一个梯度，形状与输入相同")
def test_backward_shapes(submission, rng):
    for n, fin, fout in ((5, 4, 3), (1, 2, 6)):
        tensors = draw_linear(rng, n, fin, fout)
        g = torch.randn(n, fout, generator=rng, dtype=torch.float64)
        grads = raw_grads(submission, "LinearFunction", tensors, [True, True, True], g,
                          "`LinearFunction.apply(...)` then its `backward(ctx, grad_output)`")
        for name, grad, t in zip(NAMES, grads, tensors):
            expect_grad_shape(grad, name, t, n)


def _ones_vjp_match(grad, tensors, index):
    """True when `grad` is what backward gives with grad_output replaced by ones (the chain rule's first factor dropped)."""
    ones = autograd_gradient(lambda *t: reference(*t).sum(), tensors)[index]
    return grad.shape == ones.shape and torch.allclose(grad.double(), ones, rtol=1e-4, atol=1e-6)


@check("backward's gradients match finite differences and autograd (float64)", points=2,
       zh="backward 的梯度与有限差分和 autograd 一致（float64）")
def test_backward_values(submission, rng):
    for n, fin, fout in ((4, 3, 2), (3, 3, 3)):
        tensors = draw_linear(rng, n, fin, fout)
        g = torch.randn(n, fout, generator=rng, dtype=torch.float64)
        grads = raw_grads(submission, "LinearFunction", tensors, [True, True, True], g,
                          "`LinearFunction.apply(...)` then its `backward(ctx, grad_output)`")
        for name, grad, t in zip(NAMES, grads, tensors):
            expect_grad_shape(grad, name, t, n)
        # L = sum(grad_output * out), so dL/d input is exactly the vector-Jacobian product backward must return.
        expected = autograd_gradient(lambda *t: (g * reference(*t)).sum(), tensors)
        jacobians = numerical_jacobian(lambda *t: submission.probe(forward_values, "LinearFunction", list(t)), tensors)
        numerical = [(g.reshape(-1) @ jac).reshape(t.shape) for jac, t in zip(jacobians, tensors)]
        forward_ok = all(torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(numerical, expected))
        for i, (name, grad) in enumerate(zip(NAMES, grads)):
            if torch.allclose(grad.double(), expected[i], rtol=1e-4, atol=1e-6):
                continue
            if _ones_vjp_match(grad, tensors, i):
                fail(f"grad_{name} is the gradient you would get for grad_output = all ones: backward must multiply "
                     "by grad_output (chain rule: dL/d input = grad_output times d out/d input).",
                     f"grad_{name} 相当于 grad_output 全为 1 时的结果：backward 必须乘上 grad_output"
                     "（链式法则：dL/d input = grad_output 乘以 d out/d input）。")
            if not forward_ok:
                fail("Finite differences of your forward disagree with x @ weight.T + bias: fix forward first.",
                     "对你的 forward 做有限差分，结果与 x @ weight.T + bias 不一致：请先修正 forward。")
            expect_gradient(grad, expected[i], name, numerical=numerical[i], hints=GRAD_HINTS)


@check("backward returns None where ctx.needs_input_grad is False", points=1,
       zh="ctx.needs_input_grad 为 False 的位置，backward 返回 None")
def test_needs_input_grad(submission, rng):
    cases = (((True, False, False), True), ((False, True, True), True), ((True, True, False), False))
    for requires, bias in cases:
        tensors = draw_linear(rng, 4, 3, 2, bias=bias)
        g = torch.randn(4, 2, generator=rng, dtype=torch.float64)
        args = "x, weight, " + ("bias" if bias else "None")
        grads = raw_grads(submission, "LinearFunction", tensors, list(requires), g,
                          f"`LinearFunction.backward` after `apply({args})`")
        for name, grad, need, t in zip(NAMES, grads, requires, tensors):
            if need:
                expect_grad_shape(grad, name, t, 4)
            elif grad is not None:
                why = "bias is None" if t is None else f"{name} does not require grad"
                why_zh = "bias 是 None" if t is None else f"{name} 不需要梯度"
                fail(f"backward returned a tensor for grad_{name} although {why} (inputs requiring grad: "
                     f"{', '.join(nm for nm, r in zip(NAMES, requires) if r)}): test ctx.needs_input_grad and "
                     "return None there, which skips the work.",
                     f"{why_zh}，backward 却为 grad_{name} 返回了 tensor（需要梯度的输入："
                     f"{', '.join(nm for nm, r in zip(NAMES, requires) if r)}）：请检查 ctx.needs_input_grad，"
                     "在该位置返回 None，省去这部分计算。")


# -- RoundSTE and fake_quantize ----------------------------------------------------------------------

def draw_reals(rng, n=12, scale=3.0):
    x = torch.randn(n, generator=rng) * scale
    frac = x - x.floor()
    return torch.where((frac - 0.5).abs() < 1e-3, x + 0.1, x)  # no ties: rounding half-way is not the lesson


@check("RoundSTE.forward rounds to the nearest integer", points=1, zh="RoundSTE.forward 四舍五入到最近的整数")
def test_round_forward(submission, rng):
    x = draw_reals(rng)
    info = submission.probe(run_forward, "RoundSTE", [x], [True], what="`RoundSTE.apply(x)`")
    expect_node(info, "RoundSTE")
    out = expect_tensor(info["out"], "RoundSTE.apply(x)", shape=list(x.shape), floating=True)
    expected = torch.round(x)
    if torch.equal(out.double(), x.double()):
        fail("RoundSTE.apply(x) returned x unchanged: forward must round (only backward pretends it is the identity).",
             "RoundSTE.apply(x) 原样返回了 x：forward 必须取整（只有 backward 才假装它是恒等映射）。")
    for other, name in ((torch.floor, "floor"), (torch.ceil, "ceil"), (torch.trunc, "trunc")):
        if not torch.equal(out.double(), expected.double()) and torch.equal(out.double(), other(x).double()):
            fail(f"RoundSTE.apply(x) equals torch.{name}(x), not the nearest integer: use torch.round.",
                 f"RoundSTE.apply(x) 等于 torch.{name}(x)，而不是最近的整数：请用 torch.round。")
    expect_close(out, expected, "RoundSTE.apply(x)", rtol=0, atol=1e-6)


@check("RoundSTE.backward passes grad_output straight through", points=1,
       zh="RoundSTE.backward 把 grad_output 原样传回（直通）")
def test_round_backward(submission, rng):
    x = draw_reals(rng)
    g = torch.randn(x.shape, generator=rng)
    grads = raw_grads(submission, "RoundSTE", [x], [True], g, "`RoundSTE.apply(x)` then its `backward(ctx, grad_output)`")
    grad = grads[0]
    if grad is None:
        fail("RoundSTE.backward returned None: x would get no gradient. A straight-through estimator returns "
             "grad_output unchanged.",
             "RoundSTE.backward 返回了 None：x 将得不到梯度。直通估计器应原样返回 grad_output。")
    grad = expect_tensor(grad, "RoundSTE.backward's gradient", shape=list(x.shape), floating=True)
    expect_close(grad, g, "RoundSTE.backward(ctx, grad_output)", hints={
        "zero": ("That is torch.round's true gradient, which is why a loss through round cannot train: "
                 "the straight-through estimator returns grad_output instead.",
                 "这正是 torch.round 真实的梯度，所以经过 round 的损失无法训练：直通估计器应返回 grad_output。"),
        "sign": ("Return grad_output itself, not its negative.", "直接返回 grad_output，不要取负。")})


@check("fake_quantize rounds to multiples of step and lets a loss train x", points=1,
       zh="fake_quantize 取整到 step 的倍数，且损失的梯度能传到 x")
def test_fake_quantize(submission, rng):
    step = float(torch.empty(()).uniform_(0.2, 0.8, generator=rng))
    x = draw_reals(rng, 10) * step
    y = torch.randn(10, generator=rng)
    result = submission.probe(quantize_in_loss, x, y, step, what=f"`fake_quantize(x, {step:.3g})` in a loss")
    q_expected = torch.round(x / step) * step
    q = expect_tensor(result["q"], f"fake_quantize(x, {step:.3g})", shape=[10], floating=True)
    if not torch.allclose(q, q_expected, atol=1e-5) and torch.allclose(q * step, q_expected, atol=1e-5):
        fail(f"fake_quantize(x, {step:.3g}) returned round(x / step), the number of steps: multiply it back by step "
             "to get a value on the scale of x.",
             f"fake_quantize(x, {step:.3g}) 返回的是 round(x / step)，即步数：要再乘回 step，才能回到 x 的尺度。")
    if torch.allclose(q, torch.round(x), atol=1e-5) and not torch.allclose(q, q_expected, atol=1e-5):
        fail(f"fake_quantize(x, {step:.3g}) rounded to integers: divide by step, round, then multiply by step.",
             f"fake_quantize(x, {step:.3g}) 取整到了整数：应先除以 step，取整，再乘回 step。")
    expect_close(q, q_expected, f"fake_quantize(x, {step:.3g})", rtol=1e-5, atol=1e-5, hints={
        "factor": ("Multiply the rounded value back by step.", "取整后要再乘回 step。")})
    if not result["connected"]:
        fail("The output of fake_quantize does not require grad: a loss through it cannot reach x. "
             "Do not detach; use RoundSTE.apply.",
             "fake_quantize 的输出不需要梯度：经过它的损失无法传到 x。不要 detach，请使用 RoundSTE.apply。")
    # The straight-through reference: round in the forward value, identity in the gradient.
    expected = autograd_gradient(lambda v: ((v + (q_expected.double() - v).detach() - y.double()) ** 2).mean(), [x])[0]
    grad = result["grad"]
    if grad is None or (isinstance(grad, torch.Tensor) and not grad.abs().gt(0).any()):
        fail("The gradient of mean((fake_quantize(x, step) - y)^2) with respect to x is all zeros (or None), as "
             "torch.round's own gradient would give (0 almost everywhere): round with RoundSTE.apply, whose backward "
             "passes the gradient straight through.",
             "mean((fake_quantize(x, step) - y)^2) 对 x 的梯度全为 0（或 None），这正是 torch.round 自身梯度"
             "（几乎处处为 0）的结果：请用 RoundSTE.apply 取整，它的 backward 让梯度直通。")
    expect_gradient(grad, expected, "x", hints={
        "factor": ("The straight-through gradient of fake_quantize is exactly 1: step / step cancels.",
                   "fake_quantize 的直通梯度恰好为 1：除以 step 再乘以 step 相互抵消。")})
