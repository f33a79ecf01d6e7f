"""Hidden checks of fs14: scaled dot-product attention from scratch, with a causal mask and a key mask.

The expectation is always F.scaled_dot_product_attention computed here in float64 (its boolean attn_mask
marks the pairs that take part; in torch 2.13 a query with no key left gets zeros, the statement's rule).
Inputs are drawn so that the classic slips give other values than the right formula: d_head >= 4 > H >= 2
and Tk not in (d_head, H * d_head) (so 1/sqrt(d_head), 1/d_head, 1/sqrt(H * d_head), 1/sqrt(Tk) and no scale all
differ), Tq != Tk (a softmax
over the queries still runs), v's last size != d_head (k and v swapped cannot run), B == H once (a key
mask broadcast as [B, 1, Tk] lines up with the heads and runs), Tq == Tk once (a mask put on the queries
runs). A wrong answer is compared with each known wrong formula, computed here, and named only when it
matches one that differs from the right answer.

A probe records the torch functions `attention` calls (a TorchFunctionMode): a call to
F.scaled_dot_product_attention or nn.MultiheadAttention fails every check, as ex05 treats autograd.

Kata variants: `variant("padding")` is what True means in the key mask: padding to ignore
(`key_padding_mask`, nn.MultiheadAttention's) or a real key to keep (`attention_mask`, Hugging Face's).
The argument's name, the masks passed and the inverted-convention diagnosis follow the draw.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import (LearnerError, Text, check, describe, expect_close, expect_tensor, fail, matches, probe,
                             recording_calls, variant, verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.devices import expect_cpu_only


# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def torch_calls(module, cases):
    """The names of the torch functions `attention` calls on each case (q, k, v, kwargs); a case whose call
    raises is skipped (the checks report the error itself)."""
    names = set()

    for q, k, v, kwargs in cases:
        try:
            with recording_calls(names):
                module.attention(q, k, v, **kwargs)
        except Exception:  # the learner's error is the other checks' lesson
            pass
    return sorted(names)


# -- judge side: draws, the reference and the known wrong formulas ----------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def keeps_true() -> bool:
    """Whether True in this draw's key mask marks a key to attend (attention_mask), not padding."""
    return variant("padding")["name"] == "keep"


def mask_arg() -> str:
    return variant("padding")["arg"]


def learner_mask(padded: torch.Tensor) -> torch.Tensor:
    """The key mask as this draw's convention writes it, from `padded` (True: a padding key)."""
    return ~padded if keeps_true() else padded.clone()


def qkv(rng, b, h, tq, tk, d, dv, dtype=torch.float64, scale=1.0):
    q = scale * torch.randn(b, h, tq, d, generator=rng, dtype=torch.float64)
    k = scale * torch.randn(b, h, tk, d, generator=rng, dtype=torch.float64)
    v = torch.randn(b, h, tk, dv, generator=rng, dtype=torch.float64)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def allowed_pairs(b, tq, tk, causal=False, padded=None):
    """[B, 1, Tq, Tk] bool: the (query, key) pairs that take part."""
    allowed = torch.ones(tq, tk, dtype=torch.bool)
    if causal:
        allowed = allowed.tril()
    allowed = allowed.expand(b, 1, tq, tk)
    if padded is not None:
        allowed = allowed & ~padded[:, None, None, :]
    return allowed


def reference(q, k, v, causal=False, padded=None):
    """PyTorch's own attention, in float64."""
    q, k, v = q.double(), k.double(), v.double()
    mask = allowed_pairs(q.shape[0], q.shape[2], k.shape[2], causal, padded)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def by_formula(q, k, v, allowed=None, scale=None, dim=-1, fill=-math.inf, empty_nan=False):
    """Attention written out in float64 with one slip at a time: another scale, a softmax over another dim,
    another fill value; a query with no key left gets zeros (NaN rows come from `fill` only)."""
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, fill)
    weights = torch.softmax(scores, dim=dim)
    if allowed is not None and fill == -math.inf and not empty_nan:  # empty_nan: softmax's 0/0 left in such rows
        weights = weights.masked_fill(~allowed.any(-1, keepdim=True), 0.0)
    return weights @ v


