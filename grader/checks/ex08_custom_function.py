"""Hidden checks of ex08: a custom torch.autograd.Function (a linear layer) and a straight-through round.

The learner's Functions live in the sandbox. Probes run their forward on inputs the judge drew and call
their backward directly (`out.grad_fn.apply(grad_output)`: the raw values backward returned, before the
autograd engine would quietly sum a wrongly shaped bias gradient). The judge compares those
vector-Jacobian products with autograd of a reference expression written here and with finite
differences of the learner's own forward, in float64 (what torch.autograd.gradcheck does).

One mistake, one lesson: the count and the shapes of backward's results are one check's lesson, so the
value and needs_input_grad checks judge the gradients that came back with the right shape; fake_quantize
is judged with a correct straight-through round in place of the learner's RoundSTE, whose own checks
come first.

Kata variants: `variant("layout")` stores weight as nn.Linear does, [out, in] (x @ weight.T), or as [in, out]
(x @ weight); the inputs drawn, the reference expression and the messages follow it.
"""

from contextlib import nullcontext

import torch

from grader.checking import (Text, check, describe, expect_close, expect_tensor, fail, matches, patched, probe, variant,
                             tensor_attributes, verbatim, watching_autograd)
from grader.gradients import autograd_gradient, expect_gradient, numerical_jacobian

NAMES = ("x", "weight", "bias")


# -- probes (run in the sandbox) ---------------------------------------------------------------

def _function_class(module, name):
    fn = getattr(module, name)  # a name the file lacks is reported as such by the judge
    return fn if isinstance(fn, type) and issubclass(fn, torch.autograd.Function) else None


def _leaves(tensors, requires):
    return [None if t is None else t.detach().clone().requires_grad_(bool(r)) for t, r in zip(tensors, requires)]


def _call(module, name, tensors, requires):
    """Run `name`.apply on fresh leaves; return (info dict, output) where info describes the result."""
    fn = _function_class(module, name)
    if fn is None:
        value = getattr(module, name)
        return {"is_function": False, "what": value.__name__ if isinstance(value, type) else type(value).__name__}, None
    out = fn.apply(*_leaves(tensors, requires))
    info = {"is_function": True, "out": out.detach() if isinstance(out, torch.Tensor) else out, "node": None}
    node = out.grad_fn if isinstance(out, torch.Tensor) else None
    if node is not None and hasattr(node, "_forward_cls"):
        info["node"] = type(node).__name__
        info["n_saved"] = sum(t is not None for t in node.saved_tensors)
        info["tensor_attrs"] = tensor_attributes(node)
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
    used: list[str] = []  # autograd's own gradient functions, called from inside the learner's backward
    with watching_autograd(module, used):
        raw = out.grad_fn.apply(grad_output)
    info["autograd"] = used
    info["returned"] = type(raw).__name__
    grads = raw if isinstance(raw, (tuple, list)) else (raw,)
    info["grads"] = [g.detach() if isinstance(g, torch.Tensor) else g for g in grads]
    return info


class StraightThroughRound(torch.autograd.Function):
    """A correct RoundSTE, put in place of the learner's while fake_quantize is judged."""

    calls = 0

    @staticmethod
    def forward(ctx, x):
        StraightThroughRound.calls += 1
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


@probe
def quantize_in_loss(module, x, y, step):
    """q = fake_quantize(x, step) with a correct RoundSTE, then the gradient of mean((q - y)^2) for x."""
    leaf = x.detach().clone().requires_grad_(True)
    StraightThroughRound.calls = 0
    with patched(module, module, "RoundSTE", StraightThroughRound) if hasattr(module, "RoundSTE") else nullcontext():
        q = module.fake_quantize(leaf, step)
    out = {"q": q.detach() if isinstance(q, torch.Tensor) else q, "grad": None,
           "connected": isinstance(q, torch.Tensor) and q.requires_grad, "used_ste": StraightThroughRound.calls > 0}
    if out["connected"]:
        (out["grad"],) = torch.autograd.grad(((q - y) ** 2).mean(), [leaf], allow_unused=True)
    return out


# -- judge-side helpers --------------------------------------------------------------------------

def stored_transposed() -> bool:
    """Whether this draw stores weight as [in, out] (x @ weight), not nn.Linear's [out, in] (x @ weight.T)."""
    return variant("layout")["name"] == "in_out"


