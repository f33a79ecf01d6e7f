# Mistake: after loading, moves the optimizer's state to the GPU whenever one is available, whatever map_location says.
# Expect: with a GPU present, load_checkpoint(..., map_location='cpu') still put things on the GPU

import torch


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
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for state in optimizer.state.values():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                state[key] = value.to(device)
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint["epoch"] + 1
