"""Hidden checks of ex04: leaves and requires_grad, retain_grad, gradient accumulation, retain_graph,
backward(gradient=v), no_grad for updates and inference.

Every learner function runs through the `run` probe, which hands back the value, the arguments as
they are after the call (in-place updates, w.grad) and, when asked, how often a given helper was
called. Autograd's own errors come back as the learner's errors and are explained with `explain`."""

import contextlib

import torch

from grader.checking import (Text, check, describe, expect_close, expect_number, expect_tensor, explain, fail,
                             is_number, matches, patched, probe, tensor_info)
from grader.devices import expect_cpu_only
from grader.gradients import expect_gradient

# -- sandbox side ----------------------------------------------------------------------------


def _counting(original, calls: list):
    def counted(*a, **k):
        calls[0] += 1
        return original(*a, **k)
    return counted


@probe
def run(module, name, args, count=None):
    """Call module.<name>(*args). Returns the value, the args after the call, their .grad ("grads"), how often
    autograd was entered ("entries": backward, which Tensor.backward goes through too, and grad) and, with `count`,
    "calls": how often module.<count> was called."""
    fn = getattr(module, name)
    grads = lambda: [getattr(a, "grad", None) for a in args]  # noqa: E731 - what backward left in the inputs
    calls, entries = [0], {"backward": [0], "grad": [0]}
    with contextlib.ExitStack() as stack:
        for entry, counter in entries.items():
            stack.enter_context(patched(module, torch.autograd, entry,
                                        _counting(getattr(torch.autograd, entry), counter)))
        if count is not None:
            stack.enter_context(patched(module, module, count, _counting(getattr(module, count), calls)))
        value = fn(*args)
    return {"value": value, "args": list(args), "calls": calls[0], "grads": grads(),
            "entries": {entry: counter[0] for entry, counter in entries.items()}}


# -- judge side ------------------------------------------------------------------------------

def arg_text(value) -> str:
    if isinstance(value, torch.Tensor):
        return str(list(value.shape))
    if isinstance(value, list):
        return f"=list[{len(value)}]"
    return f"={value!r}"


def call(submission, name, named: dict, causes: dict | None = None, key: str | None = None,
         count: str | None = None):
    """Run the learner's `name` with the named arguments; an error whose text holds a key of `causes` fails with
    that cause. Returns (what, reply)."""
    what = f"`{name}({', '.join(k + arg_text(v) for k, v in named.items())})`"
    with explain(causes or {}, key=key):
        return what, submission.probe(run, name, list(named.values()), count, what=what)


def leaf(t: torch.Tensor) -> torch.Tensor:
    """A float64 leaf copy of a judge tensor, for computing expectations with autograd."""
    return t.detach().double().clone().requires_grad_(True)


def grad_of(loss_fn, w: torch.Tensor) -> torch.Tensor:
    w64 = leaf(w)
    return torch.autograd.grad(loss_fn(w64), w64)[0]


def batch_loss(w, x, y):
    return ((x.double() @ w - y.double()) ** 2).mean()


def draw_batches(rng, d=3, sizes=(4, 4, 2)):
    """Batches of uneven sizes, as a DataLoader gives them: the last one is short."""
    return [(torch.randn(n, d, generator=rng), torch.randn(n, generator=rng)) for n in sizes]


def param(rng, d=3) -> torch.Tensor:
    return torch.randn(d, generator=rng).requires_grad_(True)  # arrives in the sandbox as a leaf


def same_storage(tensors) -> bool:
    """Whether the tensors were one and the same memory in the sandbox (views of a stack do not count)."""
    places = [(tensor_info(t).get("storage"), tensor_info(t).get("offset")) for t in tensors]
    return len(places) > 1 and all(p[0] for p in places) and len(set(places)) == 1


def expect_pair(value, what, names: str):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail("{what} should return two values, {names}, got {got}.", "{what} 应返回两个值 {names}，实际得到 {got}。",
             what=what, names=names, got=describe(value), key="not-a-pair")
    return value


def swapped(what, names):
    fail("{what} returned its two values in the wrong order: the statement asks for {names}.",
         "{what} 返回的两个值顺序反了：题目要求的是 {names}。", what=what, names=names, key="swapped-outputs")