def first_wrong(got, want, rtol=1e-4, atol=1e-5) -> dict:
    """The first entry where `got` and `want` differ: its index and both values (for a message)."""
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def call(submission, q, k, v, causal=False, mask=None, what=None):
    """The learner's attention on these inputs, with the classic errors of the masks explained: only when the same
    call without the masks runs (an error the scores raise anyway is not the mask's)."""
    kwargs = {"causal": causal} if causal else {}
    if mask is not None:
        kwargs[mask_arg()] = mask
    try:
        return submission.attention(q, k, v, **kwargs)
    except LearnerError as exc:
        cause = next(((text, key) for needle, (text, key) in MASK_ERRORS.items() if needle in exc.message), None)
        if kwargs and cause and runs_unmasked(submission, q, k, v):
            fail("{cause} ({error})", "{cause}（{error}）", cause=cause[0], error=exc.text, key=cause[1])
        raise


def runs_unmasked(submission, q, k, v) -> bool:
    """Whether `attention(q, k, v)` with no mask at all returns (the detector of a mask's own error)."""
    try:
        submission.attention(q, k, v)
    except LearnerError:
        return False
    return True


FILL_OVERFLOW = Text("A finite fill such as -1e9 does not fit in float16 (its largest magnitude is 65504): fill with "
                     "float('-inf'), which every float dtype has.",
                     "像 -1e9 这样的有限填充值装不进 float16（它的最大绝对值是 65504）：请用每种浮点 dtype 都有的 "
                     "float('-inf') 来填充。")
BROADCAST = Text("The mask does not broadcast to the scores [B, H, Tq, Tk]: the key mask [B, Tk] becomes "
                 "[B, 1, 1, Tk] (mask[:, None, None, :]), the causal mask [Tq, Tk].",
                 "掩码无法广播到分数的形状 [B, H, Tq, Tk]：键掩码 [B, Tk] 要变成 [B, 1, 1, Tk]"
                 "（mask[:, None, None, :]），因果掩码是 [Tq, Tk]。")

MASK_ERRORS = {"without overflow": (FILL_OVERFLOW, "fill-overflow"), "must match the size": (BROADCAST, "mask-shape")}


def expect_output(value, q, v, what) -> torch.Tensor:
    """A tensor [B, H, Tq, Dv] in q's dtype, with the shape slips of attention named."""
    b, h, tq, _ = q.shape
    want = [b, h, tq, v.shape[-1]]
    value = expect_tensor(value, what, floating=True)
    if list(value.shape) == [b, h, v.shape[2], v.shape[-1]] and tq != v.shape[2]:
        fail("{what} should have shape {want}, got {got}: one row per key instead of one per query. The weights are "
             "[B, H, Tq, Tk] (queries first) and weights @ v gives [B, H, Tq, Dv].",
             "{what} 的形状应为 {want}，实际为 {got}：每个键一行，而不是每个查询一行。权重的形状是 [B, H, Tq, Tk]"
             "（查询在前），weights @ v 得到 [B, H, Tq, Dv]。", what=what, want=want, got=list(value.shape),
             key="keys-for-queries")
    value = expect_tensor(value, what, shape=want)
    if value.dtype != q.dtype:
        fail("{what} should keep q's dtype, {want}, got {got}: cast the result back (or compute in q's dtype).",
             "{what} 应保持 q 的 dtype {want}，实际为 {got}：请把结果转换回去（或直接用 q 的 dtype 计算）。",
             what=what, want=q.dtype, got=value.dtype, key="wrong-dtype")
    return value


def expect_attention(got, want, what, wrongs, rtol=1e-4, atol=1e-5):
    """`got` is `want`; else, the first known wrong formula it matches is named, with the first wrong entry."""
    if matches(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return
    for wrong, message, key in wrongs:
        if wrong is not None and not matches(wrong, want, rtol=rtol, atol=atol, equal_nan=True) \
                and matches(got, wrong, rtol=rtol, atol=atol, equal_nan=True):
            fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，"
                      "实际为 {got:.4g}：{why}", what=what, why=message, **first_wrong(got, want, rtol, atol)),
                 key=key)
    if not torch.isfinite(got.double()).all() and torch.isfinite(want).all():
        fail("{what} contains NaN or inf where PyTorch's attention is finite (first at {at}). A softmax over a row "
             "that is all -inf is 0/0; an exp without the max subtracted overflows.",
             "{what} 含有 NaN 或 inf，而 PyTorch 的 attention 是有限的（第一个在 {at}）。全为 -inf 的一行做 softmax "
             "是 0/0；没有减去最大值的 exp 会溢出。", what=what,
             at=[int(i) for i in (~torch.isfinite(got.double())).nonzero()[0]], key="nan")
    expect_close(got, want, what, rtol=rtol, atol=atol)


