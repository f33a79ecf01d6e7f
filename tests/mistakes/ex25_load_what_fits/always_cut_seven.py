# Mistake: cuts the first 7 characters of every key, prefixed or not: a checkpoint without the prefix loads nothing.
# Expect: nothing was loaded
def strip_prefix(state_dict, prefix="module."):
    return {k[len(prefix):]: v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    sd = strip_prefix(state_dict)
    own = model.state_dict()
    fits = {k: v for k, v in sd.items() if k not in own or v.shape == own[k].shape}
    result = model.load_state_dict(fits, strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)

