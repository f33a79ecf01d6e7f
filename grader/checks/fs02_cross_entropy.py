"""Hidden checks of fs02: cross-entropy from logits, with ignore_index and label smoothing, written by hand.

The judge draws logits and integer targets per seed (ordinary rows, one sample, rows around +-1000 and rows
where the target's probability underflows float32, targets equal to the default ignore_index -100 or to a class
index chosen as ignore_index, every target ignored, a label smoothing drawn in [0.05, 0.3]) and compares the
learner's loss with torch's own `F.cross_entropy` in float64, with the same ignore_index, label_smoothing and
reduction. A classic mistake is named only when the learner's value is what that mistake computes, each computed
here in the judge: a sum where the mean belongs (or the reverse), the mean over all N rows instead of those that
count, ignored targets counted, the logit picked for every row, the raw logit or the probability instead of the
log-probability, no max subtracted, the log of the softmax, the smoothing spread over the C - 1 other classes,
without its 1 - eps, summed over the classes, or applied to ignored rows.

The built-ins are forbidden: a probe records the torch functions the learner's function calls (a
TorchFunctionMode: `F.cross_entropy`, `nn.CrossEntropyLoss`, `F.nll_loss`, `nn.NLLLoss` and every spelling of
`log_softmax`); a loss one of them computed earns nothing (the ex05 rule), and the by-hand check names it.

Kata variants: `variant("reduction")` is how the loss reduces over the rows, "mean" as F.cross_entropy's default
(divided by the number of targets that count: NaN when every target is ignored) or "sum" (0 then); the reference,
the candidates and the messages follow it.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import (Text, check, expect_close, expect_tensor, explain, fail, probe, recording_calls, variant,
                             verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.gradients import expect_gradient

CALL = "cross_entropy(logits, targets, ignore_index, label_smoothing)"

# -- probes (run in the sandbox) ----------------------------------------------------------------


@probe
def torch_calls(module, logits, targets, ignore_index, label_smoothing):
    """The names of the torch functions cross_entropy calls (through a TorchFunctionMode: every spelling of a torch
    function or Tensor method goes through it). An error is the value checks' lesson: the names seen until then
    are kept."""
    names = set()

    try:
        with recording_calls(names):
            module.cross_entropy(logits, targets, ignore_index=ignore_index, label_smoothing=label_smoothing)
    except Exception:  # a missing or failing function is judged by the value checks
        pass
    return sorted(names)


@probe
def loss_gradient(module, logits, targets, ignore_index, label_smoothing):
    """The loss and d loss/d logits through the learner's function (backward in the sandbox)."""
    z = logits.clone().requires_grad_(True)
    loss = module.cross_entropy(z, targets, ignore_index=ignore_index, label_smoothing=label_smoothing)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        return {"loss": loss.detach() if isinstance(loss, torch.Tensor) else loss}
    loss.reshape(()).backward()
    return {"loss": loss.detach(), "grad": z.grad}


# -- judge-side helpers -------------------------------------------------------------------------

def reduction() -> str:
    """How this draw reduces over the rows: "mean" (F.cross_entropy's default) or "sum"."""
    return variant("reduction")["name"]


def reference(x, t, ii=-100, ls=0.0):
    return F.cross_entropy(x.double(), t, ignore_index=ii, label_smoothing=ls, reduction=reduction())


def builtins_used(submission, rng) -> list[str]:
    """The forbidden torch functions cross_entropy called, probed once per grading."""
    def run():
        x = torch.randn(4, 5, generator=rng)
        return submission.probe(torch_calls, x, torch.tensor([0, 3, -100, 1]), -100, 0.1, what=f"`{CALL}`")
    return forbidden_calls("cross_entropy", submission.once("calls", run))


SPELLINGS = {"cross_entropy": "F.cross_entropy, nn.CrossEntropyLoss", "nll_loss": "F.nll_loss, nn.NLLLoss",
             "log_softmax": "F.log_softmax, torch.log_softmax, x.log_softmax, nn.LogSoftmax",
             "kl_div": "F.kl_div, nn.KLDivLoss: against one-hot targets, the NLL of its input"}