def by_hand_only(submission, rng) -> None:
    """Values PyTorch's attention computed are not earned here: fail when `attention` called it."""
    used = builtin_calls(submission, rng)
    if used:
        fail("attention calls PyTorch's own {name}: its values are PyTorch's, not yours. Write the scores, the masks and "
             "the softmax with tensor operations.",
             "attention 调用了 PyTorch 自带的 {name}：这些值是 PyTorch 算的，不是你写的。请用张量运算自己写出分数、掩码和 "
             "softmax。", name=verbatim(", ".join(f"`{n}`" for n in used)), key="builtin-attention")


def builtin_calls(submission, rng) -> list[str]:
    """The forbidden functions `attention` called, on a plain, a causal and a masked call: probed once."""
    def run():
        b, h, t = 2, 2, 3
        q, k, v = qkv(rng, b, h, t, t, 4, 4, dtype=torch.float32)
        padded = torch.tensor([[False, False, True], [False, True, True]])
        cases = [(q, k, v, {}), (q, k, v, {"causal": True}), (q, k, v, {mask_arg(): learner_mask(padded)})]
        names = submission.probe(torch_calls, cases, what="`attention`")
        return forbidden_calls("scaled_dot_product_attention", names)
    return submission.once("builtins", run)


# -- the checks -------------------------------------------------------------------------------------

@check("attention returns [B, H, Tq, Dv] in q's dtype", points=1, zh="attention 返回 q 的 dtype 的 [B, H, Tq, Dv]")
def test_shape(submission, rng):
    by_hand_only(submission, rng)
    for b, h, tq, tk, d, dv in ((2, 3, 4, 6, 5, 3), (1, 1, 1, 1, 2, 3), (2, 2, 0, 3, 4, 2)):
        q, k, v = qkv(rng, b, h, tq, tk, d, dv, dtype=torch.float32)
        what = f"attention(q{list(q.shape)}, k{list(k.shape)}, v{list(v.shape)})"
        expect_output(call(submission, q, k, v), q, v, what)


def scale_slips(q, k, v) -> list:
    """The wrong formulas of the scores without masks: the scale, and the softmax's dimension."""
    d, h = q.shape[-1], q.shape[1]
    return [
        (by_formula(q, k, v, scale=1.0), Text(
            "it matches attention without the 1/sqrt(d_head) scale. Divide the scores by sqrt(d_head), d_head = "
            "q.size(-1) = {d}, so their spread does not grow with d_head and saturate the softmax.",
            "它与没有 1/sqrt(d_head) 缩放的 attention 一致。请把分数除以 sqrt(d_head)，d_head = q.size(-1) = {d}，"
            "这样分数的离散程度不会随 d_head 增大而让 softmax 饱和。", d=d), "no-scale"),
        (by_formula(q, k, v, scale=1 / d), Text(
            "it matches scores divided by d_head = {d}, not by sqrt(d_head) = {r:.4g}.",
            "它与把分数除以 d_head = {d} 的结果一致，而不是除以 sqrt(d_head) = {r:.4g}。", d=d, r=math.sqrt(d)),
         "scale-by-d"),
        (by_formula(q, k, v, scale=1 / math.sqrt(h * d)), Text(
            "it matches scores divided by sqrt(H * d_head) = sqrt(d_model) = {r:.4g}: the scale uses one head's size, "
            "d_head = q.size(-1) = {d}.",
            "它与把分数除以 sqrt(H * d_head) = sqrt(d_model) = {r:.4g} 的结果一致：缩放用的是单个头的大小 "
            "d_head = q.size(-1) = {d}。", r=math.sqrt(h * d), d=d), "scale-by-d-model"),
        (by_formula(q, k, v, scale=1 / math.sqrt(k.shape[2])), Text(
            "it matches scores divided by sqrt(Tk), the number of keys: the scale is sqrt(d_head), the size of each "
            "query and key vector (q.size(-1)).",
            "它与把分数除以 sqrt(Tk)（键的个数）的结果一致：缩放应为 sqrt(d_head)，即每个查询和键向量的长度"
            "（q.size(-1)）。"), "scale-by-length"),
        (by_formula(q, k, v, dim=-2), Text(
            "it matches a softmax over the queries (dim=-2): each query's weights over the keys must sum to 1, so the "
            "softmax runs over the last dimension of the [B, H, Tq, Tk] scores.",
            "它与沿查询维度（dim=-2）做 softmax 的结果一致：每个查询对所有键的权重之和应为 1，所以 softmax 要沿 "
            "[B, H, Tq, Tk] 分数的最后一维做。"), "softmax-over-queries"),
    ]


