"""Hidden checks of fs19: temperature, top-k and top-p (nucleus) sampling with a seeded generator.

The distribution is judged exactly: the expected probabilities are computed here in float64 by set rules, not by
sorting (top-k keeps the logits at least the k-th largest, as Hugging Face's TopKLogitsWarper; top-p keeps a
token when the tokens strictly more probable than it hold less than p), then renormalised with torch.softmax.
Logits are drawn with ties at the top-k boundary (they stay) and k = 1 (greedy), p small (the top token alone),
rows that overflow a naive exp at a low temperature. Known slips are computed the same way and named: temperature
multiplied or ignored, the filters not renormalised, ties dropped at the top-k boundary (exactly k kept), the token that
crosses p dropped, top-p measured before top-k, the temperature at the other end of the chain.

top_p is chosen, not guessed: every cumulative mass a rule or a slip compares it with is a breakpoint, and p is drawn
inside a window between two of them, 2e-3 from both (float32 rounding cannot flip a decision), where the slips the
check names each give another distribution (top-p, combined). Windows where they do not are skipped, and logits with
no such window are drawn again, so a verdict never rests on the luck of the draw.

The draw is judged by its support and frequencies: a probe calls `sample` with a torch.Generator it seeds, on
thousands of copies of one row whose p makes every slip of sampling_probs fail the same way (a dropped token of at
least 2 % drawn, or a kept one of at least 2 % never drawn, or a frequency 12 standard deviations off); no token
outside the kept set may come out, and every kept token's frequency must be within 5 standard deviations of its
probability. Reproducibility, on tempered draws with no filter: the same seed twice gives the same tokens (with the
global RNG moved in between), another seed other tokens, the global RNG is left untouched and the caller's logits
unchanged.

Kata variants: `variant("temperature")`: the temperature divides the logits first (top-k and top-p see the
tempered distribution) or last (they see the raw one); the expectations and the order diagnosis follow it.
"""

import math

import torch

from grader.checking import LearnerError, Text, check, expect_close, expect_tensor, fail, matches, probe, variant, verbatim

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def draws(module, logits, kwargs, seeds):
    """`sample(logits, generator=g, **kwargs)` once per seed, g seeded with it (the global RNG set elsewhere first):
    the tokens, whether the global RNG moved during the call, and the first logit the call changed in place (what was
    passed, what is there now), or None."""
    found = []
    for seed in seeds:
        torch.manual_seed(seed + 1234)
        before, passed = torch.random.get_rng_state(), logits.clone()
        tokens = module.sample(logits, generator=torch.Generator().manual_seed(seed), **kwargs)
        changed = (passed != logits).flatten().nonzero().flatten().tolist()
        found.append({"tokens": tokens, "global": not torch.equal(before, torch.random.get_rng_state()),
                      "changed": [float(passed.flatten()[changed[0]]), float(logits.flatten()[changed[0]])]
                      if changed else None})
    return found


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def uniform(rng, low: float, high: float) -> float:
    return low + (high - low) * float(torch.rand((), generator=rng))


def temperature_first() -> bool:
    return variant("temperature")["name"] == "first"


def mass_above(probs):
    """[B, V]: for each token, the probability of the tokens strictly more probable than it."""
    return (probs[..., None, :] * (probs[..., None, :] > probs[..., :, None])).sum(-1)


