# Mistake: never strips "module.": nothing matches, strict=False silently loads nothing.
# Expect: nothing was loaded
def strip_prefix(state_dict, prefix="module."):
    return dict(state_dict)


def load_what_fits(model, state_dict):
    own = model.state_dict()
    fits = {k: v for k, v in state_dict.items() if k not in own or v.shape == own[k].shape}
    result = model.load_state_dict(fits, strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)