GRAD_ATOL = 1e-5
NO_GRAD_HINT = ("Is backward called, and on the right loss?", "有没有调用 backward，调用在正确的 loss 上吗？")
SUM_NOT_MEAN = {"factor N": ("A sum where the mean belongs?", "是不是把 mean 写成了 sum？"),
                "factor 1/N": ("A mean where the sum belongs, or an extra division by N?",
                               "是不是把 sum 写成了 mean，或者多除了一次 N？")}


# -- leaves and requires_grad ----------------------------------------------------------------

@check("make_param returns a float leaf that requires grad", points=1, zh="make_param 返回需要梯度的浮点叶子张量")
def test_make_param(submission, rng):
    for n in (6, 1):  # a single value too: the result stays 1-D
        values = torch.randint(-9, 10, (n,), generator=rng).tolist()
        scale = round(float(torch.rand((), generator=rng)) * 2 + 0.25, 3)
        what, reply = call(submission, "make_param", {"values": values, "scale": scale}, key="int-requires-grad",
                           causes={"floating point": (
                               "torch.tensor of a list of ints is an integer tensor, and only floating-point tensors "
                               "can require grad: make it a float tensor first.",
                               "由整数列表创建的 torch.tensor 是整数类型，而只有浮点类型的 tensor 才能 requires_grad："
                               "先把它变成浮点 tensor。")})
        value = expect_tensor(reply["value"], what, shape=[n], floating=True)
        info = tensor_info(value)
        if not info.get("requires_grad"):
            fail("{what} does not require grad (requires_grad=False): backward would never fill its .grad.",
                 "{what} 不需要梯度（requires_grad=False）：backward 永远不会填充它的 .grad。",
                 what=what, key="no-requires-grad")
        if not info.get("is_leaf"):
            fail("{what} is not a leaf: it was made by an operation ({grad_fn}) on a tensor that already required "
                 "grad, so backward fills the .grad of that earlier tensor and this one's .grad stays None. Do the "
                 "arithmetic first, then switch requires_grad on.",
                 "{what} 不是叶子张量：它是由一个已经 requires_grad 的 tensor 经过运算（{grad_fn}）得到的，"
                 "backward 只会填充那个原始 tensor 的 .grad，它自己的 .grad 一直是 None。先做完运算，再打开 requires_grad。",
                 what=what, grad_fn=info.get("grad_fn"), key="not-a-leaf")
        expect_close(value, torch.tensor(values, dtype=torch.float64) * scale, what, atol=1e-5)
    expect_cpu_only(submission, [("make_param", [values, scale])])  # a GPU at hand changes nothing


# -- retain_grad -----------------------------------------------------------------------------

@check("hidden_grad keeps the gradient of the intermediate h", points=1, zh="hidden_grad 保留中间结果 h 的梯度")
def test_hidden_grad(submission, rng):
    n, d = 5, 3  # N != D, so swapped outputs show in their shapes
    x, w = torch.randn(n, d, generator=rng), param(rng, d)
    what, reply = call(submission, "hidden_grad", {"x": x, "w": w})
    w_grad, h_grad = expect_pair(reply["value"], what, "(w.grad, h.grad)")
    if isinstance(w_grad, torch.Tensor) and isinstance(h_grad, torch.Tensor) \
            and list(w_grad.shape) == [n] and list(h_grad.shape) == [d]:
        swapped(what, "(w.grad, h.grad)")
    if h_grad is None:
        fail("{what} returned h.grad = None: backward keeps .grad only for leaves, and h = x @ w is an "
             "intermediate result. Call h.retain_grad() before loss.backward().",
             "{what} 返回的 h.grad 是 None：backward 只为叶子张量保留 .grad，而 h = x @ w 是中间结果。"
             "在 loss.backward() 之前调用 h.retain_grad()。", what=what, key="retain-grad-missing")
    h = x.double() @ w.detach().double()
    hints = {"zero": NO_GRAD_HINT, **SUM_NOT_MEAN}
    expect_gradient(h_grad, 2 * h / n, "h", atol=GRAD_ATOL, hints=hints, n=n)
    expect_gradient(w_grad, grad_of(lambda w64: ((x.double() @ w64) ** 2).mean(), w), "w", atol=GRAD_ATOL,
                    hints=hints, n=n)


# -- gradients accumulate --------------------------------------------------------------------

def batch_grads(w, batches):
    return [grad_of(lambda w64, x=x, y=y: batch_loss(w64, x, y), w) for x, y in batches]