def expected(logits, temperature=1.0, top_k=None, top_p=None, *, first=None, ties=True, renorm=True,
             crossing=True, p_first=False, temp="divide"):
    """The distribution in float64 by the statement's rules, or with one slip: the temperature at the other end
    (`first`), ties dropped at the top-k boundary, no renormalisation, the crossing token dropped, top-p before top-k,
    the temperature multiplied or ignored."""
    first = temperature_first() if first is None else first
    z = logits.double()
    tempered = {"divide": z / temperature, "multiply": z * temperature, "ignore": z}[temp]
    scores = tempered if first else z
    keep = torch.ones_like(z, dtype=torch.bool)
    if top_k is not None and top_k < z.shape[-1]:
        kth = torch.topk(scores, top_k, dim=-1).values[..., -1:]
        keep = scores >= kth
        if not ties:  # exactly k: the first k in a stable descending order
            order = torch.sort(scores, dim=-1, descending=True, stable=True).indices[..., :top_k]
            keep = torch.zeros_like(keep).scatter(-1, order, True)
    if top_p is not None:
        probs = torch.softmax(scores if p_first else scores.masked_fill(~keep, -math.inf), dim=-1)
        above = mass_above(probs)
        kept = above < top_p if crossing else (above + probs < top_p) | (above == 0)
        keep = keep & kept
    if not renorm:
        return torch.softmax(tempered, dim=-1) * keep
    return torch.softmax(tempered.masked_fill(~keep, -math.inf), dim=-1)


def breakpoints(logits, temperature=1.0, top_k=None) -> list[float]:
    """Every cumulative mass a top_p is compared with, by the statement's rule or a slip's: the mass strictly above
    each token and that mass with the token's own, for the logits divided, multiplied or left alone, measured after
    top-k or on the whole distribution. Between two of them, no rule and no slip changes its decision."""
    z = logits.double()
    found = [torch.tensor([0.0, 1.0], dtype=torch.float64)]
    for scores in (z / temperature, z * temperature, z):
        for whole in (False, True):
            kept = scores
            if top_k is not None and top_k < z.shape[-1] and not whole:
                kept = scores.masked_fill(scores < torch.topk(scores, top_k, dim=-1).values[..., -1:], -math.inf)
            probs = torch.softmax(kept, dim=-1)
            above = mass_above(probs)
            found += [above.flatten(), (above + probs).flatten()]
    return torch.cat(found).clamp(0, 1).unique().tolist()


def choose_p(rng, logits, kwargs, ok, margin=2e-3) -> float | None:
    """A top_p for `sampling_probs(logits, **kwargs)` at which `ok(top_p)` holds, drawn inside a window between two
    breakpoints and at least `margin` from both (float32 rounding cannot flip a decision); None when no window
    qualifies. Exact: `ok` is decided by the kept sets, which stay the same across a window."""
    points = breakpoints(logits, kwargs.get("temperature", 1.0), kwargs.get("top_k"))
    windows = [(lo + margin, hi - margin) for lo, hi in zip(points, points[1:]) if hi - lo > 2 * margin]
    for i in torch.randperm(len(windows), generator=rng).tolist():  # tried in a random order
        lo, hi = windows[i]
        if ok((lo + hi) / 2):
            return uniform(rng, lo, hi)
    return None


def designed(rng, make, what: str, tries=100):
    """(logits, kwargs) from `make(rng)`, which returns None for a draw where no top_p does what the check needs; a
    grader bug, never a learner's, when none does in `tries` draws."""
    for _ in range(tries):
        case = make(rng)
        if case is not None:
            return case
    raise RuntimeError(f"fs19: no {what} case found in {tries} draws")


def first_wrong(got, want) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=1e-4, atol=1e-6)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def call_text(shape, kwargs) -> Text:
    args = "".join(f", {k}={v:.4g}" if isinstance(v, float) else f", {k}={v}" for k, v in kwargs.items())
    return Text("sampling_probs(logits{shape}{args})", shape=list(shape), args=verbatim(args))


ORDER = {True: Text("it matches the temperature applied last, after top-k and top-p looked at the raw distribution: "
                    "here it divides the logits first, and the filters see the tempered distribution.",
                    "它与把 temperature 放在最后、top-k 和 top-p 看原始分布的结果一致：这里要先把 logits 除以 temperature，"
                    "过滤看的是调整过温度的分布。"),
         False: Text("it matches the temperature applied first, so top-p looked at the tempered distribution: here "
                     "top-k and top-p look at the raw distribution, and the temperature divides the kept logits last.",
                     "它与先用 temperature 调整、top-p 看调整过温度的分布的结果一致：这里 top-k 和 top-p 看原始分布，"
                     "最后才把保留下来的 logits 除以 temperature。")}


