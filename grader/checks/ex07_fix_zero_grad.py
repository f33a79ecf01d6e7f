"""Hidden checks of ex07: fix the training loops (where zero_grad goes).

A probe runs the learner's loop on a model it builds from judge-drawn weights and records, in
order, every forward, zero_grad (optimizer's or model's), backward and optimizer step, with the
state of the gradients at each backward and each step. The judge trains the same model itself
with a correct full-batch SGD loop and compares the loss curves.
"""

from __future__ import annotations

import linecache
import math

import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from grader.checking import check, fail, probe, tensor_info

LOOPS = {
    "regression": {"fn": "train_regression", "in": 3, "out": 1, "n": 64, "lr": 0.1, "epochs": 40},
    "classifier": {"fn": "train_classifier", "in": 4, "out": 3, "n": 96, "lr": 0.5, "epochs": 40},
}


def build_model(kind: str) -> nn.Module:
    spec = LOOPS[kind]
    if kind == "regression":
        return nn.Linear(spec["in"], spec["out"])
    return nn.Sequential(nn.Linear(spec["in"], 8), nn.Tanh(), nn.Linear(8, spec["out"]))


def load_weights(model: nn.Module, weights: list[torch.Tensor]) -> nn.Module:
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(w)
    return model


def loss_fn(kind: str):
    return nn.MSELoss() if kind == "regression" else nn.CrossEntropyLoss()


# -- inputs and the judge's own training (judge side) --------------------------------------------

def draw(kind: str, rng: torch.Generator):
    spec = LOOPS[kind]
    x = torch.randn(spec["n"], spec["in"], generator=rng)
    if kind == "regression":
        w = torch.randn(spec["in"], 1, generator=rng) * 2
        target = x @ w + torch.randn(1, generator=rng) + 0.1 * torch.randn(spec["n"], 1, generator=rng)
    else:
        target = (x @ torch.randn(spec["in"], spec["out"], generator=rng)).argmax(dim=1)
    shapes = [p.shape for p in build_model(kind).parameters()]
    weights = [0.5 * torch.randn(s, generator=rng) for s in shapes]
    return x, target, weights


def reference_training(kind: str, x, target, weights) -> tuple[list[float], list[torch.Tensor]]:
    """Correct full-batch SGD, in the judge: the loss of every epoch and the final parameters."""
    spec = LOOPS[kind]
    model = load_weights(build_model(kind), weights)
    optimizer = torch.optim.SGD(model.parameters(), lr=spec["lr"])
    criterion, losses = loss_fn(kind), []
    for _ in range(spec["epochs"]):
        optimizer.zero_grad()
        loss = criterion(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]


# -- the probe (sandbox side) -------------------------------------------------------------------

def _grad_state(params) -> float | str:
    """'none' if every .grad is None, else the largest |grad| (0.0 when zeroed)."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return "none"
    return max(float(g.detach().abs().max()) for g in grads)


def _error_info(exc: BaseException, module) -> dict:
    info = {"type": type(exc).__name__, "message": str(exc)[:300], "where": ""}
    tb, frame = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_globals is module.__dict__:  # the learner's code (a file, or notebook cells)
            frame = tb
        tb = tb.tb_next
    if frame is not None:
        code = frame.tb_frame.f_code
        cell = "" if code.co_filename == getattr(module, "__file__", None) else f"{code.co_filename}, "
        info["where"] = f"{cell}line {frame.tb_lineno}, in {code.co_name}: " + \
            linecache.getline(code.co_filename, frame.tb_lineno).strip()
    return info


@probe
def watch_loop(module, kind, weights, x, target):
    """Run the learner's loop for `kind` on a fresh model; record forward / zero_grad / backward / step."""
    spec = LOOPS[kind]
    model = load_weights(build_model(kind), weights)
    params = list(model.parameters())
    events, losses = [], []

    def forward_hook(mod, args):
        events.append(["forward", None])

    def step_hook(optimizer, args, kwargs):
        events.append(["step", _grad_state(params)])

    real_backward = torch.autograd.backward
    real_opt_zero, real_mod_zero = torch.optim.Optimizer.zero_grad, nn.Module.zero_grad

    def backward(tensors, *args, **kwargs):
        t = tensors if isinstance(tensors, torch.Tensor) else next(iter(tensors), None)
        if isinstance(t, torch.Tensor) and t.numel() == 1:
            losses.append(float(t.detach().reshape(())))
        events.append(["backward", _grad_state(params)])
        return real_backward(tensors, *args, **kwargs)

    def opt_zero(self, *args, **kwargs):
        events.append(["zero_grad", None])
        return real_opt_zero(self, *args, **kwargs)

    def mod_zero(self, *args, **kwargs):
        if self is model:
            events.append(["zero_grad", None])
        return real_mod_zero(self, *args, **kwargs)

    handles = [model.register_forward_pre_hook(forward_hook),
               register_optimizer_step_pre_hook(step_hook)]
    torch.autograd.backward = backward
    torch.optim.Optimizer.zero_grad, nn.Module.zero_grad = opt_zero, mod_zero
    out = {"returned": None, "error": None}
    try:
        out["returned"] = getattr(module, spec["fn"])(model, x, target, spec["lr"], spec["epochs"])
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - explained by the judge
        out["error"] = _error_info(exc, module)
    finally:
        torch.autograd.backward = real_backward
        torch.optim.Optimizer.zero_grad, nn.Module.zero_grad = real_opt_zero, real_mod_zero
        for h in handles:
            h.remove()
    out.update(events=events, losses=losses, final=[p.detach().clone() for p in params])
    return out


