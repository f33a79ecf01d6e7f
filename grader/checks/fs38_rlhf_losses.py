"""Hidden checks of fs38: RLHF losses by hand (DPO, PPO's clipped objective, GRPO's group-relative advantages).

No PyTorch built-in computes these: each expectation is the statement's formula computed here in float64 on the same
draw, and each slip (the reference log-ratios left out or with the wrong sign, beta outside the log-sigmoid, chosen
and rejected swapped, a sum for the mean, log(sigmoid) that underflows; the ratio inverted or the log-probs
divided, max for min, the unclipped or the clipped term alone, the objective not negated, the padding averaged
in or each sequence averaged first; the group statistics over the whole batch, the groups read the other way, the
biased std, no eps) is computed the same way and named when it alone explains the learner's value.

Draws make the slips visible by construction: PPO's ratios cover every regime (advantage of either sign, ratio below
1 - eps, inside, above 1 + eps), ragged masks with padding holding large values, a DPO margin of -300 (float32
log(sigmoid) is -inf there), a GRPO group whose rewards are all equal (std 0: eps keeps it finite, advantages 0).
Gradients are taken in the sandbox through the learner's function and compared with autograd's of the formula.
"""

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, fail, matches, probe

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def loss_and_grads(module, name, args, kwargs, wrt):
    """`module.<name>(*args, **kwargs)` with the arguments at `wrt` requiring grad: the loss and d loss / d each of
    them (None where the loss does not reach one), or what the loss was instead of a scalar tensor with a graph."""
    args = [a.clone().requires_grad_(True) if i in wrt else a for i, a in enumerate(args)]
    loss = getattr(module, name)(*args, **kwargs)
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0 or not loss.requires_grad:
        return {"loss": loss.detach() if isinstance(loss, torch.Tensor) else loss, "grads": None}
    grads = torch.autograd.grad(loss, [args[i] for i in wrt], allow_unused=True)
    return {"loss": loss.detach(), "grads": [None if g is None else g.detach() for g in grads]}


# -- judge side: the formulas and the slips ---------------------------------------------------------


def dpo(pc, pr, rc, rr, beta=0.1, slip=None):
    pc, pr, rc, rr = (t.double() for t in (pc, pr, rc, rr))
    chosen, rejected = pc - rc, pr - rr
    if slip == "reference-ignored":
        chosen, rejected = pc, pr
    elif slip == "reference-sign":
        chosen, rejected = pc + rc, pr + rr
    elif slip == "chosen-rejected-swapped":
        chosen, rejected = rejected, chosen
    margin = chosen - rejected
    losses = -beta * F.logsigmoid(margin) if slip == "beta-outside" else -F.logsigmoid(beta * margin)
    return losses.sum() if slip == "sum-not-mean" else losses.mean()


def ppo(new, old, adv, mask, clip_eps=0.2, slip=None):
    new, old, adv = new.double(), old.double(), adv.double()
    ratio = torch.exp(old - new) if slip == "ratio-inverted" else \
        new / old if slip == "ratio-of-logps" else torch.exp(new - old)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv
    objective = {"max-not-min": torch.maximum(unclipped, clipped), "unclipped-only": unclipped,
                 "clipped-only": clipped}.get(slip, torch.minimum(unclipped, clipped))
    m = mask.double()
    if slip == "mask-ignored":
        loss = -objective.mean()
    elif slip == "mask-mean-all":
        loss = -(objective * m).mean()
    elif slip == "mean-per-sequence":
        loss = -((objective * m).sum(1) / m.sum(1)).mean()
    else:
        loss = -(objective * m).sum() / m.sum()
    return -loss if slip == "not-negated" else loss


def grpo(rewards, group_size, eps=1e-6, slip=None):
    r = rewards.double()
    groups = r.reshape(group_size, -1).T if slip == "groups-interleaved" else r.reshape(-1, group_size)
    if slip == "global-normalisation":
        mean, std = r.mean(), r.std()
    else:
        mean, std = groups.mean(1, keepdim=True), groups.std(1, keepdim=True, unbiased=slip != "std-biased")
    out = (groups - mean) / (std + eps)
    return (out.T if slip == "groups-interleaved" else out).reshape(-1)


