"""Hidden checks of ex09: torch.optim optimizers, zero_grad(set_to_none=True), a per-epoch scheduler.

Probes build a small model in the sandbox from weights the judge drew and observe the learner's code:
the optimizer's class and param_groups, the learning rate a scheduler gives each epoch (and the
scheduler's own settings), and, around `train`, every zero_grad, backward (a hook on the first layer's
weight sees its .grad before accumulation, and the learning rate of the batch), optimizer.step (with
the gradients it finds) and scheduler.step. `train` always runs with torch's own optimizer and
scheduler, so a mistake in make_optimizer or make_scheduler costs only their checks. The judge
compares with torch's own optimizers and schedulers, run here on the same data.
"""


import torch
import torch.nn.functional as F

from grader.checking import Text, check, describe, expect_close, fail, is_number, matches, probe, record_curve, tensor_info

IMPLEMENTATION_ONLY = {"foreach", "fused", "capturable", "differentiable"}  # how, not what, an optimizer computes
GIVEN = ("lr", "momentum", "weight_decay")


# -- shared by probes and judge --------------------------------------------------------------------

def build_model(state):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(state[name])
    return model


def torch_optimizer(model, setup):
    if setup["opt"] == "sgd":
        return torch.optim.SGD(model.parameters(), lr=setup["lr"], momentum=setup["momentum"],
                               weight_decay=setup["weight_decay"])
    return torch.optim.Adam(model.parameters(), lr=setup["lr"], weight_decay=setup["weight_decay"])


def torch_scheduler(optimizer, setup):
    if setup["sched"] == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=setup["step_size"], gamma=setup["gamma"])
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=setup["epochs"])


def _plain(value):
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)[:80]


# -- probes (run in the sandbox) -------------------------------------------------------------------

@probe
def optimizer_info(module, state, kind, lr, momentum, weight_decay):
    model = build_model(state)
    opt = module.make_optimizer(model, kind, lr, momentum=momentum, weight_decay=weight_decay)
    info = {"type": type(opt).__name__, "is_optimizer": isinstance(opt, torch.optim.Optimizer)}
    if not info["is_optimizer"]:
        return info
    names = {id(p): n for n, p in model.named_parameters()}
    info["names"] = list(names.values())
    info["groups"] = [{"params": [names.get(id(p), "(not a parameter of the model)") for p in g["params"]],
                       "hyper": {k: _plain(v) for k, v in g.items() if k != "params"}} for g in opt.param_groups]
    return info


@probe
def scheduler_lrs(module, kind, epochs, step_size, gamma, lr):
    param = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([param], lr=lr)
    sched = module.make_scheduler(opt, kind, epochs, step_size=step_size, gamma=gamma)
    facts = {"type": type(sched).__name__,
             "settings": {k: _plain(getattr(sched, k)) for k in ("step_size", "gamma", "T_max", "eta_min")
                          if hasattr(sched, k)}}
    if not callable(getattr(sched, "step", None)):
        return facts
    lrs = []
    for _ in range(epochs):
        lrs.append(float(opt.param_groups[0]["lr"]))
        opt.step()
        sched.step()
    return {**facts, "lrs": lrs, "final": float(opt.param_groups[0]["lr"])}  # read after the last step too


