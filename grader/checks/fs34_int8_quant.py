"""Hidden checks of fs34: int8 absmax quantization (scales, rounding and clamping, the dequantised matmul).

The learner's four functions are called on tensors the judge drew; the expectations are computed here with torch
on the same draw. Inputs are made where the wrong answers and the right one disagree: each row's largest magnitude
is a negative entry (a max without abs() misses it), a float16 w (a scale left in float16), a scale that is a
power of two and values w / scale at exact halves (round half to even against half away from zero, floor or a
truncating cast) and beyond +-127 (a missing clamp wraps around, a clamp to -128), a row of zeros (0 / 0), size-1
dimensions. A wrong answer is compared with the slips computed here and the matching one is named.

Kata variants: `variant("granularity")`: per_row (a scale [rows, 1]) or per_tensor (a 0-dim scale); the reference
and the naming of the other follow the draw.
"""

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, fail, matches, variant, verbatim

# -- judge side -----------------------------------------------------------------------------------


def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def per_row() -> bool:
    return variant("granularity")["name"] == "per_row"


def amax(w, rows=None, slip=None):
    """The largest magnitude per row (or of the tensor) in float32, or with a slip."""
    rows = per_row() if rows is None else rows
    v = w.float() if slip == "max-not-abs" else w.float().abs()
    if slip == "per-column":
        return v.amax(dim=0, keepdim=True)
    return v.amax(dim=1, keepdim=True) if rows else v.amax()


def scale_ref(w, rows=None, slip=None, levels=127):
    a = amax(w, rows, slip)
    return torch.where(a > 0, a / levels, torch.ones_like(a))


def quantize_ref(u, slip=None):
    """u = w / scale, quantized: round half to even and clamp (or with a slip)."""
    if slip == "truncating-cast":
        r = u.trunc()
    elif slip == "floor-rounding":
        r = u.floor()
    elif slip == "half-away":
        r = u.sign() * (u.abs() + 0.5).floor()
    else:
        r = u.round()
    if slip == "wrapped-around":
        return ((r.to(torch.int64) + 128) % 256 - 128).to(torch.int8)
    return r.clamp(-128 if slip == "clamp-128" else -127, 127).to(torch.int8)


SCALE_SLIPS = (  # (key, why): a slip of the scale and its words
    ("max-not-abs", Text("it matches the largest entry instead of the largest magnitude: take abs() before the max, "
                         "or a large negative entry is missed.", "它与取最大的元素而不是最大的绝对值的结果一致：请先 "
                         "abs() 再取最大，否则会漏掉很大的负数。")),
    ("scale-128", Text("it matches max |w| / 128: the symmetric range is [-127, 127], so the largest magnitude maps "
                       "to 127.", "它与 max |w| / 128 一致：对称范围是 [-127, 127]，所以最大的绝对值映射到 127。")),
    ("scale-255", Text("it matches max |w| / 255: that is the step of an unsigned 8-bit range; here 127 each side of "
                       "zero.", "它与 max |w| / 255 一致：那是无符号 8 位范围的步长；这里是零两侧各 127。")),
)

ROUND_SLIPS = (  # (key, why): a slip of the rounding or the clamp and its words
    ("truncating-cast", Text("it matches w / scale truncated toward zero: a cast to int8 does not round; torch.round first.",
                       "它与把 w / scale 向零截断的结果一致：转换成 int8 不会舍入；请先 torch.round。")),
    ("floor-rounding", Text("it matches floor(w / scale): round to the nearest integer instead.",
                   "它与 floor(w / scale) 一致：应舍入到最近的整数。")),
    ("half-away", Text("it matches halves rounded away from zero (2.5 -> 3): torch.round rounds them to even "
                       "(2.5 -> 2), as the statement asks.", "它与把一半远离零舍入（2.5 -> 3）的结果一致：torch.round "
                       "把一半舍入到偶数（2.5 -> 2），题目要求的就是这样。")),
    ("wrapped-around", Text("it matches values beyond the int8 range wrapped around (200 -> -56): clamp to [-127, 127] before "
                     "the cast.", "它与超出 int8 范围的值回绕（200 -> -56）的结果一致：在转换之前先 clamp 到 "
                     "[-127, 127]。")),
    ("clamp-128", Text("it matches a clamp to [-128, 127]: the symmetric range is [-127, 127], so that q and -q both "
                       "exist.", "它与 clamp 到 [-128, 127] 的结果一致：对称范围是 [-127, 127]，这样 q 和 -q 都能表示。")),
)


