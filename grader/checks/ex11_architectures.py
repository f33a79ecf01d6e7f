"""Hidden checks of ex11: an nn.Sequential MLP, a residual block, weight init through model.apply."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import (Text, check, error_text, expect_close, expect_tensor, fail, learner_call, matches, probe,
                             verbatim)

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
    return facts


@probe
def mlp_forward(module, sizes, x):
    model = module.make_mlp(sizes)
    linears = [m for m in _leaves(model) if isinstance(m, nn.Linear)]
    return {"y": model(x),
            "params": [[m.weight.detach(), m.bias.detach() if m.bias is not None else None] for m in linears],
            "n_params": sum(p.numel() for p in model.parameters())}


BLOCK_PARTS = ("conv1", "bn1", "conv2", "bn2")


BN_DEFAULTS = {"eps": 1e-5, "momentum": 0.1, "affine": True, "track_running_stats": True}


@probe
def block_structure(module, channels):
    block = module.ResidualBlock(channels)
    return {"n_params": sum(p.numel() for p in block.parameters()),
            "params": {name: list(p.shape) for name, p in block.named_parameters()},
            "norms": {name: {k: getattr(m, k, None) for k in BN_DEFAULTS} for name, m in block.named_modules()
                      if isinstance(m, nn.modules.batchnorm._BatchNorm)}}


@probe
def block_forward(module, channels, state, x, training):
    """Load the judge's tensors into conv1/bn1/conv2/bn2, run the block in train or eval mode, counting
    how often each of the four parts ran."""
    block = module.ResidualBlock(channels)
    missing = [name for name in BLOCK_PARTS if not isinstance(getattr(block, name, None), nn.Module)]
    if missing:
        return {"missing": missing}
    for key, value in state.items():
        part, attr = key.split(".")
        target = getattr(getattr(block, part), attr, None)
        if not isinstance(target, torch.Tensor) or target.shape != value.shape:
            return {"bad_shape": key, "shape": list(target.shape) if isinstance(target, torch.Tensor) else None,
                    "want": list(value.shape)}
    with torch.no_grad():
        for key, value in state.items():
            part, attr = key.split(".")
            getattr(getattr(block, part), attr).copy_(value)
        for conv in (block.conv1, block.conv2):
            if isinstance(getattr(conv, "bias", None), torch.Tensor):
                conv.bias.zero_()
    calls = {name: 0 for name in BLOCK_PARTS}
    for name in BLOCK_PARTS:
        getattr(block, name).register_forward_hook(lambda *_, name=name: calls.__setitem__(name, calls[name] + 1))
    block.train(training)
    facts = {"paddings": [str(getattr(block.conv1, "padding", "?")), str(getattr(block.conv2, "padding", "?"))],
             "calls": calls}
    x_before = x.clone()
    y, error = learner_call(module, block, x)
    if error:  # explained with the block's padding by the checks
        return {**facts, "error": error}
    facts["calls"] = dict(calls)  # counted for this forward only
    facts["x_changed"] = not torch.equal(x, x_before)  # the caller's x, added into in place?
    facts["backward_error"] = None
    if isinstance(y, torch.Tensor):  # the block in a training graph: backward through it must run
        x_grad = (x_before * 1.0).requires_grad_(True)
        _, facts["backward_error"] = learner_call(module, lambda: (block(x_grad * 1.0) ** 2).sum().backward())
    return {**facts, "y": y.detach() if isinstance(y, torch.Tensor) else y}


def init_model(sizes: list[int]) -> nn.Sequential:
    """A small CNN with every case init_weights meets: convs and Linear layers with and without bias, batch norms,
    nested containers, layers without parameters. The layers are large enough
    (thousands of weights each) for their statistics to tell one initialisation from another."""
    c_in, c_mid, c_out, hidden, n_out = sizes
    return nn.Sequential(
        nn.Conv2d(c_in, c_mid, 3, padding=1, bias=False), nn.BatchNorm2d(c_mid), nn.ReLU(),
        nn.Sequential(nn.Conv2d(c_mid, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(c_out, hidden), nn.ReLU(), nn.Linear(hidden, n_out, bias=False),
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
        _, error = learner_call(module, module.init_weights, m)
        if error and error["not_started"]:
            raise NotImplementedError
        if error:  # reported per module type by the checks
            errors.append({"type": type(m).__name__, "bias_none": getattr(m, "bias", 0) is None, "error": error})

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


def code(text) -> str:
    return f"`{text}`"



# -- make_mlp -------------------------------------------------------------------------------------

@check("make_mlp returns an nn.Sequential: Linear, ReLU, ..., Linear", points=1,
       zh="make_mlp 返回 nn.Sequential：Linear、ReLU、……、Linear")
def test_mlp_structure(submission, rng):
    for sizes in (draw_sizes(rng), [randint(rng, 2, 9), randint(rng, 2, 9)]):  # two sizes too: one Linear alone
        expect_mlp_structure(submission, sizes)


def expect_mlp_structure(submission, sizes):
    call = code(f"make_mlp({sizes})")
    facts = submission.probe(mlp_structure, sizes, what=call)
    if not facts["sequential"]:
        fail("{call} should return an `nn.Sequential`, got {got}.", "{call} 应返回 `nn.Sequential`，实际得到 {got}。",
             call=call, got=code(facts["type"]), key="not-sequential")
    want, got = expected_layers(sizes), facts["layers"]
    layers = {"want": code(", ".join(want)), "got": code(", ".join(got))}
    if got and got[-1] == "ReLU" and got[:-1] == want:
        fail("{call} ends with a ReLU: the network's outputs (scores, logits, regression values) could never be "
             "negative. Put no activation after the last Linear.",
             "{call} 以 ReLU 结尾：网络的输出（分数、logits、回归值）永远不可能为负。最后一个 Linear 之后不要加激活函数。",
             call=call, key="relu-after-last-layer")
    if [n for n in got if n == "Linear"] == [n for n in want if n == "Linear"] and got != want:
        fail("{call} should have the layers {want}, got {got}: without a ReLU between them, two Linear layers "
             "collapse into a single linear map.",
             "{call} 的层应为 {want}，实际为 {got}：两个 Linear 之间没有 ReLU，就等于一个线性映射。",
             call=call, **layers, key="no-activation")
    if got != want:
        fail("{call} should have the layers {want}, got {got}.", "{call} 的层应为 {want}，实际为 {got}。",
             call=call, **layers, key="wrong-layers")
    for i, ((n_in, n_out, _), a, b) in enumerate(zip(facts["linears"], sizes[:-1], sizes[1:])):
        if (n_in, n_out) != (a, b):
            fail("Linear layer {i} of {call} should be {want}, got {got}.", "{call} 的第 {i} 个 Linear 应为 {want}，实际为 {got}。",
                 i=i, call=call, want=code(f"Linear({a}, {b})"), got=code(f"Linear({n_in}, {n_out})"),
                 key="wrong-linear-size")


def mlp_reference(params, x, last_relu=False):
    """The MLP of these (weight, bias) pairs, ReLU between the layers (and after the last with `last_relu`)."""
    h = x.double()
    for i, (w, b) in enumerate(params):
        h = h @ w.double().T + (b.double() if b is not None else 0)
        if i < len(params) - 1 or last_relu:
            h = torch.relu(h)
    return h


@check("make_mlp: output shape, parameter count and values", points=1, zh="make_mlp：输出形状、参数个数和数值",
       depends="mlp_structure")
def test_mlp_forward(submission, rng):
    drawn = draw_sizes(rng)
    for sizes, n in ((drawn, randint(rng, 2, 8)), ([drawn[0], drawn[1], 1], 1),  # one output, a batch of one
                     ([drawn[0], drawn[-1]], 3)):  # two sizes: a single Linear
        x = torch.randn(n, sizes[0], generator=rng)
        call = code(f"make_mlp({sizes})(x[{n}, {sizes[0]}])")
        got = submission.probe(mlp_forward, sizes, x, what=call)
        expected_count = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))
        if got["n_params"] != expected_count:
            fail("{mlp} has {got} parameters, expected {want} (each Linear(a, b) has a*b weights and b biases).",
                 "{mlp} 有 {got} 个参数，应为 {want}（每个 Linear(a, b) 有 a*b 个权重和 b 个偏置）。",
                 mlp=code(f"make_mlp({sizes})"), got=got["n_params"], want=expected_count, key="wrong-param-count")
        y = expect_tensor(got["y"], call, shape=[n, sizes[-1]])
        expected = mlp_reference(got["params"], x)
        if not matches(y, expected, rtol=1e-5, atol=1e-5) and \
                matches(y, mlp_reference(got["params"], x, last_relu=True), rtol=1e-5, atol=1e-5):
            fail("{call} equals relu of the expected output: there is a ReLU after the last Linear, so the outputs "
                 "could never be negative.", "{call} 等于期望输出再取 relu：最后一个 Linear 之后多了一个 ReLU，输出永远不可能为负。",
                 call=call, key="relu-after-last-layer")
        expect_close(y, expected, call, atol=1e-5)


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


def mode_name(training: bool) -> Text:
    return Text("train", "train") if training else Text("eval", "eval")


def run_block(submission, channels, state, x, training):
    """The block's output on the judge's tensors, and how often each part ran."""
    block = code(f"ResidualBlock({channels})(x{list(x.shape)})")
    got = submission.probe(block_forward, channels, state, x, training,
                           what=Text("{block} in {mode} mode", "{mode} 模式下的 {block}", block=block,
                                     mode=mode_name(training)))
    if "missing" in got:
        fail("ResidualBlock has no sub-module {missing}: name the layers conv1, bn1, conv2, bn2 as the statement "
             "says (the checks load their weights by these names).",
             "ResidualBlock 没有子模块 {missing}：请按题目要求把各层命名为 conv1、bn1、conv2、bn2（检查按这些名字加载权重）。",
             missing=", ".join(map(code, got["missing"])), key="block-part-missing")
    if "bad_shape" in got:
        fail("{part} should have shape {want}, got {got}: conv1 and conv2 are 3x3 convolutions from {c} to {c} "
             "channels, bn1 and bn2 `BatchNorm2d({c})`.",
             "{part} 的形状应为 {want}，实际为 {got}：conv1 和 conv2 是 {c} 通道到 {c} 通道的 3x3 卷积，"
             "bn1 和 bn2 是 `BatchNorm2d({c})`。",
             part=code(f"ResidualBlock({channels}).{got['bad_shape']}"), want=got["want"], got=got["shape"], c=channels,
             key="block-part-shape")
    no_padding = any(p in ("0", "(0, 0)") for p in got["paddings"])
    if "error" in got:
        if no_padding:
            fail("{block} failed ({error}): without padding, each 3x3 convolution shrinks H and W by 2, so the "
                 "output no longer matches x for the skip connection. Use `padding=1`.",
                 "{block} 出错（{error}）：没有 padding 时，每个 3x3 卷积会让 H 和 W 各减少 2，输出与 x 的形状不再一致，"
                 "跳跃连接无法相加。请使用 `padding=1`。", block=block, error=error_text(got["error"]), key="conv-no-padding")
        fail("{block} raised {error}", "{block} 抛出了异常 {error}", block=block, error=error_text(got["error"]),
             key=f"raised-{got['error']['type']}")
    y = got["y"]
    if isinstance(y, torch.Tensor) and list(y.shape) != list(x.shape) and no_padding:
        fail("{block} should keep the shape {want}, got {got}: each 3x3 convolution without padding shrinks H and W "
             "by 2. Use `padding=1`.", "{block} 应保持形状 {want}，实际为 {got}：没有 padding 的 3x3 卷积会让 H 和 W "
             "各减少 2。请使用 `padding=1`。", block=block, want=list(x.shape), got=list(y.shape), key="conv-no-padding")
    if got.get("x_changed"):
        fail("{block} changed the caller's x: the skip connection added into x in place (`x += out`). Add into a new "
             "tensor (`out = out + x`, or `out += x`): the caller still needs its x, and autograd refuses to "
             "backward through a tensor changed in place.",
             "{block} 修改了调用者的 x：跳跃连接原地加到了 x 上（`x += out`）。请加到新的 tensor 上"
             "（`out = out + x` 或 `out += x`）：调用者还要用它的 x，而且原地修改过的 tensor 无法反向传播。",
             block=block, key="skip-in-place-into-x")
    if got.get("backward_error"):
        fail("{block} runs forward, but backward through it fails: {error}",
             "{block} 的前向传播能运行，但反向传播失败了：{error}", block=block, error=error_text(got["backward_error"]),
             key="block-backward-fails")
    return expect_tensor(y, block, shape=list(x.shape)), got["calls"]


def draw_input(rng: torch.Generator, channels: int, n: int | None = None) -> torch.Tensor:
    # H, W >= 6: unpadded 3x3 convs would give 2..4, never 1, which could broadcast back to x's shape
    n = randint(rng, 2, 4) if n is None else n
    return torch.randn(n, channels, randint(rng, 6, 8), randint(rng, 6, 8), generator=rng)


@check("ResidualBlock keeps the shape [N, C, H, W]", points=1, zh="ResidualBlock 保持形状 [N, C, H, W]")
def test_block_shape(submission, rng):
    for channels, n in ((randint(rng, 2, 5), None), (1, 1)):  # and one channel, a batch of one
        run_block(submission, channels, draw_block(rng, channels), draw_input(rng, channels, n), True)


@check("ResidualBlock has the parameters of its architecture", points=1, zh="ResidualBlock 的参数个数符合其结构")
def test_block_parameters(submission, rng):
    channels = randint(rng, 2, 8)
    block = code(f"ResidualBlock({channels})")
    facts = submission.probe(block_structure, channels, what=block)
    conv, bn = 9 * channels * channels, 2 * channels
    expected = 2 * conv + 2 * bn
    n = facts["n_params"]
    if n == expected:
        for name, settings in facts["norms"].items():
            changed = {k: v for k, v in settings.items() if v != BN_DEFAULTS[k]}
            if changed:
                fail("{block}.{name} is a BatchNorm with {changed}: the statement asks for `BatchNorm2d(channels)` with "
                     "its default settings ({defaults}), which the rest of a network and its checkpoints expect.",
                     "{block}.{name} 是一个设置为 {changed} 的 BatchNorm：题目要求默认设置（{defaults}）的 "
                     "`BatchNorm2d(channels)`，网络的其余部分和它的检查点都以此为准。", block=block, name=verbatim(name),
                     changed=verbatim(", ".join(f"{k}={v}" for k, v in changed.items())),
                     defaults=verbatim(", ".join(f"{k}={v}" for k, v in BN_DEFAULTS.items())), key="bn-settings")
        return
    if n == expected + 2 * channels:
        fail("{block} has {n} parameters, expected {want}: the {extra} extra are conv biases. A BatchNorm right after "
             "a conv subtracts the mean, which cancels any conv bias (beta shifts instead): create the convs with "
             "`bias=False`.",
             "{block} 有 {n} 个参数，应为 {want}：多出的 {extra} 个是卷积的 bias。紧跟在卷积后的 BatchNorm 会减去均值，"
             "抵消任何卷积 bias（改由 beta 平移）：创建卷积时用 `bias=False`。",
             block=block, n=n, want=expected, extra=2 * channels, key="conv-bias")
    fail("{block} has {n} parameters, expected {want} = 2 convs 3x3 {c}->{c} ({conv} weights each) + "
         "2 `BatchNorm2d({c})` ({bn} each). Yours: {shapes}.",
         "{block} 有 {n} 个参数，应为 {want} = 2 个 {c}->{c} 的 3x3 卷积（各 {conv} 个权重）+ 2 个 "
         "`BatchNorm2d({c})`（各 {bn} 个）。你的：{shapes}。",
         block=block, n=n, want=expected, c=channels, conv=conv, bn=bn,
         shapes=", ".join(code(f"{k} {v}") for k, v in facts["params"].items()), key="wrong-param-count")


@check("ResidualBlock has the skip connection: with zeroed convs it returns relu(x)", points=2,
       zh="ResidualBlock 有跳跃连接：卷积权重全为 0 时返回 relu(x)", depends="block_shape")
def test_block_skip(submission, rng):
    channels = randint(rng, 2, 5)
    for training in (True, False):
        x = draw_input(rng, channels)
        y, _ = run_block(submission, channels, draw_block(rng, channels, zero_convs=True), x, training)
        expected = torch.relu(x)
        if matches(y, expected, atol=1e-5):
            continue
        mode = mode_name(training)
        if matches(y, torch.zeros_like(y), rtol=0):
            fail("With both convolutions zeroed, the block's main path gives 0, so the block should return relu(x) "
                 "through its skip connection; it returned all zeros ({mode} mode): there is no skip connection. "
                 "Add the input x to the output of bn2, before the last ReLU.",
                 "两个卷积权重全为 0 时，主路径输出为 0，块应通过跳跃连接返回 relu(x)；实际返回全 0（{mode} 模式）："
                 "没有跳跃连接。请在最后一个 ReLU 之前，把输入 x 加到 bn2 的输出上。", mode=mode, key="no-skip")
        if matches(y, x, atol=1e-5):
            fail("With both convolutions zeroed the block should return relu(x), but it returned x itself, negative "
                 "values included ({mode} mode): the last ReLU must come after adding the input, relu(out + x).",
                 "两个卷积权重全为 0 时块应返回 relu(x)，实际却返回了 x 本身（包括负值，{mode} 模式）："
                 "最后的 ReLU 必须放在加上输入之后：relu(out + x)。", mode=mode, key="relu-before-add")
        expect_close(y, expected, Text("ResidualBlock(x) with zeroed convs ({mode} mode), which should be relu(x)",
                                       "卷积置零时的 ResidualBlock(x)（{mode} 模式，应为 relu(x)）", mode=mode), atol=1e-5)


@check("ResidualBlock computes relu(bn2(conv2(relu(bn1(conv1(x))))) + x) in train and eval mode", points=1,
       zh="ResidualBlock 在 train 和 eval 模式下都计算 relu(bn2(conv2(relu(bn1(conv1(x))))) + x)",
       depends=("block_shape", "block_skip"))
def test_block_values(submission, rng):
    channels = randint(rng, 2, 4)
    for training in (True, False):
        x = draw_input(rng, channels)
        state = draw_block(rng, channels)
        y, calls = run_block(submission, channels, state, x, training)
        what = Text("ResidualBlock(x) in {mode} mode", "{mode} 模式下的 ResidualBlock(x)", mode=mode_name(training))
        expected = block_reference(x, state, training)
        if matches(y, expected, rtol=1e-5, atol=1e-4):
            continue
        twice = [name for name, count in calls.items() if count > 1]
        never = [name for name, count in calls.items() if count == 0]
        if twice or never:
            fail("{what} is wrong, and during one forward {twice} ran more than once while {never} never ran: each "
                 "layer has its own weights and statistics, so use conv1, bn1, conv2, bn2 once each, in that order.",
                 "{what} 不对，而且一次前向传播中 {twice} 运行了不止一次，{never} 却从未运行：每层都有自己的权重和统计量，"
                 "请按 conv1、bn1、conv2、bn2 的顺序各用一次。",
                 what=what, twice=", ".join(map(code, twice)) or "-", never=", ".join(map(code, never)) or "-",
                 key="submodule-used-twice")
        expect_close(y, expected, what, atol=1e-4)


# -- init_weights ----------------------------------------------------------------------------------

def init_candidates(fan_in: int, fan_out: int) -> list[tuple[Text, float, str]]:
    """Known initialisations: (name, std, distribution) for a weight with these fans."""
    return [
        (Text("`xavier_uniform_`"), math.sqrt(2 / (fan_in + fan_out)), "uniform"),
        (Text("`xavier_normal_`"), math.sqrt(2 / (fan_in + fan_out)), "normal"),
        (Text("`kaiming_normal_` (relu, fan_in)", "`kaiming_normal_`（relu，fan_in）"), math.sqrt(2 / fan_in), "normal"),
        (Text("`kaiming_uniform_` (relu, fan_in)", "`kaiming_uniform_`（relu，fan_in）"), math.sqrt(2 / fan_in), "uniform"),
        (Text("`kaiming_normal_` with `mode='fan_out'`", "`mode='fan_out'` 的 `kaiming_normal_`"),
         math.sqrt(2 / fan_out), "normal"),
        (Text("`kaiming_uniform_` with `mode='fan_out'`", "`mode='fan_out'` 的 `kaiming_uniform_`"),
         math.sqrt(2 / fan_out), "uniform"),
        (Text("PyTorch's default init (left unchanged?)", "PyTorch 的默认初始化（没有改动？）"),
         1 / math.sqrt(3 * fan_in), "uniform"),
        (Text("kaiming without the ReLU gain (`nonlinearity='linear'`)", "不带 ReLU 增益的 kaiming（`nonlinearity='linear'`）"),
         1 / math.sqrt(fan_in), "normal"),
        (Text("a plain `torch.randn` (std 1)", "直接用 `torch.randn`（std 为 1）"), 1.0, "normal"),
    ]


def weight_stats(w: torch.Tensor) -> tuple[float, float, str]:
    """(std, mean, distribution) of an initialised weight; uniform and normal differ in how many
    values lie within one std of 0 (58% against 68%)."""
    w = w.double().reshape(-1)
    std, mean = float(w.std()), float(w.mean())
    inside = float((w.abs() < std).double().mean()) if std > 0 else 1.0
    return std, mean, "normal" if inside > 0.63 else "uniform"


def place_of(layer: dict) -> str:
    """'`Conv2d model[3][0]`': the layer's type and its place in the checks' model."""
    return code(f"{layer['type']} model" + "".join(f"[{part}]" for part in layer["name"].split(".")))


DISTRIBUTION = {"uniform": Text("uniform", "均匀"), "normal": Text("normal", "正态")}


def expect_init(layer: dict, want_std: float, want_dist: str, rule: Text):
    """Fail unless the layer's weight has the statistics of the wanted initialisation."""
    w, place = layer["weight"], place_of(layer)
    if torch.all(w == SENTINEL):
        fail("init_weights left the weight of {place} untouched (still the value the check filled in): it should "
             "apply {rule} to every {type}.",
             "init_weights 没有处理 {place} 的 weight（仍是检查预先填入的值）：应对每个 {type} 使用 {rule}。",
             place=place, rule=rule, type=code(layer["type"]), key="init-missing")
    std, mean, dist = weight_stats(w)
    if std == 0:
        fail("The weight of {place} is constant ({value:.4g} everywhere): every unit would compute the same thing "
             "(no symmetry breaking). Use {rule}.",
             "{place} 的 weight 是常数（全为 {value:.4g}）：每个单元都会算出同样的东西（无法打破对称）。请用 {rule}。",
             place=place, value=float(w.reshape(-1)[0]), rule=rule, key="init-constant")
    good_std = abs(std / want_std - 1) < 0.06 and abs(mean) < 5 * want_std / math.sqrt(w.numel())
    if good_std and dist == want_dist:
        bound = want_std * math.sqrt(3)
        if want_dist == "uniform" and float(w.abs().max()) > bound * (1 + 1e-5):
            fail("The weight of {place} has values beyond the bound of {rule}, ±{bound:.4g}.",
                 "{place} 的 weight 有超出 {rule} 边界 ±{bound:.4g} 的值。", place=place, rule=rule, bound=bound,
                 key="init-out-of-bounds")
        return
    look = next((name for name, s, d in init_candidates(layer["fan_in"], layer["fan_out"])
                 if abs(std / s - 1) < 0.06 and d == dist and not (abs(s / want_std - 1) < 0.06 and d == want_dist)),
                None)
    seen = Text("std {std:.4g}, {dist}-looking{look}", "std 为 {std:.4g}，看起来是{dist}分布{look}", std=std,
                dist=DISTRIBUTION[dist], look=Text(": it looks like {name}", "：像是 {name}", name=look) if look else "")
    fail("The weight of {place} (fan_in {fan_in}, fan_out {fan_out}) should follow {rule}: a {dist} distribution "
         "with std {want:.4g}; got {seen}.",
         "{place} 的 weight（fan_in {fan_in}，fan_out {fan_out}）应使用 {rule}：{dist}分布，std 为 {want:.4g}；实际 {seen}。",
         place=place, fan_in=layer["fan_in"], fan_out=layer["fan_out"], rule=rule, dist=DISTRIBUTION[want_dist],
         want=want_std, seen=seen, key="init-wrong-distribution")


