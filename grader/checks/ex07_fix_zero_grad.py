"""Hidden checks of ex07: fix the training loops (where zero_grad goes).

A probe runs the learner's loop on a model it builds from judge-drawn weights and records, in
order, every forward, zero_grad (optimizer's or model's), backward and optimizer step, with the
state of the gradients at each backward and each step. The judge trains the same model itself
with a correct full-batch SGD loop and compares the loss curves.

Each loop has three checks: the fix itself (cleared before every backward, stepped after it), the
training that follows from it, and the losses it returns. The stub's loops are each wrong in one of
the first two ways, so every check of a loop earns its points only once that loop is fixed.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from grader.checking import (CheckFailed, Text, check, describe, fail, fail_raised, is_number, learner_call, matches,
                             patched, probe, tensor_info)

LOOPS = {
    "regression": {"fn": "train_regression", "in": 3, "out": 1, "n": 64, "lr": 0.1, "epochs": 40},
    "classifier": {"fn": "train_classifier", "in": 4, "out": 3, "n": 96, "lr": 0.5, "epochs": 40},
}


def per_loop(title: str, points: float, zh: str, depends: str | None = None):
    """Declare a check once for both loops: `{fn}` in the titles names each loop's function, and a
    dependency is on the same loop's check."""
    return pytest.mark.parametrize("kind", [
        pytest.param(kind, id=kind, marks=check(title.format(fn=spec["fn"]), points, zh=zh.format(fn=spec["fn"]),
                                                 depends=f"{depends}[{kind}]" if depends else ()))
        for kind, spec in LOOPS.items()])


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


@probe
def watch_loop(module, kind, weights, x, target):
    """Run the learner's loop for `kind` on a fresh model; record forward / zero_grad / backward / step
    (with the optimizer that stepped)."""
    spec = LOOPS[kind]
    model = load_weights(build_model(kind), weights)
    params = list(model.parameters())
    events, losses, optimizers = [], [], []

    def forward_hook(mod, args):
        events.append(["forward", None])

    def step_hook(optimizer, args, kwargs):
        if not any(o is optimizer for o in optimizers):
            optimizers.append(optimizer)
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

    handles = [model.register_forward_pre_hook(forward_hook), register_optimizer_step_pre_hook(step_hook)]
    out = {}
    try:
        with patched(module, torch.autograd, "backward", backward), \
                patched(module, torch.optim.Optimizer, "zero_grad", opt_zero), \
                patched(module, nn.Module, "zero_grad", mod_zero):
            out["returned"], out["error"] = learner_call(module, getattr(module, spec["fn"]), model, x, target,
                                                         spec["lr"], spec["epochs"])
    finally:
        for h in handles:
            h.remove()
    out.update(events=events, losses=losses, optimizers=len(optimizers),
               final=[p.detach().clone() for p in params])
    return out


# -- reading the record (judge side) -------------------------------------------------------------

def run(submission, rng, kind: str):
    """The learner's loop for `kind` watched, once per grading (the first check that asks draws the inputs), failing
    with its error if it raised."""
    spec = LOOPS[kind]
    what = f"`{spec['fn']}(model, x[{spec['n']}, {spec['in']}], ..., lr={spec['lr']}, epochs={spec['epochs']})`"

    def watched():
        x, target, weights = draw(kind, rng)
        return (x, target, weights), submission.probe(watch_loop, kind, weights, x, target, what=what)
    inputs, seen = submission.once(kind, watched)
    if seen["error"]:
        last = iterations(seen["events"])[-1] if seen["events"] else []
        names = [name for name, _ in last]
        if "modified by an inplace operation" in seen["error"]["message"] and "step" in names \
                and "backward" in names[names.index("step"):]:
            fail_raised(seen["error"], spec["fn"], Text(
                "optimizer.step() ran after the forward pass and before loss.backward() ({order}): step changes the "
                "weights in place, and backward needs them as the forward pass saw them. Order: zero_grad -> "
                "forward -> backward -> step.",
                "optimizer.step() 在前向传播之后、loss.backward() 之前运行了（{order}）：step 会原地修改权重，而 backward "
                "需要的是前向传播时看到的权重。顺序应为：zero_grad -> 前向传播 -> backward -> step。",
                order=order_text(seen["events"])), key="step-before-backward")
        fail_raised(seen["error"], spec["fn"])
    return inputs, seen


