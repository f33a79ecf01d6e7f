"""Hidden checks of fs28: sliding-window causal attention and ALiBi biases.

The slopes are checked against the ALiBi paper's rule (its reference `get_slopes`, written out here), for powers
of two and for other head counts (6, 12, and one head). The bias is checked on its causal part (j <= i), so that a
bias defined as -slope * |i - j| is accepted. The attention is checked against F.scaled_dot_product_attention in
float64 with a float mask: the ALiBi bias where the window allows, -inf elsewhere. Windows are drawn so that the
boundary shows on every seed: T > window + 1, a window of 1 (or 0) key behind, and a window at least T (plain
causal). Each slip is written out here: the window one key too wide or too narrow (the other convention), the
window not causal (keys ahead), the bias with the wrong sign, one slope for every head, the bias after the softmax.

Kata variants: `variant("window")` is what `window` counts: the keys a query sees, itself included (Mistral's
sliding_window, `i - j < window`), or how far back it looks (`i - j <= window`, window + 1 keys).
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, explain, fail, matches, variant, verbatim
from grader.devices import expect_cpu_only

# -- judge side ------------------------------------------------------------------------------------


def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def counts_keys() -> bool:
    """Whether `window` is the number of keys a query sees (itself included), not the distance back."""
    return variant("window")["name"] == "keys"


def paper_slopes(n: int) -> list[float]:
    """The ALiBi paper's get_slopes(n)."""
    def power_of_2(m):
        start = 2 ** (-2 ** -(math.log2(m) - 3))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + paper_slopes(2 * closest)[0::2][:n - closest]


def band(t: int, back_max: float, causal=True) -> torch.Tensor:
    """[T, T] bool: key j allowed for query i when 0 <= i - j <= back_max (|i - j| <= back_max when not causal)."""
    pos = torch.arange(t)
    back = pos[:, None] - pos[None, :]
    return (back.abs() <= back_max) if not causal else (back >= 0) & (back <= back_max)


def widest_back(window: int) -> int:
    """The largest i - j the draw's window allows."""
    return window - 1 if counts_keys() else window


def bias_of(slopes: torch.Tensor, t: int) -> torch.Tensor:
    pos = torch.arange(t, dtype=torch.float64)
    return slopes.double()[:, None, None] * (pos[None, :] - pos[:, None])[None]


def attention(q, k, v, allowed, bias=None, after=False):
    """Attention in float64 with a [T, T] mask and an optional [H, T, T] bias (after the softmax when `after`)."""
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None and not after:
        scores = scores + bias
    weights = torch.softmax(scores.masked_fill(~allowed, -math.inf), -1)
    if bias is not None and after:
        weights = weights + bias.masked_fill(~allowed, 0.0)
    return weights @ v


def reference(q, k, v, window, slopes=None):
    t = q.shape[-2]
    mask = torch.zeros(t, t, dtype=torch.float64).masked_fill(~band(t, widest_back(window)), -math.inf)
    if slopes is not None:
        mask = mask + bias_of(slopes, t)
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)


def first_wrong(got, want, rtol, atol) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol, equal_nan=True)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_named(got, want, what, slips, rtol=1e-4, atol=1e-5):
    if matches(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return
    for wrong, why, key in slips:
        if not matches(wrong, want, rtol=rtol, atol=atol, equal_nan=True) and matches(
                got, wrong, rtol=rtol, atol=atol, equal_nan=True):
            fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，实际为 "
                      "{got:.4g}：{why}", what=what, why=why, **first_wrong(got, want, rtol, atol)), key=key)
    expect_close(got, want, what, rtol=rtol, atol=atol)


def window_rule() -> Text:
    return Text("query i attends keys j with i - window < j <= i, the last `window` keys, itself included",
                "查询 i 关注满足 i - window < j <= i 的键 j，即最近的 `window` 个键，包括自己") if counts_keys() else Text(
        "query i attends keys j with i - window <= j <= i, itself and the `window` keys before it",
        "查询 i 关注满足 i - window <= j <= i 的键 j，即自己以及它之前的 `window` 个键")