SLIPS = {
    "reference-ignored": ("the reference model's log-probs left out: DPO compares the policy's log-ratios to the "
                          "reference's, (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected).",
                          "没有使用参考模型的 log-prob：DPO 比较的是策略相对参考模型的对数比，"
                          "(policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)。"),
    "reference-sign": ("the reference log-probs added instead of subtracted: each log-ratio is policy - ref.",
                       "参考模型的 log-prob 被加上而不是减去：每个对数比是 policy - ref。"),
    "chosen-rejected-swapped": ("chosen and rejected swapped: the loss is small when the chosen answer's log-ratio "
                                "exceeds the rejected one's, -logsigmoid(beta * (chosen - rejected)).",
                                "chosen 和 rejected 弄反了：chosen 的对数比大于 rejected 的时损失才小，"
                                "即 -logsigmoid(beta * (chosen - rejected))。"),
    "beta-outside": ("beta outside the log-sigmoid: it scales the margin inside, -logsigmoid(beta * margin).",
                     "beta 放在了 log-sigmoid 外面：它应在里面缩放差值，-logsigmoid(beta * margin)。"),
    "sum-not-mean": ("the sum over the batch: the loss is the mean.", "对批次求和：损失是平均值。"),
    "ratio-inverted": ("the ratio inverted, exp(logp_old - logp_new): the ratio is pi_new / pi_old = "
                       "exp(logp_new - logp_old).", "比值取反了，exp(logp_old - logp_new)：比值是 pi_new / pi_old = "
                       "exp(logp_new - logp_old)。"),
    "ratio-of-logps": ("the log-probs divided, logp_new / logp_old: the ratio of probabilities is "
                       "exp(logp_new - logp_old).", "log-prob 相除 logp_new / logp_old：概率之比是 "
                       "exp(logp_new - logp_old)。"),
    "max-not-min": ("the maximum of the two terms: PPO takes the minimum (the pessimistic bound).",
                    "两项中取了最大值：PPO 取最小值（悲观的下界）。"),
    "unclipped-only": ("the unclipped term alone: the objective is min(ratio * A, clip(ratio) * A).",
                       "只用了未截断的项：目标是 min(ratio * A, clip(ratio) * A)。"),
    "clipped-only": ("the clipped term alone: the objective is min(ratio * A, clip(ratio) * A), the smaller of the two.",
                     "只用了截断后的项：目标是 min(ratio * A, clip(ratio) * A)，两者中较小的那个。"),
    "not-negated": ("the objective itself: the loss to minimise is the objective negated.",
                    "目标本身：要最小化的损失是目标取负。"),
    "mask-ignored": ("the mean over every position, padding included: only the tokens where mask is True count.",
                     "对所有位置（包括填充）求平均：只有 mask 为 True 的词元才算。"),
    "mask-mean-all": ("the masked objective averaged over every position, padding included as zeros: divide the sum by "
                      "the number of valid tokens, mask.sum().", "带掩码的目标对所有位置（包括作为 0 的填充）求平均：要用和"
                      "除以有效词元的个数 mask.sum()。"),
    "mean-per-sequence": ("each sequence averaged first, then the sequences: here the mean is over all valid tokens "
                          "together, sum(objective * mask) / mask.sum().", "先对每个序列求平均、再对序列求平均：这里是对"
                          "所有有效词元一起求平均，sum(objective * mask) / mask.sum()。"),
    "global-normalisation": ("the mean and std over the whole batch: GRPO normalises within each group, the answers of "
                             "one prompt.", "在整个批次上求均值和标准差：GRPO 在每组内（同一个提示的回答）归一化。"),
    "groups-interleaved": ("the groups read the other way: group i is rewards[i * group_size : (i + 1) * group_size], "
                           "rewards.reshape(-1, group_size).", "分组的读法反了：第 i 组是 "
                           "rewards[i * group_size : (i + 1) * group_size]，即 rewards.reshape(-1, group_size)。"),
    "std-biased": ("the biased std (dividing by G): here it is torch's default std, unbiased (dividing by G - 1).",
                   "有偏的标准差（除以 G）：这里用 torch 默认的无偏标准差（除以 G - 1）。"),
}


def why(slip) -> Text:
    en, zh = SLIPS[slip]
    head, rest = zh.split("：", 1)
    return Text("it matches " + en, "它与" + head + "的结果一致：" + rest)


