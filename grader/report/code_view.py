"""A submission's code as the review page shows it: highlighted lines, a notebook as its cells, the diff against the
reference.

Highlighting is Pygments' lexer: its tokens become (CSS class, text) pairs that the template writes with
autoescaping, so no markup is built here and nothing in the code can become markup.

Runs in: the review page's process (`grade review --serve`). No torch.
"""

from __future__ import annotations

import difflib
import json

Line = list[tuple[str, str]]  # one line of code: (CSS class, text) tokens
MAX_SHOWN = 256 << 10  # characters of a file shown: a submission of more is cut, and the page says so


def highlighted(code: str) -> list[Line]:
    """`code` as lines of tokens, classed by Pygments' short names of their types (`k` keyword, `s2` string...)."""
    from pygments.lexers import PythonLexer
    from pygments.token import STANDARD_TYPES

    lines: list[Line] = [[]]
    for kind, text in PythonLexer(stripnl=False).get_tokens(code):
        while kind not in STANDARD_TYPES:
            kind = kind.parent
        for n, part in enumerate(text.split("\n")):
            if n:
                lines.append([])
            if part:
                lines[-1].append((STANDARD_TYPES[kind], part))
    return lines[:-1] if not lines[-1] else lines  # the lexer ends the code with a newline


def _sources(text: str) -> list[tuple[str, str]] | None:
    """A notebook's cells as (type, source), from its JSON as it is (nbformat 4: only shown, so not validated); None
    for anything else."""
    try:
        raw = json.loads(text)
        return [(str(cell.get("cell_type")), "".join(map(str, source)) if isinstance(source, list) else str(source))
                for cell in raw["cells"] for source in [cell.get("source", "")]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def cells(text: str) -> list[dict] | None:
    """A notebook's cells in order, each {kind: code or markdown, label: In[N] for code (numbered as the grader
    numbers them), lines}; None when `text` is no notebook."""
    sources = _sources(text)
    if sources is None:
        return None
    shown, number = [], 0
    for kind, source in sources:
        if kind == "code":
            number += 1
            shown.append({"kind": "code", "label": f"In[{number}]", "lines": highlighted(source)})
        else:
            shown.append({"kind": "markdown", "label": "", "lines": [[("", line)] for line in source.split("\n")]})
    return shown


def code_of(text: str, notebook: bool) -> str:
    """The code a diff compares: the file, or a notebook's code cells one after the other."""
    sources = _sources(text) if notebook else None
    if sources is None:
        return text
    return "\n\n".join(source for kind, source in sources if kind == "code")


def diff(reference: str, code: str, names: tuple[str, str]) -> list[tuple[str, str]]:
    """The unified diff from the reference to the student's code as (kind, line) pairs: kind is `add`, `del`,
    `hunk` or `same`."""
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    lines = difflib.unified_diff(reference.splitlines(), code.splitlines(), *names, lineterm="")
    return [(kinds.get(line[:1], "same"), line) for n, line in enumerate(lines) if n > 1]  # past the two file names
