"""Hidden checks of ex18: in-place operations that autograd accepts.

sgd_update must change leaf parameters in place under torch.no_grad() (not through .data, which
hides the change from autograd's version counter); swish and residual_tanh must not modify a
tensor that autograd saved for backward. The probes run the learner's functions on tensors that
require grad, call backward inside the sandbox, and report autograd's errors as plain data, so a
check can explain them instead of showing a bare traceback.

Each function's value check also requires backward to run through it: that is the fix the exercise
asks for (the stub's values are already right), so a stub earns nothing.
"""

import sys

import torch

from grader.checking import (CheckFailed, Text, check, describe, expect_close, expect_tensor, fail, fail_raised,
                             learner_call, matches, probe, verbatim)
from grader.gradients import autograd_gradient, expect_gradient

LEAF_ERROR = "leaf variable that requires grad"
VERSION_ERROR = "modified by an inplace operation"


# -- probes (run in the sandbox) --------------------------------------------------------------

def _rebinding(module, params, wanted, seen):
    """A tracer that notes, in `seen`, when a local variable of the learner's code holds a new tensor with a
    parameter's updated value (`p = p - lr * p.grad`: the update computed, the parameter left as it was)."""
    ids = {id(p) for p in params}

    def local(frame, event, arg):
        if event in ("line", "return"):
            for value in list(frame.f_locals.values()):
                if isinstance(value, torch.Tensor) and id(value) not in ids and any(
                        value.shape == w.shape and torch.allclose(value.detach(), w) for w in wanted):
                    seen.append(True)
        return local

    return lambda frame, event, arg: local if frame.f_globals is vars(module) else None


@probe
def run_sgd(module, values, grads, lr):
    """Make trainable leaves with the given grads, call sgd_update, report what became of them, and whether the
    learner's code computed an updated value into a new tensor."""
    params = [v.clone().requires_grad_(True) for v in values]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    rebound, previous = [], sys.gettrace()
    sys.settrace(_rebinding(module, params, [v - lr * g for v, g in zip(values, grads)], rebound))
    try:
        returned, error = learner_call(module, module.sgd_update, list(params), lr)
    finally:
        sys.settrace(previous)
    if error:
        return {"error": {"stage": "update", **error}}
    return {
        "rebound": bool(rebound),
        "values": [p.detach().clone() for p in params],
        "requires_grad": [bool(p.requires_grad) for p in params],
        "is_leaf": [bool(p.is_leaf) for p in params],
        "grad_fn": [type(p.grad_fn).__name__ if p.grad_fn is not None else None for p in params],
        "returned": None if returned is None else type(returned).__name__,
    }


@probe
def sgd_then_stale_backward(module, value, grad, lr):
    """Compute a loss from p, update p, then backward through that loss.

    Autograd must refuse (the p it saved is stale): it can only notice if the update bumped p's
    version counter, which an update through `.data` does not.
    """
    p = value.clone().requires_grad_(True)
    loss = (p * p).sum()  # mul saves p for backward
    p.grad = grad.clone()
    _, error = learner_call(module, module.sgd_update, [p], lr)
    if error:
        return {"error": {"stage": "update", **error}}
    after = p.detach().clone()
    try:
        loss.backward()
    except RuntimeError:
        return {"after": after, "raised": True}
    return {"after": after, "raised": False}


@probe
def forward_backward(module, name, inputs, grad_out):
    """Call `name` on leaves that require grad, then backward(grad_out); report values and grads."""
    leaves = [t.clone().requires_grad_(True) for t in inputs]
    out, error = learner_call(module, getattr(module, name), *leaves)
    if error:
        return {"error": {"stage": "forward", **error}}
    if not isinstance(out, torch.Tensor):
        return {"out": out}
    result = {"out": out.detach().clone(), "requires_grad": bool(out.requires_grad)}
    if not out.requires_grad or out.shape != grad_out.shape:
        return result
    _, error = learner_call(module, out.backward, grad_out)
    if error:
        result["error"] = {"stage": "backward", **error}
        return result
    result["grads"] = [leaf.grad for leaf in leaves]
    return result


# -- messages ---------------------------------------------------------------------------------

