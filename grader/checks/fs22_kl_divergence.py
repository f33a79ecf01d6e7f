"""Hidden checks of fs22: KL divergence by hand, as F.kl_div computes it, from logits, and the distillation loss.

The judge draws per seed: log-probabilities and probabilities [N, C] (N = 1 too), targets with exact zeros (one-hot
rows, a row with a zero class), log-probability targets, logits near +-1000 and rows whose probabilities underflow,
a temperature in {1, 2, 4}, and compares with torch's own `F.kl_div(..., reduction='batchmean')` in float64 (with
`log_target=True` on torch's own `F.log_softmax` for the logits). A classic mistake is named only when the learner's
value is what that mistake computes, each computed here: the arguments swapped (KL(Q || P)), 'mean' or 'sum' where
batchmean belongs, the cross-entropy without the entropy term, 0 * log 0 = nan, the other direction of the
distillation KL, no T ** 2, the temperature on one side only. A probe runs the distillation loss backward in the
sandbox: the student's gradient is the reference's, and the teacher gets none.

The built-ins are forbidden: a probe records the torch functions the learner's functions call (`F.kl_div`,
`torch.kl_div`, `nn.KLDivLoss`); a value one of them computed earns nothing, and the by-hand check names it.

Kata variants: `variant("direction")` is the distillation KL's direction, "forward" KL(teacher || student) or
"reverse" KL(student || teacher); the reference and the naming of the other direction follow it.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, fail, probe, recording_calls, variant, verbatim
from grader.gradients import expect_gradient

BANNED = ("kl_div",)  # part of the torch names: F.kl_div, torch.kl_div (nn.KLDivLoss calls it)

# -- probes (run in the sandbox) ----------------------------------------------------------------


@probe
def torch_calls(module, lp, p, student, teacher):
    """The names of the torch functions the three functions call (through a TorchFunctionMode: every spelling goes
    through it). An error is the value checks' lesson: the names seen until then are kept."""
    names = set()
    for name, args in (("kl_div", (lp, p)), ("kl_divergence", (student, teacher)),
                       ("distillation_loss", (student, teacher, 2.0))):
        try:
            with recording_calls(names):
                getattr(module, name)(*args)
        except Exception:  # a missing or failing function is judged by the value checks
            pass
    return sorted(names)


@probe
def distillation_gradients(module, student, teacher, temperature):
    """The loss and the gradients for both logits, both leaves requiring grad (backward in the sandbox)."""
    s = student.clone().requires_grad_(True)
    t = teacher.clone().requires_grad_(True)
    loss = module.distillation_loss(s, t, temperature)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        return {"loss": loss.detach() if isinstance(loss, torch.Tensor) else loss}
    loss.reshape(()).backward()
    return {"loss": loss.detach(), "student": s.grad, "teacher": t.grad}


# -- judge-side helpers -------------------------------------------------------------------------

def direction() -> str:
    """This draw's distillation KL: "forward" KL(teacher || student) or "reverse" KL(student || teacher)."""
    return variant("direction")["name"]


def kl_terms(log_p, log_q):
    """KL(P || Q) per element in float64 from log-probabilities, P * (log P - log Q), 0 where P is 0."""
    log_p, log_q = log_p.double(), log_q.double()
    p = log_p.exp()
    return torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p))


def kl_logits(p_logits, q_logits):
    """KL(softmax(p) || softmax(q)), batchmean, in float64, by torch."""
    return F.kl_div(F.log_softmax(q_logits.double(), dim=1), F.log_softmax(p_logits.double(), dim=1),
                    reduction="batchmean", log_target=True)


def distill_reference(s, t, temperature, how=None):
    first, second = (t, s) if (how or direction()) == "forward" else (s, t)
    return temperature ** 2 * kl_logits(first / temperature, second / temperature)


def same(a, b) -> bool:
    """Close scalars, where NaN equals NaN and an infinity itself."""
    return bool(torch.allclose(a.double().reshape(()), b.double().reshape(()), rtol=1e-4, atol=1e-6, equal_nan=True))