def slip_kwargs() -> list[dict]:
    """The slips `expected` computes, as its keyword arguments: those of `slips`, in its order."""
    return [{"temp": "multiply"}, {"temp": "ignore"}, {"renorm": False}, {"crossing": False}, {"p_first": True},
            {"first": not temperature_first()}]


def slips(logits, **kwargs):
    return lambda: [
        (expected(logits, **kwargs, temp="multiply"), Text(
            "it matches the logits multiplied by the temperature: they are divided by it (a temperature below 1 "
            "sharpens the distribution).", "它与 logits 乘以 temperature 的结果一致：应该是除以它（小于 1 的 temperature "
            "让分布更尖锐）。"), "temperature-multiplied"),
        (expected(logits, **kwargs, temp="ignore"), Text(
            "it matches the temperature left out: the logits are divided by it.",
            "它与没有使用 temperature 的结果一致：logits 要除以它。"), "temperature-ignored"),
        (expected(logits, **kwargs, renorm=False), Text(
            "it matches the dropped tokens zeroed without renormalising: the kept probabilities must sum to 1 again "
            "(a softmax over the kept logits).", "它与把被丢弃的词元置零却没有重新归一化的结果一致：保留下来的概率之和必须"
            "重新等于 1（对保留下来的 logits 做 softmax）。"), "not-renormalised"),
        (expected(logits, **kwargs, crossing=False), Text(
            "it matches the token that crosses top_p dropped: a token stays when the tokens before it hold less than "
            "top_p, so the kept set reaches top_p (its mass is at least top_p, not below it).",
            "它与丢掉越过 top_p 的那个词元的结果一致：只要排在它前面的词元总概率小于 top_p，这个词元就保留，"
            "所以保留的集合总概率会达到 top_p（不小于 top_p，而不是小于）。"), "top-p-crossing"),
        (expected(logits, **kwargs, p_first=True), Text(
            "it matches top-p measured on the whole distribution: top-p comes after top-k and uses its renormalised "
            "probabilities.", "它与在整个分布上计算 top-p 的结果一致：top-p 在 top-k 之后，使用 top-k 重新归一化后的概率。"),
         "top-p-before-top-k"),
        (expected(logits, **kwargs, first=not temperature_first()), ORDER[temperature_first()], "temperature-order"),
    ]


def expect_probs(submission, logits, **kwargs):
    what = call_text(logits.shape, kwargs)
    got = expect_tensor(submission.sampling_probs(logits, **kwargs), what, shape=list(logits.shape), floating=True)
    want = expected(logits, **kwargs)
    if matches(got, want):
        return
    if not torch.isfinite(got).all():
        fail("{what} contains NaN or inf: exp of a logit divided by a small temperature overflows float32 (above 88). "
             "Use torch.softmax, which subtracts the row's max.", "{what} 含有 NaN 或 inf：logit 除以很小的 temperature "
             "之后做 exp 会溢出 float32（大于 88）。请用会减去每行最大值的 torch.softmax。", what=what, key="overflow")
    if ties_dropped(got, logits, **kwargs):
        fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: exactly k tokens were kept, and a token tied with the "
                  "k-th largest logit was dropped. Every token whose logit is at least the k-th largest stays: compare "
                  "with the k-th value, torch.topk(...).values[..., -1:], rather than keeping topk's k indices.",
                  "{what}{at} 应为 {want:.4g}，实际为 {got:.4g}：只保留了恰好 k 个词元，与第 k 大 logit 并列的词元被丢掉了。"
                  "logit 不小于第 k 大的词元都要保留：请与第 k 大的值 torch.topk(...).values[..., -1:] 比较，而不是只保留 "
                  "topk 给出的 k 个索引。", what=what, **first_wrong(got, want)), key="top-k-ties")
    explained = [(message, key) for wrong, message, key in slips(logits, **kwargs)()
                 if not matches(wrong, want) and matches(got, wrong)]
    if len({key for _, key in explained}) == 1:  # a cause is named only when one slip alone explains the values
        fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，实际为 "
                  "{got:.4g}：{why}", what=what, why=explained[0][0], **first_wrong(got, want)), key=explained[0][1])
    expect_close(got, want, what, rtol=1e-4, atol=1e-6)