def draw_linear(rng, n, fin, fout, dtype=torch.float64, bias=True):
    x = torch.randn(n, fin, generator=rng, dtype=dtype)
    w = torch.randn(*((fin, fout) if stored_transposed() else (fout, fin)), generator=rng, dtype=dtype)
    b = torch.randn(fout, generator=rng, dtype=dtype) if bias else None
    return [x, w, b]


def reference(x, w, b=None):
    out = x @ w if stored_transposed() else x @ w.t()
    return out if b is None else out + b


def formula() -> Text:
    """The forward of this draw, as the statement writes it."""
    return verbatim(variant("layout")["math"] + " + bias")


BACKWARD = Text("`LinearFunction.apply(...)` and then its `backward(ctx, grad_output)`",
                "`LinearFunction.apply(...)` 及其 `backward(ctx, grad_output)`")


def expect_node(info, name):
    """The learner's `name` is a Function whose output carries its backward."""
    if not info["is_function"]:
        fail("`{name}` should be a class deriving from torch.autograd.Function, got `{what}`: write "
             "`class {name}(torch.autograd.Function)` with static forward and backward.",
             "`{name}` 应该是继承 torch.autograd.Function 的类，实际是 `{what}`：请写 "
             "`class {name}(torch.autograd.Function)`，并定义静态方法 forward 和 backward。",
             name=name, what=info["what"], key="not-a-function")
    out = info["out"]
    if not isinstance(out, torch.Tensor):
        fail("{name}.forward should return a tensor, got {got}.", "{name}.forward 应返回一个 tensor，实际得到 {got}。",
             name=name, got=describe(out), key="not-a-tensor")
    if info["node"] is None:
        if not out.is_floating_point():
            fail("{name}.forward returns a tensor of dtype {dtype}: autograd gives integer tensors no gradient, so "
                 "your backward can never run. Keep the floating-point dtype (torch.round keeps it; leave out "
                 ".long() and .int()).",
                 "{name}.forward 返回的 tensor 的 dtype 是 {dtype}：autograd 不为整数 tensor 计算梯度，你的 backward "
                 "永远不会被调用。请保持浮点 dtype（torch.round 会保持它；不要加 .long() 或 .int()）。",
                 name=name, dtype=str(out.dtype).removeprefix("torch."), key="integer-output")
        fail("The output of {name}.apply has no grad_fn from your Function although its input requires grad, so "
             "autograd cannot call your backward.",
             "输入 requires_grad，但 {name}.apply 的输出没有来自你的 Function 的 grad_fn，autograd 无法调用你的 backward。",
             name=name, key="no-grad-fn")


def raw_grads(submission, name, tensors, requires, grad_output, what, by_hand: bool = False):
    """The learner's backward called directly: the list of what it returned (the count is not judged here).
    With `by_hand`, fail when that backward had autograd compute the gradients."""
    info = submission.probe(run_backward, name, tensors, requires, grad_output, what=what)
    expect_node(info, name)
    if by_hand and info.get("autograd"):
        fail("{name}.backward calls {api}: it lets autograd differentiate a forward again instead of computing the "
             "gradients itself. Derive them by hand from grad_output and what forward saved (matrix products), as "
             "the statement asks.",
             "{name}.backward 调用了 {api}：它让 autograd 再对 forward 求一次导，而不是自己计算梯度。请按题目要求，"
             "用 grad_output 和 forward 保存的张量手工推导梯度（矩阵乘法）。",
             name=name, api=verbatim(f"`{info['autograd'][0]}`"), key="backward-by-autograd")
    return info["grads"]


def expect_count(grads, n):
    """backward returns exactly one value per forward input."""
    if len(grads) != n:
        fail("LinearFunction.backward returned {got} value(s); forward takes {n} inputs (x, weight, bias), so backward "
             "must return exactly {n}, one per input (None where there is no gradient).",
             "LinearFunction.backward 返回了 {got} 个值；forward 有 {n} 个输入（x、weight、bias），backward 必须恰好返回 "
             "{n} 个，每个输入一个（没有梯度的位置返回 None）。", got=len(grads), n=n, key="wrong-gradient-count")


