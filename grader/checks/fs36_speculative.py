"""Hidden checks of fs36: speculative decoding's accept/reject step, which must keep the target's distribution.

`residual_probs` is judged exactly against max(0, p - q) normalised, computed here in float64. `speculative_step` is
judged twice. Exactly, where chance cannot decide: every draft token the target gives at least the draft's
probability is surely accepted (r * q < q <= p for r in [0, 1)), and the bonus row is one-hot, so the output is the
draft plus that token; a draft token the target gives 0 is surely rejected, and the residual there is one-hot, so
the output ends with that token. And statistically, where every correct way of drawing must agree: over n = 6000
steps of one draft token (drawn here from q), the first token must be distributed as p (the theorem of speculative
sampling), the acceptance rate must be sum(min(p, q)), and the bonus tokens of the accepted steps distributed as the
next row of p.

The statistical bounds never fail a correct answer and always fail the slips, whatever the seed, by construction.
For n draws from a distribution over V tokens, the L1 distance f = |p_hat - p|_1 has E f <= sqrt(V / n)
(Cauchy-Schwarz) and changes by at most 2 / n when one draw changes, so McDiarmid gives
P(f >= sqrt(V / n) + sqrt(2 ln(1 / delta) / n)) <= delta; the acceptance rate obeys Hoeffding's
P(|m / n - beta| >= sqrt(ln(2 / delta) / (2 n))) <= delta. With delta = 1e-9 a correct answer fails one of the three
tests with probability under 3e-9. Each slip's output distribution is computed here exactly (q a + (1 - sum q a) r for
its acceptance a and resampling r), and p, q are drawn again until every slip is at least twice the bound (plus
0.02) away: its own empirical distribution is within the bound of its own law with probability 1 - delta, so it
lands at least the bound away from p. Accepting with p / q without min(1, .) is right when compared with r in
[0, 1); torch.bernoulli given p / q above 1 raises, and that error is named.
"""

import math

import torch

from grader.checking import Text, check, expect_close, expect_tensor, fail, fail_raised, learner_call, matches, \
    probe, verbatim
from grader.devices import expect_cpu_only

N = 6000
DELTA = 1e-9

# -- probes (run in the sandbox) --------------------------------------------------------------


def plain(value):
    """A learner's output as a list of ints when it is a 1-D int64 tensor, else a short description."""
    if isinstance(value, torch.Tensor) and value.dim() == 1 and value.dtype == torch.int64:
        return value.tolist()
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {list(value.shape)} ({str(value.dtype).replace('torch.', '')})"
    return f"{type(value).__name__}: {repr(value)[:80]}"


@probe
def stepped(module, target, draft, tokens, seeds):
    """`speculative_step(target, draft, tokens, generator=g)` once per seed, g seeded with it: the outputs, whether
    the global RNG moved, and whether the inputs were changed in place."""
    found = []
    for seed in seeds:
        torch.manual_seed(seed + 99)
        before, passed = torch.random.get_rng_state(), [target.clone(), draft.clone(), tokens.clone()]
        value, error = learner_call(module, module.speculative_step, target, draft, tokens,
                                    generator=torch.Generator().manual_seed(seed))
        if error is not None:
            return {"error": error}
        found.append({"out": plain(value), "global": not torch.equal(before, torch.random.get_rng_state()),
                      "changed": not all(torch.equal(a, b) for a, b in zip(passed, (target, draft, tokens)))})
    return {"runs": found}


@probe
def trials(module, target, draft, n, seed):
    """n steps of one draft token each, drawn from `draft` with a generator of our own, judged with one generator
    seeded with `seed`: the outputs (the first one that is no 1-D int64 tensor ends the run)."""
    generator, drafts = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 1)
    outs = []
    for _ in range(n):
        tokens = torch.multinomial(draft, 1, generator=drafts).flatten()
        value, error = learner_call(module, module.speculative_step, target, draft, tokens, generator=generator)
        if error is not None:
            return {"error": error, "tokens": tokens.tolist()}
        out = plain(value)
        outs.append(out)
        if not isinstance(out, list):
            break
    return {"outs": outs}


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def uniform(rng, low: float, high: float) -> float:
    return low + (high - low) * float(torch.rand((), generator=rng))


