"""ex15 - Checkpoints: stop a training run and resume it exactly where it was.

Write `save_checkpoint` and `load_checkpoint`. A run saved after some epoch and resumed from the file
must end with the same weights as a run that never stopped. Run `grade ex15` to check your work.
"""

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    """Write to `path` everything needed to resume after `epoch` (the epoch just finished):
    the model, the optimizer, the scheduler and the epoch number.
    """
    # TODO: one dict, one torch.save. Save state_dicts, not the objects themselves.
    raise NotImplementedError


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    """Restore `model`, `optimizer` and `scheduler` (already created, as when the run began) from `path`.

    `map_location` goes to torch.load unchanged (a device, a string like "cpu", a dict or a function).
    Returns the epoch to resume from: the saved epoch + 1.
    """
    # TODO: torch.load safely, then load each state_dict into its object.
    raise NotImplementedError


if __name__ == "__main__":
    from torch import nn

    def make():
        model = nn.Linear(3, 1)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
        return model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

    x, y = torch.randn(16, 3), torch.randn(16, 1)
    model, optimizer, scheduler = make()
    for epoch in range(3):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        scheduler.step()
    save_checkpoint("checkpoint.pt", model, optimizer, scheduler, epoch)
    model2, optimizer2, scheduler2 = make()
    start = load_checkpoint("checkpoint.pt", model2, optimizer2, scheduler2)
    print("resume at epoch", start, "lr", optimizer2.param_groups[0]["lr"])
    print(torch.equal(model.weight, model2.weight))
