"""Hidden checks of fs04: a Linear layer from scratch, with nn.Linear's initialisation.

The learner's class is built in the sandbox; a probe reports its parameters (type, shape, registration), runs its
forward, and builds many layers after torch.manual_seed to collect their initial weights and biases. The judge
compares the forward with torch's own `F.linear` on the layer's own weights (in float64), and judges the
initialisation by statistics of many draws, never by matching torch's random stream: every value inside the bound,
the largest close to it, the standard deviation of a uniform distribution on [-bound, bound] (bound / sqrt(3)),
half of the values within half the bound, a mean near 0. Two shapes are drawn, one with fan_in > fan_out and one
with fan_in < fan_out, so a bound computed from the wrong fan is off by a known factor, named with the other
classic slips: kaiming_uniform_'s default a=0 (bound sqrt(6 / fan_in)), a normal distribution, the other
initialisation of the kata (Xavier for Kaiming, or the reverse), a bias left at zero or drawn where it is zero.

The built-ins are forbidden in forward: a probe records the torch functions forward calls (a TorchFunctionMode
sees `F.linear` and an nn.Linear's forward), and the structure check names an nn.Linear held inside.

Kata variants: `variant("init")` is the initialisation: nn.Linear's Kaiming uniform with a = sqrt(5) (weight and
bias uniform in +-1/sqrt(fan_in)), or Xavier (Glorot) uniform (weight in +-sqrt(6 / (fan_in + fan_out)), bias 0,
as many transformer codebases do); the expected bounds and the messages follow it.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import (Text, check, expect_close, expect_tensor, explain, fail, probe, recording_calls, variant,
                             verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.devices import expect_cpu_module

# -- probes (run in the sandbox) ----------------------------------------------------------------


def _describe(layer) -> dict:
    """The layer's weight and bias as plain data: kind, shape, registration."""
    registered = dict(layer.named_parameters()) if isinstance(layer, torch.nn.Module) else {}
    info = {"is_module": isinstance(layer, torch.nn.Module), "type": type(layer).__name__,
            "params": sorted(registered), "children": sorted(type(m).__name__ for m in layer.children())
            if isinstance(layer, torch.nn.Module) else []}
    for name in ("weight", "bias"):
        value = getattr(layer, name, "missing")
        info[name] = None if value is None else "missing" if isinstance(value, str) else {
            "parameter": isinstance(value, torch.nn.Parameter), "tensor": isinstance(value, torch.Tensor),
            "shape": list(value.shape) if isinstance(value, torch.Tensor) else None,
            "dtype": str(value.dtype) if isinstance(value, torch.Tensor) else None,
            "requires_grad": bool(getattr(value, "requires_grad", False)),
            "registered": name in registered, "type": type(value).__name__}
    return info


@probe
def structure(module, fan_in, fan_out):
    """Linear(fan_in, fan_out) and Linear(fan_in, fan_out, bias=False), described."""
    return [_describe(module.Linear(fan_in, fan_out)), _describe(module.Linear(fan_in, fan_out, bias=False))]


@probe
def run_forward(module, fan_in, fan_out, bias, xs, bias_values):
    """Build a layer, give its bias the values the judge drew (a bias initialised to 0 would hide a forward that
    forgets it), run its forward on each x while recording the torch functions called; return its weight and bias
    with the outputs."""
    names = set()

    layer = module.Linear(fan_in, fan_out, bias=bias)
    if isinstance(layer.bias, torch.Tensor):
        with torch.no_grad():
            layer.bias.copy_(bias_values)
    weight, b = layer.weight.detach().clone(), layer.bias
    with recording_calls(names):
        out = [layer(x) for x in xs]
    return {"weight": weight, "bias": b.detach().clone() if isinstance(b, torch.Tensor) else b,
            "out": [o.detach() if isinstance(o, torch.Tensor) else o for o in out], "calls": sorted(names)}


@probe
def init_values(module, fan_in, fan_out, layers, seed, name):
    """torch.manual_seed(seed), then `layers` layers Linear(fan_in, fan_out): the initial values of their parameter
    `name` (weight or bias), flattened; None when the layers have none."""
    torch.manual_seed(seed)
    values = []
    for _ in range(layers):
        value = getattr(module.Linear(fan_in, fan_out), name)
        if isinstance(value, torch.Tensor):
            values.append(value.detach().reshape(-1).double())
    return torch.cat(values) if values else None