def builtins_used(submission, rng) -> list[str]:
    """The forbidden torch functions the learner's functions called, probed once per grading."""
    def run():
        lp = F.log_softmax(torch.randn(3, 4, generator=rng), dim=1)
        p = torch.softmax(torch.randn(3, 4, generator=rng), dim=1)
        s, t = torch.randn(3, 4, generator=rng), torch.randn(3, 4, generator=rng)
        return submission.probe(torch_calls, lp, p, s, t, what="`kl_div`, `kl_divergence`, `distillation_loss`")
    return [n for n in submission.once("calls", run) if any(b in n.lower() for b in BANNED)]


def by_hand_only(submission, rng) -> None:
    """A value torch's own KL computed is not earned here (the ex05 rule): fail when one was called."""
    used = builtins_used(submission, rng)
    if used:
        fail("Your code calls torch's own `{name}` (F.kl_div, torch.kl_div, nn.KLDivLoss): its values are torch's, "
             "not yours. Write the sum of P * (log P - log Q) yourself.",
             "你的代码调用了 torch 自带的 `{name}`（F.kl_div、torch.kl_div、nn.KLDivLoss）：这些值是 torch 算的，"
             "不是你写的。请自己写出 P * (log P - log Q) 的和。", name=verbatim(used[0]), key="builtin-kl-div")


def scalar(value, what):
    value = expect_tensor(value, what, floating=True)
    if value.numel() != 1:
        fail("{what} should be one number, got shape {shape}: the terms are not reduced yet (their sum divided by "
             "the batch size).",
             "{what} 应为一个数，实际形状为 {shape}：各项还没有归约（求和后除以 batch 大小）。", what=what,
             shape=list(value.shape), key="not-reduced")
    return value.reshape(())


def reductions(terms, n) -> list:
    """The reductions that are not batchmean, of per-element terms [N, C]: (value, key, English, Chinese)."""
    return [(terms.mean(), "mean-not-batchmean",
             "that is the mean over all N * C elements (reduction='mean'); batchmean divides the sum by the batch "
             "size N = {n} only.",
             "这是对全部 N * C 个元素求平均（reduction='mean'）；batchmean 只把总和除以 batch 大小 N = {n}。"),
            (terms.sum(), "sum-not-batchmean",
             "that is the sum, not divided by the batch size N = {n} (batchmean: the sum / N).",
             "这是总和，没有除以 batch 大小 N = {n}（batchmean：总和 / N）。")] if n > 1 else \
        [(terms.mean(), "mean-not-batchmean",
          "that is the mean over all C elements (reduction='mean'); batchmean divides the sum by the batch size N = 1.",
          "这是对全部 C 个元素求平均（reduction='mean'）；batchmean 把总和除以 batch 大小 N = 1。")]


SWAPPED = ("that is KL(Q || P), the arguments' roles swapped; F.kl_div(input, target) is KL(target || Q): the "
           "target's probabilities weigh (log target - input).",
           "这是 KL(Q || P)，两个参数的角色反了；F.kl_div(input, target) 是 KL(target || Q)：由 target 的概率给 "
           "(log target - input) 加权。")
CROSS = ("that is the cross-entropy -sum P * log Q, the entropy term sum P * log P left out.",
         "这是交叉熵 -sum P * log Q，少了熵那一项 sum P * log P。")


def kl_div_candidates(lp, t, log_target) -> list:
    """Known mistakes of kl_div(input=lp, target=t), computed here in float64."""
    n = lp.shape[0]
    log_p = t.double() if log_target else torch.log(t.double())
    terms = kl_terms(log_p, lp)
    found = reductions(terms, n)
    swapped = kl_terms(lp, log_p)
    found.append((swapped.sum() / n, "arguments-swapped", *SWAPPED))
    found.append(((-log_p.exp() * lp.double()).sum() / n, "cross-entropy-not-kl", *CROSS))
    return found


def logits_candidates(p_logits, q_logits) -> list:
    n = p_logits.shape[0]
    log_p, log_q = F.log_softmax(p_logits.double(), dim=1), F.log_softmax(q_logits.double(), dim=1)
    found = reductions(kl_terms(log_p, log_q), n)
    found.append((kl_terms(log_q, log_p).sum() / n, "arguments-swapped",
                  "that is KL(Q || P); kl_divergence(p_logits, q_logits) is KL(P || Q), weighed by P = "
                  "softmax(p_logits).",
                  "这是 KL(Q || P)；kl_divergence(p_logits, q_logits) 是 KL(P || Q)，由 P = softmax(p_logits) 加权。"))
    found.append(((-log_p.exp() * log_q).sum() / n, "cross-entropy-not-kl", *CROSS))
    return found


