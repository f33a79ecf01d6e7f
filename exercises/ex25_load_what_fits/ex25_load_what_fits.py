"""ex25 - Loading what fits: a pretrained backbone into a model with a new head.

A checkpoint was saved from an older model (perhaps wrapped in nn.DataParallel, whose keys all start
with "module."). Your new model shares its encoder, but has a classifier for other classes and a layer
the old model never had. Load what fits, leave the rest alone, and say what was left out.
Run `grade ex25` to check your work.
"""

import torch
from torch import nn


def strip_prefix(state_dict: dict, prefix: str = "module.") -> dict:
    """A new dict in which every key that starts with `prefix` loses it; other keys stay as they are.
    The dict passed in is left unchanged."""
    # TODO
    raise NotImplementedError


def load_what_fits(model: nn.Module, state_dict: dict):
    """Load into `model` every entry of `state_dict` (with a "module." prefix stripped) whose key the model
    has and whose shape matches; leave every other tensor of the model as it is. `state_dict` is left
    unchanged. Returns (missing, unexpected): `missing`, the keys of model.state_dict() that got no value
    (new layers, and layers whose shape changed); `unexpected`, the keys of the stripped checkpoint that
    the model does not have."""
    # TODO: strip, drop what does not fit, then model.load_state_dict(..., strict=False)
    raise NotImplementedError


if __name__ == "__main__":
    old = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 10))
    checkpoint = {"module." + k: v for k, v in old.state_dict().items()}  # saved from nn.DataParallel(old)
    new = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))  # a head for 3 classes
    missing, unexpected = load_what_fits(new, checkpoint)
    print("missing:", missing, "unexpected:", unexpected)
    print("first layer loaded:", torch.equal(new[0].weight, old[0].weight))