FIX_LEAF = {
    "sgd_update": ("Do the update inside `with torch.no_grad():`, so autograd does not record it.",
                   "把更新写在 `with torch.no_grad():` 里面，这样 autograd 就不会记录它。"),
    "swish": ("Do not change x: use the out-of-place op (`torch.sigmoid(x)` returns a new tensor; `x.sigmoid_()` "
              "overwrites x).",
              "不要修改 x：使用非原地的写法（`torch.sigmoid(x)` 返回新 tensor，`x.sigmoid_()` 会覆盖 x）。"),
    "residual_tanh": ("Do not change the inputs x or w in place.", "不要原地修改输入 x 或 w。"),
}


def explain_error(name: str, err: dict):
    """Fail with autograd's error translated for a beginner."""
    call = Text("`{name}`", "`{name}`", name=name) if err["stage"] != "backward" else \
        Text("backward through `{name}`", "对 `{name}` 做的 backward", name=name)
    if LEAF_ERROR in err["message"].lower():
        fail_raised(err, call, Text("That is an in-place change (`-=`, `+=` or a method ending in `_`) of a leaf tensor "
                                    "that requires grad. {fix}",
                                    "这是对一个 requires_grad 的叶子张量做了原地修改（`-=`、`+=` 或以 `_` 结尾的方法）。"
                                    "{fix}", fix=FIX_LEAF.get(name, FIX_LEAF["residual_tanh"])), key="inplace-on-leaf")
    if VERSION_ERROR in err["message"]:
        fail_raised(err, call, Text(
            "The forward value is fine, but a tensor that autograd saved for backward (sigmoid and tanh save their "
            "output) was then changed in place (`+=`, `mul_`...). Compute a new tensor instead of changing the saved "
            "one: `a = a + b`, not `a += b`; `a * b`, not `a.mul_(b)`.",
            "前向结果没问题，但 autograd 为反向传播保存的 tensor（sigmoid 和 tanh 会保存输出）随后被原地修改了"
            "（`+=`、`mul_` 等）。请生成新的 tensor，而不是修改被保存的那个：用 `a = a + b` 而不是 `a += b`；用 `a * b` "
            "而不是 `a.mul_(b)`。"), key="saved-tensor-modified")
    fail_raised(err, call)


def backward_through(submission, name, inputs, grad_out):
    """Run `name` forward and backward in the sandbox; fail on errors, a wrong shape or a cut graph."""
    result = submission.probe(forward_backward, name, inputs, grad_out,
                              what=Text("`{name}`, then backward", "`{name}`，然后 backward", name=name))
    if "error" in result and result["error"]["stage"] == "forward":
        explain_error(name, result["error"])
    expect_tensor(result["out"], f"`{name}(...)`", shape=grad_out.shape)
    if not result["requires_grad"]:
        fail("The output of `{name}` does not require grad although its inputs do: the graph was cut (`.detach()`, "
             "`.data` or `torch.no_grad()`), so no gradient can reach the inputs.",
             "输入 requires_grad，但 `{name}` 的输出不 requires_grad：计算图被切断了"
             "（`.detach()`、`.data` 或 `torch.no_grad()`），梯度无法传回输入。", name=name, key="graph-cut")
    if "error" in result:
        explain_error(name, result["error"])
    return result


HIDDEN = Text(" The value is right but the gradient is not: part of the computation was hidden from autograd "
              "(`.detach()`, `.data`, or an in-place change after autograd saved a tensor), so backward does not "
              "see it and the gradient is silently wrong.",
              "值是对的，但梯度不对：有一部分计算被 autograd 忽略了（`.detach()`、`.data`，或在 autograd 保存某个 tensor "
              "之后对它做了原地修改），backward 看不到它，于是梯度悄悄地算错了。")


def expect_grad(yours, expected, name, of, value_right):
    """The learner's gradient against autograd's; the hidden-computation cause only when the value is right."""
    if yours is None:
        fail("d {of}/d {name} is None: no gradient reached {name}. Was the graph cut by `.detach()`, `.data` or "
             "`torch.no_grad()`?",
             "d {of}/d {name} 是 None：梯度没有传到 {name}。计算图是否被 `.detach()`、`.data` 或 `torch.no_grad()` "
             "切断了？", of=of, name=name, key="no-gradient")
    try:
        expect_gradient(yours, expected, name, of=of)
    except CheckFailed as exc:
        if not value_right:
            raise
        raise CheckFailed(exc.text + HIDDEN, "gradient-hidden-from-autograd") from None