# -- reading the record (judge side) -------------------------------------------------------------

def run(submission, rng, kind: str):
    spec = LOOPS[kind]
    x, target, weights = draw(kind, rng)
    what = f"`{spec['fn']}(model, x[{spec['n']}, {spec['in']}], ..., lr={spec['lr']}, epochs={spec['epochs']})`"
    seen = submission.probe(watch_loop, kind, weights, x, target, what=what)
    if seen["error"]:
        err = seen["error"]
        where = f" ({err['where']})" if err["where"] else ""
        fail(f"{spec['fn']} raised {err['type']}: {err['message'].splitlines()[0][:200].rstrip('.')}{where}.",
             f"{spec['fn']} 抛出了 {err['type']}：{err['message'].splitlines()[0][:200].rstrip('.')}{where}。")
    return (x, target, weights), seen


def iterations(events: list) -> list[list]:
    """The events cut at each forward: one list per iteration (events before the first forward go first)."""
    its = [[]]
    for e in events:
        if e[0] == "forward" and its[-1]:
            its.append([])
        its[-1].append(e)
    return [it for it in its if it]


def order_text(events: list) -> str:
    """How one iteration of the learner's loop runs, e.g. 'forward -> backward -> zero_grad -> step'."""
    its = iterations(events)
    body = its[1] if len(its) > 1 and its[0][0][0] != "forward" else its[0] if its else []
    return " -> ".join(name for name, _ in body) or "nothing"


def cleared(state) -> bool:
    return state == "none" or state == 0.0


def fmt(v: float) -> str:
    return f"{v:.4g}"


def _expect_clears(kind: str, seen: dict) -> None:
    fn = LOOPS[kind]["fn"]
    events = seen["events"]
    backwards = [(i, s) for i, (name, s) in enumerate(events) if name == "backward"]
    if not backwards:
        fail(f"{fn} never called loss.backward(): nothing computes the gradients.",
             f"{fn} 从未调用 loss.backward()：没有计算梯度。")
    n_zero = sum(name == "zero_grad" for name, _ in events)
    order = order_text(events)
    for k, (_, state) in enumerate(backwards[1:], start=2):
        if cleared(state):
            continue
        if n_zero == 0:
            fail(f"zero_grad is never called, so the gradients are never cleared: before the backward of iteration {k} "
                 f"the parameters' .grad still held old gradients (largest {fmt(state)}), and backward adds to them. "
                 f"Each step then uses the sum of all gradients so far. Your iteration runs: {order}. "
                 "Call optimizer.zero_grad() before loss.backward() in every iteration.",
                 f"从未调用 zero_grad，梯度从来没有被清零：第 {k} 次迭代 backward 之前，参数的 .grad 仍保留着旧梯度"
                 f"（最大 {fmt(state)}），而 backward 会往上累加，于是每一步用的都是之前所有梯度之和。你的每次迭代是：{order}。"
                 "请在每次迭代的 loss.backward() 之前调用 optimizer.zero_grad()。")
        fail(f"The gradients are not cleared in every iteration: before the backward of iteration {k} the parameters' "
             f".grad still held old gradients (largest {fmt(state)}); zero_grad ran {n_zero} times in "
             f"{len(backwards)} iterations. Call zero_grad once per iteration, before loss.backward().",
             f"梯度没有在每次迭代中清零：第 {k} 次迭代 backward 之前，参数的 .grad 仍保留着旧梯度（最大 {fmt(state)}）；"
             f"{len(backwards)} 次迭代中 zero_grad 只调用了 {n_zero} 次。请每次迭代在 loss.backward() 之前调用一次 zero_grad。")


