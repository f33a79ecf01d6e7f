# Mistake: saves the model, optimizer and scheduler objects themselves; torch.load's default (weights_only=True) then refuses the file.
# Expect: holds whole objects

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    torch.save({"epoch": epoch, "model": model, "optimizer": optimizer, "scheduler": scheduler}, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    checkpoint = torch.load(path, map_location=map_location)
    model.load_state_dict(checkpoint["model"].state_dict())
    optimizer.load_state_dict(checkpoint["optimizer"].state_dict())
    scheduler.load_state_dict(checkpoint["scheduler"].state_dict())
    return checkpoint["epoch"] + 1
