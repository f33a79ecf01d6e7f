"""Hidden checks of ex04: leaves and requires_grad, retain_grad, gradient accumulation, retain_graph,
backward(gradient=v), no_grad for updates and inference.

Every learner function runs through the `run` probe, which hands back autograd's RuntimeErrors as
data (so the check can explain them), the arguments as they are after the call (in-place updates,
w.grad) and, when asked, how often a given helper was called."""

import traceback

import torch

from grader.checking import check, describe, expect_close, expect_tensor, fail, first_sentences, probe, tensor_info
from grader.gradients import expect_gradient

# -- sandbox side ----------------------------------------------------------------------------


@probe
def run(module, name, args, count=None):
    """Call module.<name>(*args). Returns {"value", "args"} (args after the call), or {"error", "where"}
    for a RuntimeError; with `count`, also "calls": how often module.<count> was called."""
    fn = getattr(module, name, None)
    if fn is None:
        return {"missing": name}
    calls = [0]
    original = getattr(module, count, None) if count else None
    if original is not None:
        def counted(*a, **k):
            calls[0] += 1
            return original(*a, **k)
        setattr(module, count, counted)
    try:
        value = fn(*args)
    except NotImplementedError:
        raise
    except RuntimeError as exc:
        frames = [f"line {f.lineno}: {(f.line or '').strip()}"
                  for f in traceback.extract_tb(exc.__traceback__) if f.filename == module.__file__]
        return {"error": first_sentences(f"RuntimeError: {exc}"), "where": "; ".join(frames[-2:]), "calls": calls[0]}
    finally:
        if original is not None:
            setattr(module, count, original)
    return {"value": value, "args": list(args), "calls": calls[0]}


# -- judge side ------------------------------------------------------------------------------

def arg_text(value) -> str:
    if isinstance(value, torch.Tensor):
        return str(list(value.shape))
    if isinstance(value, list):
        return f"=list[{len(value)}]"
    return f"={value!r}"


def call(submission, name, named: dict, explain: dict | None = None, count: str | None = None):
    """Run the learner's `name` with the named arguments; fail on a RuntimeError, explained by the first
    entry of `explain` ({substring of the error: (en, zh)}) that matches it. Returns (what, reply)."""
    what = f"{name}({', '.join(k + arg_text(v) for k, v in named.items())})"
    reply = submission.probe(run, name, list(named.values()), count, what=f"`{what}`")
    if reply.get("missing"):
        fail(f"Your file does not define `{name}`: was it renamed or deleted?",
             f"你的文件里没有定义 `{name}`：是不是被改名或删除了？")
    if "error" in reply:
        where = f" ({reply['where']})" if reply.get("where") else ""
        en, zh = next((text for key, text in (explain or {}).items() if key in reply["error"]), ("", ""))
        fail(f"{what} raised {reply['error']}{where}. {en}".strip(),
             f"{what} 抛出了异常 {reply['error']}{where}。{zh}".strip())
    return what, reply


def leaf(t: torch.Tensor) -> torch.Tensor:
    """A float64 leaf copy of a judge tensor, for computing expectations with autograd."""
    return t.detach().double().clone().requires_grad_(True)


def grad_of(loss_fn, w: torch.Tensor) -> torch.Tensor:
    w64 = leaf(w)
    return torch.autograd.grad(loss_fn(w64), w64)[0]


def batch_loss(w, x, y):
    return ((x.double() @ w - y.double()) ** 2).mean()


def draw_batches(rng, d=3, k=3, n=4):
    return [(torch.randn(n, d, generator=rng), torch.randn(n, generator=rng)) for _ in range(k)]


def param(rng, d=3) -> torch.Tensor:
    return torch.randn(d, generator=rng).requires_grad_(True)  # arrives in the sandbox as a leaf


def close(a, b, rtol=1e-4, atol=1e-5) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=rtol,
                                                                                  atol=atol)


def same_storage(tensors) -> bool:
    """Whether the tensors were one and the same memory in the sandbox (views of a stack do not count)."""
    places = [(tensor_info(t).get("storage"), tensor_info(t).get("offset")) for t in tensors]
    return len(places) > 1 and all(p[0] for p in places) and len(set(places)) == 1