def other_granularity() -> Text:
    if per_row():
        return Text("it has the shape of one scale for the whole tensor: here each row of w has its own scale, "
                    "amax(dim=1, keepdim=True).", "它的形状是整个张量一个缩放因子：这里 w 的每一行都有自己的缩放因子，"
                    "amax(dim=1, keepdim=True)。")
    return Text("it has the shape of one scale per row: here the whole tensor has one scale, a 0-dim tensor.",
                "它的形状是每行一个缩放因子：这里整个张量只有一个缩放因子，是一个 0 维 tensor。")


def outliers(rng, r, c, dtype=torch.float32):
    """w [r, c] whose largest magnitude in every row is a negative entry."""
    w = torch.randn(r, c, generator=rng)
    cols = torch.randint(0, c, (r,), generator=rng)
    w[torch.arange(r), cols] = -(w.abs().amax(dim=1) + 1 + torch.rand(r, generator=rng))
    return w.to(dtype)


def expect_scale(submission, w, what):
    want = scale_ref(w)
    got, after = submission.call_with_args("absmax_scale", w)
    if isinstance(after[0], torch.Tensor) and not torch.equal(after[0], w):
        fail("{what} changed w in place (an in-place abs_ on w.float(), which is w itself for a float32 w): work on a "
             "copy, w.abs().", "{what} 原地修改了 w（对 w.float() 做了原地的 abs_，而 float32 的 w.float() 就是 w "
             "本身）：请在副本上计算，w.abs()。", what=what, key="w-modified")
    if isinstance(got, torch.Tensor) and list(got.shape) != list(want.shape):
        other = scale_ref(w, rows=not per_row())
        if list(got.shape) == list(other.shape) and got.numel() != want.numel():
            fail("{what} has shape {got}, not {want}: {why}", "{what} 的形状是 {got}，不是 {want}：{why}", what=what,
                 got=list(got.shape), want=list(want.shape), why=other_granularity(), key="other-granularity")
        if per_row() and list(got.shape) == [w.shape[0]]:
            fail("{what} has shape {got}, not {want}: keep the row dimension (keepdim=True), so that the scale divides "
                 "w row by row.", "{what} 的形状是 {got}，不是 {want}：请保留行这一维（keepdim=True），缩放因子才能逐行"
                 "去除 w。", what=what, got=list(got.shape), want=list(want.shape), key="no-keepdim")
        if per_row() and list(got.shape) == [1, w.shape[1]] and w.shape[0] != 1:
            fail("{what} has shape {got}, not {want}: that is one scale per column (dim=0); each row of w [out, in] "
                 "is an output channel, dim=1.", "{what} 的形状是 {got}，不是 {want}：那是每列一个缩放因子（dim=0）；"
                 "`w [out, in]` 的每一行是一个输出通道，dim=1。", what=what, got=list(got.shape), want=list(want.shape),
                 key="per-column")
    if isinstance(got, torch.Tensor) and got.dtype in (torch.float16, torch.bfloat16) and w.dtype == got.dtype:
        fail("{what} is {dtype}: compute the scale in float32 (w.float() first); a float16 scale loses digits and "
             "cannot hold max |w| / 127 of a small row.", "{what} 是 {dtype}：请在 float32 中计算缩放因子（先 "
             "w.float()）；float16 的缩放因子会丢失精度。", what=what, dtype=verbatim(str(got.dtype)),
             key="scale-float16")
    got = expect_tensor(got, what, shape=list(want.shape), dtype=torch.float32)
    if matches(got, want):
        return want
    for slip, why in SCALE_SLIPS:
        wrong = scale_ref(w, slip=slip, levels={"scale-128": 128, "scale-255": 255}.get(slip, 127))
        if not matches(wrong, want) and matches(got, wrong):
            fail(Text("{what} is not right: {why}", "{what} 不对：{why}", what=what, why=why), key=slip)
    expect_close(got, want, what)
    return want


def expect_ints(got, want, what, u):
    """got equal to want (int8) entry for entry; a known slip of the rounding or the clamp is named."""
    got = expect_tensor(got, what, shape=list(want.shape), dtype=torch.int8)
    if torch.equal(got, want):
        return
    for slip, why in ROUND_SLIPS:
        wrong = quantize_ref(u, slip)
        if not torch.equal(wrong, want) and torch.equal(got, wrong):
            fail(Text("{what} is not right: {why}", "{what} 不对：{why}", what=what, why=why), key=slip)
    bad = (got != want).nonzero()[0].tolist()
    fail("{what}{at} should be {want}, got {got} (w / scale = {u}).", "{what}{at} 应为 {want}，实际为 {got}"
         "（w / scale = {u}）。", what=what, at=bad, want=int(want[tuple(bad)]), got=int(got[tuple(bad)]),
         u=float(u[tuple(bad)]), key="quantized-values")


