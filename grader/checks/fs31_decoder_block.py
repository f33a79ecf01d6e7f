"""Hidden checks of fs31: a pre-norm Transformer decoder block (RMSNorm, causal attention, SwiGLU, two residuals).

A probe builds the learner's DecoderBlock in the sandbox, reports its parameters (names and shapes), converts it
to float64, loads weights the judge drew into them by name (the norms' weights too, drawn away from 1 so that a
norm without its weight shows) and runs it. The expectation is computed here with torch's own pieces on the same
draw: F.rms_norm, F.scaled_dot_product_attention(is_causal=True) with the key/value heads repeated, F.silu. A
wrong output is compared with the known slips computed the same way: post-norm (the norm after the addition), the
residual added to the normed copy, no causal mask, the SiLU on up_proj, GELU for SiLU, LayerNorm for RMSNorm,
the scale sqrt(d_model), the heads merged without the transpose, the feed-forward without its residual, and in the
GQA draw the other assignment of query heads to key/value heads. The eps check draws inputs whose root mean square
is near sqrt(eps), where eps matters, and names an eps left at nn.RMSNorm's default or at 1e-6, and eps outside
the square root. The causal check changes the last position and expects no earlier output to move.

Kata variants: `variant("attention")`: mha (`DecoderBlock(d_model, n_heads, d_hidden, eps)`) or gqa
(`DecoderBlock(d_model, n_heads, n_kv_heads, d_hidden, eps)`, query head h reading key/value head
h // (n_heads // n_kv_heads)); the sizes, the expectation and the slips follow the draw.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import Text, check, expect_close, expect_tensor, fail, matches, probe, variant, verbatim

RTOL, ATOL = 1e-6, 1e-8

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def run_block(module, args, eps, weights, xs):
    """Build DecoderBlock(*args) (with eps= unless None); describe its parameters; when they have the names and
    shapes of `weights`, convert it to float64, load them and run it on each x of xs."""
    torch.manual_seed(0)
    m = module.DecoderBlock(*args) if eps is None else module.DecoderBlock(*args, eps=eps)
    info = {"is_module": isinstance(m, nn.Module), "type": type(m).__name__}
    if not info["is_module"]:
        return info
    info["params"] = {name: list(p.shape) for name, p in m.named_parameters()}
    params = dict(m.named_parameters())
    if not xs or any(name not in params or list(params[name].shape) != list(w.shape) for name, w in weights.items()):
        return info
    m.double()
    params = dict(m.named_parameters())
    with torch.no_grad():
        for name, w in weights.items():
            params[name].copy_(w)
    outs = []
    for x in xs:
        out = m(x)
        outs.append(out.detach() if isinstance(out, torch.Tensor) else out)
    info["outs"] = outs
    return info


@probe
def construct(module, args):
    """DecoderBlock(*args): the name of what it raised, or None."""
    try:
        module.DecoderBlock(*args)
    except Exception as exc:  # the exception is what is judged
        return type(exc).__name__
    return None


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def gqa() -> bool:
    return variant("attention")["name"] == "gqa"


def args_of(e, h, hkv, f) -> list:
    """The constructor's positional arguments in this draw."""
    return [e, h, hkv, f] if gqa() else [e, h, f]


def draw_weights(rng, e, h, hkv, f, out_scale=1.0) -> dict:
    """The block's weights in float64, named as the statement names them; the norms' weights away from 1."""
    d = e // h

    def linear(rows, cols, scale=1.0):
        return torch.randn(rows, cols, generator=rng, dtype=torch.float64) * scale / math.sqrt(cols)

    def norm():
        return 0.5 + torch.rand(e, generator=rng, dtype=torch.float64)

    return {"attn_norm.weight": norm(), "q_proj.weight": linear(h * d, e), "k_proj.weight": linear(hkv * d, e),
            "v_proj.weight": linear(hkv * d, e), "o_proj.weight": linear(e, h * d, out_scale),
            "ffn_norm.weight": norm(), "gate_proj.weight": linear(f, e), "up_proj.weight": linear(f, e),
            "down_proj.weight": linear(e, f, out_scale)}


