"""Hidden checks of fs18: incremental decoding with a KV cache.

A probe builds the learner's CachedSelfAttention in the sandbox, converts it to float64, loads weights the judge
drew (by name: q_proj, k_proj, v_proj, out_proj) and runs a sequence of calls, threading the cache it returns
from one call to the next; forward hooks on k_proj and v_proj record how many tokens each call projects. The
expectation for the outputs is nn.MultiheadAttention(batch_first=True) in float64, with the same weights and a
causal mask, over the whole sequence at once: step by step, the outputs must be its rows. The expected cache is
the projections of all tokens so far, computed here, in the layout of the draw. With a cache the judge made
(keys and values of no tokens it showed), the expectation is F.scaled_dot_product_attention over that cache and
the new keys, with the causal mask shifted by the cache's length: a layer that recomputes old keys instead of
reading the cache cannot match it (checked by effect), and the hooks see the recomputation too.

Known slips, computed here and named when a wrong answer matches them: no causal mask in the prefill, a causal
mask not shifted by T_past (top-left aligned), the cache left out of the attention, the cache not grown or grown
with the new keys first, the cache in the other layout, keys and values swapped.

Kata variants: `variant("layout")`: the cache is [B, H, T, D] (time on dim 2) or [B, T, H, D] (time on dim 1).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import LearnerError, Text, check, describe, expect_close, fail, matches, probe, variant, verbatim
from grader.devices import expect_cpu_module

NAMES = ("q_proj", "k_proj", "v_proj", "out_proj")

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def run_steps(module, embed_dim, num_heads, weights, chunks, cache):
    """Build CachedSelfAttention(embed_dim, num_heads), load `weights` (float64) when every name is there with its
    shape, then call it on each chunk in turn from `cache`, threading the cache returned. Per call: the output,
    the cache returned, and how many tokens k_proj and v_proj projected."""
    torch.manual_seed(0)
    m = module.CachedSelfAttention(embed_dim, num_heads)
    info = {"is_module": isinstance(m, nn.Module), "type": type(m).__name__, "steps": []}
    if not info["is_module"]:
        return info
    info["params"] = {name: list(p.shape) for name, p in m.named_parameters()}
    params = dict(m.named_parameters())
    if any(name not in params or list(params[name].shape) != list(w.shape) for name, w in weights.items()):
        return info
    m.double()
    params = dict(m.named_parameters())
    with torch.no_grad():
        for name, w in weights.items():
            params[name].copy_(w)
    projected = []
    for name in ("k_proj", "v_proj"):
        layer = getattr(m, name)
        layer.register_forward_hook(lambda mod, args, out, name=name: projected.append(
            [name, int(args[0].shape[-2]) if args and isinstance(args[0], torch.Tensor) and args[0].dim() > 1 else 1]))
    for x in chunks:
        projected.clear()
        result = m(x, cache) if cache is not None else m(x)
        step = {"projected": [list(p) for p in projected]}
        info["steps"].append(step)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            step["returned"] = type(result).__name__
            break
        out, cache = result
        step["out"] = out.detach() if isinstance(out, torch.Tensor) else out
        if not (isinstance(cache, (tuple, list)) and len(cache) == 2 and all(isinstance(c, torch.Tensor) for c in cache)):
            step["cache"] = None if cache is None else type(cache).__name__
            break
        step["cache"] = [c.detach().clone() for c in cache]
    return info


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def time_first() -> bool:
    return variant("layout")["name"] == "bthd"


def time_dim() -> int:
    return 1 if time_first() else 2


def draw(rng, b, t, h, d):
    e = h * d
    x = torch.randn(b, t, e, generator=rng, dtype=torch.float64)
    w = {name: (torch.randn(e, e, generator=rng, dtype=torch.float64) / math.sqrt(e),
                0.5 * torch.randn(e, generator=rng, dtype=torch.float64)) for name in NAMES}
    return x, w


def learner_weights(w):
    return {f"{name}.{part}": w[name][i] for name in NAMES for i, part in enumerate(("weight", "bias"))}


def reference(x, w, h):
    """nn.MultiheadAttention, causal, over the whole sequence at once (float64)."""
    e, t = x.shape[-1], x.shape[1]
    mha = nn.MultiheadAttention(e, h, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w[n][0] for n in ("q_proj", "k_proj", "v_proj")]))
        mha.in_proj_bias.copy_(torch.cat([w[n][1] for n in ("q_proj", "k_proj", "v_proj")]))
        mha.out_proj.weight.copy_(w["out_proj"][0])
        mha.out_proj.bias.copy_(w["out_proj"][1])
        return mha(x, x, x, attn_mask=torch.ones(t, t, dtype=torch.bool).triu(1), need_weights=False)[0]


def project(x, w, name, h, layout=None):
    """The keys or values of x in the cache's layout ([B, H, T, D], or [B, T, H, D])."""
    b, t, e = x.shape
    y = (x @ w[name][0].t() + w[name][1]).view(b, t, h, e // h)
    first = time_first() if layout is None else layout == "bthd"
    return y if first else y.transpose(1, 2)


def bhtd(c):
    """A cache tensor of this draw's layout as [B, H, T, D]."""
    return c.transpose(1, 2) if time_first() else c


def attend(x, w, h, past_k=None, past_v=None, mask="shifted"):
    """The new tokens' outputs over a cache ([B, H, T, D]) and their own keys: F.scaled_dot_product_attention with
    the causal mask shifted by the cache's length ("shifted"), top-left aligned ("top-left"), none, or over the new
    tokens only ("new_only")."""
    b, t, e = x.shape
    q, k, v = (project(x, w, n, h, "bhtd") for n in ("q_proj", "k_proj", "v_proj"))
    if past_k is not None and mask != "new_only":
        k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
    past = k.shape[2] - t
    allowed = torch.ones(t, past + t, dtype=torch.bool)
    if mask in ("shifted", "new_only"):
        allowed = allowed.tril(past)
    elif mask == "top-left":
        allowed = allowed.tril()
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    return o.transpose(1, 2).reshape(b, t, e) @ w["out_proj"][0].t() + w["out_proj"][1]


def run(submission, x_chunks, w, h, cache=None):
    """The learner's layer over the chunks, with its structure judged."""
    e = x_chunks[0].shape[-1]

    def probed(chunks):
        return submission.probe(run_steps, e, h, learner_weights(w), chunks, cache,
                                what=Text("`CachedSelfAttention({e}, {h})` and its calls", "`CachedSelfAttention({e}, "
                                          "{h})` 及其调用", e=e, h=h))

    try:
        info = probed(x_chunks)
    except LearnerError as exc:  # the cache's shapes only where the first call, with nothing cached, runs
        if "must match the size" in exc.message and len(x_chunks) > 1 and cache is None \
                and runs(lambda: probed(x_chunks[:1])):
            fail("{cause} ({error})", "{cause}（{error}）", cause=SHAPES, error=exc.text, key="cache-shapes")
        raise
    if not info["is_module"]:
        fail("CachedSelfAttention(...) should be an nn.Module, got a {type}.", "CachedSelfAttention(...) 应该是 "
             "nn.Module，实际是 {type}。", type=verbatim(info["type"]), key="not-a-module")
    want = {n: list(t.shape) for n, t in learner_weights(w).items()}
    if info["params"] != want:
        fail("CachedSelfAttention({e}, {h}) should hold exactly {want}; it holds {got}.",
             "CachedSelfAttention({e}, {h}) 应恰好含有 {want}；实际含有 {got}。", e=e, h=h,
             want=verbatim(", ".join(want)), got=verbatim(", ".join(info["params"]) or "-"), key="parameters")
    return info["steps"]


def runs(call) -> bool:
    """Whether `call()` returns without the learner's code raising."""
    try:
        call()
    except LearnerError:
        return False
    return True


SHAPES = Text("Shapes that do not line up with a cache: the scores are [B, H, T_new, T_past + T_new], so the causal mask "
              "is [T_new, T_past + T_new] (a lower triangle shifted by T_past), and the cache's keys and values are "
              "appended on the time axis.",
              "与缓存对不上的形状：分数的形状是 [B, H, T_new, T_past + T_new]，所以因果掩码是 [T_new, T_past + T_new]"
              "（向右平移 T_past 的下三角），缓存的键和值要沿时间维拼接。")


def step_what(i, t_past, t_new):
    return Text("call {i} (T_past = {p}, T_new = {n})", "第 {i} 次调用（T_past = {p}，T_new = {n}）", i=i + 1, p=t_past, n=t_new)


def expect_pair(step, where):
    if "returned" in step:
        fail("{where}: forward should return (out, (k, v)), got a {type}.", "{where}：forward 应返回 (out, (k, v))，"
             "实际得到 {type}。", where=where, type=verbatim(step["returned"]), key="not-a-pair")
    if not isinstance(step.get("cache"), list):
        fail("{where}: the cache returned should be a pair of tensors (k, v), got {got}.",
             "{where}：返回的缓存应是一对张量 (k, v)，实际得到 {got}。", where=where,
             got=verbatim(str(step.get("cache"))), key="cache-not-a-pair")
    if not isinstance(step["out"], torch.Tensor):
        fail("{where}: out should be a tensor, got {got}.", "{where}：out 应是张量，实际得到 {got}。", where=where,
             got=describe(step["out"]), key="not-a-tensor")


def expect_cache(step, x_seen, w, h, where, new, given=None):
    """The cache returned holds the keys and values of every token so far, in the draw's layout, past first."""
    k_want, v_want = project(x_seen, w, "k_proj", h), project(x_seen, w, "v_proj", h)
    if given is not None:
        k_want = torch.cat([given[0], k_want], time_dim())
        v_want = torch.cat([given[1], v_want], time_dim())
    k, v = step["cache"]
    total = k_want.shape[time_dim()]
    if matches(k, k_want, rtol=1e-6, atol=1e-8) and matches(v, v_want, rtol=1e-6, atol=1e-8):
        return
    shape = list(k.shape)
    other = list(k_want.transpose(1, 2).shape)
    if shape == other and shape != list(k_want.shape):
        fail("{where}: the cache is laid out as {got}; it should be {want}, {layout}.",
             "{where}：缓存的布局是 {got}；应为 {want}，{layout}。", where=where, got=shape, want=list(k_want.shape),
             layout=Text("[B, T, H, D], time first", "[B, T, H, D]，时间在前") if time_first() else
             Text("[B, H, T, D], heads first", "[B, H, T, D]，头在前"), key="cache-layout")
    if len(shape) == 4 and shape[time_dim()] < total and list(k_want.shape[:time_dim()]) == shape[:time_dim()]:
        fail("{where}: the cache holds the keys of {got} token(s), it should hold all {total} so far: the keys and values of the "
             "earlier tokens must stay in it, with the new ones appended (torch.cat on the time axis).",
             "{where}：缓存里有 {got} 个词元，应有到目前为止的全部 {total} 个：之前词元的键和值必须留在缓存里，"
             "新的接在后面（沿时间维 torch.cat）。", where=where, got=shape[time_dim()], total=total,
             key="cache-not-grown")
    if matches(k, v_want, rtol=1e-6, atol=1e-8) and matches(v, k_want, rtol=1e-6, atol=1e-8):
        fail("{where}: the cache holds (v, k): return the keys first, (k, v).", "{where}：缓存里是 (v, k)：请先返回键，"
             "(k, v)。", where=where, key="cache-swapped")
    if k.shape == k_want.shape and total > new:
        old, fresh = k_want.narrow(time_dim(), 0, total - new), k_want.narrow(time_dim(), total - new, new)
        if matches(k, torch.cat([fresh, old], time_dim()), rtol=1e-6, atol=1e-8):
            fail("{where}: the cache has the new keys before the old ones: append them after the past, "
                 "torch.cat([past, new]), so the cache's order is the positions' order.",
                 "{where}：缓存里新的键排在旧的前面：请把它们接在过去的后面，torch.cat([past, new])，"
                 "这样缓存的顺序才是位置的顺序。", where=where, key="cache-order")
    expect_close(k, k_want, Text("{where}: the key cache", "{where}：缓存的键", where=where), rtol=1e-6, atol=1e-8)
    expect_close(v, v_want, Text("{where}: the value cache", "{where}：缓存的值", where=where), rtol=1e-6, atol=1e-8)


def first_wrong(got, want) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=1e-6, atol=1e-8)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_out(got, want, where, slips):
    if matches(got, want, rtol=1e-6, atol=1e-8):
        return
    for wrong, message, key in slips():
        if not matches(wrong, want, rtol=1e-6, atol=1e-8) and matches(got, wrong, rtol=1e-6, atol=1e-8):
            fail(Text("{where}: out{at} should be {want:.4g}, got {got:.4g}: {why}", "{where}：out{at} 应为 {want:.4g}，"
                      "实际为 {got:.4g}：{why}", where=where, why=message, **first_wrong(got, want)), key=key)
    expect_close(got, want, Text("{where}: out", "{where}：out", where=where), rtol=1e-6, atol=1e-8)