@check("accumulated_grad adds up the gradients of all batches", points=1, zh="accumulated_grad 累加所有 batch 的梯度")
def test_accumulated_grad(submission, rng):
    w, batches = param(rng), draw_batches(rng)
    what, reply = call(submission, "accumulated_grad", {"w": w, "batches": batches})
    grads = batch_grads(w, batches)
    value = reply["value"]
    if matches(value, grads[-1]):
        fail("{what} holds only the last batch's gradient: w.grad was cleared between batches. Here backward should "
             "add each batch's gradient to w.grad (gradient accumulation).",
             "{what} 只包含最后一个 batch 的梯度：batch 之间 w.grad 被清空了。这里应让 backward 把每个 batch 的梯度"
             "累加到 w.grad 上（梯度累积）。", what=what, key="only-last-batch")
    expect_gradient(value, sum(grads), "w", of="Σ batch_loss", atol=GRAD_ATOL, n=len(batches), hints={
        "factor 1/N": ("Divided by the number of batches? Return w.grad as backward leaves it: the sum.",
                       "是不是除以了 batch 数？直接返回 backward 累积后的 w.grad：也就是总和。")})


@check("per_batch_grads gives each batch its own gradient", points=1, zh="per_batch_grads 为每个 batch 给出各自的梯度")
def test_per_batch_grads(submission, rng):
    w, batches = param(rng), draw_batches(rng)
    what, reply = call(submission, "per_batch_grads", {"w": w, "batches": batches})
    grads = batch_grads(w, batches)
    value = reply["value"]
    if not isinstance(value, (list, tuple)) or len(value) != len(batches):
        fail("{what} should return a list of {k} gradients, one per batch, got {got}.",
             "{what} 应返回包含 {k} 个梯度的列表（每个 batch 一个），实际得到 {got}。",
             what=what, k=len(batches), got=describe(value), key="not-a-list")
    for k, g in enumerate(value):
        expect_tensor(g, Text("entry {k} of {what}", "{what} 的第 {k} 个元素", k=k, what=what), shape=w.shape,
                      floating=True)
    fixes = Text("Either set w.grad = None before each backward (backward then makes a new tensor each time), or "
                 "zero w.grad before each backward and append a copy, w.grad.clone().",
                 "两种做法任选其一：每次 backward 之前令 w.grad = None（backward 每次都会生成一个新 tensor）；"
                 "或者每次 backward 之前把 w.grad 清零，并追加它的副本 w.grad.clone()。")
    if same_storage(value):
        if matches(value[-1], sum(grads)):
            fail("The {k} entries of {what} are one and the same tensor, w.grad itself, and it holds the sum of all "
                 "the batches' gradients: w.grad was never cleared, and the list holds w.grad itself, not copies. "
                 "Both need fixing. {fixes}",
                 "{what} 的 {k} 个元素是同一个 tensor（就是 w.grad 本身），而且它保存的是所有 batch 梯度之和："
                 "w.grad 从未清空，列表里存的也是 w.grad 本身而不是副本。两处都要改。{fixes}",
                 what=what, k=len(value), fixes=fixes, key="grad-not-copied")
        fail("The {k} entries of {what} are one and the same tensor, w.grad itself, so they all show its final "
             "value. {fixes}", "{what} 的 {k} 个元素是同一个 tensor（就是 w.grad 本身），所以都显示它最后的值。{fixes}",
             what=what, k=len(value), fixes=fixes, key="grad-not-copied")
    running = torch.cumsum(torch.stack(grads), dim=0)
    if all(matches(g, r) for g, r in zip(value, running)):
        fail("Entry k of {what} is the sum of the gradients of batches 0..k: gradients accumulate across backward "
             "calls. Clear w.grad (w.grad.zero_() or w.grad = None) before each backward.",
             "{what} 的第 k 个元素是第 0..k 个 batch 梯度之和：多次调用 backward 时梯度会累加。"
             "每次 backward 之前清空 w.grad（w.grad.zero_() 或 w.grad = None）。", what=what, key="grad-not-cleared")
    for k, (g, e) in enumerate(zip(value, grads)):
        expect_gradient(g, e, "w", of=f"batch_loss[{k}]", atol=GRAD_ATOL, hints={"zero": (
            "Was the gradient cleared after it was stored? Store a copy.", "是不是存下梯度之后又把它清零了？请存一份副本。")})


# -- retain_graph ----------------------------------------------------------------------------