def power_of_two_scale(rng, r):
    """A scale of powers of two (exact divisions), shaped as the draw asks."""
    exps = torch.randint(-3, 1, (r, 1) if per_row() else (), generator=rng).float()
    return 2.0 ** exps


# -- the checks -------------------------------------------------------------------------------------

@check("absmax_scale maps the largest magnitude to 127, in float32", points=2,
       zh="absmax_scale 把最大的绝对值映射到 127，用 float32")
def test_scale(submission, rng):
    r, c = randint(rng, 3, 6), randint(rng, 4, 8)
    expect_scale(submission, outliers(rng, r, c), Text("absmax_scale(w) for w {shape}", "w 为 {shape} 时的 "
                                                       "absmax_scale(w)", shape=[r, c]))
    expect_scale(submission, outliers(rng, r, c, torch.float16), Text(
        "absmax_scale(w) for w {shape} in float16", "w 为 float16 的 {shape} 时的 absmax_scale(w)", shape=[r, c]))
    expect_scale(submission, outliers(rng, r, c) / 20, Text(  # every magnitude below 1
        "absmax_scale(w) for w {shape} with |w| < 1", "|w| < 1 的 {shape} 的 w 的 absmax_scale(w)", shape=[r, c]))


@check("quantize rounds halves to even and clamps to [-127, 127] before the cast to int8", points=3,
       zh="quantize 把一半舍入到偶数，并在转换成 int8 之前 clamp 到 [-127, 127]", depends="scale")
def test_quantize(submission, rng):
    r, c = randint(rng, 3, 5), 12
    scale = power_of_two_scale(rng, r)
    halves = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5, -3.5]) + torch.randint(-3, 4, (r, 1), generator=rng).float()
    beyond = torch.tensor([200.0, -200.0, 128.6, -131.0]).expand(r, -1)
    ordinary = torch.randn(r, 2, generator=rng) * 50
    u = torch.cat([halves, beyond, ordinary], dim=1)[:, torch.randperm(c, generator=rng)]
    w = u * scale
    expect_ints(submission.quantize(w, scale), quantize_ref(u), Text(
        "quantize(w, scale) with w / scale at halves and beyond 127", "w / scale 在一半处和超出 127 时的 "
        "quantize(w, scale)"), u)
    w = outliers(rng, r, c)
    scale = scale_ref(w)
    expect_ints(submission.quantize(w, scale), quantize_ref(w / scale), Text(
        "quantize(w, absmax_scale(w)) for w {shape}", "w 为 {shape} 时的 quantize(w, absmax_scale(w))", shape=[r, c]),
        w / scale)


@check("dequantize returns q * scale in float32", points=1, zh="dequantize 返回 float32 的 q * scale", depends="scale")
def test_dequantize(submission, rng):
    r, c = randint(rng, 3, 6), randint(rng, 4, 8)
    q = torch.randint(-127, 128, (r, c), generator=rng, dtype=torch.int8)
    scale = scale_ref(torch.randn(r, c, generator=rng))
    what = Text("dequantize(q, scale) for q {shape} (int8)", "q 为 int8 的 {shape} 时的 dequantize(q, scale)",
                shape=[r, c])
    got = expect_tensor(submission.dequantize(q, scale), what, shape=[r, c], dtype=torch.float32)
    want = q.float() * scale
    if not matches(want, q.float() / scale) and matches(got, q.float() / scale):
        fail("{what} matches q / scale: q counts steps of size scale, so w is about q * scale.",
             "{what} 与 q / scale 一致：q 数的是大小为 scale 的步数，所以 w 约等于 q * scale。", what=what,
             key="divided-by-scale")
    expect_close(got, want, what)


@check("int8_linear is the linear layer of the dequantised weight, with or without bias", points=2,
       zh="int8_linear 是用反量化后的权重做的线性层，带或不带 bias", depends="dequantize")
