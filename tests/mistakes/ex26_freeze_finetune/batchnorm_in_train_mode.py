# Mistake: freezes the parameters but leaves the whole model in training mode: BatchNorm overwrites its
# pretrained running statistics with the batches' ones.
# Expect: BatchNorm updated its running statistics
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    model.backbone.requires_grad_(False)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    model.train()
    for _ in range(epochs):
        for x, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
