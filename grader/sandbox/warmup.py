"""Warm a long-lived parent's torch before it forks: run, once, a tiny training on data of its own.

The first time a process builds a module, runs a backward, steps an optimizer or iterates a DataLoader, torch
resolves operators, fills caches and imports lazily: a sandbox forked from a parent that never did pays it in its
own run (ex14's probes took 150 ms in a fresh fork, 90 ms in one forked after this warm-up). So the zygote and the
warm parents (service, batch, watch, validate) run it before their forks, and every sandbox and judge inherits it
done. Trusted code only, on tensors made here: no learner code or data, no thread started, and the random state,
grad mode and every module left as they were. The optimizers' part waits until torch._dynamo is imported (the
first optimizer imports it, for a second or more): an exercise that needs one preloads it, and `run` is called
again after.
"""

from __future__ import annotations

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

_done: set[str] = set()


def run() -> None:
    """Run the parts not run yet whose modules are imported (idempotent)."""
    parts = [("modules", _modules)]
    if "torch._dynamo" in sys.modules:
        parts.append(("optimizers", _optimizers))
    for name, part in parts:
        if name not in _done:
            with torch.random.fork_rng(devices=[]), torch.enable_grad():
                part()
            _done.add(name)


def _model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3))


def _loader() -> DataLoader:
    return DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 3, (8,))), batch_size=4, shuffle=True)


def _modules() -> None:
    """Forward in both modes, the common losses, backward and torch.autograd.grad, a state_dict round trip, a
    DataLoader's shuffled batches, gradient clipping."""
    model = _model()
    for x, y in _loader():
        model.train()
        loss = nn.functional.cross_entropy(model(x), y) + nn.MSELoss()(model(x), torch.zeros(len(y), 3))
        torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        model.eval()
        with torch.no_grad():
            (model(x).argmax(dim=1) == y).float().mean().item()
    model.load_state_dict({k: v.clone() for k, v in model.state_dict().items()})


def _optimizers() -> None:
    """A few steps of SGD with momentum and of Adam, with zero_grad and the two common schedulers."""
    model = _model()
    for optimizer in (torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
                      torch.optim.Adam(model.parameters(), lr=0.01)):
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
        step = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)
        for x, y in _loader():
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        step.step()
        plateau.step(loss.item())
