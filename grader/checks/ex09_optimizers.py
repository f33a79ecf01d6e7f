"""Hidden checks of ex09: torch.optim optimizers, zero_grad(set_to_none=True), a per-epoch scheduler.

Probes build a small model in the sandbox from weights the judge drew and observe the learner's code:
the optimizer's class and param_groups, the learning rate a scheduler gives each epoch, and, around
`train`, every zero_grad, backward (a hook on the first layer's weight sees its .grad before
accumulation), optimizer.step (with the learning rate in use) and scheduler.step. The judge
compares with torch's own optimizers and schedulers, run here on the same data.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import CheckFailed, check, describe, expect_close, fail, probe, record_curve

SGD_DEFAULTS = {"dampening": 0.0, "nesterov": False}
ADAM_DEFAULTS = {"betas": [0.9, 0.999], "eps": 1e-8, "amsgrad": False}


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
    lrs = []
    for _ in range(epochs):
        lrs.append(float(opt.param_groups[0]["lr"]))
        opt.step()
        sched.step()
    return {"type": type(sched).__name__, "lrs": lrs}


def _losses(value):
    """The per-epoch losses as floats where they are numbers (a float, an int, a one-element tensor)."""
    if isinstance(value, torch.Tensor):
        return value.detach().double().reshape(-1).tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v.detach()) if isinstance(v, torch.Tensor) else float(v)
                if isinstance(v, (int, float)) and not isinstance(v, bool) else _plain(v) for v in value]
    return _plain(value)


@probe
def instrumented_training(module, state, batches, setup):
    """train() with torch's own optimizer and scheduler, every call around it recorded."""
    model = build_model(state)
    opt = torch_optimizer(model, setup)
    sched = torch_scheduler(opt, setup)
    first = next(model.parameters())
    events = []

    def grad_state():
        if first.grad is None:
            return "none"
        return "nonzero" if first.grad.any() else "zeros"

    zero_grad, step, sched_step = opt.zero_grad, opt.step, sched.step

    def zero_grad_spy(*args, **kwargs):
        result = zero_grad(*args, **kwargs)
        events.append(["zero_grad", grad_state()])
        return result

    def step_spy(*args, **kwargs):
        events.append(["step", float(opt.param_groups[0]["lr"])])
        return step(*args, **kwargs)

    def sched_spy(*args, **kwargs):
        events.append(["scheduler.step", None])
        return sched_step(*args, **kwargs)

    opt.zero_grad, opt.step, sched.step = zero_grad_spy, step_spy, sched_spy
    first.register_hook(lambda grad: events.append(["backward", grad_state()]))
    losses = module.train(model, [tuple(b) for b in batches], setup["epochs"], opt, sched)
    return {"events": events, "losses": _losses(losses)}


@probe
def learner_training(module, state, batches, setup):
    """The learner's make_optimizer, make_scheduler and train, end to end."""
    model = build_model(state)
    opt = module.make_optimizer(model, setup["opt"], setup["lr"], momentum=setup["momentum"],
                                weight_decay=setup["weight_decay"])
    sched = module.make_scheduler(opt, setup["sched"], setup["epochs"], step_size=setup["step_size"],
                                  gamma=setup["gamma"])
    losses = module.train(model, [tuple(b) for b in batches], setup["epochs"], opt, sched)
    return {"losses": _losses(losses), "state": {n: p.detach().clone() for n, p in model.named_parameters()}}


# -- judge-side helpers ----------------------------------------------------------------------------

def draw_state(rng):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    return {n: torch.randn(p.shape, generator=rng) * 0.5 for n, p in model.named_parameters()}


def draw_batches(rng, n_batches=3, size=4):
    return [[torch.randn(size, 3, generator=rng), torch.randn(size, 2, generator=rng)] for _ in range(n_batches)]


def uniform(rng, lo, hi):
    return round(float(torch.empty(()).uniform_(lo, hi, generator=rng)), 4)


def draw_setup(rng, opt, sched, epochs=5):
    return {"opt": opt, "sched": sched, "epochs": epochs,
            "lr": uniform(rng, 0.05, 0.2) if opt == "sgd" else uniform(rng, 0.005, 0.05),
            "momentum": uniform(rng, 0.5, 0.95) if opt == "sgd" else 0.0,
            "weight_decay": uniform(rng, 1e-3, 1e-2),
            "step_size": 2, "gamma": uniform(rng, 0.3, 0.7)}