NOT_SHIFTED = Text("it matches a causal mask that is not shifted by T_past: new token i sits at position T_past + i and "
                   "sees keys 0..T_past + i, the lower triangle of [T_new, T_past + T_new] shifted right by T_past "
                   "(tril(diagonal=T_past)).",
                   "它与没有按 T_past 平移的因果掩码的结果一致：新词元 i 位于位置 T_past + i，能看到键 0..T_past + i，"
                   "也就是 [T_new, T_past + T_new] 的下三角向右平移 T_past（tril(diagonal=T_past)）。")


def step_slips(x, w, h, past_k, past_v, prefill):
    """The wrong formulas of one call, given the cache before it ([B, H, T, D] or None)."""
    def slips():
        found = [(attend(x, w, h, past_k, past_v, mask="none"), Text(
            "it matches attention with no causal mask: each token must not see the tokens after it.",
            "它与没有因果掩码的注意力一致：每个词元都不能看到它之后的词元。"), "no-causal-mask")]
        if not prefill:
            found += [(attend(x, w, h, past_k, past_v, mask="top-left"), NOT_SHIFTED, "mask-not-shifted"),
                      (attend(x, w, h, past_k, past_v, mask="new_only"), Text(
                          "it matches the new tokens attending only each other: the cached keys and values of the earlier "
                          "tokens must take part in the attention (concatenated before the new ones).",
                          "它与新词元只在彼此之间做注意力的结果一致：缓存中之前词元的键和值必须参与注意力（拼接在新的前面）。"),
                       "cache-ignored")]
        return found
    return slips


