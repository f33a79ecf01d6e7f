"""A correct variant: an open file object, map_location handed on with weights_only=True spelled out,
the objects looped over, and the epoch read with int()."""

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    with open(path, "wb") as f:
        torch.save({"epoch": epoch, **{name: obj.state_dict() for name, obj in
                                       (("model", model), ("optimizer", optimizer), ("scheduler", scheduler))}}, f)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu"):
    with open(path, "rb") as f:
        checkpoint = torch.load(f, map_location=map_location, weights_only=True)
    for name, obj in (("model", model), ("optimizer", optimizer), ("scheduler", scheduler)):
        obj.load_state_dict(checkpoint[name])
    return int(checkpoint["epoch"]) + 1