def reference_training(state, batches, setup):
    """torch's own loop: (per-epoch mean losses, final parameters, lr per epoch)."""
    model = build_model(state)
    opt = torch_optimizer(model, setup)
    sched = torch_scheduler(opt, setup)
    losses, lrs = [], []
    for _ in range(setup["epochs"]):
        lrs.append(opt.param_groups[0]["lr"])
        total = 0.0
        for x, y in batches:
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item()
        sched.step()
        losses.append(total / len(batches))
    return losses, {n: p.detach() for n, p in model.named_parameters()}, lrs


def expect_optimizer(info, kind, expected_hyper):
    want = {"sgd": "SGD", "adam": "Adam"}[kind]
    call = f'make_optimizer(model, "{kind}", ...)'
    if not info["is_optimizer"]:
        fail(f"{call} should return a torch.optim.{want}, got a {info['type']}.",
             f"{call} 应返回 torch.optim.{want}，实际得到 {info['type']}。")
    if info["type"] != want:
        extra = (" AdamW decouples the weight decay from the gradient: a different update than Adam(weight_decay=...)."
                 if info["type"] == "AdamW" else "")
        extra_zh = "（AdamW 的权重衰减与梯度解耦，更新方式与 Adam(weight_decay=...) 不同。）" if extra else ""
        fail(f"{call} built torch.optim.{info['type']}; the statement asks for torch.optim.{want}.{extra}",
             f"{call} 创建的是 torch.optim.{info['type']}；题目要求的是 torch.optim.{want}。{extra_zh}")
    registered = [n for g in info["groups"] for n in g["params"]]
    missing = [n for n in info["names"] if n not in registered]
    if missing:
        fail(f"The optimizer does not hold the parameters {', '.join(missing)}: they would never be updated. "
             "Give it all of model.parameters().",
             f"优化器里没有参数 {', '.join(missing)}：它们永远不会被更新。请把 model.parameters() 全部交给优化器。")
    strangers = [n for n in registered if n not in info["names"]]
    if strangers:
        fail("The optimizer holds tensors that are not parameters of the model: give it model.parameters().",
             "优化器里有不属于模型的 tensor：请把 model.parameters() 交给优化器。")
    for group in info["groups"]:
        for key, value in expected_hyper.items():
            got = group["hyper"].get(key)
            same = (got == value if isinstance(value, (bool, list)) or value is None
                    else isinstance(got, (int, float)) and math.isclose(got, value, rel_tol=1e-6, abs_tol=1e-12))
            if not same:
                given = key in ("lr", "momentum", "weight_decay")
                how = (f"pass {key}={key} to torch.optim.{want}" if given
                       else f"leave {key} at its default")
                how_zh = f"把 {key}={key} 传给 torch.optim.{want}" if given else f"{key} 保持默认值"
                fail(f"The {want} optimizer has {key}={got}, expected {value}: {how}.",
                     f"{want} 优化器的 {key}={got}，应为 {value}：请{how_zh}。")


# -- make_optimizer --------------------------------------------------------------------------------

@check('make_optimizer("sgd") builds torch.optim.SGD over all parameters with lr, momentum and weight_decay',
       points=2, zh='make_optimizer("sgd") 用全部参数和 lr、momentum、weight_decay 创建 torch.optim.SGD')
def test_make_sgd(submission, rng):
    setup = draw_setup(rng, "sgd", "step")
    info = submission.probe(optimizer_info, draw_state(rng), "sgd", setup["lr"], setup["momentum"],
                            setup["weight_decay"], what='`make_optimizer(model, "sgd", ...)`')
    expect_optimizer(info, "sgd", {"lr": setup["lr"], "momentum": setup["momentum"],
                                   "weight_decay": setup["weight_decay"], **SGD_DEFAULTS})


@check('make_optimizer("adam") builds torch.optim.Adam with lr and weight_decay', points=1,
       zh='make_optimizer("adam") 用 lr 和 weight_decay 创建 torch.optim.Adam')
def test_make_adam(submission, rng):
    setup = draw_setup(rng, "adam", "cosine")
    info = submission.probe(optimizer_info, draw_state(rng), "adam", setup["lr"], 0.0, setup["weight_decay"],
                            what='`make_optimizer(model, "adam", ...)`')
    expect_optimizer(info, "adam", {"lr": setup["lr"], "weight_decay": setup["weight_decay"], **ADAM_DEFAULTS})


