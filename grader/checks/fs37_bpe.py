"""Hidden checks of fs37: a BPE tokenizer (count pairs, merge, encode, decode), judged by exact token ids.

The expected merges and ids are computed here by the statement's rules (`train`, `encode_ids`, `decode_ids`) on the
corpus shipped with the exercise (CORPUS, the text of exercises/fs37_bpe/corpus.txt) and on small texts drawn per
check. Each slip is computed the same way and named when it alone explains the learner's result: a tie broken by the
smallest or largest pair or the last occurrence instead of the first, pairs counted without overlaps, the other base alphabet
(bytes vs characters), merged tokens numbered from BASE + 1, merges applied in the order they occur in the text
instead of the order learned, a byte-level decode token by token (a character cut between two tokens is lost).

Texts are drawn until the rules disagree: a tie at the top of the counts where each tie-break picks another pair, a
run of one letter where overlapping and non-overlapping counts differ, merges whose order of application matters.

Kata variants: `variant("base")`: byte-level (ids 0..255 are UTF-8 bytes, merges from 256) or character-level (a
character's id is its code point, merges from 0x110000). Each is the other's slip.
"""

import torch

from grader.checking import Text, check, fail, is_number, variant, verbatim

CORPUS = (
    "the cat sat on the mat. the cat ate the rat, and the rat ran at the cat.\n"
    "a naïve cat in a café ate crème brûlée; the café served the cat crème.\n"
    "猫坐在垫子上。猫吃了老鼠。老鼠跑了。\n"
    "that is that: the mat, the hat, the cat and the café.\n"
)

# -- judge side: the statement's rules and the slips --------------------------------------------------


def byte_level(slip=None) -> bool:
    byte = variant("base")["name"] == "byte"
    return not byte if slip == "other-base" else byte


def base(slip=None) -> int:
    return (256 if byte_level(slip) else 0x110000) + (slip == "ids-from-base-plus-1")


def to_ids(text, slip=None):
    return list(text.encode("utf-8")) if byte_level(slip) else [ord(c) for c in text]


def counts_of(ids, slip=None):
    counts: dict = {}
    i = 0
    while i + 1 < len(ids):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        i += 2 if slip == "non-overlapping-count" and ids[i] == ids[i + 1] else 1  # "aaa": (a, a) once
    return counts


def best_pair(counts, slip=None):
    top = max(counts.values())
    tied = [pair for pair, n in counts.items() if n == top]  # in order of first occurrence
    return min(tied) if slip == "ties-smallest" else max(tied) if slip == "ties-largest" else \
        tied[-1] if slip == "ties-last" else tied[0]


def merged(ids, pair, new):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train(text, num_merges, slip=None):
    """The merges by the statement's rules, or with one slip; also whether any choice was a tie."""
    ids, merges = to_ids(text, slip), []
    for i in range(num_merges):
        counts = counts_of(ids, slip)
        if not counts:
            break
        pair = best_pair(counts, slip)
        ids = merged(ids, pair, base(slip) + i)
        merges.append(pair)
    return merges


def encode_ids(text, merges, slip=None):
    ids = to_ids(text, slip)
    if slip == "merge-order-in-text":  # the first mergeable pair found in the text, whatever its rank
        rank = {pair: i for i, pair in enumerate(merges)}
        while True:
            found = next((j for j in range(len(ids) - 1) if (ids[j], ids[j + 1]) in rank), None)
            if found is None:
                return ids
            ids = ids[:found] + [base() + rank[(ids[found], ids[found + 1])]] + ids[found + 2:]
    for i, pair in enumerate(merges):
        ids = merged(ids, pair, base(slip) + i)
    return ids


def spelled(merges, token):
    parts: dict = {}
    for i, (a, b) in enumerate(merges):
        parts[base() + i] = parts.get(a, [a]) + parts.get(b, [b])
    return parts.get(token, [token])


def decode_ids(ids, merges, slip=None):
    if slip == "decoded-per-token":
        return "".join(bytes(spelled(merges, t)).decode("utf-8", errors="replace") for t in ids)
    symbols = [s for t in ids for s in spelled(merges, t)]
    return bytes(symbols).decode("utf-8", errors="replace") if byte_level() else "".join(chr(s) for s in symbols)


