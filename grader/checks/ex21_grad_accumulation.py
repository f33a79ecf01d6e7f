"""Hidden checks of ex21: gradient accumulation over k micro-batches equals one big-batch step.

The learner's loop runs in the sandbox on a Linear model with an SGD optimizer made by the probe. The probe
wraps torch.autograd.backward (was the gradient clean before this micro-batch?) and optimizer.step (how many
backward calls since the last step, and the gradients the step is about to use). The judge recomputes the
big-batch gradients and the big-batch training with torch itself, in float64.
"""

import traceback

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import CheckFailed, check, expect_close, fail, probe
from grader.gradients import expect_gradient

MOMENTUM, LR = 0.9, 0.1


# -- sandbox side ------------------------------------------------------------------------

def _learner_frames(exc, filename):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    return [f"line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-2:]]


@probe
def run_accumulated(module, weight, bias, batches, k, lr, momentum):
    """Run train_accumulated on a fresh Linear model and SGD optimizer; log backward and step calls."""
    model = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    params = [model.weight, model.bias]
    log = []

    def clean():
        return all(p.grad is None or not p.grad.any() for p in params)

    backward = torch.autograd.backward

    def backward_wrapper(*args, **kwargs):
        log.append({"what": "backward", "clean": clean()})
        return backward(*args, **kwargs)

    step = optimizer.step

    def step_wrapper(*args, **kwargs):
        log.append({"what": "step", "grads": [None if p.grad is None else p.grad.detach().clone() for p in params],
                    "params": [p.detach().clone() for p in params]})
        return step(*args, **kwargs)

    optimizer.step = step_wrapper
    result = {"log": log, "error": None, "returned": None}
    torch.autograd.backward = backward_wrapper
    try:
        returned = module.train_accumulated(model, optimizer, [tuple(b) for b in batches], k)
    except Exception as exc:  # noqa: BLE001 - the log says how far it got
        if isinstance(exc, NotImplementedError):
            raise
        result["error"] = {"type": type(exc).__name__, "message": str(exc)[:300],
                           "frames": _learner_frames(exc, getattr(module, "__file__", ""))}
        returned = None
    finally:
        torch.autograd.backward = backward
    if isinstance(returned, (list, tuple)):
        values = []
        for v in returned:
            if isinstance(v, torch.Tensor) and v.numel() == 1:
                v = float(v.detach().reshape(()))
            values.append(v if isinstance(v, (int, float)) and not isinstance(v, bool) else f"a {type(v).__name__}")
        result["returned"] = values
    elif isinstance(returned, torch.Tensor) and returned.dim() == 1:
        result["returned"] = [float(v) for v in returned.detach()]
    else:
        result["returned"] = f"a {type(returned).__name__}"
    result["weight"] = model.weight.detach().clone()
    result["bias"] = model.bias.detach().clone()
    return result


# -- judge side ----------------------------------------------------------------------------

def draw(rng, groups=2):
    d = 3 + int(torch.randint(0, 3, (1,), generator=rng))
    o = 1 + int(torch.randint(0, 2, (1,), generator=rng))
    k = 2 + int(torch.randint(0, 3, (1,), generator=rng))
    m = 4
    true_w = torch.randn(o, d, generator=rng)
    batches = []
    for _ in range(groups * k):
        x = torch.randn(m, d, generator=rng)
        batches.append((x, x @ true_w.T + 0.1 * torch.randn(m, o, generator=rng)))
    weight = 0.3 * torch.randn(o, d, generator=rng)
    bias = 0.1 * torch.randn(o, generator=rng)
    return weight, bias, batches, k


def big_batch_reference(weight, bias, batches, k, lr, momentum):
    """The same training with each group of k micro-batches concatenated into one big batch, in float64:
    the loss and the gradients before each step, and the final weights."""
    model = nn.Linear(weight.shape[1], weight.shape[0]).double()
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    losses, grads = [], []
    for g in range(0, len(batches), k):
        x = torch.cat([b[0] for b in batches[g:g + k]]).double()
        y = torch.cat([b[1] for b in batches[g:g + k]]).double()
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        losses.append(float(loss))
        grads.append([model.weight.grad.clone(), model.bias.grad.clone()])
        optimizer.step()
    return losses, grads, model.weight.detach(), model.bias.detach()


def run(submission, rng, groups=2):
    weight, bias, batches, k = draw(rng, groups)
    result = submission.probe(run_accumulated, weight, bias, batches, k, LR, MOMENTUM,
                              what=f"`train_accumulated(model, optimizer, batches[{len(batches)}], k={k})`")
    reference = big_batch_reference(weight, bias, batches, k, LR, MOMENTUM)
    return result, reference, (weight, bias, batches, k)


def fail_on_error(result, k, n):
    err = result["error"]
    if err:
        where = f" ({'; '.join(err['frames'])})" if err["frames"] else ""
        fail(f"train_accumulated(model, optimizer, batches[{n}], k={k}) raised {err['type']}: {err['message']}{where}",
             f"train_accumulated(model, optimizer, batches[{n}], k={k}) 抛出了异常 {err['type']}：{err['message']}{where}")


def backwards_per_step(log):
    """The number of backward calls before each step, and those after the last step."""
    counts, n = [], 0
    for event in log:
        if event["what"] == "backward":
            n += 1
        else:
            counts.append(n)
            n = 0
    return counts, n


def step_problem(result, k, n):
    """(en, zh) if backward and step do not run k-to-1, else None."""
    groups = n // k
    counts, tail = backwards_per_step(result["log"])
    total = sum(counts) + tail
    if total == 0:
        return (f"train_accumulated(..., batches[{n}], k={k}) never called backward.",
                f"train_accumulated(..., batches[{n}], k={k}) 没有调用 backward。")
    if total < n:
        return (f"backward ran {total} times for {n} micro-batches: call it once per micro-batch, on that "
                "micro-batch's loss. One backward per micro-batch is what frees each micro-batch's graph; summing "
                "the losses first keeps all k graphs in memory, which is what accumulation avoids.",
                f"{n} 个 micro-batch 只调用了 {total} 次 backward：请对每个 micro-batch 的 loss 各调用一次。"
                "每个 micro-batch 一次 backward，才能及时释放它的计算图；先把 loss 加起来会让 k 个计算图同时占用内存，"
                "而这正是梯度累积要避免的。")
    if len(counts) != groups:
        return (f"optimizer.step() ran {len(counts)} times for {n} micro-batches with k={k}: step once every k "
                f"micro-batches ({groups} steps here), after the k-th backward.",
                f"{n} 个 micro-batch、k={k} 时 optimizer.step() 运行了 {len(counts)} 次：应每 k 个 micro-batch "
                f"调用一次（这里共 {groups} 次），在第 k 次 backward 之后。")
    if counts != [k] * groups or tail:
        first = next((c for c in counts if c != k), tail)
        return (f"A step came after {first} micro-batch(es) instead of k={k} (backward calls between steps: "
                f"{counts}, then {tail} after the last step): step when the k-th micro-batch of a group is done, "
                "e.g. when (i + 1) % k == 0.",
                f"有一次 step 在 {first} 个 micro-batch 之后就调用了，而不是 k={k} 个（两次 step 之间的 backward 次数："
                f"{counts}，最后一次 step 之后还有 {tail} 次）：应在一组的第 k 个 micro-batch 完成后 step，"
                "例如当 (i + 1) % k == 0 时。")
    return None


def reset_problem(result, first_group_only=False):
    """(en, zh) if the gradients are reset inside a group, or not reset between groups, else None."""
    position, group = 0, 1  # backward calls since the last step
    for event in result["log"]:
        if event["what"] == "step":
            if first_group_only:
                return None
            position, group = 0, group + 1
            continue
        if position > 0 and event["clean"]:
            return (f"The gradients were reset before micro-batch {position + 1} of a group: a zero_grad() inside the "
                    "micro-batch loop throws away the gradients accumulated so far. Reset them only after each "
                    "optimizer.step().",
                    f"在一组的第 {position + 1} 个 micro-batch 之前梯度被清零了：在 micro-batch 循环里调用 "
                    "zero_grad() 会丢掉已经累积的梯度。只在每次 optimizer.step() 之后清零。")
        if position == 0 and group > 1 and not event["clean"]:
            return (f"Group {group} started with the gradients of the previous group still there: backward adds to "
                    ".grad, so call optimizer.zero_grad() after each optimizer.step(), or every update mixes in the "
                    "old gradients.",
                    f"第 {group} 组开始时上一组的梯度还在：backward 会累加到 .grad 上，所以每次 optimizer.step() 之后"
                    "都要调用 optimizer.zero_grad()，否则每次更新都会混入旧梯度。")
        position += 1
    return None


@check("optimizer.step() runs once every k micro-batches, after their k backward calls", points=2,
       zh="每 k 个 micro-batch 调用一次 optimizer.step()，在它们的 k 次 backward 之后")
def test_step_every_k(submission, rng):
    result, _, (_, _, batches, k) = run(submission, rng)
    fail_on_error(result, k, len(batches))
    problem = step_problem(result, k, len(batches))
    if problem:
        fail(*problem)


@check("gradients are reset once per step, not per micro-batch", points=2,
       zh="每次 step 清零一次梯度，而不是每个 micro-batch 清零一次")
def test_zero_grad_once_per_step(submission, rng):
    result, _, (_, _, batches, k) = run(submission, rng)
    fail_on_error(result, k, len(batches))
    problem = reset_problem(result)
    if problem:
        fail(*problem)


@check("the accumulated gradient equals the big batch's gradient", points=2,
       zh="累积得到的梯度等于大 batch 的梯度")
def test_accumulated_gradient(submission, rng):
    result, (_, grads, _, _), (_, _, batches, k) = run(submission, rng)
    n, groups = len(batches), len(batches) // k
    fail_on_error(result, k, n)
    steps = [e for e in result["log"] if e["what"] == "step"]
    if not steps:
        fail("optimizer.step() was never called.", "没有调用 optimizer.step()。")
    counts, _ = backwards_per_step(result["log"])
    if counts[0] != k:
        fail(f"The first optimizer.step() came after {counts[0]} backward call(s) instead of k={k}: its gradient "
             f"covers {counts[0]} micro-batch(es), not the big batch of k.",
             f"第一次 optimizer.step() 在 {counts[0]} 次 backward 之后就调用了，而不是 k={k} 次：它的梯度只覆盖了 "
             f"{counts[0]} 个 micro-batch，而不是 k 个组成的大 batch。")
    problem = reset_problem(result, first_group_only=True)
    if problem:
        fail("The first step's gradient is not the big batch's. " + problem[0],
             "第一次 step 用的梯度不是大 batch 的梯度。" + problem[1])
    hints = {
        f"factor {k}": (f"Each micro-batch's loss must be divided by k={k} before backward: the k gradients add up, "
                        "and the big batch's loss is their mean, not their sum.",
                        f"每个 micro-batch 的 loss 在 backward 前都要除以 k={k}：k 个梯度会相加，"
                        "而大 batch 的 loss 是它们的平均，不是总和。"),
        f"factor {1 / groups:.4g}": (f"Divide by k={k}, the number of micro-batches per step, not by the number of all "
                                     f"micro-batches ({n}).",
                                     f"要除以 k={k}（每次 step 的 micro-batch 数），而不是所有 micro-batch 的数量（{n}）。"),
    }
    for name, yours, want in zip(("weight", "bias"), steps[0]["grads"], grads[0]):
        expect_gradient(yours, want, name, rtol=1e-4, atol=1e-6, hints=hints)


@check("after training, the weights equal big-batch training", points=2,
       zh="训练结束后，权重与用大 batch 训练的结果一致")
def test_weights(submission, rng):
    result, (_, _, want_w, want_b), (weight, _, batches, k) = run(submission, rng)
    fail_on_error(result, k, len(batches))
    problem = step_problem(result, k, len(batches)) or reset_problem(result)
    if problem:
        fail("The weights cannot match big-batch training. " + problem[0],
             "权重不可能与大 batch 训练的结果一致。" + problem[1])
    if torch.allclose(result["weight"], weight):
        fail("The weights did not change: is optimizer.step() called?", "权重没有变化：调用 optimizer.step() 了吗？")
    try:
        expect_close(result["weight"], want_w, "model.weight", rtol=1e-4, atol=1e-5)
        expect_close(result["bias"], want_b, "model.bias", rtol=1e-4, atol=1e-5)
    except CheckFailed as wrong:
        fail(f"{wrong.message} Steps and resets happen at the right times, so look at the size of each update: is "
             "each micro-batch's loss divided by k before backward, and nothing else changed?",
             f"{wrong.zh} step 和清零的时机都对，所以请检查每次更新的大小：backward 之前是否把每个 micro-batch 的 loss "
             "除以了 k，而没有改动别的？")


def group_loss(batches, k, g, params):
    """The big batch's loss of group g at the given weights, in float64."""
    x = torch.cat([b[0] for b in batches[g * k:(g + 1) * k]]).double()
    y = torch.cat([b[1] for b in batches[g * k:(g + 1) * k]]).double()
    weight, bias = (p.double() for p in params)
    return float(((x @ weight.T + bias - y) ** 2).mean())


@check("returns one loss per optimizer step: the big batch's loss", points=2,
       zh="每次 optimizer.step() 返回一个 loss：大 batch 的 loss")
def test_returned_losses(submission, rng):
    result, _, (weight, bias, batches, k) = run(submission, rng)
    n, groups = len(batches), len(batches) // k
    fail_on_error(result, k, n)
    got = result["returned"]
    if isinstance(got, str):
        fail(f"train_accumulated should return a list of {groups} losses, got {got}"
             + (": did you forget `return`?" if got == "a NoneType" else "."),
             f"train_accumulated 应返回包含 {groups} 个 loss 的 list，实际得到 {got}"
             + ("：是不是忘了 `return`？" if got == "a NoneType" else "。"))
    bad = next((v for v in got if isinstance(v, str)), None)
    if bad:
        fail(f"Each returned loss should be a number (use loss.item()), got {bad}.",
             f"返回的每个 loss 都应是一个数（用 loss.item()），实际得到 {bad}。")
    if len(got) != groups:
        more = (" One loss per micro-batch? Return one loss per optimizer step, the mean of its k micro-batch losses."
                if len(got) == n else "")
        more_zh = ("是不是每个 micro-batch 返回了一个？应每次 optimizer.step() 返回一个，即 k 个 micro-batch loss 的平均。"
                   if len(got) == n else "")
        fail(f"{n} micro-batches with k={k} make {groups} steps, so {groups} losses; got {len(got)}.{more}",
             f"{n} 个 micro-batch、k={k} 共 {groups} 次 step，应返回 {groups} 个 loss；实际为 {len(got)} 个。{more_zh}")
    # The expected loss of each group at the weights the learner's loop had before that group's step (so a
    # wrong update is not counted twice); only the first group when the loop's structure is off.
    steps = [e for e in result["log"] if e["what"] == "step"]
    structured = step_problem(result, k, n) is None
    starts = [s["params"] for s in steps] if structured else [[weight, bias]]
    for g, params in enumerate(starts):
        want, value = group_loss(batches, k, g, params), got[g]
        if abs(value - want) <= 1e-4 * abs(want) + 1e-6:
            continue
        last_x, last_y = batches[(g + 1) * k - 1]
        w, b = (p.double() for p in params)
        last = float(((last_x.double() @ w.T + b - last_y.double()) ** 2).mean())
        if abs(value - want / k) <= 1e-4 * abs(want) + 1e-6:
            fail(f"Loss {g} is {value:.4g}, the big batch's loss divided by k={k} ({want:.4g}): report the unscaled "
                 "loss (add up the k scaled losses, or average the k micro-batch losses).",
                 f"第 {g} 个 loss 为 {value:.4g}，是大 batch 的 loss（{want:.4g}）除以 k={k}：请返回未缩放的 loss"
                 "（把 k 个缩放后的 loss 加起来，或对 k 个 micro-batch 的 loss 求平均）。")
        also = abs(value - last) <= 1e-4 * abs(last) + 1e-6
        fail(f"Loss {g} should be the big batch's loss before its step, {want:.4g} (the mean of the group's k={k} "
             f"micro-batch losses), got {value:.4g}."
             + (" That is the loss of the group's last micro-batch only." if also else ""),
             f"第 {g} 个 loss 应为该组 step 之前大 batch 的 loss，即 {want:.4g}（该组 k={k} 个 micro-batch loss 的平均），"
             f"实际为 {value:.4g}。" + ("这只是该组最后一个 micro-batch 的 loss。" if also else ""))