def window_slips(q, k, v, window, slopes=None) -> list:
    t, widest = q.shape[-2], widest_back(window)
    bias = None if slopes is None else bias_of(slopes, t)
    return [
        (attention(q, k, v, band(t, widest + 1), bias), Text(
            "it matches a window one key too wide: query i also attends key i - {far}. Here {rule}.",
            "它与宽了一个键的窗口一致：查询 i 还关注了键 i - {far}。这里{rule}。", far=widest + 1, rule=window_rule()),
         "window-too-wide"),
        (attention(q, k, v, band(t, widest - 1), bias), Text(
            "it matches a window one key too narrow: query i misses key i - {far}. Here {rule}.",
            "它与窄了一个键的窗口一致：查询 i 漏掉了键 i - {far}。这里{rule}。", far=widest, rule=window_rule()),
         "window-too-narrow"),
        (attention(q, k, v, band(t, widest, causal=False), bias), Text(
            "it matches a window on both sides: query i attends keys ahead of it too. The window is causal: keys "
            "j <= i only, then the bound on i - j.",
            "它与两侧都有的窗口一致：查询 i 也关注了它之后的键。窗口是因果的：只取 j <= i 的键，再限制 i - j。"),
         "window-not-causal"),
        (attention(q, k, v, band(t, t), bias), Text(
            "it matches plain causal attention: the window was not applied.",
            "它与普通的因果注意力一致：没有加窗口。"), "window-ignored"),
    ]


def alibi_slips(q, k, v, window, slopes) -> list:
    t = q.shape[-2]
    allowed = band(t, widest_back(window))
    return [
        (attention(q, k, v, allowed, -bias_of(slopes, t)), Text(
            "it matches the bias with the wrong sign: slope * (i - j) favours the farthest keys. The bias is "
            "slope * (j - i), <= 0 behind the query.",
            "它与符号反了的偏置一致：slope * (i - j) 会偏向最远的键。偏置是 slope * (j - i)，在查询之前的键上 <= 0。"),
         "bias-sign"),
        (attention(q, k, v, allowed, bias_of(slopes[:1].expand_as(slopes), t)), Text(
            "it matches the first head's slope used for every head: each head h has its own slope, slopes[h] "
            "(slopes[:, None, None]).",
            "它与所有头都用第一个头的斜率的结果一致：每个头 h 有自己的斜率 slopes[h]（slopes[:, None, None]）。"),
         "one-slope"),
        (attention(q, k, v, allowed, bias_of(slopes, t), after=True), Text(
            "it matches the bias added to the weights after the softmax: it is added to the scores, before.",
            "它与在 softmax 之后把偏置加到权重上的结果一致：偏置应在 softmax 之前加到分数上。"), "bias-after-softmax"),
        (attention(q, k, v, allowed), Text("it matches attention without the ALiBi bias: with slopes given, add "
                                           "alibi_bias(slopes, T) to the scores.",
                                           "它与没有 ALiBi 偏置的 attention 一致：给了 slopes 时，要把 "
                                           "alibi_bias(slopes, T) 加到分数上。"), "bias-ignored"),
    ]


def qkv(rng, b, h, t, d, dtype=torch.float32):
    def draw(*shape):
        return torch.randn(*shape, generator=rng, dtype=torch.float64).to(dtype)
    return draw(b, h, t, d), draw(b, h, t, d), draw(b, h, t, d)


def expect_output(value, q, what) -> torch.Tensor:
    value = expect_tensor(value, what, shape=list(q.shape), floating=True)
    if value.dtype != q.dtype:
        fail("{what} should keep q's dtype, {want}, got {got}.", "{what} 应保持 q 的 dtype {want}，实际为 {got}。",
             what=what, want=q.dtype, got=value.dtype, key="wrong-dtype")
    return value


# -- the checks -------------------------------------------------------------------------------------

