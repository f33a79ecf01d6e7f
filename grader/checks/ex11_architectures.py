"""Hidden checks of ex11: an nn.Sequential MLP, a residual block, weight init through model.apply."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import check, expect_close, expect_tensor, fail, probe

SENTINEL = 7.0  # every parameter holds this before model.apply(init_weights): untouched ones show


def randint(rng: torch.Generator, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def draw_sizes(rng: torch.Generator) -> list[int]:
    return [randint(rng, 2, 9) for _ in range(randint(rng, 3, 5))]


def expected_layers(sizes: list[int]) -> list[str]:
    names = []
    for i in range(len(sizes) - 1):
        names += ["Linear"] + (["ReLU"] if i < len(sizes) - 2 else [])
    return names


# -- probes (run in the sandbox) --------------------------------------------------------------

def _leaves(model: nn.Module) -> list[nn.Module]:
    """The modules that hold no sub-modules, in order (nested Sequentials are looked through)."""
    return [m for m in model.modules() if not list(m.children())]


@probe
def mlp_structure(module, sizes):
    model = module.make_mlp(sizes)
    facts = {"type": type(model).__name__, "sequential": isinstance(model, nn.Sequential)}
    if isinstance(model, nn.Module):
        facts["layers"] = [type(m).__name__ for m in _leaves(model)]
        facts["linears"] = [[m.in_features, m.out_features, m.bias is not None]
                            for m in _leaves(model) if isinstance(m, nn.Linear)]
        facts["n_params"] = sum(p.numel() for p in model.parameters())
    return facts


@probe
def mlp_forward(module, sizes, x):
    model = module.make_mlp(sizes)
    linears = [m for m in _leaves(model) if isinstance(m, nn.Linear)]
    return {"y": model(x),
            "params": [[m.weight.detach(), m.bias.detach() if m.bias is not None else None] for m in linears],
            "n_params": sum(p.numel() for p in model.parameters())}


BLOCK_PARTS = ("conv1", "bn1", "conv2", "bn2")


@probe
def block_structure(module, channels):
    block = module.ResidualBlock(channels)
    facts = {"n_params": sum(p.numel() for p in block.parameters()),
             "params": {name: list(p.shape) for name, p in block.named_parameters()}, "parts": {}}
    for name in BLOCK_PARTS:
        part = getattr(block, name, None)
        if isinstance(part, nn.Conv2d):
            facts["parts"][name] = {"type": "Conv2d", "kernel_size": list(part.kernel_size),
                                    "padding": str(part.padding), "stride": list(part.stride),
                                    "bias": part.bias is not None, "in": part.in_channels, "out": part.out_channels}
        else:
            facts["parts"][name] = {"type": type(part).__name__ if part is not None else None}
    return facts


@probe
def block_forward(module, channels, state, x, training):
    """Load the judge's tensors into conv1/bn1/conv2/bn2, run the block in train or eval mode."""
    block = module.ResidualBlock(channels)
    missing = [name for name in BLOCK_PARTS if not isinstance(getattr(block, name, None), nn.Module)]
    if missing:
        return {"missing": missing}
    with torch.no_grad():
        for key, value in state.items():
            part, attr = key.split(".")
            target = getattr(getattr(block, part), attr, None)
            if not isinstance(target, torch.Tensor) or target.shape != value.shape:
                return {"bad_shape": key, "shape": list(target.shape) if isinstance(target, torch.Tensor) else None,
                        "want": list(value.shape)}
            target.copy_(value)
        for conv in (block.conv1, block.conv2):
            if getattr(conv, "bias", None) is not None:
                conv.bias.zero_()
    block.train(training)
    try:
        y = block(x)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - explained with the block's padding below
        return {"error": f"{type(exc).__name__}: {exc}"[:300],
                "paddings": [str(getattr(block.conv1, "padding", "?")), str(getattr(block.conv2, "padding", "?"))]}
    return {"y": y.detach() if isinstance(y, torch.Tensor) else y,
            "paddings": [str(getattr(block.conv1, "padding", "?")), str(getattr(block.conv2, "padding", "?"))]}


