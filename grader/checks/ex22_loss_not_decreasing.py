"""Hidden checks of ex22: fix the training whose loss does not go down.

A probe runs the learner's `fit` on data the judge drew, with torch seeded by the judge, and watches
it: the parameters of every module at its first forward (where they start), the loss and the
gradients of the first backward, and the parameters each optimizer holds when it steps. After `fit`
returns it reads the model it gave back: which parameters require grad, which an optimizer stepped,
how far each moved. Each check judges one of the three causes of a flat loss the tutorials list (a
graph cut by NumPy or .item(), a frozen layer, an optimizer built before a layer was added), then the
training they allow: against SGD run by the judge from the learner's own starting weights on the same data, so
that no draw can fail a correct fix (a fixed "halve the loss" bar did on some draws).
"""

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from grader.checking import Text, check, fail, fail_raised, is_number, learner_call, matches, patched, probe, verbatim

N, IN, HIDDEN, LR, EPOCHS = 64, 4, 16, 0.3, 150
EARLY = 20  # the epochs whose losses follow the judge's SGD to the rounding: at lr 0.3 this training is chaotic,
# and two correct runs whose float rounding differs part after epoch 35 or so (60 draws: 35 to 80), ending anywhere
# from 0.02 to 0.6 (so no bar on the final loss can be fair, "half of the first" failed correct fixes)
CALL = f"`fit(x[{N}, {IN}], y[{N}, 1], hidden={HIDDEN}, lr={LR}, epochs={EPOCHS})`"


# -- sandbox side ---------------------------------------------------------------------------

def _largest(grad):
    return None if grad is None else float(grad.detach().abs().max())


def _is_linear(own: dict, given, output) -> bool:
    """Whether a layer's own parameters are a Linear's (weight [out, in], bias [out]) and it computed one."""
    weight, bias = own.get("weight"), own.get("bias")
    if set(own) != {"weight", "bias"} or weight.dim() != 2 or bias.shape != weight.shape[:1] \
            or given.shape[-1:] != weight.shape[1:]:
        return False
    return output.shape == given.shape[:-1] + weight.shape[:1] and torch.allclose(
        output, torch.nn.functional.linear(given, weight, bias), rtol=1e-5, atol=1e-6)


def _architecture(layers, x):
    """Where the layers that ran (those with parameters of their own, each at its first call: input, output and
    its parameters then) depart from Linear -> Tanh -> Linear -> Tanh -> head; None where they do not."""
    if len(layers) != 3:
        return {"layers": len(layers)}
    first_input = layers[0]["input"]
    if first_input.shape == x.shape and not torch.equal(first_input, x):
        return {"layer": 0, "tanh_first": torch.allclose(first_input, torch.tanh(x))}
    for k in (1, 2):
        given, before = layers[k]["input"], layers[k - 1]["output"]
        if given.shape != before.shape or not torch.allclose(given, torch.tanh(before), rtol=1e-5, atol=1e-6):
            return {"layer": k, "tanh_missing": torch.equal(given, before)}
    for k, layer in enumerate(layers):
        if not _is_linear(layer["own"], layer["input"], layer["output"]):
            return {"layer": k, "not_linear": True}
    return None