@check("the three functions return the statement's shapes", points=1, zh="三个函数返回题目规定的形状")
def test_shapes(submission, rng):
    slopes = expect_tensor(submission.alibi_slopes(4), "alibi_slopes(4)", shape=[4], floating=True)
    if slopes.dtype != torch.float32:
        fail("alibi_slopes(4) should be float32, got {got}.", "alibi_slopes(4) 应为 float32，实际为 {got}。",
             got=slopes.dtype, key="wrong-dtype")
    expect_tensor(submission.alibi_bias(torch.tensor([0.5, 0.25, 0.125]), 5), "alibi_bias(slopes[3], 5)",
                  shape=[3, 5, 5], floating=True)
    q, k, v = qkv(rng, 2, 3, 5, 4)
    expect_output(submission.sliding_window_attention(q, k, v, 2), q, "sliding_window_attention(q[2, 3, 5, 4], k, v, 2)")


@check("alibi_slopes follows the ALiBi paper, for powers of two and for other head counts", points=2,
       zh="alibi_slopes 符合 ALiBi 论文，无论头数是否是 2 的幂", depends="shapes")
def test_slopes(submission, rng):
    for n in (8, [6, 12][randint(rng, 0, 1)], 5, 1, 16):  # 5: n - c and 2c - n differ (they are equal for 6, 12)
        got = expect_tensor(submission.alibi_slopes(n), f"alibi_slopes({n})", shape=[n], floating=True)
        want = torch.tensor(paper_slopes(n), dtype=torch.float64)
        plain = torch.tensor([2 ** (-8 * (i + 1) / n) for i in range(n)], dtype=torch.float64)
        slips = [(torch.tensor([2 ** (-8 * i / n) for i in range(n)], dtype=torch.float64), Text(
            "it matches 2^(-8 h / n) from h = 0, a first slope of 1: the sequence starts at 2^(-8 / n), head h gets "
            "2^(-8 (h + 1) / n).", "它与从 h = 0 开始的 2^(-8 h / n) 一致，第一个斜率是 1：序列从 2^(-8 / n) 开始，头 h "
            "的斜率是 2^(-8 (h + 1) / n)。"), "slopes-from-zero"),
                 (want.flip(0), Text("it matches the slopes in reverse order: head 0 gets the largest, 2^(-8 / c).",
                                     "它与顺序反了的斜率一致：头 0 的斜率最大，为 2^(-8 / c)。"), "slopes-reversed"),
                 (plain, Text("it matches the power-of-two formula applied to {n} heads, which is not a power of two: "
                              "take the slopes of {c} heads, then every other slope of {c2} heads.",
                              "它与把 2 的幂的公式直接用于 {n} 个头的结果一致，而 {n} 不是 2 的幂：先取 {c} 个头的斜率，再从 "
                              "{c2} 个头的斜率中隔一个取一个。", n=n, c=2 ** math.floor(math.log2(n)),
                              c2=2 ** (math.floor(math.log2(n)) + 1)), "slopes-not-power-of-two")]
        expect_named(got, want, f"alibi_slopes({n})", slips, rtol=1e-5, atol=1e-7)
    expect_cpu_only(submission, [("alibi_slopes", [6])])  # a GPU at hand changes nothing


@check("alibi_bias is slope * (j - i) per head, on the causal part", points=1,
       zh="alibi_bias 在因果部分按头等于 slope * (j - i)", depends="shapes")
def test_bias(submission, rng):
    h = randint(rng, 2, 4)
    t = randint(rng, 4, 6)
    slopes = torch.tensor(paper_slopes(8)[:h]) * (1 + torch.rand(h, generator=rng))
    what = f"alibi_bias(slopes[{h}], {t})"
    got = expect_tensor(submission.alibi_bias(slopes, t), what, shape=[h, t, t], floating=True)
    causal = band(t, t).expand(h, t, t)
    want = bias_of(slopes, t)
    slips = [(-want, Text("it matches slope * (i - j): the sign is turned around. Keys behind the query get a "
                          "penalty, slope * (j - i) <= 0.",
                          "它与 slope * (i - j) 一致：符号反了。查询之前的键应受到惩罚，slope * (j - i) <= 0。"),
              "bias-sign")]
    expect_named(got.double()[causal], want[causal], what, [(w[causal], why, key) for w, why, key in slips],
                 rtol=1e-5, atol=1e-6)