def expect_pair(value, what, names):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"{what} should return two values, ({names[0]}, {names[1]}), got {describe(value)}.",
             f"{what} 应返回两个值 ({names[0]}, {names[1]})，实际得到 {describe(value)}。")
    return value


GRAD_ATOL = 1e-5
NO_GRAD_HINT = ("Is backward called, and on the right loss?", "有没有调用 backward，调用在正确的 loss 上吗？")


# -- leaves and requires_grad ----------------------------------------------------------------

@check("make_param returns a float leaf that requires grad", points=1, zh="make_param 返回需要梯度的浮点叶子张量")
def test_make_param(submission, rng):
    values = torch.randint(-9, 10, (6,), generator=rng).tolist()
    scale = round(float(torch.rand((), generator=rng)) * 2 + 0.25, 3)
    what, reply = call(submission, "make_param", {"values": values, "scale": scale}, explain={
        "floating point": ("torch.tensor of a list of ints is an integer tensor, and only floating-point tensors "
                           "can require grad: make it a float tensor first.",
                           "由整数列表创建的 torch.tensor 是整数类型，而只有浮点（floating point）tensor 才能 requires_grad："
                           "先把它变成浮点 tensor。")})
    value = expect_tensor(reply["value"], what, floating=True)
    info = tensor_info(value)
    if not info.get("requires_grad"):
        fail(f"{what} does not require grad (requires_grad=False): backward would never fill its .grad.",
             f"{what} 不需要梯度（requires_grad=False）：backward 永远不会填充它的 .grad。")
    if not info.get("is_leaf"):
        fail(f"{what} is not a leaf: it was made by an operation ({info.get('grad_fn')}) on a tensor that already "
             "required grad, so backward fills the .grad of that earlier tensor and this one's .grad stays None. "
             "Do the arithmetic first, then switch requires_grad on.",
             f"{what} 不是叶子张量（not a leaf）：它是由一个已经 requires_grad 的 tensor 经过运算"
             f"（{info.get('grad_fn')}）得到的，backward 只会填充那个原始 tensor 的 .grad，它自己的 .grad 一直是 None。"
             "先做完运算，再打开 requires_grad。")
    expect_close(value, torch.tensor(values, dtype=torch.float64) * scale, what, atol=1e-5)


# -- retain_grad -----------------------------------------------------------------------------

@check("hidden_grad keeps the gradient of the intermediate h", points=1, zh="hidden_grad 保留中间结果 h 的梯度")
def test_hidden_grad(submission, rng):
    x, w = torch.randn(5, 3, generator=rng), param(rng)
    what, reply = call(submission, "hidden_grad", {"x": x, "w": w})
    w_grad, h_grad = expect_pair(reply["value"], what, ("w.grad", "h.grad"))
    h = x.double() @ w.detach().double()
    if h_grad is None:
        fail(f"{what} returned h.grad = None: backward keeps .grad only for leaves, and h = x @ w is an "
             "intermediate result. Call h.retain_grad() before loss.backward().",
             f"{what} 返回的 h.grad 是 None：backward 只为叶子张量保留 .grad，而 h = x @ w 是中间结果。"
             "在 loss.backward() 之前调用 h.retain_grad()。")
    expect_gradient(h_grad, 2 * h / h.numel(), "h", atol=GRAD_ATOL, hints={"zero": NO_GRAD_HINT})
    expect_gradient(w_grad, grad_of(lambda w64: ((x.double() @ w64) ** 2).mean(), w), "w", atol=GRAD_ATOL,
                    hints={"zero": NO_GRAD_HINT})


# -- gradients accumulate --------------------------------------------------------------------