def init_model(sizes: list[int]) -> nn.Sequential:
    """A small CNN with every case init_weights meets: convs with and without bias, batch norms,
    nested containers, layers without parameters, and Linear layers. The layers are large enough
    (thousands of weights each) for their statistics to tell one initialisation from another."""
    c_in, c_mid, c_out, hidden, n_out = sizes
    return nn.Sequential(
        nn.Conv2d(c_in, c_mid, 3, padding=1, bias=False), nn.BatchNorm2d(c_mid), nn.ReLU(),
        nn.Sequential(nn.Conv2d(c_mid, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(c_out, hidden), nn.ReLU(), nn.Linear(hidden, n_out),
    )


def draw_init_sizes(rng: torch.Generator) -> list[int]:
    return [randint(rng, 16, 24), randint(rng, 32, 48), randint(rng, 48, 64), randint(rng, 384, 512),
            randint(rng, 10, 16)]


@probe
def init_facts(module, sizes):
    """Fill every parameter with SENTINEL, run model.apply(init_weights), report each layer's tensors."""
    model = init_model(sizes)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(SENTINEL)
    errors = []

    def guarded(m):
        try:
            module.init_weights(m)
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported per module type by the checks
            errors.append({"type": type(m).__name__, "bias_none": getattr(m, "bias", 0) is None,
                           "error": f"{type(exc).__name__}: {exc}"[:200]})

    model.apply(guarded)
    layers = []
    for name, m in model.named_modules():
        if isinstance(m, (nn.Linear, nn.Conv2d, nn.BatchNorm2d)):
            fan_in = m.weight[0].numel() if not isinstance(m, nn.BatchNorm2d) else 0
            fan_out = m.weight.shape[0] * (m.weight[0, 0].numel() if isinstance(m, nn.Conv2d) else 1)
            layers.append({"name": name, "type": type(m).__name__, "fan_in": fan_in, "fan_out": fan_out,
                           "weight": m.weight.detach().clone(),
                           "bias": m.bias.detach().clone() if m.bias is not None else None})
    return {"errors": errors, "layers": layers}


# -- make_mlp -------------------------------------------------------------------------------------

@check("make_mlp returns an nn.Sequential: Linear, ReLU, ..., Linear", points=1,
       zh="make_mlp 返回 nn.Sequential：Linear、ReLU、……、Linear")
def test_mlp_structure(submission, rng):
    sizes = draw_sizes(rng)
    facts = submission.probe(mlp_structure, sizes, what=f"`make_mlp({sizes})`")
    if not facts["sequential"]:
        fail(f"make_mlp({sizes}) should return an nn.Sequential, got a {facts['type']}.",
             f"make_mlp({sizes}) 应返回 nn.Sequential，实际得到 {facts['type']}。")
    want, got = expected_layers(sizes), facts["layers"]
    if got and got[-1] == "ReLU" and got[:-1] == want:
        fail(f"make_mlp({sizes}) ends with a ReLU: the network's outputs (scores, logits, regression values) could "
             "never be negative. Put no activation after the last Linear.",
             f"make_mlp({sizes}) 以 ReLU 结尾：网络的输出（分数、logits、回归值）永远不可能为负。最后一个 Linear 之后不要加激活函数。")
    if [n for n in got if n == "Linear"] == [n for n in want if n == "Linear"] and got != want:
        fail(f"make_mlp({sizes}) should have the layers {want}, got {got}: without a ReLU between them, two Linear "
             "layers collapse into a single linear map.",
             f"make_mlp({sizes}) 的层应为 {want}，实际为 {got}：两个 Linear 之间没有 ReLU，就等于一个线性映射。")
    if got != want:
        fail(f"make_mlp({sizes}) should have the layers {want}, got {got}.",
             f"make_mlp({sizes}) 的层应为 {want}，实际为 {got}。")
    for i, ((n_in, n_out, _), a, b) in enumerate(zip(facts["linears"], sizes[:-1], sizes[1:])):
        if (n_in, n_out) != (a, b):
            fail(f"Linear layer {i} of make_mlp({sizes}) should be Linear({a}, {b}), got Linear({n_in}, {n_out}).",
                 f"make_mlp({sizes}) 的第 {i} 个 Linear 应为 Linear({a}, {b})，实际为 Linear({n_in}, {n_out})。")


@check("make_mlp: output shape, parameter count and values", points=1, zh="make_mlp：输出形状、参数个数和数值")
def test_mlp_forward(submission, rng):
    sizes = draw_sizes(rng)
    x = torch.randn(randint(rng, 2, 8), sizes[0], generator=rng)
    got = submission.probe(mlp_forward, sizes, x, what=f"`make_mlp({sizes})(x)`")
    expected_count = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))
    if got["n_params"] != expected_count:
        fail(f"make_mlp({sizes}) has {got['n_params']} parameters, expected {expected_count} "
             f"(each Linear(a, b) has a*b weights and b biases).",
             f"make_mlp({sizes}) 有 {got['n_params']} 个参数，应为 {expected_count}（每个 Linear(a, b) 有 a*b 个权重和 b 个偏置）。")
    y = expect_tensor(got["y"], f"make_mlp({sizes})(x)", shape=[x.shape[0], sizes[-1]])
    h = x.double()
    for i, (w, b) in enumerate(got["params"]):
        h = h @ w.double().T + (b.double() if b is not None else 0)
        if i < len(got["params"]) - 1:
            h = torch.relu(h)
    expect_close(y, h, f"make_mlp({sizes})(x)", atol=1e-5)


