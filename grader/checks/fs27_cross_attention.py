"""Hidden checks of fs27: multi-head cross-attention (queries from the decoder, keys and values from the encoder)
with the encoder's padding mask.

The expectation is nn.MultiheadAttention(E, H, bias=False, kdim=M, vdim=M, batch_first=True) in float64 with the
judge's weights loaded, given the source's key_padding_mask; a batch row whose source is padding only gets zeros
(the statement's rule), set here. A wrong output is compared with the known slips, each written out here in float64
(`formula`): keys and values from the decoder, w_k and w_v swapped, the scale by sqrt(E), heads split without the
transpose, a causal mask (cross-attention has none), no output projection, the mask left out, inverted, put on the
queries, broadcast onto the heads, filled with 0. Sizes are drawn so that each runs and differs: Tq != Tk, M != E
(and M == E once, so keys from the decoder run), B == H and Tq == Tk once for the misplaced masks.

A probe records the torch functions `cross_attention` calls: nn.MultiheadAttention's forward fails every check.

Kata variants: `variant("mask")` is the source mask's convention: nn.Transformer's bool memory_key_padding_mask
(True at padding) or Hugging Face's torch.long encoder_attention_mask (1 for a real token), where `~mask` is a
bitwise not. The argument's name, the mask passed and the diagnoses follow the draw.
"""

import math

import torch
from torch import nn

from grader.checking import (Text, check, expect_close, expect_tensor, explain, fail, matches, probe, recording_calls,
                             variant, verbatim)
from grader.devices import expect_cpu_only

BANNED = ("multi_head_attention", "multiheadattention", "transformer")

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def torch_calls(module, args, kwargs):
    """The names of the torch functions `cross_attention` calls; an error is the value checks' lesson."""
    names = set()
    try:
        with recording_calls(names):
            module.cross_attention(*args, **kwargs)
    except Exception:  # judged by the value checks
        pass
    return sorted(names)


# -- judge side ------------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def keeps() -> bool:
    return variant("mask")["name"] == "keep"


def mask_arg() -> str:
    return variant("mask")["arg"]


def learner_mask(padded: torch.Tensor) -> torch.Tensor:
    """The source mask as this draw writes it, from `padded` (True at padding)."""
    return (~padded).long() if keeps() else padded.clone()


def draw(rng, b, tq, tk, e, m, dtype=torch.float32):
    def randn(*shape, scale=1.0):
        return (scale * torch.randn(*shape, generator=rng, dtype=torch.float64)).to(dtype)
    x, memory = randn(b, tq, e), randn(b, tk, m)
    w = {"w_q": randn(e, e, scale=e ** -0.5 * 2), "w_k": randn(e, m, scale=m ** -0.5 * 2),
         "w_v": randn(e, m, scale=m ** -0.5), "w_o": randn(e, e, scale=e ** -0.5)}
    return x, memory, w


def reference(x, memory, w, h, padded=None):
    """nn.MultiheadAttention in float64 with these weights; zeros for a batch row whose source is padding only."""
    e, m = x.shape[-1], memory.shape[-1]
    mha = nn.MultiheadAttention(e, h, bias=False, kdim=m, vdim=m, batch_first=True).double().eval()
    with torch.no_grad():
        if mha._qkv_same_embed_dim:
            mha.in_proj_weight.copy_(torch.cat([w["w_q"], w["w_k"], w["w_v"]]).double())
        else:
            mha.q_proj_weight.copy_(w["w_q"].double())
            mha.k_proj_weight.copy_(w["w_k"].double())
            mha.v_proj_weight.copy_(w["w_v"].double())
        mha.out_proj.weight.copy_(w["w_o"].double())
        empty = padded.all(-1) if padded is not None else torch.zeros(x.shape[0], dtype=torch.bool)
        mask = None if padded is None else padded & ~empty[:, None]
        out = mha(x.double(), memory.double(), memory.double(), key_padding_mask=mask, need_weights=False)[0]
    return out.masked_fill(empty[:, None, None], 0.0)


