"""fs37 - A BPE tokenizer, from scratch: count pairs, merge, encode, decode.

Byte-pair encoding starts from a base alphabet and learns merges: the most frequent adjacent pair of
tokens becomes one new token, again and again. encode replays the merges on new text; decode spells the
tokens back. The whole text is one sequence (no split at spaces). corpus.txt beside this file is the
corpus the checks train on. Run `grade fs37` to check your work.
"""


def train_bpe(text: str, num_merges: int) -> list[tuple[int, int]]:
    """The merges learned from `text`, in order: merge i turns the pair (a, b) into token BASE + i.

    byte-level: the base ids are the UTF-8 bytes of the text (0..255); merge i makes token 256 + i.
    Each round counts every adjacent pair of the current ids (overlapping: "aaa" holds (a, a) twice),
    takes the most frequent (a tie goes to the pair that occurs first in the sequence), and replaces its
    occurrences left to right, never overlapping ("aaa" becomes [aa, a]). Fewer merges when no pair is left.
    """
    # TODO: base ids; num_merges rounds of count, pick, merge
    raise NotImplementedError


def encode(text: str, merges: list[tuple[int, int]]) -> list[int]:
    """The token ids of `text`: its base ids with the merges applied in the order learned."""
    # TODO: base ids, then each merge in turn
    raise NotImplementedError


def decode(ids: list[int], merges: list[tuple[int, int]]) -> str:
    """The text of token ids: each token spelled in bytes, all joined, then decoded as UTF-8 (errors="replace")."""
    # TODO: spell each merged token in base ids, then back to text
    raise NotImplementedError


if __name__ == "__main__":
    corpus = "the cat sat on the mat. the cat ate the rat."
    merges = train_bpe(corpus, 8)
    print(merges)
    ids = encode("the cat", merges)
    print(ids, repr(decode(ids, merges)))