# -- ResidualBlock -------------------------------------------------------------------------------

def draw_block(rng: torch.Generator, channels: int, zero_convs: bool = False) -> dict:
    """The tensors of a block: conv weights, batch-norm affine parameters and running statistics.
    With zero_convs, the main path gives exactly 0 in both modes (zero weights, zero shifts and means)."""
    state = {}
    for i in (1, 2):
        w = torch.randn(channels, channels, 3, 3, generator=rng) / math.sqrt(9 * channels)
        state[f"conv{i}.weight"] = torch.zeros_like(w) if zero_convs else w
        state[f"bn{i}.weight"] = torch.rand(channels, generator=rng) + 0.5
        state[f"bn{i}.bias"] = torch.zeros(channels) if zero_convs else 0.3 * torch.randn(channels, generator=rng)
        mean = 0.2 * torch.randn(channels, generator=rng)
        state[f"bn{i}.running_mean"] = torch.zeros_like(mean) if zero_convs else mean
        state[f"bn{i}.running_var"] = torch.rand(channels, generator=rng) + 0.5
    return state


def block_reference(x: torch.Tensor, s: dict, training: bool) -> torch.Tensor:
    """relu(bn2(conv2(relu(bn1(conv1(x))))) + x), computed from the block's tensors in float64."""
    s = {k: v.double() for k, v in s.items()}

    def bn(h, i):
        return F.batch_norm(h, s[f"bn{i}.running_mean"].clone(), s[f"bn{i}.running_var"].clone(),
                            s[f"bn{i}.weight"], s[f"bn{i}.bias"], training=training, eps=1e-5)

    h = torch.relu(bn(F.conv2d(x.double(), s["conv1.weight"], padding=1), 1))
    h = bn(F.conv2d(h, s["conv2.weight"], padding=1), 2)
    return torch.relu(h + x.double())