def formula(x, memory, w, h, padded=None, kv=None, scale=None, split="right", swap=False, causal=False,
            axis="keys", fill=-math.inf, out_proj=True):
    """Cross-attention written out in float64 with one slip at a time."""
    x, memory = x.double(), memory.double()
    kv = memory if kv is None else kv.double()
    wq, wk, wv, wo = (w[n].double() for n in ("w_q", "w_k", "w_v", "w_o"))
    if swap:
        wk, wv = wv, wk
    b, tq, e = x.shape
    tk, d = kv.shape[1], e // h

    def heads(t):
        n = t.shape[1]
        return t.reshape(b, h, n, d) if split == "view" else t.reshape(b, n, h, d).transpose(1, 2)
    q, k, v = heads(x @ wq.T), heads(kv @ wk.T), heads(kv @ wv.T)
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(d) if scale is None else scale)
    allowed = torch.ones(b, 1, tq, tk, dtype=torch.bool)
    if causal:
        allowed = allowed & torch.ones(tq, tk, dtype=torch.bool).tril()
    if padded is not None:
        keep = ~padded
        allowed = allowed & {"keys": keep[:, None, None, :], "queries": keep[:, None, :, None] if tq == tk else None,
                             "heads": keep[None, :, None, :] if h == b else None}[axis]
    weights = torch.softmax(scores.masked_fill(~allowed, fill), -1)
    if fill == -math.inf:
        weights = weights.masked_fill(~allowed.any(-1, keepdim=True), 0.0)
    merged = (weights @ v).transpose(1, 2).reshape(b, tq, e)
    return merged @ wo.T if out_proj else merged


def first_wrong(got, want, rtol, atol) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol, equal_nan=True)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_named(got, want, what, slips, rtol=1e-4, atol=1e-5):
    if matches(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return
    for wrong, why, key in slips:
        if wrong is not None and wrong.shape == want.shape and not matches(
                wrong, want, rtol=rtol, atol=atol, equal_nan=True) and matches(got, wrong, rtol=rtol, atol=atol,
                                                                               equal_nan=True):
            fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，实际为 "
                      "{got:.4g}：{why}", what=what, why=why, **first_wrong(got, want, rtol, atol)), key=key)
    if torch.isnan(got.double()).any() and not torch.isnan(want).any():
        fail("{what} contains NaN where the right result has none (first at {at}): a softmax over a row of -inf only "
             "is 0/0.", "{what} 含有 NaN，而正确结果没有（第一个在 {at}）：全为 -inf 的一行做 softmax 是 0/0。",
             what=what, at=[int(i) for i in torch.isnan(got.double()).nonzero()[0]], key="nan")
    expect_close(got, want, what, rtol=rtol, atol=atol)


NOT_BOOL = Text("masked_fill needs a bool mask: encoder_attention_mask is torch.long (1 = real token). Turn it into "
                "bool first, mask.bool() or mask == 1; note that ~ of a long tensor is a bitwise not (~1 = -2, "
                "~0 = -1), not a logical one.",
                "masked_fill 需要布尔掩码：encoder_attention_mask 是 torch.long（1 表示真实词元）。请先把它变成布尔型，"
                "mask.bool() 或 mask == 1；注意对 long 张量用 ~ 是按位取反（~1 = -2，~0 = -1），不是逻辑取反。")
WIDTH = Text("A projection got an input of the wrong width: w_q [E, E] takes the decoder's x, while w_k and w_v "
             "[E, M] take the encoder's memory (queries from x, keys and values from memory).",
             "某个投影收到的输入宽度不对：w_q [E, E] 作用于解码器的 x，而 w_k 和 w_v [E, M] 作用于编码器的 memory"
             "（查询来自 x，键和值来自 memory）。")
BROADCAST = Text("The mask does not broadcast to the scores [B, H, Tq, Tk]: the source mask [B, Tk] becomes "
                 "[B, 1, 1, Tk] (mask[:, None, None, :]).",
                 "掩码无法广播到分数的形状 [B, H, Tq, Tk]：源序列的掩码 [B, Tk] 要变成 [B, 1, 1, Tk]"
                 "（mask[:, None, None, :]）。")


def call(submission, x, memory, w, h, mask=None):
    kwargs = {} if mask is None else {mask_arg(): mask}
    with explain({"only supports boolean masks": NOT_BOOL}, key="mask-not-bool"), \
            explain({"must match the size": BROADCAST}, key="mask-shape"), \
            explain({"cannot be multiplied": WIDTH}, key="projection-input"):
        return submission.cross_attention(x, memory, w["w_q"], w["w_k"], w["w_v"], w["w_o"], h, **kwargs)


def describe_call(x, memory, h, mask=None) -> Text:
    return Text("cross_attention(x{xs}, memory{ms}, ..., num_heads={h}{mask})", xs=list(x.shape),
                ms=list(memory.shape), h=h, mask=verbatim("" if mask is None else f", {mask_arg()}="
                                                          f"{mask.int().tolist()}"))


