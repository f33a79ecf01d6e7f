"""ex22 - Fix the training: the loss does not go down.

`fit` builds a small network (a body of two Linear layers, then a head) and trains it with SGD on the
whole batch, but its loss stays where it started. Three bugs hide in this file, each one a classic
cause of "the loss does not decrease". Find them and fix them so that every parameter of the model
gets a gradient and learns. Keep the architecture, SGD and lr as they are.

Run `grade ex22` to check your fix.
"""

import torch
from torch import nn


def make_body(in_features: int, hidden: int) -> nn.Module:
    """The feature extractor: Linear -> Tanh -> Linear -> Tanh."""
    body = nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
    for p in body[0].parameters():  # copied from a fine-tuning script
        p.requires_grad = False
    return body


def fit(x: torch.Tensor, y: torch.Tensor, hidden: int, lr: float, epochs: int):
    """Train body + head on (x, y) with the mean squared error; return (model, losses), one float per epoch."""
    # TODO: the loss does not go down. Find the three bugs in this file and fix them.
    model = nn.Sequential(make_body(x.shape[1], hidden))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    model.append(nn.Linear(hidden, y.shape[1]))  # the head
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        pred = model(x)
        err = pred.detach().numpy() - y.numpy()  # pred.numpy() raised "Can't call numpy() on Tensor that requires grad"
        loss = torch.tensor((err ** 2).mean(), requires_grad=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(64, 4)
    y = torch.sin(x @ torch.randn(4, 1))
    model, losses = fit(x, y, hidden=16, lr=0.3, epochs=150)
    print("losses:", [round(v, 4) for v in losses[::10]])
    for name, p in model.named_parameters():
        print(name, "requires_grad", p.requires_grad, "grad", None if p.grad is None else round(p.grad.norm().item(), 6))