@probe
def instrumented_training(module, state, batches, setup):
    """train() with torch's own optimizer and scheduler, every call around it recorded: each backward
    (the state of the first weight's .grad before it, the learning rate), optimizer.step (the .grad it
    finds), scheduler.step, and the loss of each forward on a batch (computed here from its output)."""
    model = build_model(state)
    opt = torch_optimizer(model, setup)
    sched = torch_scheduler(opt, setup)
    batches = [tuple(b) for b in batches]
    first = next(model.parameters())
    events, batch_losses = [], []

    def grad_state():
        if first.grad is None:
            return "none"
        return "nonzero" if first.grad.any() else "zeros"

    def lr():
        return float(opt.param_groups[0]["lr"])

    step, sched_step = opt.step, sched.step

    def step_spy(*args, **kwargs):
        closure = args or kwargs.get("closure")  # step(closure) runs backward inside: no gradients yet
        events.append(["step", "closure" if closure else grad_state(), lr()])
        return step(*args, **kwargs)

    def sched_spy(*args, **kwargs):
        events.append(["scheduler.step", "given" if args or kwargs else None, lr()])  # step(epoch): a number given
        return sched_step(*args, **kwargs)

    def batch_loss(model, inputs, output):
        y = next((y for x, y in batches if inputs and inputs[0] is x), None)
        if y is not None and isinstance(output, torch.Tensor) and output.shape == y.shape:
            batch_losses.append(float(F.mse_loss(output.detach(), y)))

    opt.step, sched.step = step_spy, sched_spy
    first.register_hook(lambda grad: events.append(["backward", grad_state(), lr()]))
    model.register_forward_hook(batch_loss)
    losses = module.train(model, batches, setup["epochs"], opt, sched)
    return {"events": events, "losses": losses, "batch_losses": batch_losses,
            "state": {n: p.detach().clone() for n, p in model.named_parameters()}}


# -- judge-side helpers ----------------------------------------------------------------------------

def draw_state(rng):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    return {n: torch.randn(p.shape, generator=rng) * 0.5 for n, p in model.named_parameters()}


def draw_batches(rng, sizes=(4, 4, 1)):
    """Batches as a DataLoader gives them: full ones, then a short last batch (here of one sample)."""
    return [[torch.randn(size, 3, generator=rng), torch.randn(size, 2, generator=rng)] for size in sizes]


def uniform(rng, lo, hi):
    return round(float(torch.empty(()).uniform_(lo, hi, generator=rng)), 4)


def draw_setup(rng, opt, sched, epochs=5):
    return {"opt": opt, "sched": sched, "epochs": epochs,
            "lr": uniform(rng, 0.05, 0.2) if opt == "sgd" else uniform(rng, 0.005, 0.05),
            "momentum": uniform(rng, 0.5, 0.95) if opt == "sgd" else 0.0,
            "weight_decay": uniform(rng, 1e-3, 1e-2),
            "step_size": 2, "gamma": uniform(rng, 0.3, 0.7)}


def reference_training(state, batches, setup):
    """torch's own loop: (each batch's loss, in order, and the final parameters)."""
    model = build_model(state)
    opt = torch_optimizer(model, setup)
    sched = torch_scheduler(opt, setup)
    batch_losses = []
    for _ in range(setup["epochs"]):
        for x, y in batches:
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            batch_losses.append(loss.item())
        sched.step()
    return batch_losses, {n: p.detach() for n, p in model.named_parameters()}


def epoch_means(batch_losses, batches, weighted=False):
    """Per epoch, the mean of its batch losses (or, `weighted`, the mean over its samples)."""
    sizes = [len(x) for x, _ in batches] if weighted else [1] * len(batches)
    nb = len(batches)
    return [sum(loss * size for loss, size in zip(batch_losses[i:i + nb], sizes)) / sum(sizes)
            for i in range(0, len(batch_losses), nb)]


def code(text: str) -> str:
    """Names, values and calls quoted as code (the same in every language)."""
    return f"`{text}`"


# -- make_optimizer --------------------------------------------------------------------------------

def reference_hyper(kind, hyper):
    """torch's own param_groups settings for this optimizer, minus the implementation-only ones."""
    setup = {"opt": kind, "lr": hyper["lr"], "momentum": hyper.get("momentum", 0.0),
             "weight_decay": hyper["weight_decay"]}
    group = torch_optimizer(torch.nn.Linear(1, 1), setup).param_groups[0]
    return {k: _plain(v) for k, v in group.items() if k != "params" and k not in IMPLEMENTATION_ONLY}


def _same(got, want) -> bool:
    if isinstance(want, bool) or want is None or isinstance(want, (list, str)):
        return got == want
    return matches(got, want, rtol=1e-6, atol=1e-12) and not isinstance(got, torch.Tensor)