@probe
def draws(module, fan_in, fan_out, seed):
    """How the layer draws: two layers in a row; the same seed twice; another seed; reset_parameters() called again
    (the values and whether the Parameter objects stayed the same)."""
    def build():
        layer = module.Linear(fan_in, fan_out)
        return layer, layer.weight.detach().clone()

    torch.manual_seed(seed)
    _, first = build()
    layer, second = build()
    torch.manual_seed(seed)
    _, again = build()
    torch.manual_seed(seed + 1)
    _, other = build()
    params = [id(p) for p in layer.parameters()]
    layer.reset_parameters()
    return {"first": first, "second": second, "again": again, "other": other,
            "reset": layer.weight.detach().clone(), "same_objects": params == [id(p) for p in layer.parameters()]}


# -- judge-side helpers -------------------------------------------------------------------------

def init() -> str:
    """This draw's initialisation: "kaiming" (nn.Linear's) or "xavier"."""
    return variant("init")["name"]


def kaiming(fan_in, fan_out, a=5 ** 0.5):
    return math.sqrt(2 / (1 + a * a)) * math.sqrt(3 / fan_in)


def xavier(fan_in, fan_out):
    return math.sqrt(6 / (fan_in + fan_out))


def weight_bound(fan_in, fan_out) -> float:
    return kaiming(fan_in, fan_out) if init() == "kaiming" else xavier(fan_in, fan_out)


def bias_bound(fan_in, fan_out) -> float:
    return 1 / math.sqrt(fan_in) if init() == "kaiming" else 0.0


SHAPES = ((64, 16), (12, 48))  # fan_in > fan_out, then fan_in < fan_out: a bound from the wrong fan is off by 2
def what(fan_in, fan_out, bias=True):
    return verbatim(f"Linear({fan_in}, {fan_out}" + ("" if bias else ", bias=False") + ")")


IN_PLACE = Text("reset_parameters draws into a Parameter that requires grad while autograd records: wrap the draws in "
                 "`with torch.no_grad():`, as nn.init does.",
                 "reset_parameters 在 autograd 记录的情况下向需要梯度的 Parameter 原地抽取：请把抽取放进 "
                 "`with torch.no_grad():` 中，nn.init 也是这样做的。")
TRANSPOSE = Text("weight is [out_features, in_features]: compute x @ weight.T (not x @ weight).",
                 "weight 的形状是 [out_features, in_features]：应计算 x @ weight.T（而不是 x @ weight）。")


# -- structure ----------------------------------------------------------------------------------

@check("Linear holds weight [out, in] and bias [out] as registered nn.Parameters (bias None when bias=False)",
       points=2, zh="Linear 持有已注册的 nn.Parameter：weight 为 `[out, in]`，bias 为 `[out]`（bias=False 时 bias 为 None）")
