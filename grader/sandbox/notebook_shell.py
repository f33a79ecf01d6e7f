"""What `get_ipython()` is while a graded notebook's cells run: the magics that run when graded, IPython's names.

Runs in: the sandbox only, beside the learner's cells (process.py makes one `NotebookShell` per notebook and runs each
cell through it): untrusted once the first cell has run. The trusted side reads notebooks in source.py and never
imports this module's objects into a grading decision.
"""

from __future__ import annotations

import ast
import os
import re
import sys

from grader.sandbox.cell_text import cell_number, cell_to_python


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
        number = cell_number(label)
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