def run_block(submission, channels, state, x, training):
    mode = "train" if training else "eval"
    got = submission.probe(block_forward, channels, state, x, training,
                           what=f"`ResidualBlock({channels})(x)` in {mode} mode")
    if "missing" in got:
        fail(f"ResidualBlock has no sub-module {', '.join(got['missing'])}: name the layers conv1, bn1, conv2, bn2 "
             "as the statement says (the checks load their weights by these names).",
             f"ResidualBlock 没有子模块 {', '.join(got['missing'])}：请按题目要求把各层命名为 conv1、bn1、conv2、bn2"
             "（检查按这些名字加载权重）。")
    if "bad_shape" in got:
        fail(f"ResidualBlock({channels}).{got['bad_shape']} should have shape {got['want']}, got {got['shape']}: "
             f"conv1 and conv2 are 3x3 convolutions from {channels} to {channels} channels, bn1 and bn2 "
             f"BatchNorm2d({channels}).",
             f"ResidualBlock({channels}).{got['bad_shape']} 的形状应为 {got['want']}，实际为 {got['shape']}："
             f"conv1 和 conv2 是 {channels} 通道到 {channels} 通道的 3x3 卷积，bn1 和 bn2 是 BatchNorm2d({channels})。")
    no_padding = any(p in ("0", "(0, 0)") for p in got["paddings"])
    if "error" in got:
        if no_padding:
            fail(f"ResidualBlock({channels})(x) failed ({got['error']}): without padding, each 3x3 convolution shrinks "
                 "H and W by 2, so the output no longer matches x for the skip connection. Use padding=1.",
                 f"ResidualBlock({channels})(x) 出错（{got['error']}）：没有 padding 时，每个 3x3 卷积会让 H 和 W 各减少 2，"
                 "输出与 x 的形状不再一致，跳跃连接无法相加。请使用 padding=1。")
        fail(f"ResidualBlock({channels})(x) raised {got['error']}",
             f"ResidualBlock({channels})(x) 抛出了异常 {got['error']}")
    if isinstance(got["y"], torch.Tensor) and list(got["y"].shape) != list(x.shape) and no_padding:
        fail(f"ResidualBlock({channels})(x) should keep the shape {list(x.shape)}, got {list(got['y'].shape)}: "
             "each 3x3 convolution without padding shrinks H and W by 2. Use padding=1.",
             f"ResidualBlock({channels})(x) 应保持形状 {list(x.shape)}，实际为 {list(got['y'].shape)}："
             "没有 padding 的 3x3 卷积会让 H 和 W 各减少 2。请使用 padding=1。")
    return expect_tensor(got["y"], f"ResidualBlock({channels})(x)", shape=list(x.shape))


def draw_input(rng: torch.Generator, channels: int) -> torch.Tensor:
    # H, W >= 6: unpadded 3x3 convs would give 2..4, never 1, which could broadcast back to x's shape
    return torch.randn(randint(rng, 2, 4), channels, randint(rng, 6, 8), randint(rng, 6, 8), generator=rng)


@check("ResidualBlock keeps the shape [N, C, H, W]", points=1, zh="ResidualBlock 保持形状 [N, C, H, W]")
def test_block_shape(submission, rng):
    channels = randint(rng, 2, 5)
    x = draw_input(rng, channels)
    run_block(submission, channels, draw_block(rng, channels), x, True)


@check("ResidualBlock has the parameters of its architecture", points=1, zh="ResidualBlock 的参数个数符合其结构")
def test_block_parameters(submission, rng):
    channels = randint(rng, 2, 8)
    facts = submission.probe(block_structure, channels, what=f"`ResidualBlock({channels})`")
    conv, bn = 9 * channels * channels, 2 * channels
    expected = 2 * conv + 2 * bn
    n = facts["n_params"]
    if n == expected:
        return
    if n == expected + 2 * channels:
        fail(f"ResidualBlock({channels}) has {n} parameters, expected {expected}: the {2 * channels} extra are conv biases. "
             "A BatchNorm right after a conv subtracts the mean, which cancels any conv bias (beta shifts "
             "instead): create the convs with bias=False.",
             f"ResidualBlock({channels}) 有 {n} 个参数，应为 {expected}：多出的 {2 * channels} 个是卷积的 bias。"
             "紧跟在卷积后的 BatchNorm 会减去均值，抵消任何卷积 bias（改由 beta 平移）：创建卷积时用 bias=False。")
    shapes = ", ".join(f"{k} {v}" for k, v in facts["params"].items())
    fail(f"ResidualBlock({channels}) has {n} parameters, expected {expected} = 2 convs 3x3 {channels}->{channels} "
         f"({conv} weights each) + 2 BatchNorm2d({channels}) ({bn} each). Yours: {shapes}.",
         f"ResidualBlock({channels}) 有 {n} 个参数，应为 {expected} = 2 个 {channels}->{channels} 的 3x3 卷积"
         f"（各 {conv} 个权重）+ 2 个 BatchNorm2d({channels})（各 {bn} 个）。你的：{shapes}。")