def ties_dropped(got, logits, temperature=1.0, top_k=None, top_p=None) -> bool:
    """Whether `got` keeps exactly top_k tokens per row, the right ones but for tokens tied with the k-th logit,
    renormalised over what it kept."""
    if top_k is None or top_p is not None or top_k >= logits.shape[-1] or not torch.isfinite(got).all():
        return False
    kept = got > 0
    z = logits.double()
    kth = torch.topk(z, top_k, dim=-1).values[..., -1:]
    want = z >= kth
    if not (kept.sum(-1) == top_k).all() or (kept & ~want).any() or (kept == want).all():
        return False
    tied = z == kth
    return bool((~kept & want <= tied).all()) \
        and matches(got, torch.softmax((z / temperature).masked_fill(~kept, -math.inf), -1))


def distinct(logits, kwargs, *slip_kwargs) -> bool:
    """Whether the statement's distribution and each slip's of `slip_kwargs` are all different from one another (a
    wrong answer can neither pass nor be misnamed)."""
    found = [expected(logits, **kwargs)] + [expected(logits, **kwargs, **slip) for slip in slip_kwargs]
    return all(not matches(a, b) for i, a in enumerate(found) for b in found[i + 1:])


def draw_logits(rng, b, v, scale=2.0):
    return scale * torch.randn(b, v, generator=rng)


# -- the checks -------------------------------------------------------------------------------------

@check("sampling_probs is the softmax of the logits divided by the temperature", points=1,
       zh="sampling_probs 是 logits 除以 temperature 后的 softmax")
def test_probs_plain(submission, rng):
    v = randint(rng, 6, 10)
    expect_probs(submission, draw_logits(rng, 3, v), temperature=uniform(rng, 0.5, 0.8))
    expect_probs(submission, draw_logits(rng, 2, v, scale=20.0), temperature=0.1)  # logits / T up to ~600
    expect_probs(submission, draw_logits(rng, 1, v), temperature=1.0)


@check("top-k keeps the k largest logits (ties with the k-th too), renormalised; k = 1 is greedy", points=2,
       zh="top-k 保留最大的 k 个 logits（与第 k 个并列的也保留），并重新归一化；k = 1 就是贪心", depends="probs_plain")
def test_top_k(submission, rng):
    v = randint(rng, 7, 10)
    logits = draw_logits(rng, 3, v)
    k = randint(rng, 2, v - 3)
    for row in range(3):  # a tie at the boundary: the (k+1)-th logit equal to the k-th
        order = torch.sort(logits[row], descending=True).indices
        logits[row, order[k]] = logits[row, order[k - 1]]
    t = uniform(rng, 0.6, 0.8) if randint(rng, 0, 1) else uniform(rng, 1.25, 1.5)  # 1 / t never close to t
    expect_probs(submission, logits, temperature=t, top_k=k)
    expect_probs(submission, draw_logits(rng, 2, v), temperature=0.8, top_k=1)
    expect_probs(submission, draw_logits(rng, 2, v), top_k=v)  # k = V: nothing to drop
    expect_probs(submission, draw_logits(rng, 2, v), top_k=v + randint(rng, 1, 4))  # k > V: nothing either


@check("top-p keeps the smallest set of most probable tokens that reaches p, renormalised", points=2,
       zh="top-p 保留总概率达到 p 的最小的一组最可能的词元，并重新归一化", depends="probs_plain")