def expect_optimizer(info, kind, given):
    want = {"sgd": "SGD", "adam": "Adam"}[kind]
    call = code(f'make_optimizer(model, "{kind}", ...)')
    cls = code(f"torch.optim.{want}")
    if not info["is_optimizer"]:
        fail("{call} should return a {cls}, got {got}.", "{call} 应返回 {cls}，实际得到 {got}。",
             call=call, cls=cls, got=code(info["type"]), key="not-an-optimizer")
    if info["type"] != want:
        extra = Text(" AdamW decouples the weight decay from the gradient: a different update than "
                     "`Adam(weight_decay=...)`.", "AdamW 的权重衰减与梯度解耦，更新方式与 `Adam(weight_decay=...)` 不同。") \
            if info["type"] == "AdamW" else ""
        fail("{call} built {got}; the statement asks for {cls}.{extra}", "{call} 创建的是 {got}；题目要求的是 {cls}。{extra}",
             call=call, got=code(f"torch.optim.{info['type']}"), cls=cls, extra=extra,
             key="adamw-for-adam" if info["type"] == "AdamW" else "wrong-optimizer")
    registered = [n for g in info["groups"] for n in g["params"]]
    missing = [n for n in info["names"] if n not in registered]
    if missing:
        fail("The optimizer does not hold the parameters {names}: they would never be updated. "
             "Give it all of `model.parameters()`.",
             "优化器里没有参数 {names}：它们永远不会被更新。请把 `model.parameters()` 全部交给优化器。",
             names=", ".join(map(code, missing)), key="params-missing")
    if any(n not in info["names"] for n in registered):
        fail("The optimizer holds tensors that are not parameters of the model: give it `model.parameters()`.",
             "优化器里有不属于模型的 tensor：请把 `model.parameters()` 交给优化器。", key="params-not-of-model")
    expected = reference_hyper(kind, given)
    for group in info["groups"]:
        for name, value in expected.items():
            got = group["hyper"].get(name)
            if _same(got, value):
                continue
            if kind == "sgd" and name == "dampening" and _same(got, given["weight_decay"]) \
                    and not _same(group["hyper"].get("weight_decay"), given["weight_decay"]):
                fail("The SGD optimizer got weight_decay's value as {dampening}: the fourth positional parameter of "
                     "`torch.optim.SGD` is dampening, not weight_decay. Pass the hyperparameters by name "
                     "(`weight_decay=weight_decay`).",
                     "SGD 优化器把 weight_decay 的值给了 {dampening}：`torch.optim.SGD` 的第四个位置参数是 dampening，"
                     "不是 weight_decay。请按名字传超参数（`weight_decay=weight_decay`）。",
                     dampening=code(f"dampening={got}"), key="sgd-positional-args")
            how = Text("pass {arg} to {cls}", "请把 {arg} 传给 {cls}", arg=code(f"{name}={name}"), cls=cls) \
                if name in GIVEN else Text("leave {name} at its default", "{name} 请保持默认值", name=code(name))
            fail("The {opt} optimizer has {got}, expected {want}: {how}.", "{opt} 优化器的设置为 {got}，应为 {want}：{how}。",
                 opt=want, got=code(f"{name}={got}"), want=code(f"{name}={value}"), how=how,
                 key=f"wrong-{name.replace('_', '-')}")


@check('make_optimizer("sgd") builds torch.optim.SGD over all parameters with lr, momentum and weight_decay',
       points=2, zh='make_optimizer("sgd") 用全部参数和 lr、momentum、weight_decay 创建 torch.optim.SGD')
def test_make_sgd(submission, rng):
    setup = draw_setup(rng, "sgd", "step")
    info = submission.probe(optimizer_info, draw_state(rng), "sgd", setup["lr"], setup["momentum"],
                            setup["weight_decay"], what=code('make_optimizer(model, "sgd", ...)'))
    expect_optimizer(info, "sgd", setup)


@check('make_optimizer("adam") builds torch.optim.Adam with lr and weight_decay', points=1,
       zh='make_optimizer("adam") 用 lr 和 weight_decay 创建 torch.optim.Adam')
def test_make_adam(submission, rng):
    setup = draw_setup(rng, "adam", "cosine")
    info = submission.probe(optimizer_info, draw_state(rng), "adam", setup["lr"], 0.0, setup["weight_decay"],
                            what=code('make_optimizer(model, "adam", ...)'))
    expect_optimizer(info, "adam", setup)