def normalised(w):
    return w / w.sum(-1, keepdim=True)


def residual(p, q):
    return normalised((p - q).clamp(min=0))


def onehot(v, i):
    return torch.zeros(v, dtype=torch.float64).index_fill_(0, torch.tensor([i]), 1.0)


def bound(v: int, n: int) -> float:
    """The L1 distance n draws from a V-token distribution stay within with probability 1 - DELTA (McDiarmid)."""
    return math.sqrt(v / n) + math.sqrt(2 * math.log(1 / DELTA) / n)


def rate_bound(n: int) -> float:
    """The acceptance rate of n steps stays this close to its probability with probability 1 - DELTA (Hoeffding)."""
    return math.sqrt(math.log(2 / DELTA) / (2 * n))


def first_token_law(p, q, slip=None):
    """The exact distribution of the first output token of one step of one draft token x ~ q: q a + (1 - sum q a) r,
    for the acceptance a(x) and the resampling distribution r the statement (or a slip) uses."""
    accept = torch.minimum(torch.ones_like(p), p / q)
    again = residual(p, q)
    if slip == "resample-from-p":
        again = p
    elif slip == "resample-from-q":
        again = q
    elif slip == "draft-distribution":  # min(p, q) + max(0, q - p) = q, however it is reached
        accept = torch.ones_like(p)
    elif slip == "residual-abs":
        again = normalised((p - q).abs())
    elif slip == "accept-if-larger":
        accept = (p >= q).double()
    elif slip == "never-accept":
        accept = torch.zeros_like(p)
    kept = q * accept
    return kept + (1 - kept.sum()) * again


LAW_SLIPS = {  # the slips whose first tokens follow another law than p, as noun phrases for "they match {why}"
    "resample-from-p": ("a step that draws from p after a rejection (the rejected mass is then given to p twice)",
                        "被拒绝后从 p 中抽取的做法（被拒绝的那部分概率又按 p 分了一次）"),
    "resample-from-q": ("a step that draws from q after a rejection", "被拒绝后从 q 中抽取的做法"),
    "draft-distribution": ("the draft's own distribution q: every draft accepted, or accepted with min(1, q / p), or "
                           "max(0, q - p) drawn after a rejection", "草稿自己的分布 q（每个草稿词元都被接受、以 "
                           "min(1, q / p) 的概率接受、或被拒绝后从 max(0, q - p) 中抽取）"),
    "residual-abs": ("a step that draws from |p - q| after a rejection", "被拒绝后从 |p - q| 中抽取的做法"),
    "accept-if-larger": ("a step that accepts exactly when p >= q, with no random draw",
                         "恰好在 p >= q 时接受、没有随机抽取的做法"),
    "never-accept": ("a step that rejects every draft token", "拒绝每个草稿词元的做法"),
}


def distribution_case(rng):
    """(p [2, V], q [1, V]) where every slip's first-token law is at least twice the bound (plus 0.02) from p, and
    resampling from p and the draft's own law as far from every other slip (so that they are named), and the draft is accepted at least 40 % of
    the time; None when this draw is not."""
    v = randint(rng, 3, 5)
    p = torch.softmax(1.5 * torch.randn(2, v, generator=rng, dtype=torch.float64), -1)
    q = torch.softmax(1.5 * torch.randn(1, v, generator=rng, dtype=torch.float64), -1)
    if (p < 0.02).any() or (q < 0.02).any() or float(torch.minimum(p[0], q[0]).sum()) < 0.4:
        return None
    need = 2 * bound(v, N) + 0.02
    laws = {slip: first_token_law(p[0], q[0], slip) for slip in LAW_SLIPS}
    far = all(float((law - p[0]).abs().sum()) >= need for law in laws.values())
    named = all(float((law - laws[known]).abs().sum()) >= need  # the classic slips are always named
                for known in ("resample-from-p", "draft-distribution") for slip, law in laws.items() if slip != known)
    return (p, q) if far and named else None