@check("two_losses_grads runs backward twice through one graph", points=2,
       zh="two_losses_grads 在同一个计算图上调用两次 backward")
def test_two_losses_grads(submission, rng):
    x, w = torch.randn(6, 3, generator=rng), param(rng)
    what, reply = call(submission, "two_losses_grads", {"x": x, "w": w}, count="features", key="retain-graph-missing",
                       causes={"second time": (
                           "The first backward freed the graph that h belongs to, so the second backward through h "
                           "failed. Ask the first backward to keep it: retain_graph=True.",
                           "第一次 backward 释放了 h 所在的计算图，所以第二次经过 h 的 backward 失败了。"
                           "让第一次 backward 保留计算图：retain_graph=True。")})
    if reply["calls"] != 1:
        fail("{what} called features(x, w) {calls} times: compute h once and use it for both losses (that shared "
             "graph is what the exercise is about).",
             "{what} 调用了 {calls} 次 features(x, w)：只计算一次 h，两个损失都用它（共享同一个计算图正是本题的要点）。",
             what=what, calls=reply["calls"], key="forward-twice")
    grad_a, grad_b = expect_pair(reply["value"], what, "(grad_a, grad_b)")
    ea = grad_of(lambda w64: torch.tanh(x.double() @ w64).mean(), w)
    eb = grad_of(lambda w64: (torch.tanh(x.double() @ w64) ** 2).mean(), w)
    for name, g in (("grad_a", grad_a), ("grad_b", grad_b)):
        expect_tensor(g, f"`{name}`", shape=w.shape, floating=True)
    if same_storage([grad_a, grad_b]):
        fail("grad_a and grad_b of {what} are the same tensor (w.grad), so grad_a was overwritten by the second "
             "backward. Keep a copy of it (clone) before running the second backward.",
             "{what} 的 grad_a 和 grad_b 是同一个 tensor（w.grad），所以 grad_a 被第二次 backward 覆盖了。"
             "在第二次 backward 之前保存它的副本（clone）。", what=what, key="grad-not-copied")
    if matches(grad_a, eb) and matches(grad_b, ea):
        swapped(what, Text("(grad_a, grad_b), the gradient of loss_a = h.mean() first",
                           "(grad_a, grad_b)，即先返回 loss_a = h.mean() 的梯度"))
    if matches(grad_b, ea + eb) and not matches(grad_b, eb):
        fail("grad_b of {what} is dloss_a/dw + dloss_b/dw: gradients accumulate in w.grad across backward calls. "
             "Clear w.grad between the two backward calls.",
             "{what} 的 grad_b 等于 dloss_a/dw + dloss_b/dw：多次 backward 时梯度会在 w.grad 中累加。"
             "在两次 backward 之间清空 w.grad。", what=what, key="grad-not-cleared")
    expect_gradient(grad_a, ea, "w", of="loss_a", atol=GRAD_ATOL)
    expect_gradient(grad_b, eb, "w", of="loss_b", atol=GRAD_ATOL)
    if reply["entries"]["grad"]:
        fail("{what} gives the right gradients, but {n} of them were not computed by backward: torch.autograd.grad "
             "returns a gradient without back-propagating into w.grad. The statement asks each loss to be "
             "back-propagated with loss.backward() (retain_graph=True on the first), reading w.grad after each.",
             "{what} 的梯度是对的，但其中 {n} 个不是由 backward 算出的：torch.autograd.grad 只返回梯度，不会反向传播进 "
             "w.grad。题目要求对每个损失都用 loss.backward() 反向传播（第一次加 retain_graph=True），每次之后读取 w.grad。",
             what=what, n=reply["entries"]["grad"], key="not-by-backward")
    if reply["entries"]["backward"] < 2:
        fail("{what} gives the right gradients with {n} backward call(s) for two losses: back-propagate each loss on "
             "its own, loss_a.backward(retain_graph=True) then loss_b.backward(), reading w.grad after each.",
             "{what} 的梯度是对的，但两个损失只调用了 {n} 次 backward：请对每个损失各自反向传播，先 "
             "loss_a.backward(retain_graph=True) 再 loss_b.backward()，每次之后读取 w.grad。", what=what,
             n=reply["entries"]["backward"], key="one-backward-for-two-losses")
    if reply["grads"][1] is None:
        fail("{what} gives the right gradients, but w.grad is still None afterwards: they were not computed by "
             "backward. Compute both with loss.backward() and read w.grad, as the statement asks.",
             "{what} 的梯度是对的，但之后 w.grad 仍是 None：它们不是由 backward 算出的。请按题目要求，两次都用 "
             "loss.backward() 计算，再读取 w.grad。", what=what, key="not-by-backward")


