"""Hidden checks of fs32: a mixture-of-experts layer (top-k routing, dispatch and combine, load-balancing loss).

A probe builds the learner's MoE in the sandbox, reports its parameters (names and shapes), converts it to float64,
loads weights the judge drew by name, counts the rows each expert's gate_proj receives (forward hooks: an expert
run on every token shows) and runs it on x; then the gradients of the loss aux and of (out * upstream).sum() with
respect to the router's weight (torch.autograd.grad in the probe). The expectation is computed here on the same
draw with torch: softmax over the experts, topk, the weights of the draw, every expert applied and the chosen
ones combined, and aux = n_experts * sum_i f_i * P_i (f from the top-k assignment counts over N * top_k, P the mean
router probability); its gradients by autograd. Known slips are named when a wrong answer matches them: the
weights renormalised or not (each draw's other), the softmax over the tokens, the logits as weights, the
chosen experts unweighted or averaged, every expert weighted by the full softmax; for the loss: f over N instead
of N * top_k (a factor top_k), no n_experts, f from the probabilities, P from the counts (no gradient), P from
the chosen weights only, f from the first choice only.

Kata variants: `variant("routing")`: mixtral (the chosen probabilities renormalised to sum to 1, top_k = 2 by
default) or switch (the probabilities as they are, top_k = 1 by default); the expectation and the naming of the
other follow the draw.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import Text, check, expect_close, expect_number, expect_tensor, fail, matches, probe, variant, \
    verbatim

RTOL, ATOL = 1e-6, 1e-9

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def run_moe(module, args, weights, x, upstream, strided=False):
    """Build MoE(*args); describe its parameters; when they have the names and shapes of `weights`, convert it to
    float64, load them, run it on x (with `strided`, the same values in a non-contiguous tensor) counting the rows
    each expert's gate_proj receives, and take the gradients of aux and of (out * upstream).sum() with respect to
    router.weight."""
    torch.manual_seed(0)
    m = module.MoE(*args)
    info = {"is_module": isinstance(m, nn.Module), "type": type(m).__name__}
    if not info["is_module"]:
        return info
    info["params"] = {name: list(p.shape) for name, p in m.named_parameters()}
    params = dict(m.named_parameters())
    if x is None or any(name not in params or list(params[name].shape) != list(w.shape) for name, w in weights.items()):
        return info
    m.double()
    params = dict(m.named_parameters())
    with torch.no_grad():
        for name, w in weights.items():
            params[name].copy_(w)
    if strided:
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    rows = [0] * len(m.experts)

    def counter(i):
        def hook(_layer, inputs):
            rows[i] += inputs[0].numel() // inputs[0].shape[-1]
        return hook

    for i, expert in enumerate(m.experts):
        expert.gate_proj.register_forward_pre_hook(counter(i))
    result = m(x)
    info["rows"] = rows
    if not (isinstance(result, tuple) and len(result) == 2):
        info["result"] = result.detach() if isinstance(result, torch.Tensor) else type(result).__name__
        return info
    out, aux = result
    info["out"] = out.detach() if isinstance(out, torch.Tensor) else out
    info["aux"] = aux.detach() if isinstance(aux, torch.Tensor) else aux
    router = params["router.weight"]
    for name, value in (("aux_grad", aux), ("out_grad", (out * upstream).sum() if isinstance(out, torch.Tensor)
                                            and out.shape == upstream.shape else None)):
        if isinstance(value, torch.Tensor) and value.requires_grad:
            (grad,) = torch.autograd.grad(value, router, retain_graph=True, allow_unused=True)
            info[name] = grad if grad is not None else "unused"
        else:
            info[name] = "none"
    return info


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def renormalised() -> bool:
    return variant("routing")["name"] == "mixtral"


def draw_weights(rng, d, f, e) -> dict:
    """The layer's weights in float64, named as the statement names them; the router's large enough that the
    probabilities are far from uniform."""
    def linear(rows, cols, scale=1.0):
        return torch.randn(rows, cols, generator=rng, dtype=torch.float64) * scale / math.sqrt(cols)

    w = {"router.weight": linear(e, d, 3.0)}
    for i in range(e):
        w |= {f"experts.{i}.gate_proj.weight": linear(f, d), f"experts.{i}.up_proj.weight": linear(f, d),
              f"experts.{i}.down_proj.weight": linear(d, f)}
    return w


def experts_all(tokens, w, e):
    """Every expert on every token: [E, N, d]."""
    return torch.stack([(F.silu(tokens @ w[f"experts.{i}.gate_proj.weight"].t()) * (tokens @ w[f"experts.{i}.up_proj.weight"].t()))
                        @ w[f"experts.{i}.down_proj.weight"].t() for i in range(e)])


def moe(x, router, w, e, k, slip=None, renorm=None):
    """(out, aux) of the layer in float64 with one slip at a time; `router` is the router's weight (a leaf for the
    gradients)."""
    renorm = renormalised() if renorm is None else renorm
    tokens = x.reshape(-1, x.shape[-1])
    n = tokens.shape[0]
    logits = tokens @ router.t()
    probs = torch.softmax(logits, dim=0 if slip == "softmax-over-tokens" else -1)
    weights, chosen = probs.topk(k, dim=-1)
    if slip == "logits-as-weights":
        weights = logits.gather(-1, chosen)
    gates = weights / weights.sum(dim=-1, keepdim=True) if renorm else weights
    if slip == "experts-unweighted":
        gates = torch.ones_like(gates)
    elif slip == "experts-averaged":
        gates = torch.full_like(gates, 1 / k)
    every = experts_all(tokens, w, e)
    if slip == "dense-softmax":
        out = torch.einsum("ne,end->nd", probs, every)
    else:
        out = sum(gates[:, j, None] * every[chosen[:, j], torch.arange(n)] for j in range(k))
    counts = F.one_hot(chosen, e).sum(dim=(0, 1)).to(probs.dtype)
    f, p = counts / (n * k), probs.mean(dim=0)
    if slip == "aux-over-n":
        f = counts / n
    elif slip == "aux-soft-f":
        f = p
    elif slip == "aux-counts-only":
        p = f
    elif slip == "aux-p-chosen":
        p = torch.zeros_like(probs).scatter(-1, chosen, gates).mean(dim=0)
    elif slip == "aux-first-choice":
        f = F.one_hot(chosen[:, 0], e).sum(dim=0).to(probs.dtype) / n
    aux = (1 if slip == "aux-no-n-experts" else e) * (f * p).sum()
    return out.reshape(x.shape), aux


OTHER_ROUTING = {
    True: ("not-renormalised", Text("it matches the chosen probabilities used as they are: here they are renormalised "
                                    "over the token's top_k (divided by their sum), as Mixtral does.",
                                    "它与原样使用选中概率的结果一致：这里要在该词元的 top_k 上重新归一化（除以它们的和），"
                                    "与 Mixtral 相同。")),
    False: ("renormalised-anyway", Text("it matches the chosen probabilities renormalised to sum to 1: here each expert is "
                                 "weighted by its probability as it is (Switch Transformer; with top_k = 1 a "
                                 "renormalised weight is always 1).",
                                 "它与把选中的概率重新归一化到和为 1 的结果一致：这里每个专家按它原样的概率加权"
                                 "（Switch Transformer；top_k = 1 时重新归一化的权重总是 1）。")),
}

OUT_SLIPS = (  # (key, why): a slip and its words
    ("softmax-over-tokens", Text("it matches a softmax over the tokens (dim=0): the router's softmax is over the "
                                "experts, dim=-1.", "它与在词元维上（dim=0）做 softmax 的结果一致：路由器的 softmax "
                                "在专家维上，dim=-1。")),
    ("logits-as-weights", Text("it matches the router's logits used as the weights: the weights are the softmax "
                              "probabilities.", "它与把路由器的 logits 当作权重的结果一致：权重是 softmax 之后的概率。")),
    ("experts-unweighted", Text("it matches the chosen experts' outputs added without their weights.",
                       "它与把选中专家的输出不加权直接相加的结果一致。")),
    ("experts-averaged", Text("it matches the chosen experts' outputs averaged: each is weighted by its router "
                             "probability.", "它与对选中专家的输出取平均的结果一致：每个专家要按它的路由概率加权。")),
    ("dense-softmax", Text("it matches every expert weighted by the full softmax: only the token's top_k experts count.",
                  "它与用完整的 softmax 给所有专家加权的结果一致：只有该词元的 top_k 个专家才算。")),
)

AUX_SLIPS = (  # (key, why): a slip and its words
    ("aux-over-n", Text("it matches f_i = count_i / N: a factor top_k too large; f_i is the fraction of the N * top_k "
                       "assignments (the f_i sum to 1, and aux = 1 when the tokens are spread evenly).",
                       "它与 f_i = count_i / N 一致：大了 top_k 倍；f_i 是 N * top_k 次分配中分给专家 i 的比例"
                       "（所有 f_i 之和为 1，词元均匀分配时 aux = 1）。")),
    ("aux-no-n-experts", Text("it matches sum_i f_i * P_i without the factor n_experts.",
                             "它与没有乘以 n_experts 的 sum_i f_i * P_i 一致。")),
    ("aux-soft-f", Text("it matches f taken from the probabilities (n_experts * sum_i P_i ** 2): f_i counts the tokens "
                       "the top-k routing actually sent to expert i.",
                       "它与用概率代替 f 的结果（n_experts * sum_i P_i ** 2）一致：f_i 统计的是 top-k 路由实际分给"
                       "专家 i 的词元。")),
    ("aux-counts-only", Text("it matches P taken from the counts too (n_experts * sum_i f_i ** 2): that loss has no "
                            "gradient; P_i is the mean router probability, through which the router learns.",
                            "它与 P 也用计数算的结果（n_experts * sum_i f_i ** 2）一致：这样的损失没有梯度；P_i 是"
                            "路由概率的均值，路由器正是通过它学习的。")),
    ("aux-p-chosen", Text("it matches P from the chosen experts' weights only: P_i is the mean of probs[:, i] over "
                         "all tokens, chosen or not.", "它与只用选中专家的权重算 P 的结果一致：P_i 是所有词元（不论是否"
                         "选中）的 probs[:, i] 的均值。")),
    ("aux-first-choice", Text("it matches f counted from each token's first choice only: every one of the top_k "
                             "assignments counts.", "它与只按每个词元的第一个选择计算 f 的结果一致：top_k 次分配每一次"
                             "都要计数。")),
)


def run(submission, sizes, w, x, upstream=None, strided=False):
    d, f, e, k = sizes
    what = Text("`MoE({d}, {f}, {e}, {k})`", d=d, f=f, e=e, k=k)
    info = submission.probe(run_moe, list(sizes), w, x, upstream, strided, what=what)
    if not info["is_module"]:
        fail("MoE(...) should be an nn.Module, got a {type}: derive it from nn.Module and call super().__init__() "
             "first.", "MoE(...) 应该是 nn.Module，实际是 {type}：让它继承 nn.Module，并先调用 super().__init__()。",
             type=verbatim(info["type"]), key="not-a-module")
    want = {name: list(t.shape) for name, t in w.items()}
    if info["params"] != want:
        shown = {n: s for n, s in want.items() if not n.startswith("experts.") or n.startswith("experts.0.")}
        fail("{what} should hold exactly router.weight and n_experts = {e} Experts in `experts` ({want}, ...; no "
             "biases); it holds {got}.", "{what} 应恰好含有 router.weight 和 `experts` 中的 n_experts = {e} 个 Expert"
             "（{want}，……；没有偏置）；实际含有 {got}。", what=what, e=e,
             want=verbatim(", ".join(f"{n} {s}" for n, s in shown.items())),
             got=verbatim(", ".join(f"{n} {s}" for n, s in info["params"].items()) or "-"), key="parameters")
    if x is not None and "result" in info:
        fail("{what}(x) should return a pair (out, aux), got {got}.", "{what}(x) 应返回一对 (out, aux)，实际得到 {got}。",
             what=what, got=verbatim(str(info["result"]) if isinstance(info["result"], str) else "one tensor"),
             key="not-a-pair")
    return what, info


def draw_case(rng, d, f, e, k, shape):
    w = draw_weights(rng, d, f, e)
    x = torch.randn(*shape, d, generator=rng, dtype=torch.float64)
    return w, x


def expect_out(submission, rng, d, f, e, k, shape, strided=False):
    w, x = draw_case(rng, d, f, e, k, shape)
    what, info = run(submission, (d, f, e, k), w, x, torch.randn(*shape, d, generator=rng, dtype=torch.float64),
                     strided)
    got = expect_tensor(info["out"], Text("{what}(x)[0]", what=what), shape=list(x.shape), floating=True)
    want, _ = moe(x, w["router.weight"], w, e, k)
    if matches(got, want, rtol=RTOL, atol=ATOL):
        return what, info, w, x
    key, why = OTHER_ROUTING[renormalised()]
    causes = [(moe(x, w["router.weight"], w, e, k, renorm=not renormalised())[0], why, key)]
    causes += [(moe(x, w["router.weight"], w, e, k, slip)[0], text, slip) for slip, text in OUT_SLIPS]
    for wrong, text, slip in causes:
        if not matches(wrong, want, rtol=RTOL, atol=ATOL) and matches(got, wrong, rtol=RTOL, atol=ATOL):
            fail(Text("{what}(x)[0] is not the mixture: {why}", "{what}(x)[0] 不是正确的混合结果：{why}", what=what,
                      why=text), key=slip)
    expect_close(got, want, Text("{what}(x)[0]", what=what), rtol=RTOL, atol=ATOL)
    return what, info, w, x


def expect_aux(what, info, w, x, e, k):
    aux = info["aux"]
    if not (isinstance(aux, torch.Tensor) and aux.dim() == 0 and aux.is_floating_point()):
        fail("{what}(x)[1], the load-balancing loss, should be a 0-dim floating-point tensor, got {got}.",
             "{what}(x)[1]（负载均衡损失）应是 0 维浮点 tensor，实际得到 {got}。", what=what, got=verbatim(
                 f"a tensor of shape {list(aux.shape)}" if isinstance(aux, torch.Tensor) else type(aux).__name__),
             key="aux-not-a-tensor")
    want = moe(x, w["router.weight"], w, e, k)[1]
    if matches(aux, want, rtol=RTOL, atol=ATOL):
        return
    for slip, text in AUX_SLIPS:
        wrong = moe(x, w["router.weight"], w, e, k, slip)[1]
        if not matches(wrong, want, rtol=RTOL, atol=ATOL) and matches(aux, wrong, rtol=RTOL, atol=ATOL):
            fail(Text("{what}(x)[1] should be {want:.6g}, got {got:.6g}: {why}", "{what}(x)[1] 应为 {want:.6g}，实际为 "
                      "{got:.6g}：{why}", what=what, want=float(want), got=float(aux), why=text), key=slip)
    expect_number(float(aux), float(want), Text("{what}(x)[1], the load-balancing loss", "{what}(x)[1]（负载均衡损失）",
                                                what=what), rtol=RTOL, atol=ATOL)


# -- the checks -------------------------------------------------------------------------------------

@check("MoE holds a router and n_experts Experts of the statement's shapes", points=1,
       zh="MoE 含有题目要求形状的路由器和 n_experts 个 Expert")
def test_structure(submission, rng):
    d, f, e = randint(rng, 3, 6), randint(rng, 4, 8), randint(rng, 3, 5)
    run(submission, (d, f, e, variant("routing")["k"]), draw_weights(rng, d, f, e), None)


@check("the output combines each token's top_k experts with the router's weights", points=3,
       zh="输出用路由器的权重合并每个词元的 top_k 个专家", depends="structure")
def test_output(submission, rng):
    k = variant("routing")["k"]
    expect_out(submission, rng, randint(rng, 3, 6), randint(rng, 4, 8), randint(rng, 4, 6), k,
               (2, randint(rng, 5, 8)))
    expect_out(submission, rng, 4, 6, 5, 3 - k, (12,))  # the other top_k, tokens given as [N, d_model]


@check("the load-balancing loss is n_experts * sum_i f_i * P_i", points=2,
       zh="负载均衡损失是 n_experts * sum_i f_i * P_i", depends="output")
def test_aux(submission, rng):
    for k in (variant("routing")["k"], 3 - variant("routing")["k"]):
        e = randint(rng, 4, 6)
        what, info, w, x = expect_out(submission, rng, randint(rng, 3, 6), randint(rng, 4, 8), e, k,
                                      (2, randint(rng, 6, 9)))
        expect_aux(what, info, w, x, e, k)


@check("the router gets its gradients: from the loss through P, and from the output through the weights", points=2,
       zh="路由器得到梯度：从损失经过 P，从输出经过权重", depends="aux")
def test_gradient(submission, rng):
    k = variant("routing")["k"]
    d, f, e = randint(rng, 3, 6), randint(rng, 4, 8), randint(rng, 4, 6)
    w, x = draw_case(rng, d, f, e, k, (2, randint(rng, 5, 8)))
    upstream = torch.randn(x.shape, generator=rng, dtype=torch.float64)
    what, info = run(submission, (d, f, e, k), w, x, upstream)
    router = w["router.weight"].clone().requires_grad_(True)
    out, aux = moe(x, router, w, e, k)
    want_aux, want_out = torch.autograd.grad(aux, router, retain_graph=True)[0], torch.autograd.grad(
        (out * upstream).sum(), router)[0]
    for got, want, label, lesson, key in (
            (info["aux_grad"], want_aux, Text("the gradient of aux with respect to router.weight", "aux 对 router.weight 的梯度"), Text(
                "P_i, the mean of probs[:, i], must stay in the graph (no .detach(), no .item(), not computed from the "
                "counts): it is how the loss moves the router.", "P_i（probs[:, i] 的均值）必须留在计算图里（不要 "
                ".detach()、.item()，也不要用计数来算）：损失正是通过它推动路由器。"), "aux-no-gradient"),
            (info["out_grad"], want_out, Text("the gradient of (out * upstream).sum() with respect to router.weight", "(out * upstream).sum() 对 router.weight 的梯度"), Text(
                "the weights multiplying the experts' outputs must stay in the graph: the router learns through them.",
                "乘在专家输出上的权重必须留在计算图里：路由器正是通过它们学习的。"), "weights-detached")):
        if not isinstance(got, torch.Tensor):
            fail("{label} should exist, but the router's weight gets no gradient from it: {lesson}",
                 "{label} 应当存在，但路由器的权重没有从它得到梯度：{lesson}", label=label, lesson=lesson, key=key)
        expect_close(got, want, label, rtol=1e-5, atol=1e-8)


@check("each expert runs only on the tokens routed to it", points=1, zh="每个专家只在路由给它的词元上运行",
       depends="output")
def test_dispatch(submission, rng):
    k = variant("routing")["k"]
    d, f, e = randint(rng, 3, 6), randint(rng, 4, 8), randint(rng, 4, 6)
    w, x = draw_case(rng, d, f, e, k, (2, randint(rng, 5, 8)))
    what, info = run(submission, (d, f, e, k), w, x, torch.zeros_like(x))
    chosen = torch.softmax(x.reshape(-1, d) @ w["router.weight"].t(), dim=-1).topk(k, dim=-1).indices
    want = F.one_hot(chosen, e).sum(dim=(0, 1)).tolist()
    if info["rows"] != want:
        fail("{what}'s experts ran on {got} tokens each, but the router sent them {want}: run each expert on the "
             "tokens routed to it only (its rows of x), not on every token with the rest masked out.",
             "{what} 的各个专家分别在 {got} 个词元上运行，但路由器分给它们的是 {want}：每个专家只在路由给它的词元"
             "（x 的那些行）上运行，而不是在所有词元上运行再把其余的屏蔽掉。", what=what, got=info["rows"], want=want,
             key="not-dispatched")


@check("top_k = n_experts, one expert, a single token and a non-contiguous x work too", points=1,
       zh="top_k = n_experts、只有一个专家、只有一个词元以及不连续的 x 时也正确", depends="output")
def test_edges(submission, rng):
    drawn = variant("routing")["k"]
    for d, f, e, k, shape, strided in ((4, 6, 3, 3, (2, 5), False), (randint(rng, 3, 5), 4, 1, 1, (2, 3), False),
                                       (randint(rng, 3, 5), 5, 4, drawn, (1, 1), False), (4, 5, 4, drawn, (3, 4), True)):
        what, info, w, x = expect_out(submission, rng, d, f, e, k, shape, strided)
        expect_aux(what, info, w, x, e, k)
