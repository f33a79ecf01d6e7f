# Freezes parameter by parameter, sets each BatchNorm of the backbone to eval, filter() for the optimizer.
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    for p in model.backbone.parameters():
        p.requires_grad = False
    opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=lr, momentum=0.9)
    losses = []
    for epoch in range(epochs):
        model.train()
        for m in model.backbone.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.eval()
        for x, labels in batches:
            loss = nn.functional.cross_entropy(model(x), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss))
    return losses