def test_top_p(submission, rng):
    v = randint(rng, 7, 10)

    def make(rng):
        logits = draw_logits(rng, 3, v, scale=1.0)
        kwargs = {"temperature": uniform(rng, 0.5, 0.7)}
        p = choose_p(rng, logits, kwargs, lambda p: 0.4 <= p <= 0.95 and distinct(
            logits, {**kwargs, "top_p": p}, {"crossing": False}, {"first": not temperature_first()}))
        return None if p is None else (logits, {**kwargs, "top_p": p})

    logits, kwargs = designed(rng, make, "top-p")
    expect_probs(submission, logits, **kwargs)
    small = draw_logits(rng, 2, v)
    top = torch.softmax(small.double(), -1).max(-1).values.min()
    expect_probs(submission, small, top_p=float(top) / 2)  # p below the top probability: the top token alone


@check("top-k then top-p, with the temperature where the statement puts it", points=1,
       zh="先 top-k 再 top-p，temperature 放在题目规定的位置", depends=("top_k", "top_p"))
def test_combined(submission, rng):
    v = randint(rng, 8, 10)

    def make(rng):
        logits = draw_logits(rng, 3, v, scale=1.0)
        kwargs = {"temperature": uniform(rng, 0.4, 0.6), "top_k": randint(rng, 3, 5)}
        p = choose_p(rng, logits, kwargs, lambda p: 0.4 <= p <= 0.95 and distinct(
            logits, {**kwargs, "top_p": p}, *slip_kwargs()))
        return None if p is None else (logits, {**kwargs, "top_p": p})

    logits, kwargs = designed(rng, make, "combined")
    expect_probs(submission, logits, **kwargs)


def drawn_apart(want, wrong, n) -> bool:
    """Whether `n` draws from `wrong` always fail the same way against `want`, never as greedy (two tokens of at least
    2 %): a token `want` drops that `wrong` gives at least 2 % (drawn, surely: outside the support), else a token `want`
    keeps with at least 2 % that `wrong` drops (never drawn), else a probability 12 standard deviations away."""
    if (wrong >= 0.02).sum() < 2:
        return False
    extra, missing = (wrong > 0) & (want == 0), (want > 0) & (wrong == 0)
    if extra.any():
        return bool((wrong[extra] >= 0.02).all())
    if missing.any():
        return bool((want[missing] >= 0.02).any())
    return bool(((wrong - want).abs() > 12 * torch.sqrt(want * (1 - want) / n) + 2 / n).any())


def support_case(rng, n):
    """One row, its kwargs: at least two kept tokens, each with at least 2 %, and every slip that changes
    sampling_probs drawn apart from it (see drawn_apart) in `n` draws."""
    v = randint(rng, 8, 10)
    row = draw_logits(rng, 1, v, scale=1.0)
    kwargs = {"temperature": uniform(rng, 0.4, 0.6), "top_k": randint(rng, 5, v - 2)}

    def ok(p):
        want = expected(row, **kwargs, top_p=p)[0]
        kept = want[want > 0]
        return len(kept) >= 2 and bool((kept >= 0.02).all()) and all(
            drawn_apart(want, expected(row, **kwargs, top_p=p, **slip)[0], n)
            for slip in slip_kwargs() if "renorm" not in slip)  # multinomial renormalises: the same draws

    p = choose_p(rng, row, kwargs, ok)
    return None if p is None else (row, {**kwargs, "top_p": p})


@check("sample returns int64 [B], one token per row (B = 1 too)", points=1,
       zh="sample 返回 int64 的 [B]，每行一个词元（B = 1 也一样）",
       depends="probs_plain")
def test_sample_shape(submission, rng):
    logits = draw_logits(rng, 4, randint(rng, 6, 9))
    tokens = submission.probe(draws, logits, {}, [randint(rng, 0, 10**6)], what="`sample`")[0]["tokens"]
    tokens = expect_tensor(tokens, "sample(logits[4, V], generator=g)", shape=[4], dtype=torch.int64)
    one = submission.probe(draws, logits[:1], {}, [randint(rng, 0, 10**6)], what="`sample`")[0]["tokens"]
    expect_tensor(one, "sample(logits[1, V], generator=g)", shape=[1], dtype=torch.int64)  # a batch of one row too
    if ((tokens < 0) | (tokens >= logits.shape[-1])).any():
        fail("sample returned {got}: token ids go from 0 to V - 1 = {last}.", "sample 返回了 {got}：词元编号应在 0 到 "
             "V - 1 = {last} 之间。", got=tokens.tolist(), last=logits.shape[-1] - 1, key="token-out-of-range")