def expect_order(grads, tensors):
    """Gradients with the shapes of the inputs, but in another order."""
    shapes = [list(t.shape) for t in tensors]
    got = [list(g.shape) if isinstance(g, torch.Tensor) else None for g in grads]
    if got != shapes and sorted(map(str, got)) == sorted(map(str, shapes)):
        fail("backward's gradients have the shapes {got}, those of the inputs in another order: return them in the "
             "order of forward's inputs, (grad_x, grad_weight, grad_bias).",
             "backward 返回的梯度形状是 {got}，正是各输入的形状，但顺序不对：请按 forward 输入的顺序返回 "
             "(grad_x, grad_weight, grad_bias)。", got=got, key="swapped")


def by_shape(grads, tensors) -> list:
    """The returned gradients put in the order of the inputs whose shapes they have (the inputs' shapes all
    differ), missing ones None; as returned when a gradient has none of those shapes."""
    shapes = [None if t is None else t.shape for t in tensors]
    ordered = [None] * len(tensors)
    for g in grads:
        if g is None:
            continue
        if not isinstance(g, torch.Tensor) or g.shape not in shapes or ordered[shapes.index(g.shape)] is not None:
            return list(grads)
        ordered[shapes.index(g.shape)] = g
    return ordered


def expect_grad_shape(grad, name, tensor, n):
    """A gradient that must exist: not None, a tensor of the input's shape, with a named cause if not."""
    label = f"grad_{name}"
    if grad is None:
        fail("backward returned None for {label}, although {name} requires grad: compute it (ctx.needs_input_grad "
             "is True for it).",
             "{name} 需要梯度，但 backward 为 {label} 返回了 None：请计算它（它的 ctx.needs_input_grad 为 True）。",
             label=label, name=name, key="missing-gradient")
    if not isinstance(grad, torch.Tensor):
        fail("{label} should be a tensor, got {got}.", "{label} 应该是 tensor，实际得到 {got}。",
             label=label, got=describe(grad), key="not-a-tensor")
    want, got = list(tensor.shape), list(grad.shape)
    if got == want:
        return
    if name == "bias" and got[-len(want):] == want and len(got) > len(want):
        fail("grad_bias has shape {got} but bias has shape {want}: the bias was broadcast over the {n} rows in "
             "forward, so backward must un-broadcast it: sum grad_output over the batch dimension.",
             "grad_bias 的形状是 {got}，而 bias 的形状是 {want}：forward 里 bias 被广播到了 {n} 行上，"
             "backward 必须把广播还原：把 grad_output 沿 batch 维度求和。", got=got, want=want, n=n,
             key="bias-not-unbroadcast")
    if len(got) == 2 and got[::-1] == want:
        fail("{label} has shape {got}, the transpose of {name}'s shape {want}: is it transposed? Check the order of "
             "the matrix product.",
             "{label} 的形状是 {got}，正好是 {name} 形状 {want} 的转置：是不是转置了？检查矩阵乘法的顺序。",
             label=label, name=name, got=got, want=want, key="transpose")
    fail("{label} should have the shape of {name}, {want}, got {got}.",
         "{label} 的形状应与 {name} 相同，即 {want}，实际为 {got}。", label=label, name=name, want=want, got=got,
         key="wrong-shape")


GRAD_HINTS = {
    "sign": ("backward returns dL/d input itself; the minus sign of gradient descent belongs to the optimizer, "
             "not to backward.",
             "backward 返回的就是 dL/d input 本身；梯度下降的负号属于优化器，不属于 backward。"),
    "factor 1/N": ("The gradients of weight and bias sum over the N rows of the batch; backward does not average them.",
                   "weight 和 bias 的梯度是对 batch 的 N 行求和；backward 不应该求平均。"),
    "factor": ("A stray constant: the linear layer's gradients need no factor (no 2, no 1/N).",
               "多了一个常数：线性层的梯度不需要任何因子（没有 2，也没有 1/N）。"),
    "zero": ("backward returns zeros: is a gradient computed at all?", "backward 返回的全是 0：是否真的计算了梯度？"),
    "transpose": ("Check the order of the matrix product (which side is transposed).",
                  "检查矩阵乘法的顺序（哪一边需要转置）。"),
}


# -- LinearFunction ----------------------------------------------------------------------------------

