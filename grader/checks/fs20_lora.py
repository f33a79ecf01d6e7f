"""Hidden checks of fs20: a LoRA linear layer (frozen base, trainable low-rank A and B, merged at the end).

A probe builds an nn.Linear base from weights the judge drew, wraps it in the learner's LoRALinear(base, r, alpha)
(under two seeds, for the initialisation), and reports what nn.Module sees: the parameters, which require grad,
the initial A and B. For the values it converts the layer to float64, loads A and B the judge drew (B not zero, so
A gets a gradient), runs forward and backward, and calls merged(). The expectations are torch's own layers
computed here: F.linear(x, W, b) + scaling * F.linear(F.linear(x, A), B), its gradients for A and B by autograd and
finite differences (grader.gradients), and F.linear(x, W + scaling * B @ A, b) for the merged layer. Known slips are
named when a wrong answer matches them: the base not frozen, A and B initialised the other way round (A zero),
the scaling alpha alone, r / alpha, none, or the other variant's, A and B of swapped shapes, a merge that changed
the base in place (the layer then counts its update twice), a merge without the scaling.

Kata variants: `variant("scaling")`: alpha / r (LoRA) or alpha / sqrt(r) (rank-stabilized LoRA); the expectations
and the naming of the other scaling follow it.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import (Text, check, expect_close, expect_tensor, fail, learner_call, pretend_cuda, probe, variant,
                             verbatim)
from grader.devices import fail_if_gpu, fail_if_gpu_anew, imported_with_gpu
from grader.gradients import autograd_gradient, expect_gradient, numerical_gradient

# -- probes (run in the sandbox) --------------------------------------------------------------


@probe
def build(module, weight, bias, r, alpha, seed, lora_a=None, lora_b=None, x=None, upstream=None, merge=False,
          gpu=False):
    """LoRALinear(nn.Linear with `weight`, `bias`, r, alpha) built after torch.manual_seed(seed): its parameters
    (shape, requires_grad), the base's, the initial A and B; with x alone, its output (with `gpu`, built and run with
    a GPU pretended: what named CUDA). With `lora_a`/`lora_b`: float64, A and B loaded, out = layer(x), and with
    `upstream` the gradients of (out * upstream).sum(); with `merge`: what merged() returns and does."""
    base = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, dtype=weight.dtype)
    with torch.no_grad():
        base.weight.copy_(weight)
        if bias is not None:
            base.bias.copy_(bias)
    torch.manual_seed(seed)
    if gpu:
        with pretend_cuda(module) as seen:
            m = module.LoRALinear(base, r, alpha)
            m(x)

        def again(fresh, _seen) -> None:  # the same, the file imported with the GPU there
            learner_call(fresh, lambda: fresh.LoRALinear(base, r, alpha)(x))

        return {"is_module": True, "cuda": seen.calls, "anew": imported_with_gpu(module, again)}
    m = module.LoRALinear(base, r, alpha)
    info = {"is_module": isinstance(m, nn.Module), "type": type(m).__name__}
    if not info["is_module"]:
        return info
    info["params"] = {n: [list(p.shape), bool(p.requires_grad)] for n, p in m.named_parameters()}
    info["base_grad"] = {n: bool(p.requires_grad) for n, p in base.named_parameters()}
    info["base_kept"] = getattr(m, "base", None) is base
    for name in ("lora_A", "lora_B"):
        t = getattr(m, name, None)
        info[name] = t.detach().clone() if isinstance(t, torch.Tensor) else None
    if x is None:
        return info
    if lora_a is None:  # the layer as it was built
        out = m(x)
        info["out"] = out.detach() if isinstance(out, torch.Tensor) else out
        return info
    mine_a, mine_b = getattr(m, "lora_A", None), getattr(m, "lora_B", None)
    if not (isinstance(mine_a, torch.Tensor) and isinstance(mine_b, torch.Tensor)
            and mine_a.shape == lora_a.shape and mine_b.shape == lora_b.shape):
        info["load_error"] = True
        return info
    m.double()
    with torch.no_grad():
        m.lora_A.copy_(lora_a)
        m.lora_B.copy_(lora_b)
    out = m(x)
    info["out"] = out.detach() if isinstance(out, torch.Tensor) else out
    if upstream is not None and isinstance(out, torch.Tensor) and out.requires_grad:
        (out * upstream).sum().backward()
        info["grads"] = {n: (p.grad.detach().clone() if p.grad is not None else None)
                         for n, p in [("lora_A", m.lora_A), ("lora_B", m.lora_B), ("base.weight", base.weight)]
                         + ([("base.bias", base.bias)] if base.bias is not None else [])}
    if merge:
        weight_before = base.weight.detach().clone()
        layer = m.merged()
        info["merged_type"] = type(layer).__name__
        info["merged_is_linear"] = isinstance(layer, nn.Linear)
        if isinstance(layer, nn.Linear):
            info["merged_weight"] = layer.weight.detach().clone()
            info["merged_bias"] = layer.bias.detach().clone() if layer.bias is not None else None
            if layer.weight.dtype == x.dtype:  # another dtype is the check's lesson, before any output
                with torch.no_grad():
                    info["merged_out"] = layer(x).detach()
        with torch.no_grad():
            info["out_after"] = m(x).detach()
        info["base_changed"] = not torch.equal(weight_before, base.weight.detach())
    return info


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def scaling(alpha, r, name=None) -> float:
    name = name or variant("scaling")["name"]
    return alpha / math.sqrt(r) if name == "rslora" else alpha / r


def draw(rng, bias=True, dtype=torch.float64):
    fin, fout = randint(rng, 5, 8), randint(rng, 3, 4)  # in != out, so A [r, in] and B [out, r] cannot be swapped
    r = randint(rng, 2, 3)
    alpha = float(2 * randint(rng, 2, 8))  # alpha != r and alpha / r != 1: each wrong scaling differs
    w = (torch.randn(fout, fin, generator=rng, dtype=torch.float64) / math.sqrt(fin)).to(dtype)
    b = (0.5 * torch.randn(fout, generator=rng, dtype=torch.float64)).to(dtype) if bias else None
    return w, b, r, alpha


def reference(x, w, b, a, bb, s):
    return F.linear(x, w, b) + s * F.linear(F.linear(x, a), bb)


def construct(submission, w, b, r, alpha, seed=0, **kwargs):
    what = Text("`LoRALinear(nn.Linear({fin}, {fout}), r={r}, alpha={alpha:g})`", fin=w.shape[1], fout=w.shape[0], r=r,
                alpha=alpha)
    info = submission.probe(build, w, b, r, alpha, seed, what=what, **kwargs)
    if not info["is_module"]:
        fail("LoRALinear(...) should be an nn.Module, got a {type}.", "LoRALinear(...) 应该是 nn.Module，实际是 {type}。",
             type=verbatim(info["type"]), key="not-a-module")
    return info


def expect_shapes(info, w, r):
    fout, fin = w.shape
    params = info["params"]
    for name, want in (("lora_A", [r, fin]), ("lora_B", [fout, r])):
        if name not in params:
            fail("LoRALinear has no parameter {name}: make it an nn.Parameter named exactly {name} (its parameters: "
                 "{have}).", "LoRALinear 没有参数 {name}：请把它做成名字正好是 {name} 的 nn.Parameter（它的参数：{have}）。",
                 name=verbatim(name), have=verbatim(", ".join(params) or "-"), key="lora-missing")
    a, b = params["lora_A"][0], params["lora_B"][0]
    if a == [fin, r] and b == [r, fout]:
        fail("lora_A has shape {a} and lora_B {b}: both transposed. A maps the input down to rank r: [r, in_features] "
             "= {wa}; B maps it back up: [out_features, r] = {wb} (the layout of nn.Linear's weight).",
             "lora_A 的形状是 {a}，lora_B 是 {b}：两个都转置了。A 把输入降到秩 r：[r, in_features] = {wa}；B 再升回去："
             "[out_features, r] = {wb}（与 nn.Linear 的权重布局相同）。", a=a, b=b, wa=[r, fin], wb=[fout, r],
             key="lora-transposed")
    for name, got, want in (("lora_A", a, [r, fin]), ("lora_B", b, [fout, r])):
        if got != want:
            fail("{name} should have shape {want} for nn.Linear({fin}, {fout}) and r = {r}, got {got}.",
                 "对于 nn.Linear({fin}, {fout}) 和 r = {r}，{name} 的形状应为 {want}，实际为 {got}。", name=verbatim(name),
                 want=want, got=got, fin=fin, fout=fout, r=r, key="wrong-shape")


# -- the checks -------------------------------------------------------------------------------------

@check("lora_A is [r, in_features] and lora_B [out_features, r]", points=1,
       zh="lora_A 是 [r, in_features]，lora_B 是 [out_features, r]")
def test_shapes(submission, rng):
    w, b, r, alpha = draw(rng, dtype=torch.float32)
    expect_shapes(construct(submission, w, b, r, alpha), w, r)


@check("the base Linear is frozen: only lora_A and lora_B require grad", points=1,
       zh="基础 Linear 被冻结：只有 lora_A 和 lora_B 需要梯度", depends="shapes")
def test_frozen(submission, rng):
    for bias in (True, False):
        w, b, r, alpha = draw(rng, bias=bias, dtype=torch.float32)
        info = construct(submission, w, b, r, alpha)
        trainable = sorted(n for n, (_, grad) in info["params"].items() if grad)
        thawed = sorted(n for n, grad in info["base_grad"].items() if grad)
        if thawed:
            fail("The base Linear's {names} still require grad: an optimizer over the layer's parameters would change "
                 "the pretrained weights, and backward computes their gradients for nothing. Freeze them with "
                 "base.requires_grad_(False).", "基础 Linear 的 {names} 仍然需要梯度：对该层参数的优化器会改动预训练的权重，"
                 "backward 也会白白计算它们的梯度。请用 base.requires_grad_(False) 冻结它们。",
                 names=verbatim(", ".join(thawed)), key="base-not-frozen")
        if trainable != ["lora_A", "lora_B"]:
            fail("The parameters that require grad should be exactly lora_A and lora_B, got {got}.",
                 "需要梯度的参数应恰好是 lora_A 和 lora_B，实际为 {got}。", got=verbatim(", ".join(trainable) or "-"),
                 key="trainable-parameters")
        if not info["base_kept"]:
            fail("LoRALinear should keep the Linear it is given as self.base (the same object, frozen), not a copy.",
                 "LoRALinear 应把传给它的 Linear 保存为 self.base（同一个对象，冻结），而不是一份拷贝。",
                 key="base-not-kept")


@check("lora_B starts at zero and lora_A random as kaiming_uniform_(a=sqrt(5)) draws it", points=1,
       zh="lora_B 初始为 0，lora_A 按 kaiming_uniform_(a=sqrt(5)) 随机初始化", depends="shapes")
def test_init(submission, rng):
    fin, r = randint(rng, 48, 64), 8  # 8 * 48 entries or more: a range of +-1/sqrt(in) is filled to its ends
    w, b, alpha = torch.randn(4, fin, generator=rng) / math.sqrt(fin), torch.zeros(4), 16.0
    first = construct(submission, w, b, r, alpha, seed=randint(rng, 0, 10**6))
    second = construct(submission, w, b, r, alpha, seed=randint(rng, 0, 10**6) + 10**6 + 1)
    a, bb = first["lora_A"], first["lora_B"]
    if bool((a == 0).all()) and not bool((bb == 0).all()):
        fail("lora_A starts at zero and lora_B random: the other way round. B starts at zero (so the layer starts as "
             "the base) and A random; with A zero, x @ A^T is zero and B gets no gradient at the first step.",
             "lora_A 初始为 0 而 lora_B 随机：正好反了。应当 B 初始为 0（层一开始就等于基础层），A 随机；A 为 0 时 "
             "x @ A^T 为 0，第一步 B 就得不到梯度。", key="init-swapped")
    if not bool((bb == 0).all()):
        fail("lora_B should start at zero, so that the layer starts exactly as the base layer (B @ A = 0); its largest "
             "entry is {m:.3g}.", "lora_B 应初始化为 0，这样层一开始就与基础层完全相同（B @ A = 0）；它最大的元素是 {m:.3g}。",
             m=float(bb.abs().max()), key="b-not-zero")
    if bool((a == 0).all()):
        fail("lora_A starts at zero as lora_B does: every gradient of A involves B and every gradient of B involves A, "
             "so neither would ever move. Initialise A at random (nn.init.kaiming_uniform_(A, a=math.sqrt(5))).",
             "lora_A 和 lora_B 一样初始为 0：A 的梯度含有 B，B 的梯度含有 A，于是两者永远都不会变。请随机初始化 A"
             "（nn.init.kaiming_uniform_(A, a=math.sqrt(5))）。", key="a-zero")
    if torch.equal(a, second["lora_A"]):
        fail("lora_A is the same under two different seeds: it is not drawn at random (a constant, or a generator seeded "
             "inside the layer).", "两个不同种子下 lora_A 完全相同：它不是随机抽取的（是常数，或者在层内部设了固定种子）。",
             key="a-not-random")
    bound = 1 / math.sqrt(fin)
    top = float(a.abs().max())
    if not (top <= bound * (1 + 1e-6) and top >= 0.95 * bound):
        fail("lora_A's entries reach {top:.4g}; kaiming_uniform_(A, a=math.sqrt(5)) draws them uniformly in "
             "[-1/sqrt(in_features), 1/sqrt(in_features)] = +-{bound:.4g} (in_features = {fin}), as nn.Linear and PEFT "
             "initialise: a wider range makes the first updates larger, a narrower one smaller.",
             "lora_A 的元素最大到 {top:.4g}；kaiming_uniform_(A, a=math.sqrt(5)) 在 [-1/sqrt(in_features), "
             "1/sqrt(in_features)] = +-{bound:.4g}（in_features = {fin}）中均匀抽取，与 nn.Linear 和 PEFT 的初始化相同："
             "范围更宽，最初的更新就更大；更窄则更小。", top=top, bound=bound, fin=fin, key="a-init-range")


def layer_call(submission, rng, bias=True, shape=None, upstream=False, merge=False):
    """The layer in float64 with A and B the judge drew (B not zero) on a fresh x, with the gradients of
    (out * upstream).sum() for a drawn upstream, or merged."""
    w, b, r, alpha = draw(rng, bias=bias)
    fout, fin = w.shape
    a = torch.randn(r, fin, generator=rng, dtype=torch.float64) / math.sqrt(fin)
    bb = torch.randn(fout, r, generator=rng, dtype=torch.float64)
    x = torch.randn(*(shape or [4]), fin, generator=rng, dtype=torch.float64)
    up = torch.randn(*x.shape[:-1], fout, generator=rng, dtype=torch.float64) if upstream else None
    info = construct(submission, w, b, r, alpha, lora_a=a, lora_b=bb, x=x, upstream=up, merge=merge)
    if info.get("load_error"):
        expect_shapes(info, w, r)
    return info, (w, b, r, alpha, a, bb, x, up)


def scaling_slips(x, w, b, a, bb, r, alpha):
    """(scale, the update it gives, what to change, key) for each known slip of the scaling."""
    other = "lora" if variant("scaling")["name"] == "rslora" else "rslora"
    code = verbatim(variant("scaling")["code"].replace("math.", ""))
    return [
        (scaling(alpha, r, other), Text("the scaling of the other LoRA, {got}", "另一种 LoRA 的缩放 {got}",
                                        got=verbatim("alpha / sqrt(r)" if other == "rslora" else "alpha / r")),
         Text("here it is {want}", "这里应为 {want}", want=code), "scaling-other"),
        (alpha, Text("the update scaled by alpha alone", "只乘以 alpha 的更新"),
         Text("divide by {d} too", "还要除以 {d}", d=verbatim("sqrt(r)" if variant("scaling")["name"] == "rslora"
                                                            else "r")), "scaling-alpha"),
        (r / alpha, Text("the update scaled by r / alpha", "乘以 r / alpha 的更新"),
         Text("the scaling is upside down", "缩放上下颠倒了"), "scaling-inverted"),
        (1.0, Text("the update not scaled", "没有缩放的更新"), Text("scale it by {want}", "要乘以 {want}", want=code),
         "no-scaling"),
    ]


@check("at initialisation the layer computes exactly what the base Linear does", points=1,
       zh="初始化时该层的计算结果与基础 Linear 完全相同", depends=("frozen", "init"))
def test_forward_init(submission, rng):
    w, b, r, alpha = draw(rng, dtype=torch.float32)
    x = torch.randn(3, w.shape[1], generator=rng)
    info = construct(submission, w, b, r, alpha, x=x)
    expect_close(info["out"], F.linear(x, w, b), Text("LoRALinear(base)(x) at initialisation",
                                                      "初始化时的 LoRALinear(base)(x)"), rtol=1e-5, atol=1e-6)
    info = construct(submission, w, b, r, alpha, x=x, gpu=True)  # a GPU at hand changes nothing
    fail_if_gpu(info["cuda"], "`LoRALinear(base, r, alpha)(x)`")
    fail_if_gpu_anew(info["anew"], "`LoRALinear(base, r, alpha)(x)`")


@check("forward is base(x) + scaling * x @ A^T @ B^T, for x [N, in] and [B, T, in]", points=2,
       zh="forward 等于 base(x) + scaling * x @ A^T @ B^T，x 为 [N, in] 和 [B, T, in] 时都成立", depends="forward_init")
def test_forward(submission, rng):
    for bias, shape in ((True, [4]), (False, [2, 3])):
        info, (w, b, r, alpha, a, bb, x, _) = layer_call(submission, rng, bias=bias, shape=shape)
        what = Text("LoRALinear(nn.Linear({fin}, {fout}{bias}), r={r}, alpha={alpha:g})(x{shape})", fin=w.shape[1],
                    fout=w.shape[0], bias="" if bias else ", bias=False", r=r, alpha=alpha, shape=list(x.shape))
        got = expect_tensor(info["out"], what, shape=list(x.shape[:-1]) + [w.shape[0]], floating=True)
        want = reference(x, w, b, a, bb, scaling(alpha, r))
        if torch.allclose(got, want, rtol=1e-6, atol=1e-6):
            continue
        if torch.allclose(got, F.linear(x, w, b), rtol=1e-6, atol=1e-6):
            fail("{what} is base(x) alone: the low-rank update scaling * x @ A^T @ B^T is missing.",
                 "{what} 只有 base(x)：缺少低秩更新 scaling * x @ A^T @ B^T。", what=what, key="update-missing")
        for s, seen, fix, key in scaling_slips(x, w, b, a, bb, r, alpha):
            if torch.allclose(got, reference(x, w, b, a, bb, s), rtol=1e-6, atol=1e-6):
                fail("{what} matches {seen}: {fix}.", "{what} 与{seen}的结果一致：{fix}。", what=what, seen=seen,
                     fix=fix, key=key)
        expect_close(got, want, what, rtol=1e-6, atol=1e-6)


@check("backward gives lora_A and lora_B their gradients, and the base none", points=2,
       zh="backward 给出 lora_A 和 lora_B 的梯度，基础层没有梯度", depends="forward")
def test_grads(submission, rng):
    info, (w, b, r, alpha, a, bb, x, upstream) = layer_call(submission, rng, shape=[5], upstream=True)
    grads = info.get("grads")
    if grads is None:
        fail("The layer's output does not require grad: the graph to lora_A and lora_B was cut (.detach(), .data, "
             "torch.no_grad()).", "该层的输出不 requires_grad：通往 lora_A 和 lora_B 的计算图被切断了"
             "（.detach()、.data、torch.no_grad()）。", key="graph-cut")
    got_base = [n for n in ("base.weight", "base.bias") if grads.get(n) is not None]
    if got_base:
        fail("backward gave the base Linear's {names} a gradient: the base must be frozen (requires_grad False).",
             "backward 给基础 Linear 的 {names} 计算了梯度：基础层必须冻结（requires_grad 为 False）。",
             names=verbatim(", ".join(got_base)), key="base-not-frozen")
    s = scaling(alpha, r)

    def loss(a_, b_):
        return (reference(x, w, b, a_, b_, s) * upstream).sum()

    expected = autograd_gradient(loss, [a, bb])
    numerical = numerical_gradient(loss, [a, bb])
    for i, name in enumerate(("lora_A", "lora_B")):
        if grads.get(name) is None:
            fail("{name}.grad is None after backward: {name} does not take part in the output (detached, or its .data "
                 "used).", "backward 之后 {name}.grad 是 None：{name} 没有参与输出的计算（被 detach，或用了它的 .data）。",
                 name=verbatim(name), key="lora-no-grad")
        expect_gradient(grads[name], expected[i], name, numerical=numerical[i])


@check("merged() returns a new nn.Linear equal to the layer, and leaves the layer unchanged", points=2,
       zh="merged() 返回一个与该层等价的新 nn.Linear，且不改变该层", depends="forward")
def test_merge(submission, rng):
    for bias in (True, False):
        info, (w, b, r, alpha, a, bb, x, _) = layer_call(submission, rng, bias=bias, merge=True)
        if not info["merged_is_linear"]:
            fail("merged() should return an nn.Linear, got a {type}.", "merged() 应返回 nn.Linear，实际得到 {type}。",
                 type=verbatim(info["merged_type"]), key="merged-not-linear")
        s = scaling(alpha, r)
        want_w = w + s * bb @ a
        if info["base_changed"]:
            fail("merged() changed the base Linear's weight in place: the layer now adds its update twice (base(x) "
                 "already holds B @ A, and the low-rank path adds it again). Build a new nn.Linear and copy "
                 "W + scaling * B @ A into it.", "merged() 原地修改了基础 Linear 的权重：该层现在把更新加了两次（base(x) "
                 "已经包含 B @ A，低秩路径又加了一次）。请新建一个 nn.Linear，把 W + scaling * B @ A 复制进去。",
                 key="merge-in-place")
        got_w = expect_tensor(info["merged_weight"], "merged().weight", shape=list(w.shape), floating=True)
        if got_w.dtype != w.dtype:
            fail("merged().weight is {got}, the base's weight {want}: build the new Linear in the base's dtype "
                 "(dtype=base.weight.dtype), or a float64 (or bfloat16) model comes back in float32.",
                 "merged().weight 是 {got}，而基础权重是 {want}：请用基础权重的 dtype 建立新的 Linear"
                 "（dtype=base.weight.dtype），否则 float64（或 bfloat16）模型合并后会变成 float32。", got=got_w.dtype,
                 want=w.dtype, key="merged-dtype")
        if torch.allclose(got_w.double(), w, atol=1e-8) and not torch.allclose(want_w, w):
            fail("merged().weight is the base weight W: the update scaling * B @ A is not folded in.",
                 "merged().weight 就是基础权重 W：没有把更新 scaling * B @ A 合并进去。", key="merge-missing-update")
        if torch.allclose(got_w.double(), w + bb @ a, rtol=1e-6, atol=1e-6) and s != 1:
            fail("merged().weight is W + B @ A: the update is scaled by {formula} ({s:.4g}) in the merge too.",
                 "merged().weight 是 W + B @ A：合并时更新也要乘以 {formula}（{s:.4g}）。",
                 formula=verbatim(variant("scaling")["code"].replace("math.", "")), s=s, key="merge-no-scaling")
        expect_close(got_w, want_w, "merged().weight", rtol=1e-6, atol=1e-6)
        if b is None:
            if info["merged_bias"] is not None:
                fail("merged() has a bias, but the base Linear has none (bias=False).",
                     "merged() 有偏置，而基础 Linear 没有（bias=False）。", key="merged-bias")
        else:
            expect_close(info["merged_bias"], b, "merged().bias", rtol=1e-6, atol=1e-6)
        expect_close(info["merged_out"], reference(x, w, b, a, bb, s), "merged()(x)", rtol=1e-6, atol=1e-6)
        expect_close(info["out_after"], info["out"], Text("the layer's output after merged()", "merged() 之后该层的输出"),
                     rtol=1e-9, atol=1e-12)