# -- make_scheduler --------------------------------------------------------------------------------

def _expected_lrs(kind, epochs, step_size, gamma, lr):
    param = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([param], lr=lr)
    setup = {"sched": kind, "epochs": epochs, "step_size": step_size, "gamma": gamma}
    sched = torch_scheduler(opt, setup)
    lrs = []
    for _ in range(epochs):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def expect_schedule(result, expected, call, hints):
    lrs = result["lrs"]
    got = torch.tensor(lrs, dtype=torch.float64)
    want = torch.tensor(expected, dtype=torch.float64)
    if torch.allclose(got, want, rtol=1e-6, atol=1e-10):
        return
    en, zh = hints.get("any", ("", ""))
    if len(lrs) == len(expected) and torch.allclose(got, got[0].expand_as(got)):
        fail(f"With {call}, the learning rate never changed over {len(lrs)} epochs (stayed {lrs[0]:.4g}): "
             f"expected {', '.join(f'{v:.4g}' for v in expected)}. {en}",
             f"使用 {call} 时，学习率在 {len(lrs)} 个 epoch 中从未改变（一直是 {lrs[0]:.4g}）："
             f"应为 {', '.join(f'{v:.4g}' for v in expected)}。{zh}")
    bad = next(i for i in range(len(lrs)) if not math.isclose(lrs[i], expected[i], rel_tol=1e-6, abs_tol=1e-10))
    fail(f"With {call}, the learning rate in epoch {bad + 1} should be {expected[bad]:.4g}, got {lrs[bad]:.4g} "
         f"(expected per epoch: {', '.join(f'{v:.4g}' for v in expected)}; yours: {', '.join(f'{v:.4g}' for v in lrs)}). {en}",
         f"使用 {call} 时，第 {bad + 1} 个 epoch 的学习率应为 {expected[bad]:.4g}，实际为 {lrs[bad]:.4g}"
         f"（每个 epoch 的期望值：{', '.join(f'{v:.4g}' for v in expected)}；你的：{', '.join(f'{v:.4g}' for v in lrs)}）。{zh}")


@check('make_scheduler("step") multiplies the learning rate by gamma every step_size epochs', points=1,
       zh='make_scheduler("step") 每 step_size 个 epoch 把学习率乘以 gamma')
def test_step_scheduler(submission, rng):
    epochs, step_size, gamma = 9, int(torch.randint(2, 4, (), generator=rng)), uniform(rng, 0.2, 0.6)
    lr = uniform(rng, 0.05, 0.5)
    call = f'make_scheduler(optimizer, "step", {epochs}, step_size={step_size}, gamma={gamma:g})'
    result = submission.probe(scheduler_lrs, "step", epochs, step_size, gamma, lr, what=f"`{call}`")
    expect_schedule(result, _expected_lrs("step", epochs, step_size, gamma, lr), call, {
        "any": ("StepLR(optimizer, step_size=step_size, gamma=gamma): are the two swapped or left at a default?",
                "StepLR(optimizer, step_size=step_size, gamma=gamma)：是不是两个参数写反了，或用了默认值？")})


@check('make_scheduler("cosine") anneals the learning rate to 0 over the given epochs', points=1,
       zh='make_scheduler("cosine") 在给定的 epoch 数内把学习率按余弦退火到 0')
def test_cosine_scheduler(submission, rng):
    epochs, lr = int(torch.randint(6, 12, (), generator=rng)), uniform(rng, 0.05, 0.5)
    call = f'make_scheduler(optimizer, "cosine", {epochs})'
    result = submission.probe(scheduler_lrs, "cosine", epochs, 3, 0.5, lr, what=f"`{call}`")
    expect_schedule(result, _expected_lrs("cosine", epochs, 3, 0.5, lr), call, {
        "any": (f"A cosine over {epochs} epochs reaches 0 after the last one: T_max is the number of epochs "
                "(scheduler steps), not of batches.",
                f"{epochs} 个 epoch 的余弦退火在最后一个 epoch 之后降到 0：T_max 是 epoch 数（scheduler 的 step 次数），"
                "不是 batch 数。")})


# -- train -----------------------------------------------------------------------------------------