def kv_of(h, hkv, tiled=False) -> list[int]:
    """The key/value head each query head reads: consecutive groups (the statement's), or tiled."""
    return [i % hkv if tiled else i // (h // hkv) for i in range(h)]


def norm(y, weight, eps, slip=None):
    if slip == "layer-norm":
        return F.layer_norm(y, y.shape[-1:], weight, eps=eps)
    if slip == "eps-outside-sqrt":
        return y / (y.pow(2).mean(-1, keepdim=True).sqrt() + eps) * weight
    return F.rms_norm(y, y.shape[-1:], weight, eps=eps)


def attention(y, w, h, hkv, slip=None):
    b, t, e = y.shape
    d = e // h
    q = (y @ w["q_proj.weight"].t()).view(b, t, h, d).transpose(1, 2)
    k = (y @ w["k_proj.weight"].t()).view(b, t, hkv, d).transpose(1, 2)
    v = (y @ w["v_proj.weight"].t()).view(b, t, hkv, d).transpose(1, 2)
    index = kv_of(h, hkv, tiled=slip == "wrong-grouping")
    k, v = k[:, index], v[:, index]
    o = F.scaled_dot_product_attention(q, k, v, is_causal=slip != "causal-ignored",
                                       scale=1 / math.sqrt(e) if slip == "scale-by-d-model" else None)
    o = o.reshape(b, t, h * d) if slip == "heads-merge-order" else o.transpose(1, 2).reshape(b, t, h * d)
    return o @ w["o_proj.weight"].t()


def ffn(y, w, slip=None):
    gate, up = y @ w["gate_proj.weight"].t(), y @ w["up_proj.weight"].t()
    if slip == "silu-on-up":
        gate, up = up, gate
    act = F.gelu(gate) if slip == "gelu-for-silu" else F.silu(gate)
    return (act * up) @ w["down_proj.weight"].t()


def block(x, w, h, hkv, eps, slip=None):
    """The pre-norm block in float64, with one slip at a time."""
    if slip == "post-norm":
        h1 = norm(x + attention(x, w, h, hkv), w["attn_norm.weight"], eps)
        return norm(h1 + ffn(h1, w), w["ffn_norm.weight"], eps)
    n1 = norm(x, w["attn_norm.weight"], eps, slip)
    h1 = (n1 if slip == "residual-normed" else x) + attention(n1, w, h, hkv, slip)
    n2 = norm(h1, w["ffn_norm.weight"], eps, slip)
    f = ffn(n2, w, slip)
    if slip == "ffn-no-residual":
        return f
    return (n2 if slip == "residual-normed" else h1) + f


SLIPS = (  # (key, why): a slip and its words
    ("post-norm", Text("it matches post-norm, the norm applied after each residual addition: pre-norm normalises "
                      "the sub-layer's input, h = x + attention(attn_norm(x)), and leaves the stream unnormalised.",
                      "它与 post-norm（每次残差相加之后再做 norm）的结果一致：pre-norm 归一化的是子层的输入，"
                      "h = x + attention(attn_norm(x))，残差流本身不做归一化。")),
    ("residual-normed", Text("it matches the residual added to the normed copy, attn_norm(x) + attention(...): the "
                            "residual is the stream x itself, h = x + attention(attn_norm(x)).",
                            "它与把残差加到归一化后的副本上（attn_norm(x) + attention(...)）的结果一致：残差是残差流 x "
                            "本身，h = x + attention(attn_norm(x))。")),
    ("causal-ignored", Text("it matches attention with no mask: in a decoder, position i attends positions 0..i "
                           "only (is_causal=True, or the future masked to -inf before the softmax).",
                           "它与不加掩码的 attention 结果一致：解码器中位置 i 只能关注位置 0..i（is_causal=True，"
                           "或在 softmax 之前把未来的位置填成 -inf）。")),
    ("silu-on-up", Text("it matches the SiLU put on up_proj: SwiGLU is down_proj(silu(gate_proj(n)) * up_proj(n)), "
                       "the activation on the gate.",
                       "它与把 SiLU 放在 up_proj 上的结果一致：SwiGLU 是 down_proj(silu(gate_proj(n)) * up_proj(n))，"
                       "激活作用在 gate 上。")),
    ("gelu-for-silu", Text("it matches GELU in the feed-forward: SwiGLU's activation is SiLU (x * sigmoid(x)).",
                 "它与在前馈中用 GELU 的结果一致：SwiGLU 的激活是 SiLU（x * sigmoid(x)）。")),
    ("layer-norm", Text("it matches LayerNorm (the mean subtracted): RMSNorm only divides by the root mean square.",
                       "它与 LayerNorm（减去了均值）的结果一致：RMSNorm 只除以均方根。")),
    ("scale-by-d-model", Text("it matches scores divided by sqrt(d_model): the scale is sqrt(head_dim).",
                             "它与把分数除以 sqrt(d_model) 的结果一致：缩放应为 sqrt(head_dim)。")),
    ("heads-merge-order", Text("it matches the heads merged by a reshape of [B, H, T, D] straight to [B, T, d_model]: "
                              "transpose back to [B, T, H, D] first.",
                              "它与把 [B, H, T, D] 直接 reshape 成 [B, T, d_model] 来合并多个头的结果一致：请先转置回 "
                              "[B, T, H, D]。")),
    ("ffn-no-residual", Text("it matches the feed-forward's output without its residual: the block returns "
                            "h + ffn(ffn_norm(h)).",
                            "它与前馈的输出不加残差的结果一致：块返回的是 h + ffn(ffn_norm(h))。")),
    ("wrong-grouping", Text("it matches query head h reading key/value head h % n_kv_heads (the heads tiled, repeat): "
                           "consecutive query heads share a key/value head, k.repeat_interleave(groups, dim=1).",
                           "它与查询头 h 读取键/值头 h % n_kv_heads（整体平铺，repeat）的结果一致：相邻的查询头共享一个"
                           "键/值头，k.repeat_interleave(groups, dim=1)。")),
)


EPS_DEFAULT = Text("the norms ignore the block's eps: nn.RMSNorm(d_model) without eps= uses the dtype's machine "
                   "epsilon. Pass eps=eps to both.", "两个 norm 没有用块的 eps：不传 eps= 的 nn.RMSNorm(d_model) 会用该 "
                   "dtype 的机器精度。请给两个 norm 都传 eps=eps。")


def run(submission, sizes, w, xs, eps=None):
    """The learner's block built with `sizes` (and eps=), with the weights `w` loaded, on each x of xs."""
    e, h, hkv, f = sizes
    args = args_of(e, h, hkv, f)
    what = Text("`DecoderBlock({args})`", args=verbatim(", ".join(map(str, args)) + (f", eps={eps}" if eps else "")))
    info = submission.probe(run_block, args, eps, w, xs, what=what)
    if not info["is_module"]:
        fail("DecoderBlock(...) should be an nn.Module, got a {type}: derive it from nn.Module and call "
             "super().__init__() first.", "DecoderBlock(...) 应该是 nn.Module，实际是 {type}：让它继承 "
             "nn.Module，并先调用 super().__init__()。", type=verbatim(info["type"]), key="not-a-module")
    want = {name: list(t.shape) for name, t in w.items()}
    got = info["params"]
    if got != want:
        fail("{what} should hold exactly {want} (two norms of their own, no biases); it holds {got}.",
             "{what} 应恰好含有 {want}（两个各自的 norm，没有偏置）；实际含有 {got}。", what=what,
             want=verbatim(", ".join(f"{n} {s}" for n, s in want.items())),
             got=verbatim(", ".join(f"{n} {s}" for n, s in got.items()) or "-"), key="parameters")
    return what, info.get("outs", [])


def first_wrong(got, want) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=RTOL, atol=ATOL)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_block(submission, rng, b, t, sizes, slips=True):
    """The learner's block on x [b, t, d_model] with fresh weights matches the reference; a known slip is named."""
    e, h, hkv, f = sizes
    x = torch.randn(b, t, e, generator=rng, dtype=torch.float64)
    w = draw_weights(rng, e, h, hkv, f)
    what, outs = run(submission, sizes, w, [x])
    got = expect_tensor(outs[0], Text("{what}(x{shape})", what=what, shape=list(x.shape)), shape=[b, t, e],
                        floating=True)
    want = block(x, w, h, hkv, 1e-6)
    if matches(got, want, rtol=RTOL, atol=ATOL):
        return
    names = [(s, why) for s, why in SLIPS if s != "wrong-grouping" or 1 < hkv < h] if slips else []
    for slip, why in names:
        wrong = block(x, w, h, hkv, 1e-6, slip)
        if not matches(wrong, want, rtol=RTOL, atol=ATOL) and matches(got, wrong, rtol=RTOL, atol=ATOL):
            fail(Text("{what}(x){at} should be {want:.4g}, got {got:.4g}: {why}", "{what}(x){at} 应为 {want:.4g}，实际为 "
                      "{got:.4g}：{why}", what=what, why=why, **first_wrong(got, want)), key=slip)
    if slips and matches(got, block(x, w, h, hkv, torch.finfo(torch.float64).eps), rtol=RTOL, atol=ATOL):
        fail(Text("{what}(x){at} should be {want:.4g}, got {got:.4g}: {why}", "{what}(x){at} 应为 {want:.4g}，实际为 "
                  "{got:.4g}：{why}", what=what, why=EPS_DEFAULT, **first_wrong(got, want)), key="eps-not-passed")
    expect_close(got, want, Text("{what}(x{shape})", what=what, shape=list(x.shape)), rtol=RTOL, atol=ATOL)


