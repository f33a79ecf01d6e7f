# Mistake: saves and loads only the model's state_dict (as for inference), not the optimizer and scheduler.
# Expect: has an empty state

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    torch.save({
        "epoch": epoch,
        "model_state_dict": model.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    return checkpoint["epoch"] + 1
