"""Similar submissions: groups of students whose code for one exercise shares much more than the stub gives and than
the rest of the class shares.

Each file is read as Python tokens (the standard library's tokenize) and normalised: comments, docstrings and layout
left out, strings as S, a function's parameters named by their place (p0, p1...) and its other names by their first
use (v0, v1...), a helper function of the file's own as F and a module-level name as G (the names the stub defines,
imported names, builtins, attributes and keyword arguments are kept as they are), and the top-level blocks sorted:
so renamed variables, changed comments and reordered functions hide nothing. Its runs of K tokens are its
fingerprints. Those of the stub (what every student was given) and those held by more than a share of the class
(what a short exercise's correct answers have in common by necessity) count for nothing; what is left is what a
student wrote their own way. A pair is listed when the larger of its two shares (the part of a file's own tokens
found in the other) reaches the threshold, with at least MIN_SHARED tokens in common; students whose normalised code
is the same are one entry, unless so many share it that it is the class's common answer. It is for a person to
look at: scores never change.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import re
import tokenize
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from grader.judge.job import Job
from grader.sandbox.guarded_parse import Unparsed, parse
from grader.sandbox.source import SubmissionError, load_source

K = 8  # tokens in a fingerprint
MIN_SHARED = 12  # tokens in common, at least: short answers look alike by necessity
COMMON_SHARE = 0.2  # a fingerprint held by more than this share of the class (and by more than COMMON_MIN) is common
COMMON_MIN = 3
KEPT = frozenset(n for n in dir(builtins) if not n.startswith("_")) | frozenset(keyword.kwlist)
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
MARKS = {tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}
FSTRING = tuple(getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE") if hasattr(tokenize, name))
FSTRING_END = getattr(tokenize, "FSTRING_END", None)

Token = tuple[str, int, int]  # (normalised text, start and end offsets in the file)


@dataclass
class Code:
    """One submission's code, normalised: its tokens (blocks sorted) and fingerprints (hash -> token places)."""

    raw: str
    tokens: list[Token]
    prints: dict[int, list[int]]


def _code(path: Path) -> str | None:
    try:
        return "\n".join(code for _, code in load_source(path).chunks)  # a notebook's cells, in order
    except SubmissionError:
        return None


def _names(tree: ast.Module) -> tuple[set[str], set[str], set[str]]:
    """(names imported, functions and classes defined at the top, other names assigned at the top) of a module."""
    imported, defined, assigned = set(), set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assigned |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    for each in ast.walk(tree):
        if isinstance(each, (ast.Import, ast.ImportFrom)):
            imported |= {(alias.asname or alias.name).split(".")[0] for alias in each.names}
    return imported, defined, assigned


