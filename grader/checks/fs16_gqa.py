"""Hidden checks of fs16: grouped-query attention (GQA), with MQA and MHA as its edges.

A probe builds the learner's GroupedQueryAttention in the sandbox, converts it to float64, loads weights the
judge drew into its four projections (by name) and runs it. The expectation is an MHA computed here:
nn.MultiheadAttention(batch_first=True, bias=False) in float64 whose key and value weights are the learner's
key/value heads repeated, so that query head h reads the key/value head the statement assigns to it. A wrong
output is compared with the known slips computed here with the same weights: the other assignment of query
heads to key/value heads (repeat vs repeat_interleave), a scale by sqrt(embed_dim) or none, heads split by a
view straight to [B, H, T, D], merged without the transpose. Sizes: 1 < n_kv_heads < n_heads in the values
check, with n_heads // n_kv_heads != n_kv_heads once (a repeat by the wrong count cannot pass by chance); then
n_kv_heads = 1 (MQA) and n_kv_heads = n_heads (MHA).

The probe also records an nn.MultiheadAttention inside the module, a call of F.multi_head_attention_forward,
or F.scaled_dot_product_attention(..., enable_gqa=True) (which repeats the heads itself): each fails every
check, as ex05 treats autograd.

Kata variants: `variant("grouping")`: query head h reads key/value head h // (n_heads // n_kv_heads)
(consecutive groups, repeat_interleave) or h % n_kv_heads (strided, repeat); the reference and the diagnosis
of the other assignment follow the draw.
"""

import math

import torch
from torch import nn

from grader.checking import Text, check, expect_close, expect_tensor, explain, fail, matches, probe, variant, verbatim

BANNED = ("multi_head_attention", "MultiheadAttention", "enable_gqa")

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def run_module(module, sizes, weights, x, kwargs):
    """Build GroupedQueryAttention(*sizes); describe its parameters; when they have the names and shapes of
    `weights`, convert it to float64, load them and run it on x (unless None), recording the torch functions
    called (and enable_gqa=True given to scaled_dot_product_attention)."""
    from torch.overrides import TorchFunctionMode

    torch.manual_seed(0)
    m = module.GroupedQueryAttention(*sizes)
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

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", str(func))
            names.add(name)
            if "scaled_dot_product" in name and (kwargs or {}).get("enable_gqa"):
                names.add("scaled_dot_product_attention(enable_gqa=True)")
            return func(*args, **(kwargs or {}))

    with Recorder():
        out = m(x, **kwargs)
    info["calls"] = sorted(names)
    info["out"] = out.detach() if isinstance(out, torch.Tensor) else out
    return info


@probe
def construct(module, sizes):
    """GroupedQueryAttention(*sizes): the name of what it raised, or None."""
    try:
        module.GroupedQueryAttention(*sizes)
    except Exception as exc:  # the exception is what is judged
        return type(exc).__name__
    return None


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def strided() -> bool:
    return variant("grouping")["name"] == "strided"


def kv_of(h, hkv, tiled=None) -> list[int]:
    """The key/value head each query head reads: consecutive groups, or tiled (strided)."""
    tiled = strided() if tiled is None else tiled
    return [i % hkv if tiled else i // (h // hkv) for i in range(h)]


def draw_weights(rng, e, h, hkv) -> dict:
    d = e // h
    w = {"q": torch.randn(h * d, e, generator=rng, dtype=torch.float64), "k": torch.randn(
        hkv * d, e, generator=rng, dtype=torch.float64), "v": torch.randn(hkv * d, e, generator=rng, dtype=torch.float64),
        "o": torch.randn(e, h * d, generator=rng, dtype=torch.float64)}
    return {n: t / math.sqrt(t.shape[1]) for n, t in w.items()}


def learner_weights(w: dict) -> dict:
    return {f"{n}_proj.weight": w[n] for n in "qkv"} | {"out_proj.weight": w["o"]}


def repeated(weight, h, hkv, tiled=None):
    """A key/value projection [H_kv * D, E] turned into one of H query heads' worth: kv head kv_of(i) at head i."""
    d = weight.shape[0] // hkv
    return weight.view(hkv, d, -1)[kv_of(h, hkv, tiled)].reshape(h * d, -1)


def reference(x, w, h, hkv, causal=False):
    """nn.MultiheadAttention in float64 with the key/value heads repeated as the statement assigns them."""
    e = x.shape[-1]
    mha = nn.MultiheadAttention(e, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w["q"], repeated(w["k"], h, hkv), repeated(w["v"], h, hkv)]))
        mha.out_proj.weight.copy_(w["o"])
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1) if causal else None
        return mha(x, x, x, attn_mask=mask, need_weights=False)[0]


