# Mistake: saves the next epoch (epoch + 1) and adds 1 again when loading, so one epoch is skipped.
# Expect: is 1 added twice

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    torch.save({
        "next_epoch": epoch + 1,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "scheduler_state_dict": scheduler.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint["next_epoch"] + 1