def distill_candidates(s, t, temperature) -> list:
    other = "reverse" if direction() == "forward" else "forward"
    right = distill_reference(s, t, temperature)
    found = [(distill_reference(s, t, temperature, other), "direction-swapped",
              "that is {other_kl}; this loss is {kl}: {why}.", "这是 {other_kl}；本题的损失是 {kl}：{why_zh}。")]
    if temperature != 1:
        found += [
            (right / temperature ** 2, "no-t-squared",
             "that is the KL without the factor T ** 2; multiply by temperature ** 2, which keeps the gradients' "
             "size as T changes.",
             "这是没有乘 T ** 2 的 KL；要乘以 temperature ** 2，这样 T 变化时梯度的大小保持不变。"),
            (right / temperature ** 4, "t-squared-divided",
             "that divides by T ** 2 where the loss multiplies by it.",
             "这是除以了 T ** 2，而损失应乘以它。"),
        ]
        first, second = (t, s) if direction() == "forward" else (s, t)
        for a, b in ((first / temperature, second), (first, second / temperature), (first, second)):
            for scale in (temperature ** 2, 1.0):
                found.append((scale * kl_logits(a, b), "temperature-one-side",
                              "the temperature softened one distribution only, or neither; divide both the student's "
                              "and the teacher's logits by T.",
                              "温度只软化了一个分布，或者两个都没有；学生和教师的 logits 都要除以 T。"))
    reductions_ = reductions(kl_terms(F.log_softmax(first_of(s, t) / temperature, dim=1),
                                      F.log_softmax(second_of(s, t) / temperature, dim=1)), s.shape[0])
    found += [(temperature ** 2 * v, key, en, zh) for v, key, en, zh in reductions_]
    return found


def first_of(s, t):
    return (t if direction() == "forward" else s).double()


def second_of(s, t):
    return (s if direction() == "forward" else t).double()


def diagnose(value, expected, candidates, what, n, logits=True) -> None:
    """Name the known mistake `value` is; fall back to a plain comparison. From probabilities (`logits` False) a nan
    is a zero probability's 0 * log 0; from logits, a softmax that underflowed."""
    if same(value, expected):
        return
    draw = variant("direction")
    values = dict(what=what, got=float(value), want=float(expected), n=n, kl=draw["kl"], other_kl=draw["other_kl"],
                  why=draw["why"], why_zh=draw["why_zh"])
    for candidate, key, en, zh in candidates:
        if same(value, candidate):
            fail("{what} is {got:.6g}, expected {want:.6g}: " + en, "{what} 为 {got:.6g}，应为 {want:.6g}：" + zh,
                 **values, key=key)
    if not logits and math.isfinite(float(expected)) and math.isnan(float(value)):
        fail("{what} is nan, expected {want:.6g}: a probability of exactly 0 gave 0 * log(0) = 0 * -inf = nan. Its term "
             "is 0 (the limit of p log p): torch.xlogy(p, p), or torch.where(p > 0, ..., 0).",
             "{what} 为 nan，应为 {want:.6g}：恰好为 0 的概率给出了 0 * log(0) = 0 * -inf = nan。它那一项应为 0"
             "（p log p 的极限）：用 torch.xlogy(p, p)，或 torch.where(p > 0, ..., 0)。", **values, key="zero-target-nan")
    if math.isfinite(float(expected)) and not math.isfinite(float(value)):
        fail("{what} is {got}, expected {want:.6g}: an overflow or a log(0). exp(logits) is inf in float32 past 88, "
             "and the log of a softmax that underflowed to 0 is -inf. Take log_softmax of both logits.",
             "{what} 为 {got}，应为 {want:.6g}：发生了溢出或 log(0)。在 float32 中 logits 超过 88 时 exp 为 inf，"
             "下溢成 0 的 softmax 取 log 得 -inf。请对两边的 logits 都取 log_softmax。", **values, key="overflow")
    expect_close(value, expected, what)