# -- make_scheduler --------------------------------------------------------------------------------

def _expected_lrs(kind, epochs, step_size, gamma, lr):
    param = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([param], lr=lr)
    sched = torch_scheduler(opt, {"sched": kind, "epochs": epochs, "step_size": step_size, "gamma": gamma})
    lrs = []
    for _ in range(epochs):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def numbers(values) -> str:
    return ", ".join(f"{v:.4g}" for v in values)


def expect_schedule(result, expected, call, causes):
    """Fail unless the learning rates per epoch are torch's; `causes` are (Text, key) pairs diagnosed from
    the scheduler's own settings, shown first."""
    if "lrs" not in result:
        fail("{call} should return a learning-rate scheduler (from `torch.optim.lr_scheduler`), got {got}.",
             "{call} 应返回一个学习率调度器（来自 `torch.optim.lr_scheduler`），实际得到 {got}。",
             call=call, got=code(result["type"]), key="not-a-scheduler")
    lrs = result["lrs"]
    got, want = torch.tensor(lrs, dtype=torch.float64), torch.tensor(expected, dtype=torch.float64)
    if matches(got, want, rtol=1e-6, atol=1e-10):
        return
    seen = Text("expected per epoch {want}; yours {got}", "每个 epoch 的期望值 {want}；你的 {got}",
                want=numbers(expected), got=numbers(lrs))
    for cause, key in causes:
        fail("With {call}, the learning rates differ from the statement's ({seen}). {cause}",
             "使用 {call} 时，学习率与题目要求不同（{seen}）。{cause}", call=call, seen=seen, cause=cause, key=key)
    if matches(got, got[0].expand_as(got)):
        fail("With {call}, the learning rate never changed over {n} epochs (stayed {lr:.4g}): {seen}. Is the "
             "scheduler built on the optimizer it was given?",
             "使用 {call} 时，学习率在 {n} 个 epoch 中从未改变（一直是 {lr:.4g}）：{seen}。调度器是基于传入的优化器创建的吗？",
             call=call, n=len(lrs), lr=lrs[0], seen=seen, key="scheduler-constant")
    bad = next(i for i in range(len(lrs)) if not matches(lrs[i], expected[i], rtol=1e-6, atol=1e-10))
    fail("With {call}, the learning rate in epoch {epoch} should be {want:.4g}, got {got:.4g} ({seen}).",
         "使用 {call} 时，第 {epoch} 个 epoch 的学习率应为 {want:.4g}，实际为 {got:.4g}（{seen}）。",
         call=call, epoch=bad + 1, want=expected[bad], got=lrs[bad], seen=seen, key="wrong-schedule")


@check('make_scheduler("step") multiplies the learning rate by gamma every step_size epochs', points=1,
       zh='make_scheduler("step") 每 step_size 个 epoch 把学习率乘以 gamma')
def test_step_scheduler(submission, rng):
    epochs, step_size, gamma = 9, int(torch.randint(2, 4, (), generator=rng)), uniform(rng, 0.2, 0.6)
    lr = uniform(rng, 0.05, 0.5)
    call = code(f'make_scheduler(optimizer, "step", {epochs}, step_size={step_size}, gamma={gamma:g})')
    result = submission.probe(scheduler_lrs, "step", epochs, step_size, gamma, lr, what=call)
    settings = result["settings"]
    causes = []
    if _same(settings.get("step_size"), gamma) and _same(settings.get("gamma"), step_size):
        causes.append((Text("Your scheduler has step_size={got_size} and gamma={got_gamma}: the two are swapped. "
                            "`StepLR(optimizer, step_size, gamma)` takes step_size first; pass them by name.",
                            "你的调度器 step_size={got_size}、gamma={got_gamma}：两个参数写反了。"
                            "`StepLR(optimizer, step_size, gamma)` 先接收 step_size；请按名字传参。",
                            got_size=settings["step_size"], got_gamma=settings["gamma"]), "steplr-args-swapped"))
    elif _same(settings.get("gamma"), 0.1) and not _same(gamma, 0.1):
        causes.append((Text("Your scheduler has gamma=0.1, StepLR's default: pass gamma=gamma.",
                            "你的调度器 gamma=0.1，这是 StepLR 的默认值：请传入 gamma=gamma。"), "steplr-default-gamma"))
    expect_schedule(result, _expected_lrs("step", epochs, step_size, gamma, lr), call, causes)


