"""Hidden checks of ex18: in-place operations that autograd accepts.

sgd_update must change leaf parameters in place under torch.no_grad() (not through .data, which
hides the change from autograd's version counter); swish and residual_tanh must not modify a
tensor that autograd saved for backward. The probes run the learner's functions on tensors that
require grad, call backward inside the sandbox, and report autograd's errors as plain text, so a
check can explain them instead of showing a bare traceback.
"""


import torch

from grader.checking import CheckFailed, check, describe, expect_close, expect_tensor, fail, probe
from grader.gradients import autograd_gradient, expect_gradient

LEAF_ERROR = "leaf variable that requires grad"
VERSION_ERROR = "modified by an inplace operation"


# -- probes (run in the sandbox) --------------------------------------------------------------

@probe
def run_sgd(module, values, grads, lr):
    """Make trainable leaves with the given grads, call sgd_update, report what became of them."""
    params = [v.clone().requires_grad_(True) for v in values]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    try:
        module.sgd_update(list(params), lr)
    except RuntimeError as exc:
        return {"error": str(exc)}
    return {
        "values": [p.detach().clone() for p in params],
        "requires_grad": [bool(p.requires_grad) for p in params],
        "is_leaf": [bool(p.is_leaf) for p in params],
        "grad_fn": [type(p.grad_fn).__name__ if p.grad_fn is not None else None for p in params],
    }


@probe
def sgd_then_stale_backward(module, value, grad, lr):
    """Keep a graph that saved p, update p, then backward through the old graph.

    Autograd must refuse (the saved p is stale): it can only notice if the update bumped p's
    version counter, which an update through `.data` does not.
    """
    p = value.clone().requires_grad_(True)
    loss = (p * p).sum()  # mul saves p for backward
    p.grad = grad.clone()
    try:
        module.sgd_update([p], lr)
    except RuntimeError as exc:
        return {"error": str(exc)}
    after = p.detach().clone()
    try:
        loss.backward()
    except RuntimeError as exc:
        return {"after": after, "raised": True, "message": str(exc)[:300]}
    return {"after": after, "raised": False}


@probe
def forward_backward(module, name, inputs, grad_out):
    """Call `name` on leaves that require grad, then backward(grad_out); report values and grads."""
    leaves = [t.clone().requires_grad_(True) for t in inputs]
    try:
        out = getattr(module, name)(*leaves)
    except RuntimeError as exc:
        return {"stage": "forward", "error": str(exc)}
    if not isinstance(out, torch.Tensor):
        return {"out": out}
    result = {"out": out.detach().clone(), "requires_grad": bool(out.requires_grad)}
    if not out.requires_grad or out.shape != grad_out.shape:
        return result
    try:
        out.backward(grad_out)
    except RuntimeError as exc:
        result.update(stage="backward", error=str(exc))
        return result
    result["grads"] = [leaf.grad for leaf in leaves]
    return result


# -- messages ---------------------------------------------------------------------------------

FIX_LEAF = {
    "sgd_update": ("Do the update inside `with torch.no_grad():`, so autograd does not record it.",
                   "把更新写在 `with torch.no_grad():` 里面，这样 autograd 就不会记录它。"),
    "swish": ("Do not change x: use the out-of-place op (torch.sigmoid(x) returns a new tensor; x.sigmoid_() overwrites x).",
              "不要修改 x：使用非 in-place 的写法（torch.sigmoid(x) 返回新 tensor，x.sigmoid_() 会覆盖 x）。"),
    "residual_tanh": ("Do not change the inputs x or w in place.", "不要 in-place 修改输入 x 或 w。"),
}


