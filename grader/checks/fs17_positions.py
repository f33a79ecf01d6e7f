"""Hidden checks of fs17: sinusoidal position encodings and rotary position embeddings (RoPE).

PyTorch has neither built in, so the expectations are computed here in float64 with other formulas than a
learner's: the sinusoids from exp(-2i ln(base) / d), RoPE as a product of complex numbers (the pairs viewed as
complex numbers, times polar(1, angle)). A wrong answer is compared with each known slip computed the same way:
sin and cos in two halves instead of interleaved, sin and cos swapped, the exponent i/d instead of 2i/d,
positions counted from 1; for RoPE the other pairing of the features (interleaved vs halves), the rotation
turned the other way, the frequencies with i/D, cos/sin tables laid out for the other pairing, positions
ignored (arange(T) instead of the positions given), and angles computed in bfloat16/float16. Sizes: d >= 6 (so
the exponent slips differ), positions up to 2047 (sinusoids) and 4000 (RoPE in low precision).

Kata variants: `variant("pairing")`: RoPE pairs the features (2i, 2i + 1) or (i, i + D/2); the reference and
the pairing diagnosis follow the draw.
"""

import math

import torch

from grader.checking import Text, check, expect_close, expect_tensor, fail, matches, variant, verbatim
from grader.devices import expect_cpu_only


def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def halves() -> bool:
    return variant("pairing")["name"] == "halves"


# -- the references and the known slips, float64 -------------------------------------------------------