@check('make_scheduler("cosine") anneals the learning rate to 0 over the given epochs', points=1,
       zh='make_scheduler("cosine") 在给定的 epoch 数内把学习率按余弦退火到 0')
def test_cosine_scheduler(submission, rng):
    epochs, lr = int(torch.randint(6, 12, (), generator=rng)), uniform(rng, 0.05, 0.5)
    call = code(f'make_scheduler(optimizer, "cosine", {epochs})')
    result = submission.probe(scheduler_lrs, "cosine", epochs, 3, 0.5, lr, what=call)
    t_max, eta_min = result["settings"].get("T_max"), result["settings"].get("eta_min")
    causes = []
    if t_max is not None and not _same(t_max, epochs):
        causes.append((Text("Your cosine has T_max={t_max}: it must reach 0 after the last of the {epochs} epochs, "
                            "and T_max counts scheduler steps (one per epoch), not batches.",
                            "你的余弦调度 T_max={t_max}：它要在 {epochs} 个 epoch 的最后一个之后降到 0，"
                            "T_max 数的是 scheduler 的 step 次数（每个 epoch 一次），不是 batch 数。",
                            t_max=t_max, epochs=epochs), "cosine-tmax-not-epochs"))
    elif eta_min not in (None, 0, 0.0):
        causes.append((Text("Your cosine has eta_min={eta_min}: it must anneal down to 0.",
                            "你的余弦调度 eta_min={eta_min}：它要退火到 0。", eta_min=eta_min), "cosine-eta-min"))
    expect_schedule(result, _expected_lrs("cosine", epochs, 3, 0.5, lr), call, causes)
    if abs(result.get("final", 0.0)) > 1e-6 * lr:
        fail("After the last of the {epochs} epochs, {call} leaves the learning rate at {final:.4g}, not 0: the "
             "cosine must reach 0 after exactly {epochs} scheduler steps (T_max={epochs}, eta_min=0).",
             "{call} 在 {epochs} 个 epoch 的最后一个之后，学习率为 {final:.4g}，而不是 0：余弦调度必须在恰好 {epochs} 次 "
             "scheduler step 之后降到 0（T_max={epochs}，eta_min=0）。", call=call, epochs=epochs,
             final=result["final"], key="cosine-not-zero-at-end")


# -- train -----------------------------------------------------------------------------------------

def run_instrumented(submission, rng, opt="sgd", sched="step"):
    setup = draw_setup(rng, opt, sched)
    state, batches = draw_state(rng), draw_batches(rng)
    result = submission.probe(instrumented_training, state, batches, setup,
                              what=code(f"train(model, batches[{len(batches)}], {setup['epochs']}, optimizer, scheduler)"))
    return setup, state, batches, result


@check("train clears the gradients (set_to_none) before each backward, then steps the optimizer once per batch",
       points=2, zh="train 在每次 backward 之前清空梯度（set_to_none），并且每个 batch 调用一次 optimizer.step")