@check("LinearFunction.apply computes the statement's linear layer", points=1, zh="LinearFunction.apply 计算题目给出的线性层")
def test_linear_forward(submission, rng):
    for (n, fin, fout), dtype, bias in (((6, 4, 3), torch.float32, True), ((1, 3, 1), torch.float64, False)):
        tensors = draw_linear(rng, n, fin, fout, dtype=dtype, bias=bias)
        wshape = ", ".join(map(str, tensors[1].shape))
        what = f"LinearFunction.apply(x[{n}, {fin}], weight[{wshape}], {f'bias[{fout}]' if bias else 'None'})"
        info = submission.probe(run_forward, "LinearFunction", tensors, [True, True, bias], what=f"`{what}`")
        expect_node(info, "LinearFunction")
        got = list(info["out"].shape)
        if got != [n, fout] and [s for s in got if s != 1] == [s for s in (n, fout) if s != 1]:
            fail("`{what}` should have shape {want}, got {got}: a size-1 dimension is gone. Did a squeeze() drop it "
                 "(one sample, or one output)?",
                 "`{what}` 的形状应为 {want}，实际为 {got}：少了一个大小为 1 的维度。是不是 squeeze() 把它去掉了"
                 "（只有一个样本，或只有一个输出时）？", what=what, want=[n, fout], got=got, key="squeezed")
        out = expect_tensor(info["out"], f"`{what}`", shape=[n, fout], dtype=dtype)
        layout = variant("layout")
        expect_close(out, reference(*tensors), f"`{what}`", rtol=1e-5, atol=1e-5, hints={
            "transpose": Text("Use {math}: weight has shape {shape}.", "应为 {math}：weight 的形状是 {shape}。",
                              math=verbatim(layout["math"]), shape=verbatim(layout["shape"]))})


@check("forward keeps tensors with ctx.save_for_backward", points=1, zh="forward 用 ctx.save_for_backward 保存 tensor")
def test_save_for_backward(submission, rng):
    tensors = draw_linear(rng, 5, 4, 3)
    info = submission.probe(run_forward, "LinearFunction", tensors, [True, True, True],
                            what="`LinearFunction.apply(x, weight, bias)`")
    expect_node(info, "LinearFunction")
    if info["tensor_attrs"]:
        fail("forward stores tensors as attributes of ctx ({attrs}): keep them with ctx.save_for_backward(...) and "
             "read them back with ctx.saved_tensors, so autograd can detect in-place changes and free them.",
             "forward 把 tensor 存成了 ctx 的属性（{attrs}）：请用 ctx.save_for_backward(...) 保存，"
             "在 backward 中用 ctx.saved_tensors 取回，这样 autograd 才能检测原地修改并及时释放内存。",
             attrs=", ".join(f"`ctx.{a}`" for a in info["tensor_attrs"]), key="ctx-attributes")
    if info["n_saved"] == 0:
        fail("forward saved no tensor with ctx.save_for_backward, yet backward needs x and weight.",
             "forward 没有用 ctx.save_for_backward 保存任何 tensor，但 backward 需要 x 和 weight。",
             key="nothing-saved")


@check("backward returns one gradient per input, shaped like the input", points=2,
       zh="backward 为每个输入返回一个梯度，形状与输入相同")
def test_backward_shapes(submission, rng):
    for n, fin, fout in ((5, 4, 3), (1, 2, 6)):
        tensors = draw_linear(rng, n, fin, fout)
        g = torch.randn(n, fout, generator=rng, dtype=torch.float64)
        grads = raw_grads(submission, "LinearFunction", tensors, [True, True, True], g, BACKWARD)
        expect_count(grads, len(tensors))
        expect_order(grads, tensors)
        for name, grad, t in zip(NAMES, grads, tensors):
            expect_grad_shape(grad, name, t, n)


def _ones_vjp_match(grad, tensors, index):
    """True when `grad` is what backward gives with grad_output replaced by ones (the chain rule's first factor dropped)."""
    ones = autograd_gradient(lambda *t: reference(*t).sum(), tensors)[index]
    return matches(grad, ones)


@check("backward's gradients match finite differences and autograd (float64)", points=2,
       zh="backward 的梯度与有限差分和 autograd 一致（float64）")