def run_instrumented(submission, rng):
    setup = draw_setup(rng, "sgd", "step")
    batches = draw_batches(rng)
    result = submission.probe(instrumented_training, draw_state(rng), batches, setup,
                              what=f"`train(model, batches[{len(batches)}], {setup['epochs']}, optimizer, scheduler)`")
    return setup, batches, result["events"]


def expect_steps(events, n_steps):
    steps = sum(kind == "step" for kind, _ in events)
    backwards = sum(kind == "backward" for kind, _ in events)
    if backwards == 0:
        fail("No gradient reached the model's parameters during train: is loss.backward() called on "
             "F.mse_loss(model(x), y)?",
             "train 期间没有任何梯度到达模型参数：是否对 F.mse_loss(model(x), y) 调用了 loss.backward()？")
    if steps == 0:
        fail("train never called optimizer.step(): the parameters must be updated by the optimizer, "
             "not by a hand-written update.",
             "train 从未调用 optimizer.step()：参数应由优化器更新，而不是手写的更新。")
    if steps != n_steps or backwards != n_steps:
        fail(f"Expected one backward and one optimizer.step() per batch, {n_steps} of each in all; "
             f"saw {backwards} backward and {steps} optimizer.step().",
             f"每个 batch 应有一次 backward 和一次 optimizer.step()，共各 {n_steps} 次；"
             f"实际看到 {backwards} 次 backward 和 {steps} 次 optimizer.step()。")


@check("train clears the gradients (set_to_none) before each backward, then steps the optimizer once per batch",
       points=2, zh="train 在每次 backward 之前清空梯度（set_to_none），并且每个 batch 调用一次 optimizer.step")
def test_train_zero_grad(submission, rng):
    setup, batches, events = run_instrumented(submission, rng)
    expect_steps(events, setup["epochs"] * len(batches))
    backward_no = 0
    last = None
    for kind, value in events:
        if kind == "backward":
            backward_no += 1
            if value == "nonzero":
                fail(f"At backward number {backward_no}, the parameters still held the previous batch's gradients, "
                     "so the new ones were added to them: call optimizer.zero_grad() before loss.backward().",
                     f"第 {backward_no} 次 backward 时，参数里还留着上一个 batch 的梯度，新梯度被累加了上去："
                     "请在 loss.backward() 之前调用 optimizer.zero_grad()。")
            if value == "zeros":
                fail(f"At backward number {backward_no}, the gradients were zero tensors, not None: clear them with "
                     "optimizer.zero_grad(set_to_none=True) (the default), which frees them instead of writing zeros.",
                     f"第 {backward_no} 次 backward 时，梯度是全 0 的 tensor 而不是 None：请用 "
                     "optimizer.zero_grad(set_to_none=True)（默认值）清空，它直接释放梯度而不是写入 0。")
        if kind == "step" and last == "zero_grad":
            fail("zero_grad() ran between loss.backward() and optimizer.step(): it wiped the gradients before the "
                 "update. Clear them before backward (or after step).",
                 "zero_grad() 在 loss.backward() 和 optimizer.step() 之间执行：它在更新之前把梯度清掉了。"
                 "请在 backward 之前（或 step 之后）清空梯度。")
        if kind in ("backward", "zero_grad", "step"):
            last = kind


@check("train steps the scheduler once per epoch, after the epoch's batches", points=1,
       zh="train 每个 epoch 调用一次 scheduler.step，在该 epoch 的所有 batch 之后")