def by_hand_only(submission, rng) -> None:
    """A loss torch's own cross-entropy computed is not earned here (the ex05 rule): fail when one was called."""
    used = builtins_used(submission, rng)
    if used:
        name = next((k for k in SPELLINGS if k in used[0].lower()), used[0])
        fail("cross_entropy calls torch's own `{name}` ({spellings}): its values are torch's, not yours. Write the "
             "log-softmax with the max trick (fs01), pick each row's target, then reduce.",
             "cross_entropy 调用了 torch 自带的 `{name}`（{spellings}）：这些值是 torch 算的，不是你写的。"
             "请用减最大值的技巧（fs01）写出 log-softmax，取出每一行目标类别的值，再做归约。",
             name=verbatim(used[0]), spellings=verbatim(SPELLINGS.get(name, f"torch.{used[0]}")),
             key="builtin-cross-entropy")


def same(a, b) -> bool:
    """Close scalars, where NaN equals NaN and an infinity itself."""
    return bool(torch.allclose(a.double().reshape(()), b.double().reshape(()), rtol=1e-4, atol=1e-6, equal_nan=True))


def what_of(x, t, ii, ls) -> str:
    args = f"logits{list(x.shape)}, targets{list(t.shape)}"
    if ii != -100:
        args += f", ignore_index={ii}"
    if ls:
        args += f", label_smoothing={ls:.3g}"
    return f"cross_entropy({args})"


OUT_OF_BOUNDS = Text("A target equal to ignore_index is not a class index: gather or index with it and it is out of "
                     "bounds. Mask those rows (targets != ignore_index) and use any valid index, such as 0, in their "
                     "place before you pick.",
                     "等于 ignore_index 的目标不是类别下标：用它去 gather 或索引就会越界。请先把这些行屏蔽掉"
                     "（targets != ignore_index），在取值之前用任意合法下标（例如 0）代替它。")


def loss_of(submission, x, t, ii=-100, ls=0.0, defaults=False):
    """The learner's loss: a one-element tensor, as a 0-dim one; the call named with its arguments."""
    what = what_of(x, t, ii, ls)
    with explain({"out of bounds": OUT_OF_BOUNDS}, key="ignored-not-masked"):
        value = submission.cross_entropy(x, t) if defaults else \
            submission.cross_entropy(x, t, ignore_index=ii, label_smoothing=ls)
    value = expect_tensor(value, what, floating=True)
    if value.numel() != 1:
        fail("{what} should be one number, got shape {shape}: one loss per row is not reduced yet ({how}).",
             "{what} 应为一个数，实际形状为 {shape}：每一行一个损失，还没有归约（{how}）。", what=what,
             shape=list(value.shape), how=HOW[reduction()], key="not-reduced")
    return what, value.reshape(())


HOW = {"mean": Text("the mean over the targets that count", "对计入的目标求平均"),
       "sum": Text("the sum over the targets that count", "对计入的目标求和")}


def rows(x, t, ii):
    """Per row, in float64: the log-probabilities, the rows that count, each row's -log p(target) and -mean_c log p."""
    lp = F.log_softmax(x.double(), dim=1)
    keep = t != ii
    safe = torch.where(keep, t, torch.zeros_like(t))
    nll = -lp.gather(1, safe[:, None])[:, 0]
    return lp, keep, nll, -lp.mean(dim=1)


def reduce(r, keep, how=None):
    how = how or reduction()
    kept = r[keep]
    return kept.sum() / keep.sum() if how == "mean" else kept.sum()


