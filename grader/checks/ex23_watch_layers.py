"""Hidden checks of ex23: gradient norms per parameter, and a forward-hook monitor that names the first
layer whose output goes bad.

gradient_norms is judged on a model with a parameter that takes no part in the loss (its .grad stays
None), against the norms the judge computes from the same weights and data. first_bad_layer is judged on
a model rigged to go wrong at a known module: its blocks are defined in one order and run in another (so
the order of named_modules() is not the order they run), and one block's Linear is rigged so that its
output overflows to -inf, or grows past the limit (either sign) in one unit only while staying finite, or the
block itself (a container: its layers' outputs are fine) scales its output to NaN. What runs after the rigged
module may go bad too, so only the first bad output, in running order, is the right answer. The judge finds it
with its own hooks on the same model.
"""

import torch
from torch import nn

from grader.checking import (Text, check, fail, fail_raised, is_number, learner_call, matches, probe, verbatim)

WIDTH, BLOCKS, LIMIT = 6, 4, 1e3


class Net(nn.Module):
    """body -> head; `aux` takes no part in the forward, so its .grad stays None."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 8), nn.Tanh())
        self.head = nn.Linear(8, 3)
        self.aux = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(self.body(x))


class Pair(nn.Module):
    """Returns a tuple, as nn.LSTM or nn.MultiheadAttention do: (features, the norm of each row)."""

    def forward(self, x):
        return x.clone(), x.norm(dim=-1)


class Block(nn.Sequential):
    """Linear -> ReLU, the output scaled by the buffer `gain` (1, unless rigged): a block whose own computation can
    go bad while the outputs of its layers are fine."""

    def __init__(self):
        super().__init__(nn.Linear(WIDTH, WIDTH), nn.ReLU())
        self.register_buffer("gain", torch.ones(()))

    def forward(self, x):
        return super().forward(x) * self.gain


class Rigged(nn.Module):
    """Blocks defined as blocks.0..3, run in `order`; with `pair`, a module that returns a tuple runs first."""

    def __init__(self, order, pair=False):
        super().__init__()
        self.pair = Pair() if pair else None
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.head = nn.Linear(WIDTH, 2)
        self.order = list(order)

    def forward(self, x):
        if self.pair is not None:
            x, _ = self.pair(x)
        for i in self.order:
            x = self.blocks[i](x)
        return self.head(x)


def build(cls, state, *args):
    model = cls(*args)
    model.load_state_dict(state)
    return model


# -- sandbox side ---------------------------------------------------------------------------

def _hooks_left(model) -> list:
    return [name or "model" for name, m in model.named_modules()
            if m._forward_hooks or m._forward_pre_hooks or getattr(m, "_forward_hooks_with_kwargs", None)]


def _same_grad(grad, before) -> bool:
    return (grad is None and before is None) or (grad is not None and before is not None and torch.equal(grad, before))


@probe
def norms_probe(module, state, x, target):
    model = build(Net, state)
    nn.functional.mse_loss(model(x), target).backward()
    before = {name: None if p.grad is None else p.grad.clone() for name, p in model.named_parameters()}
    got, error = learner_call(module, module.gradient_norms, model)
    if error:
        return {"error": error}
    changed = [name for name, p in model.named_parameters() if not _same_grad(p.grad, before[name])]
    if isinstance(got, dict):  # a norm as one number if it is one; whether it is a float as Python sees it
        got = {str(k): (float(v) if is_number(v, (int, float), tensor=True) else None, is_number(v, float),
                        type(v).__name__) for k, v in got.items()}
    else:
        got = type(got).__name__
    return {"error": None, "got": got, "changed": changed}


def _record(model):
    """Record each module's tensor output and tensor input at its first call, by name. An output is recorded as it
    leaves the module (global hooks run before the module's own); an input as the next module gets it, after every
    hook of the module that made it: a hook that returns a value replaces the output only there. Returns (outputs,
    inputs, the handles that stop recording); the whole model's input is inputs[""]."""
    names = {id(m): name for name, m in model.named_modules()}
    outputs: dict[str, torch.Tensor] = {}
    inputs: dict[str, torch.Tensor] = {}

    def called(mod, args):
        name = names.get(id(mod))
        if name is not None and name not in inputs and args and isinstance(args[0], torch.Tensor):
            inputs[name] = args[0].detach().clone()

    def record(mod, args, output):
        name = names.get(id(mod))
        if name is not None and name not in outputs and isinstance(output, torch.Tensor):
            outputs[name] = output.detach().clone()

    return outputs, inputs, [torch.nn.modules.module.register_module_forward_pre_hook(called),
                             torch.nn.modules.module.register_module_forward_hook(record)]


def _same(a, b) -> bool:
    return a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


@probe
def monitor_probe(module, state, order, x, limit, pair=False):
    model = build(Rigged, state, order, pair)
    clean, clean_inputs, handles = _record(model)  # what the model computes, without the learner's hooks
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    given = x.clone()
    out = {}
    watched, inputs, handles = _record(model)  # what it computes while the learner's hooks watch
    try:
        out["got"], out["error"] = learner_call(module, module.first_bad_layer, model, x, limit)
    finally:
        for h in handles:
            h.remove()
    same_input = "" in inputs and _same(inputs[""], given)  # else nothing to compare
    changed = [name for name, t in watched.items() if name in clean and not _same(t, clean[name])]
    for name, t in inputs.items():  # an output a hook replaced reaches the next module as its input
        if not changed and name in clean_inputs and not _same(t, clean_inputs[name]):
            changed = [next((made for made, o in clean.items() if made != name and _same(o, clean_inputs[name])), name)]
    out["outputs_changed"] = changed if same_input else []
    if out["got"] is not None and not isinstance(out["got"], str):
        out["got"] = {"type": type(out["got"]).__name__}
    out["hooks_left"] = _hooks_left(model)
    out["weights_same"] = all(torch.equal(v, state[k]) for k, v in model.state_dict().items())
    return out


# -- judge side -----------------------------------------------------------------------------

NONE_GRAD = Text("A parameter that takes no part in the loss keeps .grad None: leave it out.",
                 "不参与损失计算的参数 .grad 一直是 None：请跳过它。")


NORMS_CALL = "`gradient_norms(model)`"


def norms_case(submission, rng):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
    model = Net()
    x, target = torch.randn(12, 5, generator=rng), 3 * torch.randn(12, 3, generator=rng)
    nn.functional.mse_loss(model(x), target).backward()
    out = submission.probe(norms_probe, model.state_dict(), x, target, what=NORMS_CALL)
    if out["error"]:
        fail_raised(out["error"], NORMS_CALL, NONE_GRAD if "NoneType" in out["error"]["message"] else None)
    if not isinstance(out["got"], dict):
        fail("{call} should return a dict {{name: norm}}, got a {got}.", "{call} 应返回字典 {{name: norm}}，实际得到一个 {got}。",
             call=NORMS_CALL, got=verbatim(f"`{out['got']}`"), key="not-a-dict")
    return model, out


@check("gradient_norms has one entry per parameter with a gradient, named as named_parameters() names it",
       points=1.5, zh="gradient_norms 对每个有梯度的参数给出一项，名字与 named_parameters() 一致")
def test_norm_keys(submission, rng):
    model, out = norms_case(submission, rng)
    want = [name for name, p in model.named_parameters() if p.grad is not None]
    got = list(out["got"])
    if set(got) == set(want):
        return
    _missing, extra = [n for n in want if n not in got], [n for n in got if n not in want]
    if set(extra) == {"aux.weight", "aux.bias"} & set(extra) and extra:
        fail("{call} has entries for {extra}, whose .grad is None (the parameter takes no part in the loss): "
             "leave those out.", "{call} 为 {extra} 给出了条目，但它们的 .grad 是 None（该参数不参与损失计算）：请跳过它们。",
             call=NORMS_CALL, extra=verbatim(", ".join(f"`{n}`" for n in extra)), key="none-grad-included")
    fail("{call} should have the keys {want} (the names from model.named_parameters()), got {got}.",
         "{call} 的键应为 {want}（即 model.named_parameters() 给出的名字），实际为 {got}。", call=NORMS_CALL,
         want=verbatim(", ".join(f"`{n}`" for n in want)), got=verbatim(", ".join(f"`{n}`" for n in got[:8]) or "{}"),
         key="wrong-keys")


@check("gradient_norms gives the L2 norm of each gradient, as a float, leaving .grad as it was", points=1.5,
       zh="gradient_norms 给出每个梯度的 L2 范数（float），且不改变 .grad", depends="norm_keys")
def test_norm_values(submission, rng):
    model, out = norms_case(submission, rng)
    if out["changed"]:
        fail("{call} changed the gradients of {names}: a monitor only reads .grad.",
             "{call} 改变了 {names} 的梯度：监控工具只应读取 .grad。", call=NORMS_CALL,
             names=verbatim(", ".join(f"`{n}`" for n in out["changed"][:4])), key="grad-changed")
    for name, p in model.named_parameters():
        if name not in out["got"]:
            continue
        value, is_float, kind = out["got"][name]
        if not is_float:
            fail("{call}[{name}] is a {kind}: return Python floats (.item()).",
                 "{call}[{name}] 是 {kind}：请返回 Python float（.item()）。", call=NORMS_CALL, name=verbatim(repr(name)),
                 kind=verbatim(f"`{kind}`"), key="not-a-float")
        g = p.grad.double()
        want = float(g.norm())
        if matches(value, want):
            continue
        causes = [(float(p.detach().double().norm()),
                   Text("That is the norm of the parameter itself, not of its gradient: use p.grad",
                        "这是参数本身的范数，不是梯度的范数：请用 p.grad")),
                  (want ** 2, Text("That is the squared norm: take the square root (p.grad.norm())",
                                   "这是范数的平方：请开平方（p.grad.norm()）")),
                  (float(g.abs().sum()), Text("That is the sum of |grad| (the L1 norm): the L2 norm is the square root of the "
                                             "sum of squares", "这是 |grad| 之和（L1 范数）：L2 范数是平方和的平方根")),
                  (float(g.abs().max()), Text("That is the largest |grad|: the L2 norm is the square root of the sum of squares",
                                             "这是最大的 |grad|：L2 范数是平方和的平方根")),
                  (float(g.mean()), Text("That is the mean of the gradient: the L2 norm is the square root of the sum of squares",
                                         "这是梯度的均值：L2 范数是平方和的平方根"))]
        cause = next((text for v, text in causes if matches(value, v)), Text("", ""))
        fail("{call}[{name}] is {got:.6g}, expected {want:.6g}. {cause}",
             "{call}[{name}] 为 {got:.6g}，应为 {want:.6g}。{cause}", call=NORMS_CALL, name=verbatim(repr(name)),
             got=value if value is not None else float("nan"), want=want, cause=cause, key="wrong-norm")


# -- first_bad_layer ------------------------------------------------------------------------

MONITOR_CALL = "`first_bad_layer(model, x, limit=1000.0)`"


RIGS = {  # how a rig makes its module go bad: in a block's Linear (its bias, or one unit), or in the block itself
    "-inf": Text("-inf", "-inf"), "nan": Text("NaN", "NaN"), "large": Text("a value beyond the limit", "超过上限的值"),
    "-large": Text("a value beyond the limit", "超过上限的值"), "healthy": Text("", "")}


def rig(rng, kind: str, pair=False):
    """A Rigged model whose block `bad` goes wrong or reaches the limit exactly (kind "healthy": at the limit is not
    beyond it), with a block that runs after it and comes before it in named_modules(); and the name of the module
    whose output goes bad first. "-inf": the block's Linear overflows to -inf (ReLU turns it back to 0); "nan": the
    block's own output is NaN while its layers' outputs are fine (a container, not a leaf, goes bad); "large",
    "-large": one unit of the Linear at +-3 limits, finite."""
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
    order = torch.randperm(BLOCKS, generator=rng).tolist()
    pos = int(torch.randint(1, BLOCKS - 1, (1,), generator=rng))
    if order[pos] == min(order[pos:]):  # a smaller-numbered block must run after the bad one
        order[pos], order[pos + 1] = order[pos + 1], order[pos]
    bad = order[pos]
    model = Rigged(order, pair)
    x = torch.randn(8, WIDTH, generator=rng)
    with torch.no_grad():
        block = model.blocks[bad]
        if kind == "-inf":
            block[0].bias.fill_(-float("inf"))
        elif kind == "nan":
            block.gain.fill_(float("nan"))
        else:
            unit = int(torch.randint(0, WIDTH, (1,), generator=rng))
            block[0].weight[unit].fill_(0)
            block[0].bias[unit] = {"large": 3 * LIMIT, "-large": -3 * LIMIT, "healthy": LIMIT}[kind]
    return model, order, x, f"blocks.{bad}" if kind == "nan" else f"blocks.{bad}.0"


def truth(model, x):
    """The judge's own monitor: every module's output (None for one that is not a tensor), in the order they run."""
    seen = []
    handles = [m.register_forward_hook(lambda mod, i, o, name=name: seen.append(
                   (name, o.detach() if isinstance(o, torch.Tensor) else None)))
               for name, m in model.named_modules()]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return seen


def is_bad(t) -> bool:
    """Whether a module's output is bad; one that is not a tensor (None here) is not judged."""
    return t is not None and bool(not torch.isfinite(t).all() or t.abs().max() > LIMIT)


def monitor_case(submission, rng, kind, pair=False):
    model, order, x, rigged = rig(rng, kind, pair)
    seen = truth(model, x)
    bad = [name for name, o in seen if is_bad(o)]
    want = bad[0] if bad else None
    if want != (rigged if kind != "healthy" else None):  # pragma: no cover - guards the check's own data
        raise AssertionError(f"the rig went wrong: {bad}")
    out = submission.probe(monitor_probe, model.state_dict(), order, x, LIMIT, pair, what=MONITOR_CALL)
    if out["error"]:
        if pair and "tuple" in out["error"]["message"]:
            fail_raised(out["error"], MONITOR_CALL, Text(
                "This model has a module, `pair`, that returns a tuple (as nn.LSTM and nn.MultiheadAttention do). "
                "Skip outputs that are not tensors (isinstance(output, torch.Tensor)), or look at the tensors inside.",
                "这个模型中有一个返回元组的模块 `pair`（nn.LSTM 和 nn.MultiheadAttention 也是如此）。"
                "请跳过不是张量的输出（isinstance(output, torch.Tensor)），或者检查其中的张量。"), key="tuple-output")
        fail_raised(out["error"], MONITOR_CALL)
    return seen, want, out


def judge_monitor(seen, want, out, kind, defined):
    """Fail unless first_bad_layer returned `want`; the message names a cause only where the model shows it (what
    the returned module's output holds, where it ran, what kind of module it is)."""
    got = out["got"]
    if got == want:
        return
    if isinstance(got, dict):
        fail("{call} should return a module's name (a str) or None, got a {got}.",
             "{call} 应返回模块的名字（str）或 None，实际得到一个 {got}。", call=MONITOR_CALL,
             got=verbatim(f"`{got['type']}`"), key="not-a-name")
    outputs = dict(seen)
    order = [name for name, _ in seen]
    bad = [name for name in order if is_bad(outputs[name])]
    values = dict(call=MONITOR_CALL, got=verbatim(repr(got)), want=verbatim(repr(want)))
    if want is None:
        if outputs.get(got) is not None and float(outputs[got].abs().max()) == LIMIT:
            fail("{call} returned {got}, whose output reaches limit=1000 exactly but not beyond it: a value is bad "
                 "when its absolute value is above the limit (> limit, not >=).",
                 "{call} 返回了 {got}，它的输出恰好等于 limit=1000，但没有超过它：绝对值大于上限的值才算异常（> limit，而不是 >=）。",
                 key="limit-inclusive", **values)
        fail("every output of this model is finite and within the limit, but {call} returned {got}: return None "
             "when no output is bad.", "这个模型的所有输出都是有限值且没有超过上限，但 {call} 返回了 {got}：没有异常输出时应返回 None。",
             key="false-alarm", **values)
    if got is None:
        if kind in ("large", "-large"):
            fail("{call} returned None, but the output of {want} holds {big:.4g}, beyond limit=1000 in absolute value "
                 "(in one unit only: the mean of |output| stays below the limit). Compare output.abs().max() with the "
                 "limit, as well as looking for NaN and inf.",
                 "{call} 返回了 None，但 {want} 的输出中有一个值为 {big:.4g}，其绝对值超过了 limit=1000（只在一个单元上："
                 "|output| 的均值仍低于上限）。除了查找 NaN 和 inf，还要把 output.abs().max() 与 limit 比较。",
                 big=float(outputs[want].flatten()[outputs[want].abs().flatten().argmax()]), key="limit-ignored",
                 **values)
        fail("{call} returned None, but the output of {want} holds {what}: look for every non-finite value "
             "(torch.isfinite finds NaN, inf and -inf alike).",
             "{call} 返回了 None，但 {want} 的输出含有 {what}：要查找所有非有限值（torch.isfinite 能同时发现 NaN、inf 和 -inf）。",
             what=RIGS[kind], key="inf-missed" if kind == "-inf" else "nan-missed", **values)
    if got not in order:
        fail("{call} returned {got}, which is not the name of a module that ran (model.named_modules() names "
             "them); the first bad output comes from {want}.",
             "{call} 返回了 {got}，它不是某个运行过的模块的名字（名字由 model.named_modules() 给出）；第一个异常输出来自 {want}。",
             key="not-a-module-name", **values)
    if got == "":
        fail("{call} returned '', the name named_modules() gives the whole model, whose output is bad only because "
             "{want}, which ran before it, went bad first. Keep the first name your hooks see.",
             "{call} 返回了 ''，这是 named_modules() 给整个模型起的名字；它的输出异常，只是因为更早运行的 {want} 先出了问题。"
             "请保留钩子看到的第一个名字。", key="whole-model", **values)
    got_bad, ran_after = is_bad(outputs[got]), order.index(got) > order.index(want)
    leaves = [name for name in order if not any(other.startswith(name + ".") for other in order)]
    if got_bad and want not in leaves and got == next((n for n in bad if n in leaves), None):
        fail("{call} returned {got}, the first bad output among the modules without children, but the first bad output "
             "is that of {want}, a block whose own forward (not one of its layers) made it bad. Hook every module "
             "named_modules() gives, not only the leaves.",
             "{call} 返回了 {got}，这是没有子模块的模块中第一个异常输出；但第一个异常输出来自 {want}：这个块自己的 forward"
             "（而不是它里面的某一层）让输出变得异常。请给 named_modules() 给出的每个模块都挂钩子，而不只是叶子模块。",
             key="leaves-only", **values)
    if got_bad and ran_after and got == next((name for name in defined if name and name in bad), None):
        fail("{call} returned {got}, the first bad module in the order of named_modules(), but {want} went bad "
             "earlier in the order the modules run: this model defines its blocks in one order and runs them in "
             "another. Record the names inside the hooks, as the forward pass calls them.",
             "{call} 返回了 {got}，这是按 named_modules() 顺序的第一个异常模块；但按模块实际运行的顺序，{want} 更早出现异常："
             "这个模型定义各块的顺序和运行它们的顺序不同。请在钩子里按前向传播调用的顺序记录名字。",
             key="definition-order", **values)
    if got_bad and ran_after:
        fail("{call} returned {got}, whose output is bad too, but {want} ran before it and went bad first (what runs "
             "after a bad output is fed bad values). Keep the first name your hooks see.",
             "{call} 返回了 {got}，它的输出也异常，但 {want} 在它之前运行并且先出了问题（在异常输出之后运行的模块拿到的都是"
             "异常的值）。请保留钩子看到的第一个名字。", key="later-than-first", **values)
    if not got_bad and order.index(got) == order.index(want) + 1:
        fail("{call} returned {got}, which runs right after {want}: its own output is fine, but its input, the output "
             "of {want}, is bad. Use register_forward_hook (which sees the output), not a pre-hook (which sees the "
             "input).",
             "{call} 返回了 {got}，它紧接在 {want} 之后运行：它自己的输出正常，但它的输入（即 {want} 的输出）异常。"
             "请用 register_forward_hook（看到输出），而不是 pre-hook（看到输入）。", key="input-not-output", **values)
    fail("{call} returned {got}, expected {want}: the first module, in the order they run, whose output holds a NaN, "
         "an inf or a value beyond limit=1000.",
         "{call} 返回了 {got}，应为 {want}：按运行顺序，第一个输出含 NaN、inf 或超过 limit=1000 的值的模块。",
         key="wrong-layer", **values)


def judge_rigs(submission, rng, kinds, pair=False):
    """first_bad_layer on a rig of each kind, judged in turn."""
    for kind in kinds:
        judge_monitor(*monitor_case(submission, rng, kind, pair), kind, DEFINED)


@check("first_bad_layer names the first module whose output is not finite (-inf, NaN), in the order they run",
       points=2, zh="first_bad_layer 按运行顺序，找出第一个输出不是有限值（-inf、NaN）的模块")
def test_monitor_inf(submission, rng):
    judge_rigs(submission, rng, ("-inf", "nan"))


@check("first_bad_layer names the first layer whose output exceeds the limit in absolute value, while still finite",
       points=2, zh="first_bad_layer 找出第一个输出的绝对值超过上限（但仍是有限值）的层")
def test_monitor_large(submission, rng):
    judge_rigs(submission, rng, ("large", "-large"))


@check("first_bad_layer returns None on a healthy model, one of whose outputs reaches the limit exactly", points=1,
       zh="模型正常（有一个输出恰好等于上限）时 first_bad_layer 返回 None")
def test_monitor_healthy(submission, rng):
    judge_rigs(submission, rng, ("healthy",))


@check("first_bad_layer copes with a module that returns a tuple, not a tensor", points=1,
       zh="first_bad_layer 能处理返回元组（而不是张量）的模块")
def test_monitor_tuple(submission, rng):
    judge_rigs(submission, rng, ("large",), pair=True)


@check("first_bad_layer removes its hooks and leaves the model and what it computes as they were", points=1,
       zh="first_bad_layer 移除自己的钩子，并保持模型及其计算结果不变")
def test_hooks_removed(submission, rng):
    _, _, out = monitor_case(submission, rng, "-inf")
    if out["hooks_left"]:
        fail("after {call} returned, hooks are still registered on {names}: they would run at every later forward. "
             "Keep the handles register_forward_hook returns and call handle.remove() on each (in a finally block).",
             "{call} 返回之后，{names} 上仍注册着钩子：以后每次前向传播它们都会运行。请保存 register_forward_hook 返回的句柄，"
             "并对每个句柄调用 handle.remove()（放在 finally 块中）。", call=MONITOR_CALL,
             names=verbatim(", ".join(f"`{n}`" for n in out["hooks_left"][:4])), key="hooks-left")
    if not out["weights_same"]:
        fail("after {call} the model's weights differ from before: a monitor only looks, it changes no weight.",
             "调用 {call} 之后模型的权重与之前不同：监控工具只观察，不应修改任何权重。", call=MONITOR_CALL,
             key="model-changed")
    if out["outputs_changed"]:
        fail("while {call} watched, the output of {name} differed from what the model computes without your hooks: "
             "a hook changed it (an in-place operation such as abs_() on the output, or a hook that returns a value, "
             "which replaces the module's output). A monitor only looks: use out-of-place operations (output.abs()) "
             "and return nothing from the hook.",
             "在 {call} 监控期间，{name} 的输出与不挂钩子时模型算出的不同：是钩子改变了它（对输出做了 abs_() 这样的原地操作，"
             "或者钩子返回了一个值，而返回值会替换模块的输出）。监控工具只观察：请用非原地操作（output.abs()），钩子也不要返回任何值。",
             call=MONITOR_CALL, name=verbatim(f"`{out['outputs_changed'][0]}`"), key="output-changed")


DEFINED = [name for name, _ in Rigged(range(BLOCKS)).named_modules()]
