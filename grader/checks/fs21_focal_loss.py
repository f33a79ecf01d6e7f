"""Hidden checks of fs21: focal loss from logits, binary (sigmoid) and multi-class (softmax), with alpha weighting.

The judge draws logits and targets per seed (ordinary [N, K] logits with 0/1 targets of both labels, a single
element, rows around +-200 whose sigmoid underflows float32, multi-class rows around +-1000 and rows whose target's
probability underflows, a gamma in {0.5, 1, 1.5, 2.5, 3} (an odd or fractional power shows the sign of 1 - p_t),
an alpha in [0.1, 0.4] so that alpha and 1 - alpha differ, per-class alphas) and compares the learner's loss with a reference computed here in float64 from torch's own cross-entropies
(`F.binary_cross_entropy_with_logits`, `F.log_softmax`): the formula of torchvision's `sigmoid_focal_loss` and of
RetinaNet. With gamma = 0 (and no alpha) it is compared with `F.binary_cross_entropy_with_logits` and
`F.cross_entropy` themselves. A classic mistake is named only when the learner's value is what that mistake
computes, each computed here: the other reduction, alpha swapped between positives and negatives, alpha on every
element, alpha left out, the focal factor from p instead of p_t or as p_t ** gamma, no focal factor, a weighted mean
(divided by the sum of the alphas), the focal term summed over every class, the log of a probability that
underflowed. The gradient for the logits runs backward in the sandbox.

Kata variants: `variant("reduction")` is how both losses reduce, "mean" over every element or "sum".
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, fail, probe, variant, verbatim
from grader.gradients import expect_gradient

# -- probes (run in the sandbox) ----------------------------------------------------------------


@probe
def loss_gradient(module, name, logits, targets, alpha, gamma):
    """The loss and d loss/d logits through the learner's `name` function (backward in the sandbox)."""
    z = logits.clone().requires_grad_(True)
    loss = getattr(module, name)(z, targets, alpha=alpha, gamma=gamma)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        return {"loss": loss.detach() if isinstance(loss, torch.Tensor) else loss}
    loss.reshape(()).backward()
    return {"loss": loss.detach(), "grad": z.grad}


# -- judge-side helpers -------------------------------------------------------------------------

def reduction() -> str:
    """How this draw reduces: "mean" over every element, or "sum"."""
    return variant("reduction")["name"]


def reduce(loss, how=None):
    return loss.mean() if (how or reduction()) == "mean" else loss.sum()


def binary_terms(x, t, alpha, gamma):
    """Per element, in float64: the cross-entropy, p, p_t, the focal factor and the alpha weight (1 without alpha)."""
    x, t = x.double(), t.double()
    ce = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    p = torch.sigmoid(x)
    p_t = p * t + (1 - p) * (1 - t)
    a_t = torch.ones_like(x) if alpha is None else alpha * t + (1 - alpha) * (1 - t)
    return ce, p, p_t, (1 - p_t) ** gamma, a_t


def binary_reference(x, t, alpha=0.25, gamma=2.0):
    ce, _, _, focal, a_t = binary_terms(x, t, alpha, gamma)
    return reduce(a_t * focal * ce)


def multi_terms(x, t, alpha, gamma):
    """Per row, in float64: log p_t, p_t, the focal factor, the alpha weight, and every class's log p."""
    logp = F.log_softmax(x.double(), dim=1)
    logp_t = logp.gather(1, t[:, None])[:, 0]
    p_t = logp_t.exp()
    a_t = torch.ones_like(p_t) if alpha is None else alpha.double()[t]
    return logp_t, p_t, (1 - p_t) ** gamma, a_t, logp


def multi_reference(x, t, alpha=None, gamma=2.0):
    logp_t, _, focal, a_t, _ = multi_terms(x, t, alpha, gamma)
    return reduce(-a_t * focal * logp_t)


def same(a, b) -> bool:
    """Close scalars, where NaN equals NaN and an infinity itself."""
    return bool(torch.allclose(a.double().reshape(()), b.double().reshape(()), rtol=1e-4, atol=1e-6, equal_nan=True))


def args_of(alpha, gamma, alpha_default, gamma_default=2.0) -> str:
    out = ""
    if alpha is None and alpha_default is not None:
        out += ", alpha=None"
    elif isinstance(alpha, torch.Tensor):
        out += f", alpha={[round(a, 3) for a in alpha.tolist()]}"
    elif alpha is not None and alpha != alpha_default:
        out += f", alpha={alpha:.3g}"
    if gamma != gamma_default:
        out += f", gamma={gamma:g}"
    return out