def test_backward_values(submission, rng):
    judged = 0
    for n, fin, fout in ((4, 3, 2), (3, 2, 5)):  # no square weight: a transposed gradient is the shapes' lesson
        tensors = draw_linear(rng, n, fin, fout)
        g = torch.randn(n, fout, generator=rng, dtype=torch.float64)
        grads = raw_grads(submission, "LinearFunction", tensors, [True, True, True], g, BACKWARD, by_hand=True)
        # L = sum(grad_output * out), so dL/d input is exactly the vector-Jacobian product backward must return.
        expected = autograd_gradient(lambda *t: (g * reference(*t)).sum(), tensors)
        comparable = [i for i, (grad, t) in enumerate(zip(grads, tensors))
                      if isinstance(grad, torch.Tensor) and grad.shape == t.shape]
        judged += len(comparable)
        if all(matches(grads[i], expected[i]) for i in comparable):
            continue
        jacobians = numerical_jacobian(lambda *t: submission.probe(forward_values, "LinearFunction", list(t)), tensors)
        numerical = [(g.reshape(-1) @ jac).reshape(t.shape) for jac, t in zip(jacobians, tensors)]
        forward_ok = all(matches(a, b, atol=1e-5) for a, b in zip(numerical, expected))
        for i in comparable:
            name, grad = NAMES[i], grads[i]
            if matches(grad, expected[i]):
                continue
            if _ones_vjp_match(grad, tensors, i):
                fail("grad_{name} is the gradient you would get for grad_output = all ones: backward must multiply by "
                     "grad_output (chain rule: dL/d input = grad_output times d out/d input).",
                     "grad_{name} 相当于 grad_output 全为 1 时的结果：backward 必须乘上 grad_output"
                     "（链式法则：dL/d input = grad_output 乘以 d out/d input）。", name=name, key="grad-output-ignored")
            if not forward_ok and matches(grad, numerical[i]):
                fail("grad_{name} matches finite differences of your forward, but your forward is not {formula}: "
                     "fix forward (see the forward check), then backward to match it.",
                     "grad_{name} 与对你的 forward 做有限差分的结果一致，但你的 forward 并不是 {formula}："
                     "请先修正 forward（见前面 forward 的检查），再让 backward 与之一致。", name=name, formula=formula(),
                     key="forward-wrong")
            expect_gradient(grad, expected[i], name, numerical=numerical[i] if forward_ok else None,
                            hints=GRAD_HINTS, n=n)
    if not judged:
        fail("No gradient came back with its input's shape (see the shapes check above), so no value can be compared.",
             "没有一个梯度的形状与对应输入相同（见上面关于形状的检查），因此无法比较数值。", key="no-comparable-gradient")


@check("backward returns None where ctx.needs_input_grad is False", points=1,
       zh="ctx.needs_input_grad 为 False 的位置，backward 返回 None")
def test_needs_input_grad(submission, rng):
    cases = (((True, False, False), True), ((False, True, True), True), ((True, True, False), False),
             ((False, True, False), True))  # weight without bias: each flag read at its own index
    for requires, bias in cases:
        tensors = draw_linear(rng, 4, 3, 2, bias=bias)
        g = torch.randn(4, 2, generator=rng, dtype=torch.float64)
        args = "x, weight, " + ("bias" if bias else "None")
        grads = raw_grads(submission, "LinearFunction", tensors, list(requires), g,
                          Text("`LinearFunction.backward` after `apply({args})`",
                               "`apply({args})` 之后的 `LinearFunction.backward`", args=args))
        needing = ", ".join(nm for nm, r in zip(NAMES, requires) if r)
        # the count and the order are the shapes check's lesson: take the gradients by the shapes they have
        for name, grad, need, t in zip(NAMES, by_shape(grads, tensors), requires, tensors):
            if need and grad is None:
                fail("backward returned None for grad_{name}, although {name} requires grad (inputs requiring grad: "
                     "{needing}): compute it where ctx.needs_input_grad is True.",
                     "{name} 需要梯度（需要梯度的输入：{needing}），backward 却为 grad_{name} 返回了 None："
                     "ctx.needs_input_grad 为 True 的位置要计算梯度。", name=name, needing=needing,
                     key="missing-gradient")
            if not need and grad is not None:
                why = Text("bias is None", "bias 是 None") if t is None else \
                    Text("{name} does not require grad", "{name} 不需要梯度", name=name)
                fail("backward returned a tensor for grad_{name} although {why} (inputs requiring grad: {needing}): "
                     "test ctx.needs_input_grad and return None there, which skips the work.",
                     "{why}，backward 却为 grad_{name} 返回了 tensor（需要梯度的输入：{needing}）："
                     "请检查 ctx.needs_input_grad，在该位置返回 None，省去这部分计算。",
                     name=name, why=why, needing=needing, key="needs-input-grad-ignored")


