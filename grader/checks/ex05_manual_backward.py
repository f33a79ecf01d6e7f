"""Hidden checks of ex05: hand-derived gradients of the MSE of y = w*x + b.

Kata variants: the loss reduces over the batch by `variant("reduction")` (mean, or sum as MSELoss's
reduction='sum'), so the expected loss, gradients and factor-N diagnoses follow the draw."""

import torch

from grader.checking import (Text, check, expect_close, expect_tensor, fail, joined, machine_derivatives, matches,
                             probe, variant, verbatim)
from grader.gradients import autograd_gradient, expect_gradient, numerical_gradient

BATCHES = (8, 1, 50)  # one sample too: a sum and a mean agree there, a squeeze() does not keep [1, 1]


def draw(rng: torch.Generator, n: int):
    x = torch.randn(n, 1, generator=rng)
    y = 2.5 * x + 1.3 + 0.1 * torch.randn(n, 1, generator=rng)
    w = torch.randn(1, generator=rng)
    b = torch.randn(1, generator=rng)
    return x, y, w, b


def reduction() -> str:
    """How this draw's loss reduces over the batch: "mean" (the exercise as written) or "sum"."""
    return variant("reduction")["name"]


def reduce(errors: torch.Tensor) -> torch.Tensor:
    return errors.sum() if reduction() == "sum" else errors.mean()


def loss_of(x, y):
    return lambda w, b: reduce((w * x.double() + b - y.double()) ** 2)


SUM_FOR_MEAN = ("A sum where a mean belongs? The loss averages over the N samples.",
                "是不是把 mean 写成了 sum？损失是对 N 个样本求平均。")
MEAN_FOR_SUM = ("A mean where a sum belongs? This loss adds up the N samples' errors (reduction='sum'), it does not "
                "average them.", "是不是把 sum 写成了 mean？这个损失是把 N 个样本的误差加起来（reduction='sum'），不是求平均。")
SUM_HINTS = {  # the factors N of the sum draw: the learner averaged, or summed twice
    "factor 1/N": MEAN_FOR_SUM,
    "factor N": ("Summed twice, or multiplied by N? The sum over the batch already counts each sample once.",
                 "是不是求和了两次，或者多乘了 N？对 batch 求和已经把每个样本算了一次。"),
}
GRAD_HINTS = {
    "sign": ("Check (y_pred - y) versus (y - y_pred).", "检查 (y_pred - y) 与 (y - y_pred) 的顺序。"),
    "factor 0.5": ("The derivative of a square brings a factor 2: d(e^2)/de = 2e.",
                   "平方求导会带出因子 2：d(e^2)/de = 2e。"),
    "factor 2": ("The factor 2 of the square's derivative appears once, not twice.",
                 "平方求导带出的因子 2 只出现一次，不是两次。"),
    "factor N": SUM_FOR_MEAN,
    "factor 1/N": ("Divided by N twice? The mean already divides by N once.",
                   "是不是除了两次 N？mean 已经除过一次 N 了。"),
}
GRADS = ("dw", "db")


def grad_hints() -> dict:
    return {**GRAD_HINTS, **SUM_HINTS} if reduction() == "sum" else GRAD_HINTS


@check("predict computes w * x + b", points=1, zh="predict 计算 w * x + b")
def test_predict(submission, rng):
    for n in (8, 1):
        x, _, w, b = draw(rng, n)
        y_pred = submission.predict(x, w, b)
        if isinstance(y_pred, torch.Tensor) and list(y_pred.shape) in ([n], []):
            fail("predict(x, w, b) should have shape {want}, got {got}: the column dimension is gone. `x @ w` with w "
                 "of shape [1], or a squeeze(), does that; w * x + b keeps [N, 1] by broadcasting.",
                 "predict(x, w, b) 的形状应为 {want}，实际为 {got}：列这一维没有了。w 形状为 [1] 时 `x @ w`，"
                 "或者 squeeze()，都会这样；w * x + b 靠广播保持 [N, 1]。",
                 want=[n, 1], got=list(y_pred.shape), key="lost-column-dim")
        expect_close(y_pred, w * x + b, "predict(x, w, b)")


