# Mistake: keeps only the keys the model has, so load_state_dict reports no unexpected key: the old head goes unnoticed.
# Expect: the checkpoint's keys the model does not have
def strip_prefix(state_dict, prefix="module."):
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    sd = strip_prefix(state_dict)
    own = model.state_dict()
    fits = {k: v for k, v in sd.items() if k in own and v.shape == own[k].shape}
    result = model.load_state_dict(fits, strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)
