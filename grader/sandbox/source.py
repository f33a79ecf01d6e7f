"""Load a submission: the learner's code as chunks of Python source, from a .py file or a notebook.

A .py file is one chunk, run as Python imports a module: all or nothing. A notebook gives one chunk
per code cell, labelled as Jupyter names a cell in a traceback after Run All (`cell In[3]`: code
cells count from 1, top to bottom), so an error points at the cell and the line the learner sees.
Cells become Python with IPython's own input transformer and run as Jupyter runs them, one after
the other in one namespace, with `get_ipython()` and `display()` (see `NotebookShell`). The grader's own
API (`check()`, `hint()` and their import, see own_api) never runs and goes without saying; other cells
tagged `skip-grading` are left out, which the report says, with the magics that do not run. An nbgrader
test cell (grader/course/nbgrader_cells.py) is the course's code, never the learner's: it is left out, and where it
stood is kept, so that the check made of it runs after the cells above it only, as nbgrader runs it; there a locked
cell runs as the teacher wrote it, as nbgrader's autograde restores it (`Source.with_locked`).
Either way the module is named `submission`, so an `if __name__ == "__main__":` demo does not run.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.course import nbgrader_cells
from grader.sandbox.cell_text import cell_number, cell_to_python
from grader.sandbox.check_cells import grader_names, without_own_api
from grader.text import Text, verbatim


class SubmissionError(Exception):
    """The submission cannot be read at all (missing file, unsupported type, broken notebook)."""


@dataclass
class Source:
    """Learner code ready to run: labelled chunks, the name shown for the file, notes for the report."""

    chunks: list[tuple[str, str]]  # (label, code): label is the file name, or "cell In[N]" in a notebook
    filename: str
    path: Path
    notes: list[Text] = field(default_factory=list)
    notebook: bool = False  # cells run one by one (a cell that raises does not stop the others)
    cells: dict[str, str] = field(default_factory=dict)  # label -> the cell as written, for tracebacks
    tests: dict[str, int] = field(default_factory=dict)  # an nbgrader test cell's grade_id -> its number (In[N])
    ids: dict[str, int] = field(default_factory=dict)  # another code cell's nbgrader grade_id -> its number

    def before(self, grade_id: str, locked: dict[str, str] | None = None) -> Source:
        """The code that runs before nbgrader's test cell `grade_id` in this notebook: the cells above it, the locked
        ones as the teacher wrote them (`locked`, see `with_locked`). All of it where the notebook has no such cell
        (a .py file, a notebook of another kind)."""
        source = self.with_locked(locked or {})
        number = self.tests.get(grade_id)
        if number is None:
            return source
        chunks = [(label, code) for label, code in source.chunks if cell_number(label) < number]
        return replace(source, chunks=chunks, tests={})

    def with_locked(self, locked: dict[str, str]) -> Source:
        """This notebook with nbgrader's locked (read-only) cells as the teacher wrote them, `locked`: grade_id ->
        code, whatever the student made of them, as nbgrader's autograde puts them back (found by their grade_id)."""
        found = {number: locked[grade_id] for grade_id, number in self.ids.items() if grade_id in locked}
        if not found:
            return self
        chunks = [(label, code) for label, code in self.chunks if cell_number(label) not in found]
        chunks += [(f"cell In[{number}]", cell_to_python(code)) for number, code in found.items()]
        cells = {**self.cells, **{f"cell In[{number}]": code for number, code in found.items()}}
        return replace(self, chunks=sorted(chunks, key=lambda chunk: cell_number(chunk[0])), cells=cells)

    def where(self, label: str, line: int | None) -> str:
        """'line 12' in a .py file, 'cell In[3], line 2' in a notebook."""
        at = f"line {line}" if line else ""
        return at if label == self.filename else f"{label}, {at}".rstrip(", ")


MAX_SOURCE = 16 << 20  # a submission file's bytes: far more than any exercise needs
MAX_SENT = 4 << 20  # the code as the sandbox receives it (JSON): well inside one message's bound (wire.MAX_HEADER)
MAX_CELLS = 1 << 20  # characters of a notebook's code cells, all together: what its outputs are not


def load_source(path: Path) -> Source:
    """The submission at `path`; SubmissionError (a one-line message) for anything that cannot be graded, never
    another exception: the file is the learner's, whatever it holds."""
    path = Path(path)
    if path.suffix not in (".py", ".ipynb"):
        raise SubmissionError(Text("cannot grade {name}: expected a .py file or a .ipynb notebook", name=path.name))
    try:
        if path.suffix == ".py":
            source = Source(chunks=[(path.name, python_text(_read_bytes(path), path))], filename=path.name, path=path)
        else:
            source = notebook_source(path)
        if len(json.dumps([source.chunks, source.cells])) > MAX_SENT:
            raise SubmissionError(Text("{name} holds more than {mib} MiB of code", "{name} 的代码超过 {mib} MiB",
                                       name=path.name, mib=MAX_SENT >> 20))
        return source
    except SubmissionError:
        raise
    except RecursionError:
        raise SubmissionError(Text("{name} is nested too deeply to be read", "{name} 嵌套太深，无法读取",
                                   name=path.name)) from None
    except Exception as exc:  # a parser's surprise is this file's problem
        raise SubmissionError(Text("{name} cannot be read: {error}", "无法读取 {name}：{error}", name=path.name,
                                   error=verbatim(f"{type(exc).__name__}: {str(exc)[:100]}"))) from None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes: a regular file only (a link or a FIFO is not read), at most MAX_SOURCE."""
    from grader.sandbox.safefs import read_regular

    try:
        data = read_regular(str(path), MAX_SOURCE + 1)
    except FileNotFoundError:
        raise SubmissionError(Text("no such file: {path}", path=path)) from None
    except OSError as exc:
        raise SubmissionError(Text("{path} is not a regular file that can be read ({error})",
                                   "{path} 不是可读取的普通文件（{error}）", path=path,
                                   error=verbatim(exc.strerror or exc))) from None
    if len(data) > MAX_SOURCE:
        raise SubmissionError(Text("{path} is larger than {mib} MiB", "{path} 大于 {mib} MiB", path=path,
                                   mib=MAX_SOURCE >> 20))
    return data


def python_text(data: bytes, path: Path) -> str:
    """A .py file's text as Python reads it: a byte-order mark or a PEP 263 coding cookie (`# -*- coding: gbk -*-`)
    decides the encoding, UTF-8 otherwise."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding).removeprefix("\ufeff")
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise SubmissionError(Text("{path} is not text Python can read ({error})",
                                   "{path} 不是 Python 能读取的文本（{error}）",
                                   path=path, error=verbatim(str(exc)[:100]))) from None