def designed(rng, make, what: str, tries=2000):
    for _ in range(tries):
        case = make(rng)
        if case is not None:
            return case
    raise RuntimeError(f"fs36: no {what} case found in {tries} draws")


def accepted_rows(rng, v, k):
    """Draft tokens x [k], draft rows q [k, V] and target rows p [k, V] with p_i(x_i) >= q_i(x_i): each surely
    accepted. The last target row is one-hot at its draft token (the bonus, drawn from the wrong row, shows)."""
    q = torch.softmax(torch.randn(k, v, generator=rng, dtype=torch.float64), -1)
    x = torch.randint(0, v, (k,), generator=rng)
    p = torch.stack([0.5 * q[i] + 0.5 * onehot(v, int(x[i])) for i in range(k)])
    p[-1] = onehot(v, int(x[-1]))
    return x, q, p


def call_text(k, v) -> Text:
    return Text("speculative_step(target_probs[{k1}, {v}], draft_probs[{k}, {v}], draft_tokens[{k}], generator=g)",
                k1=k + 1, k=k, v=v)


def run_steps(submission, target, draft, tokens, seeds, what):
    found = submission.probe(stepped, target, draft, tokens, seeds, what="`speculative_step`")
    if "error" in found:
        raise_learner(found["error"], what)
    for run in found["runs"]:
        if not isinstance(run["out"], list):
            fail("{what} returned {got}: it returns the accepted draft tokens and one more token, as a 1-D int64 "
                 "tensor (torch.tensor(list_of_ints)).", "{what} 返回了 {got}：它应以一维 int64 tensor 返回被接受的草稿"
                 "词元和另外一个词元（torch.tensor(list_of_ints)）。", what=what, got=verbatim(run["out"]),
                 key="output-format")
    return found["runs"]


def raise_learner(error, what):
    if "p_in" in (error.get("message") or "") or ("bernoulli" in (error.get("message") or "")):
        fail_raised(error, what, ("torch.bernoulli was given p / q above 1: the acceptance probability is "
                                  "min(1, p / q) (or compare a uniform r < p / q).", "torch.bernoulli 收到了大于 1 的 "
                                  "p / q：接受概率是 min(1, p / q)（或者比较均匀分布的 r < p / q）。"), key="ratio-not-clamped")
    fail_raised(error, what)


# -- the checks -------------------------------------------------------------------------------------

@check("residual_probs keeps the shape of p; speculative_step returns a 1-D int64 tensor of 1 to K + 1 tokens", points=1,
       zh="residual_probs 保持 p 的形状；speculative_step 返回一维 int64 tensor，含 1 到 K + 1 个词元")
def test_shapes(submission, rng):
    v, k = randint(rng, 4, 6), randint(rng, 1, 3)
    p = torch.softmax(torch.randn(k + 1, v, generator=rng, dtype=torch.float64), -1)
    q = torch.softmax(torch.randn(k, v, generator=rng, dtype=torch.float64), -1)
    expect_tensor(submission.residual_probs(p[:k], q), Text("residual_probs(p[{k}, {v}], q[{k}, {v}])", k=k, v=v),
                  shape=[k, v], floating=True)
    x = torch.multinomial(q, 1, generator=rng).flatten()
    what = call_text(k, v)
    for run in run_steps(submission, p, q, x, [randint(rng, 0, 10**6)], what):
        if not 1 <= len(run["out"]) <= k + 1 or any(not 0 <= t < v for t in run["out"]):
            fail("{what} returned {got}: a step returns 1 to K + 1 = {k1} token ids, each in 0..V-1.",
                 "{what} 返回了 {got}：一步返回 1 到 K + 1 = {k1} 个词元编号，每个都在 0..V-1 之间。", what=what,
                 got=verbatim(str(run["out"])), k1=k + 1, key="output-format")