def explain_error(name: str, stage: str, message: str):
    """Fail with autograd's error translated for a beginner."""
    short = message.split("\n")[0][:160]
    if LEAF_ERROR in message.lower():
        fix_en, fix_zh = FIX_LEAF.get(name, FIX_LEAF["residual_tanh"])
        fail(f"`{name}` raised \"{short}\": an in-place change (`-=`, `+=` or a method ending in `_`) of a leaf "
             f"tensor that requires grad. {fix_en}",
             f"`{name}` 抛出了 \"{short}\"：对一个 requires_grad 的叶子 tensor 做了 in-place 修改"
             f"（`-=`、`+=` 或以 `_` 结尾的方法）。{fix_zh}")
    if VERSION_ERROR in message:
        fail(f"backward through `{name}` raised \"one of the variables needed for gradient computation has been modified "
             f"by an inplace operation\": the forward value is fine, but a tensor that autograd saved for backward "
             f"(sigmoid and tanh save their output) was then changed in place (`+=`, `mul_`...). "
             f"Compute a new tensor instead of changing the saved one: `a = a + b`, not `a += b`; `a * b`, not `a.mul_(b)`.",
             f"对 `{name}` 做 backward 时报错 \"one of the variables needed for gradient computation has been modified by "
             f"an inplace operation\"：前向结果没问题，但 autograd 为反向传播保存的 tensor（sigmoid 和 tanh 会保存输出）"
             f"随后被 in-place 修改了（`+=`、`mul_` 等）。请生成新的 tensor，而不是修改被保存的那个：用 `a = a + b` 而不是 `a += b`；用 `a * b` 而不是 `a.mul_(b)`。")
    where = "backward through" if stage == "backward" else "calling"
    where_zh = "对它做 backward 时" if stage == "backward" else "调用时"
    fail(f"{where} `{name}` raised RuntimeError: {short}", f"`{name}` {where_zh}抛出了 RuntimeError：{short}")


def gradients_of(submission, name, inputs, grad_out, what):
    """Run forward and backward in the sandbox; fail on errors, a wrong shape or a cut graph."""
    result = submission.probe(forward_backward, name, inputs, grad_out, what=what)
    if "error" in result and result.get("stage") == "forward":
        explain_error(name, "forward", result["error"])
    expect_tensor(result["out"], f"{name}(...)", shape=grad_out.shape)
    if not result["requires_grad"]:
        fail(f"The output of `{name}` does not require grad although its inputs do: the graph was cut "
             "(.detach(), .data or torch.no_grad()), so no gradient can reach the inputs.",
             f"输入 requires_grad，但 `{name}` 的输出不 requires_grad：计算图被切断了"
             "（.detach()、.data 或 torch.no_grad()），梯度无法传回输入。")
    if "error" in result:
        explain_error(name, "backward", result["error"])
    return result["grads"]


SILENT_EN = (" The forward value is right but the gradient is not: was a tensor changed behind autograd's back "
             "(through .data, or in place after autograd saved it)? Autograd cannot see such a change, so the "
             "gradient is silently wrong.")
SILENT_ZH = ("前向结果正确但梯度不对：是不是有 tensor 绕过 autograd 被修改了（通过 .data，或在 autograd 保存它之后"
             "in-place 修改）？autograd 看不到这种修改，于是梯度悄悄地算错了。")


def expect_grad(yours, expected, name, of):
    if yours is None:
        fail(f"d {of}/d {name} is None: no gradient reached {name}. Was the graph cut by .detach(), .data or "
             "torch.no_grad()?",
             f"d {of}/d {name} 是 None：梯度没有传到 {name}。计算图是否被 .detach()、.data 或 torch.no_grad() 切断了？")
    try:
        expect_gradient(yours, expected, name, of=of)
    except CheckFailed as exc:
        raise CheckFailed(exc.text + (SILENT_EN, SILENT_ZH), exc.key) from None


# -- sgd_update -------------------------------------------------------------------------------

def draw_params(rng):
    values = [torch.randn(3, 2, generator=rng), torch.randn(2, generator=rng)]
    grads = [torch.randn(3, 2, generator=rng), torch.randn(2, generator=rng)]
    lr = float(torch.empty(()).uniform_(0.05, 0.5, generator=rng))
    return values, grads, lr


