# Mistake: compares with named_parameters(), which holds no buffers: BatchNorm's running statistics are dropped.
# Expect: BatchNorm statistics are not loaded
def strip_prefix(state_dict, prefix="module."):
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    sd = strip_prefix(state_dict)
    params = dict(model.named_parameters())
    fits = {k: v for k, v in sd.items() if k in params and v.shape == params[k].shape}
    result = model.load_state_dict(fits, strict=False)
    unexpected = [k for k in sd if k not in model.state_dict()]
    return list(result.missing_keys), unexpected
