"""ex09 - From a hand-written update to torch.optim: SGD with momentum and weight decay, Adam,
zero_grad(set_to_none=True), and a learning-rate scheduler stepped once per epoch.

`train_by_hand` below is the loop you are replacing: it works, but only for plain SGD, and every new
idea (momentum, weight decay, Adam's running averages, a decaying learning rate) would be more code to
get wrong. torch.optim has them all. Write the three functions marked TODO; `train_by_hand` stays as is.

The model is any nn.Module; `batches` is a list of (x, y) tensor pairs; the loss is F.mse_loss(model(x), y).
Run `grade ex09` to check your work.
"""

import torch
import torch.nn.functional as F


def train_by_hand(model, batches, epochs, lr):
    """The hand-written loop (given): plain SGD, constant learning rate."""
    for epoch in range(epochs):
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
                    p.grad.zero_()


def make_optimizer(model, kind: str, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
    """Return an optimizer over ALL of model's parameters.

    kind "sgd":  torch.optim.SGD with this lr, momentum and weight_decay.
    kind "adam": torch.optim.Adam with this lr and weight_decay (other settings at their defaults).
    """
    # TODO
    raise NotImplementedError


def make_scheduler(optimizer, kind: str, epochs: int, step_size: int = 10, gamma: float = 0.1):
    """Return a learning-rate scheduler for `optimizer`, meant to be stepped once per epoch.

    kind "step":   multiply the learning rate by gamma every step_size epochs (StepLR).
    kind "cosine": anneal the learning rate from its initial value to 0 over `epochs` epochs
                   along a cosine (CosineAnnealingLR).
    """
    # TODO
    raise NotImplementedError


def train(model, batches, epochs: int, optimizer, scheduler) -> list[float]:
    """The loop of train_by_hand, with `optimizer` and `scheduler` doing the work.

    For each epoch, for each (x, y) in batches: clear the gradients with optimizer.zero_grad(set_to_none=True),
    compute loss = F.mse_loss(model(x), y), backpropagate, and let the optimizer update the parameters.
    At the end of each epoch, step the scheduler once.
    Return a list with one float per epoch: the mean of that epoch's batch losses.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    batches = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 64, 16)]
    model = torch.nn.Linear(3, 1)
    optimizer = make_optimizer(model, "sgd", lr=0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = make_scheduler(optimizer, "step", epochs=30, step_size=10, gamma=0.5)
    losses = train(model, batches, 30, optimizer, scheduler)
    print("loss per epoch:", [round(v, 4) for v in losses[::5]], "final lr:", optimizer.param_groups[0]["lr"])
