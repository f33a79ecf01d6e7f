"""Hidden checks of fs33: multi-head latent attention (DeepSeek-V2): a low-rank KV latent and decoupled RoPE.

`rope` is called on float64 inputs the judge drew and compared with RoPE computed here for the drawn pairing. A
probe builds the learner's MultiHeadLatentAttention, reports its parameters (names and shapes), converts it to
float64, loads weights the judge drew by name and runs latent(x) and forward(x). The expectations are computed here
on the same draw, written out with torch: the latent cat(c_kv, rope(k_pe)); per head the query cat(q_nope,
rope(q_pe)), the key cat(k_nope, the shared rotated k_pe), the value from kv_up's per-head layout, the causal
softmax scaled by 1/sqrt(head_dim + rope_dim). Known slips are named when a wrong answer matches them: the other
RoPE pairing, the exponent i/D, positions from 1, the scale sqrt(head_dim), a rope part left unrotated (query, key
or the cached key), kv_up split as all keys then all values, the rope part of the query taken first, no causal
mask, the heads merged without the transpose. The causal check changes the last position and expects no earlier
output to move.

Kata variants: `variant("rope")`: interleaved (pairs (2i, 2i + 1)) or halves (pairs (i, i + D/2)); the reference
and the naming of the other follow the draw.
"""

import math

import torch
from torch import nn

from grader.checking import Text, check, expect_close, expect_tensor, fail, matches, probe, variant, verbatim
from grader.devices import expect_cpu_module

RTOL, ATOL = 1e-5, 1e-7

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def run_mla(module, sizes, weights, xs):
    """Build MultiHeadLatentAttention(*sizes); describe its parameters; when they have the names and shapes of
    `weights`, convert it to float64, load them and run latent(x) and forward(x) for each x of xs."""
    torch.manual_seed(0)
    m = module.MultiHeadLatentAttention(*sizes)
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
        info["latent"] = [m.latent(x) for x in xs]
        info["out"] = [m(x) for x in xs]
    return info


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def interleaved() -> bool:
    return variant("rope")["name"] == "interleaved"


def rope_ref(x, pairs=None, slip=None, base=10000.0):
    """RoPE over x [..., T, D] in float64 at positions 0..T-1 (or with one slip)."""
    pairs = interleaved() if pairs is None else pairs
    t, d = x.shape[-2], x.shape[-1]
    exponent = torch.arange(d // 2, dtype=torch.float64) / d if slip == "rope-exponent" else \
        torch.arange(0, d, 2, dtype=torch.float64) / d
    positions = torch.arange(t, dtype=torch.float64) + (1 if slip == "rope-positions" else 0)
    angles = positions[:, None] * base ** -exponent
    cos, sin = angles.cos(), angles.sin()
    if pairs:
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def draw_weights(rng, dm, h, d, c, r) -> dict:
    def linear(rows, cols):
        return torch.randn(rows, cols, generator=rng, dtype=torch.float64) / math.sqrt(cols)

    return {"q_proj.weight": linear(h * (d + r), dm), "kv_down.weight": linear(c + r, dm),
            "kv_up.weight": linear(h * 2 * d, c), "o_proj.weight": linear(dm, h * d)}


def latent_ref(x, w, c, r, slip=None):
    down = x @ w["kv_down.weight"].t()
    c_kv, k_pe = down[..., :c], down[..., c:]
    if slip == "latent-not-rotated":
        return down
    return torch.cat([c_kv, rope_ref(k_pe, pairs=(not interleaved()) if slip == "other-pairing" else None,
                                     slip=slip)], dim=-1)


def mla_ref(x, w, sizes, slip=None):
    """MLA in float64, with one slip at a time."""
    _, h, d, c, r = sizes
    b, t, _ = x.shape
    pairs = (not interleaved()) if slip == "other-pairing" else None
    q = (x @ w["q_proj.weight"].t()).view(b, t, h, d + r).transpose(1, 2)
    q_pe, q_nope = (q[..., :r], q[..., r:]) if slip == "q-rope-first" else (q[..., d:], q[..., :d])
    down = x @ w["kv_down.weight"].t()
    c_kv, k_pe = down[..., :c], down[..., c:]
    if slip != "no-rope-k":
        k_pe = rope_ref(k_pe, pairs, slip if slip in ("rope-exponent", "rope-positions") else None)
    if slip != "no-rope-q":
        q_pe = rope_ref(q_pe, pairs, slip if slip in ("rope-exponent", "rope-positions") else None)
    up = c_kv @ w["kv_up.weight"].t()
    if slip == "kv-split-whole":
        k_nope, v = (part.reshape(b, t, h, d).transpose(1, 2) for part in up.split([h * d, h * d], dim=-1))
    else:
        kv = up.view(b, t, h, 2 * d).transpose(1, 2)
        k_nope, v = kv[..., :d], kv[..., d:]
    k = torch.cat([k_nope, k_pe[:, None].expand(b, h, t, r)], dim=-1)
    q = torch.cat([q_nope, q_pe], dim=-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d if slip == "scale-head-dim" else d + r)
    if slip != "causal-ignored":
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), -math.inf)
    out = torch.softmax(scores, dim=-1) @ v
    out = out.reshape(b, t, h * d) if slip == "heads-merge-order" else out.transpose(1, 2).reshape(b, t, h * d)
    return out @ w["o_proj.weight"].t()