@probe
def watch_fit(module, x, y, seed):
    """Run the learner's fit; record where the parameters start, the first backward and the optimizers."""
    torch.manual_seed(seed)
    params, start, backwards, stepped, layers, called, optimizers = {}, {}, [], set(), [], set(), {}

    def remember(mod, args):  # every module's parameters, as they are at its first forward (hooks run at every one)
        for p in mod.parameters():
            if id(p) not in start:
                params[id(p)] = p
                start[id(p)] = p.detach().clone()

    def flow(mod, args, output):  # what each layer with parameters gets and gives, at its first call
        if id(mod) in called or next(mod.parameters(recurse=False), None) is None:
            return
        called.add(id(mod))
        if args and isinstance(args[0], torch.Tensor) and isinstance(output, torch.Tensor):
            own = {name: p.detach().clone() for name, p in mod.named_parameters(recurse=False)}
            layers.append({"input": args[0].detach().clone(), "output": output.detach().clone(), "own": own})

    def step_hook(optimizer, args, kwargs):
        for group in optimizer.param_groups:
            stepped.update(id(p) for p in group["params"])
        if id(optimizer) not in optimizers:  # as it is at its first step
            optimizers[id(optimizer)] = {
                "type": type(optimizer).__name__, "sgd": isinstance(optimizer, torch.optim.SGD),
                "groups": [{k: v for k, v in group.items() if k in ("lr", "momentum", "weight_decay", "nesterov",
                                                                     "maximize") and isinstance(v, (bool, int, float))}
                           for group in optimizer.param_groups]}

    real_backward = torch.autograd.backward

    def backward(tensors, *args, **kwargs):
        t = tensors if isinstance(tensors, torch.Tensor) else next(iter(tensors), None)
        record = {"loss": None, "grad_fn": False, "grads": {}}
        if isinstance(t, torch.Tensor) and t.numel():
            record.update(loss=float(t.detach().reshape(-1)[0]), grad_fn=t.grad_fn is not None)
        backwards.append(record)
        result = real_backward(tensors, *args, **kwargs)
        if len(backwards) == 1:
            record["grads"] = {key: _largest(p.grad) for key, p in params.items()}
        return result

    hooks = [torch.nn.modules.module.register_module_forward_pre_hook(remember),
             torch.nn.modules.module.register_module_forward_hook(flow),
             register_optimizer_step_pre_hook(step_hook)]
    out = {"error": None, "returned": None}
    try:
        with patched(module, torch.autograd, "backward", backward):
            returned, out["error"] = learner_call(module, module.fit, x, y, HIDDEN, LR, EPOCHS)
    finally:
        for h in hooks:
            h.remove()
    if out["error"]:
        return out
    if not (isinstance(returned, (tuple, list)) and len(returned) == 2 and isinstance(returned[0], torch.nn.Module)):
        out["returned"] = type(returned).__name__
        return out
    model, losses = returned
    first = backwards[0] if backwards else None
    out["params"] = [{"name": name, "requires_grad": p.requires_grad, "stepped": id(p) in stepped,
                      "first_grad": first["grads"].get(id(p), None) if first else None,
                      "moved": float((p.detach() - start[id(p)]).abs().max()) if id(p) in start else None}
                     for name, p in model.named_parameters()]
    out["architecture"] = _architecture(layers, x)
    out["layers"] = [layer["own"] for layer in layers]
    out["optimizers"] = list(optimizers.values())
    out["backwards"] = [{k: v for k, v in b.items() if k != "grads"} for b in backwards]
    out["losses"] = [v if is_number(v, (int, float)) else type(v).__name__
                     for v in losses] if isinstance(losses, list) else type(losses).__name__
    return out


# -- judge side -----------------------------------------------------------------------------

def run(submission, rng):
    """One training run per grading, watched; every check reads the same record."""
    def watched():
        x = torch.randn(N, IN, generator=rng)
        w = torch.randn(IN, 1, generator=rng)
        y = torch.sin(x @ w / w.norm() * 2)
        seed = int(torch.randint(0, 2**31, (1,), generator=rng))
        return x, y, submission.probe(watch_fit, x, y, seed, what=CALL)
    x, y, out = submission.once("fit", watched)
    if out["error"]:
        fail_raised(out["error"], CALL)
    if out["returned"] is not None:
        fail("fit should return (model, losses), got a {got}.", "fit 应返回 (model, losses)，实际得到一个 {got}。",
             got=verbatim(f"`{out['returned']}`"), key="wrong-return")
    if not out["backwards"]:
        fail("fit never called loss.backward(): nothing computes the gradients.",
             "fit 从未调用 loss.backward()：没有任何地方计算梯度。", key="backward-missing")
    return x, y, out