@check("mse_loss reduces the squared errors as the statement asks", points=2, zh="mse_loss 按题目要求对误差平方做归约")
def test_mse_loss(submission, rng):
    y_pred, y = torch.randn(8, 1, generator=rng), torch.randn(8, 1, generator=rng)
    loss = expect_tensor(submission.mse_loss(y_pred, y), "mse_loss(y_pred, y)")
    if loss.numel() != 1:
        fail("mse_loss should return one number (a scalar tensor), got shape {shape}: did you forget the .{how}()?",
             "mse_loss 应返回一个数（标量 tensor），实际形状为 {shape}：是不是忘了 .{how}()？",
             shape=list(loss.shape), how=verbatim(reduction()), key="loss-not-reduced")
    if loss.dim() != 0:
        fail("mse_loss should return a scalar tensor (shape []), got shape {shape}: a .{how}(dim=0) of a column (or "
             "keepdim=True) keeps a dimension; .{how}() over every element gives the scalar.",
             "mse_loss 应返回标量 tensor（形状 []），实际形状为 {shape}：对一列做 .{how}(dim=0)（或用了 keepdim=True）"
             "会留下一个维度；对所有元素 .{how}() 才得到标量。",
             shape=list(loss.shape), how=verbatim(reduction()), key="not-scalar")
    if reduction() == "mean" and matches(loss.reshape(()), ((y_pred - y) ** 2).sum() / 7, rtol=1e-5, atol=1e-8):
        fail("mse_loss(y_pred, y) divides the sum of squared errors by N - 1 (7 for 8 samples): that is the unbiased "
             "variance's correction, not a mean. The MSE divides by N: .mean().",
             "mse_loss(y_pred, y) 把平方误差之和除以了 N - 1（8 个样本时是 7）：这是无偏方差的修正，不是平均值。"
             "MSE 要除以 N：用 .mean()。", key="divides-by-n-minus-1")
    expect_close(loss.reshape(()), reduce((y_pred - y) ** 2), "mse_loss(y_pred, y)", n=8, hints={
        **({"factor 1/N": MEAN_FOR_SUM} if reduction() == "sum" else {"factor N": SUM_FOR_MEAN}),
        "factor 0.5": ("Is the error squared, and not halved?", "误差平方了吗？有没有多乘了 1/2？")})


@probe
def observed_grads(module, x, y, w, b):
    """linear_grads(x, y, w, b), and the machines that differentiated for it (any route: autograd in any thread,
    forward-mode AD, torch.func, ATen's backward kernels, a graph traced at import, a child process or another thread
    at work, sympy, complex step, finite differences): every value the checks judge comes from a call watched so, so
    code that behaves only while watched gains nothing."""
    grads, machines = machine_derivatives(lambda: module.linear_grads(x, y, w, b), module, "mse_loss",
                                          params=(w, b), inputs=(x, y))
    return {"grads": grads, "machines": machines}


def _grads(submission, rng, n):
    """linear_grads on a fresh draw of n samples: (inputs, (dw, db)); fail unless it returns a pair, or where a
    machine differentiated for it."""
    x, y, w, b = draw(rng, n)
    seen = submission.probe(observed_grads, x, y, w, b, what="`linear_grads`")
    grads = seen["grads"]
    not_by_hand(seen["machines"])
    if not isinstance(grads, (tuple, list)) or len(grads) != 2:
        fail("linear_grads should return two tensors, (dw, db).", "linear_grads 应返回两个 tensor：(dw, db)。",
             key="not-a-pair")
    return (x, y, w, b), grads


@check("dw and db have the shapes of w and b", points=2, zh="dw 和 db 的形状与 w、b 相同")
def test_grad_shapes(submission, rng):
    by_hand_only(submission, rng)
    _, grads = _grads(submission, rng, 8)
    for name, grad in zip(GRADS, grads):
        expect_tensor(grad, name, floating=True)
        if grad.shape != (1,):
            more = Text(" It holds one value per sample: reduce over the batch ({how}).",
                        "它包含每个样本的值：需要对 batch 做归约（{how}）。", how=verbatim(reduction())) \
                if grad.numel() == 8 else ""
            fail("{name} should have the shape of {param}, [1], got {got}.{more}",
                 "{name} 的形状应与 {param} 相同，即 [1]，实际为 {got}。{more}",
                 name=name, param=name[1], got=list(grad.shape), more=more,
                 key="per-sample-grads" if more else "wrong-shape")


def _one(grad):
    """A one-element tensor as shape [1] (its shape is the shape check's lesson, not the value checks')."""
    return grad.reshape(1) if isinstance(grad, torch.Tensor) and grad.numel() == 1 else grad


@check("dw matches autograd and finite differences", points=3, zh="dw 与 autograd 和有限差分一致")
def test_dw(submission, rng):
    expect_grads(submission, rng, 0)


@check("db matches autograd and finite differences", points=1, zh="db 与 autograd 和有限差分一致")
def test_db(submission, rng):
    expect_grads(submission, rng, 1)