def test_train_steps(submission, rng):
    setup, _, batches, result = run_instrumented(submission, rng)
    events, n_steps = result["events"], setup["epochs"] * len(batches)
    backwards = [state for kind, state, _ in events if kind == "backward"]
    steps = [state for kind, state, _ in events if kind == "step"]
    if not backwards:
        fail("No gradient reached the model's parameters during train: is `loss.backward()` called on "
             "`F.mse_loss(model(x), y)`?",
             "train 期间没有任何梯度到达模型参数：是否对 `F.mse_loss(model(x), y)` 调用了 `loss.backward()`？",
             key="backward-missing")
    for number, state in enumerate(backwards, 1):
        if state == "nonzero":
            fail("At backward number {number}, the parameters still held the previous batch's gradients, so the new "
                 "ones were added to them: call `optimizer.zero_grad()` before `loss.backward()`.",
                 "第 {number} 次 backward 时，参数里还留着上一个 batch 的梯度，新梯度被累加了上去："
                 "请在 `loss.backward()` 之前调用 `optimizer.zero_grad()`。", number=number, key="zero-grad-missing")
        if state == "zeros":
            fail("At backward number {number}, the gradients were zero tensors, not None: clear them with "
                 "`optimizer.zero_grad(set_to_none=True)` (the default), which frees them instead of writing zeros.",
                 "第 {number} 次 backward 时，梯度是全 0 的 tensor 而不是 None：请用 "
                 "`optimizer.zero_grad(set_to_none=True)`（默认值）清空，它直接释放梯度而不是写入 0。",
                 number=number, key="zero-grad-not-none")
    if not steps:
        fail("train never called `optimizer.step()`: the parameters must be updated by the optimizer, "
             "not by a hand-written update.",
             "train 从未调用 `optimizer.step()`：参数应由优化器更新，而不是手写的更新。", key="optimizer-step-missing")
    if "none" in steps:
        fail("At `optimizer.step()` number {number} the gradients were already gone: they were cleared between "
             "`loss.backward()` and `optimizer.step()`, which wipes them before the update. Clear them before "
             "backward (or after step).",
             "第 {number} 次 `optimizer.step()` 时梯度已经没有了：它们在 `loss.backward()` 和 `optimizer.step()` "
             "之间被清空，在更新之前就被清掉了。请在 backward 之前（或 step 之后）清空梯度。",
             number=steps.index("none") + 1, key="zero-grad-before-step")
    if len(steps) != n_steps or len(backwards) != n_steps:
        fail("Expected one backward and one `optimizer.step()` per batch, {n} of each in all; "
             "saw {backwards} backward and {steps} `optimizer.step()`.",
             "每个 batch 应有一次 backward 和一次 `optimizer.step()`，共各 {n} 次；"
             "实际看到 {backwards} 次 backward 和 {steps} 次 `optimizer.step()`。",
             n=n_steps, backwards=len(backwards), steps=len(steps), key="steps-per-batch")


@check("train steps the scheduler once per epoch, after the epoch's batches", points=1,
       zh="train 每个 epoch 调用一次 scheduler.step，在该 epoch 的所有 batch 之后", depends="train_steps")