HOW = {"mean": Text("the mean over every element", "对每个元素求平均"),
       "sum": Text("the sum over every element", "对每个元素求和")}

OTHER = ("that is the {other} over the elements; this loss takes {how}.",
         "这是对各元素求{other_zh}；本题的损失要{how}。")


def scalar(value, what):
    value = expect_tensor(value, what, floating=True)
    if value.numel() != 1:
        fail("{what} should be one number, got shape {shape}: one loss per element is not reduced yet ({how}).",
             "{what} 应为一个数，实际形状为 {shape}：每个元素一个损失，还没有归约（{how}）。", what=what,
             shape=list(value.shape), how=HOW[reduction()], key="not-reduced")
    return value.reshape(())


def binary_loss(submission, x, t, alpha=0.25, gamma=2.0, defaults=False):
    what = f"sigmoid_focal_loss(logits{list(x.shape)}, targets{list(t.shape)}{args_of(alpha, gamma, 0.25)})"
    value = submission.sigmoid_focal_loss(x, t) if defaults else \
        submission.sigmoid_focal_loss(x, t, alpha=alpha, gamma=gamma)
    return what, scalar(value, what)


def multi_loss(submission, x, t, alpha=None, gamma=2.0, defaults=False):
    what = f"focal_loss(logits{list(x.shape)}, targets{list(t.shape)}{args_of(alpha, gamma, None)})"
    value = submission.focal_loss(x, t) if defaults else submission.focal_loss(x, t, alpha=alpha, gamma=gamma)
    return what, scalar(value, what)


def binary_candidates(x, t, alpha, gamma) -> list:
    """(value, key, English, Chinese) for each known mistake of the binary loss, computed here in float64."""
    ce, p, p_t, focal, a_t = binary_terms(x, t, alpha, gamma)
    other = "sum" if reduction() == "mean" else "mean"
    found = [(reduce(a_t * focal * ce, other), "sum-for-mean" if other == "sum" else "mean-for-sum", *OTHER)]
    if x.dim() > 1 and reduction() == "mean":
        found.append(((a_t * focal * ce).sum(dim=-1).mean(), "rows-only",
                      "that sums over the last dimension and averages over the rows; the mean is over every element.",
                      "这是沿最后一维求和、再对各行求平均；应对每个元素求平均。"))
    if alpha is not None:
        td = t.double()
        found += [
            (reduce(((1 - alpha) * td + alpha * (1 - td)) * focal * ce), "alpha-swapped",
             "alpha weighed the negatives and 1 - alpha the positives; alpha is the weight of the positives "
             "(target 1), 1 - alpha that of the negatives.",
             "alpha 加在了负样本上，1 - alpha 加在了正样本上；alpha 是正样本（目标为 1）的权重，1 - alpha 是负样本的权重。"),
            (reduce(alpha * focal * ce), "alpha-on-all",
             "every element was multiplied by alpha; the negatives (target 0) take 1 - alpha: alpha * t + "
             "(1 - alpha) * (1 - t).",
             "每个元素都乘了 alpha；负样本（目标为 0）应乘 1 - alpha：alpha * t + (1 - alpha) * (1 - t)。"),
            (reduce(focal * ce), "alpha-ignored",
             "that is the loss without alpha; weigh each element by alpha * t + (1 - alpha) * (1 - t).",
             "这是没有 alpha 的损失；每个元素要乘以 alpha * t + (1 - alpha) * (1 - t)。"),
        ]
    found += [
        (reduce(a_t * (1 - p) ** gamma * ce), "focal-from-p",
         "the focal factor used p = sigmoid(logit) whatever the target; it takes p_t, the probability of the true "
         "label: p where the target is 1, 1 - p where it is 0.",
         "focal 因子用了 p = sigmoid(logit)，没有看目标；应使用 p_t，即真实标签的概率：目标为 1 时是 p，目标为 0 时是 1 - p。"),
        (reduce(a_t * p_t ** gamma * ce), "focal-inverted",
         "the factor was p_t ** gamma, which weighs the easy examples up; focal loss weighs them down with "
         "(1 - p_t) ** gamma.",
         "因子写成了 p_t ** gamma，这会加大容易样本的权重；focal loss 用 (1 - p_t) ** gamma 来减小它们的权重。"),
    ]
    if gamma:
        found.append((reduce(a_t * ce), "focal-missing",
                      "that is the (alpha-weighted) cross-entropy without the focal factor (1 - p_t) ** gamma.",
                      "这是（按 alpha 加权的）交叉熵，少了 focal 因子 (1 - p_t) ** gamma。"))
    return found


