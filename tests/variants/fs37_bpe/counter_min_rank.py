"""A correct variant: collections.Counter for the counts (most_common keeps first-seen order among ties), encode as
minbpe does (merge the pair of lowest rank present, until none), decode through a table of base-id spellings."""

from collections import Counter

BASE = 256  # byte-level: ids 0..255 are the UTF-8 bytes; merge i makes token 256 + i


def to_ids(text):
    return list(text.encode("utf-8"))


def from_ids(symbols):
    return bytes(symbols).decode("utf-8", errors="replace")  # a character cut short becomes U+FFFD


def simple_merge(ids, pair, new_id):
    out, skip = [], False
    for j, token in enumerate(ids):
        if skip:
            skip = False
            continue
        if j + 1 < len(ids) and (token, ids[j + 1]) == pair:
            out.append(new_id)
            skip = True
        else:
            out.append(token)
    return out


def train_bpe(text, num_merges):
    ids = to_ids(text)
    merges = []
    while len(merges) < num_merges and len(ids) > 1:
        (pair, _), = Counter(zip(ids, ids[1:])).most_common(1)
        ids = simple_merge(ids, pair, BASE + len(merges))
        merges.append(tuple(pair))
    return merges


def encode(text, merges):
    ids = to_ids(text)
    rank = {tuple(p): i for i, p in enumerate(merges)}
    while len(ids) > 1:
        present = [p for p in zip(ids, ids[1:]) if p in rank]
        if not present:
            break
        pair = min(present, key=rank.get)
        ids = simple_merge(ids, pair, BASE + rank[pair])
    return ids


def decode(ids, merges):
    table = {}
    for i, (a, b) in enumerate(merges):
        table[BASE + i] = table.get(a, [a]) + table.get(b, [b])
    base_ids = []
    for t in ids:
        base_ids.extend(table.get(t, [t]))
    return from_ids(base_ids)
