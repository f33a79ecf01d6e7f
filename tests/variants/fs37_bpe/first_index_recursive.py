"""A correct variant: counts and first positions kept side by side, the tie broken by the smallest first position,
merging by index lists, and a recursive decode."""

BASE = 256  # byte-level: ids 0..255 are the UTF-8 bytes; merge i makes token 256 + i


def to_ids(text):
    return list(text.encode("utf-8"))


def from_ids(symbols):
    return bytes(symbols).decode("utf-8", errors="replace")  # a character cut short becomes U+FFFD


def train_bpe(text, num_merges):
    ids = to_ids(text)
    merges = []
    for step in range(num_merges):
        if len(ids) < 2:
            break
        count, first = {}, {}
        for j in range(len(ids) - 1):
            pair = (ids[j], ids[j + 1])
            count[pair] = count.get(pair, 0) + 1
            first.setdefault(pair, j)
        best = sorted(count, key=lambda p: (-count[p], first[p]))[0]
        new, j = [], 0
        while j < len(ids):
            if ids[j:j + 2] == list(best):
                new.append(BASE + step)
                j += 2
            else:
                new.append(ids[j])
                j += 1
        ids = new
        merges.append(best)
    return merges


def encode(text, merges):
    ids = to_ids(text)
    for step, (a, b) in enumerate(merges):
        new, j = [], 0
        while j < len(ids):
            if j < len(ids) - 1 and ids[j] == a and ids[j + 1] == b:
                new.append(BASE + step)
                j += 2
            else:
                new.append(ids[j])
                j += 1
        ids = new
    return ids


def decode(ids, merges):
    def spell(token):
        if token < BASE:
            return [token]
        a, b = merges[token - BASE]
        return spell(a) + spell(b)

    return from_ids([s for t in ids for s in spell(t)])