@check("accumulated_grad adds up the gradients of all batches", points=1, zh="accumulated_grad 累加所有 batch 的梯度")
def test_accumulated_grad(submission, rng):
    w, batches = param(rng), draw_batches(rng)
    what, reply = call(submission, "accumulated_grad", {"w": w, "batches": batches})
    grads = [grad_of(lambda w64, x=x, y=y: batch_loss(w64, x, y), w) for x, y in batches]
    value = reply["value"]
    if close(value, grads[-1]):
        fail(f"{what} holds only the last batch's gradient: w.grad was cleared between batches. Here backward "
             "should add each batch's gradient to w.grad (gradient accumulation).",
             f"{what} 只包含最后一个 batch 的梯度（only the last batch）：batch 之间 w.grad 被清空了。"
             "这里应让 backward 把每个 batch 的梯度累加到 w.grad 上（梯度累积）。")
    expect_gradient(value, sum(grads), "w", of="sum of batch losses", atol=GRAD_ATOL, hints={
        "factor": ("Divided by the number of batches? Return w.grad as backward leaves it: the sum.",
                   "是不是除以了 batch 数？直接返回 backward 累积后的 w.grad：也就是总和。")})


@check("per_batch_grads gives each batch its own gradient", points=1, zh="per_batch_grads 为每个 batch 给出各自的梯度")
def test_per_batch_grads(submission, rng):
    w, batches = param(rng), draw_batches(rng)
    what, reply = call(submission, "per_batch_grads", {"w": w, "batches": batches})
    grads = [grad_of(lambda w64, x=x, y=y: batch_loss(w64, x, y), w) for x, y in batches]
    value = reply["value"]
    if not isinstance(value, (list, tuple)) or len(value) != len(batches):
        fail(f"{what} should return a list of {len(batches)} gradients, one per batch, got {describe(value)}.",
             f"{what} 应返回包含 {len(batches)} 个梯度的列表（每个 batch 一个），实际得到 {describe(value)}。")
    for k, g in enumerate(value):
        expect_tensor(g, f"entry {k} of {what}", shape=w.shape, floating=True)
    if same_storage(value):
        fail(f"the {len(value)} entries of {what} are one and the same tensor (w.grad itself), so they all show its "
             "final value. Append a copy (clone) of w.grad, or let each backward start from w.grad = None.",
             f"{what} 的 {len(value)} 个元素是同一个 tensor（就是 w.grad 本身），所以都显示它最后的值。"
             "请追加 w.grad 的副本（clone），或者每次 backward 前令 w.grad = None。")
    running = torch.cumsum(torch.stack(grads), dim=0)
    if all(close(g, r) for g, r in zip(value, running)):
        fail(f"entry k of {what} is the sum of the gradients of batches 0..k: gradients accumulate across "
             "backward calls. Clear w.grad (w.grad.zero_() or w.grad = None) before each backward.",
             f"{what} 的第 k 个元素是第 0..k 个 batch 梯度之和：多次调用 backward 时梯度会累加（accumulate）。"
             "每次 backward 之前清空 w.grad（w.grad.zero_() 或 w.grad = None）。")
    for k, (g, e) in enumerate(zip(value, grads)):
        expect_gradient(g, e, "w", of=f"batch_loss of batch {k}", atol=GRAD_ATOL, hints={"zero": (
            "Was the gradient cleared after it was stored? Store a copy.", "是不是存下梯度之后又把它清零了？请存一份副本。")})


# -- retain_graph ----------------------------------------------------------------------------

@check("two_losses_grads runs backward twice through one graph", points=2,
       zh="two_losses_grads 在同一个计算图上调用两次 backward")
