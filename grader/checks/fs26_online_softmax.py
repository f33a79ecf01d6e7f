"""Hidden checks of fs26: the online softmax (running max and sum, merged block by block) and FlashAttention-style
tiled attention over blocks of keys.

The expectations are PyTorch's own: torch.softmax and F.scaled_dot_product_attention (and torch.logsumexp for the
statistics), computed here in float64 on the same draw. The known slips of the topic are written out here, in
float64, one at a time (`tiled`): the last, shorter block dropped, a running sum or output not rescaled when the max
grows, the rescaling turned around, a causal mask by the index inside the block instead of the key's position, the
diagonal hidden; a wrong value is named only when it matches a slip that differs from the right answer. The draws
make each slip show on every seed: block sizes that do not divide the length (and 1, and more than the length),
rows whose max grows block after block, logits of +-1e4 (in float16 too), a first block with the whole row's max.

A probe watches every torch function `tiled_attention` calls (a TorchFunctionMode) and keeps the shapes of their
results: a [Tq, Tk] score matrix is what the exercise is about not forming. Another records the torch functions
each function calls: the built-ins the statement forbids fail the checks of that function (the ex05 rule).

Kata variants: `variant("returns")` is what tiled_attention returns: the output, or the pair (output, lse) with
each query's log-sum-exp, checked against torch.logsumexp of the scaled, masked scores.
"""

import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from grader.checking import (Text, check, expect_close, expect_tensor, fail, learner_call, matches, probe,
                             recording_calls, variant, verbatim)
from grader.devices import expect_cpu_only

BANNED = {"merge_stats": ("logsumexp", "logaddexp"),
          "online_softmax": ("softmax", "logsumexp"),
          "tiled_attention": ("scaled_dot_product", "multi_head_attention", "flash_attention", "efficient_attention")}
SPELLED = {"merge_stats": "torch.logsumexp, torch.logaddexp", "online_softmax": "torch.softmax, F.softmax, "
           "torch.logsumexp", "tiled_attention": "F.scaled_dot_product_attention, nn.MultiheadAttention"}

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def torch_calls(module, cases):
    """For each function name, the torch functions it called on its case (name, args); an error is the value
    checks' lesson."""
    found = {}
    for name, args in cases:
        names = set()
        try:
            with recording_calls(names):
                getattr(module, name)(*args)
        except Exception:  # a missing or failing function is judged by the value checks
            pass
        found[name] = sorted(names)
    return found


