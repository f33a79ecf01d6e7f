# Mistake: saves the model's named_parameters() instead of its state_dict(): the BatchNorm's running
# statistics, buffers, are lost (load_state_dict(strict=False) hides it).
# Expect: buffers
import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    torch.save({
        "epoch": epoch,
        "model_state_dict": dict(model.named_parameters()),  # "the weights are the parameters"
        "optimizer_state_dict": optimizer.state_dict(),
        "scheduler_state_dict": scheduler.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"], strict=False)
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint["epoch"] + 1