def own_probs(submission, row, kwargs) -> torch.Tensor | None:
    """The learner's own sampling_probs on `row` in float64 ([V]), or None where it raises or returns no such tensor:
    what their sample draws from, when it calls it."""
    try:
        got = submission.sampling_probs(row.reshape(1, -1), **kwargs)
    except LearnerError:
        return None
    if not isinstance(got, torch.Tensor) or list(got.shape) != [1, row.shape[-1]] or not got.is_floating_point():
        return None
    got = got[0].double()
    return got if bool(torch.isfinite(got).all()) and bool((got >= 0).all()) else None


@check("sample draws only the kept tokens, as often as their probabilities say", points=2,
       zh="sample 只抽取保留下来的词元，频率与其概率相符", depends=("combined", "sample_shape"))
def test_support(submission, rng):
    n = 3000
    row, kwargs = designed(rng, lambda rng: support_case(rng, n), "support")
    logits = row.expand(n, -1).contiguous()
    tokens = submission.probe(draws, logits, kwargs, [randint(rng, 0, 10**6)], what="`sample`")[0]["tokens"]
    what = Text("sample(logits[{n}, {v}] (the same row), {args})", "sample(logits[{n}, {v}]（同一行重复）, {args})",
                n=n, v=row.shape[-1], args=verbatim(
        ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in kwargs.items())))
    tokens = expect_tensor(tokens, what, shape=[n], dtype=torch.int64)
    probs = expected(row, **kwargs)[0]
    kept = (probs > 0).nonzero().flatten().tolist()
    outside = sorted(set(tokens.tolist()) - set(kept))
    own = own_probs(submission, row, kwargs)
    if outside and own is not None and float(own[outside[0]]) > 0:
        fail("{what} drew token {token}, which top-k/top-p drop (the kept tokens: {kept}): your sampling_probs(...) "
             "gives it probability {p:.3g}, and sample draws from it. Fix sampling_probs first.",
             "{what} 抽到了词元 {token}，而它已被 top-k/top-p 丢弃（保留的词元：{kept}）：你的 sampling_probs(...) "
             "给了它 {p:.3g} 的概率，而 sample 是从它抽样的。请先改好 sampling_probs。", what=what, token=outside[0],
             kept=kept, p=float(own[outside[0]]), key="probs-support-wrong")
    if outside:
        fail("{what} drew token {token}, which top-k/top-p drop (the kept tokens: {kept}): draw from "
             "sampling_probs(...), not from the softmax of the logits.", "{what} 抽到了词元 {token}，而它已被 top-k/top-p "
             "丢弃（保留的词元：{kept}）：要从 sampling_probs(...) 中抽样，而不是从 logits 的 softmax 中抽样。", what=what,
             token=outside[0], kept=kept, key="outside-support")
    counts = torch.bincount(tokens, minlength=row.shape[-1]).double() / n
    if len(kept) > 1 and len(set(tokens.tolist())) == 1:
        fail("{what} returned token {token} every time, the most probable one: that is greedy decoding (argmax), not "
             "sampling. Draw with torch.multinomial(probs, 1, generator=generator).",
             "{what} 每次都返回最可能的词元 {token}：这是贪心解码（argmax），不是采样。请用 "
             "torch.multinomial(probs, 1, generator=generator) 抽样。", what=what, token=int(tokens[0]), key="greedy")
    band = 5 * torch.sqrt(probs * (1 - probs) / n) + 2 / n
    off = ((counts - probs).abs() > band).nonzero().flatten().tolist()
    if off and own is not None and not ((counts - own).abs() > 5 * torch.sqrt(own * (1 - own) / n) + 2 / n).any():
        i = off[0]
        fail("{what} drew token {token} with frequency {got:.3f} over {n} draws; its probability is {want:.3f}: the "
             "draws follow your sampling_probs(...), which gives it {p:.3f}. Fix sampling_probs first.",
             "{what} 在 {n} 次抽样中抽到词元 {token} 的频率是 {got:.3f}；它的概率是 {want:.3f}：抽样符合你的 "
             "sampling_probs(...)，它给出的是 {p:.3f}。请先改好 sampling_probs。", what=what, token=i,
             got=float(counts[i]), n=n, want=float(probs[i]), p=float(own[i]), key="probs-support-wrong")
    if off:
        i = off[0]
        fail("{what} drew token {token} with frequency {got:.3f} over {n} draws; its probability is {want:.3f} (5 "
             "standard deviations: {band:.3f}): the tokens are not drawn from sampling_probs(...).",
             "{what} 在 {n} 次抽样中抽到词元 {token} 的频率是 {got:.3f}；它的概率是 {want:.3f}（5 个标准差：{band:.3f}）："
             "词元不是按 sampling_probs(...) 抽样的。", what=what, token=i, got=float(counts[i]), n=n,
             want=float(probs[i]), band=float(band[i]), key="wrong-frequencies")


