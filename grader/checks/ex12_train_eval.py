"""Hidden checks of ex12: Dropout and BatchNorm in train() and eval(), restoring the mode,
torch.no_grad() against torch.inference_mode().

Probes put the learner's MyDropout inside a parent model and switch the parent, and run evaluate and
extract_features on a small model with Dropout and BatchNorm, recording the mode of every sub-module
during the forward pass (forward pre-hooks) and after the call. That is how `model.training = False`
(which changes one flag, not the sub-modules') is told apart from `model.eval()`.
"""

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import (Text, check, error_text, expect_close, expect_tensor, fail, learner_call, matches, probe,
                             tensor_info, verbatim)
from grader.gradients import autograd_gradient, expect_gradient

DEVICE_ERRORS = ("is not on the expected device", "Expected all tensors to be on the same device",
                 "found at least two devices")


def randint(rng: torch.Generator, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def draw_p(rng: torch.Generator) -> float:
    """A drop probability well away from 0.5, so 'drop with p' and 'keep with p' differ."""
    return round(0.15 + 0.2 * float(torch.rand(1, generator=rng)), 3)


def code(text) -> str:
    return f"`{text}`"


def mode_name(training: bool) -> Text:
    return Text("train", "train") if training else Text("eval", "eval")


# -- MyDropout --------------------------------------------------------------------------------------

@probe
def dropout_run(module, p, x, training, calls):
    """Put MyDropout(p) inside a parent model, switch the parent with .train()/.eval(), call it."""
    layer = module.MyDropout(p)
    parent = nn.Sequential(layer)
    parent.train(training)
    x_in = x.clone()
    outs = [parent(x_in) for _ in range(calls)]
    return {"outs": [o.detach() if isinstance(o, torch.Tensor) else o for o in outs], "x_after": x_in}


@probe
def dropout_device(module, p, shape):
    """MyDropout(p) in train mode on a tensor of the meta device, a stand-in for a GPU: a mask made on the
    CPU meets x there. Ops that meta tensors do not support tell nothing ("unsupported")."""
    parent = nn.Sequential(module.MyDropout(p)).train()
    y, error = learner_call(module, parent, torch.empty(shape, device="meta"))
    if error:  # only device mismatches are the learner's
        return {"error": error} if any(e in error["message"] for e in DEVICE_ERRORS) else {"unsupported": True}
    return {"device": str(y.device) if isinstance(y, torch.Tensor) else None}


def fraction_zero(y: torch.Tensor) -> float:
    return float((y == 0).double().mean())


@check("MyDropout in eval mode returns x unchanged", points=1, zh="MyDropout 在 eval 模式下原样返回 x")
def test_dropout_eval(submission, rng):
    p = draw_p(rng)
    x = torch.randn(64, 32, generator=rng)
    what = Text("`MyDropout({p})(x)` in eval mode", "eval 模式下的 `MyDropout({p})(x)`", p=p)
    got = submission.probe(dropout_run, p, x, False, 1, what=what)
    y = expect_tensor(got["outs"][0], what, shape=list(x.shape))
    if matches(y, x, rtol=1e-5):
        return
    if matches(y, x * (1 - p)):
        fail("In eval mode {layer} returned x * (1 - p) instead of x: PyTorch uses inverted dropout, which scales "
             "the kept values by 1/(1-p) during training, so that in eval mode the layer returns x unchanged.",
             "{layer} 在 eval 模式下返回了 x * (1 - p)，而不是 x：PyTorch 使用 inverted dropout（反向缩放的 dropout），"
             "在训练时把保留的值乘以 1/(1-p)，因此在 eval 模式下该层原样返回 x。",
             layer=code(f"MyDropout({p})"), key="dropout-scales-at-eval")
    if fraction_zero(y) > 0.05:
        fail("{layer} still zeroes values in eval mode ({share:.0%} of them): `model.eval()` sets "
             "`self.training = False` on every sub-module, and forward must check `self.training`.",
             "{layer} 在 eval 模式下仍然把值置零（{share:.0%}）：`model.eval()` 会把每个子模块的 "
             "`self.training` 设为 False，forward 里必须检查 `self.training`。",
             layer=code(f"MyDropout({p})"), share=fraction_zero(y), key="dropout-ignores-training")
    expect_close(y, x, what)


@check("MyDropout in train mode drops a fraction p and scales the rest by 1/(1-p)", points=1,
       zh="MyDropout 在 train 模式下丢弃比例 p，其余乘以 1/(1-p)")
def test_dropout_train(submission, rng):
    p = draw_p(rng)
    x = torch.rand(250, 80, generator=rng) + 0.5  # no zeros of its own
    layer = code(f"MyDropout({p})")
    what = Text("`MyDropout({p})(x)` in train mode", "train 模式下的 `MyDropout({p})(x)`", p=p)
    got = submission.probe(dropout_run, p, x, True, 1, what=what)
    y = expect_tensor(got["outs"][0], what, shape=list(x.shape))
    dropped = fraction_zero(y)
    if dropped == 0:
        same = Text(" it returned x unchanged:", "，原样返回了 x") if matches(y, x, rtol=1e-5, atol=1e-8) else ""
        fail("{layer} dropped nothing in train mode;{same} when `self.training` is True (after `model.train()`), "
             "each value must be zeroed with probability p.",
             "{layer} 在 train 模式下什么都没丢弃{same}：当 `self.training` 为 True（调用 `model.train()` 之后）时，"
             "每个值都要以概率 p 被置零。", layer=layer, same=same, key="dropout-drops-nothing")
    zeros = y == 0
    for dim, axis in ((0, Text("every row (sample)", "每一行（每个样本）")), (1, Text("every column (feature)", "每一列（每个特征）"))):
        if torch.equal(zeros, zeros.select(dim, 0).unsqueeze(dim).expand_as(zeros)):
            fail("{layer} zeroed the same elements in {axis}: the mask was drawn for part of the shape and broadcast. "
                 "Draw one random number per element of x (`torch.rand_like(x)`), so every element is dropped "
                 "independently.",
                 "{layer} 在{axis}中置零的位置完全相同：mask 只按部分形状生成，再广播开了。请为 x 的每个元素各生成一个随机数"
                 "（`torch.rand_like(x)`），让每个元素独立地被丢弃。", layer=layer, axis=axis, key="dropout-mask-shared")
    tol = 0.02
    if abs(dropped - (1 - p)) < tol:
        fail("{layer} zeroed {share:.1%} of the values, about 1 - p: p is the probability to drop (zero) an element, "
             "not to keep it.", "{layer} 把 {share:.1%} 的值置零了，约等于 1 - p：p 是丢弃（置零）一个元素的概率，而不是保留它的概率。",
             layer=layer, share=dropped, key="dropout-keep-prob-p")
    if abs(dropped - p) > tol:
        fail("{layer} zeroed {share:.1%} of the values in train mode, expected about {p:.1%} (each element "
             "independently with probability p).",
             "{layer} 在 train 模式下把 {share:.1%} 的值置零了，应约为 {p:.1%}（每个元素独立地以概率 p 置零）。",
             layer=layer, share=dropped, p=p, key="dropout-wrong-fraction")
    kept = ~zeros
    if matches(y[kept], x[kept], rtol=1e-5, atol=1e-8):
        fail("The values {layer} kept are unchanged: scale them by 1/(1-p) so that each output keeps the expected "
             "value of x (inverted dropout); then eval mode can return x as it is.",
             "{layer} 保留下来的值没有缩放：要乘以 1/(1-p)，使每个输出的期望仍等于 x（inverted dropout）；"
             "这样 eval 模式才能原样返回 x。", layer=layer, key="dropout-no-rescale")
    expect_close(y[kept], x[kept] / (1 - p), Text("the values {layer} kept, which should be x / (1 - p),",
                                                  "{layer} 保留下来的值（应为 x / (1 - p)）", layer=layer))


@check("MyDropout draws a new mask on every call, where x lives, and leaves x unchanged", points=1,
       zh="MyDropout 每次调用都在 x 所在的设备上生成新的 mask，并且不修改 x")
def test_dropout_fresh_mask(submission, rng):
    p = draw_p(rng)
    x = torch.rand(40, 50, generator=rng) + 0.5
    layer = code(f"MyDropout({p})")
    got = submission.probe(dropout_run, p, x, True, 2,
                           what=Text("`MyDropout({p})(x)` in train mode", "train 模式下的 `MyDropout({p})(x)`", p=p))
    if not torch.equal(got["x_after"], x):
        fail("{layer} modified its input in place (x itself now has {share:.0%} zeros): the caller's tensor must "
             "not change. Compute a new tensor instead.",
             "{layer} 原地修改了输入（x 本身现在有 {share:.0%} 的 0）：调用者的 tensor 不应被改变。请计算一个新的 tensor。",
             layer=layer, share=fraction_zero(got["x_after"]), key="dropout-in-place")
    y1, y2 = (expect_tensor(y, code(f"MyDropout({p})(x)"), shape=list(x.shape)) for y in got["outs"])
    if torch.equal(y1 == 0, y2 == 0):
        fail("{layer} dropped the same elements on two calls: draw a new random mask in every forward.",
             "{layer} 两次调用丢弃的元素完全相同：每次 forward 都要生成新的随机 mask。", layer=layer,
             key="dropout-same-mask")
    on_gpu = submission.probe(dropout_device, p, [8, 5], what=Text(
        "`MyDropout({p})(x)` with x on another device than the CPU", "x 不在 CPU 上时的 `MyDropout({p})(x)`", p=p))
    if "error" in on_gpu or on_gpu.get("device") not in (None, "meta"):
        seen = Text("it raised {error}", "它抛出了 {error}", error=error_text(on_gpu["error"])) \
            if "error" in on_gpu else Text("it returned a tensor on {device}", "它返回了位于 {device} 的 tensor",
                                           device=on_gpu["device"])
        fail("With x on a GPU (another device than the CPU), {layer} must work there too, but {seen}: the mask is "
             "made on the CPU. Make it where x is: `torch.rand_like(x)`, or `device=x.device`.",
             "当 x 在 GPU（CPU 以外的设备）上时，{layer} 也要能在那里运行，但{seen}：mask 是在 CPU 上生成的。"
             "请在 x 所在的设备上生成它：`torch.rand_like(x)`，或者 `device=x.device`。",
             layer=layer, seen=seen, key="dropout-mask-on-cpu")


# -- evaluate and extract_features --------------------------------------------------------------------

def build_net(sizes: list[int]) -> nn.Sequential:
    """The model the checks evaluate: Dropout and BatchNorm, the two layers that care about the mode."""
    n_in, hidden, n_out = sizes
    return nn.Sequential(nn.Linear(n_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(hidden, n_out))


def draw_net(rng: torch.Generator) -> tuple[list[int], dict, torch.Tensor]:
    """Sizes, a full state (weights and BatchNorm running statistics) and an input batch."""
    sizes = [randint(rng, 3, 6), randint(rng, 6, 10), randint(rng, 2, 4)]
    state = {}
    for key, value in build_net(sizes).state_dict().items():
        if key.endswith("num_batches_tracked"):
            state[key] = torch.tensor(randint(rng, 3, 50))
        elif key.endswith("running_var"):
            state[key] = torch.rand(value.shape, generator=rng) + 0.5
        elif key.endswith("running_mean"):
            state[key] = 0.5 * torch.randn(value.shape, generator=rng)
        elif key == "1.weight":
            state[key] = torch.rand(value.shape, generator=rng) + 0.5
        else:
            state[key] = torch.randn(value.shape, generator=rng) / 2
    x = torch.randn(randint(rng, 8, 12), sizes[0], generator=rng)
    return sizes, state, x


def eval_output(sizes: list[int], state: dict, x: torch.Tensor) -> torch.Tensor:
    """What validation should see, computed here with torch: the model in eval mode, no graph."""
    net = build_net(sizes)
    net.load_state_dict(state)
    net.eval()
    with torch.no_grad():
        return net(x)


def layer_label(key: str, m: nn.Module) -> str:
    """'model' for the model itself, 'model[3] (Dropout)' for a layer."""
    return "model" if not key else "model" + "".join(f"[{k}]" for k in key.split(".")) + f" ({type(m).__name__})"


def reads_mode(label: str) -> bool:
    """Dropout and BatchNorm: the layers whose forward depends on their mode."""
    return "Dropout" in label or "BatchNorm" in label


def mode_layers(modes: dict, training: bool) -> str:
    """The layers (Dropout and BatchNorm first: they read the mode) whose mode is `training`, as code."""
    layers = [k for k, mode in modes.items() if k != "model" and mode == training]
    return ", ".join(code(k) for k in [k for k in layers if reads_mode(k)] or layers)


@probe
def run_on_net(module, name, sizes, state, x, training):
    """Call the learner's evaluate/extract_features twice on a model in train or eval mode; report the
    outputs, each module's mode during the first forward pass and after the call, and the state after."""
    net = build_net(sizes)
    net.load_state_dict(state)
    net.train(training)
    during, recording = {}, []

    def note_mode(label):
        def hook(mod, inputs):
            during.setdefault(label, mod.training)  # returning None keeps the inputs as they are
            if not recording:  # autograd's mode at the first forward: whether a graph was being recorded
                recording.append(torch.is_grad_enabled() and not torch.is_inference_mode_enabled())
        return hook

    labels = {m: layer_label(key, m) for key, m in net.named_modules()}
    for m, label in labels.items():
        m.register_forward_pre_hook(note_mode(label))
    fn = getattr(module, name)
    first = fn(net, x)
    after = {label: m.training for m, label in labels.items()}
    second = fn(net, x)
    return {"first": first, "second": second.detach() if isinstance(second, torch.Tensor) else second,
            "during": during, "after": after, "recorded": bool(recording and recording[0]),
            "state": {k: v.detach().clone() for k, v in net.state_dict().items()}}


def _names(keys) -> str:
    return ", ".join(code(k) for k in sorted(keys))


def in_eval_mode(got: dict) -> bool:
    """Every layer that reads its mode (Dropout, BatchNorm) was in eval mode during the forward pass."""
    readers = [mode for label, mode in got["during"].items() if reads_mode(label)]
    return bool(readers) and not any(readers)


def expect_eval_output(got: dict, sizes, state, x, fn: str):
    """Deterministic, and equal to the eval-mode output."""
    what = code(f"{fn}({'backbone' if fn == 'extract_features' else 'model'}, x)")
    first = expect_tensor(got["first"], what, shape=[x.shape[0], sizes[-1]])
    second = expect_tensor(got["second"], what, shape=[x.shape[0], sizes[-1]])
    during = got["during"]
    flag_only = during.get("model") is False and any(mode for label, mode in during.items() if reads_mode(label))
    if flag_only:
        fail("During {what} the model said `training=False` but its layers {layers} were still training: "
             "`model.training = False` only changes the flag of the model itself. `model.eval()` (or "
             "`model.train(False)`) sets it on every sub-module, and Dropout and BatchNorm read their own.",
             "{what} 运行时模型本身 `training=False`，但它的层 {layers} 仍在训练模式：`model.training = False` "
             "只改了模型自己的标志。`model.eval()`（或 `model.train(False)`）会设置每个子模块，而 Dropout 和 BatchNorm "
             "读的是它们自己的标志。", what=what, layers=mode_layers(during, True), key="training-flag-assigned")
    if not matches(first, second, rtol=1e-5):
        fail("{what} gave two different results for the same input on two calls: Dropout is still active "
             "(train mode). Call `model.eval()` before the forward pass.",
             "同一输入调用两次 {what} 得到了不同的结果：Dropout 仍然生效（train 模式）。请在前向传播之前调用 `model.eval()`。",
             what=what, key="eval-missing")
    if not matches(first, eval_output(sizes, state, x), rtol=1e-5, atol=1e-5) and not in_eval_mode(got):
        fail("{what} ran with {layers} in train mode: BatchNorm normalised with the batch's own statistics instead "
             "of its running averages. Call `model.eval()`, which switches every layer.",
             "{what} 运行时 {layers} 处于 train 模式：BatchNorm 用的是当前 batch 的统计量，而不是 running 统计量。"
             "请调用 `model.eval()`，它会切换每一层。", what=what, layers=mode_layers(during, True),
             key="eval-missing")
    expect_close(first, eval_output(sizes, state, x), what, atol=1e-5)


def expect_stats_unchanged(got: dict, state: dict, fn: str):
    changed = [k for k, v in state.items() if not torch.equal(got["state"][k], v)]
    if not changed:
        return
    stats = [k.split(".")[-1] for k in changed if "running" in k or "num_batches" in k]
    if stats:
        fail("{fn} changed BatchNorm's running statistics ({stats}; num_batches_tracked went from {before} to "
             "{after}): in train mode every forward pass mixes the batch into them. Call `model.eval()` first.",
             "{fn} 改变了 BatchNorm 的 running 统计量（{stats}；num_batches_tracked 从 {before} 变成了 {after}）："
             "在 train 模式下，每次前向传播都会把当前 batch 混进去。请先调用 `model.eval()`。",
             fn=code(fn), stats=_names(stats), before=int(state["1.num_batches_tracked"]),
             after=int(got["state"]["1.num_batches_tracked"]), key="running-stats-changed")
    fail("{fn} changed the model's parameters ({names}): evaluation must only read them.",
         "{fn} 改变了模型的参数（{names}）：评估只能读取参数。", fn=code(fn), names=_names(changed),
         key="parameters-changed")


NO_GRAPH = {
    "evaluate": (Text("the forward pass recorded an autograd graph that nobody will use, which costs memory and time",
                      "前向传播记录了一张没人会用的计算图，浪费内存和时间"),
                 Text("`torch.no_grad()` (or `torch.inference_mode()`)", "`torch.no_grad()`（或 `torch.inference_mode()`）")),
    "extract_features": (Text("the features carry the frozen backbone's graph, so a head's backward would reach into "
                              "the backbone and fill its .grad", "特征带着冻结的 backbone 的计算图，head 的 backward 会一直"
                              "传进 backbone，给它填上 .grad"), Text("`torch.no_grad()`", "`torch.no_grad()`")),
}


def expect_no_graph(got: dict, fn: str):
    info = tensor_info(got["first"])
    if info.get("requires_grad") or info.get("grad_fn"):
        why, how = NO_GRAPH[fn]
        fail("The output of {fn} requires grad (grad_fn={grad_fn}): {why}. Run it under {how}.",
             "{fn} 的输出需要梯度（grad_fn={grad_fn}）：{why}。请在 {how} 下运行。",
             fn=code(fn), grad_fn=code(info.get("grad_fn")), why=why, how=how, key="graph-built")
    if got.get("recorded"):
        why, how = NO_GRAPH[fn]
        fail("The forward pass of {fn} ran with autograd recording, and only its output was detached afterwards: the "
             "graph was still built during the forward ({why}). Run it under {how} instead of detaching.",
             "{fn} 的前向传播是在 autograd 记录计算图的状态下运行的，之后才把输出 detach：前向传播时计算图还是建了"
             "（{why}）。请在 {how} 下运行，而不是事后 detach。", fn=code(fn), why=why, how=how, key="graph-built")


def expect_mode_restored(submission, fn: str, sizes, state, x):
    for training in (True, False):
        got = submission.probe(run_on_net, fn, sizes, state, x, training,
                               what=Text("{fn} on a model in {mode} mode", "{mode} 模式的模型上的 {fn}",
                                         fn=code(fn), mode=mode_name(training)))
        if not in_eval_mode(got):
            fail("{fn} did not run the model in eval mode, so there is no mode to restore yet: switch to eval for "
                 "the forward pass first (see above).",
                 "{fn} 没有在 eval 模式下运行模型，所以还谈不上恢复模式：请先在前向传播时切换到 eval 模式（见上面的检查）。",
                 fn=code(fn), key="eval-missing")
        wrong = [k for k, mode in got["after"].items() if mode != training]
        if not wrong:
            continue
        if training and got["after"]["model"] is True:
            fail("After {fn} the model says `training=True` again, but its layers {layers} stay in eval mode: "
                 "assigning `model.training` changes the model's own flag only. Restore with "
                 "`model.train(was_training)`, which sets every sub-module.",
                 "{fn} 之后模型本身又是 `training=True`，但它的层 {layers} 仍停留在 eval 模式：给 `model.training` 赋值"
                 "只改模型自己的标志。请用 `model.train(was_training)` 恢复，它会设置每个子模块。",
                 fn=code(fn), layers=mode_layers(got["after"], False), key="training-flag-assigned")
        if training:
            fail("After {fn} the model is left in eval mode, but it was in train mode before: the training that "
                 "follows would run without Dropout and with frozen BatchNorm statistics. Restore the mode it had "
                 "(remember `model.training` before switching).",
                 "{fn} 之后模型停留在 eval 模式，而调用前它在 train 模式：接下来的训练将没有 Dropout，"
                 "BatchNorm 统计量也被冻结。请恢复它原来的模式（切换前先记下 `model.training`）。",
                 fn=code(fn), key="mode-not-restored")
        fail("The model was in eval mode before {fn} but is in train mode after it: restore the previous mode "
             "rather than always calling `model.train()`.",
             "调用 {fn} 前模型处于 eval 模式，调用后却变成了 train 模式：请恢复之前的模式，而不是总是调用 `model.train()`。",
             fn=code(fn), key="mode-always-train")


def run_evaluate(submission, rng):
    sizes, state, x = draw_net(rng)
    got = submission.probe(run_on_net, "evaluate", sizes, state, x, True, what=code("evaluate(model, x)"))
    return sizes, state, x, got


@check("evaluate returns the eval-mode output: Dropout off, BatchNorm on running statistics", points=2,
       zh="evaluate 返回 eval 模式的输出：关闭 Dropout，BatchNorm 使用 running 统计量")
def test_evaluate_output(submission, rng):
    sizes, state, x, got = run_evaluate(submission, rng)
    expect_eval_output(got, sizes, state, x, "evaluate")


@check("evaluate leaves BatchNorm's running statistics unchanged", points=1,
       zh="evaluate 不改变 BatchNorm 的 running 统计量")
def test_evaluate_stats(submission, rng):
    sizes, state, _, got = run_evaluate(submission, rng)
    expect_stats_unchanged(got, state, "evaluate")


@check("evaluate builds no autograd graph (with the eval-mode output)", points=1,
       zh="evaluate 不构建计算图（且输出为 eval 模式的输出）", depends="evaluate_output")
def test_evaluate_no_graph(submission, rng):
    sizes, state, x, got = run_evaluate(submission, rng)
    expect_tensor(got["first"], code("evaluate(model, x)"))
    expect_no_graph(got, "evaluate")
    if not in_eval_mode(got):
        fail("{fn} builds no graph, but the model did not run in eval mode: this point counts together with the "
             "eval-mode output (see above).",
             "{fn} 没有构建计算图，但模型没有在 eval 模式下运行：这一分要和 eval 模式的输出一起才算（见上面的检查）。",
             fn=code("evaluate"), key="eval-missing")


@check("evaluate switches to eval mode and leaves the model in the mode it was in (train or eval)", points=1,
       zh="evaluate 切换到 eval 模式，之后让模型回到调用前的模式（train 或 eval）", depends="evaluate_output")
def test_evaluate_restores_mode(submission, rng):
    sizes, state, x = draw_net(rng)
    expect_mode_restored(submission, "evaluate", sizes, state, x)


@check("extract_features: eval-mode features, no graph, mode restored", points=1,
       zh="extract_features：eval 模式的特征、不建计算图、恢复原模式")
def test_features_eval(submission, rng):
    sizes, state, x = draw_net(rng)
    got = submission.probe(run_on_net, "extract_features", sizes, state, x, True,
                           what=code("extract_features(backbone, x)"))
    expect_eval_output(got, sizes, state, x, "extract_features")
    expect_stats_unchanged(got, state, "extract_features")
    expect_no_graph(got, "extract_features")
    expect_mode_restored(submission, "extract_features", sizes, state, x)


@probe
def train_head(module, sizes, state, x, head_weight, head_bias, target):
    """Train a linear head on extract_features' output: one cross-entropy backward."""
    backbone = build_net(sizes)
    backbone.load_state_dict(state)
    backbone.train()
    features = module.extract_features(backbone, x)
    head = nn.Linear(head_weight.shape[1], head_weight.shape[0])
    with torch.no_grad():
        head.weight.copy_(head_weight)
        head.bias.copy_(head_bias)
    if not isinstance(features, torch.Tensor) or features.shape != (x.shape[0], head_weight.shape[1]):
        return {"features": features}
    facts = {"inference": features.is_inference(), "error": None,
             "features": features.detach().clone() if not features.is_inference() else features.clone()}
    try:
        F.cross_entropy(head(features), target).backward()
    except RuntimeError as exc:
        facts["error"] = str(exc)[:300]
    facts["head_grad"] = head.weight.grad
    return facts


@check("A trainable head learns from extract_features' output (ordinary tensors)", points=1,
       zh="可训练的 head 能用 extract_features 的输出学习（普通 tensor）")
def test_features_train_head(submission, rng):
    sizes, state, x = draw_net(rng)
    n_classes = randint(rng, 2, 4)
    head_weight = torch.randn(n_classes, sizes[-1], generator=rng)
    head_bias = torch.randn(n_classes, generator=rng)
    target = torch.randint(0, n_classes, (x.shape[0],), generator=rng)
    call = code("extract_features(backbone, x)")
    got = submission.probe(train_head, sizes, state, x, head_weight, head_bias, target,
                           what=Text("training a head on {call}", "在 {call} 上训练 head", call=call))
    features = expect_tensor(got["features"], call, shape=[x.shape[0], sizes[-1]])
    if got["inference"]:
        detail = Text(" ({error})", "（{error}）", error=verbatim(got["error"].split(".")[0])) if got["error"] else ""
        fail("extract_features returned inference tensors, made under `torch.inference_mode()`: a layer that learns "
             "from them cannot save them for backward{detail}. Use `torch.no_grad()` here: its outputs are ordinary "
             "tensors that just carry no graph; keep inference_mode for pure prediction.",
             "extract_features 返回的是在 `torch.inference_mode()` 下创建的 inference tensor：要学习的层无法为 backward "
             "保存它们{detail}。这里请用 `torch.no_grad()`：它的输出是普通 tensor，只是不带计算图；inference_mode 留给纯推理。",
             detail=detail, key="inference-mode-features")
    if got["error"]:
        fail("Training a head on the features failed: {error}", "用这些特征训练 head 失败：{error}",
             error=verbatim(got["error"]), key="head-training-failed")
    # the head's gradient on the learner's own features: whether they are the right ones is the check above
    expected = autograd_gradient(lambda w: F.cross_entropy(features.double() @ w.T + head_bias.double(), target),
                                 [head_weight])[0]
    expect_gradient(got["head_grad"], expected, "head.weight")