def log_probs(rng, n, c):
    return F.log_softmax(1.5 * torch.randn(n, c, generator=rng), dim=1)


def sizes(rng):
    return int(torch.randint(3, 7, (), generator=rng)), int(torch.randint(3, 6, (), generator=rng))


def extreme(rng, n=6, c=5):
    """Rows near +1000 and -1000, rows spread over hundreds (probabilities that underflow), ordinary rows."""
    x = 2 * torch.randn(n, c, generator=rng)
    x[0] += 1000
    x[1] -= 1000
    x[2:4] = 60 * torch.randn(2, c, generator=rng)
    return x


def underflowing(rng):
    """P's most likely class is one whose probability under Q underflows float32 (200 below Q's max): a KL near 200,
    and log(softmax(q)) = -inf there; rows near +-1000 on both sides too."""
    p, q = 2 * torch.randn(4, 5, generator=rng), 2 * torch.randn(4, 5, generator=rng)
    k = torch.randint(0, 5, (4,), generator=rng)
    rows = torch.arange(4)
    p[rows, k] = p.amax(dim=1) + 3
    q[rows, k] = q.amax(dim=1) - 200 - 50 * torch.rand(4, generator=rng)
    p[0] += 1000
    q[1] -= 1000
    return p, q


def call_kl_div(submission, lp, t, log_target=None):
    what = f"kl_div(input{list(lp.shape)}, target{list(t.shape)}" + (", log_target=True)" if log_target else ")")
    value = submission.kl_div(lp, t, log_target=True) if log_target else submission.kl_div(lp, t)
    return what, scalar(value, what)


# -- the checks ---------------------------------------------------------------------------------

@check("kl_div matches F.kl_div(reduction='batchmean') on ordinary distributions (one row too)", points=2,
       zh="kl_div 在普通分布上与 F.kl_div(reduction='batchmean') 一致（只有一行时也是）")
def test_kl_div(submission, rng):
    by_hand_only(submission, rng)
    for n, c in (sizes(rng), (1, 4)):
        lp = log_probs(rng, n, c)
        t = torch.softmax(1.5 * torch.randn(n, c, generator=rng), dim=1)
        what, value = call_kl_div(submission, lp, t)
        expected = F.kl_div(lp.double(), t.double(), reduction="batchmean")
        diagnose(value, expected, kl_div_candidates(lp, t, False), what, n, logits=False)


@check("a target probability of exactly 0 adds 0 to kl_div, never nan", points=1,
       zh="恰好为 0 的目标概率给 kl_div 加 0，而不是 nan", depends="kl_div")
def test_zero_target(submission, rng):
    by_hand_only(submission, rng)
    n, c = sizes(rng)
    lp = log_probs(rng, n, c)
    t = torch.softmax(torch.randn(n, c, generator=rng), dim=1)
    t[0] = F.one_hot(torch.randint(0, c, (), generator=rng), c).float()  # a one-hot row: C - 1 zeros
    t[-1, 0] = 0.0
    t[-1] /= t[-1].sum()  # one zero class in a row that stays a distribution
    what, value = call_kl_div(submission, lp, t)
    expected = F.kl_div(lp.double(), t.double(), reduction="batchmean")
    diagnose(value, expected, kl_div_candidates(lp, t, False), what, n, logits=False)


@check("kl_div with log_target=True takes the target as log-probabilities", points=1,
       zh="log_target=True 时 kl_div 把 target 当作对数概率", depends="kl_div")
def test_log_target(submission, rng):
    by_hand_only(submission, rng)
    n, c = sizes(rng)
    lp, lt = log_probs(rng, n, c), log_probs(rng, n, c)
    what, value = call_kl_div(submission, lp, lt, log_target=True)
    expected = F.kl_div(lp.double(), lt.double(), reduction="batchmean", log_target=True)
    if not same(value, expected) and same(value, F.kl_div(lp.double(), lt.double(), reduction="batchmean")):
        fail("{what} is {got:.6g}, expected {want:.6g}: log_target=True was ignored; the target holds log P, so P is "
             "target.exp() and log P the target itself.",
             "{what} 为 {got:.6g}，应为 {want:.6g}：忽略了 log_target=True；此时 target 存的是 log P，所以 P 是 "
             "target.exp()，log P 就是 target 本身。", what=what, got=float(value), want=float(expected),
             key="log-target-ignored")
    diagnose(value, expected, kl_div_candidates(lp, lt, True), what, n, logits=False)