def heads(rng) -> tuple[int, int]:
    """(n_heads, n_kv_heads) for the values check: 1 < n_kv_heads < n_heads in the GQA draw."""
    if gqa():
        return ((4, 2), (6, 2), (6, 3))[randint(rng, 0, 2)]
    h = randint(rng, 2, 4)
    return h, h


# -- the checks -------------------------------------------------------------------------------------

@check("DecoderBlock holds the statement's two norms and seven projections", points=1,
       zh="DecoderBlock 含有题目要求的两个 norm 和七个投影")
def test_structure(submission, rng):
    h, hkv = heads(rng)
    e, f = h * randint(rng, 2, 3), randint(rng, 5, 9)
    run(submission, (e, h, hkv, f), draw_weights(rng, e, h, hkv, f), [])


@check("DecoderBlock matches a pre-norm block computed with torch's RMSNorm, causal attention and SiLU", points=3,
       zh="DecoderBlock 与用 torch 的 RMSNorm、因果 attention 和 SiLU 算出的 pre-norm 块一致", depends="structure")
def test_values(submission, rng):
    h, hkv = heads(rng)
    expect_block(submission, rng, 2, randint(rng, 3, 5), (h * randint(rng, 2, 3), h, hkv, randint(rng, 5, 9)))


@check("no output depends on a later position", points=2, zh="任何输出都不依赖于后面的位置", depends="structure")
def test_causal(submission, rng):
    h, hkv = heads(rng)
    e, f, t = h * 2, randint(rng, 5, 9), randint(rng, 3, 5)
    x = torch.randn(2, t, e, generator=rng, dtype=torch.float64)
    changed = x.clone()
    changed[:, -1] = torch.randn(2, e, generator=rng, dtype=torch.float64)
    what, outs = run(submission, (e, h, hkv, f), draw_weights(rng, e, h, hkv, f), [x, changed])
    before, after = (expect_tensor(o, Text("{what}(x{shape})", what=what, shape=list(x.shape)), shape=[2, t, e],
                                   floating=True) for o in outs)
    if not matches(after[:, :-1], before[:, :-1], rtol=RTOL, atol=ATOL):
        moved = sorted({int(i) for i in (~torch.isclose(after[:, :-1], before[:, :-1], rtol=RTOL, atol=ATOL))
                        .nonzero()[:, 1]})
        fail("Changing only the last position ({last}) of x changed the outputs at positions {moved}: they attend a "
             "later position. Mask the future in the attention (is_causal=True, or -inf above the diagonal).",
             "只改变 x 的最后一个位置（{last}）后，位置 {moved} 的输出也变了：它们关注了后面的位置。请在 attention "
             "中挡住未来（is_causal=True，或在对角线以上填 -inf）。", last=t - 1, moved=moved, key="causal-ignored")