# -- sgd_update -------------------------------------------------------------------------------

def draw_params(rng):
    """A matrix, a vector and a size-1 parameter, their gradients, and a learning rate."""
    shapes = [(3, 2), (2,), (1,)]
    values = [torch.randn(s, generator=rng) for s in shapes]
    grads = [torch.randn(s, generator=rng) for s in shapes]
    lr = float(torch.empty(()).uniform_(0.05, 0.5, generator=rng))
    return values, grads, lr


def sgd_result(submission, values, grads, lr):
    result = submission.probe(run_sgd, values, grads, lr, what="`sgd_update`")
    if "error" in result:
        explain_error("sgd_update", result["error"])
    return result


def fail_unchanged(what, result, moved: list[int]):
    """Fail for a parameter sgd_update left as it was, naming a cause only where the probe saw it: other parameters
    moved (the loop ended early), a new tensor returned, or the update computed into a new tensor."""
    returned = result["returned"]
    if moved:
        fail("`params[{first}]` moved but {what} did not: sgd_update changes only some of the parameters it is given. "
             "Does the loop end early (a `return` or `break` inside it)? Every parameter must move.",
             "`params[{first}]` 更新了，但 {what} 没有：sgd_update 只修改了传给它的部分参数。是不是循环提前结束了"
             "（循环里有 `return` 或 `break`）？每个参数都必须更新。", first=moved[0], what=what, key="update-partial")
    if returned is not None:
        fail("{what} is unchanged, and `sgd_update` returned a {type}: new tensors do not update the model, which "
             "holds the old ones. Change each parameter itself in place (`p -= ...` or `p.sub_(...)` inside "
             "`torch.no_grad()`) and return nothing.",
             "{what} 没有变化，而 `sgd_update` 返回了一个 {type}：新的 tensor 不会更新模型，模型持有的仍是原来的 "
             "tensor。请原地修改每个参数本身（在 `torch.no_grad()` 里写 `p -= ...` 或 `p.sub_(...)`），不要返回值。",
             what=what, type=verbatim(returned), key="returned-new-tensors")
    if result["rebound"]:
        fail("{what} is unchanged: your code computed its updated value into a new tensor (`p = p - lr * p.grad` "
             "only gives the variable a new tensor); the parameter itself must change in place (`p -= ...` or "
             "`p.sub_(...)` inside `torch.no_grad()`).",
             "{what} 没有变化：你的代码把更新后的值算进了一个新 tensor（`p = p - lr * p.grad` 只是让变量指向一个新 "
             "tensor）；参数本身必须被原地修改（在 `torch.no_grad()` 里写 `p -= ...` 或 `p.sub_(...)`）。", what=what,
             key="update-rebinds")
    fail("{what} is unchanged after sgd_update: the parameter itself must change in place, by -lr * p.grad (`p -= ...` "
         "or `p.sub_(...)` inside `torch.no_grad()`).",
         "sgd_update 之后 {what} 没有变化：参数本身必须被原地修改，变化量为 -lr * p.grad（在 `torch.no_grad()` 里写 "
         "`p -= ...` 或 `p.sub_(...)`）。", what=what, key="no-update")


@check("sgd_update moves the parameters in place: p - lr * p.grad", points=2,
       zh="sgd_update 原地更新参数：p - lr * p.grad")