@check("kl_divergence(p_logits, q_logits) is KL(P || Q) from logits, finite near +-1000, 0 for equal logits",
       points=2, zh="kl_divergence(p_logits, q_logits) 是从 logits 计算的 KL(P || Q)：在 +-1000 附近有限，logits 相同时为 0")
def test_from_logits(submission, rng):
    by_hand_only(submission, rng)
    n, c = sizes(rng)
    cases = [(2 * torch.randn(n, c, generator=rng), 2 * torch.randn(n, c, generator=rng)),
             (extreme(rng), extreme(rng)), underflowing(rng)]
    same_logits = 3 * torch.randn(n, c, generator=rng)
    cases.append((same_logits, same_logits.clone()))
    for p, q in cases:
        what = f"kl_divergence(p_logits{list(p.shape)}, q_logits{list(q.shape)})"
        value = scalar(submission.kl_divergence(p, q), what)
        diagnose(value, kl_logits(p, q), logits_candidates(p, q), what, p.shape[0])


@check("distillation_loss is T ** 2 times the KL of the softened distributions, in this draw's direction", points=2,
       zh="distillation_loss 是软化后分布的 KL 乘以 T ** 2，方向与本题一致", depends="from_logits")
def test_distillation(submission, rng):
    by_hand_only(submission, rng)
    for temperature in (float(2 ** int(torch.randint(1, 3, (), generator=rng))), 1.0):
        n, c = sizes(rng)
        s, t = 2 * torch.randn(n, c, generator=rng), 3 * torch.randn(n, c, generator=rng)
        what = f"distillation_loss(student[{n}, {c}], teacher[{n}, {c}], temperature={temperature:g})"
        value = scalar(submission.distillation_loss(s, t, temperature), what)
        diagnose(value, distill_reference(s, t, temperature), distill_candidates(s, t, temperature), what, n)


@check("distillation_loss's gradient reaches the student as the reference's, and never the teacher", points=1,
       zh="distillation_loss 的梯度与参考值一致地传到学生，而从不传到教师", depends="distillation")
def test_gradient(submission, rng):
    by_hand_only(submission, rng)
    n, c = sizes(rng)
    s, t = 2 * torch.randn(n, c, generator=rng), 3 * torch.randn(n, c, generator=rng)
    call = "distillation_loss(student, teacher, 2.0)"
    result = submission.probe(distillation_gradients, s, t, 2.0,
                              what=Text("`{call}` then backward", "`{call}` 之后 backward", call=verbatim(call)))
    if "student" not in result:
        fail("The loss does not require grad: the graph from the student's logits to the loss was cut (.detach(), "
             ".item(), torch.no_grad() or a NumPy round trip).",
             "损失不 requires_grad：从学生的 logits 到损失的计算图被切断了（`.detach()`、`.item()`、`torch.no_grad()` "
             "或者转成了 NumPy）。", key="graph-cut")
    teacher = result["teacher"]
    if teacher is not None and bool((teacher != 0).any()):
        fail("backward sent a gradient into teacher_logits: the teacher is a constant target, so a training step "
             "would also move the teacher (or waste memory on its graph). Detach it: teacher_logits.detach().",
             "backward 把梯度传进了 teacher_logits：教师是固定的目标，这样训练一步也会改变教师（或者白白占用它的计算图"
             "的内存）。请把它 detach：teacher_logits.detach()。", key="teacher-not-detached")
    leaf = s.double().requires_grad_(True)
    (expected,) = torch.autograd.grad(distill_reference(leaf, t, 2.0), leaf)
    expect_gradient(result["student"], expected, "student_logits", rtol=1e-3, atol=1e-6)


@check("kl_div, kl_divergence and distillation_loss are written by hand (no F.kl_div, torch.kl_div or "
       "nn.KLDivLoss)", points=1,
       zh="kl_div、kl_divergence 和 distillation_loss 是自己写的（不调用 F.kl_div、torch.kl_div 或 nn.KLDivLoss）",
       depends="kl_div")
def test_by_hand(submission, rng):
    by_hand_only(submission, rng)
