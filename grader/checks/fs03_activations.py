"""Hidden checks of fs03: GELU (exact and tanh), SiLU and a gated MLP (SwiGLU, or GEGLU in a kata), by hand.

The judge draws inputs per seed (ordinary values, values far in both tails up to +-1000 where an exp overflows,
zero, an empty tensor, float16 and bfloat16 inputs) and compares with torch's own `F.gelu(approximate=...)` and
`F.silu` in float64. A wrong value is named only when it is what a known slip computes, each computed here: the
tanh approximation where the exact erf is asked (or the reverse), the sigmoid approximation 1.702, erf(x) for
erf(x / sqrt 2), the CDF without its x, x^2 for x^3 or a wrong constant in the tanh, sigmoid for SiLU, ReLU.

The gated MLP is built by the learner's class with its three projections (`gate`, `up`, `down`, nn.Linear
without bias); the judge loads weights it drew into them, runs the forward in the sandbox and compares with
F.linear and F.silu (F.gelu for GEGLU) computed here with the same weights: gate and up swapped, the activation on
the product or missing, sigmoid (GLU) or ReLU for the activation are named.

The built-ins are forbidden in gelu and silu: a probe records the torch functions each calls (a TorchFunctionMode
sees `F.gelu`, `nn.GELU`, `F.silu`, `nn.SiLU`); a value one of them computed earns nothing (the ex05 rule), and
the by-hand check names it.

Kata variants: `variant("glu")` is the gated MLP: SwiGLU (class SwiGLU, SiLU on the gate, as LLaMA) or GEGLU
(class GEGLU, the tanh GELU on the gate, as Gemma); the class name, the reference and the messages follow it.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import (Text, check, expect_close, expect_tensor, fail, matches, probe, recording_calls, variant,
                             verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)

PARTS = ("gate", "up", "down")

# -- probes (run in the sandbox) ----------------------------------------------------------------


@probe
def torch_calls(module, x):
    """For gelu(x), gelu(x, approximate="tanh") and silu(x), the names of the torch functions each called (through a
    TorchFunctionMode, which sees every spelling). An error is the value checks' lesson."""

    found = {}
    for label, name, kwargs in (("gelu", "gelu", {}), ("gelu_tanh", "gelu", {"approximate": "tanh"}),
                                ("silu", "silu", {})):
        names = set()

        try:
            with recording_calls(names):
                getattr(module, name)(x, **kwargs)
        except Exception:  # a missing or failing function is judged by the value checks
            pass
        found[label] = sorted(names)
    return found


@probe
def glu_run(module, cls, d_model, d_hidden, weights, xs):
    """Build cls(d_model, d_hidden); describe its parts and parameters; with `weights` (name -> tensor), load them
    into the parts and run the forward on each x."""
    glu = getattr(module, cls)(d_model, d_hidden)
    info = {"is_module": isinstance(glu, torch.nn.Module), "type": type(glu).__name__, "parts": {}, "params": []}
    if not info["is_module"]:
        return info
    info["params"] = [[name, list(p.shape)] for name, p in glu.named_parameters()]
    for name in ("gate", "up", "down"):
        part = getattr(glu, name, None)
        weight, bias = getattr(part, "weight", None), getattr(part, "bias", None)
        info["parts"][name] = None if part is None else {
            "type": type(part).__name__, "module": isinstance(part, torch.nn.Module),
            "weight": list(weight.shape) if isinstance(weight, torch.Tensor) else None,
            "bias": list(bias.shape) if isinstance(bias, torch.Tensor) else None}
    if weights is not None:
        with torch.no_grad():
            for name, w in weights.items():
                getattr(glu, name).weight.copy_(w)
        out = [glu(x) for x in xs]
        info["out"] = [o.detach() if isinstance(o, torch.Tensor) else o for o in out]
    return info


# -- judge-side helpers -------------------------------------------------------------------------

def builtins_used(submission, rng, label: str) -> list[str]:
    """The forbidden torch functions `label` (gelu, gelu_tanh or silu) called, probed once per grading."""
    calls = submission.once("calls", lambda: submission.probe(torch_calls, torch.randn(3, 4, generator=rng),
                                                              what=Text("`gelu` and `silu`", "`gelu` 和 `silu`")))
    return forbidden_calls("silu" if label == "silu" else "gelu", calls.get(label, []))