def reference_losses(x, y, layers) -> list[float]:
    """The loss before each of the first EARLY steps of full-batch SGD (lr=LR, the mean squared error) on Linear ->
    Tanh -> Linear -> Tanh -> Linear, from the layers' weights and biases as they started (the learner's own), on the
    same data: what a correct fix computes, whatever the draw."""
    params = [p.clone().requires_grad_(True) for layer in layers for p in (layer["weight"], layer["bias"])]

    def loss():
        h = x
        for k in range(0, len(params), 2):
            h = torch.nn.functional.linear(h, params[k], params[k + 1])
            h = torch.tanh(h) if k < len(params) - 2 else h
        return ((h - y) ** 2).mean()

    losses = []
    for _ in range(EARLY):
        value = loss()
        grads = torch.autograd.grad(value, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= LR * g
        losses.append(float(value.detach()))
    return losses


def names(params) -> str:
    return ", ".join(f"`{p['name']}`" for p in params[:6]) + (", ..." if len(params) > 6 else "")


@check("the loss is computed from the model's output, so backward reaches every trainable parameter", points=2.5,
       zh="损失由模型的输出计算得到，backward 能到达每个可训练的参数")
def test_graph(submission, rng):
    out = run(submission, rng)[2]
    first = out["backwards"][0]
    if not first["grad_fn"]:
        fail("the loss you call backward() on has no grad_fn: it was rebuilt from plain numbers (NumPy, .item() or "
             "torch.tensor(...)), which cut the graph, so backward stops at the loss and no parameter of the model "
             "gets a gradient. Compute the loss with torch operations on the model's output, e.g. "
             "((pred - y) ** 2).mean().",
             "你调用 backward() 的损失没有 grad_fn：它是从普通数值（NumPy、.item() 或 torch.tensor(...)）重新构造的，"
             "计算图被切断了，backward 到损失就停下，模型的任何参数都得不到梯度。请直接用 torch 运算在模型输出上计算损失，"
             "例如 ((pred - y) ** 2).mean()。", key="graph-cut")
    missed = [p for p in out["params"] if p["requires_grad"] and not p["first_grad"]]
    if missed:
        fail("after the first loss.backward() these parameters have no gradient (None or zero): {names}. The loss "
             "has a graph, but it does not lead back to them: is the prediction detached (.detach(), .data, "
             "torch.no_grad()) before the loss?",
             "第一次 loss.backward() 之后，这些参数没有梯度（None 或全零）：{names}。损失有计算图，但图没有连回到它们："
             "是不是在计算损失之前把预测值 detach 了（.detach()、.data、torch.no_grad()）？",
             names=verbatim(names(missed)), key="graph-detached")


@check("every parameter of the model is trainable (requires_grad=True)", points=2,
       zh="模型的每个参数都可训练（requires_grad=True）")
def test_trainable(submission, rng):
    frozen = [p for p in run(submission, rng)[2]["params"] if not p["requires_grad"]]
    if frozen:
        fail("these parameters have requires_grad=False, so backward gives them no gradient and they never learn: "
             "{names}. Nothing here is pretrained: every layer must train. Remove the freezing (or call "
             "requires_grad_(True) on them).",
             "这些参数 requires_grad=False，backward 不会给它们梯度，它们永远学不到东西：{names}。"
             "这里没有预训练的层：每一层都必须训练。请去掉冻结的代码（或对它们调用 requires_grad_(True)）。",
             names=verbatim(names(frozen)), key="frozen-layer")


@check("an SGD optimizer with the given lr updates every parameter of the model", points=2,
       zh="一个使用给定 lr 的 SGD 优化器更新模型的每个参数")
def test_optimizer(submission, rng):
    out = run(submission, rng)[2]
    params = out["params"]
    left = [p for p in params if not p["stepped"]]
    if left and len(left) == len(params):
        fail("no optimizer.step() ran over the parameters of the model fit returned: call optimizer.step() after "
             "loss.backward() with an optimizer over model.parameters().",
             "fit 返回的模型的参数从未经过 optimizer.step()：请在 loss.backward() 之后，用管理 model.parameters() 的优化器"
             "调用 optimizer.step()。", key="step-missing")
    if left:
        fail("these parameters are not in any optimizer that steps: {names}. An optimizer takes the list of "
             "parameters when it is created: model.parameters() read before a layer was added does not hold that "
             "layer. Create the optimizer after the model is complete.",
             "这些参数不在任何执行 step 的优化器里：{names}。优化器在创建时就取定了参数列表：在添加某层之前读取的 "
             "model.parameters() 不包含这一层。请在模型完整之后再创建优化器。",
             names=verbatim(names(left)), key="optimizer-misses-params")
    plain = {"lr": LR, "momentum": 0, "weight_decay": 0}
    for opt in out["optimizers"]:
        changed = [f"{k}={g.get(k)}" for g in opt["groups"] for k, v in plain.items() if not matches(g.get(k), v)]
        changed += [f"{k}=True" for g in opt["groups"] for k in ("nesterov", "maximize") if g.get(k)]
        if not opt["sgd"] or changed:
            got = Text("`{type}`", "`{type}`", type=verbatim(opt["type"])) if not opt["sgd"] else \
                Text("SGD with {changed}", "带 {changed} 的 SGD", changed=verbatim(", ".join(dict.fromkeys(changed))))
            fail("fit trains with {got}; the file trains with plain SGD at the lr it is given (lr={lr}), and the "
                 "exercise is to make that training work, not to change it. Keep torch.optim.SGD(..., lr=lr).",
                 "fit 用 {got} 训练；文件中用的是给定 lr（lr={lr}）的普通 SGD，这道题要你让这个训练能工作，而不是换掉它。"
                 "请保留 torch.optim.SGD(..., lr=lr)。", got=got, lr=LR, key="optimizer-changed")


@check("the model keeps its architecture: Linear -> Tanh -> Linear -> Tanh -> head", points=1,
       zh="模型保持原有结构：Linear -> Tanh -> Linear -> Tanh -> head")
def test_architecture(submission, rng):
    arch = run(submission, rng)[2]["architecture"]
    if arch is None:
        return
    keep = Text("Keep the architecture of the file: make_body is Linear -> Tanh -> Linear -> Tanh, then the head.",
                "请保持文件中的结构：make_body 是 Linear -> Tanh -> Linear -> Tanh，之后是 head。")
    if "layers" in arch:
        fail("the model ran {n} layers with parameters, expected 3 (two Linear layers in the body, then the head). "
             "{keep}", "模型运行了 {n} 个带参数的层，应为 3 个（body 中的两个 Linear，然后是 head）。{keep}",
             n=arch["layers"], keep=keep, key="architecture-changed")
    nth = [Text("first", "一"), Text("second", "二"), Text("third", "三")]
    if arch.get("not_linear"):
        fail("the {nth} layer with parameters is not a Linear layer: its own parameters are not a weight [out, in] "
             "and a bias [out] giving input @ weight.T + bias. {keep}",
             "第{nth}个带参数的层不是 Linear 层：它自己的参数不是给出 input @ weight.T + bias 的 weight [out, in] 和 "
             "bias [out]。{keep}", nth=nth[arch["layer"]], keep=keep, key="architecture-changed")
    if arch.get("tanh_first"):
        fail("the first Linear layer gets tanh(x), not x itself: a Tanh runs before it. {keep}",
             "第一个 Linear 层得到的是 tanh(x)，而不是 x 本身：它之前运行了一个 Tanh。{keep}", keep=keep,
             key="architecture-changed")
    if arch.get("tanh_missing"):
        fail("the {nth} layer with parameters gets the output of the layer before it as it is: the Tanh between "
             "them is missing. {keep}", "第{nth}个带参数的层直接得到了前一层的原始输出：它们之间缺少 Tanh。{keep}", nth=nth[arch["layer"]],
             keep=keep, key="architecture-changed")
    fail("the {nth} layer with parameters does not get what this architecture gives it ({what}). {keep}",
         "第{nth}个带参数的层得到的输入与这个结构给它的不同（{what}）。{keep}", nth=nth[arch["layer"]],
         what=Text("x itself", "x 本身") if arch["layer"] == 0 else Text("the Tanh of the previous layer's output",
                                                                         "前一层输出的 Tanh"),
         keep=keep, key="architecture-changed")


@check("every parameter moves and the loss follows the file's SGD", points=1.5,
       zh="每个参数都在更新，损失按文件中的 SGD 变化", depends=("graph", "trainable", "optimizer", "architecture"))
def test_learns(submission, rng):
    x, y, out = run(submission, rng)
    still = [p for p in out["params"] if not p["moved"]]
    if still:
        fail("after training these parameters are exactly where they started: {names}.",
             "训练之后这些参数与初始值完全相同：{names}。", names=verbatim(names(still)), key="params-did-not-move")
    reference = reference_losses(x, y, out["layers"])
    keep = Text("Keep the loss (the mean squared error), SGD and lr as they are in the file, with one step per epoch "
                "on the whole batch.", "请保持文件中的损失（均方误差）、SGD 和 lr 不变，每个 epoch 在整个 batch 上走一步。")
    got = [b["loss"] for b in out["backwards"]]
    for k, (g, w) in enumerate(zip(got[:EARLY], reference), start=1):  # before float rounding can add up
        if not matches(g, w, rtol=1e-3, equal_nan=True):
            fail("the loss of epoch {k} is {g:.6g}, where SGD with lr={lr} from the same starting weights on the same "
                 "data gives {w:.6g}. {keep}",
                 "第 {k} 个 epoch 的损失为 {g:.6g}，而从同样的初始权重、在同样的数据上用 lr={lr} 的 SGD 应为 {w:.6g}。{keep}",
                 k=k, g=g, w=w, lr=LR, keep=keep, key="loss-not-decreasing")



@check("fit returns one float loss per epoch, those it backpropagated", points=1,
       zh="fit 每个 epoch 返回一个 float 损失，即它反向传播的那个损失")
def test_returns(submission, rng):
    out = run(submission, rng)[2]
    losses, seen = out["losses"], [b["loss"] for b in out["backwards"]]
    if not isinstance(losses, list) or len(losses) != EPOCHS:
        got = (Text("{n} values", "{n} 个值", n=len(losses)) if isinstance(losses, list)
               else Text("a {t}", "一个 {t}", t=verbatim(f"`{losses}`")))
        fail("fit should return a list of {epochs} losses, one per epoch, got {got}.",
             "fit 应返回 {epochs} 个损失组成的列表，每个 epoch 一个，实际得到{got}。", epochs=EPOCHS, got=got,
             key="wrong-losses")
    bad = [v for v in losses if not is_number(v, (int, float))]
    if bad:
        fail("fit should return Python floats (loss.item()), found {got}.",
             "fit 应返回 Python float（loss.item()），却发现了 {got}。", got=verbatim(f"`{bad[0]}`"), key="not-a-float")
    for v, g in zip(losses, seen):
        if g is not None and not matches(v, g, equal_nan=True):
            fail("fit returned losses that differ from those it backpropagated ({v:.4g} vs {g:.4g}): append "
                 "loss.item() of each epoch's loss.",
                 "fit 返回的损失与它反向传播的损失不同（{v:.4g} 与 {g:.4g}）：请 append 每个 epoch 的 loss.item()。",
                 v=v, g=g, key="wrong-losses-returned")
