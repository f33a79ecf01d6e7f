"""Hidden checks of ex21: gradient accumulation over k micro-batches equals one big-batch step.

The learner's loop runs in the sandbox on a Linear model with an SGD optimizer made by the probe. The probe
wraps torch.autograd.backward (was the gradient clean before this micro-batch?) and optimizer.step (how many
backward calls since the last step, and the gradients the step is about to use). The judge recomputes the
big-batch gradients and the big-batch training with torch itself, in float64. Most checks use whole groups
of k; one adds a shorter last group, and one pretends a GPU is there to see where the micro-batches go.
"""

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import CheckFailed, Text, check, expect_close, fail, is_number, matches, pretend_cuda, probe, verbatim
from grader.devices import imported_anew
from grader.gradients import expect_gradient

MOMENTUM, LR = 0.9, 0.1


# -- sandbox side ------------------------------------------------------------------------

@probe
def run_accumulated(module, weight, bias, batches, k, lr, momentum, pretend=False):
    """Run train_accumulated on a fresh Linear model and SGD optimizer; log backward and step calls (and, with
    `pretend`, what the loop put on a pretended GPU while the model stays on the CPU)."""
    model = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    params = [model.weight, model.bias]
    log = []

    def clean():
        return all(p.grad is None or not p.grad.any() for p in params)

    forwards = []  # (rows, output node) of each forward call of the model
    model.register_forward_hook(lambda _, inputs, output: forwards.append((inputs[0].shape[0], output.grad_fn)))

    def reached(roots):
        """How many of the model's forward calls the graph of this backward runs through."""
        seen, todo = set(), [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        while todo:
            node = todo.pop()
            if node is not None and node not in seen:
                seen.add(node)
                todo += [n for n, _ in node.next_functions]
        return sum(node in seen for _, node in forwards if node is not None)

    backward = torch.autograd.backward

    def backward_wrapper(*args, **kwargs):
        roots = args[0] if args else kwargs.get("tensors")
        roots = roots if isinstance(roots, (list, tuple)) else [roots]
        event = {"what": "backward", "clean": clean(), "forwards": reached(roots),
                 "zero_loss": all(isinstance(t, torch.Tensor) and not t.detach().any() for t in roots)}
        log.append(event)
        result = backward(*args, **kwargs)
        event["clean_after"] = clean()  # zero gradients from a zero loss are no reset
        return result

    step = optimizer.step

    def step_wrapper(*args, **kwargs):
        log.append({"what": "step", "grads": [None if p.grad is None else p.grad.detach().clone() for p in params],
                    "params": [p.detach().clone() for p in params]})
        return step(*args, **kwargs)

    def resets(zero_grad):
        def reset(*args, **kwargs):
            log.append({"what": "zero_grad"})
            return zero_grad(*args, **kwargs)
        return reset

    optimizer.step = step_wrapper
    optimizer.zero_grad, model.zero_grad = resets(optimizer.zero_grad), resets(model.zero_grad)
    torch.autograd.backward = backward_wrapper
    placed = []
    try:
        if pretend:
            with pretend_cuda(module) as seen:
                anew = imported_anew(module, seen) or module  # imported with the GPU there: a device chosen then too
                at_import = len(seen.calls)
                returned = anew.train_accumulated(model, optimizer, [tuple(b) for b in batches], k)
            placed = [call for call in seen.calls[at_import:] if not call.startswith("torch.cuda.")]
        else:
            returned = module.train_accumulated(model, optimizer, [tuple(b) for b in batches], k)
    finally:
        torch.autograd.backward = backward
    if isinstance(returned, list):
        returned = [float(v) if is_number(v, float) else
                    {"type": type(v).__name__, "graph": bool(getattr(v, "requires_grad", False))} for v in returned]
    else:
        returned = {"type": type(returned).__name__}
    return {"log": log, "returned": returned, "placed": placed, "forwards": len(forwards),
            "rows": max((r for r, _ in forwards), default=0), "micro": batches[0][0].shape[0] if batches else 0,
            "weight": model.weight.detach().clone(), "bias": model.bias.detach().clone()}


# -- judge side ----------------------------------------------------------------------------

def draw(rng, short=False):
    """Micro-batches of 4 samples for 2 groups of k, plus (with `short`) a last group of 1..k-1."""
    d = 3 + int(torch.randint(0, 3, (1,), generator=rng))
    o = 1 + int(torch.randint(0, 2, (1,), generator=rng))
    k = 2 + int(torch.randint(0, 3, (1,), generator=rng))
    extra = 1 + int(torch.randint(0, k - 1, (1,), generator=rng)) if short else 0
    m = 4
    true_w = torch.randn(o, d, generator=rng)
    batches = []
    for _ in range(2 * k + extra):
        x = torch.randn(m, d, generator=rng)
        batches.append((x, x @ true_w.T + 0.1 * torch.randn(m, o, generator=rng)))
    weight = 0.3 * torch.randn(o, d, generator=rng)
    bias = 0.1 * torch.randn(o, generator=rng)
    return weight, bias, batches, k


def group_sizes(n, k):
    """The number of micro-batches in each group: k, ..., k, then what is left."""
    return [min(k, n - start) for start in range(0, n, k)]


def big_batch(batches, k, g):
    """Group g's micro-batches concatenated, in float64."""
    group = batches[g * k:(g + 1) * k]
    return torch.cat([b[0] for b in group]).double(), torch.cat([b[1] for b in group]).double()


def big_batch_reference(weight, bias, batches, k, lr, momentum):
    """The same training with each group of micro-batches concatenated into one big batch, in float64:
    the gradients before each step, and the final weights."""
    model = nn.Linear(weight.shape[1], weight.shape[0]).double()
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    grads = []
    for g in range(len(group_sizes(len(batches), k))):
        x, y = big_batch(batches, k, g)
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        grads.append([model.weight.grad.clone(), model.bias.grad.clone()])
        optimizer.step()
    return grads, model.weight.detach(), model.bias.detach()


def run(submission, rng, short=False, pretend=False):
    weight, bias, batches, k = draw(rng, short)
    result = submission.probe(run_accumulated, weight, bias, batches, k, LR, MOMENTUM, pretend,
                              what=f"`train_accumulated(model, optimizer, batches[{len(batches)}], k={k})`")
    return result, (weight, bias, batches, k)


def backwards_per_step(log):
    """The number of backward calls before each step, and those after the last step."""
    counts, n = [], 0
    for event in log:
        if event["what"] == "backward":
            n += 1
        elif event["what"] == "step":
            counts.append(n)
            n = 0
    return counts, n


def step_problem(result, k, n) -> Text | None:
    """What is wrong if backward and step do not run group by group (k to 1, the last group what is left)."""
    sizes = group_sizes(n, k)
    counts, tail = backwards_per_step(result["log"])
    total = sum(counts) + tail
    values = dict(n=n, k=k, total=total, groups=len(sizes))
    if total == 0:
        return Text("train_accumulated(..., batches[{n}], k={k}) never called backward.",
                    "train_accumulated(..., batches[{n}], k={k}) 没有调用 backward。", **values)
    if total < n:
        return fewer_backwards(result, total, n)
    if counts == sizes[:-1] and tail == sizes[-1] and sizes[-1] < k:
        return Text("The last {tail} micro-batch(es), a group shorter than k={k}, were never stepped: their gradients "
                    "stayed in .grad and no update used them. A shorter last group still makes its own "
                    "optimizer.step().",
                    "最后 {tail} 个 micro-batch（比 k={k} 少的一组）没有 step：它们的梯度留在 .grad 里，没有任何更新用到它们。"
                    "较短的最后一组也要有自己的一次 optimizer.step()。", tail=tail, k=k)
    if len(counts) != len(sizes):
        return Text("optimizer.step() ran {steps} times for {n} micro-batches with k={k}: step once every k "
                    "micro-batches ({groups} steps here), after the k-th backward.",
                    "{n} 个 micro-batch、k={k} 时 optimizer.step() 运行了 {steps} 次：应每 k 个 micro-batch "
                    "调用一次（这里共 {groups} 次），在第 k 次 backward 之后。", steps=len(counts), **values)
    if counts != sizes or tail:
        first = next((c for c, s in zip(counts, sizes) if c != s), tail)
        return Text("A step came after {first} micro-batch(es) instead of k={k} (backward calls between steps: "
                    "{counts}, then {tail} after the last step): step when the k-th micro-batch of a group is done, "
                    "e.g. when (i + 1) % k == 0 (or at the last micro-batch).",
                    "有一次 step 在 {first} 个 micro-batch 之后就调用了，而不是 k={k} 个（两次 step 之间的 backward 次数："
                    "{counts}，最后一次 step 之后还有 {tail} 次）：应在一组的第 k 个 micro-batch 完成后 step，"
                    "例如当 (i + 1) % k == 0 时（或者到了最后一个 micro-batch）。", first=first, k=k, counts=counts, tail=tail)
    return None


def fewer_backwards(result, total, n) -> Text:
    """Fewer backward calls than micro-batches: what the probe saw of why (losses joined, micro-batches
    concatenated), or only that."""
    joined = max((e["forwards"] for e in result["log"] if e["what"] == "backward"), default=0)
    values = dict(n=n, total=total, joined=joined, rows=result["rows"], micro=result["micro"],
                  forwards=result["forwards"])
    if joined > 1:
        return Text("backward ran {total} times for {n} micro-batches, and one backward went through the graphs of "
                    "{joined} micro-batches: their losses were combined before backward, so all {joined} graphs stayed "
                    "in memory together, which is what accumulation avoids. Call backward once per micro-batch, on that "
                    "micro-batch's loss.",
                    "{n} 个 micro-batch 只调用了 {total} 次 backward，其中一次 backward 经过了 {joined} 个 micro-batch "
                    "的计算图：它们的 loss 在 backward 之前被合在了一起，于是这 {joined} 个计算图同时占用内存，而这正是"
                    "梯度累积要避免的。请对每个 micro-batch 的 loss 各调用一次 backward。", **values)
    if result["rows"] > result["micro"]:
        return Text("backward ran {total} times for {n} micro-batches, and the model ran on {rows} rows at once where "
                    "a micro-batch has {micro}: concatenating micro-batches builds the big batch's graph, the memory "
                    "accumulation avoids. Call forward and backward once per micro-batch, on that micro-batch.",
                    "{n} 个 micro-batch 只调用了 {total} 次 backward，而且模型一次处理了 {rows} 行，而一个 micro-batch "
                    "只有 {micro} 行：把 micro-batch 拼接起来会建出整个大 batch 的计算图，占用的正是梯度累积要省下的"
                    "内存。请对每个 micro-batch 各做一次前向和 backward。", **values)
    return Text("backward ran {total} times for {n} micro-batches (the model ran {forwards} times): call it once per "
                "micro-batch, on that micro-batch's loss, so that every micro-batch adds its gradient to .grad.",
                "{n} 个 micro-batch 只调用了 {total} 次 backward（模型运行了 {forwards} 次）：请对每个 micro-batch 的 "
                "loss 各调用一次，这样每个 micro-batch 的梯度都会加到 .grad 上。", **values)


STEP_KEYS = {"never called backward": "no-backward", "backward ran": "single-backward",
             "never stepped": "last-group-dropped", "optimizer.step() ran": "wrong-step-count"}


def step_key(problem: Text) -> str:
    english = problem.render("en")
    return next((key for needle, key in STEP_KEYS.items() if needle in english), "step-off-by-one")


def reset_problem(result, first_group_only=False) -> tuple[Text, str] | None:
    """(what is wrong, key) if the gradients are reset inside a group, or not reset between groups. A reset is what
    the probe saw: a zero_grad() call, or gradients that were there after a backward and gone before the next (all-zero
    gradients from a zero loss are no reset)."""
    position, group, reset, held = 0, 1, False, False  # backward calls since the last step; what happened since
    for event in result["log"]:
        if event["what"] == "zero_grad":
            reset = True
            continue
        if event["what"] == "step":
            if first_group_only:
                return None
            position, group = 0, group + 1
            continue
        if position > 0 and (reset or held and event["clean"]):
            return Text("The gradients were reset before micro-batch {i} of a group: a zero_grad() inside the "
                        "micro-batch loop throws away the gradients accumulated so far. Reset them only after each "
                        "optimizer.step().",
                        "在一组的第 {i} 个 micro-batch 之前梯度被清零了：在 micro-batch 循环里调用 zero_grad() "
                        "会丢掉已经累积的梯度。只在每次 optimizer.step() 之后清零。", i=position + 1), "zero-grad-in-group"
        if position == 0 and group > 1 and not event["clean"]:
            return Text("Group {group} started with the gradients of the previous group still there: backward adds to "
                        ".grad, so call optimizer.zero_grad() after each optimizer.step(), or every update mixes in the "
                        "old gradients.",
                        "第 {group} 组开始时上一组的梯度还在：backward 会累加到 .grad 上，所以每次 optimizer.step() 之后"
                        "都要调用 optimizer.zero_grad()，否则每次更新都会混入旧梯度。", group=group), "zero-grad-missing"
        position, reset, held = position + 1, False, not event["clean_after"]
    return None


def expect_step_gradient(step, want, k, size, n, zero_losses=False):
    """The gradients a step used against the big batch's, with a missing or wrong 1/size named, and the losses
    backward ran on named when they were all exactly 0."""
    if zero_losses and all(g is not None and not g.any() for g in step["grads"]):
        fail("the gradients the step used are all zero, because every loss backward ran on was exactly 0, although "
             "the micro-batches' errors are not: is each loss scaled by an integer division (1 // {k} is 0)? Divide "
             "by the group's size with `/`.",
             "step 用到的梯度全是 0，因为每次 backward 所用的 loss 都恰好是 0，而 micro-batch 的误差并不是 0："
             "是不是用整数除法缩放了每个 loss（1 // {k} 等于 0）？请用 `/` 除以这一组的大小。", k=k,
             key="loss-scaled-to-zero")
    for name, yours, expected in zip(("weight", "bias"), step["grads"], want):
        if matches(yours, expected):
            continue
        if matches(yours, expected * size):
            fail("d loss/d {name} at the step is {size} times the big batch's: each micro-batch's loss must be divided "
                 "by the number of micro-batches in its group ({size}) before backward. The gradients add up, and the "
                 "big batch's loss is their mean, not their sum.",
                 "step 时的 d loss/d {name} 是大 batch 梯度的 {size} 倍：每个 micro-batch 的 loss 在 backward 前都要除以"
                 "这一组的 micro-batch 数（{size}）。梯度会相加，而大 batch 的 loss 是它们的平均，不是总和。",
                 name=name, size=size, key="no-loss-scaling")
        if size < k and matches(yours, expected * size / k):
            fail("d loss/d {name} at the last step is {size}/{k} of the big batch's: the last group holds only {size} "
                 "micro-batch(es), and its losses were divided by k={k}. Divide by the size of the group, so the last "
                 "one's mean is a mean too.",
                 "最后一次 step 时的 d loss/d {name} 只有大 batch 梯度的 {size}/{k}：最后一组只有 {size} 个 micro-batch，"
                 "它们的 loss 却除以了 k={k}。请除以这一组的大小，这样最后一组的平均才是真正的平均。",
                 name=name, size=size, k=k, key="short-group-scaled-by-k")
        if matches(yours, expected * size / n):
            fail("d loss/d {name} at the step is {size}/{n} of the big batch's: each loss was divided by the number of "
                 "all micro-batches ({n}), not by the number in its group ({size}).",
                 "step 时的 d loss/d {name} 只有大 batch 梯度的 {size}/{n}：每个 loss 除以的是所有 micro-batch 的数量"
                 "（{n}），而不是这一组的数量（{size}）。", name=name, size=size, n=n, key="divided-by-all-batches")
        expect_gradient(yours, expected, name, rtol=1e-4, atol=1e-6)


def group_loss(batches, k, g, params):
    """The big batch's loss of group g at the given weights, in float64."""
    x, y = big_batch(batches, k, g)
    weight, bias = (p.double() for p in params)
    return float(((x @ weight.T + bias - y) ** 2).mean())


def returned_floats(result, groups):
    """The returned list of losses, once it is a list of Python floats."""
    got = result["returned"]
    if isinstance(got, dict):
        if got["type"] == "NoneType":
            fail("train_accumulated returned None: did you forget `return`? It should return a list of {groups} losses.",
                 "train_accumulated 返回了 None：是不是忘了 `return`？它应返回包含 {groups} 个 loss 的 list。",
                 groups=groups, key="returned-none")
        fail("train_accumulated should return a list of {groups} losses, got a {type}.",
             "train_accumulated 应返回包含 {groups} 个 loss 的 list，实际得到一个 {type}。", groups=groups,
             type=verbatim(got["type"]), key="not-a-list")
    bad = next((v for v in got if isinstance(v, dict)), None)
    if bad:
        graph = Text(" Keeping the loss tensor also keeps its micro-batches' graphs alive, the memory that accumulation "
                     "is meant to free.",
                     "保留 loss tensor 还会让它的 micro-batch 的计算图一直占着内存，而梯度累积本来就是为了释放这些内存。")
        fail("Each returned loss should be a Python float, got a {type}: take loss.item().{graph}",
             "返回的每个 loss 都应是 Python float，实际得到一个 {type}：请用 `loss.item()`。{graph}",
             type=verbatim(bad["type"]), graph=graph if bad["graph"] else "", key="not-a-float")
    return got


def loss_problem(value, batches, k, g, size, params) -> tuple[Text, str] | None:
    """What is wrong with the loss returned for group g (of `size` micro-batches), whose step started from
    `params`: None when it is that group's big-batch loss."""
    want = group_loss(batches, k, g, params)
    if matches(value, want):
        return None
    values = dict(g=g, got=value, want=want, k=k, size=size)
    if size < k and matches(value, want * size / k):
        return Text("Loss {g} is {got:.4g}, {size}/{k} of the big batch's loss {want:.4g}: the last group holds only "
                    "{size} micro-batch(es), and its losses were divided by k={k}. Its loss is the mean of its own {size}.",
                    "第 {g} 个 loss 为 {got:.4g}，只有大 batch loss {want:.4g} 的 {size}/{k}：最后一组只有 {size} 个 "
                    "micro-batch，它们的 loss 却除以了 k={k}。它的 loss 是这 {size} 个的平均。", **values), \
            "short-group-scaled-by-k"
    if matches(value, want / size):
        return Text("Loss {g} is {got:.4g}, the big batch's loss divided by {size} ({want:.4g}): report the unscaled "
                    "loss (add up the scaled micro-batch losses, or average the unscaled ones).",
                    "第 {g} 个 loss 为 {got:.4g}，是大 batch 的 loss（{want:.4g}）除以 {size}：请返回未缩放的 loss"
                    "（把缩放后的 micro-batch loss 加起来，或对未缩放的求平均）。", **values), "loss-scaled-twice"
    last_x, last_y = batches[g * k + size - 1]
    w, b = (p.double() for p in params)
    last = float(((last_x.double() @ w.T + b - last_y.double()) ** 2).mean())
    also = matches(value, last)
    return Text("Loss {g} should be the big batch's loss before its step, {want:.4g} (the mean of the group's {size} "
                "micro-batch losses), got {got:.4g}.{also}",
                "第 {g} 个 loss 应为该组 step 之前大 batch 的 loss，即 {want:.4g}（该组 {size} 个 micro-batch loss 的平均），"
                "实际为 {got:.4g}。{also}", **values,
                also=Text(" That is the loss of the group's last micro-batch only.", "这只是该组最后一个 micro-batch 的 loss。")
                if also else ""), "last-micro-batch-loss" if also else "wrong-group-loss"


def step_starts(result, weight, bias, k, n):
    """The weights each group's step started from, as the learner's loop had them (so a wrong update is not
    counted twice); only the first group's when the loop's structure is off."""
    if step_problem(result, k, n) is not None:
        return [[weight, bias]]
    return [e["params"] for e in result["log"] if e["what"] == "step"]


@check("optimizer.step() runs once every k micro-batches, after their k backward calls", points=2,
       zh="每 k 个 micro-batch 调用一次 optimizer.step()，在它们的 k 次 backward 之后")
def test_step_every_k(submission, rng):
    result, (_, _, batches, k) = run(submission, rng)
    problem = step_problem(result, k, len(batches))
    if problem:
        fail(problem, key=step_key(problem))


@check("gradients are reset once per step, not per micro-batch", points=2,
       zh="每次 step 清零一次梯度，而不是每个 micro-batch 清零一次")
def test_zero_grad_once_per_step(submission, rng):
    result, _ = run(submission, rng)
    problem = reset_problem(result)
    if problem:
        fail(problem[0], key=problem[1])


@check("the accumulated gradient equals the big batch's gradient", points=2,
       zh="累积得到的梯度等于大 batch 的梯度", depends=("step_every_k", "zero_grad_once_per_step"))
def test_accumulated_gradient(submission, rng):
    result, (weight, bias, batches, k) = run(submission, rng)
    steps = [e for e in result["log"] if e["what"] == "step"]
    if not steps:
        fail("optimizer.step() was never called.", "没有调用 optimizer.step()。", key="no-step")
    grads, _, _ = big_batch_reference(weight, bias, batches, k, LR, MOMENTUM)
    if all(matches(yours, want) for yours, want in zip(steps[0]["grads"], grads[0])):
        return
    counts, tail = backwards_per_step(result["log"])
    if sum(counts) + tail < len(batches):
        fail(Text("The first step's gradient is not the big batch's. {problem}", "第一次 step 用的梯度不是大 batch 的梯度。"
                  "{problem}", problem=fewer_backwards(result, sum(counts) + tail, len(batches))), key="single-backward")
    if counts[0] != k:
        fail("The first optimizer.step() came after {c} backward call(s) instead of k={k}, and its gradient is not the "
             "big batch's: step once all k micro-batches of the group are done.",
             "第一次 optimizer.step() 在 {c} 次 backward 之后就调用了，而不是 k={k} 次，它用的梯度也不是大 batch 的梯度："
             "请在这一组的 k 个 micro-batch 都完成之后再 step。", c=counts[0], k=k, key="step-off-by-one")
    problem = reset_problem(result, first_group_only=True)
    if problem:
        fail(Text("The first step's gradient is not the big batch's. {problem}", "第一次 step 用的梯度不是大 batch 的梯度。"
                  "{problem}", problem=problem[0]), key=problem[1])
    first = [e for e in result["log"][:result["log"].index(steps[0])] if e["what"] == "backward"]
    expect_step_gradient(steps[0], grads[0], k, k, len(batches), bool(first) and all(e["zero_loss"] for e in first))


@check("after training, the weights equal big-batch training", points=1,
       zh="训练结束后，权重与用大 batch 训练的结果一致",
       depends=("step_every_k", "zero_grad_once_per_step", "accumulated_gradient"))
def test_weights(submission, rng):
    result, (weight, bias, batches, k) = run(submission, rng)
    _, want_w, want_b = big_batch_reference(weight, bias, batches, k, LR, MOMENTUM)
    if matches(result["weight"], want_w) and matches(result["bias"], want_b):
        return
    problem = step_problem(result, k, len(batches))
    reset = reset_problem(result)
    if problem or reset:
        fail(Text("The weights do not match big-batch training. {problem}", "权重与大 batch 训练的结果不一致。{problem}",
                  problem=problem or reset[0]), key=step_key(problem) if problem else reset[1])
    if matches(result["weight"], weight):
        fail("The weights did not change: is optimizer.step() called?", "权重没有变化：调用 optimizer.step() 了吗？",
             key="no-update")
    n = len(batches)
    for g, step in enumerate(e for e in result["log"] if e["what"] == "step"):  # at the learner's own weights
        group = batches[g * k:(g + 1) * k]
        want = big_batch_reference(*step["params"], group, k, LR, MOMENTUM)[0][0]
        if not all(matches(yours, expected) for yours, expected in zip(step["grads"], want)):
            expect_step_gradient(step, want, k, len(group), n)
    try:
        expect_close(result["weight"], want_w, "model.weight", rtol=1e-4, atol=1e-5)
        expect_close(result["bias"], want_b, "model.bias", rtol=1e-4, atol=1e-5)
    except CheckFailed as wrong:
        fail(wrong.text + Text(" Steps and resets happen at the right times and every step used its big batch's "
                               "gradient, so something besides optimizer.step() changed the weights or the optimizer.",
                               "step 和清零的时机都对，每次 step 用的也都是大 batch 的梯度，所以是 optimizer.step() "
                               "之外的什么改动了权重或优化器。"), key="wrong-update")


@check("returns one loss per optimizer step: the big batch's loss", points=1,
       zh="每次 optimizer.step() 返回一个 loss：大 batch 的 loss", depends="step_every_k")
def test_returned_losses(submission, rng):
    result, (weight, bias, batches, k) = run(submission, rng)
    n, sizes = len(batches), group_sizes(len(batches), k)
    got = returned_floats(result, len(sizes))
    if len(got) != len(sizes):
        more = Text(" One loss per micro-batch? Return one loss per optimizer step, the mean of its micro-batch losses.",
                    "是不是每个 micro-batch 返回了一个？应每次 optimizer.step() 返回一个，即这一组 micro-batch loss 的平均。") \
            if len(got) == n else ""
        fail("{n} micro-batches with k={k} make {groups} steps, so {groups} losses; got {got}.{more}",
             "{n} 个 micro-batch、k={k} 共 {groups} 次 step，应返回 {groups} 个 loss；实际为 {got} 个。{more}",
             n=n, k=k, groups=len(sizes), got=len(got), more=more, key="wrong-loss-count")
    for g, params in enumerate(step_starts(result, weight, bias, k, n)):
        problem = loss_problem(got[g], batches, k, g, sizes[g], params)
        if problem:
            fail(problem[0], key=problem[1])


@check("a shorter last group makes its own step, as its big batch would", points=1,
       zh="较短的最后一组也有自己的一次 step，和它的大 batch 一样",
       depends=("step_every_k", "zero_grad_once_per_step", "accumulated_gradient", "returned_losses"))
def test_short_last_group(submission, rng):
    result, (_, _, batches, k) = run(submission, rng, short=True)
    n, sizes = len(batches), group_sizes(len(batches), k)
    steps = [e for e in result["log"] if e["what"] == "step"]
    right = False
    if len(steps) == len(sizes):  # the last step's gradient, at the learner's own weights before that step
        want = big_batch_reference(*steps[-1]["params"], batches[n - sizes[-1]:], k, LR, MOMENTUM)[0][0]
        right = all(matches(yours, expected) for yours, expected in zip(steps[-1]["grads"], want))
    if not right:
        problem = step_problem(result, k, n)
        if problem:
            fail(problem, key=step_key(problem))
        expect_step_gradient(steps[-1], want, k, sizes[-1], n)
    got = result["returned"]
    if not (isinstance(got, list) and all(is_number(v, float) for v in got)):
        return  # what is returned is judged by the check above
    if len(got) == len(sizes) - 1:
        fail("train_accumulated returned {got} losses for {groups} steps: the last, shorter group's loss is missing.",
             "train_accumulated 在 {groups} 次 step 之后只返回了 {got} 个 loss：缺少最后那个较短的组的 loss。",
             got=len(got), groups=len(sizes), key="last-group-loss-missing")
    starts = [e["params"] for e in steps]  # one step per group, as judged above
    if len(got) == len(sizes) and not any(loss_problem(got[g], batches, k, g, k, starts[g]) for g in range(len(got) - 1)):
        problem = loss_problem(got[-1], batches, k, len(got) - 1, sizes[-1], starts[-1])  # whole groups judged above
        if problem:
            fail(problem[0], key=problem[1])


@check("train_accumulated leaves the micro-batches where the model is", points=1,
       zh="train_accumulated 让 micro-batch 留在模型所在的设备上")
def test_stays_on_model_device(submission, rng):
    result, _ = run(submission, rng, pretend=True)
    if result["placed"]:
        fail("With a GPU available, train_accumulated moved data to it ({calls}) while the model is on the CPU: the "
             "forward then mixes devices. Use the model's device (next(model.parameters()).device), "
             "whatever torch.cuda.is_available() says.",
             "在有 GPU 的情况下，train_accumulated 把数据搬到了 GPU 上（{calls}），而模型在 CPU 上：前向计算就会混用设备。"
             "请使用模型所在的设备（`next(model.parameters()).device`），不管 `torch.cuda.is_available()` 返回什么。",
             calls=", ".join(dict.fromkeys(result["placed"])), key="hard-coded-cuda")