@check("attention matches PyTorch's scaled_dot_product_attention", points=2,
       zh="attention 与 PyTorch 的 scaled_dot_product_attention 一致")
def test_values(submission, rng):
    by_hand_only(submission, rng)
    h, tq = randint(rng, 2, 3), randint(rng, 2, 5)
    tk = tq + randint(rng, 1, 3)
    # d_head >= 4 > H, and Tk not d_head nor H * d_head: each wrong scale differs from the right one and the others
    d = [n for n in (4, 5, 6, 7) if n != tk and n * h != tk][randint(rng, 0, 1)]
    cases = [(randint(rng, 1, 2), h, tq, tk, d, randint(rng, 2, 5)),
             (1, 1, 1, 1, 1, 2), (2, 2, 3, 1, 4, 3)]  # one key only (no query at all: the shape check's edge)
    for b, h, tq, tk, d, dv in cases:
        q, k, v = qkv(rng, b, h, tq, tk, d, dv)
        what = f"attention(q{list(q.shape)}, k{list(k.shape)}, v{list(v.shape)})"
        got = expect_output(call(submission, q, k, v), q, v, what)
        expect_attention(got, reference(q, k, v), what, scale_slips(q, k, v) if tq > 1 and tk > 1 else [],
                         rtol=1e-6, atol=1e-8)


@check("attention stays finite and right on scores in the thousands", points=1,
       zh="分数达到数千时 attention 仍然有限且正确", depends="values")
def test_large(submission, rng):
    by_hand_only(submission, rng)
    q, k, v = qkv(rng, 2, 2, 4, 5, 4, 3, dtype=torch.float32, scale=30.0)  # scaled scores of +-1000
    top = float((q @ k.transpose(-2, -1)).abs().max() / 2)
    what = Text("attention(q{shape}, k, v) on scores up to {top:.0f}", "分数最大到 {top:.0f} 的 attention(q{shape}, k, v)",
                shape=list(q.shape), top=top)
    got = expect_output(call(submission, q, k, v), q, v, what)
    want = reference(q, k, v)
    scores = q @ k.transpose(-2, -1) / 2
    if not torch.isfinite(got).all():
        naive = scores.exp() / scores.exp().sum(-1, keepdim=True)  # float32, as the learner's: no max subtracted
        if not torch.isfinite(naive).all():
            fail("{what} contains NaN or inf: exp of a score above 88 overflows float32 (inf / inf = NaN). Subtract "
                 "each row's max before exp, or use torch.softmax, which does.",
                 "{what} 含有 NaN 或 inf：float32 中大于 88 的分数做 exp 会溢出（inf / inf = NaN）。请在 exp 之前减去"
                 "每行的最大值，或者用会这样做的 torch.softmax。", what=what, key="no-max-subtracted")
    # the values of the rows whose best key leads by 30 or more: one-hot under any scale the values check names, so
    # only what this check is about (overflow) decides here, on every draw; a near tie is the scale's lesson
    top2 = scores.double().topk(2, dim=-1).values
    clear = (top2[..., 0] - top2[..., 1]) >= 30  # [B, H, Tq]
    expect_attention(got[clear], want[clear], what, [], rtol=1e-3, atol=1e-3)