@probe
def result_shapes(module, q, k, v, block_size):
    """The shape of every tensor a torch function returned while `tiled_attention` ran, and its error if any."""
    shapes = []

    class Shapes(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for item in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(item, torch.Tensor):
                    shapes.append(list(item.shape))
            return out

    with Shapes():
        _, error = learner_call(module, module.tiled_attention, q, k, v, block_size)
    return {"shapes": shapes, "error": error}


# -- judge side ------------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def wants_lse() -> bool:
    return variant("returns")["name"] == "lse"


def by_hand_only(submission, rng, fn: str) -> None:
    """A value a forbidden built-in computed is not earned: fail the checks of `fn` when it called one."""
    def run():
        x = torch.randn(2, 5, generator=rng)
        m, sums = x[:, :2].amax(-1, keepdim=True), torch.ones(2, 1)
        q, k, v = torch.randn(1, 2, 3, 4, generator=rng), torch.randn(1, 2, 5, 4, generator=rng), torch.randn(
            1, 2, 5, 3, generator=rng)
        cases = [("merge_stats", (m, sums, m - 1, sums)), ("online_softmax", (x, 2)), ("tiled_attention", (q, k, v, 2))]
        return submission.probe(torch_calls, cases, what=Text("the three functions", "这三个函数"))
    calls = submission.once("calls", run)
    used = [n for n in calls.get(fn, []) if any(b in n.lower() for b in BANNED[fn])]
    if used:
        fail("`{fn}` calls PyTorch's own `{name}`: the statement forbids {spelled} there, and values they computed are "
             "not yours. Write it with max, exp, sum and matmul.",
             "`{fn}` 调用了 PyTorch 自带的 `{name}`：题目在这里禁止使用 {spelled}，它们算出的值不是你写的。"
             "请用 max、exp、sum 和 matmul 自己实现。", fn=verbatim(fn), name=verbatim(used[0]),
             spelled=verbatim(SPELLED[fn]), key="builtin")


def first_wrong(got, want, rtol, atol) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol, equal_nan=True)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_named(got, want, what, slips, rtol=1e-5, atol=1e-7):
    """`got` is `want`; else the first known slip it matches (and the right answer does not) is named."""
    if matches(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return
    for wrong, why, key in slips:
        if not matches(wrong, want, rtol=rtol, atol=atol, equal_nan=True) \
                and matches(got, wrong, rtol=rtol, atol=atol, equal_nan=True):
            fail(Text("{what}{at} should be {want:.5g}, got {got:.5g}: {why}", "{what}{at} 应为 {want:.5g}，实际为 "
                      "{got:.5g}：{why}", what=what, why=why, **first_wrong(got, want, rtol, atol)), key=key)
    if not torch.isfinite(got.double()).all() and torch.isfinite(want.double()).all():
        fail("{what} contains NaN or inf where the right result is finite (first at {at}): an exp of a score above "
             "the running max overflows, and exp(-inf - (-inf)) is NaN for a part with no finite value yet.",
             "{what} 含有 NaN 或 inf，而正确结果是有限的（第一个在 {at}）：大于累计最大值的分数做 exp 会溢出，"
             "而对还没有任何有限值的部分，exp(-inf - (-inf)) 是 NaN。", what=what,
             at=[int(i) for i in (~torch.isfinite(got.double())).nonzero()[0]], key="nan")
    expect_close(got, want, what, rtol=rtol, atol=atol)


# the slips of a running (m, l): each written here, in float64
def tail_text(n: int, bs: int) -> Text:
    return Text("it matches the result without the last, shorter block: with range(0, n - block_size + 1, "
                "block_size) or n // block_size blocks, the {n} % {bs} = {r} last columns are never read. Loop over "
                "range(0, n, block_size): the last slice is then shorter.",
                "它与漏掉最后一块（更短的那块）的结果一致：用 range(0, n - block_size + 1, block_size) 或 "
                "n // block_size 块时，最后 {n} % {bs} = {r} 列从没被读到。请用 range(0, n, block_size) 循环："
                "最后一个切片只是更短。", n=n, bs=bs, r=n % bs)


NO_RESCALE = Text("it matches a running sum that is not rescaled when the max grows: the old sum was taken "
                  "relative to the old max, so it must be multiplied by exp(m_old - m_new) before the new block is added.",
                  "它与最大值变大时没有重新缩放累计和的结果一致：旧的和是相对旧的最大值求的，在加上新的一块之前，"
                  "必须乘以 exp(m_old - m_new)。")
FLIPPED = Text("it matches the rescaling turned around, exp(m_new - m_old): the old sum shrinks against a larger "
               "max, so the factor is exp(m_old - m_new) <= 1.",
               "它与方向反了的缩放 exp(m_new - m_old) 一致：相对更大的最大值，旧的和应变小，所以系数是 "
               "exp(m_old - m_new) <= 1。")


def blocks(n: int, bs: int, tail=True) -> list[tuple[int, int]]:
    """The (start, end) of each block of n columns, the last shorter one left out when not `tail`."""
    found = [(s, min(s + bs, n)) for s in range(0, n, bs)]
    return found if tail or n % bs == 0 else found[:-1]


def running(x, bs, slip=None):
    """(m, l) of the rows of x, block by block, in float64, with one slip: "tail" (the last short block dropped),
    "no-rescale" (l += the block's sum against the new max, old l kept), "flipped" (old l * exp(m_new - m_old))."""
    x = x.double()
    m = torch.full((*x.shape[:-1], 1), -math.inf, dtype=torch.float64)
    sums = torch.zeros_like(m)
    for s, e in blocks(x.shape[-1], bs, tail=slip != "tail"):
        new = torch.maximum(m, x[..., s:e].amax(-1, keepdim=True))
        factor = {"no-rescale": torch.ones_like(m), "flipped": torch.exp(new - m)}.get(slip, torch.exp(m - new))
        sums = torch.nan_to_num(sums * factor, nan=0.0) + torch.exp(x[..., s:e] - new).sum(-1, keepdim=True)
        m = new
    return m, sums


def softmax_slips(x, bs) -> list:
    slips = []
    for slip, why, key in (("tail", tail_text(x.shape[-1], bs), "last-block"), ("no-rescale", NO_RESCALE, "no-rescale"),
                           ("flipped", FLIPPED, "rescale-flipped")):
        m, sums = running(x, bs, slip)
        slips.append((torch.exp(x.double() - m) / sums, why, key))
    return slips


def tiled(q, k, v, bs, causal=False, slip=None):
    """Tiled attention in float64, with one slip: "tail", "no-rescale" (neither l nor the output rescaled),
    "local" (the causal mask compares the query with the key's index inside the block), "diagonal" (keys < i)."""
    q, k, v = q.double(), k.double(), v.double()
    tq, tk = q.shape[-2], k.shape[-2]
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=torch.float64)
    sums = torch.zeros_like(m)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=torch.float64)
    rows = torch.arange(tq)[:, None]
    for s, e in blocks(tk, bs, tail=slip != "tail"):
        scores = q @ k[..., s:e, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            cols = torch.arange(e - s) if slip == "local" else torch.arange(s, e)
            scores = scores.masked_fill(cols >= rows if slip == "diagonal" else cols > rows, -math.inf)
        new = torch.maximum(m, scores.amax(-1, keepdim=True))
        shift = torch.where(torch.isinf(new), torch.zeros_like(new), new)
        factor = torch.ones_like(m) if slip == "no-rescale" else torch.exp(m - shift)
        p = torch.exp(scores - shift)
        sums, acc, m = sums * factor + p.sum(-1, keepdim=True), acc * factor + p @ v[..., s:e, :], new
    return acc / sums


def reference(q, k, v, causal=False):
    q, k, v = q.double(), k.double(), v.double()
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def reference_lse(q, k, causal=False):
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        t = scores.shape[-1]
        scores = scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), -math.inf)
    return torch.logsumexp(scores, dim=-1)