def _expect_steps(kind: str, seen: dict) -> None:
    fn = LOOPS[kind]["fn"]
    events = seen["events"]
    order = order_text(events)
    steps = [i for i, (name, _) in enumerate(events) if name == "step"]
    if not steps:
        fail(f"{fn} never called optimizer.step(): the parameters never change.",
             f"{fn} 从未调用 optimizer.step()：参数永远不会改变。")
    last_step = -1
    for k, i in enumerate(steps, start=1):
        between = [name for name, _ in events[last_step + 1:i]]
        last_step = i
        if "backward" not in between:
            fail(f"optimizer.step() runs before loss.backward() (iteration {k}: {order}): step uses the gradients "
                 "that are there at that moment, so it must come after backward. Order: zero_grad -> backward -> step.",
                 f"optimizer.step() 在 loss.backward() 之前运行（第 {k} 次迭代：{order}）：step 使用的是当时 .grad 里的梯度，"
                 "所以必须在 backward 之后。顺序应为：zero_grad -> backward -> step。")
        state = events[i][1]
        if cleared(state):
            after = between[len(between) - 1 - between[::-1].index("backward"):]
            if "zero_grad" in after:
                fail(f"zero_grad sits between backward and step ({order}): it wipes the gradients that backward just "
                     "computed, so step has nothing to apply and the model never changes. Call zero_grad before "
                     "backward (at the start of the iteration), and step right after backward.",
                     f"zero_grad 放在了 backward 和 step 之间（{order}）：它把 backward 刚算出的梯度清掉了，step 无梯度可用，"
                     "模型永远不变。请把 zero_grad 放在 backward 之前（迭代开始处），backward 之后紧接着 step。")
            fail(f"When optimizer.step() ran (iteration {k}) every gradient was zero or None ({order}): step must use "
                 "the gradients backward just computed.",
                 f"第 {k} 次迭代 optimizer.step() 运行时所有梯度都是 0 或 None（{order}）：step 必须使用 backward 刚算出的梯度。")


def _expect_trajectory(kind: str, inputs, seen: dict) -> None:
    spec = LOOPS[kind]
    fn = spec["fn"]
    want, final = reference_training(kind, *inputs)
    got = seen["losses"]
    if len(got) != len(want):
        fail(f"{fn}(..., epochs={spec['epochs']}) ran {len(got)} backward passes, expected one per epoch "
             f"({spec['epochs']}).",
             f"{fn}(..., epochs={spec['epochs']}) 运行了 {len(got)} 次 backward，应每个 epoch 一次（共 {spec['epochs']} 次）。")
    for k, (g, w) in enumerate(zip(got, want), start=1):
        if not (math.isfinite(g) and abs(g - w) <= 1e-3 * abs(w) + 1e-5):
            trend = "did not move" if max(got) - min(got) <= 1e-6 * abs(got[0]) else \
                "grew" if not math.isfinite(got[-1]) or got[-1] > got[0] else "went"
            fail(f"The training goes wrong from epoch {k}: loss {fmt(g)}, while correct full-batch SGD gives {fmt(w)}. "
                 f"Your loss {trend} {fmt(got[0])} -> {fmt(got[-1])} in {len(got)} epochs; correct training goes "
                 f"{fmt(want[0])} -> {fmt(want[-1])}.",
                 f"训练从第 {k} 个 epoch 开始出错：损失为 {fmt(g)}，正确的全批量 SGD 应为 {fmt(w)}。"
                 f"你的损失在 {len(got)} 个 epoch 中 {fmt(got[0])} -> {fmt(got[-1])}；正确训练是 {fmt(want[0])} -> {fmt(want[-1])}。")
    for p, q in zip(seen["final"], final):
        if p.shape != q.shape or not torch.allclose(p, q, rtol=1e-3, atol=1e-5):
            fail("The loss curve is right, but the model's final parameters are not those of correct SGD: is there "
                 "an extra step or update after the last epoch?",
                 "损失曲线正确，但模型最终的参数与正确的 SGD 不同：最后一个 epoch 之后是否多了一次 step 或更新？")
    if not want[-1] < 0.5 * want[0]:  # pragma: no cover - guards the check's own data
        raise AssertionError("the reference training did not converge: the check's data are wrong")