def candidates(x, t, ii, ls) -> list:
    """(value, key, English, Chinese) for each known mistake, computed here in float64."""
    lp, keep, nll, smooth = rows(x, t, ii)
    n, c = x.shape
    right = (1 - ls) * nll + ls * smooth
    found = []
    other = "sum" if reduction() == "mean" else "mean"
    found.append((reduce(right, keep, other), "sum-for-mean" if other == "sum" else "mean-for-sum",
                  "that is the {other} over the rows; this loss takes the {how}.",
                  "这是对各行求{other_zh}；本题的损失要{how}。"))
    if reduction() == "mean" and not keep.all():
        found.append((right[keep].sum() / n, "divides-by-n",
                      "that divides by all {n} rows; ignored rows do not count, so divide by the {k} targets that do.",
                      "这是除以全部 {n} 行；被忽略的行不计入，应除以计入的 {k} 个目标。"))
    if not keep.all():
        picked = t if ii >= 0 else torch.where(keep, t, torch.zeros_like(t))  # -100 clamped or replaced by class 0
        counted = (1 - ls) * -lp.gather(1, picked[:, None])[:, 0] + ls * smooth
        found.append((reduce(counted, torch.ones_like(keep)), "ignored-counted",
                      "the rows whose target equals ignore_index ({ii}) were counted (as a class); they must be left "
                      "out, of the sum and of the count.",
                      "目标等于 ignore_index（{ii}）的行被（当作某个类别）计入了；它们必须被排除，既不计入求和，也不计入个数。"))
    if n > 1:
        matrix = -lp[:, torch.where(keep, t, torch.zeros_like(t))]  # [N, N]: every row against every target
        summed = matrix[:, keep].sum()
        for wrong in ((matrix.mean(), summed / keep.sum()) if reduction() == "mean" else (summed,)):
            found.append((wrong, "picked-for-every-row",
                          "logp[:, targets] picks every target for every row (an [N, N] matrix); pick one per row: "
                          "logp[torch.arange(N), targets] or gather(1, targets[:, None]).",
                          "logp[:, targets] 对每一行取了所有目标（一个 [N, N] 矩阵）；每行只取一个："
                          "logp[torch.arange(N), targets] 或 gather(1, targets[:, None])。"))
    safe = torch.where(keep, t, torch.zeros_like(t))
    found.append((reduce(-x.double().gather(1, safe[:, None])[:, 0], keep), "raw-logits",
                  "that is minus the raw logit of each target; the loss is minus its log-probability, the logit "
                  "minus log(sum(exp(logits))) of its row.",
                  "这是每个目标的原始 logit 取负；损失应是它的对数概率取负，即 logit 减去本行的 log(sum(exp(logits)))。"))
    found.append((reduce(-lp.exp().gather(1, safe[:, None])[:, 0], keep), "probabilities-not-log",
                  "that is minus the probability of each target; the loss takes its log.",
                  "这是每个目标的概率取负；损失要对它取 log。"))
    if ls:
        rest = (lp.sum(dim=1) - lp.gather(1, safe[:, None])[:, 0]) / (c - 1)
        found += [
            (reduce((1 - ls) * nll - ls * rest, keep), "smoothing-other-classes",
             "the smoothing mass eps went to the C - 1 other classes only (eps / (C - 1) each); torch spreads it over "
             "all C classes, the target included: (1 - eps) * nll + eps * mean over classes of -log p.",
             "平滑的质量 eps 只分给了其余 C - 1 个类别（每个 eps / (C - 1)）；torch 把它分给全部 C 个类别，"
             "包括目标类别：(1 - eps) * nll + eps * 对各类别 -log p 的平均。"),
            (reduce(nll + ls * smooth, keep), "smoothing-without-one-minus",
             "the target's term kept its full weight; with smoothing it gets 1 - eps: (1 - eps) * nll + eps * mean "
             "over classes of -log p.",
             "目标类别那一项保留了完整的权重；加了平滑以后它的权重是 1 - eps：(1 - eps) * nll + eps * 对各类别 "
             "-log p 的平均。"),
            (reduce((1 - ls) * nll + ls * c * smooth, keep), "smoothing-summed",
             "the smoothing term sums -log p over the C classes; it is their mean (eps / C for each class).",
             "平滑项对 C 个类别的 -log p 求了和；应是平均（每个类别 eps / C）。"),
            (reduce(nll, keep), "smoothing-ignored",
             "that is the loss without label smoothing; mix in eps times the mean over classes of -log p.",
             "这是没有标签平滑的损失；要混入 eps 乘以对各类别 -log p 的平均。"),
        ]
        if not keep.all():
            spread = ((1 - ls) * torch.where(keep, nll, torch.zeros_like(nll)) + ls * smooth).sum()
            found.append((spread / keep.sum() if reduction() == "mean" else spread, "smoothing-on-ignored",
                          "the smoothing term of the ignored rows was counted; an ignored row adds nothing, "
                          "smoothing included.",
                          "被忽略的行的平滑项被计入了；被忽略的行什么都不加，平滑项也不例外。"))
    return found