def _read_text(path: Path) -> str:
    try:
        return _read_bytes(path).decode("utf-8-sig")  # a byte-order mark (Windows editors) is not code
    except UnicodeDecodeError:
        raise SubmissionError(Text("{path} is not UTF-8 text", path=path)) from None


# -- notebook cells as Python ---------------------------------------------------------------

RUN_MAGICS = {"time", "timeit", "capture", "writefile", "file", "run", "pwd", "cd"}  # magics that run when graded
# magics that change only what Jupyter shows or reloads, nothing a graded cell computes: they do nothing, unsaid
NEUTRAL = {("matplotlib", ""), ("autoreload", ""), ("aimport", ""), ("load_ext", "autoreload")}
_IPYTHON_CALL = re.compile(r"get_ipython\(\)\.(?:system|getoutput)\(|"
                           r"get_ipython\(\)\.run_(line|cell)_magic\('(\w+)'(?:, '(\w*))?")


def not_run(code: str) -> list[str]:
    """The magics (`%pip`, `%%bash`) and shell commands (`!`) of transformed cell code that do nothing when graded."""
    return [{"line": "%", "cell": "%%", "": "!"}[kind] + name for kind, name, arg in _IPYTHON_CALL.findall(code)
            if name not in RUN_MAGICS and (name, "") not in NEUTRAL and (name, arg) not in NEUTRAL]


def notebook_source(path: Path) -> Source:
    """The code cells of a notebook, in order, as Python chunks."""
    import nbformat  # only notebooks pay for it

    text = _read_text(path)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SubmissionError(Text("{name} is not a valid notebook: invalid JSON at line {line}", name=path.name,
                                   line=exc.lineno)) from None
    if not isinstance(raw, dict) or "cells" not in raw and "worksheets" not in raw:
        raise SubmissionError(Text("{name} is not a valid notebook: no cells", name=path.name))
    major = raw.get("nbformat")
    if major not in (3, 4):
        raise SubmissionError(Text("{name}: unsupported notebook format version {version} (expected 4)",
                                   name=path.name, version=major))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat warns about old minor versions, missing ids...
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several types for malformed notebooks
        raise SubmissionError(Text("{name} is not a valid notebook: {why}", name=path.name,
                                   why=verbatim(str(exc).splitlines()[0][:120]))) from None
    chunks, cells, notes, skipped, tests, ids = [], {}, [], [], dict[str, int](), dict[str, int]()
    code_cells = [cell for cell in nb.cells if cell.get("cell_type") == "code"]
    sources = []
    for number, cell in enumerate(code_cells, 1):
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise SubmissionError(Text("{name} is not a valid notebook: the source of {label} is not text",
                                       "{name} 不是有效的 notebook：{label} 的 source 不是文本", name=path.name,
                                       label=f"cell In[{number}]"))
        sources.append(source)
    if sum(map(len, sources)) > MAX_CELLS:  # IPython's transformer takes about 18 s a MiB
        raise SubmissionError(Text("{name} holds more than {mib} MiB of code", "{name} 的代码超过 {mib} MiB",
                                   name=path.name, mib=MAX_CELLS >> 20))
    codes = [cell_to_python(source) for source in sources]
    own = grader_names(codes)  # `check`, `hint`: the grader's own API is neutral, never run nor reported
    for number, (cell, source, code) in enumerate(zip(code_cells, sources, codes), 1):
        label = f"cell In[{number}]"
        if nbgrader_cells.is_test(cell):
            tests.setdefault(nbgrader_cells.grade_id(cell), number)
            continue
        if nbgrader_cells.grade_id(cell):
            ids.setdefault(nbgrader_cells.grade_id(cell), number)
        code = without_own_api(code, own)
        if not code.strip():
            continue  # only the grader's own API (the check cell): nothing to run, nothing to say
        if "skip-grading" in cell.get("metadata", {}).get("tags", []):
            notes.append(Text("cell {n} (tagged skip-grading) not run", n=f"In[{number}]"))
            continue
        cells[label] = source
        skipped += not_run(code)
        chunks.append((label, code))
    if not chunks:
        raise SubmissionError(Text("{name} has no code cells to grade", name=path.name))
    if skipped:
        names = ", ".join(dict.fromkeys(skipped))
        notes.append(Text("{n} IPython magic or shell line(s) not run when grading: {names}", n=len(skipped),
                          names=names))
    return Source(chunks=chunks, filename=path.name, path=path, notes=notes, notebook=True, cells=cells,
                  tests=tests, ids=ids)