def test_two_losses_grads(submission, rng):
    x, w = torch.randn(6, 3, generator=rng), param(rng)
    what, reply = call(submission, "two_losses_grads", {"x": x, "w": w}, count="features", explain={
        "second time": ("The first backward freed the graph that h belongs to, so the second backward through h "
                        "failed. Ask the first backward to keep it: retain_graph=True.",
                        "第一次 backward 释放了 h 所在的计算图，所以第二次经过 h 的 backward 失败了。"
                        "让第一次 backward 保留计算图：retain_graph=True。")})
    if reply["calls"] != 1:
        fail(f"{what} called features(x, w) {reply['calls']} times: compute h once and use it for both losses "
             "(that shared graph is what the exercise is about).",
             f"{what} 调用了 {reply['calls']} 次 features(x, w)：只计算一次 h，两个损失都用它"
             "（共享同一个计算图正是本题的要点）。")
    grad_a, grad_b = expect_pair(reply["value"], what, ("grad_a", "grad_b"))
    ea = grad_of(lambda w64: torch.tanh(x.double() @ w64).mean(), w)
    eb = grad_of(lambda w64: (torch.tanh(x.double() @ w64) ** 2).mean(), w)
    for name, g in (("grad_a", grad_a), ("grad_b", grad_b)):
        expect_tensor(g, f"{name} of {what}", shape=w.shape, floating=True)
    if same_storage([grad_a, grad_b]):
        fail(f"grad_a and grad_b of {what} are the same tensor (w.grad), so grad_a was overwritten by the second "
             "backward. Keep a copy of it (clone) before running the second backward.",
             f"{what} 的 grad_a 和 grad_b 是同一个 tensor（w.grad），所以 grad_a 被第二次 backward 覆盖了。"
             "在第二次 backward 之前保存它的副本（clone）。")
    if close(grad_b, ea + eb) and not close(grad_b, eb):
        fail(f"grad_b of {what} is dloss_a/dw + dloss_b/dw: gradients accumulate in w.grad across backward "
             "calls. Clear w.grad between the two backward calls.",
             f"{what} 的 grad_b 等于 dloss_a/dw + dloss_b/dw：多次 backward 时梯度会在 w.grad 中累加（accumulate）。"
             "在两次 backward 之间清空 w.grad。")
    expect_gradient(grad_a, ea, "w", of="loss_a", atol=GRAD_ATOL)
    expect_gradient(grad_b, eb, "w", of="loss_b", atol=GRAD_ATOL)


# -- backward(gradient=v) --------------------------------------------------------------------

@check("weighted_grad backpropagates a vector output with weights v", points=1,
       zh="weighted_grad 用权重 v 对向量输出做反向传播")
def test_weighted_grad(submission, rng):
    x, v = torch.randn(5, generator=rng).requires_grad_(True), torch.randn(5, generator=rng)
    what, reply = call(submission, "weighted_grad", {"x": x, "v": v}, explain={
        "scalar outputs": ("y = curve(x) has one entry per element of x, and backward() without arguments works "
                           "only for a single number. Pass one weight per entry: y.backward(gradient=v).",
                           "y = curve(x) 对 x 的每个元素都有一个输出，而不带参数的 backward() 只适用于单个数。"
                           "为每个输出传入一个权重：y.backward(gradient=v)。")})
    value = reply["value"]
    x64 = leaf(x)
    # sum(v * y) rather than grad_outputs=v: the latter imports sympy (about 2 s) in this fresh process
    expected = torch.autograd.grad(((x64 ** 3 - 2 * x64) * v.double()).sum(), x64)[0]
    unweighted = 3 * x64.detach() ** 2 - 2
    if close(value, unweighted) and not close(unweighted, expected):
        fail(f"{what} ignores v: it is the gradient of y.sum(), as if every weight were 1. Pass v to backward "
             "(gradient=v).",
             f"{what} 忽略了 v（ignores v）：它是 y.sum() 的梯度，相当于所有权重都是 1。把 v 传给 backward（gradient=v）。")
    expect_gradient(value, expected, "x", of="sum(v * curve(x))", atol=GRAD_ATOL, hints={"zero": NO_GRAD_HINT})


# -- no_grad: updates and inference ----------------------------------------------------------

def sgd_case(submission, rng):
    w, x, y = param(rng), torch.randn(8, 3, generator=rng), torch.randn(8, generator=rng)
    lr = round(float(torch.rand((), generator=rng)) * 0.2 + 0.05, 3)
    what, reply = call(submission, "sgd_step", {"w": w, "x": x, "y": y, "lr": lr}, explain={
        "leaf Variable": ("w is a leaf that requires grad, and autograd refuses to change it in place while it is "
                          "recording. Do the update inside `with torch.no_grad():`.",
                          "w 是 requires_grad 的叶子张量，autograd 在记录计算图时不允许原地修改它。"
                          "把更新写在 `with torch.no_grad():` 里面。")})
    return w, x, y, lr, what, reply