def sgd_result(submission, values, grads, lr):
    result = submission.probe(run_sgd, values, grads, lr, what="`sgd_update`")
    if "error" in result:
        explain_error("sgd_update", "update", result["error"])
    return result


@check("sgd_update moves the parameters in place: p - lr * p.grad", points=2,
       zh="sgd_update 原地更新参数：p - lr * p.grad")
def test_sgd_values(submission, rng):
    values, grads, lr = draw_params(rng)
    result = sgd_result(submission, values, grads, lr)
    for i, (before, grad, after) in enumerate(zip(values, grads, result["values"])):
        what = f"params[{i}] after sgd_update"
        after = expect_tensor(after, what, shape=before.shape)
        if torch.equal(after, before):
            fail(f"{what} is unchanged: `p = p - lr * p.grad` only gives the loop variable a new tensor; the "
                 "parameter itself must change in place (`p -= ...` or `p.sub_(...)` inside torch.no_grad()).",
                 f"{what} 没有变化：`p = p - lr * p.grad` 只是让循环变量指向一个新 tensor；参数本身必须被原地修改"
                 "（在 torch.no_grad() 里写 `p -= ...` 或 `p.sub_(...)`）。")
        expect_close(after - before, -lr * grad, f"the change of params[{i}]", hints={
            "sign": ("Gradient descent moves against the gradient: subtract lr * p.grad.",
                     "梯度下降是沿梯度的反方向走：要减去 lr * p.grad。"),
            "factor": ("Each step is lr * p.grad, exactly once.", "每一步的更新量是 lr * p.grad，只减一次。"),
        })


@check("sgd_update leaves trainable leaves (requires_grad, no grad_fn)", points=1,
       zh="sgd_update 之后参数仍是可训练的叶子（requires_grad，没有 grad_fn）")
def test_sgd_leaves(submission, rng):
    values, grads, lr = draw_params(rng)
    result = sgd_result(submission, values, grads, lr)
    for i in range(len(values)):
        if not result["requires_grad"][i]:
            fail(f"params[{i}] no longer requires grad after sgd_update: turning requires_grad off silences the error "
                 "but the model stops learning. Use `with torch.no_grad():` for the update instead.",
                 f"sgd_update 之后 params[{i}] 不再 requires_grad：关掉 requires_grad 能让报错消失，但模型就不再学习了。"
                 "请改用 `with torch.no_grad():` 包住更新。")
        if not result["is_leaf"][i] or result["grad_fn"][i] is not None:
            fail(f"params[{i}] is no longer a leaf after sgd_update (grad_fn {result['grad_fn'][i]}): the update was "
                 "recorded in the graph. Wrap it in `with torch.no_grad():`.",
                 f"sgd_update 之后 params[{i}] 不再是叶子（grad_fn 为 {result['grad_fn'][i]}）：更新被记录进了计算图。"
                 "请用 `with torch.no_grad():` 包住它。")


@check("sgd_update lets autograd notice the change (no .data)", points=1,
       zh="sgd_update 的修改能被 autograd 察觉（不用 .data）")
def test_sgd_version(submission, rng):
    values, grads, lr = draw_params(rng)
    result = submission.probe(sgd_then_stale_backward, values[0], grads[0], lr, what="`sgd_update`")
    if "error" in result:
        explain_error("sgd_update", "update", result["error"])
    after = expect_tensor(result["after"], "params[0] after sgd_update", shape=values[0].shape)
    if torch.equal(after, values[0]):
        fail("sgd_update did not change the parameter, so there is nothing autograd could notice: update the tensor "
             "itself in place (inside torch.no_grad()).",
             "sgd_update 没有改变参数，autograd 自然无从察觉：请原地修改 tensor 本身（在 torch.no_grad() 里）。")
    if not result["raised"]:
        fail("A graph built before sgd_update still ran backward afterwards with the new value of p, and no error: the "
             "update went through `.data`, which hides the change from autograd's version check, so stale graphs give "
             "silently wrong gradients. Use `with torch.no_grad(): p -= lr * p.grad` instead.",
             "在 sgd_update 之前建好的计算图，更新之后仍能用 p 的新值做 backward 且不报错：更新是通过 `.data` 做的，"
             "它绕过了 autograd 的版本检查，过期的计算图会悄悄给出错误的梯度。请改用 "
             "`with torch.no_grad(): p -= lr * p.grad`。")


