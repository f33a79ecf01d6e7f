"""How well `grade batch --similarity` tells a copy from independent work (quality, not time).

For each class in tests/similarity/ (ex05: a short exercise, ex14: a long one; independent correct solutions written
from the stub), each solution is disguised as a copier would (its names renamed, its functions reordered, its
comments and one-line docstrings changed, its layout kept), and the class is compared with one disguised copy at
a time: the copy's score against its original must reach the threshold, the highest score of two independent
solutions must stay below it. Then a class of identical correct answers (the first solution handed in by 12 students
beside the others) must list no entry. Prints the margins; exits 1 if a copy is missed or an independent pair or an
identical answer is listed.

    python bench/bench_similarity.py
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.teacher.similarity import compare  # noqa: E402

THRESHOLD = 0.8  # grade batch --similarity's default
CLASSES = {"ex05": ROOT / "exercises/ex05_manual_backward/ex05_manual_backward.py",
           "ex14": ROOT / "exercises/ex14_training_loop/ex14_training_loop.py"}


def disguised(code: str, kept: set[str]) -> str:
    """`code` as a copier hides it, its layout kept: every name of its own renamed (parameters too), its comments and
    docstrings reworded, its top-level functions in reverse order."""
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    renamed: dict[str, str] = {}
    edits = []  # (row, start column, end column, new text)
    header = False  # in a `def`'s parameters, where `name=` is a parameter, not a keyword argument
    depth = 0
    for i, tok in enumerate(tokens):
        before = tokens[i - 1].string if i else ""
        after = next((t.string for t in tokens[i + 1:] if t.type not in (tokenize.NL, tokenize.COMMENT)), "")
        depth += (tok.string in "([{") - (tok.string in ")]}") if tok.type == tokenize.OP else 0
        header = tok.string == "def" or (header and not (tok.string == ")" and depth == 0))
        keyword_argument = depth > 0 and after == "=" and before in "(," and not header
        if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) and tok.string not in kept \
                and tok.string not in dir(builtins) and before != "." and not keyword_argument:
            edits.append((*tok.start, tok.end[1], renamed.setdefault(tok.string, f"my_{len(renamed)}")))
        elif tok.type == tokenize.COMMENT:
            edits.append((*tok.start, tok.end[1], "# my note"))
        elif tok.type == tokenize.STRING and tok.string.startswith('"""') and tok.start[0] == tok.end[0]:
            edits.append((*tok.start, tok.end[1], '"""Written by me."""'))
    lines = code.splitlines(keepends=True)
    for row, start, end, new in sorted(edits, reverse=True):
        lines[row - 1] = lines[row - 1][:start] + new + lines[row - 1][end:]
    code = "".join(lines)
    lines = code.splitlines(keepends=True)
    defs = [(min([n.lineno, *(d.lineno for d in n.decorator_list)]), n.end_lineno) for n in ast.parse(code).body
            if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    if not defs:
        return code
    first, last = defs[0][0], defs[-1][1]
    blocks = ["".join(lines[start - 1:end]).rstrip("\n") + "\n\n\n" for start, end in defs]
    return "".join(lines[:first - 1]) + "".join(reversed(blocks)) + "".join(lines[last:])


def kept_names(stub: str, code: str) -> set[str]:
    """The names a copier keeps: those the stub defines (the statement's), imported ones and attributes' roots."""
    names = {n.name for n in ast.parse(stub).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def main() -> int:
    failed = False
    for exercise, stub_path in CLASSES.items():
        stub = stub_path.read_text(encoding="utf-8")
        solutions = {p.stem: p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests/similarity" / exercise)
                                                                             .glob("s*.py"))}
        independent = max((e["similarity"] for e in compare(stub, solutions, 0.0)), default=0.0)
        copies = []
        for name, code in solutions.items():
            copy = disguised(code, kept_names(stub, code))
            scores = [e["similarity"] for e in compare(stub, {**solutions, "copy": copy}, 0.0)
                      if set(e["students"]) == {name, "copy"}]
            copies.append((scores[0] if scores else 0.0, name))
        common = compare(stub, {**solutions, **{f"same{i}": next(iter(solutions.values())) for i in range(12)}},
                         THRESHOLD)
        lowest = min(copies)
        print(f"{exercise}: {len(solutions)} independent solutions, highest pair {independent:.3f} (0: no pair shares "
              f"enough of its own code to be scored); disguised copies "
              f"score {lowest[0]:.3f} ({lowest[1]}) to {max(copies)[0]:.3f}; 12 identical answers: {len(common)} "
              f"entries listed (threshold {THRESHOLD})")
        failed |= independent >= THRESHOLD or lowest[0] < THRESHOLD or bool(common)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