SLIPS = {
    "ties-smallest": ("a tie broken by the smallest pair of ids: among equally frequent pairs, the statement takes the "
                      "one that occurs first in the current sequence (a dict of counts built in order, then max).",
                      "并列时取 id 最小的对：在出现次数相同的对中，题目要求取在当前序列中最先出现的那一个（按顺序建立计数的 "
                      "dict，再用 max）。"),
    "ties-largest": ("a tie broken by the largest pair of ids (a max over (count, pair)): among equally frequent "
                     "pairs, the statement takes the one that occurs first in the current sequence.",
                     "并列时取 id 最大的对（对 (count, pair) 取 max）：在出现次数相同的对中，题目要求取在当前序列中最先"
                     "出现的那一个。"),
    "ties-last": ("a tie broken by the pair seen last: among equally frequent pairs, the statement takes the one that "
                  "occurs first in the current sequence.", "并列时取最后出现的对：在出现次数相同的对中，题目要求取在当前"
                  "序列中最先出现的那一个。"),
    "non-overlapping-count": ("pairs counted without overlaps: every adjacent pair counts, so \"aaa\" holds (a, a) "
                              "twice (merging, not counting, is left to right without overlaps).",
                              "不重叠地计数相邻对：每个相邻对都要计数，所以 `\"aaa\"` 中 `(a, a)` 出现两次（不重叠、从左到右的"
                              "是合并，而不是计数）。"),
    "other-base": ("{other}: here {this}.", "{other_zh}：这里是{this_zh}。"),
    "ids-from-base-plus-1": ("merged tokens numbered from BASE + 1: merge i makes token BASE + i, the first one BASE.",
                             "合并出的词元从 BASE + 1 开始编号：第 i 次合并得到词元 BASE + i，第一个就是 BASE。"),
    "merge-order-in-text": ("merges applied in the order their pairs occur in the text: encode applies them in the "
                            "order they were learned (merge 0 everywhere first, then merge 1...).",
                            "按对在文本中出现的顺序应用合并：encode 要按学到的顺序应用它们（先在所有位置应用第 0 次合并，"
                            "再应用第 1 次……）。"),
    "decoded-per-token": ("each token decoded to text on its own: a character whose bytes are cut between two tokens "
                          "is lost; join all the bytes first, then decode once.",
                          "每个词元单独解码成文本：字节被切在两个词元之间的字符就丢了；要先把所有字节连起来，再解码一次。"),
}


def other_base_values() -> dict:
    byte = byte_level()
    return {"other": "it matches the other base alphabet, " + ("characters' code points" if byte else "UTF-8 bytes"),
            "other_zh": "它与另一种基础字母表（" + ("字符的码位" if byte else "UTF-8 字节") + "）的结果一致",
            "this": "the UTF-8 bytes (ids 0..255, merges from 256)" if byte else
                    "the characters' code points (ord(c), merges from 0x110000)",
            "this_zh": " UTF-8 字节（id 为 0..255，合并从 256 开始）" if byte else "字符的码位（ord(c)，合并从 0x110000 开始）"}


def why(slip) -> Text:
    en, zh = SLIPS[slip]
    if slip != "other-base":
        en = "it matches " + en
        zh = "它与" + zh.split("：", 1)[0] + "的结果一致：" + zh.split("：", 1)[1]
    return Text(en, zh, **{k: verbatim(v) for k, v in other_base_values().items()})


def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def draw_text(rng, letters: str, length: int) -> str:
    return "".join(letters[i] for i in torch.randint(0, len(letters), (length,), generator=rng).tolist())


def designed(rng, make, what: str, tries=500):
    for _ in range(tries):
        case = make(rng)
        if case is not None:
            return case
    raise RuntimeError(f"fs37: no {what} case found in {tries} draws")


def apart(results) -> bool:
    """Whether the results (the right one first, then each slip's) all differ from one another."""
    return all(a != b for i, a in enumerate(results) for b in results[i + 1:])