def multi_candidates(x, t, alpha, gamma) -> list:
    """(value, key, English, Chinese) for each known mistake of the multi-class loss, computed here in float64."""
    logp_t, p_t, focal, a_t, logp = multi_terms(x, t, alpha, gamma)
    right = -a_t * focal * logp_t
    other = "sum" if reduction() == "mean" else "mean"
    found = [(reduce(right, other), "sum-for-mean" if other == "sum" else "mean-for-sum", *OTHER)]
    if alpha is not None:
        if reduction() == "mean":
            found.append((right.sum() / a_t.sum(), "weighted-mean",
                          "that divides by the sum of the rows' alphas, as F.cross_entropy(weight=...) does; the focal "
                          "loss divides by the number of rows, N = {n}.",
                          "这是除以各行 alpha 之和，就像 F.cross_entropy(weight=...) 那样；focal loss 除以行数 N = {n}。"))
        found.append((reduce(-focal * logp_t), "alpha-ignored",
                      "that is the loss without alpha; weigh each row by alpha[target].",
                      "这是没有 alpha 的损失；每一行要乘以 alpha[target]。"))
    every = -((1 - logp.exp()) ** gamma * logp)
    sums = [every.sum(dim=1)] if alpha is None else [a_t * every.sum(dim=1), (every * alpha.double()).sum(dim=1)]
    found += [(reduce(wrong), "every-class",
               "the focal term was summed over every class; only the target's class counts, -alpha[t] * (1 - p_t) "
               "** gamma * log p_t (a one-hot target zeroes the others).",
               "focal 项对所有类别求了和；只有目标类别计入：-alpha[t] * (1 - p_t) ** gamma * log p_t（one-hot 目标让其余类别为 0）。")
              for wrong in sums]
    found += [
        (reduce(-a_t * p_t ** gamma * logp_t), "focal-inverted",
         "the factor was p_t ** gamma, which weighs the easy examples up; focal loss weighs them down with "
         "(1 - p_t) ** gamma.",
         "因子写成了 p_t ** gamma，这会加大容易样本的权重；focal loss 用 (1 - p_t) ** gamma 来减小它们的权重。"),
    ]
    if gamma:
        found.append((reduce(-a_t * logp_t), "focal-missing",
                      "that is the (alpha-weighted) cross-entropy without the focal factor (1 - p_t) ** gamma.",
                      "这是（按 alpha 加权的）交叉熵，少了 focal 因子 (1 - p_t) ** gamma。"))
    return found


def diagnose(value, expected, candidates, what, n) -> None:
    """Name the known mistake `value` is; fall back to a plain comparison."""
    if same(value, expected):
        return
    values = dict(what=what, got=float(value), want=float(expected), n=n, how=HOW[reduction()],
                  other=variant("reduction")["other"], other_zh=variant("reduction")["other_zh"])
    for candidate, key, en, zh in candidates:
        if same(value, candidate):
            fail("{what} is {got:.6g}, expected {want:.6g}: " + en, "{what} 为 {got:.6g}，应为 {want:.6g}：" + zh,
                 **values, key=key)
    if math.isfinite(float(expected)) and not math.isfinite(float(value)):
        fail("{what} is {got}, expected {want:.6g}: an overflow or a log(0). A probability underflows to 0 in float32 "
             "(sigmoid(-200), or a softmax far below its row's max), and its log is -inf. Take the cross-entropy from "
             "the logits: F.binary_cross_entropy_with_logits or F.logsigmoid, log_softmax or logsumexp.",
             "{what} 为 {got}，应为 {want:.6g}：发生了溢出或 log(0)。在 float32 中概率会下溢成 0（sigmoid(-200)，或远低于"
             "本行最大值的 softmax），它的 log 是 -inf。请直接从 logits 计算交叉熵：F.binary_cross_entropy_with_logits "
             "或 F.logsigmoid，log_softmax 或 logsumexp。", **values, key="overflow")
    expect_close(value, expected, what, n=n if reduction() == "mean" else None)


def both_labels(rng, n, k):
    """0/1 float targets [n, k] with both labels present (a positive and a negative at least)."""
    t = (torch.rand(n, k, generator=rng) < 0.4).float()
    t.view(-1)[0], t.view(-1)[-1] = 1.0, 0.0
    return t[:, torch.randperm(k, generator=rng)] if n * k > 1 else t