def qkv(rng, b, h, tq, tk, d, dv, dtype=torch.float32):
    def draw(*shape):
        return torch.randn(*shape, generator=rng, dtype=torch.float64).to(dtype)
    return draw(b, h, tq, d), draw(b, h, tk, d), draw(b, h, tk, dv)


def call_tiled(submission, q, k, v, bs, causal, what):
    """The learner's tiled attention: the output [B, H, Tq, Dv] in q's dtype (and the lse in the lse draw)."""
    args = (q, k, v, bs, True) if causal else (q, k, v, bs)
    value = submission.tiled_attention(*args)
    lse = None
    if wants_lse():
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            fail("{what} should return a pair (out, lse), got {got}: the statement asks the output and each query's "
                 "log-sum-exp, m + log(l).",
                 "{what} 应返回二元组 (out, lse)，实际为 {got}：题目要求输出以及每个查询的 log-sum-exp，m + log(l)。",
                 what=what, got=verbatim(type(value).__name__), key="lse-missing")
        value, lse = value
        lse = expect_tensor(lse, Text("lse of {what}", "{what} 的 lse", what=what), shape=list(q.shape[:-1]),
                            floating=True)
    b, h, tq, _ = q.shape
    out = expect_tensor(value, what, shape=[b, h, tq, v.shape[-1]], floating=True)
    if out.dtype != q.dtype:
        fail("{what} should keep q's dtype, {want}, got {got}.", "{what} 应保持 q 的 dtype {want}，实际为 {got}。",
             what=what, want=q.dtype, got=out.dtype, key="wrong-dtype")
    return out, lse


def expect_lse(lse, q, k, causal, what):
    if lse is None:
        return
    want = reference_lse(q, k, causal)
    m_only = (q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1]))
    if causal:
        t = m_only.shape[-1]
        m_only = m_only.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), -math.inf)
    m_only = m_only.amax(-1)
    slips = [(m_only, Text("it matches the running max m alone: the log-sum-exp is m + log(l).",
                           "它与单独的累计最大值 m 一致：log-sum-exp 是 m + log(l)。"), "lse-max-only"),
             (want - m_only, Text("it matches log(l) alone: l was summed relative to m, so the log-sum-exp is "
                                  "m + log(l).", "它与单独的 log(l) 一致：l 是相对 m 求的和，所以 log-sum-exp 是 "
                                  "m + log(l)。"), "lse-no-max")]
    expect_named(lse, want, Text("lse of {what}", "{what} 的 lse", what=what), slips, rtol=1e-4, atol=1e-5)


