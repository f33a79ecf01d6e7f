"""Hidden checks of ex10: nn.Parameter, nn.ModuleList, and calling a module rather than forward."""

import torch
from torch import nn

from grader.checking import check, expect_close, fail, probe
from grader.gradients import autograd_gradient, expect_gradient


def randint(rng: torch.Generator, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def draw_sizes(rng: torch.Generator) -> list[int]:
    """Layer sizes of a Stack: 3 or 4 numbers, so 2 or 3 Linear layers."""
    return [randint(rng, 2, 7) for _ in range(randint(rng, 3, 4))]


def fmt_names(names) -> str:
    return ", ".join(names)


# -- probes (run in the sandbox) --------------------------------------------------------------

def _tensor_facts(value):
    if isinstance(value, torch.Tensor):
        return {"kind": "tensor", "shape": list(value.shape), "parameter": isinstance(value, nn.Parameter),
                "requires_grad": bool(value.requires_grad),
                "finite": bool(torch.isfinite(value.detach()).all()) if value.is_floating_point() else True,
                "value": value.detach().clone()}
    return {"kind": "missing" if value is None else type(value).__name__}


@probe
def affine_structure(module, n_in, n_out):
    """Build Affine(n_in, n_out) and describe its parameters and its weight/bias attributes."""
    m = module.Affine(n_in, n_out)
    return {
        "is_module": isinstance(m, nn.Module),
        "params": {name: list(p.shape) for name, p in m.named_parameters()},
        "weight": _tensor_facts(getattr(m, "weight", None)),
        "bias": _tensor_facts(getattr(m, "bias", None)),
    }


@probe
def affine_forward(module, weight, bias, x, upstream):
    """Load the judge's weight and bias into Affine, run m(x), backpropagate `upstream`."""
    m = module.Affine(weight.shape[1], weight.shape[0])
    for name, value in (("weight", weight), ("bias", bias)):
        mine = getattr(m, name, None)
        if not isinstance(mine, torch.Tensor) or mine.shape != value.shape:
            return {"error": "shape"}
        with torch.no_grad():
            mine.copy_(value)
    y = m(x)
    if not isinstance(y, torch.Tensor):
        return {"y": y}
    if not y.requires_grad:
        return {"y": y.detach(), "error": "no grad"}
    (y * upstream).sum().backward()  # same as y.backward(upstream), which lazily imports torch.fx (0.6 s)
    return {"y": y.detach(), "weight_grad": m.weight.grad, "bias_grad": m.bias.grad}


@probe
def stack_structure(module, sizes):
    """Build Stack(sizes): which layers and tensors does model.parameters() see?"""
    m = module.Stack(sizes)
    registered = {id(p) for p in m.parameters()}
    layers = getattr(m, "layers", None)
    try:
        layer_list = list(layers)
    except TypeError:
        layer_list = None
    facts = {
        "n_registered": len(registered),
        "layers_type": type(layers).__name__,
        "layers_is_module": isinstance(layers, nn.Module),
        "layers": None,
        "scale": _tensor_facts(getattr(m, "scale", None)),
    }
    if isinstance(facts["scale"], dict) and facts["scale"]["kind"] == "tensor":
        facts["scale"]["registered"] = id(m.scale) in registered
    if layer_list is not None:
        facts["layers"] = [{
            "type": type(layer).__name__,
            "shapes": [list(p.shape) for p in layer.parameters()] if isinstance(layer, nn.Module) else [],
            "registered": isinstance(layer, nn.Module) and all(id(p) in registered for p in layer.parameters()),
        } for layer in layer_list]
    return facts


@probe
def stack_forward(module, sizes, weights, biases, scale, x):
    """Load the judge's parameters into Stack(sizes) and return model(x)."""
    m = module.Stack(sizes)
    with torch.no_grad():
        for layer, w, b in zip(m.layers, weights, biases):
            layer.weight.copy_(w)
            layer.bias.copy_(b)
        m.scale.copy_(scale)
    return m(x)


@probe
def stack_hooks(module, sizes, x):
    """Count how often each layer's forward hooks run during one model(x)."""
    m = module.Stack(sizes)
    calls = [0] * len(m.layers)

    def counter(i):
        def hook(mod, inputs, output):
            calls[i] += 1
        return hook

    handles = [layer.register_forward_hook(counter(i)) for i, layer in enumerate(m.layers)]
    m(x)
    for handle in handles:
        handle.remove()
    return calls


@probe
def stack_step(module, sizes, x, y):
    """One SGD step over model.parameters() (as an optimizer does it): which tensors changed?"""
    m = module.Stack(sizes)
    tracked = []
    for i, layer in enumerate(m.layers):
        tracked += [(f"layers[{i}].weight", layer.weight), (f"layers[{i}].bias", layer.bias)]
    tracked.append(("scale", m.scale))
    before = [t.detach().clone() for _, t in tracked]
    params = list(m.parameters())
    if not params:
        return {"empty": True}
    # plain SGD by hand: torch.optim would import torch._dynamo (2 s, and it rebinds torch.manual_seed)
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= 0.1 * p.grad
    # A registered tensor whose gradient is exactly zero (every ReLU dead on this batch) may stay put;
    # what may not: a tensor the optimizer never saw, or one the forward never used (no grad at all).
    seen = {id(p) for p in params}
    return {"empty": False, "unchanged": [
        name for (name, t), b in zip(tracked, before)
        if torch.equal(t.detach(), b) and (id(t) not in seen or t.grad is None or t.grad.any())]}


# -- Affine -------------------------------------------------------------------------------------

def _expect_parameter(facts: dict, owner: str, name: str, shape: list[int], shape_name: str):
    """Structure of one learnable tensor: present, an nn.Parameter, trainable, of the right shape."""
    full = f"{owner}.{name}"
    if facts["kind"] == "missing":
        fail(f"{full} does not exist: create it in __init__ as self.{name}.",
             f"{full} 不存在：请在 __init__ 中创建 self.{name}。")
    if facts["kind"] != "tensor":
        fail(f"{full} should be an nn.Parameter, got a {facts['kind']}.",
             f"{full} 应该是 nn.Parameter，实际是 {facts['kind']}。")
    if not facts["parameter"]:
        rg = "requires_grad=True" if facts["requires_grad"] else "requires_grad=False"
        fail(f"{full} is a plain tensor ({rg}), not an nn.Parameter: model.parameters() does not list it, "
             f"so an optimizer never updates it. Wrap it in nn.Parameter.",
             f"{full} 是普通 tensor（{rg}），不是 nn.Parameter：model.parameters() 不会列出它，"
             f"优化器也就永远不会更新它。请用 nn.Parameter 包装。")
    if not facts["requires_grad"]:
        fail(f"{full} has requires_grad=False: it never gets a gradient, so it never trains.",
             f"{full} 的 requires_grad=False：它得不到梯度，永远不会被训练。")
    if facts["shape"] != shape:
        extra = ""
        if sorted(facts["shape"]) == sorted(shape) and len(shape) == 2:
            extra = (" It looks stored as [in_features, out_features]; nn.Linear (and the forward "
                     "x @ weight.T) use [out_features, in_features].", "看起来存成了 [in_features, out_features]；"
                     "nn.Linear（以及 forward 中的 x @ weight.T）使用 [out_features, in_features]。")
        fail(f"{full} should have shape {shape_name} = {shape}, got {facts['shape']}.{extra[0] if extra else ''}",
             f"{full} 的形状应为 {shape_name} = {shape}，实际为 {facts['shape']}。{extra[1] if extra else ''}")
    if not facts["finite"]:
        fail(f"{full} contains NaN or inf after __init__: initialise it with finite numbers.",
             f"{full} 在 __init__ 之后含有 NaN 或 inf：请用有限的数初始化。")


@check("Affine registers weight [out, in] and bias [out] as nn.Parameter", points=2,
       zh="Affine 把 weight [out, in] 和 bias [out] 注册为 nn.Parameter")
def test_affine_parameters(submission, rng):
    n_in = randint(rng, 2, 6)
    n_out = n_in + randint(rng, 1, 4)  # different sizes, so a transposed weight shows
    for a, b in ((n_in, n_out), (n_out, n_in)):
        facts = submission.probe(affine_structure, a, b, what=f"`Affine({a}, {b})`")
        if not facts["is_module"]:
            fail("Affine should be a subclass of nn.Module.", "Affine 应该继承 nn.Module。")
        _expect_parameter(facts["weight"], "Affine", "weight", [b, a], "[out_features, in_features]")
        _expect_parameter(facts["bias"], "Affine", "bias", [b], "[out_features]")
        if sorted(facts["params"]) != ["bias", "weight"]:
            fail(f"model.parameters() of Affine should hold exactly weight and bias, got "
                 f"{fmt_names(sorted(facts['params'])) or 'nothing'}.",
                 f"Affine 的 model.parameters() 应恰好包含 weight 和 bias，实际为 "
                 f"{fmt_names(sorted(facts['params'])) or '空'}。")


@check("Affine(x) computes x @ weight.T + bias and backpropagates to both", points=2,
       zh="Affine(x) 计算 x @ weight.T + bias，且梯度能传到两者")
def test_affine_forward(submission, rng):
    n_in, n_out, n = randint(rng, 2, 6), randint(rng, 2, 6), randint(rng, 3, 9)
    weight, bias = torch.randn(n_out, n_in, generator=rng), torch.randn(n_out, generator=rng)
    x, upstream = torch.randn(n, n_in, generator=rng), torch.randn(n, n_out, generator=rng)
    got = submission.probe(affine_forward, weight, bias, x, upstream, what=f"`Affine({n_in}, {n_out})(x)`")
    if got.get("error") == "shape":
        fail(f"Cannot load a weight [{n_out}, {n_in}] and a bias [{n_out}] into Affine({n_in}, {n_out}): "
             "fix the shapes of its parameters first (see the check above).",
             f"无法把 weight [{n_out}, {n_in}] 和 bias [{n_out}] 放进 Affine({n_in}, {n_out})："
             "请先修正参数的形状（见上一项检查）。")
    expect_close(got["y"], x @ weight.T + bias, f"Affine({n_in}, {n_out})(x)", hints={
        "zero": ("Did forward return something unrelated to the input?", "forward 返回的结果和输入无关吗？")})
    if got.get("error") == "no grad":
        fail("The output of Affine does not require grad, so no gradient can reach weight and bias: "
             "they must be nn.Parameter (which require grad).",
             "Affine 的输出不需要梯度，梯度无法传到 weight 和 bias：它们必须是 nn.Parameter（默认 requires grad）。")
    expected = autograd_gradient(lambda w, b: ((x.double() @ w.T + b) * upstream.double()).sum(), [weight, bias])
    for name, grad, want in (("weight", got["weight_grad"], expected[0]), ("bias", got["bias_grad"], expected[1])):
        if grad is None:
            fail(f"After backward, Affine.{name}.grad is None: the output was not computed from self.{name}, "
                 f"or {name} does not require grad.",
                 f"backward 之后 Affine.{name}.grad 为 None：输出不是由 self.{name} 计算的，或 {name} 不需要梯度。")
        expect_gradient(grad, want, f"Affine.{name}", of="output")


# -- Stack ----------------------------------------------------------------------------------------

@check("Stack registers every layer (model.parameters() sees them all)", points=2,
       zh="Stack 注册了每一层（model.parameters() 能看到全部）")
def test_stack_layers_registered(submission, rng):
    sizes = draw_sizes(rng)
    n_layers = len(sizes) - 1
    facts = submission.probe(stack_structure, sizes, what=f"`Stack({sizes})`")
    if facts["layers"] is None:
        fail(f"Stack.layers should hold the {n_layers} nn.Linear layers in order, got {facts['layers_type']}.",
             f"Stack.layers 应按顺序保存 {n_layers} 个 nn.Linear 层，实际为 {facts['layers_type']}。")
    if len(facts["layers"]) != n_layers:
        fail(f"Stack({sizes}).layers should hold {n_layers} layers, got {len(facts['layers'])}.",
             f"Stack({sizes}).layers 应有 {n_layers} 层，实际为 {len(facts['layers'])} 层。")
    for i, (layer, a, b) in enumerate(zip(facts["layers"], sizes[:-1], sizes[1:])):
        if layer["shapes"] != [[b, a], [b]]:
            fail(f"Stack({sizes}).layers[{i}] should be nn.Linear({a}, {b}), got a {layer['type']} with "
                 f"parameter shapes {layer['shapes']}.",
                 f"Stack({sizes}).layers[{i}] 应为 nn.Linear({a}, {b})，实际是 {layer['type']}，参数形状 {layer['shapes']}。")
    missing = [i for i, layer in enumerate(facts["layers"]) if not layer["registered"]]
    if missing:
        expected = 2 * n_layers + 1
        fail(f"model.parameters() of Stack lists {facts['n_registered']} tensors, expected {expected}: the layers "
             f"{missing} are invisible to nn.Module because they sit in a plain Python {facts['layers_type']} "
             "(not trained, not moved by .to(), not saved in state_dict). Keep them in an nn.ModuleList.",
             f"Stack 的 model.parameters() 只有 {facts['n_registered']} 个 tensor，应为 {expected} 个：第 {missing} "
             f"层放在普通的 Python {facts['layers_type']} 里，nn.Module 看不到它们（不会被训练、不会被 .to() "
             "移动、不会存进 state_dict）。请改用 nn.ModuleList。")


@check("Stack.scale is a learnable nn.Parameter that starts at ones", points=1,
       zh="Stack.scale 是可学习的 nn.Parameter，初始全为 1")
def test_stack_scale(submission, rng):
    sizes = draw_sizes(rng)
    facts = submission.probe(stack_structure, sizes, what=f"`Stack({sizes})`")
    scale = facts["scale"]
    if scale["kind"] == "tensor" and not scale["parameter"]:
        fail("Stack.scale is a plain tensor: it is not in model.parameters(), so the optimizer never "
             "updates it. Make it an nn.Parameter.",
             "Stack.scale 是普通 tensor：它不在 model.parameters() 中，优化器永远不会更新它。请把它变成 nn.Parameter。")
    _expect_parameter(scale, "Stack", "scale", [sizes[-1]], "[sizes[-1]]")
    if not scale.get("registered", False):
        fail("Stack.scale is an nn.Parameter but model.parameters() does not list it: assign it as an "
             "attribute of the model (self.scale = ...) after super().__init__().",
             "Stack.scale 是 nn.Parameter，但 model.parameters() 没有列出它：请在 super().__init__() "
             "之后把它作为模型属性赋值（self.scale = ...）。")
    expect_close(scale["value"], torch.ones(sizes[-1]), "Stack.scale at the start")


@check("Stack(x) computes the ReLU stack times scale", points=1, zh="Stack(x) 计算带 ReLU 的多层网络再乘以 scale")
def test_stack_forward(submission, rng):
    sizes = draw_sizes(rng)
    weights = [torch.randn(b, a, generator=rng) for a, b in zip(sizes[:-1], sizes[1:])]
    biases = [torch.randn(b, generator=rng) for b in sizes[1:]]
    scale = torch.rand(sizes[-1], generator=rng) + 0.5
    x = torch.randn(randint(rng, 3, 9), sizes[0], generator=rng)
    got = submission.probe(stack_forward, sizes, weights, biases, scale, x, what=f"`Stack({sizes})(x)`")
    h = x
    for w, b in zip(weights[:-1], biases[:-1]):
        h = torch.relu(h @ w.T + b)
    expected = (h @ weights[-1].T + biases[-1]) * scale
    expect_close(got, expected, f"Stack({sizes})(x)")


@check("Stack calls its layers as modules, layer(x), so hooks run", points=1,
       zh="Stack 以 layer(x) 的方式调用各层，钩子（hooks）才会运行")
def test_stack_calls_modules(submission, rng):
    sizes = draw_sizes(rng)
    x = torch.randn(4, sizes[0], generator=rng)
    calls = submission.probe(stack_hooks, sizes, x, what=f"`Stack({sizes})(x)`")
    silent = [i for i, c in enumerate(calls) if c == 0]
    if silent:
        fail(f"A forward hook registered on layers {silent} never ran during model(x): forward calls "
             "layer.forward(x), which skips nn.Module.__call__ and with it every hook (and what PyTorch "
             "does around forward). Call the layer itself: layer(x).",
             f"在 layers {silent} 上注册的 forward hook 在 model(x) 期间从未运行：forward 里调用了 "
             "layer.forward(x)，这绕过了 nn.Module.__call__，所有钩子（以及 PyTorch 在 forward 前后做的事）都被跳过。"
             "请直接调用层本身：layer(x)。")
    twice = [i for i, c in enumerate(calls) if c > 1]
    if twice:
        fail(f"Layers {twice} ran more than once ({[calls[i] for i in twice]} times) for one model(x): "
             "each layer should be applied exactly once.",
             f"一次 model(x) 中 layers {twice} 运行了不止一次（{[calls[i] for i in twice]} 次）：每层只应使用一次。")


@check("One optimizer step on model.parameters() updates every layer and scale", points=1,
       zh="对 model.parameters() 做一步优化会更新每一层和 scale")
def test_stack_trains(submission, rng):
    sizes = draw_sizes(rng)
    x = torch.randn(16, sizes[0], generator=rng)
    y = torch.randn(16, sizes[-1], generator=rng)
    got = submission.probe(stack_step, sizes, x, y, what=f"training `Stack({sizes})`")
    if got["empty"]:
        fail("model.parameters() of Stack is empty, so an optimizer has nothing to train: nothing in the "
             "model is registered (layers in a plain list, scale a plain tensor?).",
             "Stack 的 model.parameters() 是空的，优化器没有任何东西可训练：模型里没有任何东西被注册"
             "（层放在普通 list 里？scale 是普通 tensor？）。")
    if got["unchanged"]:
        fail(f"After one SGD step over model.parameters() (what an optimizer does), these did not change: "
             f"{fmt_names(got['unchanged'])}. The optimizer never saw them, so this model cannot learn them.",
             f"对 model.parameters() 执行一步 SGD（也就是优化器做的事）之后，这些没有变化：{fmt_names(got['unchanged'])}。"
             "优化器看不到它们，模型也就学不到它们。")
