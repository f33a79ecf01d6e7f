# Mistake: adds .pt to a path that does not end in it: the file is not where the caller asked.
# Expect: wrote no file at the path it was given
import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    path = path if str(path).endswith(".pt") else f"{path}.pt"  # "a checkpoint is a .pt file"
    torch.save({
        "epoch": epoch,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "scheduler_state_dict": scheduler.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    path = path if str(path).endswith(".pt") else f"{path}.pt"
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint["epoch"] + 1
