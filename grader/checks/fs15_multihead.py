"""Hidden checks of fs15: multi-head self-attention as a module, from scratch.

A probe builds the learner's MultiHeadAttention in the sandbox, converts it to float64, loads weights the judge
drew into its projections (by name: q_proj/k_proj/v_proj or in_proj, and out_proj) and runs it. The expectation
is nn.MultiheadAttention(batch_first=True) in float64 with the same weights loaded (in_proj_weight is q, k and v
stacked), with its own key_padding_mask and a causal attn_mask. A wrong output is compared with the known slips,
each computed here by an explicit formula with the same weights: the heads split by a view straight to
[B, H, T, D] (no transpose), split interleaved, merged without the transpose, a scale by sqrt(embed_dim), the
output projection left out, the packed q/k/v read in another order, the input read as [T, B, E] (the default
batch_first=False of nn.MultiheadAttention), the masks inverted or broadcast onto the heads. Sizes are drawn
so that each slip changes the values: H >= 2, T >= 2, D >= 2, B != T, and B == H once for the mask.

The probe also records whether the module holds an nn.MultiheadAttention or its forward calls
F.multi_head_attention_forward (a TorchFunctionMode): either fails every check, as ex05 treats autograd.

Kata variants: `variant("projection")` is how the input projections are stored: three Linear layers (q_proj,
k_proj, v_proj) or one packed Linear(E, 3E), in_proj, whose output is q, k, v in that order. The parameter
names, the loading and the diagnoses of the packed order follow the draw.
"""

import itertools
import math

import torch
from torch import nn

from grader.checking import (LearnerError, Text, check, expect_close, expect_tensor, explain, fail, matches, probe,
                             recording_calls, variant, verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)


# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def run_module(module, embed_dim, num_heads, bias, weights, x, kwargs):
    """Build MultiHeadAttention(embed_dim, num_heads, bias=bias); describe its parameters; load `weights`
    (name -> float64 tensor) when every name is there with its shape; run it on x (unless None) with `kwargs`,
    recording the torch functions called."""

    torch.manual_seed(0)
    m = module.MultiHeadAttention(embed_dim, num_heads, bias=bias)
    info = {"is_module": isinstance(m, nn.Module), "type": type(m).__name__}
    if not info["is_module"]:
        return info
    info["params"] = {name: list(p.shape) for name, p in m.named_parameters()}
    info["builtin"] = sorted({type(s).__name__ for s in m.modules() if isinstance(s, nn.MultiheadAttention)})
    params = dict(m.named_parameters())
    if x is None or any(name not in params or list(params[name].shape) != list(w.shape) for name, w in weights.items()):
        return info
    m.double()
    params = dict(m.named_parameters())
    with torch.no_grad():
        for name, w in weights.items():
            params[name].copy_(w)
    names = set()

    with recording_calls(names):
        out = m(x, **kwargs)
    info["calls"] = sorted(names)
    info["out"] = out.detach() if isinstance(out, torch.Tensor) else out
    return info


@probe
def construct(module, embed_dim, num_heads):
    """MultiHeadAttention(embed_dim, num_heads): what it raised (type and message), or None."""
    try:
        module.MultiHeadAttention(embed_dim, num_heads)
    except Exception as exc:  # the exception is what is judged
        return {"raised": type(exc).__name__, "message": str(exc)[:200]}
    return {"raised": None}


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def packed() -> bool:
    return variant("projection")["name"] == "packed"


def draw_weights(rng, e, bias=True) -> dict:
    """The projections' weights, float64: q, k, v, o -> (weight [E, E], bias [E] or None)."""
    def linear():
        w = torch.randn(e, e, generator=rng, dtype=torch.float64) / math.sqrt(e)
        return w, (0.5 * torch.randn(e, generator=rng, dtype=torch.float64) if bias else None)
    return {name: linear() for name in "qkvo"}


def learner_weights(w: dict) -> dict:
    """The same weights named as this draw's module holds them."""
    names = {}
    if packed():
        names["in_proj.weight"] = torch.cat([w["q"][0], w["k"][0], w["v"][0]])
        if w["q"][1] is not None:
            names["in_proj.bias"] = torch.cat([w["q"][1], w["k"][1], w["v"][1]])
    else:
        for n in "qkv":
            names[f"{n}_proj.weight"] = w[n][0]
            if w[n][1] is not None:
                names[f"{n}_proj.bias"] = w[n][1]
    names["out_proj.weight"] = w["o"][0]
    if w["o"][1] is not None:
        names["out_proj.bias"] = w["o"][1]
    return names