def judge_run(submission, rng, b, h, d, sizes, outputs=True):
    """Run the layer over chunks of `sizes` tokens from a fresh sequence; judge every call's output (the rows of
    causal attention over everything; unless `outputs` is False) and cache (the projections of every token so
    far)."""
    x, w = draw(rng, b, sum(sizes), h, d)
    chunks = list(torch.split(x, sizes, dim=1))
    steps = run(submission, chunks, w, h)
    want = reference(x, w, h)
    start = 0
    for i, n in enumerate(sizes):
        where = step_what(i, start, n)
        if i >= len(steps):
            break
        step = steps[i]
        expect_pair(step, where)
        past = x[:, :start]
        past_k = project(past, w, "k_proj", h, "bhtd") if start else None
        past_v = project(past, w, "v_proj", h, "bhtd") if start else None
        if outputs:
            expect_out(step["out"], want[:, start:start + n], where,
                       step_slips(chunks[i], w, h, past_k, past_v, start == 0))
        expect_cache(step, x[:, :start + n], w, h, where, n)
        start += n
    return steps


# -- the checks -------------------------------------------------------------------------------------

@check("a first call without a cache is causal attention over its tokens", points=2,
       zh="不带缓存的第一次调用就是对其词元的因果注意力")
def test_prefill(submission, rng):
    h, d = randint(rng, 2, 3), 2
    x, w = draw(rng, 2, randint(rng, 3, 5), h, d)
    steps = run(submission, [x], w, h)
    where = step_what(0, 0, x.shape[1])
    expect_pair(steps[0], where)
    expect_out(steps[0]["out"], reference(x, w, h), where, step_slips(x, w, h, None, None, True))
    expect_cpu_module(submission, "CachedSelfAttention", [h * d, h], [x.float()])  # a GPU at hand changes nothing