def other_pairing() -> Text:
    if interleaved():
        return Text("it matches RoPE on the pairs (i, i + D/2), the two halves: here the pairs are (2i, 2i + 1), "
                    "x[..., 0::2] with x[..., 1::2].", "它与在 (i, i + D/2)（前后两半）上做 RoPE 的结果一致：这里的配对是 "
                    "(2i, 2i + 1)，即 x[..., 0::2] 与 x[..., 1::2]。")
    return Text("it matches RoPE on the pairs (2i, 2i + 1), interleaved: here the pairs are (i, i + D/2), the first "
                "half with the second.", "它与在 (2i, 2i + 1)（交错配对）上做 RoPE 的结果一致：这里的配对是 "
                "(i, i + D/2)，前一半与后一半。")


ROPE_SLIPS = (  # (key, why): a slip of RoPE and its words
    ("rope-exponent", Text("it matches the angles base ** (-i / D) for pair i: the exponent is -2i / D.",
                           "它与第 i 对的角度用 base ** (-i / D) 的结果一致：指数应为 -2i / D。")),
    ("rope-positions", Text("it matches positions counted from 1: the first position is 0 (it is not rotated).",
                            "它与位置从 1 开始数的结果一致：第一个位置是 0（它不旋转）。")),
)

MLA_SLIPS = ROPE_SLIPS + (  # (key, why): a slip of the attention and its words
    ("scale-head-dim", Text("it matches scores divided by sqrt(head_dim): the dot product runs over head_dim + "
                            "rope_dim features, so the scale is 1/sqrt(head_dim + rope_dim).",
                            "它与把分数除以 sqrt(head_dim) 的结果一致：点积有 head_dim + rope_dim 个特征，所以缩放是 "
                            "1/sqrt(head_dim + rope_dim)。")),
    ("no-rope-q", Text("it matches the queries' rope part left unrotated: rope(q_pe) per head.",
                       "它与查询的 rope 部分没有旋转的结果一致：每个头都要做 rope(q_pe)。")),
    ("no-rope-k", Text("it matches the shared key k_pe left unrotated: rope(k_pe) before it joins each head's key.",
                       "它与共用的键 k_pe 没有旋转的结果一致：在它并入每个头的键之前先做 rope(k_pe)。")),
    ("kv-split-whole", Text("it matches kv_up's output split as all heads' keys, then all heads' values: it is laid "
                            "out per head, viewed [B, T, H, 2 * head_dim], each head's key then its value.",
                            "它与把 kv_up 的输出拆成先是所有头的键、再是所有头的值的结果一致：它是按头排布的，view 成 "
                            "[B, T, H, 2 * head_dim]，每个头先是键，再是值。")),
    ("q-rope-first", Text("it matches each head's query split as the rope part first: it is head_dim features "
                          "without position, then rope_dim to rotate.", "它与把每个头的查询拆成 rope 部分在前的结果"
                          "一致：应是先 head_dim 个不带位置的特征，再是 rope_dim 个要旋转的特征。")),
    ("causal-ignored", Text("it matches attention with no mask: position i attends positions 0..i only.",
                            "它与不加掩码的 attention 结果一致：位置 i 只能关注位置 0..i。")),
    ("heads-merge-order", Text("it matches the heads merged by a reshape of [B, H, T, D] straight to [B, T, H * D]: "
                               "transpose back to [B, T, H, D] first.", "它与把 [B, H, T, D] 直接 reshape 成 "
                               "[B, T, H * D] 来合并多个头的结果一致：请先转置回 [B, T, H, D]。")),
)


