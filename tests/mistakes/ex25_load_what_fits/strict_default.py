# Mistake: loads with the default strict=True: the new adapter is missing and the old head unexpected, so it raises.
# Expect: Pass strict=False
def strip_prefix(state_dict, prefix="module."):
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    result = model.load_state_dict(strip_prefix(state_dict))
    return list(result.missing_keys), list(result.unexpected_keys)