# -- the checks -------------------------------------------------------------------------------------

@check("each function returns what the statement says, shaped like its inputs", points=1,
       zh="每个函数都按题目返回结果，形状与输入相符")
def test_shapes(submission, rng):
    m1, m2 = torch.randn(3, 1, generator=rng), torch.randn(3, 1, generator=rng)
    got = submission.merge_stats(m1, torch.ones(3, 1), m2, torch.ones(3, 1))
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        fail("merge_stats should return a pair (m, l), got {got}.", "merge_stats 应返回二元组 (m, l)，实际为 {got}。",
             got=verbatim(type(got).__name__), key="wrong-shape")
    for i, name in enumerate(("m", "l")):
        expect_tensor(got[i], f"merge_stats(...)[{i}] ({name})", shape=[3, 1], floating=True)
    x = torch.randn(2, 3, 7, generator=rng)
    expect_tensor(submission.online_softmax(x, 3), "online_softmax(x[2, 3, 7], 3)", shape=[2, 3, 7], floating=True)
    q, k, v = qkv(rng, 2, 1, 3, 5, 4, 6)
    call_tiled(submission, q, k, v, 2, False, "tiled_attention(q[2, 1, 3, 4], k[2, 1, 5, 4], v[2, 1, 5, 6], 2)")


def parts(rng, rows=4):
    """Two parts of the same rows (3 and 4 columns), part 2 holding the larger max on some rows, part 1 on others."""
    a = torch.randn(rows, 3, generator=rng, dtype=torch.float64) * 3
    b = torch.randn(rows, 4, generator=rng, dtype=torch.float64) * 3
    b[::2] += 5  # part 2 leads on the even rows, part 1 (below) on the odd ones
    a[1::2] += 5
    return a, b


@check("merge_stats merges the max and the rescaled sums of two parts", points=2,
       zh="merge_stats 合并两部分的最大值和重新缩放后的和", depends="shapes")
def test_merge(submission, rng):
    by_hand_only(submission, rng, "merge_stats")
    a, b = parts(rng)
    m1, m2 = a.amax(-1, keepdim=True), b.amax(-1, keepdim=True)
    l1, l2 = torch.exp(a - m1).sum(-1, keepdim=True), torch.exp(b - m2).sum(-1, keepdim=True)
    got = submission.merge_stats(m1, l1, m2, l2)
    whole = torch.cat([a, b], -1)
    m, lse = whole.amax(-1, keepdim=True), torch.logsumexp(whole, -1, keepdim=True)
    what = "merge_stats(m1, l1, m2, l2)"
    expect_close(expect_tensor(got[0], what + "[0] (m)", shape=[4, 1]), m, what + "[0] (m)")
    slips = [(l1 + l2, Text("it matches l1 + l2: each sum was taken relative to its own max, so each must be "
                            "multiplied by exp(m_i - m) before they are added.",
                            "它与 l1 + l2 一致：每个和都是相对各自的最大值求的，相加之前必须各乘以 exp(m_i - m)。"),
              "no-rescale"),
             (l1 * torch.exp(m - m1) + l2 * torch.exp(m - m2), FLIPPED, "rescale-flipped")]
    expect_named(expect_tensor(got[1], what + "[1] (l)", shape=[4, 1]), torch.exp(lse - m), what + "[1] (l)", slips)


@check("merge_stats of an empty part keeps the other part; two empty parts give (-inf, 0), never NaN", points=1,
       zh="merge_stats 与空的部分合并时保持另一部分不变；两个空的部分得到 (-inf, 0)，而不是 NaN", depends="merge")