def test_train_scheduler(submission, rng):
    setup, batches, events = run_instrumented(submission, rng)
    epochs, nb = setup["epochs"], len(batches)
    expect_steps(events, epochs * nb)
    n_sched = sum(kind == "scheduler.step" for kind, _ in events)
    if n_sched == 0:
        fail(f"train never called scheduler.step(): the learning rate stayed {setup['lr']:g} for all {epochs} epochs.",
             f"train 从未调用 scheduler.step()：学习率在全部 {epochs} 个 epoch 中一直是 {setup['lr']:g}。")
    if n_sched == epochs * nb:
        fail(f"scheduler.step() was called {n_sched} times, once per batch: call it once per epoch ({epochs} times), "
             "after the loop over the batches, or the learning rate decays far too fast.",
             f"scheduler.step() 被调用了 {n_sched} 次，即每个 batch 一次：应每个 epoch 调用一次（共 {epochs} 次），"
             "放在 batch 循环之后，否则学习率衰减得太快。")
    if n_sched != epochs:
        fail(f"scheduler.step() was called {n_sched} times in {epochs} epochs: call it exactly once per epoch.",
             f"{epochs} 个 epoch 中 scheduler.step() 被调用了 {n_sched} 次：应每个 epoch 恰好调用一次。")
    lrs = [value for kind, value in events if kind == "step"]
    expected = _expected_lrs(setup["sched"], epochs, setup["step_size"], setup["gamma"], setup["lr"])
    for i, lr in enumerate(lrs):
        epoch = i // nb
        if math.isclose(lr, expected[epoch], rel_tol=1e-6):
            continue
        if epoch + 1 < epochs and math.isclose(lr, expected[epoch + 1], rel_tol=1e-6):
            fail(f"In epoch {epoch + 1} the optimizer already used the learning rate of epoch {epoch + 2} ({lr:.4g} "
                 f"instead of {expected[epoch]:.4g}): scheduler.step() runs before the epoch's training; "
                 "call it at the end of the epoch, after the optimizer steps.",
                 f"第 {epoch + 1} 个 epoch 中优化器已经用上了第 {epoch + 2} 个 epoch 的学习率（{lr:.4g}，应为 "
                 f"{expected[epoch]:.4g}）：scheduler.step() 在该 epoch 训练之前就执行了；请在 epoch 结束、"
                 "optimizer.step() 之后调用它。")
        fail(f"optimizer.step() number {i + 1} (epoch {epoch + 1}) used the learning rate {lr:.4g}, expected "
             f"{expected[epoch]:.4g}: step the scheduler once at the end of each epoch.",
             f"第 {i + 1} 次 optimizer.step()（第 {epoch + 1} 个 epoch）使用的学习率为 {lr:.4g}，应为 "
             f"{expected[epoch]:.4g}：请在每个 epoch 结束时调用一次 scheduler.step()。")


@check("training follows torch's own SGD + StepLR and Adam + cosine trajectories", points=2,
       zh="训练轨迹与 torch 自己的 SGD + StepLR 和 Adam + cosine 一致")
def test_trajectories(submission, rng):
    for opt, sched, label in (("sgd", "step", "SGD(momentum, weight_decay) + StepLR"),
                              ("adam", "cosine", "Adam(weight_decay) + CosineAnnealingLR")):
        setup = draw_setup(rng, opt, sched)
        state, batches = draw_state(rng), draw_batches(rng)
        result = submission.probe(learner_training, state, batches, setup,
                                  what=f'`train` with `make_optimizer(model, "{opt}", ...)` and '
                                       f'`make_scheduler(optimizer, "{sched}", ...)`')
        losses, params, _ = reference_training(state, batches, setup)
        if isinstance(result["losses"], list) and all(isinstance(v, float) for v in result["losses"]):
            record_curve(f"loss per epoch, {label}", {"yours": result["losses"], "reference": losses},
                         log=True, xlabel="epoch")
        for name, expected in params.items():
            try:
                expect_close(result["state"][name], expected, f"model.{name}", rtol=1e-4, atol=1e-5)
            except CheckFailed as wrong:
                fail(f"After {setup['epochs']} epochs with {label}, the parameters differ from torch's own run: "
                     f"{wrong.message} The other checks say which part (optimizer, scheduler, loop) differs.",
                     f"用 {label} 训练 {setup['epochs']} 个 epoch 后，参数与 torch 自己的结果不同：{wrong.zh}"
                     "其他检查会指出是哪一部分（优化器、调度器、训练循环）不一致。")
        got = result["losses"]
        if not isinstance(got, list) or len(got) != setup["epochs"] or not all(isinstance(v, float) for v in got):
            fail(f"train should return a list of {setup['epochs']} floats (one mean loss per epoch), got {describe(got)}.",
                 f"train 应返回包含 {setup['epochs']} 个 float 的 list（每个 epoch 一个平均损失），实际得到 {describe(got)}。")
        expect_close(torch.tensor(got), torch.tensor(losses), "the loss per epoch returned by train", rtol=1e-4,
                     atol=1e-6, hints={"factor": ("Return the mean of the epoch's batch losses, not their sum.",
                                                  "应返回该 epoch 各 batch 损失的平均值，而不是总和。")})