def test_structure(submission, rng):
    fan_in = int(torch.randint(3, 7, (), generator=rng))
    fan_out = fan_in + int(torch.randint(2, 5, (), generator=rng))  # never square: a transposed weight shows
    with explain({"leaf Variable that requires grad": IN_PLACE}, key="init-under-autograd"):
        with_bias, without = submission.probe(structure, fan_in, fan_out, what=what(fan_in, fan_out))
    layer = what(fan_in, fan_out)
    if not with_bias["is_module"]:
        fail("{layer} should be an nn.Module, got {got}: write `class Linear(nn.Module)` and call super().__init__().",
             "{layer} 应该是 nn.Module，实际得到 {got}：请写 `class Linear(nn.Module)`，并调用 super().__init__()。",
             layer=layer, got=verbatim(with_bias["type"]), key="not-a-module")
    if "Linear" in with_bias["children"]:
        fail("{layer} holds an nn.Linear: the point is to hold the weight and the bias yourself, as nn.Parameters.",
             "{layer} 内部持有一个 nn.Linear：本题要你自己用 nn.Parameter 持有 weight 和 bias。", layer=layer,
             key="builtin-linear")
    for name, shape in (("weight", [fan_out, fan_in]), ("bias", [fan_out])):
        info = with_bias[name]
        if info is None or info == "missing":
            fail("{layer}.{name} is {got}: create it in __init__ as an nn.Parameter of shape {shape}.",
                 "{layer}.{name} 是 {got}：请在 __init__ 中把它创建为形状 {shape} 的 nn.Parameter。", layer=layer,
                 name=verbatim(name), got=verbatim("missing" if info else "None"), shape=shape, key="missing-parameter")
        if not info["parameter"]:
            fail("{layer}.{name} is a {type}, not an nn.Parameter, so it is not registered: model.parameters() "
                 "misses it and no optimizer trains it. Wrap it: nn.Parameter(torch.empty(...)).",
                 "{layer}.{name} 是 {type}，不是 nn.Parameter，因此没有被注册：model.parameters() 看不到它，"
                 "优化器也不会训练它。请用 nn.Parameter(torch.empty(...)) 包起来。", layer=layer, name=verbatim(name),
                 type=verbatim(info["type"]), key="not-a-parameter")
        if info["shape"] != shape:
            transposed = info["shape"] == shape[::-1]
            fail("{layer}.{name} has shape {got}, expected {shape}{why}",
                 "{layer}.{name} 的形状为 {got}，应为 {shape}{why}", layer=layer, name=verbatim(name),
                 got=info["shape"], shape=shape, why=Text(
                     ": nn.Linear stores weight as [out_features, in_features], and forward computes x @ weight.T.",
                     "：nn.Linear 的 weight 按 [out_features, in_features] 存储，forward 计算 x @ weight.T。")
                 if transposed else Text(".", "。"), key="transposed-weight" if transposed else "wrong-shape")
        if info["dtype"] != "torch.float32" or not info["requires_grad"]:
            fail("{layer}.{name} should be a float32 parameter that requires grad, got {dtype} with "
                 "requires_grad={rg}.", "{layer}.{name} 应是需要梯度的 float32 参数，实际为 {dtype}，"
                 "requires_grad={rg}。", layer=layer, name=verbatim(name), dtype=verbatim(info["dtype"]),
                 rg=info["requires_grad"], key="wrong-dtype")
    layer = what(fan_in, fan_out, bias=False)
    if without["bias"] == "missing":
        fail("{layer} has no attribute bias: set it to None, with self.register_parameter(\"bias\", None), so "
             "forward can test `self.bias is not None`.",
             "{layer} 没有 bias 属性：请用 self.register_parameter(\"bias\", None) 把它设为 None，这样 forward "
             "可以检查 `self.bias is not None`。", layer=layer, key="bias-missing")
    if without["bias"] is not None or without["params"] != ["weight"]:
        fail("{layer} should have no bias (bias is None, and weight its only parameter), got the parameters {got}.",
             "{layer} 不应有 bias（bias 为 None，weight 是它唯一的参数），实际的参数为 {got}。", layer=layer,
             got=verbatim(", ".join(without["params"]) or "none"), key="bias-not-none")
    if with_bias["params"] != ["bias", "weight"]:
        fail("{layer} should register exactly weight and bias, got {got}.", "{layer} 应该正好注册 weight 和 bias，"
             "实际为 {got}。", layer=what(fan_in, fan_out), got=verbatim(", ".join(with_bias["params"])),
             key="extra-parameters")


# -- forward ------------------------------------------------------------------------------------

@check("forward is x @ weight.T + bias, as F.linear with the layer's own weights, for any batch shape",
       points=2, zh="forward 是 x @ weight.T + bias，与用该层自己的权重计算的 F.linear 一致，适用于任意 batch 形状",
       depends="structure")