def formula(x, w, h, hkv, causal=False, tiled=None, scale=None, split="right", merge="right"):
    """GQA written out in float64 with one slip at a time."""
    b, t, e = x.shape
    d = e // h

    def heads(y, n):
        return y.reshape(b, n, t, d) if split == "no-transpose" else y.reshape(b, t, n, d).transpose(1, 2)

    q, k, v = heads(x @ w["q"].t(), h), heads(x @ w["k"].t(), hkv), heads(x @ w["v"].t(), hkv)
    index = kv_of(h, hkv, tiled)
    k, v = k[:, index], v[:, index]
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(d) if scale is None else scale)
    if causal:
        scores = scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), -math.inf)
    o = torch.softmax(scores, dim=-1) @ v
    o = o.reshape(b, t, h * d) if merge == "no-transpose" else o.transpose(1, 2).reshape(b, t, h * d)
    return o @ w["o"].t()


NOT_REPEATED = Text("q and k (or v) do not have the same number of heads: before q @ k^T and weights @ v, each key/value "
                    "head is repeated for its group of n_heads // n_kv_heads query heads, so that k and v have n_heads "
                    "heads too (along dim 1).",
                    "q 和 k（或 v）的头数不同：在 q @ k^T 和 weights @ v 之前，要把每个键/值头为它那一组 "
                    "n_heads // n_kv_heads 个查询头复制，让 k 和 v 也有 n_heads 个头（沿 dim 1）。")


def run(submission, sizes, w, x, **kwargs):
    """The learner's module with the weights `w` loaded, on x (None: built, not run)."""
    e, h, hkv = sizes
    what = Text("`GroupedQueryAttention({e}, {h}, {hkv})`", e=e, h=h, hkv=hkv)
    with explain({"at non-singleton dimension 1": NOT_REPEATED}, key="kv-not-repeated"):
        info = submission.probe(run_module, list(sizes), learner_weights(w), x, kwargs, what=what)
    if not info["is_module"]:
        fail("GroupedQueryAttention(...) should be an nn.Module, got a {type}: derive it from nn.Module and call "
             "super().__init__() first.", "GroupedQueryAttention(...) 应该是 nn.Module，实际是 {type}：让它继承 "
             "nn.Module，并先调用 super().__init__()。", type=verbatim(info["type"]), key="not-a-module")
    used = info["builtin"] + [n for n in info.get("calls", []) if any(word in n for word in BANNED)]
    if used:
        fail("GroupedQueryAttention uses {name}: the point is to give each query head its key/value head yourself. "
             "F.scaled_dot_product_attention is fine without enable_gqa.",
             "GroupedQueryAttention 用了 {name}：本题要你自己为每个查询头找到它的键/值头。不带 enable_gqa 的 "
             "F.scaled_dot_product_attention 可以用。", name=verbatim(", ".join(f"`{n}`" for n in used)),
             key="builtin-gqa")
    want = {name: list(t.shape) for name, t in learner_weights(w).items()}
    got = info["params"]
    if got != want:
        fail("GroupedQueryAttention({e}, {h}, {hkv}) should hold exactly {want} (no biases); it holds {got}.",
             "GroupedQueryAttention({e}, {h}, {hkv}) 应恰好含有 {want}（没有偏置）；实际含有 {got}。", e=e, h=h, hkv=hkv,
             want=verbatim(", ".join(f"{n} {s}" for n, s in want.items())),
             got=verbatim(", ".join(f"{n} {s}" for n, s in got.items()) or "-"), key="parameters")
    return info.get("out")