@check("ResidualBlock has the skip connection: with zeroed convs it returns relu(x)", points=2,
       zh="ResidualBlock 有跳跃连接：卷积权重全为 0 时返回 relu(x)")
def test_block_skip(submission, rng):
    channels = randint(rng, 2, 5)
    for training in (True, False):
        x = draw_input(rng, channels)
        y = run_block(submission, channels, draw_block(rng, channels, zero_convs=True), x, training)
        expected = torch.relu(x)
        if torch.allclose(y, expected, rtol=1e-4, atol=1e-5):
            continue
        mode = "train" if training else "eval"
        if torch.allclose(y, torch.zeros_like(y), atol=1e-6):
            fail(f"With both convolutions zeroed, the block's main path gives 0, so the block should return relu(x) "
                 f"through its skip connection; it returned all zeros ({mode} mode): there is no skip connection. "
                 "Add the input x to the output of bn2, before the last ReLU.",
                 f"两个卷积权重全为 0 时，主路径输出为 0，块应通过跳跃连接返回 relu(x)；实际返回全 0（{mode} 模式）："
                 "没有跳跃连接。请在最后一个 ReLU 之前，把输入 x 加到 bn2 的输出上。")
        if torch.allclose(y, x, rtol=1e-4, atol=1e-5):
            fail(f"With both convolutions zeroed the block should return relu(x), but it returned x itself, negative "
                 f"values included ({mode} mode): the last ReLU must come after adding the input, relu(out + x).",
                 f"两个卷积权重全为 0 时块应返回 relu(x)，实际却返回了 x 本身（包括负值，{mode} 模式）："
                 "最后的 ReLU 必须放在加上输入之后：relu(out + x)。")
        expect_close(y, expected, f"ResidualBlock(x) with zeroed convs ({mode} mode), which should be relu(x)",
                     atol=1e-5)


@check("ResidualBlock computes relu(bn2(conv2(relu(bn1(conv1(x))))) + x) in train and eval mode", points=1,
       zh="ResidualBlock 在 train 和 eval 模式下都计算 relu(bn2(conv2(relu(bn1(conv1(x))))) + x)")
def test_block_values(submission, rng):
    channels = randint(rng, 2, 4)
    for training in (True, False):
        x = draw_input(rng, channels)
        state = draw_block(rng, channels)
        y = run_block(submission, channels, state, x, training)
        mode = "train" if training else "eval"
        expect_close(y, block_reference(x, state, training), f"ResidualBlock(x) in {mode} mode", atol=1e-4)


# -- init_weights ----------------------------------------------------------------------------------

def init_candidates(fan_in: int, fan_out: int) -> list[tuple[str, float, str]]:
    """Known initialisations: (name, std, distribution) for a weight with these fans."""
    return [
        ("xavier_uniform_", math.sqrt(2 / (fan_in + fan_out)), "uniform"),
        ("xavier_normal_", math.sqrt(2 / (fan_in + fan_out)), "normal"),
        ("kaiming_normal_ (relu, fan_in)", math.sqrt(2 / fan_in), "normal"),
        ("kaiming_uniform_ (relu, fan_in)", math.sqrt(2 / fan_in), "uniform"),
        ("kaiming_normal_ with mode='fan_out'", math.sqrt(2 / fan_out), "normal"),
        ("kaiming_uniform_ with mode='fan_out'", math.sqrt(2 / fan_out), "uniform"),
        ("PyTorch's default init (left unchanged?)", 1 / math.sqrt(3 * fan_in), "uniform"),
        ("kaiming without the ReLU gain (nonlinearity='linear')", 1 / math.sqrt(fan_in), "normal"),
        ("a plain torch.randn (std 1)", 1.0, "normal"),
    ]


