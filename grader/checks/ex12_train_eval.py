"""Hidden checks of ex12: Dropout and BatchNorm in train() and eval(), restoring the mode,
torch.no_grad() against torch.inference_mode()."""

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import check, expect_close, expect_tensor, fail, probe, tensor_info
from grader.gradients import autograd_gradient, expect_gradient


def randint(rng: torch.Generator, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def draw_p(rng: torch.Generator) -> float:
    """A drop probability well away from 0.5, so 'drop with p' and 'keep with p' differ."""
    return round(0.15 + 0.2 * float(torch.rand(1, generator=rng)), 3)


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


def fraction_zero(y: torch.Tensor) -> float:
    return float((y == 0).double().mean())


@check("MyDropout in eval mode returns x unchanged", points=1, zh="MyDropout 在 eval 模式下原样返回 x")
def test_dropout_eval(submission, rng):
    p = draw_p(rng)
    x = torch.randn(64, 32, generator=rng)
    got = submission.probe(dropout_run, p, x, False, 1, what=f"`MyDropout({p})` in eval mode")
    y = expect_tensor(got["outs"][0], f"MyDropout({p})(x) in eval mode", shape=list(x.shape))
    if torch.allclose(y, x, rtol=1e-5, atol=1e-6):
        return
    if torch.allclose(y, x * (1 - p), rtol=1e-4, atol=1e-6):
        fail(f"In eval mode MyDropout({p}) returned x * (1 - p) instead of x: PyTorch uses inverted dropout, which "
             "scales the kept values by 1/(1-p) during training, so that in eval mode the layer returns x unchanged.",
             f"MyDropout({p}) 在 eval 模式下返回了 x * (1 - p)，而不是 x：PyTorch 使用 inverted dropout（反向缩放的 dropout），"
             "在训练时把保留的值乘以 1/(1-p)，因此在 eval 模式下该层原样返回 x。")
    if fraction_zero(y) > 0.05:
        fail(f"MyDropout({p}) still zeroes values in eval mode ({fraction_zero(y):.0%} of them): model.eval() sets "
             "self.training = False on every sub-module, and forward must check self.training.",
             f"MyDropout({p}) 在 eval 模式下仍然把值置零（{fraction_zero(y):.0%}）：model.eval() 会把每个子模块的 "
             "self.training 设为 False，forward 里必须检查 self.training。")
    expect_close(y, x, f"MyDropout({p})(x) in eval mode")


@check("MyDropout in train mode drops a fraction p and scales the rest by 1/(1-p)", points=1,
       zh="MyDropout 在 train 模式下丢弃比例 p，其余乘以 1/(1-p)")
def test_dropout_train(submission, rng):
    p = draw_p(rng)
    x = torch.rand(250, 80, generator=rng) + 0.5  # no zeros of its own
    got = submission.probe(dropout_run, p, x, True, 1, what=f"`MyDropout({p})` in train mode")
    y = expect_tensor(got["outs"][0], f"MyDropout({p})(x) in train mode", shape=list(x.shape))
    dropped = fraction_zero(y)
    if dropped == 0:
        same = " it returned x unchanged:" if torch.allclose(y, x) else ""
        fail(f"MyDropout({p}) dropped nothing in train mode;{same} when self.training is True (after model.train()), "
             "each value must be zeroed with probability p.",
             f"MyDropout({p}) 在 train 模式下什么都没丢弃{'，原样返回了 x' if same else ''}：当 self.training 为 True"
             "（调用 model.train() 之后）时，每个值都要以概率 p 被置零。")
    tol = 0.02
    if abs(dropped - (1 - p)) < tol:
        fail(f"MyDropout({p}) zeroed {dropped:.1%} of the values, about 1 - p: p is the probability to drop (zero) "
             "an element, not to keep it.",
             f"MyDropout({p}) 把 {dropped:.1%} 的值置零了，约等于 1 - p：p 是丢弃（置零）一个元素的概率，而不是保留它的概率。")
    if abs(dropped - p) > tol:
        fail(f"MyDropout({p}) zeroed {dropped:.1%} of the values in train mode, expected about {p:.1%} "
             "(each element independently with probability p).",
             f"MyDropout({p}) 在 train 模式下把 {dropped:.1%} 的值置零了，应约为 {p:.1%}（每个元素独立地以概率 p 置零）。")
    kept = y != 0
    if torch.allclose(y[kept], x[kept], rtol=1e-5):
        fail(f"The values MyDropout({p}) kept are unchanged: scale them by 1/(1-p) so that each output keeps the "
             "expected value of x (inverted dropout); then eval mode can return x as it is.",
             f"MyDropout({p}) 保留下来的值没有缩放：要乘以 1/(1-p)，使每个输出的期望仍等于 x（inverted dropout）；"
             "这样 eval 模式才能原样返回 x。")
    expect_close(y[kept], x[kept] / (1 - p), f"the values MyDropout({p}) kept, which should be x / (1 - p),")


@check("MyDropout draws a new mask on every call and leaves x unchanged", points=1,
       zh="MyDropout 每次调用都生成新的 mask，并且不修改 x")
def test_dropout_fresh_mask(submission, rng):
    p = draw_p(rng)
    x = torch.rand(40, 50, generator=rng) + 0.5
    got = submission.probe(dropout_run, p, x, True, 2, what=f"`MyDropout({p})` in train mode")
    if not torch.equal(got["x_after"], x):
        fail(f"MyDropout({p}) modified its input in place (x itself now has {fraction_zero(got['x_after']):.0%} "
             "zeros): the caller's tensor must not change. Compute a new tensor instead.",
             f"MyDropout({p}) 原地修改了输入（x 本身现在有 {fraction_zero(got['x_after']):.0%} 的 0）："
             "调用者的 tensor 不应被改变。请计算一个新的 tensor。")
    y1, y2 = (expect_tensor(y, f"MyDropout({p})(x)", shape=list(x.shape)) for y in got["outs"])
    if torch.equal(y1 == 0, y2 == 0):
        fail(f"MyDropout({p}) dropped the same elements on two calls: draw a new random mask in every forward.",
             f"MyDropout({p}) 两次调用丢弃的元素完全相同：每次 forward 都要生成新的随机 mask。")


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


@probe
def run_on_net(module, name, sizes, state, x, training):
    """Call the learner's evaluate/extract_features twice on a model in train or eval mode; report the
    outputs, the model's modes and state afterwards."""
    net = build_net(sizes)
    net.load_state_dict(state)
    net.train(training)
    fn = getattr(module, name)
    first = fn(net, x)
    modes = [m.training for m in net.modules()]
    second = fn(net, x)
    return {"first": first, "second": second.detach() if isinstance(second, torch.Tensor) else second,
            "modes": modes, "state": {k: v.detach().clone() for k, v in net.state_dict().items()},
            "inference": first.is_inference() if isinstance(first, torch.Tensor) else False}


def _names(keys) -> str:
    return ", ".join(sorted(keys))


def expect_eval_output(got: dict, sizes, state, x, fn: str):
    """Deterministic, and equal to the eval-mode output."""
    what = f"{fn}(model, x)"
    first = expect_tensor(got["first"], what, shape=[x.shape[0], sizes[-1]])
    second = expect_tensor(got["second"], what, shape=[x.shape[0], sizes[-1]])
    if not torch.allclose(first, second, rtol=1e-5, atol=1e-6):
        fail(f"{what} gave two different results for the same input on two calls: Dropout is still active "
             "(train mode). Call model.eval() before the forward pass.",
             f"同一输入调用两次 {what} 得到了不同的结果：Dropout 仍然生效（train 模式）。请在前向传播之前调用 model.eval()。")
    expect_close(first, eval_output(sizes, state, x), what, atol=1e-5, hints={})


def expect_stats_unchanged(got: dict, state: dict, fn: str):
    changed = [k for k, v in state.items() if not torch.equal(got["state"][k], v)]
    if not changed:
        return
    stats = [k.split(".")[-1] for k in changed if "running" in k or "num_batches" in k]
    if stats:
        before, after = int(state["1.num_batches_tracked"]), int(got["state"]["1.num_batches_tracked"])
        fail(f"{fn} changed BatchNorm's running statistics ({_names(stats)}; num_batches_tracked went from {before} "
             f"to {after}): in train mode every forward pass mixes the batch into them. Call model.eval() first.",
             f"{fn} 改变了 BatchNorm 的 running statistics（{_names(stats)}；num_batches_tracked 从 {before} 变成了 "
             f"{after}）：在 train 模式下，每次前向传播都会把当前 batch 混进去。请先调用 model.eval()。")
    fail(f"{fn} changed the model's parameters ({_names(changed)}): evaluation must only read them.",
         f"{fn} 改变了模型的参数（{_names(changed)}）：评估只能读取参数。")


def expect_no_graph(got: dict, fn: str, inference_ok: bool = True):
    info = tensor_info(got["first"])
    if info.get("requires_grad") or info.get("grad_fn"):
        fail(f"The output of {fn} requires grad (grad_fn={info.get('grad_fn')}): the forward pass recorded an autograd "
             "graph that nobody will use, which costs memory and time. Run it under torch.no_grad()"
             + (" (or torch.inference_mode())." if inference_ok else "."),
             f"{fn} 的输出需要梯度（grad_fn={info.get('grad_fn')}）：前向传播记录了一张没人会用的计算图，浪费内存和时间。"
             "请在 torch.no_grad()" + ("（或 torch.inference_mode()）下运行。" if inference_ok else " 下运行。"))


def expect_mode_restored(submission, fn: str, sizes, state, x):
    for training in (True, False):
        got = submission.probe(run_on_net, fn, sizes, state, x, training,
                               what=f"`{fn}` on a model in {'train' if training else 'eval'} mode")
        wrong = [i for i, mode in enumerate(got["modes"]) if mode != training]
        if not wrong:
            continue
        if training:
            fail(f"After {fn} the model is left in eval mode, but it was in train mode before: the training that "
                 "follows would run without Dropout and with frozen BatchNorm statistics. Restore the mode it had "
                 "(remember model.training before switching).",
                 f"{fn} 之后模型停留在 eval 模式，而调用前它在 train 模式：接下来的训练将没有 Dropout，"
                 "BatchNorm 统计量也被冻结。请恢复它原来的模式（切换前先记下 model.training）。")
        fail(f"The model was in eval mode before {fn} but is in train mode after it: restore the previous mode "
             "rather than always calling model.train().",
             f"调用 {fn} 前模型处于 eval 模式，调用后却变成了 train 模式：请恢复之前的模式，而不是总是调用 model.train()。")


@check("evaluate returns the eval-mode output: Dropout off, BatchNorm on running statistics", points=2,
       zh="evaluate 返回 eval 模式的输出：关闭 Dropout，BatchNorm 使用 running statistics")
def test_evaluate_output(submission, rng):
    sizes, state, x = draw_net(rng)
    got = submission.probe(run_on_net, "evaluate", sizes, state, x, True, what="`evaluate(model, x)`")
    expect_eval_output(got, sizes, state, x, "evaluate")


@check("evaluate leaves BatchNorm's running statistics unchanged", points=1,
       zh="evaluate 不改变 BatchNorm 的 running statistics")
def test_evaluate_stats(submission, rng):
    sizes, state, x = draw_net(rng)
    got = submission.probe(run_on_net, "evaluate", sizes, state, x, True, what="`evaluate(model, x)`")
    expect_stats_unchanged(got, state, "evaluate")


@check("evaluate builds no autograd graph", points=1, zh="evaluate 不构建计算图")
def test_evaluate_no_graph(submission, rng):
    sizes, state, x = draw_net(rng)
    got = submission.probe(run_on_net, "evaluate", sizes, state, x, True, what="`evaluate(model, x)`")
    expect_tensor(got["first"], "evaluate(model, x)")
    expect_no_graph(got, "evaluate")


@check("evaluate leaves the model in the mode it was in (train or eval)", points=1,
       zh="evaluate 之后模型保持调用前的模式（train 或 eval）")
def test_evaluate_restores_mode(submission, rng):
    sizes, state, x = draw_net(rng)
    expect_mode_restored(submission, "evaluate", sizes, state, x)


@check("extract_features: eval-mode features, no graph, mode restored", points=1,
       zh="extract_features：eval 模式的特征、不建计算图、恢复原模式")
def test_features_eval(submission, rng):
    sizes, state, x = draw_net(rng)
    got = submission.probe(run_on_net, "extract_features", sizes, state, x, True,
                           what="`extract_features(backbone, x)`")
    expect_eval_output(got, sizes, state, x, "extract_features")
    expect_stats_unchanged(got, state, "extract_features")
    expect_no_graph(got, "extract_features", inference_ok=False)
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
    facts = {"inference": isinstance(features, torch.Tensor) and features.is_inference(), "error": None}
    try:
        F.cross_entropy(head(features), target).backward()
    except RuntimeError as exc:
        facts["error"] = str(exc)[:300]
    facts["head_grad"] = head.weight.grad
    facts["backbone_grads"] = [name for name, p in backbone.named_parameters() if p.grad is not None]
    return facts


@check("A trainable head learns from extract_features' output; the frozen backbone gets no gradient", points=1,
       zh="可训练的 head 能用 extract_features 的输出学习；冻结的 backbone 得不到梯度")
def test_features_train_head(submission, rng):
    sizes, state, x = draw_net(rng)
    n_classes = randint(rng, 2, 4)
    head_weight = torch.randn(n_classes, sizes[-1], generator=rng)
    head_bias = torch.randn(n_classes, generator=rng)
    target = torch.randint(0, n_classes, (x.shape[0],), generator=rng)
    got = submission.probe(train_head, sizes, state, x, head_weight, head_bias, target,
                           what="training a head on `extract_features(backbone, x)`")
    if got["inference"]:
        detail = f" (\"{got['error'].split('.')[0]}\")" if got["error"] else ""
        fail("extract_features returned inference tensors, made under torch.inference_mode(): a layer that learns "
             f"from them cannot save them for backward{detail}. Use torch.no_grad() here: its outputs are ordinary "
             "tensors that just carry no graph; keep inference_mode for pure prediction.",
             "extract_features 返回的是在 torch.inference_mode() 下创建的 inference tensor：要学习的层无法为 backward "
             f"保存它们{detail}。这里请用 torch.no_grad()：它的输出是普通 tensor，只是不带计算图；inference_mode 留给纯推理。")
    if got["backbone_grads"]:
        fail(f"loss.backward() on the head also filled .grad of the frozen backbone ({_names(got['backbone_grads'])}): "
             "the features still carry the backbone's graph. Compute them under torch.no_grad().",
             f"对 head 的 loss.backward() 也给冻结的 backbone 填上了 .grad（{_names(got['backbone_grads'])}）："
             "特征仍带着 backbone 的计算图。请在 torch.no_grad() 下计算它们。")
    if got["error"]:
        fail(f"Training a head on the features failed: {got['error']}",
             f"用这些特征训练 head 失败：{got['error']}")
    features = eval_output(sizes, state, x).double()
    expected = autograd_gradient(lambda w: F.cross_entropy(features @ w.T + head_bias.double(), target),
                                 [head_weight])[0]
    expect_gradient(got["head_grad"], expected, "head.weight")