def diagnose(value, x, t, ii, ls, what) -> None:
    """Name the known mistake `value` is; fall back to a plain comparison."""
    expected = reference(x, t, ii, ls)
    if same(value, expected):
        return
    lp, keep, _, _ = rows(x, t, ii)
    values = dict(what=what, got=float(value), want=float(expected), n=x.shape[0], k=int(keep.sum()), ii=ii,
                  how=HOW[reduction()], other=reduction() == "mean" and "sum" or "mean",
                  other_zh=reduction() == "mean" and "和" or "平均")
    for candidate, key, en, zh in candidates(x, t, ii, ls):
        if same(value, candidate):
            fail("{what} is {got:.6g}, expected {want:.6g}: " + en, "{what} 为 {got:.6g}，应为 {want:.6g}：" + zh,
                 **values, key=key)
    if not math.isnan(float(expected)) and not math.isfinite(float(value)):
        fail("{what} is {got}, expected {want:.6g}: an overflow or a log(0). exp(logits) is inf in float32 once a "
             "logit passes 88, and the log of a probability that underflowed to 0 is -inf. Compute log-probabilities "
             "with the max trick: (x - max) - log(sum(exp(x - max))) along the classes.",
             "{what} 为 {got}，应为 {want:.6g}：发生了溢出或 log(0)。在 float32 中 logit 超过 88 时 exp(logits) 为 inf，"
             "下溢成 0 的概率取 log 得 -inf。请用减最大值的技巧计算对数概率：沿类别维计算 "
             "(x - max) - log(sum(exp(x - max)))。", **values, key="overflow")
    expect_close(value, expected, what, n=int(keep.sum()) if reduction() == "mean" else None)


def draw(rng, n=None, c=None, scale=2.0):
    n = n or int(torch.randint(5, 9, (), generator=rng))
    c = c or int(torch.randint(3, 7, (), generator=rng))
    x = scale * torch.randn(n, c, generator=rng)
    t = torch.randint(0, c, (n,), generator=rng)
    return x, t


def extreme(rng):
    """Rows around +1000 and -1000, rows spread over hundreds with the target far below the max (its probability
    underflows float32 to 0, its loss is in the hundreds), ordinary rows; shuffled."""
    x, t = draw(rng, n=6, c=5)
    x[0] += 1000
    x[1] -= 1000
    for row in (2, 3):
        x[row] = 50 * torch.randn(5, generator=rng)
        x[row, t[row]] = x[row].max() - 150 - 100 * torch.rand((), generator=rng)
    order = torch.randperm(6, generator=rng)
    return x[order], t[order]


def with_ignored(rng, ii, n=None):
    """Ordinary rows with two or three targets set to ignore_index (never all of them)."""
    x, t = draw(rng, n=n)
    k = int(torch.randint(2, 4, (), generator=rng))
    t[torch.randperm(len(t), generator=rng)[:k]] = ii
    return x, t


# -- the checks ---------------------------------------------------------------------------------

@check("cross_entropy matches F.cross_entropy on ordinary logits (one row too)", points=2,
       zh="cross_entropy 在普通 logits 上与 F.cross_entropy 一致（只有一行时也是）")
def test_plain(submission, rng):
    by_hand_only(submission, rng)
    for n in (None, 1):
        x, t = draw(rng, n=n)
        what, value = loss_of(submission, x, t, defaults=True)
        diagnose(value, x, t, -100, 0.0, what)


@check("cross_entropy is finite and right on logits near +-1000 and on targets whose probability underflows",
       points=2, zh="cross_entropy 在 +-1000 附近的 logits 和概率下溢的目标上有限且正确", depends="plain")
def test_stable(submission, rng):
    by_hand_only(submission, rng)
    x, t = extreme(rng)
    what, value = loss_of(submission, x, t)
    diagnose(value, x, t, -100, 0.0, what)


@check("targets equal to ignore_index are left out, -100 by default or a class index", points=2,
       zh="等于 ignore_index 的目标被排除在外，默认是 -100，也可以是某个类别下标", depends="plain")
def test_ignore(submission, rng):
    by_hand_only(submission, rng)
    x, t = with_ignored(rng, -100)
    what, value = loss_of(submission, x, t, defaults=True)
    diagnose(value, x, t, -100, 0.0, what)
    x, t = draw(rng)
    ii = int(t[int(torch.randint(0, len(t), (), generator=rng))])  # a class that some targets are
    if bool((t == ii).all()):
        t[0] = (ii + 1) % x.shape[1]
    what, value = loss_of(submission, x, t, ii)
    diagnose(value, x, t, ii, 0.0, what)


@check("with every target ignored, cross_entropy gives what F.cross_entropy gives", points=1,
       zh="所有目标都被忽略时，cross_entropy 给出与 F.cross_entropy 相同的结果", depends="ignore")