def reference(x, w, h, causal=False, padded=None):
    """nn.MultiheadAttention(batch_first=True) in float64 with the weights `w` loaded."""
    e = x.shape[-1]
    bias = w["q"][1] is not None
    mha = nn.MultiheadAttention(e, h, bias=bias, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w["q"][0], w["k"][0], w["v"][0]]))
        mha.out_proj.weight.copy_(w["o"][0])
        if bias:
            mha.in_proj_bias.copy_(torch.cat([w["q"][1], w["k"][1], w["v"][1]]))
            mha.out_proj.bias.copy_(w["o"][1])
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1) if causal else None
        return mha(x, x, x, key_padding_mask=padded, attn_mask=mask, need_weights=False)[0]


def formula(x, w, h, causal=False, padded=None, split="right", merge="right", scale=None, order="qkv", out=True,
            fill=-math.inf, mask_axis="keys"):
    """Multi-head attention written out in float64 with one slip at a time (the right one by default)."""
    b, t, e = x.shape
    d = e // h

    def linear(y, name):
        weight, bias = w[name]
        return y @ weight.t() + (bias if bias is not None else 0)

    def heads(y):
        if split == "no-transpose":
            return y.reshape(b, h, t, d)
        if split == "interleaved":
            return y.reshape(b, t, d, h).permute(0, 3, 1, 2)
        return y.reshape(b, t, h, d).transpose(1, 2)

    q, k, v = (heads(linear(x, name)) for name in order)
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(d) if scale is None else scale)
    allowed = torch.ones(t, t, dtype=torch.bool)
    if causal:
        allowed = allowed.tril() if causal != "inverted" else allowed.triu()
    if padded is not None:
        keep = ~padded if mask_axis != "inverted" else padded
        allowed = allowed & (keep[None, :, None, :] if mask_axis == "heads" else keep[:, None, None, :])
    weights = torch.softmax(scores.masked_fill(~allowed, fill), dim=-1)
    o = weights @ v
    o = o.reshape(b, t, e) if merge == "no-transpose" else o.transpose(1, 2).reshape(b, t, e)
    return linear(o, "o") if out else o


def expected_names(bias=True) -> list[str]:
    layers = ["in_proj", "out_proj"] if packed() else ["q_proj", "k_proj", "v_proj", "out_proj"]
    return [f"{layer}.{p}" for layer in layers for p in (("weight", "bias") if bias else ("weight",))]


def run(submission, x, w, h, bias=True, **kwargs):
    """The learner's module on x with the weights `w` loaded: its output, after the structure and the banned
    built-in are judged (x None: the module is built, not run)."""
    e = w["q"][0].shape[0]

    def probed(kwargs):
        return submission.probe(run_module, e, h, bias, learner_weights(w), x, kwargs,
                                what=Text("`MultiHeadAttention({e}, {h})` and its forward", "`MultiHeadAttention({e}, "
                                          "{h})` 及其 forward", e=e, h=h) if x is not None else
                                Text("`MultiHeadAttention({e}, {h})`", e=e, h=h))

    with explain({"view size is not compatible": VIEW}, key="view-not-contiguous"):
        try:
            info = probed(kwargs)
        except LearnerError as exc:  # the key mask's error only where the same call without it runs
            unmasked = {k: v for k, v in kwargs.items() if k != "key_padding_mask"}
            if "must match the size" in exc.message and unmasked != kwargs and runs(lambda: probed(unmasked)):
                fail("{cause} ({error})", "{cause}（{error}）", cause=BROADCAST, error=exc.text, key="mask-shape")
            raise
    if not info["is_module"]:
        fail("MultiHeadAttention(...) should be an nn.Module, got a {type}: derive it from nn.Module and call "
             "super().__init__() first.", "MultiHeadAttention(...) 应该是 nn.Module，实际是 {type}：让它继承 nn.Module，"
             "并先调用 super().__init__()。", type=verbatim(info["type"]), key="not-a-module")
    used = info["builtin"] + forbidden_calls("multi_head_attention_forward", info.get("calls", []))
    if used:
        fail("MultiHeadAttention uses PyTorch's own {name}: its values are PyTorch's, not yours. Write the projections, "
             "the split into heads and their merge yourself (F.scaled_dot_product_attention is fine per head).",
             "MultiHeadAttention 用了 PyTorch 自带的 {name}：这些值是 PyTorch 算的，不是你写的。请自己写出投影、"
             "多个头的拆分与合并（每个头内部可以用 F.scaled_dot_product_attention）。",
             name=verbatim(", ".join(f"`{n}`" for n in used)), key="builtin-mha")
    expect_structure(info, e, h, bias)
    return info.get("out")


