"""A submission's code as the review page shows it: highlighted lines, a notebook as its cells (with their outputs:
text, and PNG, JPEG or GIF images), the diff against the reference.

Highlighting is Pygments' lexer: its tokens become (CSS class, text) pairs that the template writes with
autoescaping, so no markup is built here and nothing in the code can become markup.

Runs in: the review page's process (`grade review --serve`). No torch.
"""

from __future__ import annotations

import difflib
import json
import re

Line = list[tuple[str, str]]  # one line of code: (CSS class, text) tokens
MAX_SHOWN = 256 << 10  # characters of a file shown: a submission of more is cut, and the page says so
MAX_OUTPUT = 20_000  # characters of one cell's output shown
MAX_IMAGE = 2 << 20  # base64 characters of one output image shown
IMAGES = ("image/png", "image/jpeg", "image/gif")
BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # a traceback's colours


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


def _cells(text: str) -> list[dict] | None:
    """A notebook's cells as its JSON holds them (nbformat 4: only shown, so not validated); None for anything
    else."""
    try:
        cells = json.loads(text)["cells"]
    except (ValueError, KeyError, TypeError):
        return None
    return cells if isinstance(cells, list) and all(isinstance(cell, dict) for cell in cells) else None


def _text(value) -> str:
    return "".join(map(str, value)) if isinstance(value, list) else str(value or "")


def _sources(text: str) -> list[tuple[str, str]] | None:
    """A notebook's cells as (type, source); None for anything else."""
    cells = _cells(text)
    return None if cells is None else [(str(cell.get("cell_type")), _text(cell.get("source", ""))) for cell in cells]


def outputs(cell: dict) -> list[dict]:
    """A code cell's outputs as the page shows them: {text} (a stream, a value, an error's traceback without its
    colours) or {image}: a data: address of a PNG, JPEG or GIF (base64 checked; no SVG, which may hold script)."""
    shown = []
    for out in cell.get("outputs") or []:
        if not isinstance(out, dict):
            continue
        data: dict = out["data"] if isinstance(out.get("data"), dict) else {}
        image = next((kind for kind in IMAGES if isinstance(data.get(kind), (str, list))), None)
        if image:
            encoded = "".join(_text(data[image]).split())
            if len(encoded) <= MAX_IMAGE and BASE64.fullmatch(encoded):
                shown.append({"image": f"data:{image};base64,{encoded}"})
                continue
        if out.get("output_type") == "stream":
            said = _text(out.get("text"))
        elif out.get("output_type") == "error":
            said = "\n".join(map(str, out.get("traceback") or [f"{out.get('ename')}: {out.get('evalue')}"]))
        else:
            said = _text(data.get("text/plain"))
        if said:
            shown.append({"text": ANSI.sub("", said)[:MAX_OUTPUT]})
    return shown


def cells(text: str) -> list[dict] | None:
    """A notebook's cells in order, each {kind: code or markdown, label: In[N] for code (numbered as the grader
    numbers them), lines, outputs}; None when `text` is no notebook."""
    raw = _cells(text)
    if raw is None:
        return None
    shown, number = [], 0
    for cell in raw:
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "code":
            number += 1
            shown.append({"kind": "code", "label": f"In[{number}]", "lines": highlighted(source),
                          "outputs": outputs(cell)})
        else:
            shown.append({"kind": "markdown", "label": "", "lines": [[("", line)] for line in source.split("\n")],
                          "outputs": []})
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