@check("sgd_step updates w in place, and w stays a leaf", points=1, zh="sgd_step 原地更新 w，且 w 仍是叶子张量")
def test_sgd_step_update(submission, rng):
    w, x, y, lr, what, reply = sgd_case(submission, rng)
    w_after = reply["args"][0]
    info = tensor_info(w_after)
    if not info.get("requires_grad"):
        fail(f"after {what}, w no longer requires grad: the next training step could not compute its gradient. "
             "Leave requires_grad on; use torch.no_grad() around the update instead.",
             f"{what} 之后 w 不再 requires_grad：下一步训练就无法计算它的梯度。不要关闭 requires_grad；"
             "改为在更新时使用 torch.no_grad()。")
    expected = w.detach().double() - lr * grad_of(lambda w64: batch_loss(w64, x, y), w)
    if close(w_after, w.detach()):
        fail(f"{what} did not change the caller's w: `w = w - lr * w.grad` makes a new tensor (not a leaf, with a "
             "grad_fn) and leaves w as it was. Update w itself, in place, under torch.no_grad().",
             f"{what} 没有改变调用者的 w：`w = w - lr * w.grad` 只是创建了一个新 tensor（不是叶子，带 grad_fn），"
             "w 本身没变。请在 torch.no_grad() 下原地（in place）更新 w。")
    expect_close(w_after, expected, f"w after {what}", atol=1e-5, hints={
        "sign": ("Gradient descent subtracts: w - lr * grad.", "梯度下降是减去梯度：w - lr * grad。")})


@check("sgd_step clears w.grad and returns the loss as a float", points=1,
       zh="sgd_step 清空 w.grad，并以 float 返回损失")
def test_sgd_step_cleanup(submission, rng):
    w, x, y, lr, what, reply = sgd_case(submission, rng)
    grad = tensor_info(reply["args"][0]).get("grad")
    if grad is not None and grad.abs().max() > 0:
        fail(f"after {what}, w.grad still holds the gradient: the next backward would add to it. Clear it after "
             "the update (w.grad.zero_() or w.grad = None).",
             f"{what} 之后 w.grad 仍然保存着梯度（still holds）：下一次 backward 会在它上面累加。"
             "更新之后清空它（w.grad.zero_() 或 w.grad = None）。")
    value = reply["value"]
    loss_before = float(batch_loss(w.detach().double(), x, y))
    if isinstance(value, torch.Tensor):
        fail(f"{what} returned {describe(value)}: return a plain Python float with .item(), which does not keep "
             "the graph alive.",
             f"{what} 返回了一个 tensor：请用 .item() 返回普通的 Python float，它不会让计算图一直留在内存中。")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"{what} should return the loss as a Python float, got {describe(value)}.",
             f"{what} 应以 Python float 返回损失，实际得到 {describe(value)}。")
    if not abs(value - loss_before) <= 1e-4 * max(1.0, abs(loss_before)):
        fail(f"{what} returned {value:.4g}; the loss before the step is {loss_before:.4g}.",
             f"{what} 返回了 {value:.4g}；更新之前的损失是 {loss_before:.4g}。")


@check("predict returns values outside the graph, leaving w alone", points=1,
       zh="predict 返回不在计算图中的结果，且不改动 w")
def test_predict(submission, rng):
    w, x = param(rng), torch.randn(5, 3, generator=rng)
    what, reply = call(submission, "predict", {"w": w, "x": x})
    value = expect_tensor(reply["value"], what, shape=[5], floating=True)
    info = tensor_info(value)
    if info.get("requires_grad") or info.get("grad_fn"):
        fail(f"{what} is still part of the graph (requires_grad=True, grad_fn={info.get('grad_fn')}): .numpy() "
             "would fail and the graph stays in memory. Compute it under `with torch.no_grad():` (or detach it).",
             f"{what} 仍在计算图中（requires_grad=True，grad_fn={info.get('grad_fn')}）：调用 .numpy() 会失败，"
             "计算图也会一直占用内存。请在 `with torch.no_grad():` 下计算（或者 detach）。")
    if not tensor_info(reply["args"][0]).get("requires_grad"):
        fail(f"{what} switched off requires_grad of w itself: training could no longer update w. Leave w as it is; "
             "use torch.no_grad() or detach instead.",
             f"{what} 关闭了 w 本身的 requires_grad（switched off）：之后训练就无法更新 w 了。不要改动 w；"
             "改用 torch.no_grad() 或 detach。")
    expect_close(value, x.double() @ w.detach().double(), what, atol=1e-5)
