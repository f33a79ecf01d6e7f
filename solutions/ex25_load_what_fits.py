"""Reference solution of ex25: strip the prefix, drop the shapes that changed, load with strict=False."""

from torch import nn


def strip_prefix(state_dict: dict, prefix: str = "module.") -> dict:
    # Cut the prefix at the start of a key only, once: replace() would also cut it inside a key, and lstrip()
    # removes a set of letters, not a prefix. A new dict, so the caller's is left unchanged.
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model: nn.Module, state_dict: dict):
    sd = strip_prefix(state_dict)
    own = model.state_dict()  # parameters and buffers (BatchNorm's running statistics) alike
    # Drop only the entries whose shape changed: the model keeps its own fresh values there. Keys the model
    # lacks stay in, so that load_state_dict reports them as unexpected, without the prefix.
    fits = {k: v for k, v in sd.items() if k not in own or v.shape == own[k].shape}
    # strict=False loads every key that matches and reports the rest instead of raising.
    result = model.load_state_dict(fits, strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)