@check("residual_probs is max(0, p - q) normalised, row by row", points=1, zh="residual_probs 是逐行归一化的 max(0, p - q)",
       depends="shapes")
def test_residual(submission, rng):
    v = randint(rng, 4, 7)
    p = torch.softmax(1.5 * torch.randn(3, v, generator=rng, dtype=torch.float64), -1)
    q = torch.softmax(1.5 * torch.randn(3, v, generator=rng, dtype=torch.float64), -1)
    q[0] = p[0].roll(1)  # some entries of p - q negative in every row, a row with q a permutation of p
    what = Text("residual_probs(p[3, {v}], q[3, {v}])", v=v)
    got = expect_tensor(submission.residual_probs(p, q), what, shape=[3, v], floating=True)
    want = residual(p, q)
    causes = [(normalised(p - q), ("it matches p - q normalised without clamping: the negative entries (where the draft "
                                   "gave more than the target) are set to 0 first, max(0, p - q).",
                                   "它与没有截断就归一化的 p - q 一致：负的项（草稿给的比目标多的地方）要先设为 0，"
                                   "即 max(0, p - q)。"), "residual-not-clamped"),
              ((p - q).clamp(min=0), ("it matches max(0, p - q) not normalised: divide by its sum so that each row "
                                      "sums to 1.", "它与没有归一化的 max(0, p - q) 一致：要除以它的和，让每行之和为 1。"),
               "residual-not-normalised"),
              (residual(q, p), ("it matches max(0, q - p): the residual is where the target wants more than the draft, "
                                "max(0, p - q).", "它与 max(0, q - p) 一致：残差分布是目标比草稿要得多的地方，"
                                "即 max(0, p - q)。"), "residual-flipped"),
              (normalised((p - q).abs()), ("it matches |p - q| normalised: the entries where q > p are 0, not "
                                           "|p - q|.", "它与归一化的 |p - q| 一致：q > p 的项是 0，而不是 |p - q|。"),
               "residual-abs")]
    for wrong, why, key in causes:
        if matches(got, wrong) and not matches(got, want):
            fail("{what} should be {want}, got {got}: {why}", "{what} 应为 {want}，实际为 {got}：{why}", what=what,
                 want=verbatim(str([round(x, 4) for x in want[0].tolist()])),
                 got=verbatim(str([round(x, 4) for x in got[0].tolist()])), why=why, key=key)
    expect_close(got, want, what)


@check("every draft token the target supports is accepted, then the bonus token from the last target row; a GPU at "
       "hand changes nothing", points=2, zh="目标支持的草稿词元全部被接受，之后从最后一行目标分布中抽取额外的词元；有 GPU 时"
       "也不变", depends="residual")