def iterations(events: list) -> list[list]:
    """The events cut at each forward: one list per iteration (events before the first forward go first)."""
    its = [[]]
    for e in events:
        if e[0] == "forward" and its[-1]:
            its.append([])
        its[-1].append(e)
    return [it for it in its if it]


def order_text(events: list) -> str:
    """How one iteration of the learner's loop runs, as code: '`forward -> backward -> zero_grad -> step`'."""
    its = iterations(events)
    body = its[1] if len(its) > 1 and its[0][0][0] != "forward" else its[0] if its else []
    return f"`{' -> '.join(name for name, _ in body) or 'nothing'}`"


def cleared(state) -> bool:
    return state == "none" or state == 0.0


def fmt(v: float) -> str:
    return f"{v:.4g}"


def expect_fixed(kind: str, seen: dict) -> None:
    """The fix the exercise asks for: the old gradients are gone before every backward, and every
    optimizer.step() runs after a backward, with that backward's gradients."""
    _expect_clears(kind, seen)
    _expect_steps(kind, seen)


def _expect_clears(kind: str, seen: dict) -> None:
    fn = LOOPS[kind]["fn"]
    events = seen["events"]
    backwards = [state for name, state in events if name == "backward"]
    if not backwards:
        fail("{fn} never called loss.backward(): nothing computes the gradients.",
             "{fn} 从未调用 loss.backward()：没有计算梯度。", fn=fn, key="backward-missing")
    n_zero = sum(name == "zero_grad" for name, _ in events)
    values = dict(fn=fn, order=order_text(events), n_zero=n_zero, n=len(backwards))
    for k, state in enumerate(backwards[1:], start=2):
        if cleared(state):
            continue
        values.update(k=k, size=fmt(state))
        if not any(cleared(s) for s in backwards[1:]):
            if seen["optimizers"] > 1:
                fail("{fn} makes a new optimizer in every iteration, but that does not clear the gradients: they live "
                     "on the parameters (p.grad), not in the optimizer. Before the backward of iteration {k} the "
                     ".grad still held old gradients (largest {size}), and backward adds to them. Call "
                     "optimizer.zero_grad() before loss.backward() in every iteration.",
                     "{fn} 每次迭代都新建一个优化器，但这并不会清除梯度：梯度保存在参数上（p.grad），而不在优化器里。"
                     "第 {k} 次迭代 backward 之前，.grad 仍保留着旧梯度（最大 {size}），而 backward 会往上累加。"
                     "请在每次迭代的 loss.backward() 之前调用 optimizer.zero_grad()。",
                     key="new-optimizer-each-iteration", **values)
            if n_zero == 0:
                fail("zero_grad is never called, so the gradients are never cleared: before the backward of iteration "
                     "{k} the parameters' .grad still held old gradients (largest {size}), and backward adds to them. "
                     "Each step then uses the sum of all gradients so far. Your iteration runs: {order}. "
                     "Call optimizer.zero_grad() before loss.backward() in every iteration.",
                     "从未调用 zero_grad，梯度从来没有被清零：第 {k} 次迭代 backward 之前，参数的 .grad 仍保留着旧梯度"
                     "（最大 {size}），而 backward 会往上累加，于是每一步用的都是之前所有梯度之和。你的每次迭代是：{order}。"
                     "请在每次迭代的 loss.backward() 之前调用 optimizer.zero_grad()。", key="zero-grad-missing", **values)
        fail("The gradients are not cleared in every iteration: before the backward of iteration {k} the parameters' "
             ".grad still held old gradients (largest {size}); zero_grad ran {n_zero} times in {n} iterations. "
             "Call zero_grad once per iteration, before loss.backward().",
             "梯度没有在每次迭代中清零：第 {k} 次迭代 backward 之前，参数的 .grad 仍保留着旧梯度（最大 {size}）；"
             "{n} 次迭代中 zero_grad 只调用了 {n_zero} 次。请每次迭代在 loss.backward() 之前调用一次 zero_grad。",
             key="zero-grad-not-every-iteration", **values)


