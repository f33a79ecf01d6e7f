"""Hidden checks of ex19: NaN and inf, found and fixed.

The judge draws inputs with the extreme values that break the textbook formulas (logits of
+-30..120, score rows spread over thousands or sitting near -1000, batches containing NaN or
values whose square overflows), computes the expectations with its own torch in float64 (or,
for the training step, by replaying the step in float32), and names the textbook mistake when a
wrong answer matches it.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from grader.checking import check, describe, expect_close, expect_number, expect_tensor, fail, probe
from grader.gradients import gradient_lines


# -- probes (run in the sandbox) --------------------------------------------------------------

@probe
def call_catching(module, name, *args):
    """Call `name(*args)`; a RuntimeError or TypeError comes back as text so the check can explain it."""
    try:
        return {"value": getattr(module, name)(*args)}
    except (RuntimeError, TypeError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


@probe
def bce_gradient(module, logits, targets):
    z = logits.clone().requires_grad_(True)
    loss = module.bce_with_logits(z, targets)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        return {"loss": loss}
    loss.reshape(()).backward()
    return {"loss": loss.detach(), "grad": z.grad}


@probe
def torch_calls(module, x, dim):
    """The names of the torch functions logsumexp calls (through a TorchFunctionMode)."""
    from torch.overrides import TorchFunctionMode

    names = []

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    with Recorder():
        module.logsumexp(x, dim)
    return sorted(set(names))


@probe
def train_steps(module, weight, bias, batches, lr, max_norm):
    """Run safe_train_step on a Linear model with plain SGD over `batches`; record after each call."""
    model = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    records = []
    for x, y in batches:
        returned = module.safe_train_step(model, optimizer, nn.MSELoss(), x, y, max_norm)
        if isinstance(returned, torch.Tensor):
            returned = returned.detach()
        records.append({"returned": returned, "weight": model.weight.detach().clone(),
                        "bias": model.bias.detach().clone()})
    return records


# -- bce_with_logits --------------------------------------------------------------------------

def draw_logits(rng):
    """Logits [6, 4]: moderate ones, plus 8 extreme ones (|z| in 30..120), 4 of them confidently wrong.

    Two of the wrong ones are positive and below 90: sigmoid rounds them to exactly 1.0, so a formula
    that forms sigmoid(z) gets log(0) there (BCELoss: 100 instead of z, always too large; no other
    error can cancel it), on every draw."""
    z = 2 * torch.randn(6, 4, generator=rng)
    t = (torch.rand(6, 4, generator=rng) < 0.5).float()
    idx = torch.randperm(24, generator=rng)[:8]
    sign = torch.where(torch.rand(8, generator=rng) < 0.5, -1.0, 1.0)
    sign[:4] = torch.tensor([1.0, 1.0, -1.0, -1.0])
    size = torch.empty(8).uniform_(30, 120, generator=rng)
    size[:4] = torch.empty(4).uniform_(30, 90, generator=rng)
    z.view(-1)[idx] = sign * size
    wrong = (sign < 0).float()  # the target opposite to the logit's sign
    t.view(-1)[idx[:4]] = wrong[:4]
    t.view(-1)[idx[4:]] = 1 - wrong[4:]
    return z, t


def bce_ref(z, t):
    return F.binary_cross_entropy_with_logits(z.double(), t.double())


def close(a, b) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-6))


@check("bce_with_logits is right on huge logits", points=2, zh="bce_with_logits 在极大的 logits 上也正确")
def test_bce_values(submission, rng):
    z, t = draw_logits(rng)
    loss = expect_tensor(submission.bce_with_logits(z, t), "bce_with_logits(logits, targets)", floating=True)
    if loss.numel() != 1:
        fail(f"bce_with_logits should return one number (the mean over all elements), got shape {list(loss.shape)}.",
             f"bce_with_logits 应返回一个数（对所有元素求平均），实际形状为 {list(loss.shape)}。")
    loss = loss.reshape(())
    if not torch.isfinite(loss):
        fail(f"bce_with_logits returned {float(loss)} on logits up to |120|: for large |z|, sigmoid(z) rounds to exactly "
             "0 or 1 in float32, so log(sigmoid(z)) or log(1 - sigmoid(z)) is log(0) = -inf. Never form sigmoid "
             "explicitly: BCEWithLogitsLoss works on the logits directly.",
             f"在 |z| 最大到 120 的 logits 上，bce_with_logits 返回了 {float(loss)}：|z| 很大时，sigmoid(z) 在 float32 中"
             "会被舍入成正好 0 或 1，于是 log(sigmoid(z)) 或 log(1 - sigmoid(z)) 就是 log(0) = -inf。不要显式计算 "
             "sigmoid：BCEWithLogitsLoss 直接作用于 logits。")
    expected = bce_ref(z, t)
    if close(loss, expected):
        return
    if close(loss, F.binary_cross_entropy(torch.sigmoid(z), t)):
        fail(f"bce_with_logits is {float(loss):.4g}, expected {float(expected):.4g}: sigmoid(z) rounds to exactly 1.0 or "
             "0.0 in float32 once |z| is large, and BCELoss then clamps log(0) to -100, so every confident mistake "
             "costs 100 instead of |z|. Pass the logits to BCEWithLogitsLoss (F.binary_cross_entropy_with_logits) "
             "instead of sigmoid + BCELoss.",
             f"bce_with_logits 为 {float(loss):.4g}，应为 {float(expected):.4g}：|z| 较大时 sigmoid(z) 在 float32 中会被"
             "舍入成正好 1.0 或 0.0，BCELoss 再把 log(0) 截断为 -100，于是每个“自信的错误”都记成 100 而不是 |z|。"
             "请把 logits 交给 BCEWithLogitsLoss（F.binary_cross_entropy_with_logits），不要 sigmoid + BCELoss。")
    if close(loss, F.binary_cross_entropy_with_logits(torch.sigmoid(z), t)):
        fail(f"bce_with_logits is {float(loss):.4g}, expected {float(expected):.4g}: the loss got probabilities, i.e. "
             "sigmoid was applied twice. BCEWithLogitsLoss applies sigmoid itself: give it the raw logits.",
             f"bce_with_logits 为 {float(loss):.4g}，应为 {float(expected):.4g}：损失函数收到的是概率，也就是 sigmoid 被"
             "用了两次。BCEWithLogitsLoss 内部自带 sigmoid：直接把原始 logits 交给它。")
    if close(loss, expected * z.numel()):
        fail(f"bce_with_logits is {float(loss):.4g}, expected {float(expected):.4g}: that is the sum over the "
             f"{z.numel()} elements; the loss is their mean.",
             f"bce_with_logits 为 {float(loss):.4g}，应为 {float(expected):.4g}：这是 {z.numel()} 个元素的和；"
             "损失应该是它们的平均值。")
    fail(f"bce_with_logits is {float(loss):.4g}, expected {float(expected):.4g} on logits up to |120|: a formula that "
         "forms sigmoid(z) (or clamps probabilities) loses the large-|z| terms. Use BCEWithLogitsLoss.",
         f"在 |z| 最大到 120 的 logits 上，bce_with_logits 为 {float(loss):.4g}，应为 {float(expected):.4g}："
         "先算出 sigmoid(z)（或截断概率）的公式会丢失大 |z| 的项。请使用 BCEWithLogitsLoss。")


@check("bce_with_logits has the right gradient on huge logits", points=1,
       zh="bce_with_logits 在极大的 logits 上梯度正确")
def test_bce_gradient(submission, rng):
    z, t = draw_logits(rng)
    result = submission.probe(bce_gradient, z, t, what="`bce_with_logits` then backward")
    if "grad" not in result:
        loss = result["loss"]
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            fail("The loss does not require grad: the graph from logits to the loss was cut (.detach(), .item() or "
                 "torch.no_grad()).",
                 "损失不 requires_grad：从 logits 到损失的计算图被切断了（.detach()、.item() 或 torch.no_grad()）。")
        fail(f"bce_with_logits should return a scalar tensor, got {describe(loss)}.",
             f"bce_with_logits 应返回标量 tensor，实际得到 {describe(loss)}。")
    grad = result["grad"]
    if grad is None:
        fail("logits.grad is None after backward: no gradient reached the logits.",
             "backward 之后 logits.grad 是 None：梯度没有传到 logits。")
    leaf = z.double().requires_grad_(True)
    (expected,) = torch.autograd.grad(F.binary_cross_entropy_with_logits(leaf, t.double()), leaf)
    grad = expect_tensor(grad, "d loss/d logits", shape=z.shape)
    if not torch.isfinite(grad).all():
        fail("d loss/d logits contains NaN or inf on large logits: the derivative of log(sigmoid(z)) blows up once "
             "sigmoid rounds to 0 or 1. BCEWithLogitsLoss has a stable backward as well.",
             "在大 logits 上 d loss/d logits 含有 NaN 或 inf：一旦 sigmoid 舍入成 0 或 1，log(sigmoid(z)) 的导数就会爆炸。"
             "BCEWithLogitsLoss 的反向传播同样是稳定的。")
    if close(grad, expected):
        return
    big = z.abs() > 20
    dead = big & (grad.abs() < 1e-12) & (expected.abs() > 1e-3)
    details = gradient_lines(grad.double(), expected, "d loss/d logits")
    if dead.any():
        fail(f"d loss/d logits is 0 where the logit is large and wrong ({details}): sigmoid saturated, so its "
             "derivative p(1-p) is exactly 0 and confident mistakes get no learning signal. BCEWithLogitsLoss gives "
             "(sigmoid(z) - t) / N there.",
             f"在 logit 很大且预测错误的位置，d loss/d logits 为 0（{details}）：sigmoid 饱和了，其导数 p(1-p) 正好为 0，"
             "自信的错误得不到任何学习信号。BCEWithLogitsLoss 在那里给出 (sigmoid(z) - t) / N。")
    expect_close(grad, expected, "d loss/d logits", hints={
        "factor": ("The loss is the mean over all elements, not the sum.", "损失是对所有元素求平均，不是求和。"),
    })


# -- logsumexp --------------------------------------------------------------------------------

def draw_scores(rng):
    """Rows of scores: tame ones, one spread over thousands, one near -1000, one with a masked -inf."""
    b = int(torch.randint(4, 7, (), generator=rng))
    k = b + int(torch.randint(1, 4, (), generator=rng))  # k != b, so a shape slip cannot broadcast silently
    x = torch.randn(b, k, generator=rng)
    x[0] = 400 * torch.randn(k, generator=rng)
    x[0, :2] = torch.tensor([700.0, -700.0])  # spread for sure: neither exp(x) nor exp(x - mean) fits in float32
    x[0] = x[0, torch.randperm(k, generator=rng)]
    x[1] = -1000 + torch.randn(k, generator=rng)
    x[2, int(torch.randint(0, k, (), generator=rng))] = -math.inf
    return x[torch.randperm(b, generator=rng)]


def lse_value(submission, x, dim):
    what = f"logsumexp(x{list(x.shape)}, dim={dim})"
    result = submission.probe(call_catching, "logsumexp", x, dim, what=f"`{what}`")
    if "error" in result:
        msg = result["error"]
        if "must match the size" in msg:
            fail(f"`{what}` raised \"{msg}\": the max lost the reduced dimension, so x - max does not line up. Keep it "
                 "with keepdim=True (then remove it from the result).",
                 f"`{what}` 抛出了 \"{msg}\"：最大值丢掉了被归约的维度，x - max 对不齐。请用 keepdim=True 保留它"
                 "（最后再从结果中去掉）。")
        if "tuple" in msg or "return_types" in msg:
            fail(f"`{what}` raised \"{msg}\": x.max(dim) returns a pair (values, indices); take .values, or use x.amax(dim).",
                 f"`{what}` 抛出了 \"{msg}\"：x.max(dim) 返回 (values, indices) 二元组；取 .values，或使用 x.amax(dim)。")
        fail(f"`{what}` raised {msg}", f"`{what}` 抛出了异常 {msg}")
    return what, result["value"]


@check("logsumexp is finite and right on huge and tiny scores", points=2,
       zh="logsumexp 在极大和极小的分数上有限且正确")
def test_lse_values(submission, rng):
    cases = [(draw_scores(rng), -1), (draw_scores(rng).t().contiguous(), 0)]
    x3 = torch.randn(2, 5, 3, generator=rng)
    x3[0, :, 1] += 800
    cases.append((x3, 1))
    for x, dim in cases:
        what, value = lse_value(submission, x, dim)
        expected = torch.logsumexp(x.double(), dim)
        value = expect_tensor(value, what, floating=True)
        if value.shape != expected.shape:
            expect_tensor(value, what, shape=expected.shape)  # explains the shape slip
        bad = ~torch.isfinite(value.double()) & torch.isfinite(expected)
        if bad.any():
            where = [int(i) for i in bad.nonzero()[0]]
            fail(f"{what} is {float(value[tuple(where)])} at {where}, expected {float(expected[tuple(where)]):.6g}: "
                 "overflow or underflow. exp(x) is inf in float32 once x > 88, and 0 once x < -104 (its log is -inf). "
                 "Subtract the max along `dim` (with keepdim=True, not the max of the whole tensor) before exp, then "
                 "add it back.",
                 f"{what} 在 {where} 处为 {float(value[tuple(where)])}，应为 {float(expected[tuple(where)]):.6g}：上溢或下溢。"
                 "在 float32 中 x > 88 时 exp(x) 为 inf，x < -104 时为 0（其 log 为 -inf）。先减去沿 `dim` 的最大值"
                 "（keepdim=True，而不是整个 tensor 的最大值）再求 exp，最后把它加回来。")
        if not close(value, expected):
            m = x.double().amax(dim)
            if close(value, expected - torch.where(torch.isfinite(m), m, torch.zeros_like(m))):
                fail(f"{what} is off by exactly the max along dim: subtracting the max is half the trick, add the max "
                     "back to the log of the sum (log sum exp(x) = m + log sum exp(x - m)).",
                     f"{what} 正好差了沿 dim 的最大值：减去最大值只是一半，还要把它加回到求和的 log 上"
                     "（log sum exp(x) = m + log sum exp(x - m)）。")
            expect_close(value, expected, what, rtol=1e-5, atol=1e-4)


@check("logsumexp is written by hand (no torch.logsumexp)", points=1, zh="logsumexp 是自己写的（不调用 torch.logsumexp）")
def test_lse_by_hand(submission, rng):
    x = draw_scores(rng)
    names = submission.probe(torch_calls, x, -1, what="`logsumexp`")
    if not isinstance(names, list):
        fail("Could not observe logsumexp.", "无法观察 logsumexp。")
    used = [n for n in names if "logsumexp" in n.lower()]
    if used:
        fail(f"logsumexp calls {used[0]} (torch.logsumexp): the point is to write the max trick yourself (max, subtract, exp, sum, log, "
             "add back).",
             f"logsumexp 调用了 {used[0]}（torch.logsumexp）：本题要你亲手实现“减最大值”的技巧（max、相减、exp、sum、log、加回）。")


# -- safe_train_step --------------------------------------------------------------------------

def draw_model(rng):
    weight = 0.5 * torch.randn(2, 4, generator=rng)
    bias = 0.5 * torch.randn(2, generator=rng)
    lr = float(torch.empty(()).uniform_(0.02, 0.1, generator=rng))
    max_norm = float(torch.empty(()).uniform_(0.5, 2.0, generator=rng))
    return weight, bias, lr, max_norm


def good_batch(rng):
    x = 3 * torch.randn(8, 4, generator=rng)
    y = 30 * torch.randn(8, 2, generator=rng)  # big targets: a gradient norm far above max_norm
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


def replay(weight, bias, batches, lr, max_norm, clip="norm", zero_grad=True):
    """The judge's own training steps, in float32 like the learner's: [(weight, bias, loss)] per batch."""
    # Plain SGD written out (p -= lr * p.grad is exactly torch.optim.SGD without momentum): creating a
    # torch.optim optimizer would import torch._dynamo in the judge, seconds per grading.
    w = weight.clone().requires_grad_(True)
    b = bias.clone().requires_grad_(True)
    states = []
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
        fail("Could not record the training steps.", "无法记录训练步骤。")
    return records


def same_params(record, state) -> bool:
    return close(record["weight"], state[0]) and close(record["bias"], state[1])


@check("safe_train_step clips the total gradient norm before the step", points=2,
       zh="safe_train_step 在 step 之前裁剪总梯度范数")
def test_step_clips(submission, rng):
    weight, bias, lr, max_norm = draw_model(rng)
    batches = [good_batch(rng), good_batch(rng)]
    records = run_steps(submission, weight, bias, batches, lr, max_norm)
    expected = replay(weight, bias, batches, lr, max_norm)
    alternatives = {
        "none": replay(weight, bias, batches, lr, max_norm, clip="none"),
        "value": replay(weight, bias, batches, lr, max_norm, clip="value"),
        "each": replay(weight, bias, batches, lr, max_norm, clip="each"),
        "accumulate": replay(weight, bias, batches, lr, max_norm, zero_grad=False),
    }
    for i, (record, state) in enumerate(zip(records, expected)):
        expect_number(record["returned"], state[2], f"the value safe_train_step returned for batch {i}")
        if same_params(record, state):
            continue
        before = (weight, bias) if i == 0 else (expected[i - 1][0], expected[i - 1][1])
        if close(record["weight"], before[0]) and close(record["bias"], before[1]):
            fail(f"The parameters did not change on batch {i}, whose loss {state[2]:.4g} is finite: call backward(), "
                 "then optimizer.step().",
                 f"第 {i} 个 batch 的损失 {state[2]:.4g} 是有限的，参数却没有变化：请调用 backward()，再调用 optimizer.step()。")
        if same_params(record, alternatives["none"][i]):
            fail(f"The update of batch {i} was not clipped (its gradient norm is far above max_norm={max_norm:.3g}): call "
                 "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm) after backward() and before "
                 "optimizer.step(); clipping after the step is too late.",
                 f"第 {i} 个 batch 的更新没有被裁剪（其梯度范数远大于 max_norm={max_norm:.3g}）：请在 backward() 之后、"
                 "optimizer.step() 之前调用 torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)；"
                 "在 step 之后再裁剪就太晚了。")
        if same_params(record, alternatives["value"][i]):
            fail("The gradients were clipped entry by entry (clip_grad_value_): that changes their direction. Use "
                 "clip_grad_norm_, which scales all gradients together so their total norm is at most max_norm.",
                 "梯度被逐元素截断了（clip_grad_value_）：这会改变梯度方向。请使用 clip_grad_norm_，它把所有梯度一起缩放，"
                 "使总范数不超过 max_norm。")
        if same_params(record, alternatives["each"][i]):
            fail("Each parameter's gradient was clipped on its own: clip_grad_norm_ must see all parameters at once "
                 "(model.parameters()), so the total norm is at most max_norm.",
                 "每个参数的梯度被单独裁剪了：clip_grad_norm_ 需要一次看到所有参数（model.parameters()），"
                 "使总范数不超过 max_norm。")
        if i == 1 and same_params(record, alternatives["accumulate"][i]):
            fail("The second step used the first batch's gradients too: gradients accumulate in .grad until zeroed. "
                 "Call optimizer.zero_grad() at the start of each step.",
                 "第二步还用到了第一个 batch 的梯度：梯度会在 .grad 中累加，直到被清零。请在每一步开始时调用 "
                 "optimizer.zero_grad()。")
        expect_close(record["weight"], state[0], f"the weight after batch {i}", rtol=1e-4, atol=1e-5)
        expect_close(record["bias"], state[1], f"the bias after batch {i}", rtol=1e-4, atol=1e-5)


@check("safe_train_step skips a batch whose loss is NaN or inf", points=2,
       zh="safe_train_step 跳过损失为 NaN 或 inf 的 batch")
def test_step_skips(submission, rng):
    weight, bias, lr, max_norm = draw_model(rng)
    batches = [good_batch(rng), nan_batch(rng), overflow_batch(rng), good_batch(rng)]
    records = run_steps(submission, weight, bias, batches, lr, max_norm)
    kinds = {1: ("a NaN in the inputs", "输入中有 NaN"),
             2: ("finite inputs whose squared error overflows float32", "输入有限但误差平方超出 float32 范围")}
    for i in (1, 2):
        record, before = records[i], records[0]  # a skipped batch leaves the weights exactly as they were
        if torch.equal(record["weight"], before["weight"]) and torch.equal(record["bias"], before["bias"]):
            continue
        why_en, why_zh = kinds[i]
        broken = not (torch.isfinite(record["weight"]).all() and torch.isfinite(record["bias"]).all())
        what_en = "made the weights NaN/inf" if broken else "changed the weights"
        what_zh = "让权重变成了 NaN/inf" if broken else "改变了权重"
        if i == 1:
            fail(f"A batch with loss NaN ({why_en}) {what_en}: a step on a non-finite loss must be skipped. Check "
                 "torch.isfinite(loss) before backward() and return without stepping.",
                 f"一个损失为 NaN 的 batch（{why_zh}）{what_zh}：损失不是有限值时必须跳过这一步。请在 backward() 之前检查 "
                 "torch.isfinite(loss)，不是有限值就直接返回，不做 step。")
        fail(f"A batch with loss inf ({why_en}) {what_en}, although a NaN batch was skipped: torch.isnan(loss) misses inf, "
             "and checking only the inputs misses an overflow. Test the loss itself with torch.isfinite(loss).",
             f"一个损失为 inf 的 batch（{why_zh}）{what_zh}，尽管 NaN 的 batch 被跳过了：torch.isnan(loss) 发现不了 inf，"
             "只检查输入也发现不了溢出。请用 torch.isfinite(loss) 检查损失本身。")
    # The last good batch, replayed from the learner's own weights (clipping is judged by the other check).
    last = records[3]
    replays = [replay(records[2]["weight"], records[2]["bias"], batches[3:], lr, max_norm, clip=clip)[0]
               for clip in ("norm", "none", "value", "each")]
    if torch.equal(last["weight"], records[2]["weight"]) and torch.equal(last["bias"], records[2]["bias"]):
        fail("A good batch with a finite loss left the weights unchanged: only non-finite losses are skipped; a finite "
             "one needs backward(), clipping and optimizer.step().",
             "一个损失有限的正常 batch 没有改变权重：只有非有限的损失才跳过；有限的损失需要 backward()、裁剪和 optimizer.step()。")
    if not any(same_params(last, state) for state in replays):
        fail("The bad batches were skipped, but the next good batch went wrong: were NaN gradients from a skipped batch "
             "left in .grad? Skip before backward(), or zero the gradients at the start of every step.",
             "坏 batch 被跳过了，但下一个正常 batch 的更新不对：被跳过的 batch 是否在 .grad 里留下了 NaN 梯度？"
             "请在 backward() 之前就跳过，或在每一步开始时清零梯度。")
    expect_number(last["returned"], replays[0][2], "the value safe_train_step returned for the last batch")