def expect_loss(got, want, what, wrongs):
    """`got` (a scalar tensor) against `want`; a slip of `wrongs` ({slip: value}) named when it alone matches."""
    got = expect_tensor(got, what, floating=True)
    if got.dim() != 0:
        fail("{what} returned a tensor of shape {shape}: the loss is one number, a 0-dim tensor (the mean).",
             "{what} 返回了形状为 {shape} 的 tensor：损失是一个数，0 维 tensor（平均值）。", what=what,
             shape=list(got.shape), key="not-scalar")
    if matches(got, want):
        return
    named = [slip for slip, value in wrongs.items() if not matches(value, want) and matches(got, value)]
    if len(named) == 1:
        fail("{what} should be {want:.6g}, got {got:.6g}: {why}", "{what} 应为 {want:.6g}，实际为 {got:.6g}：{why}",
             what=what, want=float(want), got=float(got), why=why(named[0]), key=named[0])
    expect_close(got, want.to(got.dtype), what)


def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def uniform(rng, low: float, high: float) -> float:
    return low + (high - low) * float(torch.rand((), generator=rng))


def dpo_batch(rng, b, scale=3.0):
    """Sequence log-probs [B] (negative, as summed token log-probs are) for the policy and the reference."""
    return [-(scale * torch.rand(b, generator=rng) + 1.0) * 10 for _ in range(4)]


