# Mistake: pops the entries that do not fit out of the caller's checkpoint dict.
# Expect: changed the checkpoint dict
def strip_prefix(state_dict, prefix="module."):
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    own = model.state_dict()
    for k in list(state_dict):
        key = k[7:] if k.startswith("module.") else k
        if key in own and state_dict[k].shape != own[key].shape:
            state_dict.pop(k)
    result = model.load_state_dict(strip_prefix(state_dict), strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)