def test_train_scheduler(submission, rng):
    setup, _, batches, result = run_instrumented(submission, rng)
    epochs, nb = setup["epochs"], len(batches)
    events = result["events"]
    n_sched = sum(kind == "scheduler.step" for kind, _, _ in events)
    if n_sched == 0:
        fail("train never called `scheduler.step()`: the learning rate stayed {lr:g} for all {epochs} epochs.",
             "train 从未调用 `scheduler.step()`：学习率在全部 {epochs} 个 epoch 中一直是 {lr:g}。",
             lr=setup["lr"], epochs=epochs, key="scheduler-step-missing")
    if n_sched == epochs * nb:
        fail("`scheduler.step()` was called {n} times, once per batch: call it once per epoch ({epochs} times), "
             "after the loop over the batches, or the learning rate decays far too fast.",
             "`scheduler.step()` 被调用了 {n} 次，即每个 batch 一次：应每个 epoch 调用一次（共 {epochs} 次），"
             "放在 batch 循环之后，否则学习率衰减得太快。", n=n_sched, epochs=epochs, key="scheduler-per-batch")
    if n_sched != epochs:
        fail("`scheduler.step()` was called {n} times in {epochs} epochs: call it exactly once per epoch.",
             "{epochs} 个 epoch 中 `scheduler.step()` 被调用了 {n} 次：应每个 epoch 恰好调用一次。",
             n=n_sched, epochs=epochs, key="scheduler-steps-count")
    lrs = [lr for kind, _, lr in events if kind == "backward"]
    if len(lrs) != epochs * nb:
        fail("Cannot follow the learning rate batch by batch: expected {n} backward passes, saw {got}.",
             "无法逐个 batch 跟踪学习率：应有 {n} 次 backward，实际看到 {got} 次。",
             n=epochs * nb, got=len(lrs), key="steps-per-batch")
    expected = _expected_lrs(setup["sched"], epochs, setup["step_size"], setup["gamma"], setup["lr"])
    for i, lr in enumerate(lrs):
        epoch = i // nb
        if matches(lr, expected[epoch], rtol=1e-6):
            continue
        if epoch + 1 < epochs and matches(lr, expected[epoch + 1], rtol=1e-6):
            fail("In epoch {epoch} the optimizer already used the learning rate of epoch {next} ({lr:.4g} instead of "
                 "{want:.4g}): `scheduler.step()` runs before the epoch's training; call it at the end of the epoch, "
                 "after the optimizer steps.",
                 "第 {epoch} 个 epoch 中优化器已经用上了第 {next} 个 epoch 的学习率（{lr:.4g}，应为 {want:.4g}）："
                 "`scheduler.step()` 在该 epoch 训练之前就执行了；请在 epoch 结束、`optimizer.step()` 之后调用它。",
                 epoch=epoch + 1, next=epoch + 2, lr=lr, want=expected[epoch], key="scheduler-before-epoch")
        if any(kind == "scheduler.step" and given for kind, given, _ in events):
            fail("Batch {i} (epoch {epoch}) trained with the learning rate {lr:.4g}, expected {want:.4g}: "
                 "`scheduler.step(...)` was given an argument. Its deprecated epoch argument sets the learning rate "
                 "of the epoch it names, not of the next one; call `scheduler.step()` without arguments, once at the "
                 "end of each epoch.",
                 "第 {i} 个 batch（第 {epoch} 个 epoch）使用的学习率为 {lr:.4g}，应为 {want:.4g}：调用 `scheduler.step(...)` "
                 "时传入了参数。这个已弃用的 epoch 参数设置的是它所指的那个 epoch 的学习率，而不是下一个 epoch 的；"
                 "请在每个 epoch 结束时不带参数地调用一次 `scheduler.step()`。", i=i + 1, epoch=epoch + 1, lr=lr,
                 want=expected[epoch], key="scheduler-step-epoch")
        fail("Batch {i} (epoch {epoch}) trained with the learning rate {lr:.4g}, expected {want:.4g}, the one torch's "
             "scheduler gives that epoch when `scheduler.step()` runs once at the end of each epoch.",
             "第 {i} 个 batch（第 {epoch} 个 epoch）使用的学习率为 {lr:.4g}，应为 {want:.4g}，即每个 epoch 结束时调用一次 "
             "`scheduler.step()` 时 torch 的调度器在这个 epoch 给出的学习率。", i=i + 1, epoch=epoch + 1, lr=lr,
             want=expected[epoch], key="scheduler-wrong-lr")


