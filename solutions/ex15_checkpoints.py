"""Reference solution of ex15 (checkpoints: save and resume model, optimizer, scheduler and epoch)."""

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    # state_dicts, not the objects: tensors and numbers that weights_only=True can load, no class pickled by name.
    torch.save({
        "epoch": epoch,
        "model_state_dict": model.state_dict(),
        # Adam's running averages and the scheduler's step count: without them a resumed run is another run.
        "optimizer_state_dict": optimizer.state_dict(),
        "scheduler_state_dict": scheduler.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    # weights_only=True: a checkpoint may come from anywhere, and a full unpickle can run any code. map_location
    # as given puts the tensors where the caller wants them, whatever device they were saved from.
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    # Load into the objects the caller made, in place: their optimizer must keep pointing at the model's tensors.
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint["epoch"] + 1  # the saved epoch is finished: resume with the next one