def test_sgd_values(submission, rng):
    values, grads, lr = draw_params(rng)
    result = sgd_result(submission, values, grads, lr)
    moved = [i for i, (before, after) in enumerate(zip(values, result["values"])) if not torch.equal(after, before)]
    for i, (before, grad, after) in enumerate(zip(values, grads, result["values"])):
        what = Text("`params[{i}]` after sgd_update", "sgd_update 之后的 `params[{i}]`", i=i)
        after = expect_tensor(after, what, shape=before.shape)
        if torch.equal(after, before):
            fail_unchanged(what, result, moved)
        expect_close(after - before, -lr * grad, Text("the change of `params[{i}]`", "`params[{i}]` 的变化量", i=i),
                     hints={"sign": ("Gradient descent moves against the gradient: subtract lr * p.grad.",
                                     "梯度下降是沿梯度的反方向走：要减去 lr * p.grad。"),
                            "factor": ("Each step is lr * p.grad, exactly once.", "每一步的更新量是 lr * p.grad，只减一次。")})


@check("sgd_update leaves trainable leaves (requires_grad, no grad_fn)", points=1,
       zh="sgd_update 之后参数仍是可训练的叶子（requires_grad，没有 grad_fn）", depends="sgd_values")
def test_sgd_leaves(submission, rng):
    values, grads, lr = draw_params(rng)
    result = sgd_result(submission, values, grads, lr)
    if all(torch.equal(after, before) for after, before in zip(result["values"], values)):
        fail("`sgd_update` left every parameter unchanged, so there is no update to judge.",
             "`sgd_update` 没有改变任何参数，也就没有可以检查的更新。", key="no-update")
    for i in range(len(values)):
        if not result["requires_grad"][i]:
            fail("`params[{i}]` no longer requires grad after sgd_update: turning requires_grad off silences the error "
                 "but the model stops learning. Use `with torch.no_grad():` for the update instead.",
                 "sgd_update 之后 `params[{i}]` 不再 requires_grad：关掉 requires_grad 能让报错消失，但模型就不再学习了。"
                 "请改用 `with torch.no_grad():` 包住更新。", i=i, key="requires-grad-turned-off")
        if not result["is_leaf"][i] or result["grad_fn"][i] is not None:
            fail("`params[{i}]` is no longer a leaf after sgd_update (grad_fn {grad_fn}): the update was recorded in "
                 "the graph. Wrap it in `with torch.no_grad():`.",
                 "sgd_update 之后 `params[{i}]` 不再是叶子（grad_fn 为 {grad_fn}）：更新被记录进了计算图。"
                 "请用 `with torch.no_grad():` 包住它。", i=i, grad_fn=verbatim(result["grad_fn"][i]),
                 key="update-recorded")


@check("sgd_update lets autograd notice the change (no .data)", points=1,
       zh="sgd_update 的修改能被 autograd 察觉（不用 .data）", depends="sgd_values")
def test_sgd_version(submission, rng):
    values, grads, lr = draw_params(rng)
    result = submission.probe(sgd_then_stale_backward, values[0], grads[0], lr, what="`sgd_update`")
    if "error" in result:
        explain_error("sgd_update", result["error"])
    after = expect_tensor(result["after"], ("`params[0]` after sgd_update", "sgd_update 之后的 `params[0]`"),
                          shape=values[0].shape)
    if torch.equal(after, values[0]):
        fail("`sgd_update` did not change the parameter, so there is nothing autograd could notice: update the tensor "
             "itself in place (inside `torch.no_grad()`).",
             "`sgd_update` 没有改变参数，autograd 自然无从察觉：请原地修改 tensor 本身（在 `torch.no_grad()` 里）。",
             key="no-update")
    if not result["raised"]:
        fail("Autograd did not notice that `sgd_update` changed p. The check computed a loss from p, called "
             "`sgd_update`, then called backward on that loss: autograd should have stopped with an error, because "
             "the value of p it saved is no longer p's value. It ran silently instead, with the new value: the update "
             "went through `.data`, which hides the change from autograd. Use `with torch.no_grad(): p -= lr * p.grad`.",
             "autograd 没有察觉到 `sgd_update` 修改了 p。检查先用 p 算出一个 loss，再调用 `sgd_update`，然后对这个 "
             "loss 做 backward：autograd 本应报错停下，因为它保存的 p 的值已经不是 p 现在的值了。结果却悄悄地用新值算完了："
             "更新是通过 `.data` 做的，它把修改藏了起来，autograd 看不到。请改用 "
             "`with torch.no_grad(): p -= lr * p.grad`。", key="update-through-data")


