"""Reference solution of ex25: strip the prefix, drop the shapes that changed, load with strict=False."""

from torch import nn


def strip_prefix(state_dict: dict, prefix: str = "module.") -> dict:
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model: nn.Module, state_dict: dict):
    sd = strip_prefix(state_dict)
    own = model.state_dict()
    fits = {k: v for k, v in sd.items() if k not in own or v.shape == own[k].shape}
    result = model.load_state_dict(fits, strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)
