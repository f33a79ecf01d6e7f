"""A correct variant: device_count, model = model.to(...), tuple moves, a hand-written MSE, losses stacked
from a list of device tensors, the optimizer made before the model moves."""

import torch


def pick_device():
    if torch.cuda.device_count() > 0:
        return torch.device("cuda")
    return torch.device("cpu")


def train(model, x, y, device, steps=20, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    x, y = x.to(device), y.to(device)
    history = []
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        history.append(loss.detach())
    return torch.stack(history)