# -- swish and residual_tanh ------------------------------------------------------------------

def swish_ref(x):
    return x * torch.sigmoid(x)


def residual_ref(x, w):
    return torch.tanh(x @ w) + x


FUNCTIONS = {"swish": swish_ref, "residual_tanh": residual_ref}


def expect_unchanged(name, inputs, after):
    for arg, before, now in zip(("x", "w"), inputs, after):
        if isinstance(now, torch.Tensor) and now.shape == before.shape and not torch.equal(now, before):
            fail("`{name}` changed its input {arg} in place ({arg} holds other values after the call): a method "
                 "ending in `_`, such as `x.sigmoid_()`, or `+=` overwrites it. Compute new tensors instead.",
                 "`{name}` 原地修改了输入 {arg}（调用之后 {arg} 的值变了）：以 `_` 结尾的方法（如 `x.sigmoid_()`）"
                 "或 `+=` 会覆盖它。请生成新的 tensor。", name=name, arg=arg, key="input-modified")


def check_values(submission, name, inputs, rng):
    """The value on `inputs` (which must stay unchanged), then forward and backward on leaves that require grad."""
    out, after = submission.call_with_args(name, *inputs)
    expect_unchanged(name, inputs, after)
    expect_close(out, FUNCTIONS[name](*inputs), f"`{name}(...)`")
    backward_through(submission, name, inputs, torch.randn(out.shape, generator=rng))


def check_gradients(submission, name, inputs, rng):
    """The learner's gradients from backward in the sandbox against autograd's gradients of the formula."""
    grad_out = torch.randn(FUNCTIONS[name](*inputs).shape, generator=rng)
    result = backward_through(submission, name, inputs, grad_out)
    expected = autograd_gradient(lambda *xs: (FUNCTIONS[name](*xs) * grad_out.double()).sum(), inputs)
    value_right = matches(result["out"], FUNCTIONS[name](*inputs))
    grads = result["grads"]
    if not isinstance(grads, (list, tuple)) or len(grads) != len(inputs):
        fail("Could not read the gradients of the inputs (got {got}).", "无法读取输入的梯度（得到 {got}）。",
             got=describe(grads), key="no-gradient")
    names = ("x", "w")[:len(inputs)]
    of = f"{name}({', '.join(names)})"
    for arg, yours in zip(names, grads):  # a cut graph first: it explains the other gradient too
        if yours is None:
            expect_grad(yours, None, arg, of, value_right)
    for arg, yours, want in zip(names, grads, expected):
        expect_grad(yours, want, arg, of, value_right)


@check("swish computes x * sigmoid(x), leaves x unchanged, and backward runs through it", points=2,
       zh="swish 计算 x * sigmoid(x)，不修改 x，且 backward 能穿过它")
def test_swish_values(submission, rng):
    for shape in ((5, 4), (1, 3, 1)):
        check_values(submission, "swish", [3 * torch.randn(shape, generator=rng)], rng)


@check("swish's gradient is right", points=1, zh="swish 的梯度正确", depends="swish_values")
def test_swish_grad(submission, rng):
    check_gradients(submission, "swish", [3 * torch.randn(6, 3, generator=rng)], rng)


def draw_residual(rng, n=None, d=None):
    n = n or int(torch.randint(3, 9, (), generator=rng))
    d = d or int(torch.randint(2, 6, (), generator=rng))
    return [torch.randn(n, d, generator=rng), 0.7 * torch.randn(d, d, generator=rng)]


@check("residual_tanh computes tanh(x @ w) + x, leaves x and w unchanged, and backward runs through it", points=1,
       zh="residual_tanh 计算 tanh(x @ w) + x，不修改 x 和 w，且 backward 能穿过它")
def test_residual_values(submission, rng):
    for n, d in ((None, None), (1, None), (None, 1)):  # and one row, and one feature
        check_values(submission, "residual_tanh", draw_residual(rng, n, d), rng)


@check("residual_tanh's gradients for x and w are right", points=2,
       zh="residual_tanh 对 x 和 w 的梯度正确", depends="residual_values")
def test_residual_grad(submission, rng):
    check_gradients(submission, "residual_tanh", draw_residual(rng), rng)