def test_forward(submission, rng):
    fan_in = int(torch.randint(3, 7, (), generator=rng))
    fan_out = fan_in + int(torch.randint(2, 5, (), generator=rng))
    n = int(torch.randint(2, 6, (), generator=rng))
    xs = [torch.randn(n, fan_in, generator=rng), torch.randn(2, 3, fan_in, generator=rng),
          torch.randn(1, fan_in, generator=rng), torch.empty(0, fan_in)]
    for bias in (True, False):
        layer = what(fan_in, fan_out, bias)
        with explain({"cannot be multiplied": TRANSPOSE}, key="transposed-product"):
            result = submission.probe(run_forward, fan_in, fan_out, bias, xs, torch.randn(fan_out, generator=rng),
                                      what=Text("{layer}(x)", "{layer}(x)", layer=layer))
        if used := forbidden_calls("linear", result["calls"]):
            fail("{layer}.forward calls torch's own `{name}`, which computes a whole linear layer (as F.linear or an "
                 "nn.Linear does): its values are torch's. Write x @ self.weight.T + self.bias.",
                 "{layer}.forward 调用了 torch 自带的 `{name}`，它一次算出整个线性层（和 F.linear、nn.Linear 一样）："
                 "这些值是 torch 算的。请写 x @ self.weight.T + self.bias。", layer=layer, name=verbatim(used[0]),
                 key="builtin-linear")
        w = result["weight"].double()
        b = result["bias"].double() if isinstance(result["bias"], torch.Tensor) else None
        for x, out in zip(xs, result["out"]):
            call = Text("{layer}(x{shape})", "{layer}(x{shape})", layer=layer, shape=list(x.shape))
            want = [*x.shape[:-1], fan_out]
            out = expect_tensor(out, call, floating=True)
            if list(out.shape) != want:
                fail("{call} has shape {got}, expected {want}: the last dimension of x (in_features) becomes "
                     "out_features, the others stay.",
                     "{call} 的形状为 {got}，应为 {want}：x 的最后一维（in_features）变成 out_features，其余维度不变。",
                     call=call, got=list(out.shape), want=want, key="wrong-shape")
            expected = F.linear(x.double(), w, b)
            if b is not None and x.numel() and bool(b.abs().max() > 1e-6) and torch.allclose(out.double(), F.linear(x.double(), w), rtol=1e-5,
                                                              atol=1e-5):
                fail("{call} leaves the bias out: add self.bias (broadcast over the batch dimensions).",
                     "{call} 没有加上 bias：请加上 self.bias（沿 batch 维度广播）。", call=call, key="bias-forgotten")
            expect_close(out, expected, call, rtol=1e-5, atol=1e-5)
    expect_cpu_module(submission, "Linear", [fan_in, fan_out], [xs[0]])  # a GPU at hand changes nothing


# -- initialisation -----------------------------------------------------------------------------

def stats(values: torch.Tensor) -> dict:
    v = values.double()
    return {"n": v.numel(), "max": float(v.abs().max()) if v.numel() else 0.0, "mean": float(v.mean()),
            "std": float(v.std()), "inner": float((v.abs() < v.abs().max() / 2).double().mean()) if v.numel() else 0,
            "finite": bool(torch.isfinite(v).all()), "distinct": int(v.unique().numel())}


def named_bound(observed: float, fan_in: int, fan_out: int) -> tuple | None:
    """The known bound the observed one is (within 4 %): (key, English, Chinese), or None."""
    if init() == "kaiming":
        known = [
            ("fan-out", kaiming(fan_out, fan_in),
             "the bound was computed from fan_out ({fan_out}) where nn.Linear uses fan_in ({fan_in}), the number of "
             "inputs each output sums (weight.shape[1]).",
             "边界是用 fan_out（{fan_out}）算的，而 nn.Linear 用的是 fan_in（{fan_in}），即每个输出要累加的输入个数"
             "（weight.shape[1]）。"),
            ("kaiming-a-zero", kaiming(fan_in, fan_out, a=0),
             "that is kaiming_uniform_'s default a=0, bound sqrt(6 / fan_in); nn.Linear passes a=math.sqrt(5), which "
             "gives 1 / sqrt(fan_in).",
             "这是 kaiming_uniform_ 默认的 a=0，边界为 sqrt(6 / fan_in)；nn.Linear 传的是 a=math.sqrt(5)，边界为 "
             "1 / sqrt(fan_in)。"),
            ("kaiming-linear-gain", kaiming(fan_in, fan_out, a=1),
             "that is sqrt(3 / fan_in) (a gain of 1); nn.Linear's a=math.sqrt(5) gives a gain of sqrt(1 / 3): "
             "1 / sqrt(fan_in).",
             "这是 sqrt(3 / fan_in)（增益为 1）；nn.Linear 的 a=math.sqrt(5) 对应的增益是 sqrt(1 / 3)：边界为 "
             "1 / sqrt(fan_in)。"),
            ("xavier-for-kaiming", xavier(fan_in, fan_out),
             "that is Xavier (Glorot) uniform, sqrt(6 / (fan_in + fan_out)); nn.Linear's Kaiming uniform with "
             "a=math.sqrt(5) is 1 / sqrt(fan_in).",
             "这是 Xavier（Glorot）均匀初始化，sqrt(6 / (fan_in + fan_out))；nn.Linear 的 Kaiming 均匀初始化"
             "（a=math.sqrt(5)）是 1 / sqrt(fan_in)。"),
        ]
    else:
        known = [
            ("kaiming-for-xavier", kaiming(fan_in, fan_out),
             "that is nn.Linear's default, 1 / sqrt(fan_in); Xavier (Glorot) uniform is sqrt(6 / (fan_in + "
             "fan_out)), both fans in it.",
             "这是 nn.Linear 的默认值 1 / sqrt(fan_in)；Xavier（Glorot）均匀初始化是 sqrt(6 / (fan_in + fan_out))，"
             "两个 fan 都在里面。"),
            ("xavier-one-fan", math.sqrt(6 / fan_in),
             "that is sqrt(6 / fan_in): Xavier averages the two fans, sqrt(6 / (fan_in + fan_out)).",
             "这是 sqrt(6 / fan_in)：Xavier 取两个 fan 的平均，即 sqrt(6 / (fan_in + fan_out))。"),
            ("xavier-one-fan", math.sqrt(6 / fan_out),
             "that is sqrt(6 / fan_out): Xavier averages the two fans, sqrt(6 / (fan_in + fan_out)).",
             "这是 sqrt(6 / fan_out)：Xavier 取两个 fan 的平均，即 sqrt(6 / (fan_in + fan_out))。"),
            ("xavier-sum-of-fans", math.sqrt(3 / (fan_in + fan_out)),
             "that is sqrt(3 / (fan_in + fan_out)): the Xavier bound has 6 on top, sqrt(6 / (fan_in + fan_out)).",
             "这是 sqrt(3 / (fan_in + fan_out))：Xavier 的边界分子是 6，即 sqrt(6 / (fan_in + fan_out))。"),
        ]
    for key, bound, en, zh in known:
        if abs(observed / bound - 1) < 0.04:
            return key, en, zh
    return None