def slips(x, w, h, hkv, causal=False) -> list:
    e, d = x.shape[-1], x.shape[-1] // h
    other = Text("query head h reading key/value head h // (n_heads // n_kv_heads) (consecutive groups, "
                 "repeat_interleave)", "查询头 h 读取键/值头 h // (n_heads // n_kv_heads)（连续分组，repeat_interleave）") \
        if strided() else Text("query head h reading key/value head h % n_kv_heads (the kv heads tiled, repeat)",
                               "查询头 h 读取键/值头 h % n_kv_heads（键/值头整体平铺，repeat）")
    right = Text("here query head h reads key/value head h % n_kv_heads: tile them, k.repeat(1, groups, 1, 1)",
                 "这里查询头 h 读取键/值头 h % n_kv_heads：整体平铺，k.repeat(1, groups, 1, 1)") if strided() else Text(
        "here consecutive query heads share a key/value head, h // groups: k.repeat_interleave(groups, dim=1)",
        "这里相邻的查询头共享一个键/值头 h // groups：k.repeat_interleave(groups, dim=1)")
    ignored = [(formula(x, w, h, hkv), Text("it matches attention with no mask: causal=True must hide the later "
                                            "positions.", "它与不加掩码的结果一致：causal=True 时必须挡住后面的位置。"),
                "causal-ignored")] if causal else []
    return ignored + [
        (formula(x, w, h, hkv, causal, tiled=not strided()), Text(
            "it matches {other}; {right}.", "它与{other}的结果一致；{right}。", other=other, right=right), "wrong-grouping"),
        (formula(x, w, h, hkv, causal, scale=1 / math.sqrt(e)), Text(
            "it matches scores divided by sqrt(embed_dim) = sqrt({e}): the scale is sqrt(head_dim) = sqrt({d}).",
            "它与把分数除以 sqrt(embed_dim) = sqrt({e}) 的结果一致：缩放应为 sqrt(head_dim) = sqrt({d})。", e=e, d=d),
         "scale-by-d-model"),
        (formula(x, w, h, hkv, causal, scale=1.0), Text(
            "it matches attention without the 1/sqrt(head_dim) scale.", "它与没有 1/sqrt(head_dim) 缩放的结果一致。"),
         "no-scale"),
        (formula(x, w, h, hkv, causal, split="no-transpose", merge="no-transpose"), Text(
            "it matches heads split by a view straight to [B, H, T, D] (and merged the same way): view as "
            "[B, T, H, D] first, then transpose(1, 2).",
            "它与直接 view 成 [B, H, T, D] 来拆分（并以同样方式合并）多个头的结果一致：请先 view 成 [B, T, H, D]，"
            "再 transpose(1, 2)。"), "heads-split-order"),
        (formula(x, w, h, hkv, causal, merge="no-transpose"), Text(
            "it matches the heads merged by a reshape of [B, H, T, D] straight to [B, T, E]: transpose back to "
            "[B, T, H, D] first.",
            "它与把 [B, H, T, D] 直接 reshape 成 [B, T, E] 来合并多个头的结果一致：请先转置回 [B, T, H, D]。"),
         "heads-merge-order"),
    ]


def first_wrong(got, want, rtol=1e-6, atol=1e-8) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_gqa(submission, rng, b, t, h, hkv, d, causal=False):
    e = h * d
    x = torch.randn(b, t, e, generator=rng, dtype=torch.float64)
    w = draw_weights(rng, e, h, hkv)
    what = Text("GroupedQueryAttention({e}, {h}, {hkv})(x{shape}{causal})", e=e, h=h, hkv=hkv, shape=list(x.shape),
                causal=", causal=True" if causal else "")
    got = expect_tensor(run(submission, (e, h, hkv), w, x, **({"causal": True} if causal else {})), what,
                        shape=[b, t, e], floating=True)
    want = reference(x, w, h, hkv, causal)
    if matches(got, want, rtol=1e-6, atol=1e-8):
        return
    for wrong, message, key in slips(x, w, h, hkv, causal) if t > 1 and h > 1 else []:
        if not matches(wrong, want, rtol=1e-6, atol=1e-8) and matches(got, wrong, rtol=1e-6, atol=1e-8):
            fail(Text("{what}{at} should be {want:.4g}, got {got:.4g}: {why}", "{what}{at} 应为 {want:.4g}，实际为 "
                      "{got:.4g}：{why}", what=what, why=message, **first_wrong(got, want)), key=key)
    expect_close(got, want, what, rtol=1e-6, atol=1e-8)