def causal_slips(q, k, v) -> list:
    t = q.shape[2]
    lower = torch.ones(t, t, dtype=torch.bool).tril()
    return [
        (by_formula(q, k, v), Text(
            "it matches attention with no mask at all: causal=True must hide the keys after each query.",
            "它与完全不加掩码的 attention 一致：causal=True 时必须挡住每个查询之后的键。"), "causal-ignored"),
        (by_formula(q, k, v, allowed=lower.t()), Text(
            "it matches the mask turned around: each query attends keys i..T-1 (triu) instead of 0..i (tril). Query i "
            "may see key j only when j <= i.",
            "它与方向反了的掩码一致：每个查询关注的是键 i..T-1（triu），而不是 0..i（tril）。查询 i 只能看到 j <= i "
            "的键 j。"), "causal-inverted"),
        (by_formula(q, k, v, allowed=lower.tril(-1)), DIAGONAL, "causal-diagonal"),
        (by_formula(q, k, v, allowed=lower.tril(-1), empty_nan=True), DIAGONAL, "causal-diagonal"),  # query 0: NaN
        (by_formula(q, k, v, allowed=lower, fill=0.0), MASK_ZEROS, "mask-zeros"),
    ]


DIAGONAL = Text("it matches a mask that hides the diagonal too: query i must see key i itself (tril, diagonal=0; "
                "or hide triu(diagonal=1), the keys after i). Query 0 then has no key left.",
                "它与连对角线也挡住的掩码一致：查询 i 必须能看到它自己的键 i（tril，diagonal=0；或者挡住 "
                "triu(diagonal=1)，即 i 之后的键）。这样查询 0 就没有键可关注了。")
MASK_ZEROS = Text("it matches masked scores set to 0 instead of -inf: exp(0) = 1, so every masked key still gets "
                  "weight. Fill them with float('-inf'): exp(-inf) = 0.",
                  "它与把被掩盖的分数设为 0 而不是 -inf 的结果一致：exp(0) = 1，所以每个被掩盖的键仍然有权重。"
                  "请填成 float('-inf')：exp(-inf) = 0。")


@check("causal=True lets query i attend keys 0..i only", points=2, zh="causal=True 时查询 i 只关注键 0..i",
       depends="values")
def test_causal(submission, rng):
    by_hand_only(submission, rng)
    for t in (randint(rng, 3, 6), 1):
        q, k, v = qkv(rng, 2, 2, t, t, randint(rng, 3, 5), 3, dtype=torch.float32)
        what = f"attention(q{list(q.shape)}, k, v, causal=True)"
        got = expect_output(call(submission, q, k, v, causal=True), q, v, what)
        expect_attention(got, reference(q, k, v, causal=True), what, causal_slips(q, k, v) if t > 1 else [])


def draw_padded(rng, b, tk, first_kept=False) -> torch.Tensor:
    """[B, Tk] bool, True at padding: each row keeps a different number of keys (1 to Tk - 1); with
    `first_kept`, key 0 is kept (so causal query 0 has a key)."""
    n_pad = torch.randperm(tk - 1, generator=rng)[:b] + 1 if b <= tk - 1 else torch.randint(1, tk, (b,), generator=rng)
    padded = torch.zeros(b, tk, dtype=torch.bool)
    for i, n in enumerate(n_pad.tolist()):
        where = torch.randperm(tk - 1, generator=rng)[:n] + 1 if first_kept else torch.randperm(tk, generator=rng)[:n]
        padded[i, where] = True
    return padded


def padding_slips(q, k, v, padded, causal=False) -> list:
    b, tq, tk = q.shape[0], q.shape[2], k.shape[2]
    allowed = allowed_pairs(b, tq, tk, causal, padded)
    base = allowed_pairs(b, tq, tk, causal)
    convention = Text("True in attention_mask marks a real key to attend, False the padding", "attention_mask 中 "
                      "True 表示要关注的真实键，False 表示填充") if keeps_true() else Text(
        "True in key_padding_mask marks the padding to ignore, as nn.MultiheadAttention's", "key_padding_mask 中 True "
        "表示要忽略的填充，与 nn.MultiheadAttention 相同")
    slips = [
        (by_formula(q, k, v, allowed=base), Text(
            "it matches attention with the key mask left out: {arg} must hide the padding keys.",
            "它与没有使用键掩码的 attention 一致：{arg} 必须挡住填充的键。", arg=verbatim(f"`{mask_arg()}`")),
         "mask-ignored"),
        (by_formula(q, k, v, allowed=base & padded[:, None, None, :]), Text(
            "it matches the key mask read the other way round: {convention}.", "它与把键掩码反过来理解的结果一致："
            "{convention}。", convention=convention), "mask-inverted"),
        (by_formula(q, k, v, allowed=allowed, fill=0.0), MASK_ZEROS, "mask-zeros"),
    ]
    if q.shape[1] == b:  # [B, 1, Tk] lines up with [H, Tq, Tk]: batch row i's mask on head i, every batch row
        slips.append((by_formula(q, k, v, allowed=base & ~padded[None, :, None, :]), Text(
            "it matches the key mask of batch row i applied to head i: a [B, 1, Tk] mask broadcasts against the "
            "scores [B, H, Tq, Tk] from the right, so B lines up with H. Index it as mask[:, None, None, :].",
            "它与把第 i 个样本的键掩码用在第 i 个头上的结果一致：[B, 1, Tk] 的掩码与 [B, H, Tq, Tk] 的分数从右边对齐"
            "广播，于是 B 对上了 H。请写成 mask[:, None, None, :]。"), "mask-broadcast"))
    return slips


