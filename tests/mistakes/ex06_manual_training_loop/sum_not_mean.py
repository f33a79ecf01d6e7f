# Mistake: the loss summed over the samples where the statement asks their mean: each step is N times too big and
# training diverges. LR is right: the message must not tell to lower it.
# Expect: The learning rate is right

import torch

# x spreads like randn * 5: the loss bends 25 times more sharply along w than along b, and steps above
# 2 / (2 * mean(x ** 2)) = 0.04 overshoot w and diverge; 0.01 is safe for w and still moves b in time.
LR = 0.01


def train_step(x, y, w, b, lr):
    y_pred = w * x + b  # [1] * [N, 1] + [1]: stays a column [N, 1], like y
    loss = ((y_pred - y) ** 2).sum()
    loss.backward()
    # The update is not part of the model: no_grad keeps autograd from recording it, and the in-place -= moves
    # the caller's w and b, which stay the same leaf tensors.
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    # backward() adds into .grad: clear it after the update has used it, so the next step starts from zero.
    w.grad.zero_()
    b.grad.zero_()
    return loss.item()  # a Python float, computed before the update; the tensor would keep its graph alive


def train(x, y, epochs):
    # Leaves of shape [1] created with requires_grad, so backward() fills their .grad.
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses
