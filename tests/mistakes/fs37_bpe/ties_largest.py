# Mistake: picks the pair with max over (count, pair), so a tie goes to the largest pair of ids.
# Expect: largest pair of ids

BASE = 256  # byte-level: ids 0..255 are the UTF-8 bytes; merge i makes token 256 + i


def to_ids(text):
    return list(text.encode("utf-8"))


def from_ids(symbols):
    return bytes(symbols).decode("utf-8", errors="replace")  # a character cut short becomes U+FFFD


def pair_counts(ids):
    counts = {}  # insertion order is the order of first occurrence: max() then breaks ties by it
    for pair in zip(ids, ids[1:]):  # every adjacent pair, overlapping ones too
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:  # left to right, never overlapping
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train_bpe(text, num_merges):
    ids, merges = to_ids(text), []
    for i in range(num_merges):
        counts = pair_counts(ids)
        if not counts:  # a single token left: nothing to merge
            break
        pair = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
        ids = merge(ids, pair, BASE + i)
        merges.append(pair)
    return merges


def encode(text, merges):
    ids = to_ids(text)
    for i, pair in enumerate(merges):  # in the order learned: merge i never needs a later token
        ids = merge(ids, pair, BASE + i)
    return ids


def decode(ids, merges):
    parts = {}
    for i, (a, b) in enumerate(merges):  # each merged token spelled in base ids
        parts[BASE + i] = parts.get(a, [a]) + parts.get(b, [b])
    return from_ids([s for t in ids for s in parts.get(t, [t])])