def expect_constant(layer: dict, attr: str, value: float, rule: Text):
    t = layer[attr]
    if t is None or torch.all(t == value):
        return
    untouched = Text(" (untouched: still the value the check filled in)", "（未处理：仍是检查预先填入的值）") \
        if torch.all(t == SENTINEL) else ""
    fail("The {attr} of {place} should be all {value:g} ({rule}), got values from {low:.4g} to {high:.4g}{untouched}.",
         "{place} 的 {attr} 应全为 {value:g}（{rule}），实际取值从 {low:.4g} 到 {high:.4g}{untouched}。",
         attr=attr, place=place_of(layer), value=value, rule=rule, low=float(t.min()), high=float(t.max()),
         untouched=untouched, key=f"init-{attr}")


def expect_no_errors(facts: dict, types: set[str] | None, rest: bool = False):
    for error in facts["errors"]:
        if (types is not None and error["type"] in types) or (rest and error["type"] not in
                                                               {"Linear", "Conv2d", "BatchNorm2d"}):
            if error["bias_none"]:
                fail("init_weights raised {error} on a {type} created with `bias=False`, whose `m.bias` is None: "
                     "only initialise the bias when `m.bias is not None`.",
                     "init_weights 在一个 `bias=False` 的 {type} 上抛出了 {error}：它的 `m.bias` 是 None。"
                     "只有当 `m.bias is not None` 时才初始化 bias。",
                     error=error_text(error["error"]), type=code(error["type"]), key="init-bias-none")
            fail("init_weights raised {error} when `model.apply` called it on a {type}: it is called on every "
                 "sub-module (containers, ReLU, pooling...), so it must leave the others alone.",
                 "`model.apply` 在 {type} 上调用 init_weights 时抛出了 {error}：它会被每个子模块（容器、ReLU、池化……）"
                 "调用，所以对其他模块什么都不要做。", error=error_text(error["error"]), type=code(error["type"]),
                 key="init-raises")