def queries_masked(got, q, k, v, padded) -> bool:
    """Whether `got` is the mask applied to the queries: on the rows of real queries, attention over all keys."""
    if q.shape[2] != k.shape[2]:
        return False
    real = ~padded[:, None, :, None].expand_as(got)
    free = by_formula(q, k, v)
    return bool(torch.allclose(got.double()[real], free[real], rtol=1e-4, atol=1e-5)) \
        and not matches(got, reference(q, k, v, padded=padded), atol=1e-5, equal_nan=True) \
        and not matches(got, free, rtol=1e-4, atol=1e-5, equal_nan=True)  # no mask at all: mask-ignored's lesson


@check("the key mask hides the padding keys", points=2, zh="键掩码挡住了填充的键", depends="values")
def test_padding(submission, rng):
    by_hand_only(submission, rng)
    b = 3
    t = randint(rng, 3, 5)
    cases = [(b, b, t, t, False),  # H == B and Tq == Tk: masks on the heads' or the queries' axis run
             (b, 2, randint(rng, 2, 4), t + 1, False),  # Tq != Tk
             (2, 2, t, t, True)]  # with causal: key 0 kept, so every query keeps a key
    for b, h, tq, tk, causal in cases:
        q, k, v = qkv(rng, b, h, tq, tk, 4, 3, dtype=torch.float32)
        padded = draw_padded(rng, b, tk, first_kept=causal)
        mask = learner_mask(padded)
        what = Text("attention(q{shape}, k, v{causal}, {arg}={mask})", shape=list(q.shape),
                    causal=", causal=True" if causal else "", arg=verbatim(mask_arg()), mask=verbatim(
                        str(mask.int().tolist())))
        got = expect_output(call(submission, q, k, v, causal, mask), q, v, what)
        want = reference(q, k, v, causal, padded)
        if not causal and queries_masked(got, q, k, v, padded):
            fail("{what} is wrong on the padding queries and, on the others, attends every key: the mask was applied "
                 "to the queries (rows), not the keys (columns). It goes on the last dimension of the scores: "
                 "mask[:, None, None, :].",
                 "{what} 在填充的查询上不对，而其余查询关注了所有键：掩码用在了查询（行）上，而不是键（列）上。"
                 "它应作用于分数的最后一维：mask[:, None, None, :]。", what=what, key="mask-on-queries")
        expect_attention(got, want, what, padding_slips(q, k, v, padded, causal))
    expect_cpu_only(submission, [("attention", [q, k, v, True, mask])])  # a GPU at hand changes nothing


@check("a query with no key left to attend gets zeros, never NaN", points=1,
       zh="没有任何键可关注的查询得到全 0，而不是 NaN", depends="padding")