def diagnose(got, want, what, causes):
    """Fail naming the first cause (wrong, why, key) that explains got, else with expect_close's words."""
    if matches(got, want, rtol=RTOL, atol=ATOL):
        return
    for wrong, why, key in causes:
        if not matches(wrong, want, rtol=RTOL, atol=ATOL) and matches(got, wrong, rtol=RTOL, atol=ATOL):
            fail(Text("{what} is not right: {why}", "{what} 不对：{why}", what=what, why=why), key=key)
    expect_close(got, want, what, rtol=RTOL, atol=ATOL)


def run(submission, sizes, w, xs):
    what = Text("`MultiHeadLatentAttention({sizes})`", sizes=verbatim(", ".join(map(str, sizes))))
    info = submission.probe(run_mla, list(sizes), w, xs, what=what)
    if not info["is_module"]:
        fail("MultiHeadLatentAttention(...) should be an nn.Module, got a {type}: derive it from nn.Module and call "
             "super().__init__() first.", "MultiHeadLatentAttention(...) 应该是 nn.Module，实际是 {type}：让它继承 "
             "nn.Module，并先调用 super().__init__()。", type=verbatim(info["type"]), key="not-a-module")
    want = {name: list(t.shape) for name, t in w.items()}
    if info["params"] != want:
        fail("{what} should hold exactly {want} (no biases); it holds {got}.", "{what} 应恰好含有 {want}（没有偏置）；"
             "实际含有 {got}。", what=what, want=verbatim(", ".join(f"{n} {s}" for n, s in want.items())),
             got=verbatim(", ".join(f"{n} {s}" for n, s in info["params"].items()) or "-"), key="parameters")
    return what, info


def draw_sizes(rng) -> tuple:
    """(d_model, n_heads, head_dim, kv_rank, rope_dim): kv_rank below n_heads * 2 * head_dim, rope_dim even and >= 4
    (two pairs at least, so that the pairings differ)."""
    h, d = randint(rng, 2, 3), randint(rng, 3, 4)
    return randint(rng, 8, 12), h, d, randint(rng, 3, 5), 2 * randint(rng, 2, 3)


def expect_mla(submission, rng, b, t, sizes):
    dm, h, d, c, r = sizes
    x = torch.randn(b, t, dm, generator=rng, dtype=torch.float64)
    w = draw_weights(rng, dm, h, d, c, r)
    what, info = run(submission, sizes, w, [x])
    shown = Text("{what}.latent(x{shape})", what=what, shape=list(x.shape))
    got = expect_tensor(info["latent"][0], shown, shape=[b, t, c + r], floating=True)
    diagnose(got, latent_ref(x, w, c, r), shown, [
        (latent_ref(x, w, c, r, "other-pairing"), other_pairing(), "other-pairing"),
        (latent_ref(x, w, c, r, "latent-not-rotated"), Text(
            "it matches k_pe cached unrotated: the cache keeps rope(k_pe), rotated once when it is written.",
            "它与缓存未旋转的 k_pe 的结果一致：缓存保存的是 rope(k_pe)，在写入时旋转一次。"), "latent-not-rotated")]
        + [(latent_ref(x, w, c, r, slip), why, slip) for slip, why in ROPE_SLIPS])
    shown = Text("{what}(x{shape})", what=what, shape=list(x.shape))
    got = expect_tensor(info["out"][0], shown, shape=[b, t, dm], floating=True)
    diagnose(got, mla_ref(x, w, sizes), shown, [(mla_ref(x, w, sizes, "other-pairing"), other_pairing(),
                                                 "other-pairing")]
             + [(mla_ref(x, w, sizes, slip), why, slip) for slip, why in MLA_SLIPS])
    return what, info


# -- the checks -------------------------------------------------------------------------------------

@check("MultiHeadLatentAttention holds q_proj, kv_down, kv_up and o_proj of the statement's shapes", points=1,
       zh="MultiHeadLatentAttention 含有题目要求形状的 q_proj、kv_down、kv_up 和 o_proj")
def test_structure(submission, rng):
    sizes = draw_sizes(rng)
    run(submission, sizes, draw_weights(rng, *sizes), [])


@check("rope rotates the statement's pairs by position * base ** (-2i / D)", points=1,
       zh="rope 按 position * base ** (-2i / D) 旋转题目规定的特征对")