def expect_losses(got, epochs, batch_losses, batches):
    """train's return value: a list of one Python float per epoch, each the mean of the epoch's batch losses."""
    nb = len(batches)
    what = ("The loss per epoch returned by train", "train 返回的每个 epoch 的损失")
    if not isinstance(got, (list, tuple)):
        fail("train should return a list of {epochs} floats (one mean loss per epoch), got {got}.",
             "train 应返回包含 {epochs} 个 float 的 list（每个 epoch 一个平均损失），实际得到 {got}。",
             epochs=epochs, got=describe(got), key="losses-not-a-list")
    if len(got) == epochs * nb:
        fail("train returned {n} losses, one per batch: return one per epoch ({epochs}), the mean of its batch losses.",
             "train 返回了 {n} 个损失，每个 batch 一个：应每个 epoch 返回一个（共 {epochs} 个），即该 epoch 各 batch 损失的平均值。",
             n=len(got), epochs=epochs, key="losses-per-batch")
    if len(got) != epochs:
        fail("train should return {epochs} losses, one per epoch, got {got}.",
             "train 应返回 {epochs} 个损失，每个 epoch 一个，实际得到 {got}。",
             epochs=epochs, got=describe(got), key="losses-wrong-length")
    tensors = [v for v in got if isinstance(v, torch.Tensor)]
    if tensors:
        more = Text(" Each one still holds its batch's autograd graph, so memory grows with every batch.",
                    "每个 tensor 还挂着它那个 batch 的计算图，内存会随每个 batch 增长。") \
            if any(tensor_info(v).get("grad_fn") for v in tensors) else ""
        fail("train returned tensors, not Python floats: add up `loss.item()`, the loss as a Python number.{more}",
             "train 返回的是 tensor，而不是 Python float：请累加 `loss.item()`，即作为 Python 数的损失。{more}",
             more=more, key="loss-not-item")
    odd = next((i for i, v in enumerate(got) if not is_number(v, float)), None)
    if odd is not None:
        fail("train should return a list of floats, but item {i} is {got}.",
             "train 应返回 float 组成的 list，但第 {i} 个元素是{got}。", i=odd, got=describe(got[odd]),
             key="losses-not-floats")
    mine = torch.tensor(got, dtype=torch.float64)
    means = torch.tensor(epoch_means(batch_losses, batches), dtype=torch.float64)
    weighted = torch.tensor(epoch_means(batch_losses, batches, weighted=True), dtype=torch.float64)
    if matches(mine, weighted, rtol=1e-5) and not matches(mine, means, rtol=1e-5):
        fail("{what} is weighted by the batch sizes (the last batch is shorter): return the mean of the epoch's batch "
             "losses, each batch counting once, as the statement says.",
             "{what} 按 batch 大小加权了（最后一个 batch 更小）：请按题目要求返回该 epoch 各 batch 损失的平均值，每个 batch 算一次。",
             what=what, key="losses-weighted-by-samples")
    expect_close(mine, means, what, rtol=1e-4, atol=1e-6, n=nb, hints={
        "factor N": ("Return the mean of the epoch's batch losses, not their sum.",
                     "应返回该 epoch 各 batch 损失的平均值，而不是总和。")})


@check("train returns one float per epoch: the mean of the epoch's batch losses", points=1,
       zh="train 每个 epoch 返回一个 float：该 epoch 各 batch 损失的平均值")
def test_train_losses(submission, rng):
    setup, state, batches, result = run_instrumented(submission, rng)
    epochs, nb = setup["epochs"], len(batches)
    batch_losses = result["batch_losses"]  # the losses of the learner's own run, whatever its loop does
    if len(batch_losses) != epochs * nb:
        batch_losses = reference_training(state, batches, setup)[0]
    expect_losses(result["losses"], epochs, batch_losses, batches)


@check("train with torch's SGD + StepLR and Adam + cosine ends with torch's parameters", points=1,
       zh="train 配合 torch 的 SGD + StepLR 和 Adam + cosine，训练后的参数与 torch 一致",
       depends=("train_steps", "train_scheduler"))
def test_train_trajectory(submission, rng):
    for opt, sched, label in (("sgd", "step", "SGD(momentum, weight_decay) + StepLR"),
                              ("adam", "cosine", "Adam(weight_decay) + CosineAnnealingLR")):
        setup, state, batches, result = run_instrumented(submission, rng, opt, sched)
        batch_losses, params = reference_training(state, batches, setup)
        got = result["losses"]
        if isinstance(got, list) and all(is_number(v, float) for v in got):
            record_curve(Text("loss per epoch, {label}", label=label), {"yours": got, "reference": epoch_means(batch_losses, batches)},
                         log=True, xlabel="epoch")
        for name, expected in params.items():
            if not matches(result["state"][name], expected, atol=1e-5):
                fail("After {epochs} epochs of train with {label}, {param} differs from torch's own run of the same "
                     "loop (max difference {diff:.3g}): each batch should clear the gradients, compute "
                     "`F.mse_loss(model(x), y)`, call backward and `optimizer.step()`, and each epoch end with one "
                     "`scheduler.step()`.",
                     "用 {label} 运行 train {epochs} 个 epoch 之后，{param} 与 torch 自己运行同样循环的结果不同"
                     "（最大差 {diff:.3g}）：每个 batch 应清空梯度、计算 `F.mse_loss(model(x), y)`、backward 并调用 "
                     "`optimizer.step()`，每个 epoch 结束时调用一次 `scheduler.step()`。",
                     epochs=setup["epochs"], label=label, param=code(f"model.{name}"),
                     diff=float((result["state"][name] - expected).abs().max()), key="training-differs")