def test_empty(submission, rng):
    by_hand_only(submission, rng, "merge_stats")
    inf = math.inf
    m2 = torch.randn(3, 1, generator=rng, dtype=torch.float64)
    l2 = 1 + torch.rand(3, 1, generator=rng, dtype=torch.float64)
    m1 = torch.tensor([[-inf], [-inf], [0.5]], dtype=torch.float64)  # rows 0, 1: part 1 empty; row 2: both parts
    l1 = torch.tensor([[0.0], [0.0], [2.0]], dtype=torch.float64)
    m2[1], l2[1] = -inf, 0.0  # row 1: both empty
    top = max(0.5, float(m2[2]))
    want_m = torch.tensor([[float(m2[0])], [-inf], [top]], dtype=torch.float64)
    want_l = torch.tensor([[float(l2[0])], [0.0], [2.0 * math.exp(0.5 - top) + float(l2[2]) * math.exp(float(m2[2]) - top)]],
                          dtype=torch.float64)
    what = Text("merge_stats(m1={m1}, l1={l1}, m2, l2) (rows 0 and 1: part 1 empty; row 1: part 2 too)",
                "merge_stats(m1={m1}, l1={l1}, m2, l2)（第 0、1 行：第 1 部分为空；第 1 行：第 2 部分也为空）",
                m1=verbatim(str(m1.flatten().tolist())), l1=verbatim(str(l1.flatten().tolist())))
    got = submission.merge_stats(m1, l1, m2, l2)
    m = expect_tensor(got[0], Text("m of {what}", "{what} 的 m", what=what), shape=[3, 1])
    sums = expect_tensor(got[1], Text("l of {what}", "{what} 的 l", what=what), shape=[3, 1])
    if torch.isnan(sums).any() or torch.isnan(m).any():
        fail("{what} gives NaN where a part is empty: exp(m1 - m) with m1 = m = -inf is exp(-inf - (-inf)) = "
             "exp(nan). Where the new max is -inf, shift by 0 instead (torch.where), so an empty part adds 0.",
             "{what} 在有空部分的地方得到 NaN：m1 = m = -inf 时，exp(m1 - m) 就是 exp(-inf - (-inf)) = exp(nan)。"
             "在新的最大值为 -inf 的地方改用 0 来平移（torch.where），这样空的部分加上的是 0。", what=what,
             key="empty-nan")
    expect_close(m, want_m, Text("m of {what}", "{what} 的 m", what=what))
    expect_close(sums, want_l, Text("l of {what}", "{what} 的 l", what=what))


def online_cases(rng) -> list:
    """(x, block_size): a size that does not divide the length, 1, more than the length; rows whose max grows
    block after block (sorted up), rows with the max in the first block (sorted down)."""
    n = randint(rng, 7, 10)
    sizes = [b for b in (3, 4) if n % b]
    bs = sizes[randint(rng, 0, len(sizes) - 1)]
    x = torch.randn(3, n, generator=rng, dtype=torch.float64) * 2
    x[0] = x[0].sort().values
    x[1] = x[1].sort(descending=True).values
    return [(x, bs), (x[:2], 1), (x[2:], n + 2), (x[:, :1], bs), (x.reshape(3, 1, n).expand(3, 2, n), bs)]  # 3-D too


@check("online_softmax matches torch.softmax, whatever the block size", points=2,
       zh="无论块大小是多少，online_softmax 都与 torch.softmax 一致", depends="shapes")
def test_online(submission, rng):
    by_hand_only(submission, rng, "online_softmax")
    for x, bs in online_cases(rng):
        x = x.float()
        what = f"online_softmax(x{list(x.shape)}, block_size={bs})"
        got = expect_tensor(submission.online_softmax(x, bs), what, shape=list(x.shape), floating=True)
        expect_named(got, torch.softmax(x.double(), -1), what, softmax_slips(x, bs), rtol=1e-4, atol=1e-6)


@check("online_softmax stays right on logits of +-1e4, in float32 and in float16", points=1,
       zh="logits 为 +-1e4 时，online_softmax 在 float32 和 float16 中都仍然正确", depends="online")