# -- RoundSTE and fake_quantize ----------------------------------------------------------------------

def draw_reals(rng, n=12, scale=3.0):
    """n values of shape [1, n] that round, floor, ceil and trunc tell apart by construction: fractional parts
    below and above one half, on both sides of zero, never near a tie (rounding half-way is not the lesson)."""
    whole = torch.randint(0, int(scale) + 1, (n,), generator=rng).double()
    frac = 0.05 + 0.4 * torch.rand(n, generator=rng, dtype=torch.float64)
    frac[1::2] += 0.5  # every other value above one half
    sign = torch.where(torch.arange(n) % 4 < 2, 1.0, -1.0).double()
    x = (sign * (whole + frac))[torch.randperm(n, generator=rng)]
    return x.float().reshape(1, n)


@check("RoundSTE.forward rounds to the nearest integer", points=1, zh="RoundSTE.forward 四舍五入到最近的整数")
def test_round_forward(submission, rng):
    x = draw_reals(rng)
    info = submission.probe(run_forward, "RoundSTE", [x], [True], what="`RoundSTE.apply(x)`")
    expect_node(info, "RoundSTE")
    out = expect_tensor(info["out"], "`RoundSTE.apply(x)`", shape=list(x.shape), floating=True)
    expected = torch.round(x)
    if torch.equal(out.double(), x.double()):
        fail("RoundSTE.apply(x) returned x unchanged: forward must round (only backward pretends it is the identity).",
             "RoundSTE.apply(x) 原样返回了 x：forward 必须取整（只有 backward 才假装它是恒等映射）。",
             key="forward-identity")
    for other in ("floor", "ceil", "trunc"):
        if torch.equal(out.double(), getattr(torch, other)(x).double()):
            fail("RoundSTE.apply(x) equals torch.{other}(x), not the nearest integer: use torch.round.",
                 "RoundSTE.apply(x) 等于 torch.{other}(x)，而不是最近的整数：请用 torch.round。",
                 other=other, key=f"{other}-for-round")
    expect_close(out, expected, "`RoundSTE.apply(x)`", rtol=0, atol=1e-6)


@check("RoundSTE.backward passes grad_output straight through", points=1,
       zh="RoundSTE.backward 把 grad_output 原样传回（直通）", depends="round_forward")
def test_round_backward(submission, rng):
    x = draw_reals(rng)
    g = torch.randn(x.shape, generator=rng)
    grads = raw_grads(submission, "RoundSTE", [x], [True], g,
                      Text("`RoundSTE.apply(x)` and then its `backward(ctx, grad_output)`",
                           "`RoundSTE.apply(x)` 及其 `backward(ctx, grad_output)`"))
    if len(grads) != 1:
        fail("RoundSTE.backward returned {n} values; forward takes one input, x, so backward returns one gradient.",
             "RoundSTE.backward 返回了 {n} 个值；forward 只有一个输入 x，所以 backward 只返回一个梯度。",
             n=len(grads), key="wrong-gradient-count")
    if grads[0] is None:
        fail("RoundSTE.backward returned None: x would get no gradient. A straight-through estimator returns "
             "grad_output unchanged.",
             "RoundSTE.backward 返回了 None：x 将得不到梯度。直通估计器应原样返回 grad_output。", key="missing-gradient")
    grad = expect_tensor(grads[0], ("RoundSTE.backward's gradient", "RoundSTE.backward 返回的梯度"),
                         shape=list(x.shape), floating=True)
    expect_close(grad, g, "`RoundSTE.backward(ctx, grad_output)`", hints={
        "zero": ("That is torch.round's true gradient, which is why a loss through round cannot train: "
                 "the straight-through estimator returns grad_output instead.",
                 "这正是 torch.round 真实的梯度，所以经过 round 的损失无法训练：直通估计器应返回 grad_output。"),
        "sign": ("Return grad_output itself, not its negative.", "直接返回 grad_output，不要取负。")})


@check("fake_quantize rounds to multiples of step and lets a loss train x", points=1,
       zh="fake_quantize 取整到 step 的倍数，且损失的梯度能传到 x")
def test_fake_quantize(submission, rng):
    step = float(torch.empty(()).uniform_(0.2, 0.8, generator=rng))
    x = (draw_reals(rng, 10) * step).reshape(10)
    y = torch.randn(10, generator=rng)
    call = f"`fake_quantize(x, {step:.3g})`"
    result = submission.probe(quantize_in_loss, x, y, step,
                              what=Text("{call} in a loss", "损失中的 {call}", call=call))
    q_expected = torch.round(x / step) * step
    q = expect_tensor(result["q"], call, shape=[10], floating=True)
    if not matches(q, q_expected, rtol=1e-5, atol=1e-5) and matches(q * step, q_expected, rtol=1e-5, atol=1e-5):
        fail("{call} returned round(x / step), the number of steps: multiply it back by step to get a value on the "
             "scale of x.",
             "{call} 返回的是 round(x / step)，即步数：要再乘回 step，才能回到 x 的尺度。", call=call, key="no-rescale")
    if matches(q, torch.round(x), rtol=1e-5, atol=1e-5) and not matches(q, q_expected, rtol=1e-5, atol=1e-5):
        fail("{call} rounded to integers: divide by step, round, then multiply by step.",
             "{call} 取整到了整数：应先除以 step，取整，再乘回 step。", call=call, key="rounds-to-integers")
    expect_close(q, q_expected, call, rtol=1e-5, atol=1e-5, hints={
        "factor": ("Multiply the rounded value back by step.", "取整后要再乘回 step。")})
    if not result["connected"]:
        fail("The output of fake_quantize does not require grad, so no loss computed from it reaches x: is it "
             "detached, or computed under torch.no_grad()? Round with RoundSTE.apply, which keeps x in the graph.",
             "fake_quantize 的输出不需要梯度，用它算出的损失传不到 x：是不是 detach 了，或者在 torch.no_grad() 下计算的？"
             "请用 RoundSTE.apply 取整，它会让 x 留在计算图里。", key="output-detached")
    # The straight-through reference: round in the forward value, identity in the gradient.
    expected = autograd_gradient(lambda v: ((v + (q_expected.double() - v).detach() - y.double()) ** 2).mean(), [x])[0]
    grad = result["grad"]
    if grad is None or not grad.abs().gt(0).any():
        if not result["used_ste"]:
            fail("The gradient of mean((fake_quantize(x, step) - y)^2) with respect to x is all zeros (or None), "
                 "what torch.round's own gradient gives (0 almost everywhere): fake_quantize does not call "
                 "RoundSTE.apply, whose backward passes the gradient straight through.",
                 "mean((fake_quantize(x, step) - y)^2) 对 x 的梯度全为 0（或 None），这正是 torch.round 自身梯度"
                 "（几乎处处为 0）的结果：fake_quantize 没有调用 RoundSTE.apply，而它的 backward 会让梯度直通。",
                 key="plain-round")
        fail("The gradient of mean((fake_quantize(x, step) - y)^2) with respect to x is all zeros (or None), though "
             "fake_quantize calls RoundSTE.apply: does x reach it without a detach?",
             "mean((fake_quantize(x, step) - y)^2) 对 x 的梯度全为 0（或 None），尽管 fake_quantize 调用了 "
             "RoundSTE.apply：x 是不是经过 detach 才传给它的？", key="zero-gradient")
    expect_gradient(grad, expected, "x", hints={
        "factor": ("The straight-through gradient of fake_quantize is exactly 1: step / step cancels.",
                   "fake_quantize 的直通梯度恰好为 1：除以 step 再乘以 step 相互抵消。")})
    if not result["used_ste"]:
        fail("fake_quantize gives the right values and gradient, but without calling RoundSTE.apply: build it on "
             "your RoundSTE, as the statement asks (a straight-through trick of its own is not the exercise).",
             "fake_quantize 的数值和梯度都对，但没有调用 RoundSTE.apply：请按题目要求基于你的 RoundSTE 来实现"
             "（自己另写一个直通技巧不是本题的要求）。", key="ste-not-used")