# -- the checks -------------------------------------------------------------------------------------

@check("GroupedQueryAttention holds q_proj, k_proj, v_proj and out_proj of the statement's shapes", points=1,
       zh="GroupedQueryAttention 含有题目要求形状的 q_proj、k_proj、v_proj 和 out_proj")
def test_structure(submission, rng):
    for h, hkv in ((4, 2), (6, 3)):
        e = h * randint(rng, 2, 3)
        run(submission, (e, h, hkv), draw_weights(rng, e, h, hkv), None)


@check("GroupedQueryAttention matches an MHA whose key/value heads are repeated for their query heads", points=3,
       zh="GroupedQueryAttention 与把键/值头为其查询头复制后的 MHA 一致", depends="structure")
def test_values(submission, rng):
    h, hkv = ((4, 2), (6, 2), (6, 3), (8, 2))[randint(rng, 0, 3)]
    expect_gqa(submission, rng, 2, randint(rng, 3, 5), h, hkv, randint(rng, 2, 3))
    expect_gqa(submission, rng, 1, randint(rng, 2, 4), 6, 2, 2)  # groups 3 != n_kv_heads 2


@check("MQA (one key/value head) and MHA (as many as query heads) match too", points=2,
       zh="MQA（一个键/值头）和 MHA（与查询头一样多）也一致", depends="values")
def test_edges(submission, rng):
    expect_gqa(submission, rng, 2, randint(rng, 3, 5), randint(rng, 2, 4), 1, 2)
    h = randint(rng, 2, 3)
    expect_gqa(submission, rng, 2, randint(rng, 3, 5), h, h, 2)
    expect_gqa(submission, rng, 1, 1, 2, 1, 2)  # one position


@check("causal=True lets position i attend positions 0..i only", points=2, zh="causal=True 时位置 i 只关注位置 0..i",
       depends="values")
def test_causal(submission, rng):
    expect_gqa(submission, rng, 2, randint(rng, 3, 5), 4, 2, 2, causal=True)


@check("GroupedQueryAttention raises ValueError for sizes that do not divide", points=1,
       zh="尺寸不能整除时 GroupedQueryAttention 抛出 ValueError", depends="values")
def test_config(submission, rng):
    d = randint(rng, 2, 3)
    for sizes, why in (((6 * d, 6, 4), Text("4 key/value heads cannot serve 6 query heads in equal groups",
                                             "4 个键/值头无法把 6 个查询头平均分组")),
                       ((4 * d + 1, 4, 2), Text("{e} features cannot be split into 4 equal heads",
                                                "{e} 个特征无法平均分成 4 个头", e=4 * d + 1))):
        raised = submission.probe(construct, list(sizes), what=Text("`GroupedQueryAttention{sizes}`", sizes=sizes))
        if raised != "ValueError":
            got = Text("it raised {name}", "它抛出了 {name}", name=verbatim(raised)) if raised else Text(
                "it was built without an error", "它没有报错就建好了")
            fail("GroupedQueryAttention{sizes} should raise ValueError ({why}), but {got}. Check embed_dim % n_heads and "
                 "n_heads % n_kv_heads in __init__.",
                 "GroupedQueryAttention{sizes} 应抛出 ValueError（{why}），但{got}。请在 __init__ 中检查 "
                 "embed_dim % n_heads 和 n_heads % n_kv_heads。", sizes=sizes, why=why, got=got,
                 key="sizes-not-checked")


@check("the key/value heads are repeated by your code (no enable_gqa, no nn.MultiheadAttention)", points=1,
       zh="键/值头由你自己的代码复制（不用 enable_gqa，也不用 nn.MultiheadAttention）", depends="values")
def test_by_hand(submission, rng):
    expect_gqa(submission, rng, 2, 3, 4, 2, 2)