def judge_values(values, bound: float, fan_in: int, fan_out: int, name: str) -> None:
    """Fail unless `values` look uniform on [-bound, bound] (bound 0: all zeros), naming what they are instead."""
    s = stats(values)
    layer = what(fan_in, fan_out)
    label = Text("{layer}.{name}", "{layer}.{name}", layer=layer, name=verbatim(name))
    values_of = dict(label=label, n=s["n"], bound=bound, fan_in=fan_in, fan_out=fan_out)
    if not s["finite"]:
        fail("{label} has NaN or inf values after initialisation.", "{label} 初始化后含有 NaN 或 inf。",
             **values_of, key="nan")
    if bound == 0:
        if s["max"] != 0:
            fail("{label} is drawn at random (largest {got:.3g} over {n} values); with Xavier initialisation the bias "
                 "starts at exactly 0 (nn.init.zeros_).",
                 "{label} 是随机抽取的（{n} 个值中最大为 {got:.3g}）；Xavier 初始化时 bias 从正好 0 开始（nn.init.zeros_）。",
                 **values_of, got=s["max"], key="bias-not-zero")
        return
    if s["max"] == 0:
        fail("{label} is all zeros over {n} values; it should be drawn uniformly in [-{bound:.4g}, {bound:.4g}]{why}",
             "{label} 在 {n} 个值上全是 0；应在 [-{bound:.4g}, {bound:.4g}] 中均匀抽取{why}", **values_of,
             why=Text(": nn.Linear draws its bias too, from fan_in.", "：nn.Linear 也会抽取 bias，边界由 fan_in 决定。")
             if name == "bias" else Text(".", "。"), key="zeros")
    if s["distinct"] < 0.5 * s["n"]:
        fail("{label} takes only {k} distinct values over {n}: every weight must be drawn on its own.",
             "{label} 在 {n} 个值中只有 {k} 个不同的值：每个权重都要单独抽取。", **values_of, k=s["distinct"],
             key="not-random")
    if abs(s["mean"]) > 0.1 * bound:
        fail("{label} has mean {mean:.3g} over {n} values; a uniform draw on [-{bound:.4g}, {bound:.4g}] has mean 0 "
             "(torch.rand is uniform on [0, 1): shift and scale it, or use uniform_(-bound, bound)).",
             "{label} 在 {n} 个值上的均值为 {mean:.3g}；在 [-{bound:.4g}, {bound:.4g}] 上均匀抽取时均值为 0"
             "（torch.rand 在 [0, 1) 上均匀分布：要平移并缩放，或者用 uniform_(-bound, bound)）。",
             **values_of, mean=s["mean"], key="not-centred")
    observed = s["std"] * math.sqrt(3)  # the bound of a uniform distribution with this standard deviation
    if s["max"] > bound * 1.001 and s["inner"] > 0.56:  # a normal tail beyond its std * sqrt(3), values crowded in
        fail("{label} has values beyond the bound {bound:.4g} (largest {got:.3g}) and {inner:.0%} of them within half "
             "the largest: a normal distribution. nn.Linear draws uniformly in [-bound, bound] (uniform_, "
             "kaiming_uniform_), not kaiming_normal_ or randn.",
             "{label} 有超出边界 {bound:.4g} 的值（最大 {got:.3g}），并且 {inner:.0%} 的值在最大值的一半以内："
             "这是正态分布。nn.Linear 在 [-bound, bound] 中均匀抽取（uniform_、kaiming_uniform_），"
             "而不是 kaiming_normal_ 或 randn。", **values_of, got=s["max"], inner=s["inner"], key="normal-not-uniform")
    if abs(observed / bound - 1) > 0.04 or s["max"] > bound * 1.001:
        named = named_bound(observed, fan_in, fan_out)
        if named:
            key, en, zh = named
            fail("{label} is uniform in about [-{got:.4g}, {got:.4g}] over {n} values, expected [-{bound:.4g}, "
                 "{bound:.4g}]: " + en, "{label} 在 {n} 个值上大约均匀分布于 [-{got:.4g}, {got:.4g}]，应为 "
                 "[-{bound:.4g}, {bound:.4g}]：" + zh, **values_of, got=observed, key=key)
        fail("{label} spreads as a uniform draw in about [-{got:.4g}, {got:.4g}] (standard deviation {std:.4g} over {n} "
             "values), expected [-{bound:.4g}, {bound:.4g}] (standard deviation {want:.4g}).",
             "{label} 的分布大约相当于在 [-{got:.4g}, {got:.4g}] 中均匀抽取（{n} 个值的标准差为 {std:.4g}），"
             "应为 [-{bound:.4g}, {bound:.4g}]（标准差 {want:.4g}）。", **values_of, got=observed, std=s["std"],
             want=bound / math.sqrt(3), key="wrong-bound")
    if s["max"] < 0.97 * bound or abs(s["inner"] - 0.5) > 0.04:
        fail("{label} has the standard deviation of a uniform draw in [-{bound:.4g}, {bound:.4g}], but not its shape "
             "(largest {got:.3g}, {inner:.0%} of the values within half of it, where a uniform draw has 50 %).",
             "{label} 的标准差与在 [-{bound:.4g}, {bound:.4g}] 中均匀抽取一致，但分布形状不对（最大 {got:.3g}，"
             "{inner:.0%} 的值在它的一半以内，而均匀分布是 50 %）。", **values_of, got=s["max"], inner=s["inner"],
             key="not-uniform")