def test_accepted(submission, rng):
    v, k = randint(rng, 4, 6), randint(rng, 1, 3)
    x, q, p = accepted_rows(rng, v, k)
    bonus = int(torch.randint(0, v - 1, (1,), generator=rng))
    bonus += bonus >= int(x[-1])  # never the last draft token: a bonus from the wrong row shows
    target = torch.cat([p, onehot(v, bonus)[None]])
    what = call_text(k, v)
    want = x.tolist() + [bonus]
    for run in run_steps(submission, target, q, x, [randint(rng, 0, 10**6) for _ in range(4)], what):
        got = run["out"]
        if got == want:
            continue
        if got == x.tolist():
            fail("{what} returned {got}: every draft token was accepted (the target gives each at least the draft's "
                 "probability), so one more token is drawn from the last target row, target_probs[K]: expected "
                 "{want}.", "{what} 返回了 {got}：每个草稿词元都被接受了（目标给每个词元的概率都不小于草稿给的），所以还要"
                 "从最后一行目标分布 target_probs[K] 中再抽一个词元：应为 {want}。", what=what, got=verbatim(str(got)),
                 want=verbatim(str(want)), key="bonus-forgotten")
        if got == x.tolist() + [int(x[-1])]:
            fail("{what} returned {got}: the bonus token came from target_probs[K - 1], the last draft token's row; "
                 "it is drawn from the row after it, target_probs[K]: expected {want}.",
                 "{what} 返回了 {got}：额外的词元取自最后一个草稿词元的那一行 target_probs[K - 1]；它应从后面那一行 "
                 "target_probs[K] 中抽取：应为 {want}。", what=what, got=verbatim(str(got)), want=verbatim(str(want)),
                 key="bonus-wrong-row")
        if got[:len(want) - 1] != x.tolist():
            fail("{what} returned {got}: a draft token whose target probability is at least its draft probability "
                 "is always accepted (min(1, p / q) = 1): expected {want}.",
                 "{what} 返回了 {got}：目标概率不小于草稿概率的草稿词元总是被接受（min(1, p / q) = 1）：应为 {want}。",
                 what=what, got=verbatim(str(got)), want=verbatim(str(want)), key="sure-accept-rejected")
        fail("{what} should return {want}, got {got}.", "{what} 应返回 {want}，实际为 {got}。", what=what,
             got=verbatim(str(got)), want=verbatim(str(want)), key="wrong-tokens")
    expect_cpu_only(submission, [("speculative_step", [target, q, x]), ("residual_probs", [p, q])])  # a GPU at hand
    # changes nothing


@check("a draft token the target gives probability 0 is rejected: one token from the residual, and the step ends",
       points=2, zh="目标给概率 0 的草稿词元被拒绝：从残差分布中抽取一个词元，这一步就结束", depends="accepted")
def test_rejected(submission, rng):
    v, k = randint(rng, 4, 6), randint(rng, 2, 3)
    j = randint(rng, 0, k - 1)  # the rejected position
    x, q, p = accepted_rows(rng, v, k)
    t, u, bad = torch.randperm(v, generator=rng)[:3].tolist()  # residual one-hot at t, draft token bad
    x[j] = bad
    q[j] = torch.full((v,), 0.1 / (v - 2), dtype=torch.float64)
    q[j, u], q[j, bad] = 0.6, 0.3
    p[j] = 0.5 * onehot(v, t) + 0.5 * onehot(v, u)  # p(bad) = 0; max(0, p - q) lives at t alone
    target = torch.cat([p, torch.softmax(torch.randn(1, v, generator=rng, dtype=torch.float64), -1)])
    what = call_text(k, v)
    want = x[:j].tolist() + [t]
    for run in run_steps(submission, target, q, x, [randint(rng, 0, 10**6) for _ in range(4)], what):
        got = run["out"]
        if got == want:
            continue
        if len(got) > j and got[:j + 1] == x[:j + 1].tolist():
            fail("{what} returned {got}: draft token {bad} at position {j} has target probability 0, so it is always "
                 "rejected (min(1, p / q) = 0): expected {want}.", "{what} 返回了 {got}：位置 {j} 的草稿词元 {bad} 的"
                 "目标概率为 0，所以它总是被拒绝（min(1, p / q) = 0）：应为 {want}。", what=what, got=verbatim(str(got)),
                 want=verbatim(str(want)), bad=bad, j=j, key="zero-accepted")
        if len(got) > len(want) and got[:len(want)] == want:
            fail("{what} returned {got}: after a rejection the step ends with the token drawn from the residual, no "
                 "later draft token and no bonus token: expected {want}.", "{what} 返回了 {got}：被拒绝后，这一步以从残差"
                 "分布抽取的词元结束，不再有后面的草稿词元，也没有额外的词元：应为 {want}。", what=what,
                 got=verbatim(str(got)), want=verbatim(str(want)), key="continued-after-reject")
        fail("{what} should return {want}, got {got}: max(0, p - q) at the rejected position is one-hot at token "
             "{t}.", "{what} 应返回 {want}，实际为 {got}：被拒绝位置上的 max(0, p - q) 只在词元 {t} 上不为 0。", what=what,
             got=verbatim(str(got)), want=verbatim(str(want)), t=t, key="wrong-tokens")
    expect_cpu_only(submission, [("speculative_step", [target, q, x])])  # the rejection's path too, with a GPU at hand