def test_all_ignored(submission, rng):
    by_hand_only(submission, rng)
    x, _ = draw(rng)
    t = torch.full((x.shape[0],), -100)
    what, value = loss_of(submission, x, t)
    expected = reference(x, t)
    if same(value, expected):
        return
    if reduction() == "mean":
        fail("{what} is {got}, expected nan, as F.cross_entropy gives: with every target ignored the mean is 0 / 0. "
             "Do not guard it into {got}: a NaN loss tells the caller the batch had nothing to learn from.",
             "{what} 为 {got}，应为 nan，与 F.cross_entropy 一致：所有目标都被忽略时，平均值就是 0 / 0。"
             "不要把它特判成 {got}：NaN 的损失正是在告诉调用者这个 batch 没有可学的东西。",
             what=what, got=float(value), key="all-ignored-guarded")
    fail("{what} is {got}, expected 0, as F.cross_entropy gives: the sum over no rows is 0.",
         "{what} 为 {got}，应为 0，与 F.cross_entropy 一致：对零行求和就是 0。", what=what, got=float(value),
         key="all-ignored-sum")


@check("label_smoothing mixes in the uniform distribution as F.cross_entropy does, ignored rows left out", points=1,
       zh="label_smoothing 按 F.cross_entropy 的方式混入均匀分布，被忽略的行不计入", depends="ignore")
def test_smoothing(submission, rng):
    by_hand_only(submission, rng)
    ls = float(torch.empty(()).uniform_(0.05, 0.3, generator=rng))
    for x, t in (draw(rng), with_ignored(rng, -100)):
        what, value = loss_of(submission, x, t, -100, ls)
        diagnose(value, x, t, -100, ls, what)


@check("the gradient of cross_entropy for the logits is torch's, finite on large logits, 0 on ignored rows",
       points=1, zh="cross_entropy 对 logits 的梯度与 torch 一致：大 logits 上有限，被忽略的行为 0",
       depends=("stable", "ignore"))
def test_gradient(submission, rng):
    by_hand_only(submission, rng)
    x, t = extreme(rng)
    ignored = int(torch.randint(0, len(t), (), generator=rng))
    t[ignored] = -100
    # its logits spread by about 1 around their mean, +-1000 kept: counted with any stand-in class, the row's gradient
    # softmax - one_hot is far from 0 (a row spread over hundreds is one-hot already, and hid it on some draws)
    x[ignored] = x[ignored].mean() + torch.randn(x.shape[1], generator=rng)
    result = submission.probe(loss_gradient, x, t, -100, 0.0, what=Text("`{call}` then backward", "`{call}` 之后 backward",
                                                                        call=verbatim(CALL)))
    if "grad" not in result:
        fail("The loss does not require grad: the graph from the logits to the loss was cut (.detach(), .item(), "
             "torch.no_grad() or a NumPy round trip).",
             "损失不 requires_grad：从 logits 到损失的计算图被切断了（`.detach()`、`.item()`、`torch.no_grad()` "
             "或者转成了 NumPy）。", key="graph-cut")
    leaf = x.double().requires_grad_(True)
    (expected,) = torch.autograd.grad(reference(leaf, t), leaf)
    grad = result["grad"]
    if grad is not None and grad.shape == x.shape and not torch.isfinite(grad).all():
        fail("d loss/d logits contains NaN or inf on logits near +-1000: a term that overflows still reaches the "
             "gradient, even where its value was masked or discarded. Keep every term finite (the max trick) and "
             "mask with torch.where, not by multiplying by 0.",
             "在 +-1000 附近的 logits 上，d loss/d logits 含有 NaN 或 inf：溢出的项即使数值被屏蔽或丢弃，仍会传到梯度里。"
             "请让每一项都保持有限（减最大值的技巧），并用 torch.where 屏蔽，而不是乘以 0。", key="gradient-not-finite")
    # float32 logits near 1000 carry an absolute error of about 6e-5 into every exp: a float32 tolerance
    expect_gradient(grad, expected, "logits", rtol=1e-3, atol=1e-5)


@check("cross_entropy is written by hand (no F.cross_entropy, nll_loss or log_softmax)", points=1,
       zh="cross_entropy 是自己写的（不调用 F.cross_entropy、nll_loss 或 log_softmax）", depends="plain")
def test_by_hand(submission, rng):
    by_hand_only(submission, rng)