def collect(submission, rng, fan_in, fan_out, layers: int, name: str):
    seed = int(torch.randint(0, 2 ** 31, (), generator=rng))
    return submission.probe(init_values, fan_in, fan_out, layers, seed, name, what=Text(
        "{n} layers `Linear({i}, {o})`", "{n} 个 `Linear({i}, {o})` 层", n=layers, i=fan_in, o=fan_out))


@check("the weights are drawn as the statement's initialisation, judged on many layers of two shapes", points=3,
       zh="weight 按题目规定的初始化方式抽取，在两种形状的许多层上判断", depends="structure")
def test_weight_init(submission, rng):
    for fan_in, fan_out in SHAPES:
        values = collect(submission, rng, fan_in, fan_out, 24000 // (fan_in * fan_out), "weight")
        judge_values(values, weight_bound(fan_in, fan_out), fan_in, fan_out, "weight")


@check("the biases are drawn as the statement's initialisation, judged on many layers", points=2,
       zh="bias 按题目规定的初始化方式抽取，在许多层上判断", depends="structure")
def test_bias_init(submission, rng):
    fan_in, fan_out = SHAPES[0]
    bias = collect(submission, rng, fan_in, fan_out, 300, "bias")
    if bias is None:
        fail("`Linear(64, 16)` has no bias: it should have one unless bias=False.",
             "`Linear(64, 16)` 没有 bias：除非 bias=False，否则应该有。", key="bias-missing")
    if init() == "kaiming" and bias.numel() and float(bias.abs().max()) > 0 and \
            abs(float(bias.std()) * math.sqrt(3) / (1 / math.sqrt(fan_out)) - 1) < 0.06:
        fail("`Linear(64, 16).bias` is uniform in about +-{got:.4g}, expected +-{want:.4g}: the bias bound is "
             "1 / sqrt(fan_in), fan_in = 64 (the weight's in_features), not fan_out.",
             "`Linear(64, 16).bias` 大约在 +-{got:.4g} 内均匀分布，应为 +-{want:.4g}：bias 的边界是 1 / sqrt(fan_in)，"
             "fan_in = 64（weight 的 in_features），不是 fan_out。", got=float(bias.std()) * math.sqrt(3),
             want=1 / math.sqrt(fan_in), key="bias-fan-out")
    judge_values(bias, bias_bound(fan_in, fan_out), fan_in, fan_out, "bias")


@check("each layer draws fresh values from torch's generator (seeded by torch.manual_seed); reset_parameters() "
       "redraws in place", points=1,
       zh="每一层都从 torch 的随机数生成器抽取新值（受 torch.manual_seed 控制）；reset_parameters() 原地重新抽取",
       depends=("weight_init", "bias_init"))
def test_fresh_draws(submission, rng):
    fan_in, fan_out = 8, 5
    seed = int(torch.randint(0, 2 ** 30, (), generator=rng))
    d = submission.probe(draws, fan_in, fan_out, seed, what=what(fan_in, fan_out))
    layer = what(fan_in, fan_out)
    if torch.equal(d["first"], d["second"]) and d["first"].unique().numel() == 1:  # no draw at all: no seed either
        fail("Two {layer} built one after the other have the same weights, all {value:.4g}: nothing was drawn at "
             "random. Fill them with uniform draws (nn.init.uniform_ or kaiming_uniform_).",
             "先后创建的两个 {layer} 权重相同，全都是 {value:.4g}：没有任何随机抽取。请用均匀分布抽取来填充"
             "（nn.init.uniform_ 或 kaiming_uniform_）。", layer=layer, value=float(d["first"].flatten()[0]),
             key="not-random")
    if torch.equal(d["first"], d["second"]):
        fail("Two {layer} built one after the other have the same weights: a fixed seed inside __init__ or "
             "reset_parameters (torch.manual_seed there resets everyone's generator). Draw from torch's generator "
             "as it stands.",
             "先后创建的两个 {layer} 权重相同：__init__ 或 reset_parameters 里固定了种子（在那里调用 torch.manual_seed "
             "会重置所有人的生成器）。请直接从 torch 当前的生成器抽取。", layer=layer, key="fixed-seed")
    if not torch.equal(d["first"], d["again"]) or torch.equal(d["first"], d["other"]):
        fail("After torch.manual_seed({seed}), {layer} gets other weights each time: the values do not come from "
             "torch's generator (random, numpy, or a torch.Generator of your own?). Use torch's: uniform_, "
             "torch.rand, nn.init.",
             "调用 torch.manual_seed({seed}) 之后，每次创建的 {layer} 权重都不同：这些值不是来自 torch 的生成器"
             "（用了 random、numpy，还是你自己的 torch.Generator？）。请用 torch 的：uniform_、torch.rand、nn.init。",
             seed=seed, layer=layer, key="not-torch-generator")
    if torch.equal(d["reset"], d["second"]):
        fail("{layer}.reset_parameters() left the weights as they were: it must draw new values.",
             "{layer}.reset_parameters() 没有改变权重：它必须重新抽取。", layer=layer, key="reset-does-nothing")
    if not d["same_objects"]:
        fail("{layer}.reset_parameters() replaced the nn.Parameter objects: an optimizer made before holds the old "
             "ones and would never train the new. Draw into the existing parameters in place, under torch.no_grad() "
             "(uniform_, nn.init.*_).",
             "{layer}.reset_parameters() 替换了 nn.Parameter 对象：之前创建的优化器持有的是旧参数，永远不会训练新的。"
             "请在 torch.no_grad() 下原地向已有参数抽取新值（uniform_、nn.init.*_）。", layer=layer,
             key="parameters-replaced")