def weight_stats(w: torch.Tensor) -> tuple[float, float, str]:
    """(std, mean, distribution) of an initialised weight; uniform and normal differ in how many
    values lie within one std of 0 (58% against 68%)."""
    w = w.double().reshape(-1)
    std, mean = float(w.std()), float(w.mean())
    inside = float((w.abs() < std).double().mean()) if std > 0 else 1.0
    return std, mean, "normal" if inside > 0.63 else "uniform"


def where(layer: dict) -> str:
    """'Conv2d model[3][0]': the layer's type and its place in the checks' model."""
    return f"{layer['type']} model" + "".join(f"[{part}]" for part in layer["name"].split("."))


def expect_init(layer: dict, want_name: str, want_std: float, want_dist: str, rule_en: str, rule_zh: str):
    """Fail unless the layer's weight has the statistics of the wanted initialisation."""
    w, label, label_zh = layer["weight"], f"weight of {where(layer)}", f"{where(layer)} 的 weight"
    if torch.all(w == SENTINEL):
        fail(f"init_weights left the {label} untouched (still the value the check filled in): it should apply "
             f"{rule_en} to every {layer['type']}.",
             f"init_weights 没有处理 {label_zh}（仍是检查预先填入的值）：应对每个 {layer['type']} 使用 {rule_zh}。")
    std, mean, dist = weight_stats(w)
    if std == 0:
        fail(f"The {label} is constant ({float(w.reshape(-1)[0]):.4g} everywhere): every unit would compute the same "
             f"thing (no symmetry breaking). Use {rule_en}.",
             f"{label_zh} 是常数（全为 {float(w.reshape(-1)[0]):.4g}）：每个单元都会算出同样的东西（无法打破对称）。请用 {rule_zh}。")
    good_std = abs(std / want_std - 1) < 0.06 and abs(mean) < 5 * want_std / math.sqrt(w.numel())
    if good_std and dist == want_dist:
        if want_dist == "uniform" and float(w.abs().max()) > want_std * math.sqrt(3) * (1 + 1e-5):
            fail(f"The {label} has values beyond the bound of {want_name}, ±{want_std * math.sqrt(3):.4g}.",
                 f"{label_zh} 有超出 {want_name} 边界 ±{want_std * math.sqrt(3):.4g} 的值。")
        return
    look = next((name for name, s, d in init_candidates(layer["fan_in"], layer["fan_out"])
                 if abs(std / s - 1) < 0.06 and d == dist and name != want_name), None)
    seen = f"std {std:.4g}, {dist}-looking" + (f": it looks like {look}" if look else "")
    seen_zh = f"std 为 {std:.4g}，看起来是{'均匀' if dist == 'uniform' else '正态'}分布" + (f"：像是 {look}" if look else "")
    fail(f"The {label} (fan_in {layer['fan_in']}, fan_out {layer['fan_out']}) should follow {rule_en}: a {want_dist} "
         f"distribution with std {want_std:.4g}; got {seen}.",
         f"{label_zh}（fan_in {layer['fan_in']}，fan_out {layer['fan_out']}）应使用 {rule_zh}："
         f"{'均匀' if want_dist == 'uniform' else '正态'}分布，std 为 {want_std:.4g}；实际 {seen_zh}。")


def expect_constant(layer: dict, attr: str, value: float, rule_en: str, rule_zh: str):
    t = layer[attr]
    if t is None:
        return
    label, label_zh = f"{attr} of {where(layer)}", f"{where(layer)} 的 {attr}"
    if not torch.all(t == value):
        untouched = " (untouched: still the value the check filled in)" if torch.all(t == SENTINEL) else ""
        fail(f"The {label} should be all {value:g} ({rule_en}), got values from {float(t.min()):.4g} to "
             f"{float(t.max()):.4g}{untouched}.",
             f"{label_zh} 应全为 {value:g}（{rule_zh}），实际取值从 {float(t.min()):.4g} 到 {float(t.max()):.4g}"
             f"{'（未处理：仍是检查预先填入的值）' if untouched else ''}。")


