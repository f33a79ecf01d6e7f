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

import ast
import json
import os
import re
import sys
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.course import nbgrader_cells
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
        chunks = [(label, code) for label, code in source.chunks if _number(label) < number]
        return replace(source, chunks=chunks, tests={})

    def with_locked(self, locked: dict[str, str]) -> Source:
        """This notebook with nbgrader's locked (read-only) cells as the teacher wrote them, `locked`: grade_id ->
        code, whatever the student made of them, as nbgrader's autograde puts them back (found by their grade_id)."""
        found = {number: locked[grade_id] for grade_id, number in self.ids.items() if grade_id in locked}
        if not found:
            return self
        chunks = [(label, code) for label, code in self.chunks if _number(label) not in found]
        chunks += [(f"cell In[{number}]", cell_to_python(code)) for number, code in found.items()]
        cells = {**self.cells, **{f"cell In[{number}]": code for number, code in found.items()}}
        return replace(self, chunks=sorted(chunks, key=lambda chunk: _number(chunk[0])), cells=cells)

    def where(self, label: str, line: int | None) -> str:
        """'line 12' in a .py file, 'cell In[3], line 2' in a notebook."""
        at = f"line {line}" if line else ""
        return at if label == self.filename else f"{label}, {at}".rstrip(", ")


def _number(label: str) -> int:
    """N of a notebook cell's label "cell In[N]"."""
    return int(label.removeprefix("cell In[")[:-1])


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


def cell_to_python(cell: str) -> str:
    """A code cell as Python, by IPython's own input transformer (`%time x` becomes
    `get_ipython().run_line_magic('time', 'x')`, `!ls` becomes `get_ipython().system('ls')`), with the
    cell's line numbers: IPython drops leading blank lines, they are put back."""
    from IPython.core.inputtransformer2 import TransformerManager  # only notebooks pay for IPython

    lines = cell.splitlines()
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "\n" * blank + TransformerManager().transform_cell(cell)


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


# -- sandbox side: what notebook code calls while it runs ---------------------------------------

def _options(line: str, spec: str, **how):
    """A magic's line parsed as IPython parses it: (options, the rest), with IPython's own option parser."""
    from IPython.core.magics.execution import ExecutionMagics  # only a notebook with such a magic pays for IPython

    return ExecutionMagics(None).parse_options(line, spec, **how)


def _arguments(magic, line: str):
    """A magic's line parsed with the argument spec IPython declares for it (`%%writefile`, `%%capture`)."""
    from IPython.core import magic_arguments

    return magic_arguments.parse_argstring(magic, line)


TIMEIT = "n:r:tcp:qov:"  # IPython's %timeit options
RUN = "nidtN:b:pD:l:rs:T:em:G"  # IPython's %run options