def test_masked_row(submission, rng):
    by_hand_only(submission, rng)
    tk = randint(rng, 3, 5)
    padded = draw_padded(rng, 2, tk)
    full = randint(rng, 0, 1)
    padded[full] = True  # a batch row of padding only
    padded[1 - full, :2] = False  # and one whose queries weigh two keys at least: a wrong scale shows on every draw
    q, k, v = qkv(rng, 2, 2, randint(rng, 2, 4), tk, 4, 3, dtype=torch.float32)
    causal_padded = draw_padded(rng, 2, tk)
    causal_padded[:, 0] = True  # key 0 padded: causal query 0 has nothing left
    causal_padded[:, 1:3] = False  # keys 1 and 2 kept: query 2 weighs two
    qc, kc, vc = qkv(rng, 2, 2, tk, tk, 4, 3, dtype=torch.float32)
    for (q, k, v), causal, pad in (((q, k, v), False, padded), ((qc, kc, vc), True, causal_padded)):  # noqa: B020
        mask = learner_mask(pad)
        what = Text("attention(q{shape}, k, v{causal}, {arg}={mask})", shape=list(q.shape),
                    causal=", causal=True" if causal else "", arg=verbatim(mask_arg()), mask=verbatim(
                        str(mask.int().tolist())))
        got = expect_output(call(submission, q, k, v, causal, mask), q, v, what)
        want = reference(q, k, v, causal, pad)
        empty = ~allowed_pairs(q.shape[0], q.shape[2], k.shape[2], causal, pad).any(-1)  # [B, 1, Tq]
        rows = got.double()[empty.expand(got.shape[:3])]
        if torch.isnan(rows).any():
            fail("{what} has NaN in the rows of queries that have no key left to attend: their scores are all -inf, "
                 "and softmax gives 0/0 = NaN there. The statement asks zeros for those queries: set their weights "
                 "to 0 (for instance where the mask has no True along the keys).",
                 "{what} 在没有任何键可关注的查询行上是 NaN：这些行的分数全是 -inf，softmax 在那里得到 0/0 = NaN。"
                 "题目要求这些查询得到 0：请把它们的权重设为 0（例如在掩码沿键的维度没有任何 True 的地方）。",
                 what=what, key="masked-row-nan")
        mean_v = v.double().mean(-2, keepdim=True).expand(got.shape)[empty.expand(got.shape[:3])]
        if rows.numel() and torch.allclose(rows, mean_v, rtol=1e-4, atol=1e-5) and not torch.allclose(
                mean_v, torch.zeros_like(mean_v)):
            fail("{what} gives the queries with no key left the mean of v: a finite fill (-1e9, finfo.min) leaves those "
                 "rows with equal scores, so softmax spreads the weight evenly over the padding. The statement asks "
                 "zeros: fill with -inf and set the weights of such rows to 0.",
                 "{what} 让没有任何键可关注的查询得到了 v 的平均值：有限的填充值（-1e9、finfo.min）让这些行的分数都相等，"
                 "softmax 就把权重平均分给了填充的键。题目要求得到 0：请填成 -inf，并把这些行的权重设为 0。",
                 what=what, key="masked-row-mean")
        expect_attention(got, want, what, [])


@check("float16 and bfloat16 inputs give a result in their dtype, close to float64's", points=1,
       zh="float16 和 bfloat16 输入得到同一 dtype 的结果，且接近 float64 的结果", depends="padding")
def test_half(submission, rng):
    by_hand_only(submission, rng)
    for dtype, tol in ((torch.float16, 1e-2), (torch.bfloat16, 5e-2)):
        t = randint(rng, 3, 5)
        q, k, v = qkv(rng, 2, 2, t, t, 8, 4, dtype=dtype)
        padded = draw_padded(rng, 2, t, first_kept=True)
        mask = learner_mask(padded)
        what = Text("attention(q{shape} in {dtype}, k, v, causal=True, {arg}=...)",
                    "输入为 {dtype} 时的 attention(q{shape}, k, v, causal=True, {arg}=...)", shape=list(q.shape),
                    dtype=verbatim(str(dtype).removeprefix("torch.")), arg=verbatim(mask_arg()))
        value = call(submission, q, k, v, True, mask)
        if isinstance(value, torch.Tensor) and value.dtype != dtype:
            fail("{what} returned {got}: the result keeps the dtype of its inputs, {want}. Computing in float32 "
                 "inside is fine; cast the result back with .to(q.dtype).",
                 "{what} 返回了 {got}：结果应保持输入的 dtype {want}。在函数内部用 float32 计算没有问题；"
                 "请用 .to(q.dtype) 把结果转换回去。", what=what, got=describe(value), want=dtype,
                 key="half-promoted")
        got = expect_output(value, q, v, what)
        expect_attention(got, reference(q, k, v, True, padded), what, [], rtol=tol, atol=tol)


@check("attention is written by hand (no scaled_dot_product_attention)", points=1,
       zh="attention 是自己写的（不调用 scaled_dot_product_attention）", depends="values")
def test_by_hand(submission, rng):
    by_hand_only(submission, rng)