# -- backward(gradient=v) --------------------------------------------------------------------

@check("weighted_grad backpropagates a vector output with weights v", points=1,
       zh="weighted_grad 用权重 v 对向量输出做反向传播")
def test_weighted_grad(submission, rng):
    x, v = torch.randn(5, generator=rng).requires_grad_(True), torch.randn(5, generator=rng)
    what, reply = call(submission, "weighted_grad", {"x": x, "v": v}, key="vector-backward-without-gradient",
                       causes={"scalar outputs": (
                           "y = curve(x) has one entry per element of x, and backward() without arguments works only "
                           "for a single number. Pass one weight per entry: y.backward(gradient=v).",
                           "y = curve(x) 对 x 的每个元素都有一个输出，而不带参数的 backward() 只适用于单个数。"
                           "为每个输出传入一个权重：y.backward(gradient=v)。")})
    value = reply["value"]
    x64 = leaf(x)
    # sum(v * y) rather than grad_outputs=v: the latter imports sympy (about 2 s) in this fresh process
    expected = torch.autograd.grad(((x64 ** 3 - 2 * x64) * v.double()).sum(), x64)[0]
    unweighted = 3 * x64.detach() ** 2 - 2
    if matches(value, unweighted) and not matches(unweighted, expected):
        fail("{what} ignores v: it is the gradient of y.sum(), as if every weight were 1. Pass v to backward "
             "(gradient=v).", "{what} 忽略了 v：它是 y.sum() 的梯度，相当于所有权重都是 1。把 v 传给 backward（gradient=v）。",
             what=what, key="ignores-v")
    expect_gradient(value, expected, "x", of="sum(v * curve(x))", atol=GRAD_ATOL, hints={"zero": NO_GRAD_HINT})


# -- no_grad: updates and inference ----------------------------------------------------------

def sgd_case(submission, rng):
    w, x, y = param(rng), torch.randn(8, 3, generator=rng), torch.randn(8, generator=rng)
    lr = round(float(torch.rand((), generator=rng)) * 0.2 + 0.05, 3)
    what, reply = call(submission, "sgd_step", {"w": w, "x": x, "y": y, "lr": lr}, key="update-without-no-grad",
                       causes={"leaf Variable": (
                           "w is a leaf that requires grad, and autograd refuses to change it in place while it is "
                           "recording. Do the update inside `with torch.no_grad():`.",
                           "w 是 requires_grad 的叶子张量，autograd 在记录计算图时不允许原地修改它。"
                           "把更新写在 `with torch.no_grad():` 里面。")})
    return w, x, y, lr, what, reply


@check("sgd_step updates w in place, and w stays a leaf", points=1, zh="sgd_step 原地更新 w，且 w 仍是叶子张量")
def test_sgd_step_update(submission, rng):
    w, x, y, lr, what, reply = sgd_case(submission, rng)
    w_after = reply["args"][0]
    if not tensor_info(w_after).get("requires_grad"):
        fail("After {what}, w no longer requires grad: the next training step could not compute its gradient. Leave "
             "requires_grad on; use torch.no_grad() around the update instead.",
             "{what} 之后 w 不再 requires_grad：下一步训练就无法计算它的梯度。不要关闭 requires_grad；"
             "改为在更新时使用 torch.no_grad()。", what=what, key="requires-grad-switched-off")
    expected = w.detach().double() - lr * grad_of(lambda w64: batch_loss(w64, x, y), w)
    if matches(w_after, w.detach()):
        fail("{what} left the caller's w unchanged: the step must change w itself, in place, under torch.no_grad(). "
             "(`w = w - lr * w.grad` only makes a new tensor, not a leaf, with a grad_fn, and leaves w as it was.)",
             "{what} 没有改变调用者的 w：这一步必须在 torch.no_grad() 下原地修改 w 本身。"
             "（`w = w - lr * w.grad` 只是创建了一个新 tensor，不是叶子，带 grad_fn，w 本身不会变。）",
             what=what, key="not-in-place")
    expect_close(w_after, expected, Text("w after {what}", "{what} 之后的 w", what=what), atol=1e-5, hints={
        "sign": ("Gradient descent subtracts: w - lr * grad.", "梯度下降是减去梯度：w - lr * grad。")})