class NotebookShell:
    """What `get_ipython()` returns while graded notebook cells run (never a real IPython shell).

    `%time`, `%timeit`, `%%time`, `%%timeit` and `%%capture` run their code once, in the namespace
    and at the line numbers of the cell that holds them; `%%writefile` (`%%file`) writes its cell into the work dir,
    which is on `sys.path` as a kernel's folder is, and `%run` runs a file there; `%pwd` and `%cd` are the work dir's.
    The names IPython keeps are kept as it keeps them: a cell's input in `In`/`_ih`, `_i`, `_ii`, `_iii` and `_iN`,
    its last expression in `_`, `__`, `___`, `Out`/`_oh` and `_N`, the directories in `_dh`. Options are parsed by
    IPython's own parsers. Shell commands never run (`x = !ls` gives an empty list); other magics do nothing.
    """

    def __init__(self):
        self.outputs: dict[int, object] = {}  # `Out`, `_oh`
        self.inputs: list[str] = [""]  # `In`, `_ih`: the code of cell N at N ("" for a cell not run)
        self.dirs: list = [os.getcwd()]  # `_dh`
        self.last = ["", "", ""]  # what the hook last set `_`, `__`, `___` to
        self.typed = ["", "", ""]  # the last three cells as written: `_i`, `_ii`, `_iii`

    def run_line_magic(self, name: str, line: str, _stack_depth: int = 1):
        frame = sys._getframe(1)
        if name == "time":
            return _run_here(line.strip(), frame, 0)
        if name == "timeit":
            return _run_here(_options(line, TIMEIT, posix=False, strict=False, preserve_non_opts=True)[1].strip(),
                             frame, 0)
        if name == "run":
            return self._run_file(line, frame)
        if name == "pwd":
            return os.getcwd()
        if name == "cd":
            return self._cd(line)
        return None

    def run_cell_magic(self, name: str, line: str, cell: str):
        frame = sys._getframe(1)
        if name == "capture":
            from IPython.utils.capture import capture_output
            from IPython.core.magics.execution import ExecutionMagics

            args = _arguments(ExecutionMagics.capture, line)
            with capture_output(stdout=not args.no_stdout, stderr=not args.no_stderr, display=False) as captured:
                _run_here(cell_to_python(cell), frame, 1)
            if args.output:
                frame.f_locals[args.output] = captured  # %%capture out: the output as `out`
        elif name in ("writefile", "file"):  # %%file: IPython's alias
            self._write_file(line, cell)
        elif name in ("time", "timeit"):
            setup = _options(line, TIMEIT, posix=False, strict=False, preserve_non_opts=True)[1].strip() \
                if name == "timeit" else ""
            if setup:  # %%timeit's line is a setup statement
                _run_here(setup, frame, 0)
            _run_here(cell_to_python(cell), frame, 1)

    @staticmethod
    def _write_file(line: str, cell: str) -> None:
        """`%%writefile [-a] name`: the cell's text into `name`, relative to the work dir, saying so as IPython does;
        an `import` of it then finds it."""
        import importlib

        from IPython.core.magics.osm import OSMagics

        args = _arguments(OSMagics.writefile, line)
        name = args.filename[1:-1] if re.match(r"^(\'.*\')|(\".*\")$", args.filename) else args.filename
        name = os.path.expanduser(name)
        print(("Appending to" if args.append else "Overwriting") if os.path.exists(name) else "Writing", name)
        with open(name, "a" if args.append else "w", encoding="utf-8") as f:
            f.write(cell)
        importlib.invalidate_caches()

    def _cd(self, line: str) -> None:
        """`%cd [-q] [dir | - | -N]`: into `dir` (home, the work dir, without one), the one before, or `_dh[N]`; kept
        in `_dh` and printed unless -q. A directory that cannot be entered is printed, as IPython does."""
        number = re.match(r"-(\d+)$", line.strip())
        opts, target = ({}, None) if number else _options(line, "q", mode="string")
        if number:
            if int(number.group(1)) >= len(self.dirs):
                print("The requested directory does not exist in history.")
                return
            target = self.dirs[int(number.group(1))]
        elif target == "-":
            if len(self.dirs) < 2:
                raise ValueError("%cd -: No previous directory to change to.")
            target = self.dirs[-2]
        before = os.getcwd()
        try:
            os.chdir(os.path.expanduser(str(target or "~")))
        except OSError as exc:
            print(exc)
            return
        if os.getcwd() != before:
            self.dirs.append(os.getcwd())
        if "q" not in opts:
            print(os.getcwd())

    @staticmethod
    def _run_file(line: str, frame) -> None:
        """`%run [-i] [-n] file.py args`: the file, from the work dir, run as a script (`__name__` "__main__", or its
        stem with -n) with `sys.argv` set; its names then join the notebook's, or with -i it runs among them."""
        opts, words = _options(line, RUN, mode="list")
        if not words:
            raise ValueError("%run needs a file name")
        name = words[0] if os.path.isfile(words[0]) or not os.path.isfile(words[0] + ".py") else words[0] + ".py"
        if not os.path.isfile(name):
            raise FileNotFoundError(f"%run {words[0]}: no such file where the notebook is graded (only the files "
                                    "its own cells write, with %%writefile, are there)")
        with open(name, encoding="utf-8") as f:
            code = compile(f.read(), name, "exec", dont_inherit=True)
        user = frame.f_globals
        interactive = "i" in opts
        namespace = user if interactive else {"__builtins__": user["__builtins__"]}
        kept = {key: user[key] for key in ("__name__", "__file__") if key in user}
        namespace["__name__"] = os.path.splitext(os.path.basename(name))[0] if "n" in opts else "__main__"
        namespace["__file__"] = name
        argv, sys.argv = sys.argv, [name, *words[1:]]
        try:
            exec(code, namespace)
        finally:
            sys.argv = argv
            if not interactive:
                namespace.pop("__name__", None)
                user.update(namespace)
            user.update(kept)

    def display_hook(self, value, number: int, namespace: dict) -> None:
        """A cell's last expression, as IPython's display hook keeps it: `Out[N]` and `_N`, and `_`, `__`, `___`
        moved along unless the cell's code assigned one of them itself."""
        if value is None or value is self.outputs:
            return
        own = any(key in namespace and namespace[key] is not held for key, held in zip(("_", "__", "___"), self.last))
        self.last = [value, *self.last[:2]]
        if not own:
            namespace.update(zip(("_", "__", "___"), self.last))
        namespace[f"_{number}"] = self.outputs[number] = value

    def store_input(self, code: str, typed: str, number: int, namespace: dict) -> None:
        """Before cell N runs, as IPython's history does: its code in `In[N]`, the cell as written in `_iN`, and
        `_i`, `_ii`, `_iii` the cells run before it."""
        self.inputs += [""] * (number - len(self.inputs))
        self.inputs.append(code.strip("\n"))
        namespace.update(zip(("_i", "_ii", "_iii"), self.typed))
        self.typed = [typed.rstrip("\n"), *self.typed[:2]]
        namespace[f"_i{number}"] = self.typed[0]

    def run_cell(self, code: str, label: str, namespace: dict, typed: str | None = None) -> None:
        """Run the code of the cell `label` ("cell In[N]"; `typed`: the cell as written) as IPython runs it: its
        input kept first, then its last expression's value goes to the display hook as output N (not with a trailing
        `;`)."""
        number = _number(label)
        self.store_input(code, code if typed is None else typed, number, namespace)
        tree = ast.parse(code, label)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, label, "exec", dont_inherit=True), namespace)
        if isinstance(last, ast.Expr):
            value = eval(compile(ast.Expression(last.value), label, "eval", dont_inherit=True), namespace)
            if not _ends_with_semicolon(code):
                self.display_hook(value, number, namespace)

    def system(self, command: str) -> None:
        """`!command`: never runs a shell (the sandbox runs no program; the report says the line was not run)."""

    def getoutput(self, command: str):
        """`x = !command`: never runs a shell; the output is an empty list of lines, IPython's SList."""
        from IPython.utils.text import SList

        return SList()

    def namespace(self) -> dict:
        """The names Jupyter gives every notebook: `get_ipython`, `display` (printed), and IPython's history:
        `In`, `Out`, `_ih`, `_oh`, `_dh`, `_`, `__`, `___`, `_i`, `_ii`, `_iii`."""
        return {"get_ipython": lambda: self, "display": lambda *objs, **_: print(*objs), "In": self.inputs,
                "Out": self.outputs, "_ih": self.inputs, "_oh": self.outputs, "_dh": self.dirs,
                "_": "", "__": "", "___": "", "_i": "", "_ii": "", "_iii": ""}


def _ends_with_semicolon(code: str) -> bool:
    """Whether the last token of `code` is `;` (IPython then shows and keeps nothing)."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    skip = (tokenize.ENDMARKER, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
    last = next((t for t in reversed(tokens) if t.type not in skip), None)
    return last is not None and last.type == tokenize.OP and last.string == ";"


def _run_here(code: str, frame, first_line: int):
    """Run a magic's code as if it stood in the cell at `frame`'s line (+ first_line): the same
    namespace, file name and line numbers; an expression's value is returned (`x = %time f()`)."""
    source = "\n" * (frame.f_lineno - 1 + first_line) + code
    name = frame.f_code.co_filename
    try:
        expression = compile(source, name, "eval", dont_inherit=True)
    except SyntaxError:
        exec(compile(source, name, "exec", dont_inherit=True), frame.f_globals, frame.f_locals)
        return None
    return eval(expression, frame.f_globals, frame.f_locals)
