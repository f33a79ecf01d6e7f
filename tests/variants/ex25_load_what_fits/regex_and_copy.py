# re.sub anchored at the start, copy_ under no_grad into the model's own tensors, sets returned as tuples.
import re

import torch


def strip_prefix(state_dict, prefix="module."):
    pattern = "^" + re.escape(prefix)
    return {re.sub(pattern, "", k, count=1): v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    sd = strip_prefix(state_dict)
    own = model.state_dict()
    loaded = set()
    with torch.no_grad():
        for k, v in sd.items():
            if k in own and own[k].shape == v.shape:
                own[k].copy_(v)
                loaded.add(k)
    missing = tuple(k for k in own if k not in loaded)
    unexpected = tuple(k for k in sd if k not in own)
    return missing, unexpected