def sinusoids(n, d, base=10000.0, layout="interleaved", exponent=2, first=0, swap=False):
    """The sinusoidal table [n, d] in float64, with a slip at a time."""
    pos = torch.arange(first, first + n, dtype=torch.float64)[:, None]
    i = torch.arange(d // 2, dtype=torch.float64)
    angles = pos * torch.exp(-exponent * i * math.log(base) / d)
    s, c = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    if layout == "halves":
        return torch.cat([s, c], dim=-1)
    return torch.stack([s, c], dim=-1).reshape(n, d)


def rotary(x, positions, base=10000.0, pairing=None, direction=1, exponent=2, tables=None, low=None):
    """RoPE in float64 as complex products, with a slip at a time: the other pairing, the other direction, the
    frequencies' exponent, cos/sin tables laid out for the other pairing (`tables`), angles in a low dtype."""
    pairing = pairing or ("halves" if halves() else "interleaved")
    d = x.shape[-1]
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = torch.exp(-exponent * i * math.log(base) / d)
    if low is not None:  # the learner's arange and positions in x's dtype
        angles = (positions.to(low)[:, None] * (base ** (-torch.arange(0, d, 2, dtype=low) / d))).double()
    else:
        angles = positions.double()[:, None] * theta
    xd = x.double()
    if tables is not None:  # feature j rotated with the angle the other layout puts there
        per_feature = angles.repeat_interleave(2, dim=-1) if tables == "interleaved" else torch.cat([angles, angles], -1)
        cos, sin = per_feature.cos(), per_feature.sin()
        if pairing == "halves":
            rotated = torch.cat([-xd[..., d // 2:], xd[..., : d // 2]], dim=-1)
        else:
            rotated = torch.stack([-xd[..., 1::2], xd[..., 0::2]], dim=-1).flatten(-2)
        return xd * cos + rotated * sin
    turn = torch.polar(torch.ones_like(angles), direction * angles)
    if pairing == "halves":
        z = torch.complex(xd[..., : d // 2], xd[..., d // 2:]) * turn
        return torch.cat([z.real, z.imag], dim=-1)
    z = torch.view_as_complex(xd.reshape(*xd.shape[:-1], d // 2, 2).contiguous()) * turn
    return torch.view_as_real(z).reshape(xd.shape)


def first_wrong(got, want, rtol, atol) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_named(got, want, what, slips, rtol, atol):
    """`got` is `want`; else the first known slip it matches is named, with the first wrong entry."""
    if matches(got, want, rtol=rtol, atol=atol):
        return
    for wrong, message, key in slips():
        if not matches(wrong, want, rtol=rtol, atol=atol) and matches(got, wrong, rtol=rtol, atol=atol):
            fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，实际为 "
                      "{got:.4g}：{why}", what=what, why=message, **first_wrong(got, want, rtol, atol)), key=key)
    expect_close(got, want, what, rtol=rtol, atol=atol)


# -- sinusoidal ---------------------------------------------------------------------------------------

@check("sinusoidal_positions returns a float32 [n_positions, d_model]", points=1,
       zh="sinusoidal_positions 返回 float32 的 [n_positions, d_model]")
def test_pe_shape(submission, rng):
    for n, d in ((randint(rng, 3, 9), 2 * randint(rng, 2, 5)), (1, 4), (0, 6)):
        what = f"sinusoidal_positions({n}, {d})"
        expect_tensor(submission.sinusoidal_positions(n, d), what, shape=[n, d], dtype=torch.float32)
    expect_cpu_only(submission, [("sinusoidal_positions", [n, d])])  # a GPU at hand changes nothing


def pe_slips(n, d, base):
    return lambda: [
        (sinusoids(n, d, base, layout="halves"), Text(
            "it matches sin in the first half of the features and cos in the second: sin goes to the even features "
            "(2i) and cos to the odd ones (2i + 1), side by side.",
            "它与前一半特征放 sin、后一半放 cos 的结果一致：sin 应放在偶数位置的特征（2i），cos 放在奇数位置（2i + 1），"
            "两两相邻。"), "pe-halves"),
        (sinusoids(n, d, base, swap=True), Text(
            "it matches cos at the even features and sin at the odd ones: PE[pos, 2i] is the sine.",
            "它与偶数位置放 cos、奇数位置放 sin 的结果一致：PE[pos, 2i] 是正弦。"), "pe-sin-cos-swapped"),
        (sinusoids(n, d, base, exponent=1), Text(
            "it matches the exponent i / d_model instead of 2i / d_model: the frequency of pair i is "
            "base ** (-2i / d_model), so the exponents run over torch.arange(0, d_model, 2) / d_model.",
            "它与指数用 i / d_model 而不是 2i / d_model 的结果一致：第 i 对的频率是 base ** (-2i / d_model)，"
            "所以指数取 torch.arange(0, d_model, 2) / d_model。"), "pe-exponent"),
        (sinusoids(n, d, base, first=1), Text(
            "it matches positions counted from 1: the first position is 0 (its row is 0, 1, 0, 1...).",
            "它与位置从 1 开始数的结果一致：第一个位置是 0（它这一行是 0, 1, 0, 1……）。"), "pe-offset"),
    ]


@check("sinusoidal_positions matches sin/cos(pos / base ** (2i / d_model))", points=2,
       zh="sinusoidal_positions 与 sin/cos(pos / base ** (2i / d_model)) 一致", depends="pe_shape")
def test_pe_values(submission, rng):
    for n, d, base in ((randint(rng, 1500, 2047), 2 * randint(rng, 3, 8), 10000.0), (randint(rng, 5, 9), 6, 100.0)):
        what = f"sinusoidal_positions({n}, {d}" + ("" if base == 10000.0 else f", base={base:g}") + ")"
        got = expect_tensor(submission.sinusoidal_positions(n, d, base) if base != 10000.0
                            else submission.sinusoidal_positions(n, d), what, shape=[n, d], dtype=torch.float32)
        expect_named(got, sinusoids(n, d, base), what, pe_slips(n, d, base), rtol=1e-4, atol=1e-3)


# -- rope ---------------------------------------------------------------------------------------------

def other_pairing() -> Text:
    return Text("features (2i, 2i + 1), side by side", "相邻的特征 (2i, 2i + 1)") if halves() else Text(
        "features (i, i + D/2), one in each half (rotate_half)", "前后两半中的特征 (i, i + D/2)（rotate_half）")


def this_pairing() -> Text:
    return Text("features (i, i + D/2), one in each half", "前后两半中的特征 (i, i + D/2)") if halves() else Text(
        "features (2i, 2i + 1), side by side", "相邻的特征 (2i, 2i + 1)")


def rope_slips(x, positions, base=10000.0):
    return lambda: [
        (rotary(x, positions, base, pairing="interleaved" if halves() else "halves"), Text(
            "it matches pair i taken as the {other}: here pair i is the {this}. A checkpoint trained with one pairing "
            "gives other values with the other.",
            "它与把第 i 对取成{other}的结果一致：这里第 i 对是{this}。用一种配对训练的权重，换成另一种配对就会得到别的值。",
            other=other_pairing(), this=this_pairing()), "rope-pairing"),
        (rotary(x, positions, base, direction=-1), Text(
            "it matches each pair rotated the other way: (a, b) -> (a cos + b sin, -a sin + b cos). The rotation by "
            "+angle is (a cos - b sin, a sin + b cos).",
            "它与每一对朝反方向旋转的结果一致：`(a, b) -> (a cos + b sin, -a sin + b cos)`。按 +angle 旋转应是 "
            "`(a cos - b sin, a sin + b cos)`。"), "rope-direction"),
        (rotary(x, positions, base, exponent=1), Text(
            "it matches theta_i = base ** (-i / D): the exponent is -2i / D, i = 0..D/2-1 (torch.arange(0, D, 2) / D).",
            "它与 theta_i = base ** (-i / D) 的结果一致：指数应为 -2i / D，i = 0..D/2-1（torch.arange(0, D, 2) / D）。"),
         "rope-frequencies"),
        (rotary(x, positions, base, tables="halves" if not halves() else "interleaved"), Text(
            "it matches cos and sin tables laid out for the other pairing: feature j must be rotated with the angle of "
            "its own pair ({layout}).",
            "它与按另一种配对排列的 cos、sin 表的结果一致：特征 j 必须用它自己那一对的角度旋转（{layout}）。",
            layout=verbatim("angles.repeat_interleave(2, -1)" if not halves() else "torch.cat([angles, angles], -1)")),
         "rope-tables"),
        (rotary(x, torch.arange(x.shape[-2]), base), Text(
            "it matches the positions 0..T-1 instead of the positions given ({positions}): use the `positions` "
            "argument (after a KV cache, the new token is at position T_past, not 0).",
            "它与用位置 0..T-1 而不是给定位置（{positions}）的结果一致：请使用参数 `positions`（有 KV 缓存时，新词元位于 "
            "T_past 而不是 0）。", positions=verbatim(str(positions.tolist()[:6]).rstrip("]") + (
                ", ...]" if len(positions) > 6 else "]"))), "rope-positions-ignored"),
    ]


def rope_call(submission, x, positions, base=None):
    what = Text("rope(x{shape} {dtype}, positions={positions}{base})", shape=list(x.shape),
                dtype=verbatim(str(x.dtype).removeprefix("torch.")), positions=verbatim(
                    f"[{positions[0]}..{positions[-1]}]" if len(positions) > 1 else str(positions.tolist())),
                base="" if base is None else f", base={base:g}")
    value = submission.rope(x, positions) if base is None else submission.rope(x, positions, base)
    return what, value


@check("rope returns x's shape and dtype", points=1, zh="rope 返回与 x 相同的形状和 dtype")
def test_rope_shape(submission, rng):
    t, d = randint(rng, 2, 5), 2 * randint(rng, 2, 4)
    for shape in ((2, 3, t, d), (t, d), (2, t, d), (1, 1, 1, d)):
        x = torch.randn(*shape, generator=rng)
        what, value = rope_call(submission, x, torch.arange(shape[-2]))
        expect_tensor(value, what, shape=list(shape), dtype=torch.float32)
    expect_cpu_only(submission, [("rope", [torch.randn(2, t, d, generator=rng), torch.arange(t)])])


@check("rope rotates each feature pair by position * theta_i", points=3,
       zh="rope 把每一对特征旋转 position * theta_i", depends="rope_shape")
def test_rope_values(submission, rng):
    t, d = randint(rng, 3, 6), 2 * randint(rng, 3, 5)
    cases = [(torch.randn(2, 2, t, d, generator=rng), torch.arange(t), None),
             (torch.randn(t, d, generator=rng), torch.arange(t), 500.0),
             (torch.randn(1, 1, 1, d, generator=rng), torch.tensor([randint(rng, 1, 50)]), None)]
    for x, positions, base in cases:
        what, value = rope_call(submission, x, positions, base)
        got = expect_tensor(value, what, shape=list(x.shape), dtype=torch.float32)
        expect_named(got, rotary(x, positions, base or 10000.0), what, rope_slips(x, positions, base or 10000.0),
                     rtol=1e-4, atol=1e-5)


@check("rope uses the positions it is given (not 0..T-1)", points=2, zh="rope 使用给定的位置（而不是 0..T-1）",
       depends="rope_values")
def test_rope_offset(submission, rng):
    d = 2 * randint(rng, 3, 5)
    start = randint(rng, 5, 60)
    t = randint(rng, 2, 4)
    for positions in (torch.arange(start, start + t), torch.tensor([start + t])):  # a prefix, then one decoding step
        x = torch.randn(2, 2, len(positions), d, generator=rng)
        what, value = rope_call(submission, x, positions)
        got = expect_tensor(value, what, shape=list(x.shape), dtype=torch.float32)
        expect_named(got, rotary(x, positions), what, rope_slips(x, positions), rtol=1e-4, atol=1e-5)


@check("rope keeps bfloat16 and float16, with angles computed in float32 up to position 4000", points=1,
       zh="rope 保持 bfloat16 和 float16，并在 float32 中计算到 4000 位置的角度", depends="rope_values")
def test_rope_half(submission, rng):
    d = 2 * randint(rng, 4, 8)
    positions = torch.sort(torch.randperm(4000, generator=rng)[:6]).values
    positions[-1] = 3000 + randint(rng, 0, 999)
    for dtype, tol in ((torch.bfloat16, 4e-2), (torch.float16, 8e-3)):
        x = torch.randn(2, len(positions), d, generator=rng).to(dtype)
        what, value = rope_call(submission, x, positions)
        if isinstance(value, torch.Tensor) and value.dtype != dtype:
            fail("{what} returned {got}: the result keeps x's dtype; compute in float32 inside and cast back with "
                 ".to(x.dtype).", "{what} 返回了 {got}：结果应保持 x 的 dtype；在函数内部用 float32 计算，再用 "
                 ".to(x.dtype) 转换回去。", what=what, got=value.dtype, key="rope-dtype")
        got = expect_tensor(value, what, shape=list(x.shape), dtype=dtype)
        want = rotary(x, positions)
        if matches(got, want, rtol=tol, atol=tol):
            continue
        low = rotary(x, positions, low=dtype)
        if matches(got, low, rtol=tol, atol=tol) \
                or (got.double() - low).abs().max() < (got.double() - want).abs().max() / 4:
            fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: the angles were computed in {dtype}. With 8 "
                      "bits of mantissa (bfloat16) a position of {p} is not even representable, and an angle of "
                      "thousands of radians loses all its precision. Build the positions, theta_i, the angles, cos and "
                      "sin in float32, and cast only the result to x's dtype.",
                      "{what}{at} 应为 {want:.4g}，实际为 {got:.4g}：角度是在 {dtype} 中计算的。bfloat16 只有 8 位尾数，"
                      "连位置 {p} 都表示不了，数千弧度的角度更是完全失去了精度。请在 float32 中计算位置、theta_i、角度、"
                      "cos 和 sin，只把结果转换成 x 的 dtype。", what=what, dtype=verbatim(str(dtype).removeprefix(
                          "torch.")), p=int(positions[-1]), **first_wrong(got, want, tol, tol)),
                 key="rope-low-precision-angles")
        expect_named(got, want, what, rope_slips(x, positions), rtol=tol, atol=tol)
