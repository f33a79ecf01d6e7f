# str.removeprefix, the bookkeeping done by hand, load_state_dict on a merged full state dict (strict=True).
def strip_prefix(state_dict, prefix="module."):
    out = {}
    for key, value in state_dict.items():
        out[key.removeprefix(prefix)] = value
    return out


def load_what_fits(model, state_dict):
    ckpt = strip_prefix(state_dict)
    merged = dict(model.state_dict())
    missing, unexpected = [], []
    for key, value in merged.items():
        if key in ckpt and ckpt[key].shape == value.shape:
            merged[key] = ckpt[key]
        else:
            missing.append(key)
    unexpected = [key for key in ckpt if key not in merged]
    model.load_state_dict(merged)
    return missing, unexpected