@check("the sliding window is causal and its boundary exact", points=2, zh="滑动窗口是因果的，且边界准确",
       depends="shapes")
def test_window(submission, rng):
    t = randint(rng, 7, 9)
    widest = randint(rng, 2, 3)
    window = widest + 1 if counts_keys() else widest
    one = 1 if counts_keys() else 0  # a window of the query itself only
    for window_, t_ in ((window, t), (one, 4), (t + 1, t), (window, 1)):
        q, k, v = qkv(rng, 2, 2, t_, 4)
        what = f"sliding_window_attention(q{list(q.shape)}, k, v, window={window_})"
        got = expect_output(submission.sliding_window_attention(q, k, v, window_), q, what)
        slips = window_slips(q, k, v, window_) if t_ > 1 else []
        expect_named(got, reference(q, k, v, window_), what, slips)
    expect_cpu_only(submission, [("sliding_window_attention", [q, k, v, window])])


@check("with slopes, the ALiBi bias is added to the scores of each head", points=2,
       zh="给了 slopes 时，ALiBi 偏置按头加到分数上", depends="window")
def test_alibi(submission, rng):
    h, t = 4, randint(rng, 6, 8)
    window = 3 if counts_keys() else 2
    slopes = torch.tensor(paper_slopes(h), dtype=torch.float32) * 4  # penalties large enough to move the weights
    q, k, v = qkv(rng, 2, h, t, 4)
    what = Text("sliding_window_attention(q{shape}, k, v, window={w}, slopes={s})", shape=list(q.shape), w=window,
                s=verbatim(str([round(s, 4) for s in slopes.tolist()])))
    got = expect_output(submission.sliding_window_attention(q, k, v, window, slopes), q, what)
    expect_named(got, reference(q, k, v, window, slopes), what,
                 window_slips(q, k, v, window, slopes) + alibi_slips(q, k, v, window, slopes))
    expect_cpu_only(submission, [("sliding_window_attention", [q, k, v, window, slopes])])


@check("float16 and bfloat16 inputs give a result in their dtype, close to float64's", points=1,
       zh="float16 和 bfloat16 输入得到同一 dtype 的结果，且接近 float64 的结果", depends="alibi")
def test_half(submission, rng):
    for dtype, tol in ((torch.float16, 1e-2), (torch.bfloat16, 5e-2)):
        q, k, v = qkv(rng, 1, 2, 6, 8, dtype=dtype)
        slopes = torch.tensor(paper_slopes(2), dtype=torch.float32)
        what = Text("sliding_window_attention(q{shape} in {dtype}, k, v, window=3, slopes)",
                    "输入为 {dtype} 时的 sliding_window_attention(q{shape}, k, v, window=3, slopes)",
                    shape=list(q.shape), dtype=verbatim(str(dtype).removeprefix("torch.")))
        with explain({"expected scalar type": PROMOTED}, key="half-promoted"):
            value = submission.sliding_window_attention(q, k, v, 3, slopes)
        got = expect_output(value, q, what)
        expect_named(got, reference(q, k, v, 3, slopes), what, [], rtol=tol, atol=tol)


PROMOTED = Text("The float32 ALiBi bias promoted the half-precision scores to float32, which then met the float16 (or "
                "bfloat16) v. Cast the bias to the scores' dtype, alibi_bias(slopes, T).to(scores.dtype).",
                "float32 的 ALiBi 偏置把半精度的分数提升成了 float32，随后又遇到 float16（或 bfloat16）的 v。"
                "请把偏置转换成分数的 dtype：alibi_bias(slopes, T).to(scores.dtype)。")
