# Mistake: puts the backbone in eval mode once, then calls model.train() in every epoch, which undoes it.
# Expect: call model.backbone.eval() after it
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    model.backbone.requires_grad_(False)
    model.backbone.eval()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        model.train()
        for x, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