def binary_draw(rng):
    n = int(torch.randint(4, 8, (), generator=rng))
    k = int(torch.randint(2, 5, (), generator=rng))
    return 2 * torch.randn(n, k, generator=rng), both_labels(rng, n, k)


def multi_draw(rng, n=None):
    n = n or int(torch.randint(5, 9, (), generator=rng))
    c = int(torch.randint(3, 6, (), generator=rng))
    return 2 * torch.randn(n, c, generator=rng), torch.randint(0, c, (n,), generator=rng)


GAMMAS = (0.5, 1.0, 1.5, 2.5, 3.0)  # no even gamma: (p_t - 1) ** gamma must differ from (1 - p_t) ** gamma


def gamma_of(rng) -> float:
    return GAMMAS[int(torch.randint(0, len(GAMMAS), (), generator=rng))]


def alpha_of(rng) -> float:
    return round(float(torch.empty(()).uniform_(0.1, 0.4, generator=rng)), 3)


def binary_extreme(rng):
    """[6, 2] logits: each row one element around -200 or +200 against its target (sigmoid underflows float32,
    the cross-entropy is about 200) beside an ordinary one; shuffled rows."""
    x, t = 2 * torch.randn(6, 2, generator=rng), torch.tensor([[1.0, 0.0], [0.0, 1.0]] * 3)
    sign = 1 - 2 * t[:, 0]  # target 1: a logit near -200; target 0: near +200
    x[:, 0] = sign * (200 + 20 * torch.rand(6, generator=rng))
    order = torch.randperm(6, generator=rng)
    return x[order], t[order]


def multi_extreme(rng):
    """Rows around +1000 and -1000, rows spread over hundreds with the target far below the max (its probability
    underflows float32 to 0, its loss is in the hundreds), ordinary rows; shuffled."""
    x, t = multi_draw(rng, n=6)
    c = x.shape[1]
    x[0] += 1000
    x[1] -= 1000
    for row in (2, 3):
        x[row] = 50 * torch.randn(c, generator=rng)
        x[row, t[row]] = x[row].max() - 150 - 100 * torch.rand((), generator=rng)
    order = torch.randperm(6, generator=rng)
    return x[order], t[order]


# -- the checks ---------------------------------------------------------------------------------

@check("sigmoid_focal_loss matches the focal loss on ordinary logits with the defaults (one element too)", points=2,
       zh="sigmoid_focal_loss 在普通 logits 上使用默认参数时与 focal loss 一致（只有一个元素时也是）")
def test_binary(submission, rng):
    x, t = binary_draw(rng)
    what, value = binary_loss(submission, x, t, defaults=True)
    diagnose(value, binary_reference(x, t), binary_candidates(x, t, 0.25, 2.0), what, x.numel())
    x1, t1 = torch.randn(1, generator=rng), torch.ones(1)
    what, value = binary_loss(submission, x1, t1, defaults=True)
    diagnose(value, binary_reference(x1, t1), binary_candidates(x1, t1, 0.25, 2.0), what, 1)
    gamma = gamma_of(rng)
    x, t = binary_draw(rng)
    what, value = binary_loss(submission, x, t, 0.25, gamma)
    diagnose(value, binary_reference(x, t, 0.25, gamma), binary_candidates(x, t, 0.25, gamma), what, x.numel())


@check("sigmoid_focal_loss is finite and right on logits near +-200 against their targets", points=1,
       zh="sigmoid_focal_loss 在与目标相反、约为 +-200 的 logits 上有限且正确", depends="binary")
def test_binary_stable(submission, rng):
    x, t = binary_extreme(rng)
    what, value = binary_loss(submission, x, t)
    diagnose(value, binary_reference(x, t), binary_candidates(x, t, 0.25, 2.0), what, x.numel())


@check("focal_loss matches the multi-class focal loss on ordinary logits (one row too)", points=2,
       zh="focal_loss 在普通 logits 上与多分类 focal loss 一致（只有一行时也是）")
def test_multiclass(submission, rng):
    x, t = multi_draw(rng)
    what, value = multi_loss(submission, x, t, defaults=True)
    diagnose(value, multi_reference(x, t), multi_candidates(x, t, None, 2.0), what, x.shape[0])
    gamma = gamma_of(rng)
    for n in (None, 1):
        x, t = multi_draw(rng, n)
        what, value = multi_loss(submission, x, t, None, gamma)
        diagnose(value, multi_reference(x, t, None, gamma), multi_candidates(x, t, None, gamma), what, x.shape[0])


@check("focal_loss is finite and right on logits near +-1000 and on targets whose probability underflows", points=1,
       zh="focal_loss 在 +-1000 附近的 logits 和概率下溢的目标上有限且正确", depends="multiclass")