def expect_output(value, x, memory, what) -> torch.Tensor:
    b, tq, e = x.shape
    value = expect_tensor(value, what, floating=True)
    if list(value.shape) == [b, memory.shape[1], e] and tq != memory.shape[1]:
        fail("{what} should have shape {want}, got {got}: one row per source token. The queries come from the "
             "decoder's x (one per target position); the encoder's memory gives the keys and values.",
             "{what} 的形状应为 {want}，实际为 {got}：每个源词元一行。查询来自解码器的 x（每个目标位置一个）；"
             "编码器的 memory 提供键和值。", what=what, want=[b, tq, e], got=list(value.shape), key="queries-from-memory")
    value = expect_tensor(value, what, shape=[b, tq, e])
    if value.dtype != x.dtype:
        fail("{what} should keep x's dtype, {want}, got {got}.", "{what} 应保持 x 的 dtype {want}，实际为 {got}。",
             what=what, want=x.dtype, got=value.dtype, key="wrong-dtype")
    return value


def by_hand_only(submission, rng) -> None:
    def run():
        x, memory, w = draw(rng, 2, 3, 4, 4, 6)
        kwargs = {mask_arg(): learner_mask(torch.tensor([[False, False, True, True], [False] * 4]))}
        names = submission.probe(torch_calls, (x, memory, w["w_q"], w["w_k"], w["w_v"], w["w_o"], 2), kwargs,
                                 what="`cross_attention`")
        return [n for n in names if any(word in n.lower() for word in BANNED)]
    used = submission.once("builtins", run)
    if used:
        fail("cross_attention calls PyTorch's own {name}: its values are PyTorch's, not yours. Write the projections, "
             "the heads and the masked softmax with tensor operations.",
             "cross_attention 调用了 PyTorch 自带的 {name}：这些值是 PyTorch 算的，不是你写的。请用张量运算自己写出"
             "投影、多头和带掩码的 softmax。", name=verbatim(", ".join(f"`{n}`" for n in used)), key="builtin-attention")


# -- the checks -------------------------------------------------------------------------------------

@check("cross_attention returns [B, Tq, E] in x's dtype", points=1, zh="cross_attention 返回 x 的 dtype 的 [B, Tq, E]")
def test_shapes(submission, rng):
    by_hand_only(submission, rng)
    for b, h, tq, tk, e, m in ((2, 2, 3, 5, 8, 6), (1, 1, 1, 1, 2, 3)):
        x, memory, w = draw(rng, b, tq, tk, e, m)
        expect_output(call(submission, x, memory, w, h), x, memory, describe_call(x, memory, h))


def value_slips(x, memory, w, h) -> list:
    e, d = x.shape[-1], x.shape[-1] // h
    slips = [
        (formula(x, memory, w, h, swap=True), Text(
            "it matches w_k and w_v swapped: the keys are memory @ w_k.T and the values memory @ w_v.T.",
            "它与 w_k 和 w_v 互换的结果一致：键是 memory @ w_k.T，值是 memory @ w_v.T。"), "kv-swapped"),
        (formula(x, memory, w, h, scale=1 / math.sqrt(e)), Text(
            "it matches scores divided by sqrt(E) = {r:.4g}: the scale is sqrt(head_dim) = sqrt(E // num_heads) = "
            "{s:.4g}.", "它与把分数除以 sqrt(E) = {r:.4g} 的结果一致：缩放应为 sqrt(head_dim) = sqrt(E // num_heads) = "
            "{s:.4g}。", r=math.sqrt(e), s=math.sqrt(d)), "scale-by-d-model"),
        (formula(x, memory, w, h, split="view"), Text(
            "it matches heads split by a view straight to [B, H, T, D]: that mixes positions into heads. View as "
            "[B, T, H, D], then transpose(1, 2).",
            "它与直接 view 成 [B, H, T, D] 来拆分多头的结果一致：这样会把不同位置混进同一个头。请先 view 成 "
            "[B, T, H, D]，再 transpose(1, 2)。"), "heads-no-transpose"),
        (formula(x, memory, w, h, causal=True), Text(
            "it matches a causal mask over [Tq, Tk]: cross-attention has none. A target position may read every "
            "source token; only the source's padding is hidden.",
            "它与在 [Tq, Tk] 上加了因果掩码的结果一致：交叉注意力没有因果掩码。目标位置可以读每一个源词元；"
            "只挡住源序列的填充。"), "causal-in-cross"),
        (formula(x, memory, w, h, out_proj=False), Text(
            "it matches the result without the output projection: the merged heads go through w_o (@ w_o.T).",
            "它与没有输出投影的结果一致：合并后的多个头还要经过 w_o（@ w_o.T）。"), "no-out-proj"),
    ]
    if memory.shape[-1] == x.shape[-1]:
        slips.insert(0, (formula(x, memory, w, h, kv=x), Text(
            "it matches keys and values taken from the decoder's x: that is self-attention. In cross-attention the "
            "keys and values come from the encoder's memory.",
            "它与从解码器的 x 取键和值的结果一致：那是自注意力。交叉注意力的键和值来自编码器的 memory。"),
            "kv-from-decoder"))
    return slips