def test_rope(submission, rng):
    for shape in ((2, 3, randint(rng, 5, 7), 6), (1, 4, 8)):
        x = torch.randn(*shape, generator=rng, dtype=torch.float64)
        what = Text("rope(x{shape})", shape=list(shape))
        got = expect_tensor(submission.rope(x), what, shape=list(shape), floating=True)
        diagnose(got, rope_ref(x), what, [(rope_ref(x, pairs=not interleaved()), other_pairing(), "other-pairing")]
                 + [(rope_ref(x, slip=slip), why, slip) for slip, why in ROPE_SLIPS])
    x = torch.randn(1, randint(rng, 3, 5), 6, generator=rng)  # float32 in, float32 out
    what = Text("rope(x) for x in float32", "x 为 float32 时的 rope(x)")
    got = expect_tensor(submission.rope(x), what, shape=list(x.shape), dtype=torch.float32)
    expect_close(got, rope_ref(x.double()).float(), what, rtol=1e-5, atol=1e-5)


@check("latent(x) is what the cache keeps: the latent and the rotated shared key", points=2,
       zh="latent(x) 是缓存保存的内容：潜变量和旋转后的共用键", depends="structure")
def test_latent(submission, rng):
    dm, h, d, c, r = draw_sizes(rng)
    x = torch.randn(2, randint(rng, 3, 5), dm, generator=rng, dtype=torch.float64)
    w = draw_weights(rng, dm, h, d, c, r)
    what, info = run(submission, (dm, h, d, c, r), w, [x])
    shown = Text("{what}.latent(x{shape})", what=what, shape=list(x.shape))
    got = expect_tensor(info["latent"][0], shown, shape=[*x.shape[:2], c + r], floating=True)
    diagnose(got, latent_ref(x, w, c, r), shown, [
        (latent_ref(x, w, c, r, "other-pairing"), other_pairing(), "other-pairing"),
        (latent_ref(x, w, c, r, "latent-not-rotated"), Text(
            "it matches k_pe cached unrotated: the cache keeps rope(k_pe), rotated once when it is written.",
            "它与缓存未旋转的 k_pe 的结果一致：缓存保存的是 rope(k_pe)，在写入时旋转一次。"), "latent-not-rotated")]
        + [(latent_ref(x, w, c, r, slip), why, slip) for slip, why in ROPE_SLIPS])


@check("forward matches MLA computed with torch: decoupled RoPE, the keys and values from the latent", points=3,
       zh="forward 与用 torch 算出的 MLA 一致：解耦 RoPE，键和值来自潜变量", depends="latent")
def test_values(submission, rng):
    expect_mla(submission, rng, 2, randint(rng, 3, 5), draw_sizes(rng))


@check("no output depends on a later position", points=1, zh="任何输出都不依赖于后面的位置", depends="structure")
def test_causal(submission, rng):
    dm, h, d, c, r = sizes = draw_sizes(rng)
    t = randint(rng, 3, 5)
    x = torch.randn(2, t, dm, generator=rng, dtype=torch.float64)
    changed = x.clone()
    changed[:, -1] = torch.randn(2, dm, generator=rng, dtype=torch.float64)
    what, info = run(submission, sizes, draw_weights(rng, dm, h, d, c, r), [x, changed])
    before, after = (expect_tensor(o, Text("{what}(x{shape})", what=what, shape=list(x.shape)), shape=[2, t, dm],
                                   floating=True) for o in info["out"])
    if not matches(after[:, :-1], before[:, :-1], rtol=RTOL, atol=ATOL):
        fail("Changing only the last position ({last}) of x changed earlier outputs: they attend a later position. "
             "Mask the future before the softmax.", "只改变 x 的最后一个位置（{last}）后，前面的输出也变了：它们关注了"
             "后面的位置。请在 softmax 之前挡住未来。", last=t - 1, key="causal-ignored")


@check("one position, one head and a rope part of one pair work too; a GPU at hand changes nothing", points=2,
       zh="一个位置、一个头以及只有一对特征的 rope 部分也正确；有 GPU 时也不变", depends="values")
def test_edges(submission, rng):
    expect_mla(submission, rng, 1, 1, (8, 2, 3, 4, 4))  # one position
    expect_mla(submission, rng, 2, 3, (randint(rng, 6, 9), 1, 4, 3, 4))  # one head
    expect_mla(submission, rng, 2, 4, (8, 2, 3, 4, 2))  # rope_dim 2: one pair
    expect_cpu_module(submission, "MultiHeadLatentAttention", [8, 2, 3, 4, 4], [torch.randn(2, 3, 8, generator=rng)])