# -- swish ------------------------------------------------------------------------------------

def swish_ref(x):
    return x * torch.sigmoid(x)


@check("swish computes x * sigmoid(x) and leaves x unchanged", points=2,
       zh="swish 计算 x * sigmoid(x)，且不修改 x")
def test_swish_values(submission, rng):
    x = 3 * torch.randn(5, 4, generator=rng)
    out, args = submission.call_with_args("swish", x)
    x_after = args[0]
    if isinstance(x_after, torch.Tensor) and x_after.shape == x.shape and not torch.equal(x_after, x):
        fail("swish changed its input x in place (x holds other values after the call): a method ending in `_`, such "
             "as x.sigmoid_(), overwrites x. Use torch.sigmoid(x), which returns a new tensor.",
             "swish 原地修改了输入 x（调用之后 x 的值变了）：以 `_` 结尾的方法（如 x.sigmoid_()）会覆盖 x。"
             "请用 torch.sigmoid(x)，它返回新的 tensor。")
    expect_close(out, swish_ref(x), "swish(x)")


@check("swish's gradient is right (backward works)", points=1, zh="swish 的梯度正确（backward 能运行）")
def test_swish_grad(submission, rng):
    x = 3 * torch.randn(6, 3, generator=rng)
    g = torch.randn(6, 3, generator=rng)
    (gx,) = gradients_of(submission, "swish", [x], g, "`swish` then backward")
    (ex,) = autograd_gradient(lambda x: (swish_ref(x) * g.double()).sum(), [x])
    expect_grad(gx, ex, "x", "swish(x)")


# -- residual_tanh ----------------------------------------------------------------------------

def draw_residual(rng):
    n = int(torch.randint(3, 9, (), generator=rng))
    d = int(torch.randint(2, 6, (), generator=rng))
    x = torch.randn(n, d, generator=rng)
    w = 0.7 * torch.randn(d, d, generator=rng)
    return x, w


@check("residual_tanh computes tanh(x @ w) + x", points=1, zh="residual_tanh 计算 tanh(x @ w) + x")
def test_residual_values(submission, rng):
    x, w = draw_residual(rng)
    out, args = submission.call_with_args("residual_tanh", x, w)
    for name, before, after in zip(("x", "w"), (x, w), args):
        if isinstance(after, torch.Tensor) and after.shape == before.shape and not torch.equal(after, before):
            fail(f"residual_tanh changed its input {name} in place: compute new tensors instead.",
                 f"residual_tanh 原地修改了输入 {name}：请生成新的 tensor。")
    expect_close(out, torch.tanh(x @ w) + x, "residual_tanh(x, w)")


@check("residual_tanh's gradients for x and w are right (backward works)", points=2,
       zh="residual_tanh 对 x 和 w 的梯度正确（backward 能运行）")
def test_residual_grad(submission, rng):
    x, w = draw_residual(rng)
    g = torch.randn(x.shape, generator=rng)
    grads = gradients_of(submission, "residual_tanh", [x, w], g, "`residual_tanh` then backward")
    expected = autograd_gradient(lambda x, w: ((torch.tanh(x @ w) + x) * g.double()).sum(), [x, w])
    if not isinstance(grads, (list, tuple)) or len(grads) != 2:
        fail(f"Could not read the gradients of x and w (got {describe(grads)}).",
             f"无法读取 x 和 w 的梯度（得到 {describe(grads)}）。")
    for name, yours in zip(("x", "w"), grads):  # a cut graph first: it explains the other gradient too
        if yours is None:
            expect_grad(yours, None, name, "residual_tanh(x, w)")
    for name, yours, want in zip(("x", "w"), grads, expected):
        expect_grad(yours, want, name, "residual_tanh(x, w)")
