# Mistake: moves the restored model to a device chosen at import (the GPU when there is one), whatever map_location says.
# Expect: still put things on the GPU

import torch

DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    torch.save({
        "epoch": epoch,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "scheduler_state_dict": scheduler.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    model.to(DEVICE)  # keep training where the machine trains
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint["epoch"] + 1