@check("sgd_step clears w.grad and returns the loss as a float", points=1,
       zh="sgd_step 清空 w.grad，并以 float 返回损失", depends="sgd_step_update")
def test_sgd_step_cleanup(submission, rng):
    w, x, y, lr, what, reply = sgd_case(submission, rng)
    w_after = reply["args"][0]
    grad = tensor_info(w_after).get("grad")
    if grad is not None and grad.abs().max() > 0:
        if matches(w_after, w.detach()):
            fail("After {what}, the caller's w.grad still holds the gradient, and w itself did not change: the update "
                 "(and any clearing after it) went to another tensor named w. Was w rebound by `w = w - ...`?",
                 "{what} 之后，调用者的 w.grad 仍然保存着梯度，而且 w 本身也没变：更新（以及之后的清空）作用在了另一个"
                 "名叫 w 的 tensor 上。是不是用 `w = w - ...` 重新绑定了 w？", what=what, key="not-in-place")
        fail("After {what}, w.grad still holds the gradient: the next backward would add to it. Clear it after the "
             "update (w.grad.zero_() or w.grad = None).",
             "{what} 之后 w.grad 仍然保存着梯度：下一次 backward 会在它上面累加。更新之后清空它（w.grad.zero_() 或 "
             "w.grad = None）。", what=what, key="grad-not-cleared")
    value, before = reply["value"], float(batch_loss(w.detach().double(), x, y))
    if isinstance(w_after, torch.Tensor) and is_number(value, float) and not matches(value, before, atol=0) \
            and matches(value, float(batch_loss(w_after.detach().double(), x, y)), rtol=1e-5, atol=1e-5):
        fail("{what} returned {got:.6g}, the loss of the updated w; expected {want:.6g}, the loss before the step: "
             "return the loss the step's forward computed (loss.item()), not a loss computed again after the update.",
             "{what} 返回了 {got:.6g}，这是更新后的 w 的损失；应为 {want:.6g}，即这一步之前的损失：请返回这一步 forward "
             "算出的损失（loss.item()），而不是更新之后重新计算的损失。", what=what, got=value, want=before,
             key="loss-after-update")
    expect_number(value, before, Text("The loss returned by {what}", "{what} 返回的损失", what=what), exact_type=True)


@check("predict returns values outside the graph, leaving w alone", points=1,
       zh="predict 返回不在计算图中的结果，且不改动 w")
def test_predict(submission, rng):
    for n in (5, 1):  # one sample too: the result stays [1]
        w, x = param(rng), torch.randn(n, 3, generator=rng)
        what, reply = call(submission, "predict", {"w": w, "x": x})
        value = expect_tensor(reply["value"], what, shape=[n], floating=True)
        info = tensor_info(value)
        if info.get("requires_grad") or info.get("grad_fn"):
            fail("{what} is still part of the graph (requires_grad=True, grad_fn={grad_fn}): .numpy() would fail and "
                 "the graph stays in memory. Compute it under `with torch.no_grad():` (or detach it).",
                 "{what} 仍在计算图中（requires_grad=True，grad_fn={grad_fn}）：调用 .numpy() 会失败，计算图也会一直"
                 "占用内存。请在 `with torch.no_grad():` 下计算（或者 detach）。",
                 what=what, grad_fn=info.get("grad_fn"), key="keeps-graph")
        w_after = reply["args"][0]
        if not tensor_info(w_after).get("requires_grad"):
            fail("{what} switched off requires_grad of w itself: training could no longer update w. Leave w as it is; "
                 "use torch.no_grad() or detach instead.",
                 "{what} 关闭了 w 本身的 requires_grad：之后训练就无法更新 w 了。不要改动 w；改用 torch.no_grad() 或 detach。",
                 what=what, key="requires-grad-switched-off")
        if not torch.equal(w_after, w.detach()):
            fail("{what} changed the values of w: inference must leave the parameters as they are.",
                 "{what} 修改了 w 的数值：推理时必须保持参数不变。", what=what, key="input-changed")
        expect_close(value, x.double() @ w.detach().double(), what, atol=1e-5)
    expect_cpu_only(submission, [("predict", [w, x]), ("hidden_grad", [x, param(rng, 3)])])
