"""Hidden checks of ex10: nn.Parameter, nn.ModuleList, and calling a module rather than forward.

Probes build the learner's modules in the sandbox and report what nn.Module sees of them (parameters,
sub-modules), load the judge's weights where the shapes allow it (a wrong shape is reported, never
forced), count each layer's forward hooks and take one SGD step over `model.parameters()`. Each module is also
built and run once with a GPU pretended (every input on the CPU): nothing may go there.
"""

import torch
from torch import nn

from grader.checking import Text, check, expect_close, explain, fail, matches, probe
from grader.devices import expect_cpu_module
from grader.gradients import autograd_gradient, expect_gradient

def randint(rng: torch.Generator, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def draw_sizes(rng: torch.Generator) -> list[int]:
    """Layer sizes of a Stack: 3 or 4 numbers, so 2 or 3 Linear layers."""
    return [randint(rng, 2, 7) for _ in range(randint(rng, 3, 4))]


def code(text) -> str:
    return f"`{text}`"


def code_list(items) -> str:
    return ", ".join(code(i) for i in items)


# -- probes (run in the sandbox) --------------------------------------------------------------

def _tensor_facts(value):
    if isinstance(value, torch.Tensor):
        return {"kind": "tensor", "shape": list(value.shape), "parameter": isinstance(value, nn.Parameter),
                "requires_grad": bool(value.requires_grad),
                "finite": bool(torch.isfinite(value.detach()).all()) if value.is_floating_point() else True,
                "value": value.detach().clone()}
    return {"kind": "missing" if value is None else type(value).__name__}


def _load(targets: dict, values: dict):
    """Copy the judge's tensors into the learner's: the name of the first that is missing or has another
    shape (nothing is copied then), else None."""
    for name, value in values.items():
        mine = targets.get(name)
        if not isinstance(mine, torch.Tensor) or mine.shape != value.shape:
            return name
    with torch.no_grad():
        for name, value in values.items():
            targets[name].copy_(value)
    return None


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
    mine = {name: getattr(m, name, None) for name in ("weight", "bias")}
    # a weight stored as [in, out] (the affine_parameters check's lesson) gets the same map, transposed
    transposed = isinstance(mine["weight"], torch.Tensor) and mine["weight"].shape == weight.T.shape
    if _load(mine, {"weight": weight.T if transposed else weight, "bias": bias}) is not None:
        return {"error": "shape"}
    y = m(x)
    if not isinstance(y, torch.Tensor) or y.shape != upstream.shape:
        return {"y": y.detach() if isinstance(y, torch.Tensor) else y}
    trainable = all(isinstance(t, nn.Parameter) and t.requires_grad for t in mine.values())
    if not y.requires_grad:
        return {"y": y.detach(), "error": "no grad", "trainable": trainable}
    (y * upstream).sum().backward()  # same as y.backward(upstream), which lazily imports torch.fx (0.6 s)
    weight_grad = mine["weight"].grad
    return {"y": y.detach(), "bias_grad": mine["bias"].grad,
            "weight_grad": weight_grad.T if transposed and weight_grad is not None else weight_grad,
            "requires_grad": {name: bool(getattr(t, "requires_grad", False)) for name, t in mine.items()}}


def _linears(m):
    """The learner's Stack.layers as a list (None if it is not iterable)."""
    try:
        return list(getattr(m, "layers", None))
    except TypeError:
        return None


@probe
def stack_structure(module, sizes):
    """Build Stack(sizes): which layers and tensors does model.parameters() see?"""
    m = module.Stack(sizes)
    registered = {id(p) for p in m.parameters()}
    layers = _linears(m)
    facts = {
        "n_registered": len(registered),
        "layers_type": type(getattr(m, "layers", None)).__name__,
        "layers": None,
        "scale": _tensor_facts(getattr(m, "scale", None)),
    }
    if facts["scale"]["kind"] == "tensor":
        facts["scale"]["registered"] = id(m.scale) in registered
    if layers is not None:
        facts["layers"] = [{
            "type": type(layer).__name__,
            "shapes": [list(p.shape) for p in layer.parameters()] if isinstance(layer, nn.Module) else [],
            "registered": isinstance(layer, nn.Module) and all(id(p) in registered for p in layer.parameters()),
        } for layer in layers]
    return facts


@probe
def stack_forward(module, sizes, weights, biases, scale, x):
    """Load the judge's parameters into Stack(sizes), count each layer's forward hooks during model(x)."""
    m = module.Stack(sizes)
    layers = _linears(m) or []
    if len(layers) != len(weights) or not all(isinstance(layer, nn.Module) for layer in layers):
        return {"error": "layers"}
    targets, values = {"scale": getattr(m, "scale", None)}, {"scale": scale}
    for i, (layer, w, b) in enumerate(zip(layers, weights, biases)):
        targets[f"layers[{i}].weight"], values[f"layers[{i}].weight"] = getattr(layer, "weight", None), w
        targets[f"layers[{i}].bias"], values[f"layers[{i}].bias"] = getattr(layer, "bias", None), b
    wrong = _load(targets, values)
    if wrong is not None:
        return {"error": "shape", "name": wrong}
    calls = [0] * len(layers)
    for i, layer in enumerate(layers):
        layer.register_forward_hook(lambda mod, inputs, output, i=i: calls.__setitem__(i, calls[i] + 1))
    y = m(x)
    return {"y": y.detach() if isinstance(y, torch.Tensor) else y, "calls": calls}


@probe
def stack_step(module, sizes, x, y):
    """One SGD step over model.parameters() (as an optimizer does it): which trainable tensors stayed?"""
    m = module.Stack(sizes)
    params = [p for p in m.parameters() if p.requires_grad]
    if not params:
        return {"empty": True}
    names = {id(p): name for name, p in m.named_parameters()}
    before = [p.detach().clone() for p in params]
    # plain SGD by hand: torch.optim would import torch._dynamo (2 s, and it rebinds torch.manual_seed)
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= 0.1 * p.grad
    # A registered tensor whose gradient is exactly zero (every ReLU dead on this batch) may stay put;
    # what may not: one the forward never used, or used without a graph (no gradient at all).
    return {"empty": False, "unchanged": [names[id(p)] for p, b in zip(params, before)
                                          if torch.equal(p.detach(), b) and (p.grad is None or p.grad.any())]}


# -- Affine -------------------------------------------------------------------------------------

def _expect_parameter(facts: dict, owner: str, name: str, shape: list[int], shape_name: str):
    """Structure of one learnable tensor: present, an nn.Parameter, trainable, of the right shape."""
    full = code(f"{owner}.{name}")
    if facts["kind"] == "missing":
        fail("{full} does not exist: create it in `__init__` as {attr}.", "{full} 不存在：请在 `__init__` 中创建 {attr}。",
             full=full, attr=code(f"self.{name}"), key="parameter-missing")
    if facts["kind"] != "tensor":
        fail("{full} should be an `nn.Parameter`, got a {got}.", "{full} 应该是 `nn.Parameter`，实际是 {got}。",
             full=full, got=code(facts["kind"]), key="not-a-parameter")
    if not facts["parameter"]:
        fail("{full} is a plain tensor ({rg}), not an nn.Parameter: `model.parameters()` does not list it, so an "
             "optimizer never updates it. Wrap it in `nn.Parameter`.",
             "{full} 是普通 tensor（{rg}），不是 nn.Parameter：`model.parameters()` 不会列出它，"
             "优化器也就永远不会更新它。请用 `nn.Parameter` 包装。",
             full=full, rg=code(f"requires_grad={facts['requires_grad']}"),
             key="scale-plain-tensor" if name == "scale" else "plain-tensor-not-parameter")
    if not facts["requires_grad"]:
        fail("{full} has `requires_grad=False`: it never gets a gradient, so it never trains.",
             "{full} 的 `requires_grad=False`：它得不到梯度，永远不会被训练。", full=full, key="parameter-frozen")
    if facts["shape"] != shape:
        transposed = sorted(facts["shape"]) == sorted(shape) and len(shape) == 2
        extra = Text(" It looks stored as [in_features, out_features]; `nn.Linear` (and the forward "
                     "`x @ weight.T`) use [out_features, in_features].",
                     "看起来存成了 [in_features, out_features]；`nn.Linear`（以及 forward 中的 `x @ weight.T`）"
                     "使用 [out_features, in_features]。") if transposed else ""
        fail("{full} should have shape {shape_name} = {want}, got {got}.{extra}",
             "{full} 的形状应为 {shape_name} = {want}，实际为 {got}。{extra}",
             full=full, shape_name=shape_name, want=shape, got=facts["shape"], extra=extra,
             key="weight-in-out" if transposed else "wrong-parameter-shape")
    if not facts["finite"]:
        fail("{full} contains NaN or inf after `__init__`: initialise it with finite numbers.",
             "{full} 在 `__init__` 之后含有 NaN 或 inf：请用有限的数初始化。", full=full, key="nan-init")


@check("Affine registers weight [out, in] and bias [out] as nn.Parameter", points=2,
       zh="Affine 把形状为 [输出, 输入] 的 weight 和形状为 [输出] 的 bias 注册为 nn.Parameter")
def test_affine_parameters(submission, rng):
    n_in = randint(rng, 2, 6)
    n_out = n_in + randint(rng, 1, 4)  # different sizes, so a transposed weight shows
    for a, b in ((n_in, n_out), (n_out, n_in), (1, n_in)):
        facts = submission.probe(affine_structure, a, b, what=code(f"Affine({a}, {b})"))
        if not facts["is_module"]:
            fail("Affine should be a subclass of `nn.Module`.", "Affine 应该继承 `nn.Module`。", key="not-a-module")
        _expect_parameter(facts["weight"], "Affine", "weight", [b, a], "[out_features, in_features]")
        _expect_parameter(facts["bias"], "Affine", "bias", [b], "[out_features]")
        if sorted(facts["params"]) != ["bias", "weight"]:
            fail("`model.parameters()` of Affine should hold exactly weight and bias, got {got}.",
                 "Affine 的 `model.parameters()` 应恰好包含 weight 和 bias，实际为 {got}。",
                 got=code_list(sorted(facts["params"])) or Text("nothing", "空"), key="extra-parameters")


@check("Affine(x) computes x @ weight.T + bias and backpropagates to both", points=2,
       zh="Affine(x) 计算 x @ weight.T + bias，且梯度能传到两者", depends="affine_parameters")
def test_affine_forward(submission, rng):
    n_in = randint(rng, 2, 5)
    cases = [(n_in, n_in + randint(rng, 1, 3), randint(rng, 3, 9)), (1, randint(rng, 2, 6), 1)]
    for n_in, n_out, n in cases:  # the second: one input feature and a batch of one, where a squeeze shows
        weight, bias = torch.randn(n_out, n_in, generator=rng), torch.randn(n_out, generator=rng)
        x, upstream = torch.randn(n, n_in, generator=rng), torch.randn(n, n_out, generator=rng)
        call = code(f"Affine({n_in}, {n_out})(x[{n}, {n_in}])")
        with explain({"cannot be multiplied": (
                "x is [N, in_features] and weight [out_features, in_features]: the inner sizes of a matrix "
                "product must match, so the map is `x @ weight.T + bias`.",
                "x 是 [N, in_features]，weight 是 [out_features, in_features]：矩阵乘法的内侧维度必须一致，"
                "所以应计算 `x @ weight.T + bias`。")}, key="forward-not-transposed"):
            got = submission.probe(affine_forward, weight, bias, x, upstream, what=call)
        if got.get("error") == "shape":
            fail("Cannot load a weight [{n_out}, {n_in}] and a bias [{n_out}] into {m}: fix the shapes of its "
                 "parameters first.", "无法把 weight [{n_out}, {n_in}] 和 bias [{n_out}] 放进 {m}：请先修正参数的形状。",
                 n_out=n_out, n_in=n_in, m=code(f"Affine({n_in}, {n_out})"), key="wrong-parameter-shape")
        expect_close(got["y"], x @ weight.T + bias, call, hints={
            "zero": ("Did forward return something unrelated to the input?", "forward 返回的结果和输入无关吗？")})
        if got.get("error") == "no grad":
            if got["trainable"]:
                fail("The output of Affine does not require grad although weight and bias do: forward cut the graph "
                     "(`.data`, `.detach()` or `torch.no_grad()`?), so no gradient can reach them. Compute with "
                     "`self.weight` and `self.bias` themselves.",
                     "weight 和 bias 都需要梯度，但 Affine 的输出不需要：forward 切断了计算图（用了 `.data`、`.detach()` "
                     "还是 `torch.no_grad()`？），梯度无法传到它们。请直接用 `self.weight` 和 `self.bias` 计算。",
                     key="forward-detached")
            fail("The output of Affine does not require grad, so no gradient can reach weight and bias: they must "
                 "be `nn.Parameter` (which require grad).",
                 "Affine 的输出不需要梯度，梯度无法传到 weight 和 bias：它们必须是 `nn.Parameter`（默认 requires grad）。",
                 key="plain-tensor-not-parameter")
        expected = autograd_gradient(lambda w, b: ((x.double() @ w.T + b) * upstream.double()).sum(), [weight, bias])
        for name, want in zip(("weight", "bias"), expected):
            if got[f"{name}_grad"] is None and not got.get("requires_grad", {}).get(name, True):
                fail("After backward, {grad} is None: {attr} does not require grad, so autograd keeps no gradient "
                     "for it. Make it an `nn.Parameter` (a buffer or a plain tensor is not trained).",
                     "backward 之后 {grad} 为 None：{attr} 不需要梯度，autograd 不会为它保留梯度。请把它设为 "
                     "`nn.Parameter`（buffer 或普通 tensor 不会被训练）。",
                     grad=code(f"Affine.{name}.grad"), attr=code(f"self.{name}"), key="not-a-parameter")
            if got[f"{name}_grad"] is None:
                fail("After backward, {grad} is None: the output was not computed from {attr} (a copy, or a "
                     "detached tensor?).", "backward 之后 {grad} 为 None：输出不是由 {attr} 计算的（用了副本，还是 detach 过的 tensor？）。",
                     grad=code(f"Affine.{name}.grad"), attr=code(f"self.{name}"), key="forward-detached")
            expect_gradient(got[f"{name}_grad"], want, f"Affine.{name}", of="output")
    expect_cpu_module(submission, "Affine", [n_in, n_out], [x])


# -- Stack ----------------------------------------------------------------------------------------

@check("Stack registers every layer (model.parameters() sees them all)", points=2,
       zh="Stack 注册了每一层（model.parameters() 能看到全部）")
def test_stack_layers_registered(submission, rng):
    sizes = draw_sizes(rng)
    n_layers = len(sizes) - 1
    stack = code(f"Stack({sizes})")
    facts = submission.probe(stack_structure, sizes, what=stack)
    if facts["layers"] is None:
        fail("{stack}.layers should hold the {n} `nn.Linear` layers in order, got {got}.",
             "{stack}.layers 应按顺序保存 {n} 个 `nn.Linear` 层，实际为 {got}。",
             stack=stack, n=n_layers, got=code(facts["layers_type"]), key="layers-missing")
    if len(facts["layers"]) != n_layers:
        fail("{stack}.layers should hold {n} layers, got {got}.", "{stack}.layers 应有 {n} 层，实际为 {got} 层。",
             stack=stack, n=n_layers, got=len(facts["layers"]), key="wrong-layer-count")
    for i, (layer, a, b) in enumerate(zip(facts["layers"], sizes[:-1], sizes[1:])):
        if layer["shapes"] != [[b, a], [b]]:
            fail("{stack}.layers[{i}] should be {want}, got a {type} with parameter shapes {shapes}.",
                 "{stack}.layers[{i}] 应为 {want}，实际是 {type}，参数形状为 {shapes}。",
                 stack=stack, i=i, want=code(f"nn.Linear({a}, {b})"), type=code(layer["type"]),
                 shapes=layer["shapes"], key="wrong-layer")
    missing = [i for i, layer in enumerate(facts["layers"]) if not layer["registered"]]
    if missing:
        fail("`model.parameters()` of Stack lists {got} tensors, expected {want}: the layers {missing} are invisible "
             "to nn.Module because they sit in a plain Python {type} (not trained, not moved by `.to()`, not saved "
             "in `state_dict`). Keep them in an `nn.ModuleList`.",
             "Stack 的 `model.parameters()` 只有 {got} 个 tensor，应为 {want} 个：第 {missing} 层放在普通的 Python "
             "{type} 里，nn.Module 看不到它们（不会被训练、不会被 `.to()` 移动、不会存进 `state_dict`）。请改用 `nn.ModuleList`。",
             got=facts["n_registered"], want=2 * n_layers + 1, missing=missing, type=code(facts["layers_type"]),
             key="layers-in-python-list")


@check("Stack.scale is a learnable nn.Parameter that starts at ones", points=1,
       zh="Stack.scale 是可学习的 nn.Parameter，初始全为 1")
def test_stack_scale(submission, rng):
    sizes = draw_sizes(rng)
    facts = submission.probe(stack_structure, sizes, what=code(f"Stack({sizes})"))
    scale = facts["scale"]
    _expect_parameter(scale, "Stack", "scale", [sizes[-1]], "[sizes[-1]]")
    if not scale["registered"]:
        fail("Stack.scale is an nn.Parameter but `model.parameters()` does not list it: assign it as an attribute "
             "of the model (`self.scale = ...`) after `super().__init__()`.",
             "Stack.scale 是 nn.Parameter，但 `model.parameters()` 没有列出它：请在 `super().__init__()` "
             "之后把它作为模型属性赋值（`self.scale = ...`）。", key="scale-not-registered")
    expect_close(scale["value"], torch.ones(sizes[-1]), ("Stack.scale at the start", "Stack.scale 的初始值"))


def stack_reference(weights, biases, scale, x, last_relu=False):
    h = x
    for i, (w, b) in enumerate(zip(weights, biases)):
        h = h @ w.T + b
        if i < len(weights) - 1 or last_relu:
            h = torch.relu(h)
    return h * scale


@check("Stack(x) calls each layer as a module, once, and computes the ReLU stack times scale", points=2,
       zh="Stack(x) 以 layer(x) 的方式把每层各调用一次，计算带 ReLU 的多层网络再乘以 scale",
       depends=("stack_layers_registered", "stack_scale"))
def test_stack_forward(submission, rng):
    drawn = draw_sizes(rng)
    deep = [randint(rng, 2, 6) for _ in range(5)]  # 4 layers: "all but the last" is not "the first" there
    for sizes, n in ((drawn, randint(rng, 3, 9)), ([1, randint(rng, 2, 5), 1], 1), (deep, 2)):  # and size-1 dims
        weights = [torch.randn(b, a, generator=rng) for a, b in zip(sizes[:-1], sizes[1:])]
        biases = [torch.randn(b, generator=rng) for b in sizes[1:]]
        scale = torch.rand(sizes[-1], generator=rng) + 0.5
        x = torch.randn(n, sizes[0], generator=rng)
        call = code(f"Stack({sizes})(x[{n}, {sizes[0]}])")
        got = submission.probe(stack_forward, sizes, weights, biases, scale, x, what=call)
        if got.get("error"):
            fail("Cannot load the checks' weights into {stack}: {name} is missing or has another shape. "
                 "Fix Stack's layers and scale first.",
                 "无法把检查用的权重放进 {stack}：{name} 不存在或形状不同。请先修正 Stack 的各层和 scale。",
                 stack=code(f"Stack({sizes})"), name=code(got.get("name", "layers")), key="wrong-parameter-shape")
        silent = [i for i, c in enumerate(got["calls"]) if c == 0]
        twice = [i for i, c in enumerate(got["calls"]) if c > 1]
        if twice and silent:
            fail("During one model(x), layers {twice} ran more than once and layers {silent} never: each layer "
                 "has its own weights, so apply every layer of `self.layers` once, in order.",
                 "一次 model(x) 中，layers {twice} 运行了不止一次，而 layers {silent} 从未运行：每层都有自己的权重，"
                 "请按顺序把 `self.layers` 的每一层各用一次。", twice=twice, silent=silent, key="layer-used-twice")
        if silent:
            fail("A forward hook registered on layers {silent} never ran during model(x): forward calls "
                 "`layer.forward(x)`, which skips `nn.Module.__call__` and with it every hook (and what PyTorch "
                 "does around forward). Call the layer itself: `layer(x)`.",
                 "在 layers {silent} 上注册的 forward hook 在 model(x) 期间从未运行：forward 里调用了 "
                 "`layer.forward(x)`，这绕过了 `nn.Module.__call__`，所有钩子（以及 PyTorch 在 forward 前后做的事）都被跳过。"
                 "请直接调用层本身：`layer(x)`。", silent=silent, key="forward-called-directly")
        if twice:
            fail("Layers {twice} ran more than once ({calls} times) for one model(x): each layer should be applied "
                 "exactly once.", "一次 model(x) 中 layers {twice} 运行了不止一次（{calls} 次）：每层只应使用一次。",
                 twice=twice, calls=[got["calls"][i] for i in twice], key="layer-used-twice")
        y = got["y"]
        relu_last = stack_reference(weights, biases, scale, x, last_relu=True)
        expected = stack_reference(weights, biases, scale, x)
        if not matches(y, expected, rtol=1e-5, atol=1e-5) and matches(y, relu_last, rtol=1e-5, atol=1e-5):
            fail("{call} equals relu of the expected output: there is a ReLU after the last layer, so the model "
                 "could never output a negative value. Apply ReLU between the layers only.",
                 "{call} 等于期望输出再取 relu：最后一层之后多了一个 ReLU，模型永远输出不了负数。ReLU 只放在层与层之间。",
                 call=call, key="relu-after-last-layer")
        expect_close(y, expected, call, atol=1e-5)
    expect_cpu_module(submission, "Stack", [drawn], [torch.randn(2, drawn[0], generator=rng)])


@check("One optimizer step on model.parameters() changes every trainable parameter", points=1,
       zh="对 model.parameters() 做一步优化会改变每个可训练参数",
       depends=("stack_layers_registered", "stack_scale"))
def test_stack_trains(submission, rng):
    sizes = draw_sizes(rng)
    x = torch.randn(16, sizes[0], generator=rng)
    y = torch.randn(16, sizes[-1], generator=rng)
    got = submission.probe(stack_step, sizes, x, y, what=Text("training {m}", "训练 {m}", m=code(f"Stack({sizes})")))
    if got["empty"]:
        fail("`model.parameters()` of Stack holds nothing trainable, so an optimizer has nothing to train: the layers "
             "and scale are not registered (a plain list, a plain tensor?).",
             "Stack 的 `model.parameters()` 里没有可训练的东西，优化器无从训练：各层和 scale 都没有注册（普通 list？普通 tensor？）。",
             key="nothing-registered")
    if got["unchanged"]:
        fail("After one SGD step over `model.parameters()` (what an optimizer does), these parameters did not "
             "change: {names}. They got no gradient: does forward use them, and without `.data` or `.detach()`?",
             "对 `model.parameters()` 执行一步 SGD（也就是优化器做的事）之后，这些参数没有变化：{names}。"
             "它们没有得到梯度：forward 用到它们了吗？有没有用 `.data` 或 `.detach()`？",
             names=code_list(got["unchanged"]), key="parameter-unused")
