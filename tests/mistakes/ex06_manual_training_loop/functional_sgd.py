# Mistake: updates through torch.optim's functional SGD (torch.optim.sgd.sgd): no optimizer object is made,
# but the update is torch.optim's, not written by hand.
# Expect: torch.optim's update function
import torch

LR = 0.01  # x spreads like randn * 5: dL/dw is about 50 times larger than dL/db


def train_step(x, y, w, b, lr):
    y_pred = w * x + b
    loss = ((y_pred - y) ** 2).mean()
    loss.backward()
    from torch.optim.sgd import sgd  # "the functional form: no optimizer object"

    with torch.no_grad():
        sgd([w, b], [w.grad, b.grad], [None, None], weight_decay=0.0, momentum=0.0, lr=lr, dampening=0.0,
            nesterov=False, maximize=False)
    w.grad.zero_()
    b.grad.zero_()
    return loss.item()


def train(x, y, epochs):
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses
