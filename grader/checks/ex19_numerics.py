"""Hidden checks of ex19: NaN and inf, found and fixed.

The judge draws inputs with the extreme values that break the textbook formulas (logits of
+-30..120, score rows spread over thousands or sitting near -1000, batches containing NaN or
values whose square overflows), computes the expectations with its own torch in float64 (or,
for the training step, by replaying the step in float32), and names the textbook mistake when a
wrong answer matches it. Clipping is judged by its effect on the update, whatever API made it.

Kata variants: `variant("clip")` is how safe_train_step clips: the total gradient norm (clip_grad_norm_), or
each gradient entry into [-max_value, max_value] (clip_grad_value_); the expected update, the clipping
mistakes recognised and the messages follow it.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from grader.checking import (Text, check, describe, expect_close, expect_number, expect_tensor, explain, fail,
                             is_number, matches, probe, recording_calls, variant, verbatim)
from grader.gradients import gradient_lines

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def bce_gradient(module, logits, targets):
    """The loss and d loss/d logits, and the torch functions the loss was computed with (for the diagnosis)."""
    names = set()

    z = logits.clone().requires_grad_(True)
    with recording_calls(names):
        loss = module.bce_with_logits(z, targets)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        return {"loss": loss.detach() if isinstance(loss, torch.Tensor) else loss}
    loss.reshape(()).backward()
    return {"loss": loss.detach(), "grad": z.grad, "calls": sorted(names)}


# torch's functions that compute a logsumexp (also torch.special's, and Tensor's methods of the same names): what
# the dispatcher names them, whatever route reaches them
BUILT_IN_LSE = {"logsumexp", "logcumsumexp", "log_softmax"}


@probe
def torch_calls(module, x, dim):
    """The names of the torch functions logsumexp calls."""
    names: set[str] = set()
    with recording_calls(names):
        module.logsumexp(x, dim)
    return sorted(names)


def _grad_norm(params):
    """The total 2-norm of the gradients in .grad (None when there are none)."""
    grads = [p.grad.detach().double() for p in params if p.grad is not None]
    return float(torch.sqrt(sum((g ** 2).sum() for g in grads))) if grads else None


def _grad_max(params):
    """The largest gradient entry in absolute value (None when there are no gradients)."""
    grads = [p.grad.detach().double().abs().max() for p in params if p.grad is not None]
    return float(max(grads)) if grads else None


@probe
def train_steps(module, weight, bias, batches, lr, max_norm):
    """Run safe_train_step on a Linear model with plain SGD over `batches`; after each call record the value
    returned, the weights, the gradient norm (and largest entry) each optimizer.step() saw and those left in .grad."""
    model = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    params = list(model.parameters())
    at_step, max_at_step = [], []
    step = optimizer.step

    def recording_step(*args, **kwargs):
        at_step.append(_grad_norm(params))
        max_at_step.append(_grad_max(params))
        return step(*args, **kwargs)

    optimizer.step = recording_step
    records = []
    for x, y in batches:
        at_step.clear()
        max_at_step.clear()
        returned = module.safe_train_step(model, optimizer, nn.MSELoss(), x, y, max_norm)
        if isinstance(returned, torch.Tensor):
            returned = returned.detach()
        records.append({"returned": returned, "weight": model.weight.detach().clone(),
                        "bias": model.bias.detach().clone(), "norm_at_step": list(at_step),
                        "norm_after": _grad_norm(params), "max_at_step": list(max_at_step),
                        "max_after": _grad_max(params)})
    return records


# -- bce_with_logits --------------------------------------------------------------------------

BCE = "bce_with_logits(logits, targets)"
USE_LOGITS = Text("BCEWithLogitsLoss (`F.binary_cross_entropy_with_logits`) works on the logits directly.",
                  "BCEWithLogitsLoss（`F.binary_cross_entropy_with_logits`）直接作用于 logits。")


def draw_logits(rng):
    """Logits [6, 4]: moderate ones, plus 8 extreme ones (|z| in 30..120), 4 of them confidently wrong.

    Two of the wrong ones are positive and below 90: sigmoid rounds them to exactly 1.0, so a formula
    that forms sigmoid(z) gets log(0) there (BCELoss: 100 instead of z, always too large; no other
    error can cancel it), on every draw; and one of the right ones is beyond 100, where exp(|z|) overflows
    float32, so a formula with an overflowing term (even in torch.where's unpicked branch) shows it, on every draw."""
    z = 2 * torch.randn(6, 4, generator=rng)
    t = (torch.rand(6, 4, generator=rng) < 0.5).float()
    idx = torch.randperm(24, generator=rng)[:8]
    sign = torch.where(torch.rand(8, generator=rng) < 0.5, -1.0, 1.0)
    sign[:4] = torch.tensor([1.0, 1.0, -1.0, -1.0])
    size = torch.empty(8).uniform_(30, 120, generator=rng)
    size[:4] = torch.empty(4).uniform_(30, 90, generator=rng)
    size[4] = torch.empty(()).uniform_(100, 120, generator=rng)  # past float32's exp overflow (88.7), every draw
    z.view(-1)[idx] = sign * size
    wrong = (sign < 0).float()  # the target opposite to the logit's sign
    t.view(-1)[idx[:4]] = wrong[:4]
    t.view(-1)[idx[4:]] = 1 - wrong[4:]
    return z, t


def bce_ref(z, t):
    return F.binary_cross_entropy_with_logits(z.double(), t.double())


def scalar_loss(value, what=BCE) -> torch.Tensor:
    loss = expect_tensor(value, what, floating=True)
    if loss.numel() != 1:
        fail("`{what}` should return one number (the mean over all elements), got shape {shape}.",
             "`{what}` 应返回一个数（对所有元素求平均），实际形状为 {shape}。",
             what=what, shape=list(loss.shape), key="loss-not-reduced")
    return loss.reshape(())


@check("bce_with_logits is right on huge logits", points=2, zh="bce_with_logits 在极大的 logits 上也正确")
def test_bce_values(submission, rng):
    z, t = draw_logits(rng)
    loss = scalar_loss(submission.bce_with_logits(z, t))
    expected = bce_ref(z, t)
    if matches(loss, expected):
        return
    values = dict(got=float(loss), want=float(expected))
    if not torch.isfinite(loss):
        fail("bce_with_logits returned {got} on logits up to |120|: a term of the formula overflows or takes log(0) "
             "there. In float32, exp(120) is inf, and sigmoid(z) rounds to exactly 0 or 1, so log(sigmoid(z)) or "
             "log(1 - sigmoid(z)) is log(0) = -inf. Use only terms that stay finite: {use}",
             "在 |z| 最大到 120 的 logits 上，bce_with_logits 返回了 {got}：公式中的某一项在那里溢出或取了 log(0)。"
             "在 float32 中 `exp(120)` 是 inf，而 sigmoid(z) 会被舍入成正好 0 或 1，于是 `log(sigmoid(z))` 或 "
             "`log(1 - sigmoid(z))` 就是 `log(0) = -inf`。请只用保持有限的项：{use}",
             got=float(loss), use=USE_LOGITS, key="loss-not-finite")
    if matches(loss, F.binary_cross_entropy(torch.sigmoid(z), t)):
        fail("bce_with_logits is {got:.4g}, expected {want:.4g}: sigmoid(z) rounds to exactly 1.0 or 0.0 in float32 once "
             "|z| is large, and BCELoss then clamps log(0) to -100, so every confident mistake costs 100 instead of |z|. "
             "Pass the logits to BCEWithLogitsLoss instead of sigmoid + BCELoss.",
             "bce_with_logits 为 {got:.4g}，应为 {want:.4g}：|z| 较大时 sigmoid(z) 在 float32 中会被舍入成正好 1.0 或 0.0，"
             "BCELoss 再把 `log(0)` 截断为 -100，于是每个“自信的错误”都记成 100 而不是 |z|。请把 logits 交给 "
             "BCEWithLogitsLoss，不要 sigmoid + BCELoss。", **values, key="sigmoid-then-bceloss")
    if matches(loss, F.binary_cross_entropy_with_logits(torch.sigmoid(z), t)):
        fail("bce_with_logits is {got:.4g}, expected {want:.4g}: the loss got probabilities, i.e. sigmoid was applied "
             "twice. BCEWithLogitsLoss applies sigmoid itself: give it the raw logits.",
             "bce_with_logits 为 {got:.4g}，应为 {want:.4g}：损失函数收到的是概率，也就是 sigmoid 被用了两次。"
             "BCEWithLogitsLoss 内部自带 sigmoid：直接把原始 logits 交给它。", **values, key="sigmoid-twice")
    if matches(loss, expected * z.numel()):
        fail("bce_with_logits is {got:.4g}, expected {want:.4g}: that is the sum over the {n} elements; the loss is "
             "their mean.",
             "bce_with_logits 为 {got:.4g}，应为 {want:.4g}：这是 {n} 个元素的和；损失应该是它们的平均值。",
             **values, n=z.numel(), key="sum-instead-of-mean")
    if matches(loss, F.binary_cross_entropy_with_logits(t.double(), z.double())):
        fail("bce_with_logits is {got:.4g}, expected {want:.4g}: the logits and the targets were swapped. The loss takes "
             "the model's scores first and the 0/1 targets second.",
             "bce_with_logits 为 {got:.4g}，应为 {want:.4g}：logits 和 targets 的位置对调了。损失函数的第一个参数是"
             "模型的分数，第二个才是 0/1 的目标。", **values, key="swapped-arguments")
    if matches(loss, -expected):
        fail("bce_with_logits is {got:.4g}, expected {want:.4g}: the sign is flipped. The cross-entropy is the *negative* "
             "mean log-likelihood, a positive number.",
             "bce_with_logits 为 {got:.4g}，应为 {want:.4g}：符号反了。交叉熵是对数似然均值的*相反数*，是一个正数。",
             **values, key="sign")
    tame = z.clamp(-4, 4)
    if matches(scalar_loss(submission.bce_with_logits(tame, t)), bce_ref(tame, t)):
        fail("bce_with_logits is {got:.4g}, expected {want:.4g} on logits up to |120|, though it is right on moderate "
             "logits: the large-|z| terms are lost, as in a formula that forms sigmoid(z) or clamps probabilities. {use}",
             "在 |z| 最大到 120 的 logits 上，bce_with_logits 为 {got:.4g}，应为 {want:.4g}，而在适中的 logits 上是对的："
             "大 |z| 的项丢失了，就像先算出 sigmoid(z) 或截断概率的公式那样。{use}",
             **values, use=USE_LOGITS, key="large-logits-lost")
    fail("bce_with_logits is {got:.4g}, expected {want:.4g}, and it is wrong on moderate logits too: the formula itself "
         "is off, not only its numerics. Compare it with BCEWithLogitsLoss on a few small inputs.",
         "bce_with_logits 为 {got:.4g}，应为 {want:.4g}，而且在适中的 logits 上也不对：问题在公式本身，而不只是数值稳定性。"
         "请在几个小输入上和 BCEWithLogitsLoss 对比。", **values, key="wrong-values")


@check("bce_with_logits has the right gradient on huge logits", points=1,
       zh="bce_with_logits 在极大的 logits 上梯度正确", depends="bce_values")
def test_bce_gradient(submission, rng):
    z, t = draw_logits(rng)
    result = submission.probe(bce_gradient, z, t, what=Text("`bce_with_logits` then backward",
                                                            "`bce_with_logits` 之后 backward"))
    if "grad" not in result:
        loss = result["loss"]
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            fail("The loss does not require grad: the graph from logits to the loss was cut (.detach(), .item() or "
                 "torch.no_grad()).",
                 "损失不 requires_grad：从 logits 到损失的计算图被切断了（`.detach()`、`.item()` 或 `torch.no_grad()`）。",
                 key="graph-cut")
        fail("bce_with_logits should return a scalar tensor, got {got}.", "bce_with_logits 应返回标量 tensor，实际得到 {got}。",
             got=describe(loss), key="not-a-tensor")
    grad = result["grad"]
    if grad is None:
        fail("logits.grad is None after backward: no gradient reached the logits.",
             "backward 之后 `logits.grad` 是 None：梯度没有传到 logits。", key="graph-cut")
    leaf = z.double().requires_grad_(True)
    (expected,) = torch.autograd.grad(F.binary_cross_entropy_with_logits(leaf, t.double()), leaf)
    what = "d loss/d logits"
    grad = expect_tensor(grad, what, shape=z.shape)
    if not torch.isfinite(grad).all():
        calls = set(result.get("calls", []))
        if calls & {"sigmoid", "sigmoid_"}:  # the cause is named only when the probe saw sigmoid computed
            fail("{what} contains NaN or inf on large logits: the derivative of log(sigmoid(z)) blows up once sigmoid "
                 "rounds to 0 or 1. BCEWithLogitsLoss has a stable backward as well.",
                 "在大 logits 上 {what} 含有 NaN 或 inf：一旦 sigmoid 舍入成 0 或 1，`log(sigmoid(z))` 的导数就会爆炸。"
                 "BCEWithLogitsLoss 的反向传播同样是稳定的。", what=what, key="log-of-sigmoid")
        if "where" in calls:
            fail("{what} contains NaN or inf on large logits, and the loss uses torch.where: autograd differentiates "
                 "both branches, so a branch that overflows where it is not picked (exp of a large z is inf) still "
                 "makes the gradient NaN (0 * inf). Keep both branches finite, for instance with exp(-|z|).",
                 "在大 logits 上 {what} 含有 NaN 或 inf，而损失用到了 `torch.where`：autograd 会对两个分支都求导，"
                 "所以即使没被选中的分支溢出（大 z 的 exp 是 inf），梯度也会变成 NaN（0 * inf）。"
                 "请让两个分支都保持有限，例如用 `exp(-|z|)`。", what=what, key="where-branch-overflow")
        fail("{what} contains NaN or inf on large logits: a term of the loss overflows or takes log(0) there. {use}",
             "在大 logits 上 {what} 含有 NaN 或 inf：损失中的某一项在那里溢出或取了 log(0)。{use}",
             what=what, use=USE_LOGITS, key="gradient-not-finite")
    if matches(grad, expected):
        return
    big = z.abs() > 20
    dead = big & (grad.abs() < 1e-12) & (expected.abs() > 1e-3)
    if dead.any() and matches(grad[~big], expected[~big]):  # right where sigmoid does not saturate
        fail("{what} is 0 where the logit is large and wrong ({details}): sigmoid saturated, so its derivative p(1-p) is "
             "exactly 0 and confident mistakes get no learning signal. BCEWithLogitsLoss gives (sigmoid(z) - t) / N there.",
             "在 logit 很大且预测错误的位置，{what} 为 0（{details}）：sigmoid 饱和了，其导数 `p(1-p)` 正好为 0，"
             "自信的错误得不到任何学习信号。BCEWithLogitsLoss 在那里给出 `(sigmoid(z) - t) / N`。",
             what=what, details=gradient_lines(grad.double(), expected, what), key="saturated-gradient")
    if matches(grad, expected * z.numel()):
        fail("{what} is {n} times too large: the loss is the sum over the {n} elements, not their mean.",
             "{what} 大了 {n} 倍：损失是对 {n} 个元素求和，而不是求平均。", what=what, n=z.numel(),
             key="sum-instead-of-mean")
    expect_close(grad, expected, what, n=z.numel())


# -- logsumexp --------------------------------------------------------------------------------

def draw_scores(rng, b=None):
    """Rows of scores: tame ones, one spread over thousands, one near -1000, one with a masked -inf."""
    b = b or int(torch.randint(4, 7, (), generator=rng))
    k = max(b, 4) + int(torch.randint(1, 4, (), generator=rng))  # k != b, so a shape slip cannot broadcast silently
    x = torch.randn(max(b, 3), k, generator=rng)
    x[0] = 400 * torch.randn(k, generator=rng)
    x[0, :2] = torch.tensor([700.0, -700.0])  # spread for sure: neither exp(x) nor exp(x - mean) fits in float32
    x[0] = x[0, torch.randperm(k, generator=rng)]
    x[1] = -1000 + torch.randn(k, generator=rng)
    x[2, int(torch.randint(0, k, (), generator=rng))] = -math.inf
    return x[torch.randperm(len(x), generator=rng)][:b]


def lse_cases(rng):
    """(x, dim) pairs: rows of extreme scores reduced along either dimension, a 3-D tensor, and size-1 dimensions
    that must survive (one row, N=1; a trailing 1 kept after the reduction)."""
    x3 = torch.randn(2, 5, 3, generator=rng)
    x3[0, :, 1] += 800
    return [(draw_scores(rng), -1), (draw_scores(rng).t().contiguous(), 0), (x3, 1),
            (draw_scores(rng, b=1), -1), (draw_scores(rng).unsqueeze(-1), 1)]


def global_max_lse(x, dim):
    """log-sum-exp in float32 with the max of the whole tensor subtracted (a learner's slip, for recognising it)."""
    m = x.amax()
    return m + torch.log(torch.exp(x - m).sum(dim))


KEEPDIM = Text("x - max does not line up: the max (or the sum) lost the reduced dimension. Keep it with keepdim=True "
               "(then remove it from the result with squeeze(dim)).",
               "x - max 对不齐：最大值（或求和）丢掉了被归约的维度。请用 keepdim=True 保留它（最后再用 squeeze(dim) "
               "从结果中去掉）。")
MAX_PAIR = Text("x.max(dim) returns a pair (values, indices): take .values, or use x.amax(dim).",
                "x.max(dim) 返回 (values, indices) 二元组：取 .values，或使用 x.amax(dim)。")


def lse_value(submission, x, dim):
    """The learner's logsumexp(x, dim), with the two classic slips of the max explained."""
    with explain({"must match the size": KEEPDIM}, key="max-without-keepdim"), \
            explain({"return_types": MAX_PAIR}, key="max-returns-pair"):
        return submission.logsumexp(x, dim)


def expect_lse_shape(value, x, dim, what):
    """Fail unless the result has the shape of x with `dim` reduced away, naming squeeze() and keepdim slips."""
    value = expect_tensor(value, what, floating=True)
    want = [s for d, s in enumerate(x.shape) if d != dim % x.dim()]
    if list(value.shape) == want:
        return value
    kept = list(x.shape)
    kept[dim] = 1
    if list(value.shape) == kept:
        fail("{what} should have shape {want}, got {got}: keepdim=True kept the reduced dimension. Remove it from the "
             "result with squeeze(dim).",
             "{what} 的形状应为 {want}，实际为 {got}：keepdim=True 保留了被归约的维度。请用 squeeze(dim) 从结果中去掉它。",
             what=what, want=want, got=list(value.shape), key="kept-reduced-dim")
    if 1 in want and list(value.shape) == [s for s in want if s != 1]:
        fail("{what} should have shape {want}, got {got}: squeeze() without a dim removes every size-1 dimension, also "
             "those that were not reduced. Use squeeze(dim).",
             "{what} 的形状应为 {want}，实际为 {got}：不带 dim 的 squeeze() 会去掉所有大小为 1 的维度，包括没有被归约的那些。"
             "请用 squeeze(dim)。", what=what, want=want, got=list(value.shape), key="squeeze-without-dim")
    return expect_tensor(value, what, shape=want)


@check("logsumexp is finite and right on huge and tiny scores", points=2,
       zh="logsumexp 在极大和极小的分数上有限且正确")
def test_lse_values(submission, rng):
    for x, dim in lse_cases(rng):
        what = f"logsumexp(x{list(x.shape)}, dim={dim})"
        expected = torch.logsumexp(x.double(), dim)
        value = expect_lse_shape(lse_value(submission, x, dim), x, dim, what)
        bad = ~torch.isfinite(value.double()) & torch.isfinite(expected)
        if bad.any():
            where = tuple(int(i) for i in bad.nonzero()[0])
            values = dict(what=what, got=float(value[where]), where=list(where), want=float(expected[where]))
            if matches(value, global_max_lse(x, dim), equal_nan=True):
                fail("{what} is {got} at {where}, expected {want:.6g}: the max of the whole tensor was subtracted, so rows "
                     "far below it still underflow (exp(x) is 0 in float32 once x < -104, its log -inf). Subtract the "
                     "max along `dim`, with keepdim=True.",
                     "{what} 在 {where} 处为 {got}，应为 {want:.6g}：减去的是整个 tensor 的最大值，远低于它的行仍然下溢"
                     "（在 float32 中 x < -104 时 `exp(x)` 为 0，其 log 为 -inf）。请减去沿 `dim` 的最大值，并用 keepdim=True。",
                     **values, key="global-max")
            fail("{what} is {got} at {where}, expected {want:.6g}: overflow or underflow. exp(x) is inf in float32 once "
                 "x > 88, and 0 once x < -104 (its log is -inf). Subtract the max along `dim` (keepdim=True) before exp, "
                 "then add it back.",
                 "{what} 在 {where} 处为 {got}，应为 {want:.6g}：上溢或下溢。在 float32 中 x > 88 时 `exp(x)` 为 inf，"
                 "x < -104 时为 0（其 log 为 -inf）。求 exp 之前先减去沿 `dim` 的最大值（keepdim=True），最后再把它加回来。",
                 **values, key="no-max-shift")
        if matches(value, expected):
            continue
        m = x.double().amax(dim)
        if matches(value, expected - torch.where(torch.isfinite(m), m, torch.zeros_like(m))):
            fail("{what} is off by exactly the max along dim: subtracting the max is half the trick, add the max back to "
                 "the log of the sum (`log sum exp(x) = m + log sum exp(x - m)`).",
                 "{what} 正好差了沿 dim 的最大值：减去最大值只是一半，还要把它加回到求和的 log 上"
                 "（`log sum exp(x) = m + log sum exp(x - m)`）。", what=what, key="max-not-added-back")
        expect_close(value, expected, what, rtol=1e-5, atol=1e-4)


@check("logsumexp is written by hand (no torch.logsumexp)", points=1, zh="logsumexp 是自己写的（不调用 torch.logsumexp）",
       depends="lse_values")
def test_lse_by_hand(submission, rng):
    x = draw_scores(rng)
    value = lse_value(submission, x, -1)
    names = submission.probe(torch_calls, x, -1, what="`logsumexp`")
    used = [n for n in names if n.removeprefix("special_").lstrip("_") in BUILT_IN_LSE]
    if used:
        fail("Your logsumexp calls torch's own `{name}`, which computes a logsumexp for you: the point is to write the "
             "max trick yourself (max, subtract, exp, sum, log, add back).",
             "你的 logsumexp 调用了 torch 自带的 `{name}`，它会替你算出 logsumexp：本题要你亲手实现“减最大值”的技巧"
             "（max、相减、exp、sum、log、加回）。", name=used[0], key="builtin-logsumexp")
    if not (isinstance(value, torch.Tensor) and matches(value, torch.logsumexp(x.double(), -1))):
        fail("logsumexp is not right yet on extreme scores, so there is no hand-written version to credit: this point "
             "comes with a logsumexp that is right.",
             "logsumexp 在极端分数上还不正确，所以还没有可以计分的手写版本：它正确之后才能得到这一分。", key="lse-wrong")


# -- safe_train_step --------------------------------------------------------------------------

def draw_model(rng):
    weight = 0.5 * torch.randn(2, 4, generator=rng)
    bias = 0.5 * torch.randn(2, generator=rng)
    lr = float(torch.empty(()).uniform_(0.02, 0.1, generator=rng))
    max_norm = float(torch.empty(()).uniform_(0.5, 2.0, generator=rng))
    return weight, bias, lr, max_norm


def good_batch(rng):
    x = 3 * torch.randn(8, 4, generator=rng)
    y = 40 + 30 * torch.randn(8, 2, generator=rng)  # big targets far from the outputs: a gradient norm far above max_norm
    return x, y


def nan_batch(rng):
    x, y = good_batch(rng)
    x[int(torch.randint(0, 8, (), generator=rng)), int(torch.randint(0, 4, (), generator=rng))] = math.nan
    return x, y


def overflow_batch(rng):
    """Finite inputs whose squared error overflows float32: the loss is inf, not NaN."""
    x, y = good_batch(rng)
    x[int(torch.randint(0, 8, (), generator=rng))] = 1e30
    return x, y


def clipping() -> str:
    """How this draw clips: "norm" (the total L2 norm, the exercise as written) or "value" (entry by entry)."""
    return variant("clip")["name"]


def replay(weight, bias, batches, lr, max_norm, clip=None, zero_grad=True):
    """The judge's own training steps, in float32 like the learner's: [(weight, bias, loss)] per batch."""
    # Plain SGD written out (p -= lr * p.grad is exactly torch.optim.SGD without momentum): creating a
    # torch.optim optimizer would import torch._dynamo in the judge, seconds per grading.
    w = weight.clone().requires_grad_(True)
    b = bias.clone().requires_grad_(True)
    states, clip = [], clip or clipping()
    for x, y in batches:
        if zero_grad:
            w.grad = b.grad = None
        loss = F.mse_loss(F.linear(x, w, b), y)
        if torch.isfinite(loss):
            loss.backward()
            if clip == "norm":
                torch.nn.utils.clip_grad_norm_([w, b], max_norm)
            elif clip == "value":
                torch.nn.utils.clip_grad_value_([w, b], max_norm)
            elif clip == "l1":
                torch.nn.utils.clip_grad_norm_([w, b], max_norm, norm_type=1.0)
            elif clip == "each":
                for p in (w, b):
                    torch.nn.utils.clip_grad_norm_([p], max_norm)
            with torch.no_grad():
                for p in (w, b):
                    p -= lr * p.grad
        states.append((w.detach().clone(), b.detach().clone(), float(loss)))
    return states


def run_steps(submission, weight, bias, batches, lr, max_norm):
    records = submission.probe(train_steps, weight, bias, batches, lr, max_norm, what="`safe_train_step`")
    if not isinstance(records, list) or len(records) != len(batches):
        fail("Could not record the training steps.", "无法记录训练步骤。", key="check-error")
    return records


def same_params(record, state) -> bool:
    return matches(record["weight"], state[0]) and matches(record["bias"], state[1])


def unchanged(record, before) -> bool:
    return torch.equal(record["weight"], before[0]) and torch.equal(record["bias"], before[1])


def params_before(records, weight, bias):
    """The weights before each call: the initial ones, then those each call left."""
    return [(weight, bias)] + [(r["weight"], r["bias"]) for r in records[:-1]]


CLIPPED_AFTER = {"norm": ("norm_at_step", "norm_after", Text("gradient norm", "梯度范数")),
                 "value": ("max_at_step", "max_after", Text("largest gradient entry", "最大的梯度元素"))}


@check("safe_train_step clips the gradients before the step", points=2, zh="safe_train_step 在 step 之前裁剪梯度")
def test_step_clips(submission, rng):
    weight, bias, lr, max_norm = draw_model(rng)
    batches = [good_batch(rng), good_batch(rng)]
    records = run_steps(submission, weight, bias, batches, lr, max_norm)
    expected = replay(weight, bias, batches, lr, max_norm)
    others = ("none", "value", "each", "l1") if clipping() == "norm" else ("none", "norm")
    alternatives = {clip: replay(weight, bias, batches, lr, max_norm, clip=clip) for clip in others}
    arg = verbatim(variant("clip")["arg"])
    accumulated = replay(weight, bias, batches, lr, max_norm, zero_grad=False)
    for i, (record, state, before) in enumerate(zip(records, expected, params_before(records, weight, bias))):
        if same_params(record, state):
            continue
        values = dict(i=i, loss=state[2], max_norm=max_norm, arg=arg)
        if unchanged(record, before):
            fail("The parameters did not change on batch {i}, whose loss {loss:.4g} is finite: a finite loss needs "
                 "backward(), clipping and optimizer.step() (is the test for a bad loss the wrong way round?).",
                 "第 {i} 个 batch 的损失 {loss:.4g} 是有限的，参数却没有变化：有限的损失需要 backward()、裁剪和 "
                 "optimizer.step()（判断坏损失的条件是不是写反了？）。", **values, key="no-update")
        if same_params(record, alternatives["none"][i]):
            at_step, after_key, measure = CLIPPED_AFTER[clipping()]
            seen, after = record[at_step], record[after_key]
            if seen and seen[-1] > max_norm * 1.001 and after is not None and after <= max_norm * 1.001:
                fail("The update of batch {i} used the unclipped gradient ({measure} {norm:.4g} at optimizer.step(), "
                     "above {arg}={max_norm:.3g}); the gradient was clipped only after the step, when the update was "
                     "already made. Clip between backward() and optimizer.step().",
                     "第 {i} 个 batch 的更新用的是未裁剪的梯度（optimizer.step() 时{measure}为 {norm:.4g}，大于 "
                     "{arg}={max_norm:.3g}）；梯度在 step 之后才被裁剪，而那时更新已经做完了。请在 backward() 和 "
                     "optimizer.step() 之间裁剪。", **values, norm=seen[-1], measure=measure, key="clip-after-step")
            if clipping() == "value":
                fail("The update of batch {i} was not clipped (its gradient entries are far above "
                     "{arg}={max_norm:.3g}): after backward() and before optimizer.step(), clip each gradient entry "
                     "into [-{arg}, {arg}] (torch.nn.utils.clip_grad_value_(model.parameters(), {arg}) does it).",
                     "第 {i} 个 batch 的更新没有被裁剪（其梯度元素远大于 {arg}={max_norm:.3g}）：请在 backward() 之后、"
                     "optimizer.step() 之前把每个梯度元素截断到 [-{arg}, {arg}]（`torch.nn.utils.clip_grad_value_("
                     "model.parameters(), {arg})` 就是做这个的）。", **values, key="no-clipping")
            fail("The update of batch {i} was not clipped (its gradient norm is far above max_norm={max_norm:.3g}): "
                 "after backward() and before optimizer.step(), scale the gradients so that their total norm is at "
                 "most max_norm (torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm) does it).",
                 "第 {i} 个 batch 的更新没有被裁剪（其梯度范数远大于 max_norm={max_norm:.3g}）：请在 backward() 之后、"
                 "optimizer.step() 之前缩放梯度，使总范数不超过 max_norm（`torch.nn.utils.clip_grad_norm_("
                 "model.parameters(), max_norm)` 就是做这个的）。", **values, key="no-clipping")
        if "norm" in alternatives and same_params(record, alternatives["norm"][i]):
            fail("The gradients were scaled together by their total norm (clip_grad_norm_): this step clips each "
                 "gradient entry on its own into [-{arg}, {arg}] (clip_grad_value_), whatever the others are.",
                 "梯度按总范数被一起缩放了（clip_grad_norm_）：这一步要求把每个梯度元素各自截断到 [-{arg}, {arg}]"
                 "（clip_grad_value_），与其他元素无关。", **values, key="clip-norm")
        if "value" in alternatives and same_params(record, alternatives["value"][i]):
            fail("The gradients were clipped entry by entry (clip_grad_value_): that changes their direction. Scale all "
                 "gradients together so their total norm is at most max_norm (clip_grad_norm_).",
                 "梯度被逐元素截断了（clip_grad_value_）：这会改变梯度方向。请把所有梯度一起缩放，使总范数不超过 max_norm"
                 "（clip_grad_norm_）。", key="clip-value")
        if "l1" in alternatives and same_params(record, alternatives["l1"][i]):
            fail("The gradients were clipped by their L1 norm (the sum of absolute values, `norm_type=1`): the norm to "
                 "limit is the usual L2 norm, clip_grad_norm_'s default (`norm_type=2`).",
                 "梯度是按 L1 范数（绝对值之和，`norm_type=1`）裁剪的：要限制的是通常的 L2 范数，即 clip_grad_norm_ 的默认值"
                 "（`norm_type=2`）。", key="clip-l1-norm")
        if "each" in alternatives and same_params(record, alternatives["each"][i]):
            fail("Each parameter's gradient was clipped on its own: the norm to limit is the total over all parameters "
                 "at once (model.parameters()), so the total norm is at most max_norm.",
                 "每个参数的梯度被单独裁剪了：要限制的是所有参数合在一起的总范数（model.parameters()），"
                 "使总范数不超过 max_norm。", key="clip-per-parameter")
        if i == 1 and same_params(record, accumulated[i]):
            fail("The second step used the first batch's gradients too: gradients accumulate in .grad until zeroed. "
                 "Call optimizer.zero_grad() at the start of each step.",
                 "第二步还用到了第一个 batch 的梯度：梯度会在 .grad 中累加，直到被清零。请在每一步开始时调用 "
                 "optimizer.zero_grad()。", key="zero-grad-missing")
        for name, got, want in (("weight", record["weight"], state[0]), ("bias", record["bias"], state[1])):
            expect_close(got, want, Text("the {name} after batch {i}", "第 {i} 个 batch 之后的 {name}", name=name, i=i),
                         rtol=1e-4, atol=1e-5)


BAD_BATCHES = {1: ("NaN", Text("a NaN in the inputs", "输入中有 NaN")),
               2: ("inf", Text("finite inputs whose squared error overflows float32", "输入有限但误差平方超出 float32 范围"))}


def skip_batches(rng):
    """A good batch, a NaN batch, an overflowing one, a good one: the model and the records of each call."""
    weight, bias, lr, max_norm = draw_model(rng)
    return weight, bias, lr, max_norm, [good_batch(rng), nan_batch(rng), overflow_batch(rng), good_batch(rng)]


@check("safe_train_step skips a batch whose loss is NaN or inf", points=1,
       zh="safe_train_step 跳过损失为 NaN 或 inf 的 batch")
def test_step_skips(submission, rng):
    weight, bias, lr, max_norm, batches = skip_batches(rng)
    records = run_steps(submission, weight, bias, batches, lr, max_norm)
    before = params_before(records, weight, bias)
    for i, (loss, why) in BAD_BATCHES.items():
        record = records[i]
        if unchanged(record, before[i]):
            continue
        broken = not (torch.isfinite(record["weight"]).all() and torch.isfinite(record["bias"]).all())
        what = Text("made the weights NaN/inf", "让权重变成了 NaN/inf") if broken else Text("changed the weights", "改变了权重")
        if i == 1:
            fail("A batch with loss NaN ({why}) {what}: a step on a non-finite loss must be skipped. Check "
                 "torch.isfinite(loss) before backward() and return without stepping.",
                 "一个损失为 NaN 的 batch（{why}）{what}：损失不是有限值时必须跳过这一步。请在 backward() 之前检查 "
                 "`torch.isfinite(loss)`，不是有限值就直接返回，不做 step。", why=why, what=what, key="nan-loss-not-skipped")
        fail("A batch with loss inf ({why}) {what}, although a NaN batch was skipped: torch.isnan(loss) misses inf, and "
             "checking only the inputs misses an overflow. Test the loss itself with torch.isfinite(loss).",
             "一个损失为 inf 的 batch（{why}）{what}，尽管 NaN 的 batch 被跳过了：`torch.isnan(loss)` 发现不了 inf，"
             "只检查输入也发现不了溢出。请用 `torch.isfinite(loss)` 检查损失本身。", why=why, what=what,
             key="inf-loss-not-skipped")
    # The last good batch, replayed from the learner's own weights (clipping is judged by the other check).
    last = records[3]
    if unchanged(last, before[3]):
        fail("A good batch with a finite loss left the weights unchanged: only non-finite losses are skipped; a finite "
             "one needs backward(), clipping and optimizer.step().",
             "一个损失有限的正常 batch 没有改变权重：只有非有限的损失才跳过；有限的损失需要 backward()、裁剪和 "
             "optimizer.step()。", key="no-update")
    replays = [replay(*before[3], batches[3:], lr, max_norm, clip=clip)[0]
               for clip in (clipping(), "none", "norm", "value", "each")]
    if any(same_params(last, state) for state in replays):
        return
    left = [records[i]["norm_after"] for i in BAD_BATCHES]
    if any(norm is not None and not math.isfinite(norm) for norm in left):
        fail("The bad batches were skipped, but they left NaN gradients in .grad, and the next good batch added its "
             "gradient to them. Skip before backward(), or zero the gradients at the start of every step.",
             "坏 batch 被跳过了，但它们在 .grad 里留下了 NaN 梯度，下一个正常 batch 的梯度又加在了上面。"
             "请在 backward() 之前就跳过，或在每一步开始时清零梯度。", key="nan-grads-left")
    fail("The bad batches were skipped, but the next good batch's update is wrong: after a skip, the next step trains "
         "as any step does (zero the gradients, backward, clip, step).",
         "坏 batch 被跳过了，但下一个正常 batch 的更新不对：跳过之后，下一步应像平常一样训练（清零梯度、backward、裁剪、step）。",
         key="wrong-update-after-skip")


@check("safe_train_step returns the loss as a Python float, also when it skips a batch", points=1,
       zh="safe_train_step 以 Python float 返回损失，跳过 batch 时也是", depends="step_skips")
def test_step_returns(submission, rng):
    weight, bias, lr, max_norm, batches = skip_batches(rng)
    records = run_steps(submission, weight, bias, batches, lr, max_norm)
    before = params_before(records, weight, bias)
    if not all(unchanged(records[i], before[i]) for i in BAD_BATCHES):
        fail("The bad batches are not skipped yet, so there is no skipped batch whose returned loss could be checked: "
             "this point comes with the skip.",
             "坏 batch 还没有被跳过，所以没有可以检查返回值的被跳过的 batch：实现跳过之后才能得到这一分。",
             key="bad-batch-not-skipped")
    for i, (record, (x, y), (w, b)) in enumerate(zip(records, batches, before)):
        loss = float(F.mse_loss(F.linear(x, w, b), y))  # float32, as the learner's loss_fn computes it
        what = Text("The value safe_train_step returned for batch {i}", "safe_train_step 对第 {i} 个 batch 返回的值", i=i)
        returned = record["returned"]
        if math.isfinite(loss) or not is_number(returned, (int, float)):
            expect_number(returned, loss, what, exact_type=True)  # a value, or a lesson about the type
            continue
        if not (math.isnan(returned) if math.isnan(loss) else returned == loss):
            fail("{what} should be the loss, {want}, got {got}: a skipped batch still returns its loss, so the caller "
                 "sees that it was bad.",
                 "{what} 应为损失 {want}，实际为 {got}：被跳过的 batch 也要返回它的损失，调用者才能知道这个 batch 是坏的。",
                 what=what, want=loss, got=returned, key="skip-returns-other")