@check("cross_attention matches nn.MultiheadAttention with kdim and vdim, the same weights", points=3,
       zh="cross_attention 与使用相同权重、设置了 kdim 和 vdim 的 nn.MultiheadAttention 一致", depends="shapes")
def test_values(submission, rng):
    by_hand_only(submission, rng)
    h = randint(rng, 2, 3)
    e = h * randint(rng, 2, 3)
    tq = randint(rng, 2, 4)
    for b, tq_, tk, m in ((2, tq, tq + randint(rng, 1, 3), e + randint(rng, 1, 3)), (3, tq, tq + 2, e), (1, 2, 1, 5)):
        x, memory, w = draw(rng, b, tq_, tk, e, m, dtype=torch.float64)
        what = describe_call(x, memory, h)
        got = expect_output(call(submission, x, memory, w, h), x, memory, what)
        expect_named(got, reference(x, memory, w, h), what, value_slips(x, memory, w, h) if tk > 1 else [],
                     rtol=1e-6, atol=1e-8)


def draw_padded(rng, b, tk) -> torch.Tensor:
    """[B, Tk] bool, True at padding at the end of each row (as a padded batch), 1 to Tk - 1 real tokens, rows
    of different lengths where b <= Tk - 1."""
    lengths = (torch.randperm(tk - 1, generator=rng)[:b] + 1) if b <= tk - 1 else torch.randint(1, tk, (b,),
                                                                                               generator=rng)
    return torch.arange(tk)[None, :] >= lengths[:, None]


BITWISE = Text(" With a torch.long mask, ~mask is a bitwise not: ~1 = -2 and ~0 = -1 are both true as bools.",
               "对 torch.long 的掩码，~mask 是按位取反：~1 = -2 和 ~0 = -1 转成布尔都是 True。")


def padding_slips(x, memory, w, h, padded) -> list:
    convention = Text("1 in encoder_attention_mask marks a real source token, 0 the padding",
                      "encoder_attention_mask 中 1 表示真实的源词元，0 表示填充") if keeps() else Text(
        "True in memory_key_padding_mask marks the padding", "memory_key_padding_mask 中 True 表示填充")
    return [
        (formula(x, memory, w, h), Text("it matches attention with the source mask left out: the padding tokens of "
                                        "memory must get no weight.{why}",
                                        "它与没有使用源掩码的 attention 一致：memory 中的填充词元必须得不到权重。{why}",
                                        why=BITWISE if keeps() else ""), "mask-ignored"),
        (formula(x, memory, w, h, padded=~padded), Text("it matches the mask read the other way round: {c}.",
                                                         "它与把掩码反过来理解的结果一致：{c}。", c=convention),
         "mask-inverted"),
        (formula(x, memory, w, h, padded=padded, axis="queries") if x.shape[1] == memory.shape[1] else None, Text(
            "it matches the source mask applied to the decoder's positions (the queries, rows of the scores): the "
            "padding belongs to the source, the keys: mask[:, None, None, :].",
            "它与把源掩码用在解码器位置（查询，分数的行）上的结果一致：填充属于源序列，也就是键：mask[:, None, None, :]。"),
         "mask-on-queries"),
        (formula(x, memory, w, h, padded=padded, axis="heads") if h == x.shape[0] else None, Text(
            "it matches the mask of batch row i applied to head i: [B, 1, Tk] broadcasts against [B, H, Tq, Tk] "
            "from the right, so B lines up with H. Index it as mask[:, None, None, :].",
            "它与把第 i 个样本的掩码用在第 i 个头上的结果一致：[B, 1, Tk] 与 [B, H, Tq, Tk] 从右边对齐广播，"
            "于是 B 对上了 H。请写成 mask[:, None, None, :]。"), "mask-broadcast"),
        (formula(x, memory, w, h, padded=padded, fill=0.0), Text(
            "it matches padding scores set to 0 instead of -inf: exp(0) = 1 still gives them weight.",
            "它与把填充位置的分数设为 0 而不是 -inf 的结果一致：exp(0) = 1，它们仍然有权重。"), "mask-zeros"),
        (torch.zeros(x.shape, dtype=torch.float64), Text(
            "it is all zeros: every source token was masked. With a torch.long mask, ~mask is a bitwise not (~1 = -2, "
            "~0 = -1, both true as bools): compare instead, mask == 0 marks the padding.",
            "它全是 0：每个源词元都被掩盖了。对 torch.long 的掩码，~mask 是按位取反（~1 = -2，~0 = -1，转成布尔都是 "
            "True）：请改用比较，mask == 0 表示填充。"), "mask-bitwise-not") if keeps() else (None, None, None),
    ]


