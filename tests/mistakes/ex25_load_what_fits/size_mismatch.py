# Mistake: trusts strict=False to skip everything that does not fit: the classifier's shape changed, so it raises.
# Expect: Drop those entries before loading
def strip_prefix(state_dict, prefix="module."):
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}


def load_what_fits(model, state_dict):
    result = model.load_state_dict(strip_prefix(state_dict), strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)