def test_stable(submission, rng):
    by_hand_only(submission, rng, "online_softmax")
    n = 2 * randint(rng, 3, 4) + 1  # odd: block_size=2 leaves a last, shorter block
    steps = torch.randint(0, 4, (3, n), generator=rng).double() * 2  # spacings float16 keeps at 1e4 (its step is 8)
    x = torch.empty(3, n, dtype=torch.float64)
    x[0] = -1e4 + steps[0] * 4
    x[0, n // 2:] += 2e4  # the max arrives late: +1e4 after -1e4
    x[1] = 1e4 - steps[1] * 4  # every logit near +1e4
    x[2] = -1e4 - steps[2] * 4  # every logit near -1e4
    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3)):
        xd = x.to(dtype)
        what = Text("online_softmax(x, block_size=2) on logits of +-1e4 in {dtype}",
                    "logits 为 +-1e4、dtype 为 {dtype} 时的 online_softmax(x, block_size=2)",
                    dtype=verbatim(str(dtype).removeprefix("torch.")))
        got = expect_tensor(submission.online_softmax(xd, 2), what, shape=[3, n], floating=True)
        if got.dtype != dtype:
            fail("{what} returned {got}: the result keeps x's dtype, {want}.",
                 "{what} 返回了 {got}：结果应保持 x 的 dtype {want}。", what=what, got=got.dtype, want=dtype,
                 key="wrong-dtype")
        if not torch.isfinite(got).all():
            fail("{what} contains NaN or inf: exp(x - m) overflowed, so m was not the running max of everything read "
                 "so far (exp(1e4) is inf in every dtype). Take the max over each block before its exp, and merge it "
                 "into m.",
                 "{what} 含有 NaN 或 inf：exp(x - m) 溢出了，说明 m 不是目前读过的所有值的累计最大值（在任何 dtype 中 "
                 "exp(1e4) 都是 inf）。请在对每一块做 exp 之前先取它的最大值，并合并进 m。", what=what,
                 key="overflow")
        expect_named(got, torch.softmax(xd.double(), -1), what, softmax_slips(xd, 2), rtol=tol, atol=tol)
    expect_cpu_only(submission, [("online_softmax", [x.float(), 2])])


def tiled_slips(q, k, v, bs, causal) -> list:
    slips = [(tiled(q, k, v, bs, causal, "tail"), tail_text(k.shape[-2], bs), "last-block"),
             (tiled(q, k, v, bs, causal, "no-rescale"), Text(
                 "it matches a running sum and output that are not rescaled when the max grows: both were summed "
                 "relative to the old max, so multiply both by exp(m_old - m_new) before adding the block.",
                 "它与最大值变大时没有重新缩放累计和与累计输出的结果一致：它们都是相对旧的最大值求的，所以在加上"
                 "这一块之前，两者都要乘以 exp(m_old - m_new)。"), "no-rescale"),
             (by_scale(q, k, v, causal), Text(
                 "it matches attention without the 1/sqrt(d_head) scale: divide each block's scores by sqrt(d_head) = "
                 "sqrt(q.size(-1)).", "它与没有 1/sqrt(d_head) 缩放的 attention 一致：请把每一块的分数除以 "
                 "sqrt(d_head) = sqrt(q.size(-1))。"), "no-scale")]
    if causal:
        slips += [(tiled(q, k, v, bs, True, "local"), Text(
            "it matches a causal mask by the key's index inside its block (0..block_size-1) instead of its position "
            "in the sequence: key j of the block starting at `start` is key start + j.",
            "它与按键在块内的下标（0..block_size-1）而不是它在序列中的位置来做因果掩码的结果一致：从 `start` 开始的"
            "那一块中的键 j 是键 start + j。"), "block-offset"),
            (tiled(q, k, v, bs, True, "diagonal"), Text(
                "it matches a mask that hides the diagonal too: query i attends keys 0..i, key i included (mask where "
                "key > query, not >=).", "它与连对角线也挡住的掩码一致：查询 i 关注键 0..i，包括键 i（在键 > 查询"
                "的地方掩盖，而不是 >=）。"), "causal-diagonal"),
            (reference(q, k, v), Text("it matches attention with no causal mask: causal=True must hide every key "
                                      "after the query, in every block.",
                                      "它与不加因果掩码的 attention 一致：causal=True 时必须在每一块中挡住查询之后的"
                                      "每个键。"), "causal-ignored")]
    return slips


def by_scale(q, k, v, causal):
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal, scale=1.0)


@check("tiled_attention matches F.scaled_dot_product_attention for any block size", points=2,
       zh="无论块大小是多少，tiled_attention 都与 F.scaled_dot_product_attention 一致", depends="shapes")