@check("the cache returned holds the keys and values of every token so far", points=1,
       zh="返回的缓存含有到目前为止每个词元的键和值", depends="prefill")
def test_cache_values(submission, rng):
    h = randint(rng, 2, 3)
    judge_run(submission, rng, 2, h, 2, [h + 2, 1, 1], outputs=False)  # T != H: the layouts differ in shape


@check("decoding one token at a time gives the rows of causal attention over the whole sequence (B = 1 and 3)",
       points=3, zh="一次解码一个词元，得到对整个序列做因果注意力的各行（B = 1 和 3）", depends="prefill")
def test_decode(submission, rng):
    for b in (1, 3):
        prefix = randint(rng, 2, 4)
        judge_run(submission, rng, b, randint(rng, 2, 3), 2, [prefix] + [1] * randint(rng, 2, 3))


@check("a chunk of several new tokens after a cache sees the cache and, causally, its own tokens", points=2,
       zh="缓存之后一次输入多个新词元时，它们能看到缓存，并因果地看到彼此", depends="decode")
def test_chunk(submission, rng):
    judge_run(submission, rng, 2, 2, 2, [randint(rng, 2, 3), randint(rng, 2, 3), randint(rng, 2, 3)])


@check("each call projects its new tokens only and reads the old keys and values from the cache", points=2,
       zh="每次调用只投影新词元，旧的键和值从缓存中读取", depends="decode")