def test_linear(submission, rng):
    out, inp = randint(rng, 3, 5), randint(rng, 6, 8)
    w = outliers(rng, out, inp)
    scale = scale_ref(w)
    q = quantize_ref(w / scale)
    x = torch.randn(2, randint(rng, 2, 4), inp, generator=rng)
    bias = torch.randn(out, generator=rng)
    for b in (bias, None):
        what = Text("int8_linear(x{shape}, q, scale{bias})", shape=list(x.shape), bias=", bias" if b is not None else "")
        got = expect_tensor(submission.int8_linear(x, q, scale, b), what, shape=[*x.shape[:-1], out], floating=True)
        want = F.linear(x, q.float() * scale, b)
        if b is not None and not matches(got, want, rtol=1e-5, atol=1e-5) and matches(
                got, F.linear(x, q.float() * scale), rtol=1e-5, atol=1e-5):
            fail("{what} leaves the bias out: add it to x @ (q * scale)^T.", "{what} 漏掉了 bias：请把它加到 "
                 "x @ (q * scale)^T 上。", what=what, key="bias-ignored")
        if not matches(got, want, rtol=1e-5, atol=1e-5) and matches(got, F.linear(x, q.float(), b), rtol=1e-5,
                                                                     atol=1e-5):
            fail("{what} matches the int8 values used as the weight: multiply by the scale (dequantize) first.",
                 "{what} 与直接把 int8 值当作权重的结果一致：请先乘以缩放因子（反量化）。", what=what, key="no-dequantize")
        expect_close(got, want, what, rtol=1e-5, atol=1e-5)


@check("a row (a tensor) of zeros, size-1 dimensions and a float16 w work too", points=2,
       zh="全零的行（张量）、大小为 1 的维度和 float16 的 w 也正确", depends="quantize")
def test_edges(submission, rng):
    r, c = randint(rng, 3, 5), randint(rng, 4, 6)
    w = torch.randn(r, c, generator=rng) if per_row() else torch.zeros(r, c)
    w[randint(rng, 0, r - 1)] = 0
    what = Text("absmax_scale(w) with a {zero} of zeros", "有全零{zero_zh}时的 absmax_scale(w)",
                zero=variant("granularity")["zero"], zero_zh=variant("granularity")["zero_zh"])
    got = submission.absmax_scale(w)
    if isinstance(got, torch.Tensor) and not torch.isfinite(got).all() or isinstance(got, torch.Tensor) and (
            got == 0).any():
        fail("{what} gives {got}: a scale of 0 makes w / scale = 0 / 0 = NaN. The statement gives such a {zero} the "
             "scale 1.0.", "{what} 给出了 {got}：缩放因子为 0 会让 w / scale = 0 / 0 = NaN。题目规定这样的{zero_zh}"
             "缩放因子为 1.0。", what=what, got=got.flatten().tolist(), zero=variant("granularity")["zero"],
             zero_zh=variant("granularity")["zero_zh"], key="zero-scale")
    expect_scale(submission, w, what)
    expect_ints(submission.quantize(w, scale_ref(w)), quantize_ref(w / scale_ref(w)), Text(
        "quantize(w, scale) with a {zero} of zeros", "有全零{zero_zh}时的 quantize(w, scale)",
        zero=variant("granularity")["zero"], zero_zh=variant("granularity")["zero_zh"]), w / scale_ref(w))
    for shape in ((1, randint(rng, 3, 6)), (randint(rng, 3, 6), 1)):
        w = outliers(rng, *shape)
        expect_scale(submission, w, Text("absmax_scale(w) for w {shape}", "w 为 {shape} 时的 absmax_scale(w)",
                                         shape=list(shape)))
    w = outliers(rng, r, c, torch.float16)
    scale = scale_ref(w)
    expect_ints(submission.quantize(w, scale), quantize_ref(w.float() / scale), Text(
        "quantize(w, scale) for w in float16 and a float32 scale", "w 为 float16、scale 为 float32 时的 "
        "quantize(w, scale)"), w.float() / scale)
    # A 0-dim float32 scale does not promote a float16 w: the division must be made in float32. The entries are
    # those of a float16 grid whose quotient rounds otherwise in float16.
    grid, scale = torch.arange(40, 60, 1 / 32).half(), torch.tensor(0.7)
    differ = grid[(grid / scale).round().float() != (grid.float() / scale).round()]
    w = differ[torch.randperm(len(differ), generator=rng)[:8]].reshape(2, 4)
    expect_ints(submission.quantize(w, scale), quantize_ref(w.float() / scale), Text(
        "quantize(w, scale) for w in float16 and a 0-dim float32 scale", "w 为 float16、scale 为 0 维 float32 时的 "
        "quantize(w, scale)"), w.float() / scale)