def ppo_batch(rng, b, t, clip_eps):
    """log-probs, advantages and a ragged mask [B, T] where every regime of the clip occurs among the valid tokens:
    ratios below 1 - eps, inside the range and above 1 + eps, each with advantages of both signs; padding holds
    large values that must not count."""
    old = -3.0 * torch.rand(b, t, generator=rng) - 0.1
    spread = torch.tensor([-3.0, -0.5, 0.5, 3.0])[torch.randint(0, 4, (b, t), generator=rng)]  # in clip_eps units
    spread[:2, :4] = torch.tensor([-3.0, -0.5, 0.5, 3.0])  # each regime, in rows 0 and 1 (always full)
    new = old + torch.log1p(spread * clip_eps * torch.rand(b, t, generator=rng).clamp(min=0.5)).clamp(min=-5)
    adv = torch.randn(b, t, generator=rng)
    adv = adv + adv.sign() * 0.2
    adv[0, :4], adv[1, :4] = adv[0, :4].abs(), -adv[1, :4].abs()  # ... with a positive and a negative advantage
    lengths = torch.randint(t // 2, t + 1, (b,), generator=rng)
    lengths[:2] = t  # two full rows, one short row
    lengths[-1] = max(1, t // 2 - 1)
    mask = torch.arange(t)[None, :] < lengths[:, None]
    new = torch.where(mask, new, torch.full_like(new, 5.0))  # padding: ratios exp(>5) that must not count
    adv = torch.where(mask, adv, torch.full_like(adv, 50.0))
    return new, old, adv, mask


# -- the checks -------------------------------------------------------------------------------------

DPO_SLIPS = ["reference-ignored", "reference-sign", "chosen-rejected-swapped", "beta-outside", "sum-not-mean"]
PPO_SLIPS = ["ratio-inverted", "ratio-of-logps", "max-not-min", "unclipped-only", "clipped-only", "not-negated",
             "mask-ignored", "mask-mean-all", "mean-per-sequence"]
GRPO_SLIPS = ["global-normalisation", "groups-interleaved", "std-biased"]


@check("each loss is a 0-dim tensor; grpo_advantages is [N] like the rewards", points=1,
       zh="每个损失都是 0 维 tensor；grpo_advantages 与奖励一样是 [N]")
def test_shapes(submission, rng):
    b = randint(rng, 2, 5)
    for name, args, shape in (
            ("dpo_loss", [-10 * torch.rand(b, generator=rng) for _ in range(4)], []),
            ("ppo_clip_loss", [-torch.rand(2, 3, generator=rng), -torch.rand(2, 3, generator=rng),
                               torch.randn(2, 3, generator=rng), torch.ones(2, 3, dtype=torch.bool)], []),
            ("grpo_advantages", [torch.randn(2 * b, generator=rng), b], [2 * b])):
        expect_tensor(getattr(submission, name)(*args), Text("{name}(...)", name=name), shape=shape, floating=True)


@check("dpo_loss is -logsigmoid(beta * ((chosen - ref) - (rejected - ref))), averaged", points=2,
       zh="dpo_loss 是 `-logsigmoid(beta * ((chosen - ref) - (rejected - ref)))`，再求平均", depends="shapes")
def test_dpo(submission, rng):
    for b, beta in ((randint(rng, 4, 8), uniform(rng, 0.05, 0.5)), (1, 0.1)):
        batch = dpo_batch(rng, b)
        what = Text("dpo_loss(4 tensors [{b}], beta={beta:.3g})", "dpo_loss(4 个 [{b}] 的 tensor, beta={beta:.3g})",
                    b=b, beta=beta)
        wrongs = {slip: dpo(*batch, beta, slip) for slip in DPO_SLIPS if not (slip == "sum-not-mean" and b == 1)}
        expect_loss(submission.dpo_loss(*batch, beta=beta), dpo(*batch, beta), what, wrongs)


@check("dpo_loss stays finite and right for a margin of -300, and its gradient reaches the policy's log-probs only",
       points=1, zh="差值为 -300 时 dpo_loss 仍然有限且正确，梯度只流向策略的 log-prob", depends="dpo")
def test_dpo_stable(submission, rng):
    b = randint(rng, 3, 5)
    batch = dpo_batch(rng, b)
    batch[0] = batch[2] - 3000.0 * torch.linspace(0.5, 1.0, b)  # the policy turned against the chosen answer
    what = Text("dpo_loss(...) with beta * margin down to -300", "dpo_loss(...)，beta * margin 低至 -300")
    run = submission.probe(loss_and_grads, "dpo_loss", batch, {"beta": 0.1}, [0, 1], what="`dpo_loss`")
    got = run["loss"]
    if isinstance(got, torch.Tensor) and not torch.isfinite(got).all():
        fail("{what} is {got}: log(sigmoid(x)) underflows to log(0) = -inf in float32 once x is below about -100. "
             "Use F.logsigmoid(x) (or -F.softplus(-x)), which stays finite.", "{what} 为 {got}：在 float32 中，x 小于约 "
             "-100 时 log(sigmoid(x)) 下溢为 log(0) = -inf。请用 F.logsigmoid(x)（或 -F.softplus(-x)），它保持有限。",
             what=what, got=float(got), key="logsigmoid-unstable")
    expect_loss(got, dpo(*batch, 0.1), what, {})
    if run["grads"] is None:
        fail("{what} returned no tensor with a graph: the loss must stay a tensor built from the log-probs (no .item(), "
             "no detach), so that it can be back-propagated.", "{what} 返回的不是带计算图的 tensor：损失必须是由 log-prob "
             "计算出的 tensor（不要 .item()，不要 detach），才能反向传播。", what=what, key="no-graph")
    inputs = [t.double().requires_grad_(i < 2) for i, t in enumerate(batch)]
    want = torch.autograd.grad(dpo(*inputs, 0.1), inputs[:2])
    for grad, expected, name in zip(run["grads"], want, ("policy_chosen_logps", "policy_rejected_logps")):
        label = Text("d dpo_loss / d {name}", name=name)
        if grad is None:
            fail("{label} is missing: the loss does not depend on {name} through autograd (detached?).",
                 "{label} 不存在：通过 autograd 看，损失不依赖于 {name}（被 detach 了？）。", label=label, name=name,
                 key="no-graph")
        expect_close(grad, expected.to(grad.dtype), label, atol=1e-6)


@check("ppo_clip_loss is -mean(min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A)) over the valid tokens", points=2,
       zh="ppo_clip_loss 是在有效词元上的 `-mean(min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A))`",
       depends="shapes")
def test_ppo(submission, rng):
    clip_eps = uniform(rng, 0.1, 0.3)
    b, t = randint(rng, 3, 4), randint(rng, 6, 8)
    batch = ppo_batch(rng, b, t, clip_eps)
    what = Text("ppo_clip_loss(logp_new, logp_old, advantages, mask [{b}, {t}], clip_eps={e:.3g})", b=b, t=t,
                e=clip_eps)
    wrongs = {slip: ppo(*batch, clip_eps, slip) for slip in PPO_SLIPS}
    expect_loss(submission.ppo_clip_loss(*batch, clip_eps=clip_eps), ppo(*batch, clip_eps), what, wrongs)


@check("ppo_clip_loss's gradient: the ratio's where the clip does not bind, zero where it does", points=2,
       zh="ppo_clip_loss 的梯度：截断不起作用时沿 `ratio` 传回，起作用时为零", depends="ppo")
def test_ppo_gradient(submission, rng):
    clip_eps = 0.2
    batch = ppo_batch(rng, 3, 6, clip_eps)
    what = Text("ppo_clip_loss(...)")
    run = submission.probe(loss_and_grads, "ppo_clip_loss", batch, {"clip_eps": clip_eps}, [0],
                           what="`ppo_clip_loss`")
    if run["grads"] is None or run["grads"][0] is None:
        fail("{what} returned no loss with a graph back to logp_new: keep the loss a tensor computed from logp_new "
             "(no .item(), no detach of logp_new), or the policy never learns.", "{what} 返回的损失没有通向 logp_new "
             "的计算图：损失要保持为由 logp_new 计算出的 tensor（不要 .item()，不要 detach logp_new），否则策略学不到"
             "东西。", what=what, key="no-graph")
    new = batch[0].double().requires_grad_(True)
    want = torch.autograd.grad(ppo(new, *batch[1:], clip_eps), [new])[0]
    expect_close(run["grads"][0], want.to(run["grads"][0].dtype), Text("d ppo_clip_loss / d logp_new"), atol=1e-7)


@check("grpo_advantages: (r - group mean) / (group std + eps), per contiguous group; an all-equal group gives 0",
       points=2, zh="grpo_advantages：`(r - mean) / (std + eps)`，按连续的组计算；奖励全相等的组得到 0",
       depends="shapes")
def test_grpo(submission, rng):
    g, n = randint(rng, 3, 5), randint(rng, 3, 4)
    rewards = torch.randn(n * g, generator=rng) + torch.arange(n).repeat_interleave(g) * 2.0  # groups differ
    what = Text("grpo_advantages(rewards [{k}], group_size={g})", k=n * g, g=g)
    got = expect_tensor(submission.grpo_advantages(rewards, g), what, shape=[n * g], floating=True)
    want = grpo(rewards, g)
    if not matches(got, want):
        named = [s for s in GRPO_SLIPS if matches(got, grpo(rewards, g, slip=s)) and not matches(want, grpo(rewards, g,
                                                                                                            slip=s))]
        if len(named) == 1:
            fail("{what}: {why}", "{what}：{why}", what=what, why=why(named[0]), key=named[0])
        expect_close(got, want.to(got.dtype), what)
    same = torch.cat([torch.full((g,), float(randint(rng, 0, 1))), torch.randn(g, generator=rng)])  # a group of equal
    # 0/1 rewards (exact in float32: its mean is the value itself, its std exactly 0)
    what = Text("grpo_advantages(rewards [{k}], group_size={g}) where the first group's rewards are all equal",
                "grpo_advantages(rewards [{k}], group_size={g})，其中第一组的奖励全都相等", k=2 * g, g=g)
    got = expect_tensor(submission.grpo_advantages(same, g), what, shape=[2 * g], floating=True)
    if not torch.isfinite(got).all():
        fail("{what} contains NaN or inf: a group whose answers all get the same reward has std 0, and 0 / 0 is NaN. "
             "Divide by (std + eps): its advantages are then 0 (nothing to learn from that prompt).",
             "{what} 含有 NaN 或 inf：所有回答奖励相同的组标准差为 0，0 / 0 是 NaN。请除以 (std + eps)：这样它的优势为 0"
             "（这个提示没有可学的）。", what=what, key="no-eps")
    expect_close(got, grpo(same, g).to(got.dtype), what)
    tight = 0.5 + 1e-5 * torch.randn(2 * g, generator=rng, dtype=torch.float64)  # std ~ eps: where eps goes shows
    what = Text("grpo_advantages(rewards [{k}] (float64, std about 1e-5), group_size={g}, eps=1e-5)",
                "grpo_advantages(rewards [{k}]（float64，标准差约 1e-5）, group_size={g}, eps=1e-5)", k=2 * g, g=g)
    got = expect_tensor(submission.grpo_advantages(tight, g, eps=1e-5), what, shape=[2 * g], floating=True)
    expect_close(got, grpo(tight, g, eps=1e-5).to(got.dtype), what)