def runs(call) -> bool:
    """Whether `call()` returns without the learner's code raising."""
    try:
        call()
    except LearnerError:
        return False
    return True


VIEW = Text("`.view()` only reshapes memory laid out for it: a transposed tensor (or a chunk of in_proj's output) can "
            "be viewed only where its strides allow. Split the heads with .view(B, T, H, D), which splits the last "
            "dimension alone, then .transpose(1, 2); merge them with .transpose(1, 2).reshape(B, T, E) (reshape copies "
            "when it must).",
            "`.view()` 只能用于内存布局允许的形状：转置过的张量（或 in_proj 输出的一块）只能在步长允许的地方 view。"
            "拆分多个头用 .view(B, T, H, D)（只拆分最后一维），再 .transpose(1, 2)；合并用 "
            ".transpose(1, 2).reshape(B, T, E)（reshape 在必要时会复制）。")
BROADCAST = Text("The key mask does not broadcast to the scores [B, H, T, T]: index it as key_padding_mask[:, None, "
                 "None, :] ([B, 1, 1, T]).",
                 "键掩码无法广播到分数的形状 [B, H, T, T]：请写成 key_padding_mask[:, None, None, :]（[B, 1, 1, T]）。")


def expect_structure(info, e, h, bias):
    """Parameters exactly the statement's, by name and shape."""
    want = {name: list(t.shape) for name, t in learner_weights(draw_shapes(e, bias)).items()}
    got = info["params"]
    if got == want:
        return
    missing = [n for n in want if n not in got]
    extra = [n for n in got if n not in want]
    if not missing and not extra:
        wrong = [n for n in want if got[n] != want[n]]
        fail("The parameter {name} of MultiHeadAttention({e}, {h}) has shape {got}, expected {want}.",
             "MultiHeadAttention({e}, {h}) 的参数 {name} 的形状为 {got}，应为 {want}。", name=verbatim(wrong[0]), e=e,
             h=h, got=got[wrong[0]], want=want[wrong[0]], key="parameter-shape")
    fail("MultiHeadAttention({e}, {h}{bias}) should hold the parameters {want}; missing: {missing}; not expected: "
         "{extra}. Name the layers as the statement does (the checks load weights by these names).",
         "MultiHeadAttention({e}, {h}{bias}) 应该有参数 {want}；缺少：{missing}；多出：{extra}。请按题目给层命名"
         "（检查按这些名字加载权重）。", e=e, h=h, bias="" if bias else ", bias=False",
         want=verbatim(", ".join(want)), missing=verbatim(", ".join(missing) or "-"),
         extra=verbatim(", ".join(extra) or "-"), key="parameter-names")


def draw_shapes(e, bias):
    """Weights of the right shapes (their values do not matter): for the names and shapes wanted."""
    z = torch.zeros(e, e)
    return {n: (z, torch.zeros(e) if bias else None) for n in "qkvo"}