def _expect_losses_returned(kind: str, seen: dict) -> None:
    spec = LOOPS[kind]
    fn, losses = spec["fn"], seen["returned"]
    if losses is None:
        fail(f"{fn} returned None: did you remove `return losses`?", f"{fn} 返回了 None：是不是删掉了 `return losses`？")
    if not isinstance(losses, (list, tuple)) or len(losses) != spec["epochs"]:
        fail(f"{fn} should return a list with one loss per epoch ({spec['epochs']}).",
             f"{fn} 应返回一个列表，每个 epoch 一个损失（共 {spec['epochs']} 个）。")
    for v in losses:
        if isinstance(v, torch.Tensor) and tensor_info(v).get("requires_grad"):
            fail(f"{fn} collects loss tensors, which keep every iteration's graph alive: append loss.item().",
                 f"{fn} 收集的是 loss tensor，会让每次迭代的计算图都留在内存里：请 append loss.item()。")
        if isinstance(v, bool) or not isinstance(v, (int, float, torch.Tensor)) or (
                isinstance(v, torch.Tensor) and v.numel() != 1):
            fail(f"{fn} should return numbers (loss.item()), found {type(v).__name__}.",
                 f"{fn} 应返回数字（loss.item()），却发现了 {type(v).__name__}。")
    for g, v in zip(seen["losses"], losses):
        v = float(v.reshape(())) if isinstance(v, torch.Tensor) else float(v)
        if not (abs(g - v) <= 1e-5 * abs(g) + 1e-7 or (math.isnan(g) and math.isnan(v))):
            fail(f"{fn} returned losses that differ from the losses it backpropagated ({fmt(v)} vs {fmt(g)}): "
                 "append loss.item() of the loss of each epoch.",
                 f"{fn} 返回的损失与它反向传播的损失不同（{fmt(v)} 与 {fmt(g)}）：请 append 每个 epoch 的 loss.item()。")


# -- the checks ----------------------------------------------------------------------------------

@check("train_regression clears the old gradients before every backward", points=1.5,
       zh="train_regression 在每次 backward 之前清除旧梯度")
def test_regression_clears(submission, rng):
    _expect_clears("regression", run(submission, rng, "regression")[1])


@check("train_regression steps right after backward, with this iteration's gradients", points=1,
       zh="train_regression 在 backward 之后用本次迭代的梯度 step")
def test_regression_steps(submission, rng):
    _expect_steps("regression", run(submission, rng, "regression")[1])


@check("train_regression trains like correct full-batch SGD and converges", points=2,
       zh="train_regression 的训练与正确的全批量 SGD 一致并收敛")
def test_regression_trajectory(submission, rng):
    inputs, seen = run(submission, rng, "regression")
    _expect_trajectory("regression", inputs, seen)


@check("train_regression returns one float loss per epoch", points=0.5, zh="train_regression 每个 epoch 返回一个 float 损失")
def test_regression_returns(submission, rng):
    _expect_losses_returned("regression", run(submission, rng, "regression")[1])


@check("train_classifier clears the old gradients before every backward", points=1.5,
       zh="train_classifier 在每次 backward 之前清除旧梯度")
def test_classifier_clears(submission, rng):
    _expect_clears("classifier", run(submission, rng, "classifier")[1])


@check("train_classifier steps right after backward, with this iteration's gradients", points=1,
       zh="train_classifier 在 backward 之后用本次迭代的梯度 step")
def test_classifier_steps(submission, rng):
    _expect_steps("classifier", run(submission, rng, "classifier")[1])


@check("train_classifier trains like correct full-batch SGD and converges", points=2,
       zh="train_classifier 的训练与正确的全批量 SGD 一致并收敛")
def test_classifier_trajectory(submission, rng):
    inputs, seen = run(submission, rng, "classifier")
    _expect_trajectory("classifier", inputs, seen)


@check("train_classifier returns one float loss per epoch", points=0.5, zh="train_classifier 每个 epoch 返回一个 float 损失")
def test_classifier_returns(submission, rng):
    _expect_losses_returned("classifier", run(submission, rng, "classifier")[1])
