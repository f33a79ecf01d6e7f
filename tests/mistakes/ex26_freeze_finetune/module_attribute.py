# Mistake: sets requires_grad as an attribute of the backbone module: no parameter is frozen.
# Expect: sets an attribute on the module object
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    model.backbone.requires_grad = False
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        model.train()
        model.backbone.eval()
        for x, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