def split_slips(x, w, h, **masks) -> list:
    b, t, e = x.shape
    d = e // h
    slips = [
        (formula(x, w, h, split="no-transpose", merge="no-transpose", **masks), Text(
            "it matches heads split by a view straight to [B, H, T, D] (and merged back the same way): that view cuts "
            "the sequence, not the features, into heads. View as [B, T, H, D] first, then transpose(1, 2).",
            "它与直接 view 成 [B, H, T, D] 来拆分多个头（并以同样方式合并）的结果一致：这样切开的是序列而不是特征。"
            "请先 view 成 [B, T, H, D]，再 transpose(1, 2)。"), "heads-split-order"),
        (formula(x, w, h, split="no-transpose", **masks), Text(
            "it matches heads split by a view straight to [B, H, T, D]: that view cuts the sequence, not the features, "
            "into heads. View as [B, T, H, D] first, then transpose(1, 2).",
            "它与直接 view 成 [B, H, T, D] 来拆分多个头的结果一致：这样切开的是序列而不是特征。请先 view 成 "
            "[B, T, H, D]，再 transpose(1, 2)。"), "heads-split-order"),
        (formula(x, w, h, merge="no-transpose", **masks), Text(
            "it matches the heads merged by a reshape of [B, H, T, D] straight to [B, T, E]: that interleaves heads and "
            "positions. Transpose back to [B, T, H, D] first, then reshape.",
            "它与把 [B, H, T, D] 直接 reshape 成 [B, T, E] 来合并多个头的结果一致：这样会把头和位置交错在一起。"
            "请先转置回 [B, T, H, D]，再 reshape。"), "heads-merge-order"),
        (formula(x, w, h, split="interleaved", merge="no-transpose", **masks), None, None),
        (formula(x, w, h, split="interleaved", **masks), Text(
            "it matches head i taking features i, i + {h}, i + 2 * {h}... (a view as [B, T, D, H]): head 0 holds features 0..D-1, "
            "head 1 the next D. View the last dimension as (H, D), not (D, H).",
            "它与头 i 取特征 i、i + {h}、i + 2 * {h}……（view 成 [B, T, D, H]）的结果一致：头 0 是特征 0..D-1，头 1 是接下来的 D 个。"
            "请把最后一维 view 成 (H, D)，而不是 (D, H)。", h=h), "heads-interleaved"),
        (formula(x, w, h, scale=1 / math.sqrt(e), **masks), Text(
            "it matches scores divided by sqrt(embed_dim) = sqrt({e}): the scale is sqrt(head_dim) = sqrt({d}), the "
            "size of one head.",
            "它与把分数除以 sqrt(embed_dim) = sqrt({e}) 的结果一致：缩放应为 sqrt(head_dim) = sqrt({d})，即单个头的大小。",
            e=e, d=d), "scale-by-d-model"),
        (formula(x, w, h, scale=1.0, **masks), Text(
            "it matches attention without the 1/sqrt(head_dim) scale.", "它与没有 1/sqrt(head_dim) 缩放的结果一致。"),
         "no-scale"),
        (formula(x, w, h, out=False, **masks), Text(
            "it matches the heads merged without out_proj: the merged heads go through the output projection.",
            "它与合并多个头之后没有经过 out_proj 的结果一致：合并后的结果还要经过输出投影。"), "no-out-proj"),
        (formula(x.transpose(0, 1), w, h, **masks).transpose(0, 1) if masks.get("padded") is None else None, Text(
            "it matches x read as [T, B, E], nn.MultiheadAttention's default (batch_first=False): here the batch comes "
            "first, x is [B, T, E], and each sequence attends within itself.",
            "它与把 x 当作 [T, B, E]（nn.MultiheadAttention 默认的 batch_first=False）的结果一致：这里 batch 在前，"
            "x 是 [B, T, E]，每个序列只在自己内部做注意力。"), "seq-first"),
    ]
    if packed():
        for order in ("".join(p) for p in itertools.permutations("qkv")):
            if order != "qkv":
                slips.append((formula(x, w, h, order=order, **masks), Text(
                    "it matches in_proj's output read as {order} instead of q, k, v: its first E features are q, the "
                    "next E k, the last E v.", "它与把 in_proj 的输出当作 {order} 而不是 q、k、v 的结果一致：前 E 个"
                    "特征是 q，接下来 E 个是 k，最后 E 个是 v。", order=verbatim(", ".join(order))), "qkv-order"))
    else:
        slips.append((formula(x, w, h, order="kqv", **masks), Text(
            "it matches q and k swapped (the queries from k_proj, the keys from q_proj).",
            "它与 q 和 k 对调（查询来自 k_proj，键来自 q_proj）的结果一致。"), "qk-swapped"))
    return slips


def first_wrong(got, want, rtol=1e-6, atol=1e-8) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_mha(got, want, what, slips):
    """`got` is nn.MultiheadAttention's output; else the first known slip it matches is named (`slips`: a function
    that computes them, called only for a wrong answer)."""
    got = expect_tensor(got, what, shape=want.shape, floating=True)
    if matches(got, want, rtol=1e-6, atol=1e-8):
        return
    for wrong, message, key in slips():
        if wrong is not None and not matches(wrong, want, rtol=1e-6, atol=1e-8) \
                and matches(got, wrong, rtol=1e-6, atol=1e-8):
            if message is None:  # two slips at once: both named by the checks of one at a time
                message, key = Text("it matches the heads split interleaved (a view as [B, T, D, H]) and merged without "
                                    "the transpose: view the features as (H, D), and transpose back before the merge.",
                                    "它与按交错方式拆分多个头（view 成 [B, T, D, H]）、合并时又没有转置的结果一致：请把特征 "
                                    "view 成 (H, D)，合并之前先转置回来。"), "heads-interleaved"
            fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，实际为 "
                      "{got:.4g}：{why}", what=what, why=message, **first_wrong(got, want)), key=key)
    expect_close(got, want, what, rtol=1e-6, atol=1e-8)


