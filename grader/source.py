"""Load a submission: the learner's code as chunks of source text, from a .py file or a notebook.

A .py file is one chunk. A notebook gives one chunk per code cell, labelled "cell N" (N counts
every cell of the notebook from 1, as Jupyter shows them top to bottom), so a traceback or a
syntax error points at the cell and the line the learner sees. IPython magics and shell escapes
are skipped, and so are cells tagged `skip-grading`; the report says so.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path


class SubmissionError(Exception):
    """The submission cannot be read at all (missing file, unsupported type, broken notebook)."""


@dataclass
class Source:
    """Learner code ready to run: labelled chunks, the name shown for the file, notes for the report."""

    chunks: list[tuple[str, str]]  # (label, code): label is the file name, or "cell N" in a notebook
    filename: str
    path: Path
    notes: list[str] = field(default_factory=list)

    @property
    def code(self) -> str:
        return "\n".join(code for _, code in self.chunks)

    def where(self, label: str, line: int | None) -> str:
        """'line 12' in a .py file, 'cell 3, line 2' in a notebook."""
        at = f"line {line}" if line else ""
        return at if label == self.filename else f"{label}, {at}".rstrip(", ")


def load_source(path: Path) -> Source:
    path = Path(path)
    if not path.is_file():
        raise SubmissionError(f"no such file: {path}")
    if path.suffix == ".py":
        return Source(chunks=[(path.name, _read_text(path))], filename=path.name, path=path)
    if path.suffix == ".ipynb":
        return notebook_source(path)
    raise SubmissionError(f"cannot grade {path.name}: expected a .py file or a .ipynb notebook")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SubmissionError(f"{path} is not UTF-8 text") from None


MAGIC = re.compile(r"^\s*(%|!|\?)|^\s*\w+\s*=\s*!|\?\s*$")


def strip_magics(code: str) -> tuple[str, int]:
    """Blank out IPython-only lines (`%magic`, `%%cell magic`, `!shell`, `x?`); return (code, count).

    Lines are blanked, not removed, so line numbers still match the cell. A `%%` cell magic
    blanks the whole cell: its body is not Python.
    """
    lines = code.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        return "\n" * (len(lines) - 1), 1
    kept, skipped = [], 0
    for line in lines:
        if MAGIC.search(line):
            kept.append("")
            skipped += 1
        else:
            kept.append(line)
    return "\n".join(kept), skipped


def notebook_source(path: Path) -> Source:
    """The code cells of a notebook, in order, as one module's chunks."""
    import nbformat  # only notebooks pay for it

    text = _read_text(path)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"{path.name} is not a valid notebook: invalid JSON at line {exc.lineno}") from None
    if not isinstance(raw, dict) or "cells" not in raw and "worksheets" not in raw:
        raise SubmissionError(f"{path.name} is not a valid notebook: no cells")
    major = raw.get("nbformat")
    if major not in (3, 4):
        raise SubmissionError(f"{path.name}: unsupported notebook format version {major} (expected 4)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat warns about old minor versions, missing ids...
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several types for malformed notebooks
        raise SubmissionError(f"{path.name} is not a valid notebook: {str(exc).splitlines()[0][:120]}") from None
    chunks, notes, magics = [], [], 0
    for number, cell in enumerate(nb.cells, 1):
        if cell.get("cell_type") != "code":
            continue
        if "skip-grading" in cell.get("metadata", {}).get("tags", []):
            notes.append(f"cell {number} (tagged skip-grading) not run")
            continue
        code, skipped = strip_magics(cell.get("source", ""))
        magics += skipped
        chunks.append((f"cell {number}", code))
    if not chunks:
        raise SubmissionError(f"{path.name} has no code cells to grade")
    if magics:
        notes.append(f"{magics} IPython magic or shell line(s) (%, !) skipped: they do not run when grading")
    return Source(chunks=chunks, filename=path.name, path=path, notes=notes)