def _expect_steps(kind: str, seen: dict) -> None:
    fn = LOOPS[kind]["fn"]
    events = seen["events"]
    order = order_text(events)
    steps = [i for i, (name, _) in enumerate(events) if name == "step"]
    if not steps:
        fail("{fn} never called optimizer.step(): the loop must update the parameters through its optimizer "
             "(zero_grad -> backward -> step), not by hand.",
             "{fn} 从未调用 optimizer.step()：循环必须通过它的优化器更新参数（zero_grad -> backward -> step），"
             "而不是手动更新。", fn=fn, key="step-missing")
    last_step = -1
    for k, i in enumerate(steps, start=1):
        between = [name for name, _ in events[last_step + 1:i]]
        last_step = i
        if "backward" not in between:
            fail("optimizer.step() runs before loss.backward() (iteration {k}: {order}): step uses the gradients that "
                 "are there at that moment, so it must come after backward. Order: zero_grad -> backward -> step.",
                 "optimizer.step() 在 loss.backward() 之前运行（第 {k} 次迭代：{order}）：step 使用的是当时 .grad 里的梯度，"
                 "所以必须在 backward 之后。顺序应为：zero_grad -> backward -> step。",
                 k=k, order=order, key="step-before-backward")
        if cleared(events[i][1]):
            after = between[len(between) - 1 - between[::-1].index("backward"):]
            if "zero_grad" in after:
                fail("zero_grad sits between backward and step ({order}): it wipes the gradients that backward just "
                     "computed, so step has nothing to apply and the model never changes. Call zero_grad before "
                     "backward (at the start of the iteration), and step right after backward.",
                     "zero_grad 放在了 backward 和 step 之间（{order}）：它把 backward 刚算出的梯度清掉了，step 无梯度可用，"
                     "模型永远不变。请把 zero_grad 放在 backward 之前（迭代开始处），backward 之后紧接着 step。",
                     order=order, key="zero-grad-between-backward-and-step")
            fail("When optimizer.step() ran (iteration {k}) every gradient was zero or None ({order}): step must use "
                 "the gradients backward just computed.",
                 "第 {k} 次迭代 optimizer.step() 运行时所有梯度都是 0 或 None（{order}）：step 必须使用 backward 刚算出的梯度。",
                 k=k, order=order, key="step-without-gradients")


def _expect_trajectory(kind: str, inputs, seen: dict) -> None:
    spec = LOOPS[kind]
    fn = spec["fn"]
    want, final = reference_training(kind, *inputs)
    got = seen["losses"]
    if len(got) != len(want):
        fail("{fn}(..., epochs={epochs}) ran {got} backward passes, expected one per epoch ({epochs}).",
             "{fn}(..., epochs={epochs}) 运行了 {got} 次 backward，应每个 epoch 一次（共 {epochs} 次）。",
             fn=fn, epochs=spec["epochs"], got=len(got), key="wrong-epochs")
    for k, (g, w) in enumerate(zip(got, want), start=1):
        if not matches(g, w, rtol=1e-3, atol=1e-5):  # 40 epochs apart from the reference: float32 rounding adds up
            if max(got) - min(got) <= 1e-6 * abs(got[0]):
                trend = Text("stayed at {a}", "一直停在 {a}", a=fmt(got[0]))
            elif not math.isfinite(got[-1]) or got[-1] > got[0]:
                trend = Text("grew from {a} to {b}", "从 {a} 增大到 {b}", a=fmt(got[0]), b=fmt(got[-1]))
            else:
                trend = Text("went from {a} to {b}", "从 {a} 变为 {b}", a=fmt(got[0]), b=fmt(got[-1]))
            fail("The training goes wrong from epoch {k}: loss {g}, while correct full-batch SGD gives {w}. Your loss "
                 "{trend} in {n} epochs; correct training goes from {w0} to {w1}.",
                 "训练从第 {k} 个 epoch 开始出错：损失为 {g}，正确的全批量 SGD 应为 {w}。你的损失在 {n} 个 epoch 中{trend}；"
                 "正确训练是从 {w0} 到 {w1}。",
                 k=k, g=fmt(g), w=fmt(w), trend=trend, n=len(got), w0=fmt(want[0]), w1=fmt(want[-1]),
                 key="wrong-trajectory")
    for p, q in zip(seen["final"], final):
        if not matches(p, q, rtol=1e-3, atol=1e-5):
            fail("The loss curve is right, but the model's final parameters are not those of correct SGD: is there "
                 "an extra step or update after the last epoch?",
                 "损失曲线正确，但模型最终的参数与正确的 SGD 不同：最后一个 epoch 之后是否多了一次 step 或更新？",
                 key="extra-update")
    if not want[-1] < 0.5 * want[0]:  # pragma: no cover - guards the check's own data
        raise AssertionError("the reference training did not converge: the check's data are wrong")