def draw_x(rng, b, t, e):
    return torch.randn(b, t, e, generator=rng, dtype=torch.float64)


# -- the checks -------------------------------------------------------------------------------------

@check("MultiHeadAttention holds the statement's projections, by name and shape", points=1,
       zh="MultiHeadAttention 含有题目要求的投影（名字和形状都对）")
def test_structure(submission, rng):
    h = randint(rng, 2, 4)
    e = h * randint(rng, 2, 3)
    run(submission, None, draw_weights(rng, e, True), h, bias=True)


@check("MultiHeadAttention(..., bias=False) has no biases and matches nn.MultiheadAttention's", points=1,
       zh="MultiHeadAttention(..., bias=False) 没有 bias，并与 nn.MultiheadAttention 的一致")
def test_no_bias(submission, rng):
    """bias=False on its own: a slip there costs this check only, not the ones built on the structure and values."""
    h = randint(rng, 2, 4)
    e = h * randint(rng, 2, 3)
    run(submission, None, draw_weights(rng, e, False), h, bias=False)
    b, t, h, d = 2, randint(rng, 2, 4), randint(rng, 2, 3), 2
    e = h * d
    x, w = draw_x(rng, b, t, e), draw_weights(rng, e, False)
    what = Text("MultiHeadAttention({e}, {h}, bias=False)(x{shape})", e=e, h=h, shape=list(x.shape))
    expect_mha(run(submission, x, w, h, bias=False), reference(x, w, h), what,
               lambda: split_slips(x, w, h) if t > 1 and h > 1 else [])


@check("MultiHeadAttention matches nn.MultiheadAttention with the same weights", points=2,
       zh="MultiHeadAttention 与加载了相同权重的 nn.MultiheadAttention 一致", depends="structure")
def test_values(submission, rng):
    h, d = randint(rng, 2, 4), randint(rng, 2, 3)
    t = randint(rng, 3, 5)
    b = t + 1 if randint(rng, 0, 1) else 2  # B != T: reading x as [T, B, E] changes the values
    cases = [(b, t, h, d, True), (1, 1, 1, 2, True)]  # bias=False: its own check
    for b, t, h, d, bias in cases:
        e = h * d
        x, w = draw_x(rng, b, t, e), draw_weights(rng, e, bias)
        what = Text("MultiHeadAttention({e}, {h}{bias})(x{shape})", e=e, h=h, bias="" if bias else ", bias=False",
                    shape=list(x.shape))
        got = run(submission, x, w, h, bias=bias)
        expect_mha(got, reference(x, w, h), what, lambda: split_slips(x, w, h) if t > 1 and h > 1 else [])


@check("causal=True lets position i attend positions 0..i only", points=2, zh="causal=True 时位置 i 只关注位置 0..i",
       depends="values")
def test_causal(submission, rng):
    h, d, t = randint(rng, 2, 3), 2, randint(rng, 3, 5)
    e = h * d
    x, w = draw_x(rng, 2, t, e), draw_weights(rng, e)
    what = Text("MultiHeadAttention({e}, {h})(x{shape}, causal=True)", e=e, h=h, shape=list(x.shape))
    got = run(submission, x, w, h, causal=True)

    def slips():
        return [(formula(x, w, h), Text("it matches attention with no mask: causal=True must hide the later positions.",
                                        "它与不加掩码的结果一致：causal=True 时必须挡住后面的位置。"), "causal-ignored"),
                (formula(x, w, h, causal="inverted"), Text(
                    "it matches the causal mask turned around (triu): position i may attend j only when j <= i (tril).",
                    "它与方向反了的因果掩码（triu）一致：位置 i 只能关注 j <= i 的位置 j（tril）。"), "causal-inverted"),
                (formula(x, w, h, causal=True, fill=0.0), MASK_ZEROS, "mask-zeros")] + split_slips(x, w, h, causal=True)

    expect_mha(got, reference(x, w, h, causal=True), what, slips)


MASK_ZEROS = Text("it matches masked scores set to 0 instead of -inf: exp(0) = 1, so the masked keys keep a weight.",
                  "它与把被掩盖的分数设为 0 而不是 -inf 的结果一致：exp(0) = 1，被掩盖的键仍然有权重。")


