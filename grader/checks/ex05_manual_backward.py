"""Hidden checks of ex05: hand-derived gradients of the MSE of y = w*x + b."""

import torch

from grader.checking import check, expect_close, expect_tensor, fail, probe
from grader.gradients import autograd_gradient, expect_gradient, numerical_gradient


def draw(rng: torch.Generator, n: int):
    x = torch.randn(n, 1, generator=rng)
    y = 2.5 * x + 1.3 + 0.1 * torch.randn(n, 1, generator=rng)
    w = torch.randn(1, generator=rng)
    b = torch.randn(1, generator=rng)
    return x, y, w, b


def loss_of(x, y):
    return lambda w, b: ((w * x.double() + b - y.double()) ** 2).mean()


GRAD_HINTS = {
    "sign": ("Check (y_pred - y) versus (y - y_pred).", "检查 (y_pred - y) 与 (y - y_pred) 的顺序。"),
    "factor 0.5": ("The derivative of a square brings a factor 2: d(e^2)/de = 2e.",
                   "平方求导会带出因子 2：d(e^2)/de = 2e。"),
    "factor": ("A sum where a mean belongs (or the reverse)? The loss averages over N samples.",
               "是不是把 mean 写成了 sum（或反过来）？损失是对 N 个样本求平均。"),
}


@check("predict computes w * x + b", points=1, zh="predict 计算 w * x + b")
def test_predict(submission, rng):
    x, _, w, b = draw(rng, 8)
    expect_close(submission.predict(x, w, b), w * x + b, "predict(x, w, b)")


@check("mse_loss is the mean of squared errors", points=2, zh="mse_loss 是误差平方的均值")
def test_mse_loss(submission, rng):
    y_pred, y = torch.randn(8, 1, generator=rng), torch.randn(8, 1, generator=rng)
    loss = expect_tensor(submission.mse_loss(y_pred, y), "mse_loss(y_pred, y)")
    if loss.numel() != 1:
        fail(f"mse_loss should return one number (a scalar tensor), got shape {list(loss.shape)}: "
             "did you forget the .mean()?",
             f"mse_loss 应返回一个数（标量 tensor），实际形状为 {list(loss.shape)}：是不是忘了 .mean()？")
    expect_close(loss.reshape(()), ((y_pred - y) ** 2).mean(), "mse_loss(y_pred, y)", n=8, hints={
        "factor": ("Sum instead of mean? The loss averages over the N samples.",
                   "用了 sum 而不是 mean？损失要对 N 个样本求平均。")})


@check("dw and db have the shapes of w and b", points=2, zh="dw 和 db 的形状与 w、b 相同")
def test_grad_shapes(submission, rng):
    x, y, w, b = draw(rng, 8)
    grads = submission.linear_grads(x, y, w, b)
    if not isinstance(grads, (tuple, list)) or len(grads) != 2:
        fail("linear_grads should return two tensors, (dw, db).", "linear_grads 应返回两个 tensor：(dw, db)。")
    for name, grad in zip(("dw", "db"), grads):
        expect_tensor(grad, name, floating=True)
        if grad.shape != (1,):
            more = " It holds one value per sample: reduce over the batch (mean)." if grad.numel() == 8 else ""
            fail(f"{name} should have the shape of {name[1]}, [1], got {list(grad.shape)}.{more}",
                 f"{name} 的形状应与 {name[1]} 相同，即 [1]，实际为 {list(grad.shape)}。"
                 + (" 它包含每个样本的值：需要对 batch 求平均。" if more else ""))


def _grads_case(submission, rng, n):
    x, y, w, b = draw(rng, n)
    grads = submission.linear_grads(x, y, w, b)
    if not isinstance(grads, (tuple, list)) or len(grads) != 2:
        fail("linear_grads should return two tensors, (dw, db).", "linear_grads 应返回两个 tensor：(dw, db)。")
    expected = autograd_gradient(loss_of(x, y), [w, b])
    numerical = numerical_gradient(loss_of(x, y), [w, b])
    return grads, expected, numerical


@check("dw matches autograd and finite differences", points=3, zh="dw 与 autograd 和有限差分一致")
def test_dw(submission, rng):
    for n in (8, 1, 50):
        (dw, _), (ew, _), (nw, _) = _grads_case(submission, rng, n)
        expect_gradient(dw if not isinstance(dw, torch.Tensor) or dw.numel() != 1 else dw.reshape(1),
                        ew, "w", numerical=nw, hints=GRAD_HINTS, n=n)


@check("db matches autograd and finite differences", points=1, zh="db 与 autograd 和有限差分一致")
def test_db(submission, rng):
    for n in (8, 1, 50):
        (_, db), (_, eb), (_, nb) = _grads_case(submission, rng, n)
        expect_gradient(db if not isinstance(db, torch.Tensor) or db.numel() != 1 else db.reshape(1),
                        eb, "b", numerical=nb, hints=GRAD_HINTS, n=n)


@probe
def autograd_calls(module, x, y, w, b):
    """Count autograd calls made inside linear_grads."""
    calls = []
    backward, grad = torch.autograd.backward, torch.autograd.grad
    torch.autograd.backward = lambda *a, **k: (calls.append("backward"), backward(*a, **k))[1]
    torch.autograd.grad = lambda *a, **k: (calls.append("grad"), grad(*a, **k))[1]
    try:
        module.linear_grads(x, y, w, b)
    finally:
        torch.autograd.backward, torch.autograd.grad = backward, grad
    return calls


@check("linear_grads derives the gradients by hand (no autograd)", points=1, zh="linear_grads 手动求梯度（不用 autograd）")
def test_by_hand(submission, rng):
    calls = submission.probe(autograd_calls, *draw(rng, 8), what="`linear_grads`")
    if calls:
        fail(f"linear_grads called autograd ({', '.join(sorted(set(calls)))}): derive dw and db with the chain rule instead.",
             f"linear_grads 调用了 autograd（{', '.join(sorted(set(calls)))}）：请用链式法则手动推导 dw 和 db。")
