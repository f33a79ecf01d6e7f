# The model in eval mode, only the head in training mode; the optimizer over model.head.parameters().
import torch
from torch import nn


def fine_tune(model: nn.Module, batches: list, lr: float, epochs: int) -> list:
    model.backbone.requires_grad_(False)
    model.eval()
    model.head.train()
    optimizer = torch.optim.SGD(model.head.parameters(), lr=lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            logits = model(x)
            loss = criterion(logits, y)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach().item())
    return losses
