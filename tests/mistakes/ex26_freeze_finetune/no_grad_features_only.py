# Mistake: computes the backbone's features under torch.no_grad() instead of freezing: no gradient reaches the
# backbone, but its parameters still say requires_grad=True, the optimizer holds them, and BatchNorm still updates.
# Expect: still have requires_grad=True
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    model.train()
    for _ in range(epochs):
        for x, labels in batches:
            optimizer.zero_grad()
            with torch.no_grad():
                features = model.backbone(x)
            loss = loss_fn(model.head(features), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