def test_tiled(submission, rng):
    by_hand_only(submission, rng, "tiled_attention")
    tk = randint(rng, 7, 10)
    sizes = [b for b in (3, 4) if tk % b]
    bs = sizes[randint(rng, 0, len(sizes) - 1)]
    d = randint(rng, 4, 6)
    for b, h, tq, tk_, bs_ in ((2, 2, randint(rng, 2, 4), tk, bs), (1, 2, 3, tk, 1), (1, 1, 2, 3, 5),
                               (1, 1, 1, 1, 2), (2, 1, 2, tk, bs)):
        q, k, v = qkv(rng, b, h, tq, tk_, d, 3, dtype=torch.float64 if b == 2 and h == 1 else torch.float32)
        if b == 2 and h == 1:  # batch 0's scores in the thousands (exp underflows 745 below), batch 1's small: each row needs its own max
            q[0] = q[0] * 400
        k = k * 2  # scores spread enough that the max moves from block to block
        v[..., :1, :] += 3  # the first key's value stands out: a dropped or unscaled block shows
        what = f"tiled_attention(q{list(q.shape)}, k{list(k.shape)}, v, block_size={bs_})"
        got, lse = call_tiled(submission, q, k, v, bs_, False, what)
        expect_named(got, reference(q, k, v), what, tiled_slips(q, k, v, bs_, False), rtol=1e-4, atol=1e-5)
        expect_lse(lse, q, k, False, what)


@check("tiled_attention with causal=True masks by the keys' positions in the sequence", points=2,
       zh="causal=True 时 tiled_attention 按键在序列中的位置做掩码", depends="tiled")
def test_causal(submission, rng):
    by_hand_only(submission, rng, "tiled_attention")
    t = randint(rng, 7, 9)
    sizes = [b for b in (2, 3, 4) if t % b]
    bs = sizes[randint(rng, 0, len(sizes) - 1)]
    for t_, bs_ in ((t, bs), (t, 1), (1, 3)):
        q, k, v = qkv(rng, 2, 2, t_, t_, 4, 3)
        what = f"tiled_attention(q{list(q.shape)}, k, v, block_size={bs_}, causal=True)"
        got, lse = call_tiled(submission, q, k, v, bs_, True, what)
        expect_named(got, reference(q, k, v, True), what, tiled_slips(q, k, v, bs_, True), rtol=1e-4, atol=1e-5)
        expect_lse(lse, q, k, True, what)
    q, k, v = qkv(rng, 1, 2, 5, 5, 4, 3)
    expect_cpu_only(submission, [("tiled_attention", [q, k, v, 2, True])])  # a GPU at hand changes nothing


@check("tiled_attention never forms the whole [Tq, Tk] score matrix", points=1,
       zh="tiled_attention 从不构造完整的 [Tq, Tk] 分数矩阵", depends="tiled")
def test_blocks(submission, rng):
    by_hand_only(submission, rng, "tiled_attention")
    tq, tk, bs = 3, 11, 4  # Tk > block_size, and Tk differs from every other size here
    q, k, v = qkv(rng, 1, 2, tq, tk, 5, 6)
    seen = submission.probe(result_shapes, q, k, v, bs, what="`tiled_attention`")
    if seen["error"] is None:
        full = [s for s in seen["shapes"] if len(s) >= 2 and s[-2:] == [tq, tk]]
        if full:
            fail("tiled_attention(q[1, 2, {tq}, 5], k[1, 2, {tk}, 5], v, block_size={bs}) made a tensor {shape}: the "
                 "scores of all {tk} keys at once. Compute them one block at a time, q @ k[..., s:s + block_size, :]"
                 ".transpose(-2, -1), [B, H, Tq, block_size]: that is what keeps FlashAttention's memory linear.",
                 "tiled_attention(q[1, 2, {tq}, 5], k[1, 2, {tk}, 5], v, block_size={bs}) 构造了形状为 {shape} 的"
                 "张量：一次算出了全部 {tk} 个键的分数。请每次只算一块，q @ k[..., s:s + block_size, :]"
                 ".transpose(-2, -1)，形状 [B, H, Tq, block_size]：FlashAttention 的内存正是这样保持线性的。",
                 tq=tq, tk=tk, bs=bs, shape=full[0], key="full-scores")


@check("no forbidden built-in is called (softmax, logsumexp, scaled_dot_product_attention)", points=1,
       zh="没有调用题目禁止的内置函数（softmax、logsumexp、scaled_dot_product_attention）", depends="shapes")
def test_by_hand(submission, rng):
    for fn in ("merge_stats", "online_softmax", "tiled_attention"):
        by_hand_only(submission, rng, fn)