def _expect_losses_returned(kind: str, seen: dict) -> None:
    spec = LOOPS[kind]
    fn, losses = spec["fn"], seen["returned"]
    if losses is None:
        fail("{fn} returned None: did you remove `return losses`?", "{fn} 返回了 None：是不是删掉了 `return losses`？",
             fn=fn, key="returned-none")
    if not isinstance(losses, (list, tuple)) or len(losses) != spec["epochs"]:
        fail("{fn} should return a list with one loss per epoch ({epochs}), got {got}.",
             "{fn} 应返回一个列表，每个 epoch 一个损失（共 {epochs} 个），实际得到{got}。",
             fn=fn, epochs=spec["epochs"], got=describe(losses), key="wrong-return")
    for v in losses:
        if isinstance(v, torch.Tensor) and tensor_info(v).get("requires_grad"):
            fail("{fn} collects loss tensors, which keep every iteration's graph alive: append loss.item().",
                 "{fn} 收集的是 loss tensor，会让每次迭代的计算图都留在内存里：请 append loss.item()。",
                 fn=fn, key="loss-tensor-returned")
        if not is_number(v, (int, float)):
            fail("{fn} should return Python floats (loss.item()), found {got}.",
                 "{fn} 应返回 Python float（loss.item()），却发现了{got}。", fn=fn, got=describe(v), key="not-a-float")
    for g, v in zip(seen["losses"], losses):
        if not matches(v, g, equal_nan=True):  # an inf loss returned as it was backpropagated is that loss
            fail("{fn} returned losses that differ from the losses it backpropagated ({v} vs {g}): append loss.item() "
                 "of the loss of each epoch.",
                 "{fn} 返回的损失与它反向传播的损失不同（{v} 与 {g}）：请 append 每个 epoch 的 loss.item()。",
                 fn=fn, v=fmt(v), g=fmt(g), key="wrong-losses-returned")


# -- the checks ----------------------------------------------------------------------------------

@per_loop("{fn} clears the old gradients before every backward and steps right after it", 2.5,
          "{fn} 在每次 backward 之前清除旧梯度，并在 backward 之后立即 step")
def test_fixed(submission, rng, kind):
    expect_fixed(kind, run(submission, rng, kind)[1])


@per_loop("{fn} trains like correct full-batch SGD and converges", 2,
          "{fn} 的训练与正确的全批量 SGD 一致并收敛", depends="fixed")
def test_trajectory(submission, rng, kind):
    inputs, seen = run(submission, rng, kind)
    _expect_trajectory(kind, inputs, seen)


@per_loop("{fn} returns one float loss per epoch, once the loop is fixed", 0.5,
          "修好循环后，{fn} 每个 epoch 返回一个 float 损失", depends="fixed")
def test_returns(submission, rng, kind):
    seen = run(submission, rng, kind)[1]
    try:
        expect_fixed(kind, seen)
    except CheckFailed:
        fail("The losses {fn} returns count once the loop is fixed.", "{fn} 返回的损失要等循环修好之后才计分。",
             fn=LOOPS[kind]["fn"], key="loop-not-fixed")
    _expect_losses_returned(kind, seen)