@check("one position, one head and the sizes at their edges work too", points=1,
       zh="一个位置、一个头以及处在边界的尺寸也正确", depends="values")
def test_edges(submission, rng):
    expect_block(submission, rng, 1, 1, (4, 2, 2 if not gqa() else 1, 3))  # one position
    expect_block(submission, rng, 2, 3, (randint(rng, 3, 5), 1, 1, randint(rng, 2, 5)))  # one head
    if gqa():
        expect_block(submission, rng, 2, 3, (8, 4, 1, 6))  # multi-query
        expect_block(submission, rng, 2, 3, (6, 3, 3, 5))  # as many key/value heads as query heads


@check("the block's eps reaches both norms, inside the square root", points=2,
       zh="块的 eps 传到两个 norm，并且在平方根之内", depends="values")
def test_eps(submission, rng):
    h, hkv = heads(rng)
    e, f, t = h * 2, randint(rng, 5, 9), randint(rng, 2, 4)
    for eps, scale in ((1e-2, 0.1), (None, 1e-3)):
        x = scale * torch.randn(2, t, e, generator=rng, dtype=torch.float64)
        w = draw_weights(rng, e, h, hkv, f, out_scale=scale)  # the stream stays small: eps matters in ffn_norm too
        what, outs = run(submission, (e, h, hkv, f), w, [x], eps=eps)
        shown = Text("{what}(x) with |x| near {scale}", "{what}(x)，|x| 约为 {scale}", what=what, scale=scale)
        got = expect_tensor(outs[0], shown, shape=[2, t, e], floating=True)
        want = block(x, w, h, hkv, eps or 1e-6)
        if matches(got, want, rtol=RTOL, atol=ATOL):
            continue
        causes = [(block(x, w, h, hkv, torch.finfo(torch.float64).eps), EPS_DEFAULT, "eps-not-passed"),
            (block(x, w, h, hkv, 1e-6), Text("the norms use eps = 1e-6 whatever eps the block was given: pass the "
                                             "constructor's eps on.", "无论块拿到什么 eps，两个 norm 都用 "
                                             "eps = 1e-6：请把构造函数的 eps 传下去。"), "eps-not-passed"),
            (block(x, w, h, hkv, eps or 1e-6, "eps-outside-sqrt"), Text(
                "it matches eps added after the square root: RMSNorm divides by sqrt(mean(x ** 2) + eps).",
                "它与在平方根之后才加 eps 的结果一致：RMSNorm 除以 sqrt(mean(x ** 2) + eps)。"), "eps-outside-sqrt")]
        for wrong, why, key in causes:
            if not matches(wrong, want, rtol=RTOL, atol=ATOL) and matches(got, wrong, rtol=RTOL, atol=ATOL):
                fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，实际为 "
                          "{got:.4g}：{why}", what=shown, why=why, **first_wrong(got, want)), key=key)
        expect_close(got, want, shown, rtol=RTOL, atol=ATOL)