WEIGHT_RULES = {  # layer type: (std from the fans, distribution, the rule in words)
    "Linear": (lambda fan_in, fan_out: math.sqrt(2 / (fan_in + fan_out)), "uniform",
               Text("`xavier_uniform_` (Glorot uniform)", "`xavier_uniform_`（Glorot 均匀分布）")),
    "Conv2d": (lambda fan_in, fan_out: math.sqrt(2 / fan_in), "normal",
               Text("`kaiming_normal_` with `nonlinearity='relu'` (He normal, fan_in)",
                    "`kaiming_normal_`，`nonlinearity='relu'`（He 正态，fan_in）")),
}


@pytest.mark.parametrize("kind", [
    pytest.param("Linear", id="Linear", marks=check("init_weights: nn.Linear gets xavier-uniform weights and zero biases",
                                                    points=1, zh="init_weights：nn.Linear 的权重用 xavier 均匀分布，bias 为 0")),
    pytest.param("Conv2d", id="Conv2d", marks=check(
        "init_weights: nn.Conv2d gets kaiming-normal weights (ReLU, fan_in) and zero biases", points=1,
        zh="init_weights：nn.Conv2d 的权重用 kaiming 正态分布（ReLU，fan_in），bias 为 0")),
])
def test_init_weights(submission, rng, kind):
    facts = submission.probe(init_facts, draw_init_sizes(rng), what=code("model.apply(init_weights)"))
    expect_no_errors(facts, {kind})
    std_of, dist, rule = WEIGHT_RULES[kind]
    for layer in (lay for lay in facts["layers"] if lay["type"] == kind):
        expect_init(layer, std_of(layer["fan_in"], layer["fan_out"]), dist, rule)
        expect_constant(layer, "bias", 0.0, Text("zero biases", "bias 为 0"))


@check("init_weights: nn.BatchNorm2d gets weight 1, bias 0; model.apply works on every module", points=1,
       zh="init_weights：nn.BatchNorm2d 的 weight 为 1、bias 为 0；model.apply 对每个模块都能运行")
def test_init_batchnorm(submission, rng):
    facts = submission.probe(init_facts, draw_init_sizes(rng), what=code("model.apply(init_weights)"))
    expect_no_errors(facts, {"BatchNorm2d"}, rest=True)
    for layer in (lay for lay in facts["layers"] if lay["type"] == "BatchNorm2d"):
        identity = Text("BatchNorm starts as the identity", "BatchNorm 初始为恒等变换")
        expect_constant(layer, "weight", 1.0, identity)
        expect_constant(layer, "bias", 0.0, identity)