@check("over 6000 steps the output is distributed as the target: first token ~ p, acceptance sum(min(p, q)), bonus ~ "
       "the next row", points=3, zh="6000 步中输出服从目标分布：第一个词元 ~ p，接受率为 sum(min(p, q))，额外的词元 ~ 下一行",
       depends="rejected")
def test_distribution(submission, rng):
    p, q = designed(rng, distribution_case, "distribution")
    v = p.shape[1]
    what = Text("{n} steps of speculative_step(target_probs[2, {v}], draft_probs[1, {v}], one draft token ~ q)",
                "speculative_step(target_probs[2, {v}], draft_probs[1, {v}], 一个 ~ q 的草稿词元) 的 {n} 步", n=N, v=v)
    found = submission.probe(trials, p, q, N, randint(rng, 0, 10**6), what="`speculative_step`")
    if "error" in found:
        raise_learner(found["error"], what)
    outs = found["outs"]
    bad = next((o for o in outs if not isinstance(o, list) or not 1 <= len(o) <= 2
                or any(not 0 <= t < v for t in o)), None)
    if bad is not None:
        fail("{what}: one step returned {got}; with one draft token a step returns 1 or 2 token ids in 0..V-1.",
             "{what}：有一步返回了 {got}；只有一个草稿词元时，一步返回 1 或 2 个 0..V-1 之间的词元编号。", what=what,
             got=verbatim(str(bad)), key="output-format")
    first = torch.bincount(torch.tensor([o[0] for o in outs]), minlength=v).double() / N
    distance, limit = float((first - p[0]).abs().sum()), bound(v, N)
    shown = Text("{got} against p = {want} (L1 distance {d:.3f}, bound {b:.3f})", "{got}，而 p = {want}（L1 距离 "
                 "{d:.3f}，界 {b:.3f}）", got=verbatim(str([round(x, 3) for x in first.tolist()])),
                 want=verbatim(str([round(x, 3) for x in p[0].tolist()])), d=distance, b=limit)
    if distance > limit:
        near = [slip for slip in LAW_SLIPS if float((first - first_token_law(p[0], q[0], slip)).abs().sum()) <= limit]
        if len(near) == 1:
            fail("{what}: the first token's frequencies are {shown}: they match {why}. Accept with probability "
                 "min(1, p / q) and, after a rejection, draw from max(0, p - q) normalised: then the output is "
                 "distributed exactly as p.", "{what}：第一个词元的频率是 {shown}：与{why}一致。应以 min(1, p / q) "
                 "的概率接受，被拒绝后从归一化的 max(0, p - q) 中抽取：这样输出的分布恰好是 p。", what=what, shown=shown,
                 why=LAW_SLIPS[near[0]], key=near[0])
        fail("{what}: the first token's frequencies are {shown}: the output is not distributed as the target. Accept "
             "with probability min(1, p / q) and, after a rejection, draw from max(0, p - q) normalised.",
             "{what}：第一个词元的频率是 {shown}：输出不服从目标分布。应以 min(1, p / q) 的概率接受，被拒绝后从归一化的 "
             "max(0, p - q) 中抽取。", what=what, shown=shown, key="not-target-distribution")
    accepted = [o for o in outs if len(o) == 2]
    beta = float(torch.minimum(p[0], q[0]).sum())
    if abs(len(accepted) / N - beta) > rate_bound(N):
        fail("{what}: {m} of {n} draft tokens were accepted ({rate:.3f}); the acceptance rate of min(1, p / q) is "
             "sum(min(p, q)) = {beta:.3f}. The first tokens can come out right while the draft is wasted: accept "
             "with probability min(1, p / q), not more or less often.", "{what}：{n} 个草稿词元中有 {m} 个被接受"
             "（{rate:.3f}）；按 min(1, p / q) 接受时，接受率是 sum(min(p, q)) = {beta:.3f}。即使第一个词元的分布正确，"
             "草稿也可能被浪费：接受概率必须是 min(1, p / q)，不多也不少。", what=what, m=len(accepted), n=N,
             rate=len(accepted) / N, beta=beta, key="acceptance-rate")
    bonus = torch.bincount(torch.tensor([o[1] for o in accepted]), minlength=v).double() / len(accepted)
    if float((bonus - p[1]).abs().sum()) > bound(v, len(accepted)):
        fail("{what}: the bonus tokens of the {m} accepted steps have frequencies {got} against target_probs[1] = "
             "{want} (L1 bound {b:.3f}): after every draft token is accepted, the bonus is drawn from the next "
             "target row.", "{what}：{m} 个被接受的步骤中额外词元的频率是 {got}，而 target_probs[1] = {want}（L1 界 "
             "{b:.3f}）：所有草稿词元都被接受后，额外的词元从下一行目标分布中抽取。", what=what, m=len(accepted),
             got=verbatim(str([round(x, 3) for x in bonus.tolist()])),
             want=verbatim(str([round(x, 3) for x in p[1].tolist()])), b=bound(v, len(accepted)),
             key="bonus-distribution")