@check("DecoderBlock raises ValueError for head sizes that do not divide", points=1,
       zh="头的尺寸不能整除时 DecoderBlock 抛出 ValueError", depends="values")
def test_config(submission, rng):
    d = randint(rng, 2, 3)
    cases = [((4 * d + 1, 4, 4, 6), Text("{e} features cannot be split into 4 equal heads",
                                         "{e} 个特征无法平均分成 4 个头", e=4 * d + 1))]
    if gqa():
        cases.append(((6 * d, 6, 4, 6), Text("4 key/value heads cannot serve 6 query heads in equal groups",
                                             "4 个键/值头无法把 6 个查询头平均分组")))
    for (e, h, hkv, f), why in cases:
        args = args_of(e, h, hkv, f)
        raised = submission.probe(construct, args, what=Text("`DecoderBlock({args})`",
                                                             args=verbatim(", ".join(map(str, args)))))
        if raised != "ValueError":
            got = Text("it raised {name}", "它抛出了 {name}", name=verbatim(raised)) if raised else Text(
                "it was built without an error", "它没有报错就建好了")
            fail("DecoderBlock({args}) should raise ValueError ({why}), but {got}. Check the sizes in __init__.",
                 "DecoderBlock({args}) 应抛出 ValueError（{why}），但{got}。请在 __init__ 中检查尺寸。",
                 args=verbatim(", ".join(map(str, args))), why=why, got=got, key="sizes-not-checked")
