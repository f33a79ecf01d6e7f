# Mistake: squeezes the old 10-class classifier into the new one by keeping its first 3 rows.
# Expect: leave the new layers as the model made them
def strip_prefix(state_dict, prefix="module."):
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    sd = strip_prefix(state_dict)
    own = model.state_dict()
    fits = {}
    for k, v in sd.items():
        if k in own and v.shape != own[k].shape:
            v = v[: own[k].shape[0]]
        fits[k] = v
    model.load_state_dict(fits, strict=False)
    missing = [k for k in own if k not in sd]
    return missing, [k for k in sd if k not in own]
