"""fs37's corpus ships twice: as exercises/fs37_bpe/corpus.txt for the learner and as the checks' CORPUS (a checks
module reads no exercise file); the two must be the same text, or the exact ids the checks expect are not the ones
a learner computes on the file."""

from pathlib import Path

from grader.checks import fs37_bpe

CORPUS_FILE = Path(__file__).resolve().parents[1] / "exercises" / "fs37_bpe" / "corpus.txt"


def test_shipped_corpus_is_the_checks_corpus():
    assert CORPUS_FILE.read_text(encoding="utf-8") == fs37_bpe.CORPUS