def as_merges(value, what):
    if isinstance(value, (list, tuple)) and all(
            isinstance(m, (list, tuple)) and len(m) == 2 and all(is_number(x, int) for x in m) for m in value):
        return [(int(a), int(b)) for a, b in value]
    fail("{what} returned {got}: it returns the merges in the order learned, a list of (int, int) pairs of token ids.",
         "{what} 返回了 {got}：它应按学到的顺序返回合并，一个由 (int, int) 词元 id 对组成的列表。", what=what,
         got=verbatim(repr(value)[:160]), key="merges-format")


def as_ids(value, what):
    if isinstance(value, torch.Tensor) and value.dim() == 1:
        value = value.tolist()
    if isinstance(value, (list, tuple)) and all(is_number(x, int) for x in value):
        return [int(x) for x in value]
    fail("{what} returned {got}: it returns the token ids, a list of ints.", "{what} 返回了 {got}：它应返回词元 id，"
         "一个 int 的列表。", what=what, got=verbatim(repr(value)[:160]), key="ids-format")


def short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def first_difference(got, want) -> int:
    return next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))


def expect_merges(submission, text, num_merges, slips, label=None):
    what = Text("train_bpe({text}, {n})", text=verbatim(label or short(text)), n=num_merges)
    got = as_merges(submission.train_bpe(text, num_merges), what)
    want = train(text, num_merges)
    if got == want:
        return
    named = [slip for slip in slips if got == train(text, num_merges, slip)]
    i = first_difference(got, want)
    shown = Text("merge {i} should be {want}, got {got}", "第 {i} 次合并应为 {want}，实际为 {got}", i=i,
                 want=verbatim(str(want[i]) if i < len(want) else "nothing (no more merges)"),
                 got=verbatim(str(got[i]) if i < len(got) else "nothing (the list ends)"))
    if len(named) == 1:
        fail("{what}: {shown}: {why}", "{what}：{shown}：{why}", what=what, shown=shown, why=why(named[0]),
             key=named[0])
    fail("{what}: {shown} ({n} merges expected, {m} returned).", "{what}：{shown}（应有 {n} 次合并，返回了 {m} 次）。",
         what=what, shown=shown, n=len(want), m=len(got), key="wrong-merges")


def expect_encoded(submission, text, merges, slips, label=None):
    what = Text("encode({text}, merges)", text=verbatim(label or short(text)))
    got = as_ids(submission.encode(text, merges), what)
    want = encode_ids(text, merges)
    if got == want:
        return
    named = [slip for slip in slips if got == encode_ids(text, merges, slip)]
    i = first_difference(got, want)
    shown = Text("should be {want}, got {got} (they differ at position {i})", "应为 {want}，实际为 {got}（在位置 {i} "
                 "处不同）", want=verbatim(str(want[:i + 3]) + ("..." if len(want) > i + 3 else "")),
                 got=verbatim(str(got[:i + 3]) + ("..." if len(got) > i + 3 else "")), i=i)
    if len(named) == 1:
        fail("{what} {shown}: {why}", "{what} {shown}：{why}", what=what, shown=shown, why=why(named[0]), key=named[0])
    fail("{what} {shown}.", "{what} {shown}。", what=what, shown=shown, key="wrong-ids")


# -- the checks -------------------------------------------------------------------------------------

@check("decode(encode(text)) gives the text back, with your own merges", points=1,
       zh="用你自己的合并，decode(encode(text)) 还原出原文")
def test_roundtrip(submission, rng):
    for text in (CORPUS, "naïve café, 猫猫猫 " * 3):
        what = Text("decode(encode({text}, merges), merges) with merges = train_bpe(corpus, 20)",
                    "decode(encode({text}, merges), merges)，其中 merges = train_bpe(corpus, 20)",
                    text=verbatim(short(text)))
        merges = as_merges(submission.train_bpe(CORPUS, 20), Text("train_bpe(corpus, 20)"))
        ids = as_ids(submission.encode(text, merges), Text("encode({text}, merges)", text=verbatim(short(text))))
        back = submission.decode(ids, merges)
        if back != text:
            fail("{what} gave {got}, not the text: decode must undo encode.", "{what} 得到的是 {got}，而不是原文："
                 "decode 必须还原 encode。", what=what, got=verbatim(short(str(back))), key="not-roundtrip")