def test_multiclass_stable(submission, rng):
    x, t = multi_extreme(rng)
    what, value = multi_loss(submission, x, t)
    diagnose(value, multi_reference(x, t), multi_candidates(x, t, None, 2.0), what, x.shape[0])


@check("alpha weighs positives by alpha and negatives by 1 - alpha, each row by alpha[target]; None weighs nothing",
       points=2, zh="alpha 给正样本权重 alpha、负样本权重 1 - alpha，每一行权重 alpha[target]；None 表示不加权",
       depends=("binary", "multiclass"))
def test_alpha(submission, rng):
    gamma = gamma_of(rng)
    for alpha in (alpha_of(rng), None):
        x, t = binary_draw(rng)
        what, value = binary_loss(submission, x, t, alpha, gamma)
        diagnose(value, binary_reference(x, t, alpha, gamma), binary_candidates(x, t, alpha, gamma), what,
                 x.numel())
    x, t = multi_draw(rng)
    alpha = 0.1 + torch.rand(x.shape[1], generator=rng)
    t[0] = int(alpha.argmax())  # rows of a heavy and of a light class: a weighted mean differs from the mean
    t[1] = int(alpha.argmin())
    what, value = multi_loss(submission, x, t, alpha, gamma)
    diagnose(value, multi_reference(x, t, alpha, gamma), multi_candidates(x, t, alpha, gamma), what, x.shape[0])


@check("with gamma = 0 and no alpha, both are torch's cross-entropies", points=1,
       zh="gamma = 0 且不加 alpha 时，两者都等于 torch 的交叉熵", depends=("binary", "multiclass"))
def test_gamma_zero(submission, rng):
    x, t = binary_draw(rng)
    what, value = binary_loss(submission, x, t, None, 0.0)
    expected = F.binary_cross_entropy_with_logits(x.double(), t.double(), reduction=reduction())
    diagnose(value, expected, binary_candidates(x, t, None, 0.0), what, x.numel())
    x, t = multi_draw(rng)
    what, value = multi_loss(submission, x, t, None, 0.0)
    expected = F.cross_entropy(x.double(), t, reduction=reduction())
    diagnose(value, expected, multi_candidates(x, t, None, 0.0), what, x.shape[0])


@check("the gradients of both losses for the logits are the focal loss's, finite on large logits", points=1,
       zh="两个损失对 logits 的梯度与 focal loss 的一致，在大的 logits 上也有限",
       depends=("binary_stable", "multiclass_stable", "alpha"))
def test_gradient(submission, rng):
    alpha = alpha_of(rng)
    cases = (("sigmoid_focal_loss", *binary_extreme(rng), alpha, binary_reference),
             ("focal_loss", *multi_extreme(rng), 0.1 + torch.rand(5, generator=rng), multi_reference))
    for name, x, t, a, reference in cases:
        if name == "focal_loss":
            a = a[: x.shape[1]]
        call = f"{name}(logits, targets, alpha, gamma=2.0)"
        result = submission.probe(loss_gradient, name, x, t, a, 2.0,
                                  what=Text("`{call}` then backward", "`{call}` 之后 backward", call=verbatim(call)))
        if "grad" not in result:
            fail("{name}'s loss does not require grad: the graph from the logits to the loss was cut (.detach(), "
                 ".item(), torch.no_grad() or a NumPy round trip).",
                 "{name} 的损失不 requires_grad：从 logits 到损失的计算图被切断了（`.detach()`、`.item()`、"
                 "`torch.no_grad()` 或者转成了 NumPy）。", name=verbatim(name), key="graph-cut")
        leaf = x.double().requires_grad_(True)
        (expected,) = torch.autograd.grad(reference(leaf, t, a, 2.0), leaf)
        grad = result["grad"]
        if grad is not None and grad.shape == x.shape and not torch.isfinite(grad).all():
            fail("d loss/d logits of {name} contains NaN or inf on large logits: a term that overflows still reaches "
                 "the gradient, even where its value was masked. Keep every term finite: take the cross-entropy "
                 "from the logits.",
                 "在大的 logits 上，{name} 的 d loss/d logits 含有 NaN 或 inf：溢出的项即使数值被屏蔽，仍会传到梯度里。"
                 "请让每一项都保持有限：直接从 logits 计算交叉熵。", name=verbatim(name), key="gradient-not-finite")
        expect_gradient(grad, expected, "logits", of=name, rtol=1e-3, atol=1e-5)