def test_uses_cache(submission, rng):
    h, d, b = 2, 2, 2
    sizes = [randint(rng, 2, 4), 1, 1]
    steps = judge_run(submission, rng, b, h, d, sizes)
    for i, (n, step) in enumerate(zip(sizes, steps)):
        more = [(name, count) for name, count in step["projected"] if count != n]
        if more:
            fail("{where}: {name} projected {count} tokens; only the {n} new one(s) should be: the keys and values of the "
                 "earlier tokens are in the cache already, recomputing them makes every step as slow as the whole "
                 "sequence.", "{where}：{name} 投影了 {count} 个词元；只应投影 {n} 个新的：之前词元的键和值已经在缓存里了，"
                 "重新计算会让每一步都和整个序列一样慢。", where=step_what(i, sum(sizes[:i]), n),
                 name=verbatim(more[0][0]), count=more[0][1], n=n, key="keys-recomputed")
    # A cache the judge made, of keys and values of no token the layer has seen: only reading it gives these values.
    # one new token: no causal mask can matter, so this check judges the reading of the cache alone (with two, a mask
    # left out after the first call failed it or not by the draw, and was called a cache not read)
    t_past, t_new = randint(rng, 2, 4), 1
    x, w = draw(rng, b, t_new, h, d)
    shape = [b, t_past, h, d] if time_first() else [b, h, t_past, d]
    given = [torch.randn(*shape, generator=rng, dtype=torch.float64) for _ in range(2)]
    steps = run(submission, [x], w, h, cache=given)
    where = Text("a call with a cache of {p} tokens it was given", "给定一个 {p} 个词元的缓存时的调用", p=t_past)
    expect_pair(steps[0], where)
    want = attend(x, w, h, bhtd(given[0]), bhtd(given[1]))
    if not matches(steps[0]["out"], want, rtol=1e-6, atol=1e-8):
        fail("{where}: out does not use the keys and values of the cache it was given (made up for this check, of no "
             "token the layer has seen): the attention must read the cache as it is, not recompute old keys from "
             "tokens kept elsewhere.", "{where}：out 没有使用传给它的缓存中的键和值（这是为本检查编造的，不属于该层见过的"
             "任何词元）：注意力必须直接读取缓存，而不是用保存在别处的词元重新计算旧的键。", where=where,
             key="cache-not-read")
    expect_cache(steps[0], x, w, h, where, t_new, given=given)