@check("train_bpe on the shipped corpus gives exactly the expected merges", points=2,
       zh="在附带的语料上 train_bpe 恰好给出预期的合并", depends="roundtrip")
def test_train_corpus(submission, rng):
    expect_merges(submission, CORPUS, 40, ["ties-smallest", "ties-largest", "ties-last", "non-overlapping-count",
                                           "other-base", "ids-from-base-plus-1"], label="corpus")


@check("ties go to the pair that occurs first; pairs are counted overlapping, merged left to right", points=2,
       zh="并列时取最先出现的对；相邻对重叠计数，从左到右合并", depends="train_corpus")
def test_ties_and_runs(submission, rng):
    slips = ["ties-smallest", "ties-largest", "ties-last", "non-overlapping-count"]

    def make(rng):
        text = draw_text(rng, "abcd", randint(rng, 10, 14)) + "aaa" + draw_text(rng, "bcd", 3)
        n = randint(rng, 3, 5)
        return (text, n) if apart([train(text, n)] + [train(text, n, slip) for slip in slips]) else None

    text, n = designed(rng, make, "ties")
    expect_merges(submission, text, n, slips)
    expect_merges(submission, "x", 3, [])  # one token: nothing to merge, no merges
    runs = "a" * randint(rng, 5, 7) + "b" * 2  # a run: merged left to right, never overlapping
    expect_merges(submission, runs, 3, slips)


@check("encode applies the merges in the order learned, on the corpus and new text", points=2,
       zh="encode 按学到的顺序应用合并，在语料和新文本上都是", depends="train_corpus")
def test_encode(submission, rng):
    merges = train(CORPUS, 40)
    expect_encoded(submission, CORPUS, merges, ["merge-order-in-text", "other-base"], label="corpus")

    def make(rng):  # merges given here, where the order of application matters
        text = draw_text(rng, "abc", randint(rng, 9, 12))
        ids = to_ids(text)
        pairs = list(dict.fromkeys(zip(ids, ids[1:])))
        order = torch.randperm(len(pairs), generator=rng).tolist()[:3]
        merges = [pairs[i] for i in order]
        ok = encode_ids(text, merges) != encode_ids(text, merges, "merge-order-in-text")
        return (text, merges) if ok else None

    text, merges = designed(rng, make, "encode order")
    expect_encoded(submission, text, merges, ["merge-order-in-text"])


@check("decode spells every token in base ids and joins them into the text", points=2,
       zh="decode 把每个词元展开成基础 id，再拼成文本", depends="train_corpus")
def test_decode(submission, rng):
    merges = train(CORPUS, 40)
    for text in (CORPUS, "the café: 猫"):
        ids = encode_ids(text, merges)
        if byte_level():  # a character cut between two tokens: its bytes are joined before decoding
            ids = ids[:-1] + [int(b) for b in "猫".encode()]
        what = Text("decode(encode({text}), merges)", text=verbatim(short(text)))
        got = submission.decode(ids, merges)
        want = decode_ids(ids, merges)
        if got == want:
            continue
        if byte_level() and got == decode_ids(ids, merges, "decoded-per-token"):
            fail("{what} returned {got}, not {want}: {why}", "{what} 返回了 {got}，而不是 {want}：{why}", what=what,
                 got=verbatim(short(str(got))), want=verbatim(short(want)), why=why("decoded-per-token"),
                 key="decoded-per-token")
        fail("{what} returned {got}, not {want}.", "{what} 返回了 {got}，而不是 {want}。", what=what,
             got=verbatim(short(str(got))), want=verbatim(short(want)), key="wrong-text")


@check("train_bpe, encode and decode on a text with one character or none", points=1,
       zh="train_bpe、encode 和 decode 在只有一个字符或为空的文本上", depends="train_corpus")
def test_short(submission, rng):
    merges = train(CORPUS, 40)
    expect_merges(submission, "", 2, [])
    expect_encoded(submission, "", merges, [])
    expect_encoded(submission, "é", merges, ["other-base"])
    got = submission.decode([], merges)
    if got != "":
        fail("decode([], merges) returned {got}: no tokens decode to the empty string.",
             "decode([], merges) 返回了 {got}：没有词元时解码为空字符串。", got=verbatim(repr(got)[:60]), key="wrong-text")