def expect_grads(submission, rng, which: int):
    """The value of dw (which=0) or db (which=1) for several batch sizes, N = 1 among them: earned by hand only."""
    by_hand_only(submission, rng)
    for n in BATCHES:
        (x, y, w, b), grads = _grads(submission, rng, n)
        expected = autograd_gradient(loss_of(x, y), [w, b])
        if matches(_one(grads[0]), expected[1]) and matches(_one(grads[1]), expected[0]) \
                and not matches(_one(grads[0]), expected[0]):
            fail("linear_grads returned (db, dw): its first value is d loss/d b and its second d loss/d w. "
                 "Return them in the order (dw, db).",
                 "linear_grads 返回的是 (db, dw)：第一个值是 d loss/d b，第二个是 d loss/d w。请按 (dw, db) 的顺序返回。",
                 key="swapped")
        error = (w * x + b - y).detach()
        if which == 0 and n > 1 and matches(_one(grads[0]), (2 * error.mean() * x.mean()).double().reshape(1)) \
                and not matches(_one(grads[0]), expected[0]):
            fail("dw equals 2 * mean(error) * mean(x), a product of two means; the gradient is the mean of the "
                 "products, 2 * mean(error * x): each sample's error goes with its own x.",
                 "dw 等于 2 * mean(error) * mean(x)，是两个平均值的乘积；梯度应是乘积的平均值 2 * mean(error * x)："
                 "每个样本的误差要乘以它自己的 x。", key="product-of-means")
        if n > 1 and isinstance(grads[which], torch.Tensor) \
                and matches(_one(grads[which] * (n - 1) / n), expected[which]) \
                and not matches(_one(grads[which]), expected[which]):
            fail("{name} is the gradient times N / (N - 1) ({n} / {m}): it divides by N - 1 instead of N. The loss is "
                 "a mean over the N samples, so its gradient divides by N.",
                 "{name} 等于梯度乘以 N / (N - 1)（{n} / {m}）：它除以的是 N - 1 而不是 N。损失是 N 个样本的平均，"
                 "所以梯度也要除以 N。", name="d" + "wb"[which], n=n, m=n - 1, key="divides-by-n-minus-1")
        numerical = numerical_gradient(loss_of(x, y), [w, b])
        expect_gradient(_one(grads[which]), expected[which], "wb"[which], numerical=numerical[which],
                        hints=grad_hints(), n=n)


MACHINES = {"torch.autograd": ("autograd", "autograd"), "forward-mode AD": ("forward-mode AD", "前向模式自动微分"),
            "torch.func": ("torch.func", "torch.func"), "sympy": ("sympy's symbolic derivative", "sympy 的符号求导"),
            "finite differences": ("finite differences (the loss evaluated at several points, or w or b shifted by a "
                                   "small step)", "有限差分（在多个点上计算了损失，或把 w、b 挪动了一小步）"),
            "ATen's backward kernels": ("ATen's own backward kernels (such as mse_loss_backward)",
                                        "ATen 自带的反向传播算子（例如 mse_loss_backward）"),
            "a traced graph": ("a graph traced from autograd (torch.fx, make_fx or torch.compile)",
                               "从 autograd 追踪出的计算图（torch.fx、make_fx 或 torch.compile）"),
            "complex-step differentiation": ("complex-step differentiation (complex numbers)", "复数步长求导（复数）")}
OUT_OF_SIGHT = {  # what the watch cannot look into: the values are not believed, and the message says only what was seen
    "a child process": ("a child process was alive", "有一个子进程在运行"),
    "another thread": ("another thread worked", "另一个线程在工作"),
    "the grader's watch switched off": ("the grader's watch was switched off (a profile or saved-tensor hook "
                                        "removed)", "评分程序的监视被关掉了（移除了 profile 或 saved-tensor 钩子）")}


def machine_route(submission, rng) -> list[str]:
    """The machines that differentiated for linear_grads on one draw, probed once per grading."""
    return submission.once("route", lambda: submission.probe(observed_grads, *draw(rng, 8),
                                                             what="`linear_grads`")["machines"])


def not_by_hand(machines: list[str], earned: bool = True) -> None:
    """Fail where a machine differentiated for linear_grads, or worked out of the watch's sight while it ran
    (`earned`: its values are not earned either)."""
    hidden = [Text(*OUT_OF_SIGHT[m]) for m in machines if m in OUT_OF_SIGHT]
    seen = [Text(*MACHINES.get(m, (m, m))) for m in machines if m not in OUT_OF_SIGHT]
    if seen:
        used = joined(seen, ", ", "、")
        numeric = {m for m in machines if m not in OUT_OF_SIGHT} <= {"finite differences",
                                                                     "complex-step differentiation"}
        key = "finite-differences" if numeric else "autograd-used"
        if earned:
            fail("linear_grads got its gradients from {used}: its values are not yours. Derive dw and db with the "
                 "chain rule.", "linear_grads 的梯度来自 {used}：这些值不是你推导的。请用链式法则手动推导 dw 和 db。",
                 used=used, key=key)
        fail("linear_grads got its gradients from {used}: derive dw and db with the chain rule instead.",
             "linear_grads 的梯度来自 {used}：请用链式法则手动推导 dw 和 db。", used=used, key=key)
    if hidden:
        fail("While linear_grads ran, {what}: the grader cannot see what computed its gradients there, so they "
             "earn nothing. Compute dw and db in the call itself, by the chain rule, with no thread or process.",
             "linear_grads 运行时，{what}：评分程序看不到那里是什么算出了梯度，所以这些值不得分。请在函数调用中用"
             "链式法则直接算出 dw 和 db，不要用线程或进程。", what=joined(hidden, "; ", "；"), key="out-of-sight")


def by_hand_only(submission, rng) -> None:
    """A gradient a machine computed is not earned here: fail the gradient checks when linear_grads used one."""
    not_by_hand(machine_route(submission, rng))


@check("linear_grads derives the gradients by hand (no autograd)", points=1, zh="linear_grads 手动求梯度（不用 autograd）")
def test_by_hand(submission, rng):
    not_by_hand(machine_route(submission, rng), earned=False)