@check("the same generator seed gives the same tokens, only the generator is drawn from, the inputs stay as passed",
       points=1, zh="相同的生成器种子给出相同的词元，只从该生成器抽样，输入保持不变", depends="accepted")
def test_reproducible(submission, rng):
    v, k = randint(rng, 4, 6), 2
    x, q, p = accepted_rows(rng, v, k)  # surely accepted: the bonus is drawn, from a row of its own
    target = torch.cat([p, torch.softmax(torch.randn(1, v, generator=rng, dtype=torch.float64), -1)])
    rejected = target.clone()
    rejected[0] = (1 - q[0]).clamp(min=0) * (torch.arange(v) != x[0])  # x[0] surely rejected, a spread residual
    rejected[0] /= rejected[0].sum()
    seed = randint(rng, 0, 10**6)
    what = call_text(k, v)
    seeds = [seed + i for i in range(20)]
    runs = run_steps(submission, target, q, x, seeds + seeds + [s + 10**6 for s in seeds], what) + \
        run_steps(submission, rejected, q, x, seeds + seeds + [s + 10**6 for s in seeds], what)
    runs = runs[:20] + runs[60:80] + runs[20:40] + runs[80:100] + runs[40:60] + runs[100:]  # same, again, other
    if any(r["changed"] for r in runs):
        fail("{what} changed its inputs in place: the caller's probabilities and draft tokens stay as passed.",
             "{what} 原地修改了它的输入：调用者的概率和草稿词元要保持原样。", what=what, key="input-changed")
    if any(r["global"] for r in runs):
        fail("{what} drew from the global random generator (torch.manual_seed's): draw from `generator` only "
             "(torch.rand(..., generator=generator), torch.multinomial(..., generator=generator)).",
             "{what} 从全局随机数生成器（torch.manual_seed 的那个）中抽样：只能从 `generator` 抽样"
             "（torch.rand(..., generator=generator)、torch.multinomial(..., generator=generator)）。", what=what,
             key="global-rng")
    outs = [r["out"] for r in runs]
    if outs[:40] != outs[40:80]:
        fail("{what}: generators seeded alike gave different tokens: the step must depend on `generator` alone.",
             "{what}：用相同种子初始化的生成器给出了不同的词元：这一步必须只取决于 `generator`。", what=what,
             key="not-reproducible")
    if outs[:40] == outs[80:]:
        fail("{what}: 40 other seeds gave the same tokens: the generator is not used.",
             "{what}：另外 40 个种子给出了同样的词元：没有用到生成器。", what=what, key="generator-unused")
