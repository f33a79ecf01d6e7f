# Mistake: puts the whole model in eval mode to keep the backbone's BatchNorm, and never calls model.train():
# the backbone is right, but the head (which has a BatchNorm of its own) trains in eval mode.
# Expect: the head ran in eval mode
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    model.backbone.requires_grad_(False)
    model.eval()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        for x, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