@check("the same generator seed gives the same tokens, only the generator is drawn from, the logits stay as passed",
       points=1, zh="相同的生成器种子给出相同的词元，只从该生成器抽样，传入的 logits 保持不变", depends="support")
def test_reproducible(submission, rng):
    logits = draw_logits(rng, 1, randint(rng, 8, 10), scale=1.0).expand(200, -1).contiguous()  # no filter: only
    # the generator is judged, whatever the filters get wrong
    seed, t = randint(rng, 0, 10**6), uniform(rng, 0.5, 0.8)
    runs = submission.probe(draws, logits, {"temperature": t}, [seed, seed, seed + 1], what="`sample`")
    if runs[0]["changed"]:
        fail("sample(logits, temperature={t:.3g}, generator=g) changed the caller's logits in place (a logit passed as "
             "{passed:.4g} is now {now:.4g}): a sampler leaves its input alone, so compute into a new tensor "
             "(logits = logits / temperature, masked_fill) rather than in place (/=, masked_fill_).",
             "sample(logits, temperature={t:.3g}, generator=g) 原地修改了调用者的 logits（传入的 {passed:.4g} 现在是 "
             "{now:.4g}）：采样函数不能改动它的输入，请把结果放进新的 tensor（logits = logits / temperature、masked_fill），"
             "而不是原地修改（/=、masked_fill_）。", t=t, passed=runs[0]["changed"][0], now=runs[0]["changed"][1],
             key="input-changed")
    if any(r["global"] for r in runs):
        fail("sample drew from the global random generator (torch.manual_seed's): it must draw from the generator it "
             "is given, torch.multinomial(..., generator=generator), so that a seed reproduces a generation and "
             "other code's randomness is left alone.",
             "sample 从全局随机数生成器（torch.manual_seed 的那个）中抽样：它必须从传给它的生成器中抽样，"
             "torch.multinomial(..., generator=generator)，这样种子才能复现一次生成，也不会影响其他代码的随机性。",
             key="global-rng")
    first, again, other = (r["tokens"] for r in runs)
    if not torch.equal(first, again):
        fail("Two calls of sample with generators seeded with the same seed ({seed}) gave different tokens: the draw "
             "must depend on `generator` alone.", "两次调用 sample，生成器用同一个种子（{seed}）初始化，得到的词元却不同："
             "抽样必须只取决于 `generator`。", seed=seed, key="not-reproducible")
    if torch.equal(first, other):
        fail("sample gave the same 200 tokens for the seeds {seed} and {other}: the generator is not used for the "
             "draw.", "种子 {seed} 和 {other} 让 sample 给出了同样的 200 个词元：抽样没有用到生成器。", seed=seed,
             other=seed + 1, key="generator-unused")