def expect_no_errors(facts: dict, types: set[str] | None, rest: bool = False):
    for error in facts["errors"]:
        if (types is not None and error["type"] in types) or (rest and error["type"] not in
                                                               {"Linear", "Conv2d", "BatchNorm2d"}):
            if error["bias_none"]:
                fail(f"init_weights raised {error['error']} on a {error['type']} created with bias=False, whose "
                     "m.bias is None: only initialise the bias when m.bias is not None.",
                     f"init_weights 在一个 bias=False 的 {error['type']} 上抛出了 {error['error']}：它的 m.bias 是 None。"
                     "只有当 m.bias 不是 None 时才初始化 bias。")
            fail(f"init_weights raised {error['error']} when model.apply called it on a {error['type']}: it is called "
                 "on every sub-module (containers, ReLU, pooling...), so it must leave the others alone.",
                 f"model.apply 在 {error['type']} 上调用 init_weights 时抛出了 {error['error']}：它会被每个子模块"
                 "（容器、ReLU、池化……）调用，所以对其他模块什么都不要做。")


@check("init_weights: nn.Linear gets xavier-uniform weights and zero biases", points=1,
       zh="init_weights：nn.Linear 的权重用 xavier 均匀分布，bias 为 0")
def test_init_linear(submission, rng):
    facts = submission.probe(init_facts, draw_init_sizes(rng), what="`model.apply(init_weights)`")
    expect_no_errors(facts, {"Linear"})
    for layer in (lay for lay in facts["layers"] if lay["type"] == "Linear"):
        std = math.sqrt(2 / (layer["fan_in"] + layer["fan_out"]))
        expect_init(layer, "xavier_uniform_", std, "uniform", "xavier_uniform_ (Glorot uniform)", "xavier_uniform_（Glorot 均匀分布）")
        expect_constant(layer, "bias", 0.0, "zeros for Linear biases", "Linear 的 bias 为 0")


@check("init_weights: nn.Conv2d gets kaiming-normal weights (ReLU, fan_in) and zero biases", points=1,
       zh="init_weights：nn.Conv2d 的权重用 kaiming 正态分布（ReLU，fan_in），bias 为 0")
def test_init_conv(submission, rng):
    facts = submission.probe(init_facts, draw_init_sizes(rng), what="`model.apply(init_weights)`")
    expect_no_errors(facts, {"Conv2d"})
    for layer in (lay for lay in facts["layers"] if lay["type"] == "Conv2d"):
        std = math.sqrt(2 / layer["fan_in"])
        expect_init(layer, "kaiming_normal_ (relu, fan_in)", std, "normal",
                    "kaiming_normal_ with nonlinearity='relu' (He normal, fan_in)", "kaiming_normal_，nonlinearity='relu'（He 正态，fan_in）")
        expect_constant(layer, "bias", 0.0, "zeros for conv biases", "卷积的 bias 为 0")


@check("init_weights: nn.BatchNorm2d gets weight 1, bias 0; model.apply works on every module", points=1,
       zh="init_weights：nn.BatchNorm2d 的 weight 为 1、bias 为 0；model.apply 对每个模块都能运行")
def test_init_batchnorm(submission, rng):
    facts = submission.probe(init_facts, draw_init_sizes(rng), what="`model.apply(init_weights)`")
    expect_no_errors(facts, {"BatchNorm2d"}, rest=True)
    for layer in (lay for lay in facts["layers"] if lay["type"] == "BatchNorm2d"):
        expect_constant(layer, "weight", 1.0, "BatchNorm starts as the identity: weight 1", "BatchNorm 初始为恒等变换：weight 为 1")
        expect_constant(layer, "bias", 0.0, "BatchNorm starts as the identity: bias 0", "BatchNorm 初始为恒等变换：bias 为 0")