def draw_padded(rng, b, t, first_kept=False) -> torch.Tensor:
    """[B, T] bool, True at padding: every row pads a different number of positions (1..T-1), never all."""
    padded = torch.zeros(b, t, dtype=torch.bool)
    counts = (torch.randperm(t - 1, generator=rng) + 1)[:b].tolist()
    counts += [randint(rng, 1, t - 1) for _ in range(b - len(counts))]
    for i, n in enumerate(counts):
        where = torch.randperm(t - 1, generator=rng)[:n] + 1 if first_kept else torch.randperm(t, generator=rng)[:n]
        padded[i, where] = True
    return padded


@check("key_padding_mask hides the padding keys, as nn.MultiheadAttention's", points=2,
       zh="key_padding_mask 挡住了填充的键，与 nn.MultiheadAttention 的相同", depends="values")
def test_padding(submission, rng):
    d, t = 2, randint(rng, 4, 5)
    for b, h, causal in ((3, 3, False), (2, 2, True)):  # H == B: a [B, 1, T] mask lines up with the heads and runs
        e = h * d
        x, w = draw_x(rng, b, t, e), draw_weights(rng, e)
        padded = draw_padded(rng, b, t, first_kept=causal)
        what = Text("MultiHeadAttention({e}, {h})(x{shape}, key_padding_mask={mask}{causal})", e=e, h=h,
                    shape=list(x.shape), mask=verbatim(str(padded.int().tolist())),
                    causal=", causal=True" if causal else "")
        got = run(submission, x, w, h, key_padding_mask=padded, causal=causal)

        def slips():
            return [
                (formula(x, w, h, causal=causal), Text("it matches attention with key_padding_mask left out.",
                                                       "它与没有使用 key_padding_mask 的结果一致。"), "mask-ignored"),
                (formula(x, w, h, causal=causal, padded=padded, mask_axis="inverted"), Text(
                    "it matches the mask read the other way round: True in key_padding_mask marks the padding to ignore.",
                    "它与把掩码反过来理解的结果一致：key_padding_mask 中 True 表示要忽略的填充。"), "mask-inverted"),
                (formula(x, w, h, causal=causal, padded=padded, fill=0.0), MASK_ZEROS, "mask-zeros"),
                (formula(x, w, h, causal=causal, padded=padded, mask_axis="heads") if b == h else None, Text(
                    "it matches the mask of batch row i applied to head i: a [B, 1, T] mask broadcasts against the scores "
                    "[B, H, T, T] from the right, so B lines up with H. Index it as key_padding_mask[:, None, None, :].",
                    "它与把第 i 个样本的掩码用在第 i 个头上的结果一致：[B, 1, T] 的掩码与 [B, H, T, T] 的分数从右边对齐广播，"
                    "于是 B 对上了 H。请写成 key_padding_mask[:, None, None, :]。"), "mask-broadcast"),
            ] + split_slips(x, w, h, causal=causal, padded=padded)

        expect_mha(got, reference(x, w, h, causal, padded), what, slips)


@check("MultiHeadAttention(embed_dim, num_heads) raises ValueError unless num_heads divides embed_dim", points=1,
       zh="num_heads 不能整除 embed_dim 时 MultiHeadAttention(embed_dim, num_heads) 抛出 ValueError", depends="values")
def test_divisible(submission, rng):
    h = randint(rng, 3, 4)
    e = h * randint(rng, 2, 3) + randint(rng, 1, h - 1)
    result = submission.probe(construct, e, h, what=Text("`MultiHeadAttention({e}, {h})`", e=e, h=h))
    if result["raised"] != "ValueError":
        got = Text("it raised {name}", "它抛出了 {name}", name=verbatim(result["raised"])) if result["raised"] \
            else Text("it was built without an error", "它没有报错就建好了")
        fail("MultiHeadAttention({e}, {h}) should raise ValueError ({e} features cannot be split into {h} equal "
             "heads), but {got}. Check embed_dim % num_heads in __init__.",
             "MultiHeadAttention({e}, {h}) 应抛出 ValueError（{e} 个特征无法平均分成 {h} 个头），但{got}。请在 __init__ "
             "中检查 embed_dim % num_heads。", e=e, h=h, got=got, key="not-divisible-accepted")


@check("MultiHeadAttention is written by hand (no nn.MultiheadAttention)", points=1,
       zh="MultiHeadAttention 是自己写的（不用 nn.MultiheadAttention）", depends="values")
def test_by_hand(submission, rng):
    h = randint(rng, 2, 3)
    e = 2 * h
    run(submission, draw_x(rng, 2, 3, e), draw_weights(rng, e), h, causal=True)