def _parameters(tree: ast.Module) -> dict[int, list[str]]:
    """Each function's parameters in order, by the line its `def` starts on."""
    found: dict[int, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            names = [p.arg for p in [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
                                     *([a.kwarg] if a.kwarg else [])]]
            found.setdefault(node.lineno, names)
    return found


def normalised(code: str, api: frozenset[str] = frozenset()) -> list[Token]:
    """The tokens of `code` as the module docstring says, each with its place in `code`; `api`: the names the stub
    defines, kept. Code with a syntax error is compared word by word; code too large or too deep to parse here
    (grader/sandbox/guarded_parse.py) has no tokens: it is compared with nothing (the class page says why)."""
    tree = parse(code)
    if isinstance(tree, Unparsed):
        return [] if tree.refused else [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", code)]
    try:
        raw = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (SyntaxError, tokenize.TokenError):
        return [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", code)]
    imported, defined, assigned = _names(tree)
    parameters = _parameters(tree)
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(row: int, col: int) -> int:
        return starts[row - 1] + col if row - 1 < len(starts) else len(code)

    blocks: list[list[Token]] = []
    names: dict[str, str] = {}
    params: list[str] = []
    depth = 0
    header = False  # in a `def`'s parameters: a name before "=" is a parameter with a default
    in_fstring = False
    previous = [tokenize.NEWLINE]  # the types of the significant tokens before, for docstrings
    before, after = _neighbours(raw)
    for i, tok in enumerate(raw):
        if tok.type in SKIPPED:
            continue
        if FSTRING and tok.type in FSTRING:
            in_fstring = True
            continue
        if in_fstring and tok.type != FSTRING_END:
            continue
        start, end = offset(*tok.start), offset(*tok.end)
        if tok.start[1] == 0 and previous[-1] in (tokenize.NEWLINE, tokenize.DEDENT) and tok.type not in MARKS:
            blocks.append([])  # a top-level statement: a block of its own
            names, params, depth = {}, [], 0
        if not blocks:
            blocks.append([])
        following = after[i]
        if tok.type == tokenize.STRING and previous[-1] in MARKS and following is not None \
                and following.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            continue  # a docstring, or a string standing alone
        previous.append(tok.type)
        text = tok.string
        if tok.type in MARKS:
            text = MARKS[tok.type]
        elif tok.type == tokenize.STRING or in_fstring:
            text, in_fstring = "S", False
        elif tok.type == tokenize.OP:
            depth += text in "([{"
            depth -= text in ")]}"
            header = header and not (text == ")" and depth == 0)
        elif tok.type == tokenize.NAME:
            if text == "def" and following is not None:  # a function's parameters: named by their place
                params, header = parameters.get(following.start[0], []), True
            if header and text in params:
                text = f"p{params.index(text)}"
            else:
                text = _renamed(text, before[i], following, depth, names, params, api, imported, defined, assigned)
        blocks[-1].append((text, start, end))
    return [t for block in sorted(blocks, key=lambda b: [text for text, _, _ in b]) for t in block]


def _neighbours(raw: list) -> tuple[list, list]:
    """For each token, the significant token (not in SKIPPED) just before it and just after it (None at an end): one
    pass each way, so that a long file costs in proportion to its length."""
    before, after = [None] * len(raw), [None] * len(raw)
    last = None
    for i, tok in enumerate(raw):
        before[i] = last
        last = tok if tok.type not in SKIPPED else last
    last = None
    for i in range(len(raw) - 1, -1, -1):
        after[i] = last
        last = raw[i] if raw[i].type not in SKIPPED else last
    return before, after


def _renamed(text: str, before, following, depth: int, names: dict[str, str], params: list[str],
             api: frozenset[str], imported: set[str], defined: set[str], assigned: set[str]) -> str:
    """A name as the normalised code writes it (see `normalised`); `before` and `following`: the significant tokens
    around it."""
    if text in KEPT or text in api or text in imported or (before is not None and before.string == "."):
        return text
    if depth and following is not None and following.string == "=":
        return text  # a keyword argument: the callee's name for it
    if text in params:
        return f"p{params.index(text)}"
    if text in defined:
        return "F"
    if text in assigned and text not in names:
        return "G"
    return names.setdefault(text, f"v{len(names)}")


def fingerprints(tokens: list[Token]) -> dict[int, list[int]]:
    """Each run of K tokens' hash, with the places it starts at."""
    prints: dict[int, list[int]] = defaultdict(list)
    texts = [text for text, _, _ in tokens]
    for at in range(len(texts) - K + 1):
        prints[hash(tuple(texts[at:at + K]))].append(at)
    return prints


def read(code: str, api: frozenset[str]) -> Code:
    tokens = normalised(code, api)
    return Code(code, tokens, fingerprints(tokens))


def places(code: Code, prints: set[int]) -> set[int]:
    """The token places of `code` that its fingerprints among `prints` cover."""
    return {at + n for h in prints & code.prints.keys() for at in code.prints[h] for n in range(K)}


def own_places(code: Code, ignored: set[int]) -> set[int]:
    """The token places of `code` that are the student's own: covered by none of the `ignored` fingerprints (the
    stub's, the class's common ones)."""
    return set(range(len(code.tokens))) - places(code, ignored)


def find_similar(jobs: list[Job], threshold: float) -> list[dict]:
    """Groups of submissions of one exercise above `threshold`, most similar first; each with both files cut into
    pieces, the shared ones marked (`segments`). Students with the same normalised code are one entry, unless that
    code is common in the class; an entry that is part of a larger one is left out (`maximal`)."""
    by_exercise: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        by_exercise[job.exercise.id].append(job)
    found = []
    for exercise_id, jobs_of in by_exercise.items():
        stub = jobs_of[0].exercise.stub
        codes = {job.student: code for job in jobs_of if (code := _code(job.path)) is not None}
        found += [{"exercise": exercise_id, **entry}
                  for entry in compare(stub.read_text(encoding="utf-8") if stub.is_file() else "", codes, threshold)]
    return maximal(sorted(found, key=lambda p: (-p["similarity"], p["exercise"], p["students"])))


def compare(stub_code: str, codes: dict[str, str], threshold: float) -> list[dict]:
    """The entries of one exercise's class (`codes`: student -> code) at or above `threshold`: {students, similarity,
    identical, left, right}."""
    stub_tree = parse(stub_code)
    api = frozenset() if isinstance(stub_tree, Unparsed) else frozenset(_names(stub_tree)[1])
    stub = set(read(stub_code, api).prints)
    same: dict[tuple, list[str]] = defaultdict(list)
    versions: dict[tuple, dict[str, Code]] = defaultdict(dict)  # normalised code -> its files as written
    for student, raw in codes.items():
        code = read(raw, api)
        key = tuple(text for text, _, _ in code.tokens)
        same[key].append(student)
        versions[key].setdefault(raw, code)
    held = Counter(h for key, students in same.items() for h in next(iter(versions[key].values())).prints
                   for _ in students)
    common = max(COMMON_MIN, COMMON_SHARE * len(codes))
    ignored = stub | {h for h, n in held.items() if n > common}
    groups = []
    for key, students in same.items():
        first, *others = versions[key].values()
        if len(students) <= common:  # more: the class's common answer, no evidence of anything
            groups.append((students, first, own_places(first, ignored), others))
    groups = [g for g in groups if len(g[2]) >= MIN_SHARED]
    found = []
    for i, (students_a, a, mine_a, others) in enumerate(groups):
        if len(students_a) > 1:  # the same code once normalised: shown beside another way it was written, if any
            b = others[0] if others else a
            found.append(_entry(students_a, a, b, mine_a, own_places(b, ignored), 1.0, not others))
        for students_b, b, mine_b, _ in groups[i + 1:]:
            shared = a.prints.keys() & b.prints.keys()
            in_a, in_b = places(a, shared) & mine_a, places(b, shared) & mine_b
            if min(len(in_a), len(in_b)) < MIN_SHARED:
                continue
            similarity = max(len(in_a) / len(mine_a), len(in_b) / len(mine_b))
            if similarity >= threshold:
                found.append(_entry(students_a + students_b, a, b, in_a, in_b, similarity, False))
    return found


def _entry(students: list[str], a: Code, b: Code, in_a: set[int], in_b: set[int], similarity: float,
           identical: bool) -> dict:
    return {"students": students, "similarity": round(min(1.0, similarity), 3),
            "identical": identical, "left": segments(a, in_a), "right": segments(b, in_b)}


def maximal(entries: list[dict]) -> list[dict]:
    """The entries whose students are no part of a larger entry's of the same exercise that is at least as similar
    (students with identical files, then the same students with one more as similar: only the larger one is listed;
    a pair who copied stays listed beside a larger group that shares less)."""
    sets = [(e["exercise"], frozenset(e["students"]), e["similarity"]) for e in entries]
    return [e for e, (ex, group, similarity) in zip(entries, sets)
            if not any(ex == other_ex and group < other and similarity <= other_similarity
                       for other_ex, other, other_similarity in sets)]


def segments(code: Code, places: set[int]) -> list[tuple[str, bool]]:
    """The file of `code` cut into (text, shared) pieces: the spans of its tokens at `places` are shared."""
    spans: list[list[int]] = []
    for start, end in sorted((code.tokens[at][1], code.tokens[at][2]) for at in places):  # in the file's order
        if spans and start <= spans[-1][1] + 1:  # the next token, or the one after a space: one piece
            spans[-1][1] = max(spans[-1][1], end)
        elif end > start:
            spans.append([start, end])
    pieces, at = [], 0
    for start, end in spans:
        pieces += [(code.raw[at:start], False), (code.raw[start:end], True)]
        at = end
    return [piece for piece in pieces + [(code.raw[at:], False)] if piece[0]]


def write_similarity(pairs: list[dict], out: Path) -> None:
    """similarity.json (who, which exercise, how similar) and similarity.html (the files side by side)."""
    from grader.report.pages import write

    summary = [{k: p[k] for k in ("exercise", "students", "similarity", "identical")} for p in pairs]
    (out / "similarity.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    intro = (f"{len(pairs)} {'entry' if len(pairs) == 1 else 'entries'} of submissions share more than the stub gives "
             "and than the class shares (renamed names, changed comments and reordered functions still count as "
             "shared). This is for a person to look at: scores are unchanged.")
    write(out / "similarity.html", "similarity.html.j2", lang="en", title="Similar submissions", intro=intro,
          pairs=[{**p, "what": "identical files" if p["identical"] else f"{100 * p['similarity']:.0f}% shared"}
                 for p in pairs])