def by_hand_only(submission, rng, label: str) -> None:
    """A value torch's own activation computed is not earned here (the ex05 rule)."""
    used = builtins_used(submission, rng, label)
    if used:
        call = {"gelu": "gelu(x)", "gelu_tanh": 'gelu(x, approximate="tanh")', "silu": "silu(x)"}[label]
        fail("`{call}` calls torch's own `{name}` ({spellings}): its values are torch's, not yours. Write the formula "
             "with torch.erf, torch.tanh or torch.sigmoid.",
             "`{call}` 调用了 torch 自带的 `{name}`（{spellings}）：这些值是 torch 算的，不是你写的。"
             "请用 torch.erf、torch.tanh 或 torch.sigmoid 写出公式。",
             call=verbatim(call), name=verbatim(used[0]),
             spellings=verbatim("F.gelu, nn.GELU" if "gelu" in used[0] else "F.silu, nn.SiLU"), key="builtin-activation")


C = math.sqrt(2 / math.pi)


def gelu_exact(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def gelu_tanh(x, c=C, power=3):
    return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * x ** power)))


def draw(rng, n=28):
    """Values [4, n // 4]: ordinary ones, both tails (+-6, +-30) and zero, shuffled."""
    x = 3 * torch.randn(n, generator=rng)
    x[:5] = torch.tensor([0.0, 6.0, -6.0, 30.0, -30.0])
    return x[torch.randperm(n, generator=rng)].reshape(4, n // 4)


def cases(rng):
    return [draw(rng), draw(rng, 8)[:1], torch.empty(0, 3)]


GELU_SLIPS = {  # (label, formula in float64, key, English, Chinese)
    "none": [("tanh", lambda x: gelu_tanh(x), "tanh-for-exact",
              "that is the tanh approximation; approximate=\"none\" asks for the exact GELU, x * Phi(x) with "
              "Phi(x) = 0.5 * (1 + erf(x / sqrt(2))).",
              "这是 tanh 近似；approximate=\"none\" 要求精确的 GELU，即 x * Phi(x)，其中 Phi(x) = 0.5 * (1 + erf(x / sqrt(2)))。")],
    "tanh": [("exact", gelu_exact, "exact-for-tanh",
              "that is the exact GELU (erf); approximate=\"tanh\" asks for 0.5 * x * (1 + tanh(sqrt(2 / pi) * "
              "(x + 0.044715 * x^3))). Is the approximate argument read?",
              "这是精确的 GELU（erf）；approximate=\"tanh\" 要求 0.5 * x * (1 + tanh(sqrt(2 / pi) * "
              "(x + 0.044715 * x^3)))。approximate 参数有没有被读取？"),
             ("square", lambda x: gelu_tanh(x, power=2), "tanh-cubic",
              "the correction inside the tanh is 0.044715 * x^3 (a cube), not x^2.",
              "tanh 里面的修正项是 0.044715 * x^3（立方），不是 x^2。"),
             ("no sqrt", lambda x: gelu_tanh(x, c=2 / math.pi), "tanh-constant",
              "the factor inside the tanh is sqrt(2 / pi), about 0.798, not 2 / pi.",
              "tanh 里面的系数是 sqrt(2 / pi)，约 0.798，不是 2 / pi。"),
             ("pi over 2", lambda x: gelu_tanh(x, c=math.sqrt(math.pi / 2)), "tanh-constant",
              "the factor inside the tanh is sqrt(2 / pi), about 0.798, not sqrt(pi / 2).",
              "tanh 里面的系数是 sqrt(2 / pi)，约 0.798，不是 sqrt(pi / 2)。")],
}
COMMON_SLIPS = [
    ("sigmoid", lambda x: x * torch.sigmoid(1.702 * x), "sigmoid-approximation",
     "that is the sigmoid approximation x * sigmoid(1.702 * x), off by up to 0.02; use the erf or the tanh formula.",
     "这是 sigmoid 近似 x * sigmoid(1.702 * x)，误差可达 0.02；请用 erf 或 tanh 的公式。"),
    ("erf x", lambda x: 0.5 * x * (1 + torch.erf(x)), "erf-without-sqrt2",
     "erf takes x / sqrt(2): Phi(x) = 0.5 * (1 + erf(x / sqrt(2))), the CDF of the standard normal.",
     "erf 的参数是 x / sqrt(2)：Phi(x) = 0.5 * (1 + erf(x / sqrt(2)))，即标准正态分布的 CDF。"),
    ("cdf", lambda x: 0.5 * (1 + torch.erf(x / math.sqrt(2))), "cdf-without-x",
     "that is Phi(x), the gate alone; GELU multiplies it by x: x * Phi(x).",
     "这是 Phi(x)，只是门控本身；GELU 还要乘以 x：x * Phi(x)。"),
    ("silu", lambda x: x * torch.sigmoid(x), "silu-for-gelu",
     "that is SiLU, x * sigmoid(x), not GELU.", "这是 SiLU，即 x * sigmoid(x)，不是 GELU。"),
    ("relu", torch.relu, "relu-instead", "that is ReLU.", "这是 ReLU。"),
]


def expect_activation(value, x, expected, what, slips, exp_hint) -> None:
    """`value` matches `expected` (float64); else the slip it is, a NaN from an overflowing exp, or the first
    wrong entry."""
    value = expect_tensor(value, what, shape=list(x.shape), floating=True)
    if matches(value, expected, rtol=1e-5, atol=1e-5, equal_nan=True):
        return
    bad = ~torch.isfinite(value.double()) & torch.isfinite(expected)
    if bad.any():
        at = float(x.reshape(-1)[bad.reshape(-1).nonzero()[0, 0]])
        fail("{what} is NaN or inf at x = {at:g}, where the answer is {want:.6g}: {hint}",
             "{what} 在 x = {at:g} 处为 NaN 或 inf，而答案是 {want:.6g}：{hint}",
             what=what, at=at, want=float(expected.reshape(-1)[bad.reshape(-1).nonzero()[0, 0]]), hint=exp_hint,
             key="overflow")
    for _, formula, key, en, zh in slips:
        if matches(value, formula(x.double()), rtol=1e-5, atol=1e-5, equal_nan=True):
            fail("{what} is wrong: " + en, "{what} 不对：" + zh, what=what, key=key)
    expect_close(value, expected, what, rtol=1e-5, atol=1e-5, hints={
        "factor 2": ("GELU is 0.5 * x * (...): the 0.5 is missing.", "GELU 是 0.5 * x * (...)：少了 0.5。"),
        "factor 0.5": ("The 0.5 appears once.", "0.5 只出现一次。")})


EXP_HINT = Text("exp of a large number is inf in float32 (past 88), and inf / inf is NaN. Use torch.tanh, torch.erf "
                "and torch.sigmoid, which are finite everywhere, instead of building them from exp.",
                "在 float32 中大数的 exp 是 inf（超过 88 就是），inf / inf 是 NaN。请用处处有限的 torch.tanh、"
                "torch.erf 和 torch.sigmoid，不要自己用 exp 拼出它们。")


def judge_gelu(submission, rng, approximate: str) -> None:
    label = "gelu" if approximate == "none" else "gelu_tanh"
    by_hand_only(submission, rng, label)
    for x in cases(rng):
        if approximate == "none":
            what, value = f"gelu(x{list(x.shape)})", submission.gelu(x)
        else:
            what, value = f'gelu(x{list(x.shape)}, approximate="tanh")', submission.gelu(x, approximate="tanh")
        expected = F.gelu(x.double(), approximate=approximate)
        expect_activation(value, x, expected, what, GELU_SLIPS[approximate] + COMMON_SLIPS, EXP_HINT)


# -- gelu and silu -------------------------------------------------------------------------------

@check("gelu(x) is the exact GELU, x * Phi(x) with erf, as F.gelu", points=2,
       zh="gelu(x) 是精确的 GELU，即用 erf 计算的 x * Phi(x)，与 F.gelu 一致")
def test_gelu_exact(submission, rng):
    judge_gelu(submission, rng, "none")


@check('gelu(x, approximate="tanh") is the tanh approximation, as F.gelu(approximate="tanh")', points=2,
       zh='gelu(x, approximate="tanh") 是 tanh 近似，与 F.gelu(approximate="tanh") 一致')
def test_gelu_tanh(submission, rng):
    judge_gelu(submission, rng, "tanh")


SILU_SLIPS = [
    ("sigmoid", torch.sigmoid, "sigmoid-for-silu", "that is sigmoid(x); SiLU multiplies it by x: x * sigmoid(x).",
     "这是 sigmoid(x)；SiLU 还要乘以 x：x * sigmoid(x)。"),
    ("minus", lambda x: x * torch.sigmoid(-x), "sigmoid-sign",
     "that is x * sigmoid(-x); SiLU is x * sigmoid(x) = x / (1 + exp(-x)).",
     "这是 x * sigmoid(-x)；SiLU 是 x * sigmoid(x) = x / (1 + exp(-x))。"),
    ("gelu", lambda x: gelu_exact(x), "gelu-for-silu", "that is GELU, not SiLU.", "这是 GELU，不是 SiLU。"),
    ("relu", torch.relu, "relu-instead", "that is ReLU.", "这是 ReLU。"),
]


@check("silu(x) is x * sigmoid(x), finite on +-1000, as F.silu", points=1,
       zh="silu(x) 是 x * sigmoid(x)，在 +-1000 上也有限，与 F.silu 一致")
def test_silu(submission, rng):
    by_hand_only(submission, rng, "silu")
    for x in cases(rng):
        x.reshape(-1)[:2] = torch.tensor([1000.0, -1000.0])[:x.numel()]
        value = submission.silu(x)
        expect_activation(value, x, F.silu(x.double()), f"silu(x{list(x.shape)})", SILU_SLIPS, EXP_HINT)


HALF = {torch.float16: (1e-2, 2e-3), torch.bfloat16: (3e-2, 1e-2)}  # (rtol, atol) a half-precision result meets


@check("gelu and silu keep float16 and bfloat16 inputs in their dtype, with right values", points=1,
       zh="gelu 和 silu 对 float16 和 bfloat16 输入保持其 dtype，数值正确",
       depends=("gelu_exact", "gelu_tanh", "silu"))
def test_half(submission, rng):
    for dtype, (rtol, atol) in HALF.items():
        x = draw(rng).to(dtype)
        flat = x.reshape(-1)
        flat[flat.argmin()] = -20.0  # the draw's -30, never its +30: exp(20) and exp(30) overflow float16 either way
        for label, call, kwargs, reference in (
                ("gelu", "gelu", {}, lambda v: F.gelu(v)),
                ("gelu_tanh", "gelu", {"approximate": "tanh"}, lambda v: F.gelu(v, approximate="tanh")),
                ("silu", "silu", {}, F.silu)):
            by_hand_only(submission, rng, label)
            args = ', approximate="tanh"' if kwargs else ""
            what = f"{call}(x[{', '.join(map(str, x.shape))}] {str(dtype).removeprefix('torch.')}{args})"
            value = expect_tensor(getattr(submission, call)(x, **kwargs), what, shape=list(x.shape), floating=True)
            if value.dtype != dtype:
                fail("{what} returned {got}: keep the input's dtype (compute in float32 if you like, then cast back "
                     "with .to(x.dtype)).",
                     "{what} 返回了 {got}：请保持输入的 dtype（可以用 float32 计算，再用 .to(x.dtype) 转换回来）。",
                     what=what, got=str(value.dtype).removeprefix("torch."), key="wrong-dtype")
            expected = reference(x.double())
            if not torch.isfinite(value.double()).all():
                fail("{what} has NaN or inf: in {dtype}, exp overflows past x = 11 (float16). Use torch.sigmoid, "
                     "torch.tanh and torch.erf, which stay finite.",
                     "{what} 含有 NaN 或 inf：在 {dtype} 中 exp 过了 x = 11 就溢出（float16）。请用始终有限的 "
                     "torch.sigmoid、torch.tanh 和 torch.erf。", what=what, dtype=str(dtype).removeprefix("torch."),
                     key="overflow")
            expect_close(value.double(), expected, what, rtol=rtol, atol=atol)


# -- the gated MLP --------------------------------------------------------------------------------

def glu() -> dict:
    """This draw's gated MLP: {"name", "cls", "act"...} (exercise.toml's [variants] glu)."""
    return variant("glu")


def act(x):
    return F.silu(x) if glu()["name"] == "swiglu" else F.gelu(x, approximate="tanh")


def shapes(d_model, d_hidden) -> dict:
    return {"gate": [d_hidden, d_model], "up": [d_hidden, d_model], "down": [d_model, d_hidden]}


def build(submission, rng, weights=None, xs=()):
    d_model = int(torch.randint(4, 7, (), generator=rng))
    d_hidden = d_model + int(torch.randint(3, 6, (), generator=rng))  # never square: a swapped size fails loudly
    cls = glu()["cls"]
    what = Text("`{cls}({d}, {h})`", "`{cls}({d}, {h})`", cls=verbatim(cls), d=d_model, h=d_hidden)
    if weights == "draw":
        weights = {name: torch.randn(*shape, generator=rng) / math.sqrt(shape[1])
                   for name, shape in shapes(d_model, d_hidden).items()}
        xs = [torch.randn(2, 3, d_model, generator=rng), torch.randn(1, d_model, generator=rng)]
    info = submission.probe(glu_run, cls, d_model, d_hidden, weights, list(xs), what=what)
    return d_model, d_hidden, what, info, weights, xs


@check("the gated MLP has its three projections gate, up and down: nn.Linear without bias, of the right shapes",
       points=1, zh="门控 MLP 有三个投影 gate、up 和 down：不带 bias 的 nn.Linear，形状正确")
def test_glu_structure(submission, rng):
    d_model, d_hidden, what, info, _, _ = build(submission, rng)
    cls = verbatim(glu()["cls"])
    if not info["is_module"]:
        fail("{what} should be an nn.Module, got {got}: write `class {cls}(nn.Module)` and call super().__init__().",
             "{what} 应该是 nn.Module，实际得到 {got}：请写 `class {cls}(nn.Module)`，并调用 super().__init__()。",
             what=what, got=verbatim(info["type"]), cls=cls, key="not-a-module")
    want = shapes(d_model, d_hidden)
    for name in PARTS:
        part = info["parts"][name]
        if part is None:
            fail("{what} has no attribute `{name}`: the three projections are self.gate, self.up and self.down.",
                 "{what} 没有属性 `{name}`：三个投影是 self.gate、self.up 和 self.down。", what=what,
                 name=verbatim(name), key="missing-projection")
        if not part["module"] or part["weight"] is None:
            fail("`self.{name}` is {got}: make it an nn.Linear (a module with a weight), so it is registered and "
                 "trained.", "`self.{name}` 是 {got}：请把它写成 nn.Linear（带 weight 的模块），这样它才会被注册并参与训练。",
                 name=verbatim(name), got=verbatim(part["type"]), key="not-a-linear")
        if part["weight"] != want[name]:
            swapped = part["weight"] == want[name][::-1]
            fail("`self.{name}.weight` has shape {got}, expected {want}: {why}",
                 "`self.{name}.weight` 的形状为 {got}，应为 {want}：{why}", name=verbatim(name), got=part["weight"],
                 want=want[name], why=Text(
                     "in and out are swapped; nn.Linear(in_features, out_features) stores weight as [out, in].",
                     "输入和输出维度对调了；`nn.Linear(in_features, out_features)` 的 weight 形状是 `[out, in]`。")
                 if swapped else Text("gate and up map d_model to d_hidden, down maps d_hidden back to d_model.",
                                      "gate 和 up 把 d_model 映射到 d_hidden，down 再把 d_hidden 映射回 d_model。"),
                 key="projection-shape")
        if part["bias"] is not None:
            fail("`self.{name}` has a bias: the projections of this MLP have none (bias=False), as in LLaMA and "
                 "Gemma.", "`self.{name}` 带有 bias：这个 MLP 的投影都没有 bias（bias=False），与 LLaMA 和 Gemma 一样。",
                 name=verbatim(name), key="projection-bias")
    names = sorted(name for name, _ in info["params"])
    if names != sorted(f"{p}.weight" for p in PARTS):
        fail("{what} has the parameters {got}; expected exactly gate.weight, up.weight and down.weight.",
             "{what} 的参数是 {got}；应该正好是 gate.weight、up.weight 和 down.weight。", what=what,
             got=verbatim(", ".join(names) or "none"), key="extra-parameters")


def forward_slips(x, w):
    """(formula, key, English, Chinese) for each known slip of the gated forward, computed in float64."""
    g, u = F.linear(x, w["gate"]), F.linear(x, w["up"])
    down = lambda h: F.linear(h, w["down"])  # noqa: E731
    other = (lambda v: F.gelu(v, approximate="tanh")) if glu()["name"] == "swiglu" else F.silu
    slips = [
        (down(g * act(u)), "gate-up-swapped",
         "the activation went on `up`; it goes on the gate: down(act(gate(x)) * up(x)).",
         "激活函数用在了 `up` 上；它应该作用在门控上：down(act(gate(x)) * up(x))。"),
        (down(act(g * u)), "act-on-product",
         "the activation was applied to the product; it applies to the gate alone: down(act(gate(x)) * up(x)).",
         "激活函数作用在了乘积上；它只作用于门控：down(act(gate(x)) * up(x))。"),
        (down(g * u), "no-activation",
         "no activation: gate(x) * up(x) is a bilinear layer; the gate goes through {act} first.",
         "没有激活函数：gate(x) * up(x) 只是一个双线性层；门控要先经过 {act}。"),
        (down(torch.sigmoid(g) * u), "sigmoid-gate",
         "the gate went through sigmoid (the original GLU); this MLP uses {act}.",
         "门控经过的是 sigmoid（最初的 GLU）；这个 MLP 用的是 {act}。"),
        (down(torch.relu(g) * u), "relu-gate", "the gate went through ReLU (ReGLU); this MLP uses {act}.",
         "门控经过的是 ReLU（ReGLU）；这个 MLP 用的是 {act}。"),
        (down(other(g) * u), "other-activation", "the gate went through {other}; this MLP uses {act}.",
         "门控经过的是 {other}；这个 MLP 用的是 {act}。"),
        (down(act(g) + u), "sum-for-product", "the gate and up are added; they are multiplied elementwise.",
         "gate 和 up 被相加了；它们应逐元素相乘。"),
    ]
    if glu()["name"] == "geglu":
        slips.append((down(F.gelu(g) * u), "exact-for-tanh",
                      "the gate went through the exact (erf) GELU; GEGLU here uses the tanh approximation, "
                      'gelu(x, approximate="tanh").',
                      '门控经过的是精确（erf）GELU；这里的 GEGLU 用的是 tanh 近似，即 gelu(x, approximate="tanh")。'))
    return slips


@check("the gated MLP's forward is down(act(gate(x)) * up(x)), with the weights loaded into its projections",
       points=2, zh="门控 MLP 的 forward 是 down(act(gate(x)) * up(x))，权重载入它的投影之后也正确",
       depends="glu_structure")
def test_glu_forward(submission, rng):
    _, _, what, info, weights, xs = build(submission, rng, "draw")
    w = {name: t.double() for name, t in weights.items()}
    act_name = verbatim(glu()["act"])
    other = verbatim("GELU (tanh)" if glu()["name"] == "swiglu" else "SiLU")
    for x, out in zip(xs, info["out"]):
        call = Text("{what}(x{shape})", "{what}(x{shape})", what=what, shape=list(x.shape))
        out = expect_tensor(out, call, shape=list(x.shape), floating=True)
        expected = F.linear(act(F.linear(x.double(), w["gate"])) * F.linear(x.double(), w["up"]), w["down"])
        if matches(out, expected, rtol=1e-5, atol=1e-5, equal_nan=True):
            continue
        for formula, key, en, zh in forward_slips(x.double(), w):
            if matches(out, formula, rtol=1e-5, atol=1e-5, equal_nan=True):
                fail("{call} is wrong: " + en, "{call} 不对：" + zh, call=call, act=act_name, other=other, key=key)
        expect_close(out, expected, call, rtol=1e-5, atol=1e-5)


# -- by hand ------------------------------------------------------------------------------------

@check("gelu and silu are written by hand (no F.gelu, nn.GELU, F.silu or nn.SiLU)", points=1,
       zh="gelu 和 silu 是自己写的（不调用 F.gelu、nn.GELU、F.silu 或 nn.SiLU）",
       depends=("gelu_exact", "gelu_tanh", "silu"))
def test_by_hand(submission, rng):
    for label in ("gelu", "gelu_tanh", "silu"):
        by_hand_only(submission, rng, label)