@check("the source's padding keys get no weight, for every decoder position", points=2,
       zh="源序列中填充的键对每个解码器位置都没有权重", depends="values")
def test_padding(submission, rng):
    by_hand_only(submission, rng)
    h = 2
    e = 2 * randint(rng, 2, 3)
    tk = randint(rng, 4, 6)
    for b, tq, m in ((2, tk, e + 1), (3, randint(rng, 2, 3), e + 2)):  # B == H, Tq == Tk; then B != H, Tq != Tk
        x, memory, w = draw(rng, b, tq, tk, e, m)
        padded = draw_padded(rng, b, tk)
        mask = learner_mask(padded)
        what = describe_call(x, memory, h, mask)
        got = expect_output(call(submission, x, memory, w, h, mask), x, memory, what)
        expect_named(got, reference(x, memory, w, h, padded), what, padding_slips(x, memory, w, h, padded))
    expect_cpu_only(submission, [("cross_attention", [x, memory, w["w_q"], w["w_k"], w["w_v"], w["w_o"], h, mask])])


@check("a decoder row whose source is padding only gets zeros, never NaN", points=1,
       zh="源序列全是填充的样本得到 0，而不是 NaN", depends="padding")
def test_empty_source(submission, rng):
    by_hand_only(submission, rng)
    tk = randint(rng, 3, 5)
    x, memory, w = draw(rng, 2, 3, tk, 4, 5)
    padded = torch.zeros(2, tk, dtype=torch.bool)
    full = randint(rng, 0, 1)
    padded[full] = True
    padded[1 - full, -1] = True
    mask = learner_mask(padded)
    what = describe_call(x, memory, 2, mask)
    got = expect_output(call(submission, x, memory, w, 2, mask), x, memory, what)
    if torch.isnan(got[full]).any():
        fail("{what} has NaN in batch row {row}, whose source is padding only: its scores are all -inf and the "
             "softmax gives 0/0. The statement asks zeros: set the weights of such queries to 0.",
             "{what} 在第 {row} 个样本中有 NaN，它的源序列全是填充：分数全是 -inf，softmax 得到 0/0。题目要求得到 0："
             "请把这些查询的权重设为 0。", what=what, row=full, key="masked-row-nan")
    expect_named(got, reference(x, memory, w, 2, padded), what, [])


@check("float16 inputs give a float16 result close to float64's", points=1,
       zh="float16 输入得到 float16 的结果，且接近 float64 的结果", depends="padding")
def test_half(submission, rng):
    by_hand_only(submission, rng)
    x, memory, w = draw(rng, 2, 3, 5, 8, 6, dtype=torch.float16)
    padded = draw_padded(rng, 2, 5)
    mask = learner_mask(padded)
    what = Text("{call} in float16", "输入为 float16 时的 {call}", call=describe_call(x, memory, 2, mask))
    value = call(submission, x, memory, w, 2, mask)
    if isinstance(value, torch.Tensor) and value.dtype != torch.float16:
        fail("{what} returned {got}: the result keeps x's dtype, float16. A finite fill such as -1e9 would not fit in "
             "float16 either: fill with float('-inf').",
             "{what} 返回了 {got}：结果应保持 x 的 dtype float16。像 -1e9 这样的有限填充值也装不进 float16："
             "请用 float('-inf') 填充。", what=what, got=value.dtype, key="half-promoted")
    got = expect_output(value, x, memory, what)
    expect_named(got, reference(x, memory, w, 2, padded), what, [], rtol=2e-2, atol=2e-2)


@check("cross_attention is written by hand (no nn.MultiheadAttention)", points=1,
       zh="cross_attention 是自己写的（不调用 nn.MultiheadAttention）", depends="values")
def test_by_hand(submission, rng):
    by_hand_only(submission, rng)
