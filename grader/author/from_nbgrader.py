"""`grade new --from-notebook`: an nbgrader assignment notebook made an exercise, its autograded tests made checks.

What maps to what (docs/authoring.md, "Moving a course from nbgrader", has the table):
- solution cells: the stub (nbgrader's `# YOUR CODE HERE` / `raise NotImplementedError()` where the solution was)
  and the reference solution; the other code cells: both, a cell that only shows something (`squares(10)`) under
  `if __name__ == "__main__":`, so that the file does not run it when graded; markdown cells: the statement;
- each autograded test cell: a check of the same points, `test_<grade_id>`, public where the cell has no hidden
  tests, hidden otherwise; it runs as grader/checking/notebook_tests.py says, after the lines of earlier cells it
  needs (`setup`): in the judge, or, where it needs the student's objects themselves (a class of the notebook,
  isinstance, the namespace), in the sandbox beside the student's code, as nbgrader runs it;
- manually graded answers and tasks: not checks; their points are the teacher's to give (`grade review`);
- locked (read-only) code cells: kept in the checks module too (`LOCKED`), so that a submitted notebook's tests run
  after the teacher's version of them, as nbgrader's autograde restores them, whatever the student wrote there.
A test that cannot be converted faithfully (nbgrader's AUTOTEST directives, IPython magics, code that is not
Python) becomes a check that fails saying why. The report says, per test, which of these it became and why.
Never imports torch.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.course import nbgrader_cells as cells
from grader.course.exercises import CourseError, load_course
from grader.text import Text, verbatim

# A test that names one of these needs what happens in the student's process, so it runs beside their code:
BESIDE = [
    (("it asks the notebook's namespace ({names})", "它询问 notebook 的命名空间（{names}）"),
     {"globals", "locals", "vars", "eval", "exec", "dir", "get_ipython", "__main__", "inspect"}),
    (("it captures what the student's code prints ({names})", "它捕获学生代码打印的内容（{names}）"),
     {"redirect_stdout", "redirect_stderr", "stdout", "stderr", "capture_output"}),
    (("it reads files, which the student's code writes in its sandbox ({names})",
      "它读取文件，而这些文件是学生代码在沙箱里写的（{names}）"),
     {"open", "exists", "isfile", "listdir", "glob", "read_text", "read_bytes", "load", "loadtxt", "read_csv"}),
]


@dataclass
class Test:
    """One autograded test cell, as a check."""

    grade_id: str
    points: float
    code: str  # the whole cell, hidden tests and their markers included
    title: str
    hidden: bool  # it has hidden tests (or needs hidden lines of an earlier cell): a hidden check
    mode: str | None = "judge"  # "judge", "sandbox", or None: not converted
    why: Text | None = None  # why it runs in the sandbox, or why it was not converted
    setup: str = ""  # the lines of earlier cells it needs, in order


@dataclass
class Assignment:
    """An nbgrader notebook read: the exercise's files and its tests."""

    title: str
    statement: str
    stub: str
    solution: str
    tests: list[Test] = field(default_factory=list)
    by_hand: list[tuple[str, float, str]] = field(default_factory=list)  # (grade_id, points, "answer" or "task")
    locked: dict[str, str] = field(default_factory=dict)  # a read-only code cell's grade_id -> its code


def _python(code: str) -> str:
    """A cell as Python (IPython's magics as the calls they become)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(code)


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(_python(code))
    except (SyntaxError, ValueError):
        return None


def _bound(tree: ast.AST) -> dict[str, str]:
    """The names a cell binds at its top level: name -> "function", "class", "import" or "value"."""
    found: dict[str, str] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = "function"
        elif isinstance(node, ast.ClassDef):
            found[node.name] = "class"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found[(alias.asname or alias.name).split(".")[0]] = "import"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found[node.id] = "value"
        elif not isinstance(node, ast.Lambda):
            for child in ast.iter_child_nodes(node):
                visit(child)

    visit(tree)
    return found


def _read(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)}


def _docstring_title(code: str, fallback: str) -> str:
    tree = _parse(code)
    doc = ast.get_docstring(tree, clean=True) if tree is not None else None
    return doc.strip().splitlines()[0][:100] if doc else fallback


def read_assignment(notebook: Path, exercise_id: str) -> Assignment:
    """Read an nbgrader source notebook; a cell whose markers do not pair up is a CourseError naming it."""
    import nbformat

    try:
        nb = nbformat.read(str(notebook), as_version=4)
    except Exception as exc:  # nbformat raises several kinds for what is not a notebook
        why = str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__
        raise CourseError(f"{notebook.name} is not a notebook nbformat can read: {why}") from None
    statement, stub, solution, by_hand, tests, locked = [], [], [], [], [], dict[str, str]()
    code_cells: list[tuple[str, str, str]] = []  # (kind, student's code, solution's code) of the notebook's own code
    for number, cell in enumerate(nb.cells, 1):
        kind, text, gid = cells.kind(cell), cells.source(cell), cells.grade_id(cell) or f"cell{number}"
        try:
            if cell.get("cell_type") == "markdown":
                if kind in ("manual", "task"):
                    by_hand.append((gid, cells.points(cell), "answer" if kind == "manual" else "task"))
                if kind not in ("manual", "solution"):  # a written answer is the teacher's: never in the statement
                    statement.append(text)
            elif cell.get("cell_type") == "code" and kind == "test":
                cells.regions(text, cells.BEGIN_HIDDEN, cells.END_HIDDEN)
                tests.append(Test(gid, cells.points(cell), text, _docstring_title(text, gid),
                                  hidden=cells.BEGIN_HIDDEN in text))
            elif cell.get("cell_type") == "code":
                if cells.is_locked(cell):
                    locked.setdefault(gid, text)
                if kind == "manual":
                    by_hand.append((gid, cells.points(cell), "answer"))
                answer = kind in ("solution", "manual")
                code_cells.append((kind, cells.student_code(text) if answer else text,
                                   cells.solution_code(text) if answer else text))
        except cells.MarkerError as exc:
            raise CourseError(f"{notebook.name}: cell {number} ({gid}): {exc}") from None
    learner = _learner_names(code_cells)
    _plan_tests(tests, learner)
    reads = [_read(tree) if tree is not None else set() for tree in map(_parse, [c for _, _, c in code_cells] +
                                                                            [t.code for t in tests])]
    for i, (kind, student, reference) in enumerate(code_cells):
        guard = _only_shows(reference, set().union(*reads[:i], *reads[i + 1:]), kind)
        stub.append(_file_code(student, guard))
        solution.append(_file_code(reference, guard))
    headings = [line[2:].strip() for text in statement for line in text.splitlines() if line.startswith("# ")]
    return Assignment(title=headings[0] if headings else exercise_id.replace("_", " ").capitalize(),
                      statement="\n\n".join(statement), stub="\n\n\n".join(stub), solution="\n\n\n".join(solution),
                      tests=tests, by_hand=by_hand, locked=locked)


def _learner_names(code_cells) -> dict:
    """What the notebook's own code binds ({name: kind}) and its import statements."""
    bound: dict[str, str] = {}
    imports: list[str] = []
    for _, _, code in code_cells:
        tree = _parse(code)
        if tree is not None:
            bound.update(_bound(tree))
            imports += [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return {"bound": bound, "imports": imports}


def _plan_tests(tests: list[Test], learner: dict) -> None:
    """Each test's mode (and why), and the lines of earlier cells it needs."""
    for n, test in enumerate(tests):
        _mode(test, learner["bound"])
        if test.mode is not None:
            test.setup, needs_hidden = _setup(test, tests[:n], learner)
            test.hidden = test.hidden or needs_hidden


def _mode(test: Test, bound: dict[str, str]) -> None:
    code = test.code
    if "AUTOTEST" in code:
        test.mode, test.why = None, Text(
            "it uses nbgrader's AUTOTEST directives, which nbgrader expands from tests.yml when it makes the student "
            "version: write the asserts out",
            "它使用 nbgrader 的 AUTOTEST 指令，nbgrader 在生成学生版本时才按 tests.yml 展开它们：请把断言写出来")
        return
    try:
        python = _python(code)
        tree = ast.parse(python)
    except (SyntaxError, ValueError) as exc:
        test.mode, test.why = None, Text("its code is not Python: {error}", "它的代码不是 Python：{error}",
                                         error=verbatim(getattr(exc, "msg", exc)))
        return
    magics = re.findall(r"get_ipython\(\)\.(?:run_line_magic|run_cell_magic|system|getoutput)\('?(\w*)", python)
    if magics:
        test.mode, test.why = None, Text("it uses IPython magics or shell commands ({names})",
                                         "它使用了 IPython 魔法命令或 shell 命令（{names}）",
                                         names=verbatim(", ".join(sorted(set(magics)))))
        return
    read = _read(tree)
    classes = sorted(name for name in read if bound.get(name) == "class")
    own = sorted(name for name in read if name in bound and name in vars(builtins))
    used = read | {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    if classes:
        test.mode, test.why = "sandbox", Text("it uses the class {names} of the notebook",
                                              "它使用了 notebook 的类 {names}", names=verbatim(", ".join(classes)))
    elif own:
        test.mode, test.why = "sandbox", Text("the notebook defines {names}, a name of Python's own",
                                              "notebook 定义了 {names}，这是 Python 自带的名字",
                                              names=verbatim(", ".join(own)))
    elif any(isinstance(node, ast.ClassDef) for node in ast.walk(tree)):
        test.mode, test.why = "sandbox", Text("it defines a class, whose objects the student's code would get",
                                              "它定义了一个类，学生代码会拿到这个类的对象")
    else:
        for (en, zh), names in BESIDE:
            if used & names:
                test.mode, test.why = "sandbox", Text(en, zh, names=verbatim(", ".join(sorted(used & names))))
                break


def _setup(test: Test, earlier: list[Test], learner: dict) -> tuple[str, bool]:
    """The lines the test needs before it runs: the notebook's imports of the modules it names (the judge imports
    its own) and what earlier test cells bind that it reads (nbgrader ran them before, in one kernel). Whether one
    of them is a hidden line."""
    tree = ast.parse(_python(test.code))
    needed = (_read(tree) - set(_bound(tree))) - set(dir(builtins))
    needed -= {name for name, kind in learner["bound"].items() if kind != "import"}
    candidates: list[tuple[str, set[str], set[str], bool]] = []  # (code, binds, reads, hidden)
    for line in learner["imports"]:
        statement = ast.parse(line)
        candidates.append((line, set(_bound(statement)), set(), False))
    for other in earlier:
        if other.mode is None:
            continue
        source = _python(other.code)
        spans = cells.regions(other.code, cells.BEGIN_HIDDEN, cells.END_HIDDEN)
        for node in ast.parse(source).body:
            binds = set(_bound(node))
            if binds:
                hidden = any(first <= node.lineno <= last for first, last in spans)
                candidates.append((ast.get_source_segment(source, node) or "", binds, _read(node), hidden))
    chosen: list[int] = []
    while True:
        more = [i for i, (_, binds, _, _) in enumerate(candidates) if i not in chosen and binds & needed]
        if not more:
            break
        chosen += more
        for i in more:
            needed |= candidates[i][2] - set(dir(builtins))
    chosen.sort()
    return "\n".join(candidates[i][0] for i in chosen), any(candidates[i][3] for i in chosen)


def _only_shows(code: str, read: set[str], kind: str) -> bool:
    """A plain code cell that only shows something (`squares(10)`): it defines nothing the notebook reads."""
    tree = _parse(code)
    if kind != "plain" or tree is None or not tree.body:
        return False
    defines = any(isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)) for node in tree.body)
    return not defines and not set(_bound(tree)) & read


RUN_IN_A_FILE = ("%%time", "%%timeit", "%%capture")  # cell magics whose body is Python a file can run as it is


def _file_code(code: str, guard: bool) -> str:
    """A cell in the exercise's .py file: a demonstration under `if __name__ == "__main__":`, nbgrader's stub of a
    whole cell without its top-level `raise` (a file would stop there), IPython's magics and shell lines as comments
    (a cell magic other than %%time, %%timeit and %%capture: the whole cell)."""
    lines = code.rstrip("\n").split("\n")
    whole = lines[0].startswith("%%") and not lines[0].startswith(RUN_IN_A_FILE)
    lines = [f"# {line}  (IPython only)" if whole or line.lstrip().startswith(("%", "!")) else line for line in lines]
    code = "\n".join(lines)
    if guard and any(line.strip() and not line.lstrip().startswith("#") for line in lines):
        return 'if __name__ == "__main__":  # shown in the notebook, not run when graded\n' + \
            "\n".join("    " + line if line.strip() else line for line in lines)
    return cells.CODE_STUB[0] if code == "\n".join(cells.CODE_STUB) else code


# -- the checks module -------------------------------------------------------------------------

def _literal(text: str) -> str:
    """`text` as a Python string literal, as readable as it can be."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''" + text + "\n'''"
    return repr(text + "\n")


def _identifier(grade_id: str, taken: set[str]) -> str:
    name = re.sub(r"[^a-z0-9_]", "_", grade_id.lower()).strip("_") or "test"
    name = name if name[0].isalpha() else f"t_{name}"
    unique, n = name, 2
    while unique in taken:
        unique, n = f"{name}_{n}", n + 1
    taken.add(unique)
    return unique


CHECKS_HEAD = '''"""Checks of {id}, imported from the nbgrader notebook {notebook} (`grade new --from-notebook`):
one per autograded test cell, with its points. A test runs as docs/authoring.md ("Moving a course from nbgrader")
says: in the judge, the student's code in the sandbox; with mode="sandbox", beside the student's code, as nbgrader
runs it. Edit them freely: `grade validate {id}` proves them on the solution."""

from grader.checking import check, not_converted, notebook_test
'''


def checks_source(exercise_id: str, notebook: str, tests: list[Test], locked: dict[str, str] | None = None) -> str:
    """The checks module of the imported exercise; `locked`: the notebook's read-only cells, grade_id -> code."""
    parts, taken = [CHECKS_HEAD.format(id=exercise_id, notebook=notebook).rstrip("\n")], set[str]()
    if locked:
        parts.append("# the read-only cells, as written here: a test runs after these, whatever a student made of them"
                     "\nLOCKED = {\n" + "".join(f"    {json.dumps(grade_id, ensure_ascii=False)}: {_literal(code)},\n"
                                               for grade_id, code in locked.items()) + "}")
    for test in tests:
        name = _identifier(test.grade_id, taken)
        constant = name.upper()
        title = test.title + (" (run beside your code, as nbgrader runs it)" if test.mode == "sandbox" else "")
        visibility = "hidden" if test.hidden else "public"
        lines = [f"{constant} = {_literal(test.code)}"]
        if test.setup:
            lines.append(f"{constant}_SETUP = {_literal(test.setup)}")
        lines += ["", "", f"@check({json.dumps(title, ensure_ascii=False)}, points={test.points:g}, "
                          f"visibility={json.dumps(visibility)})", f"def test_{name}(submission):"]
        why = test.why or Text("", "")
        if test.mode is None:
            lines.append(f"    not_converted({json.dumps(why.render('en'), ensure_ascii=False)},  # {constant}: "
                         f"rewrite it\n                  {json.dumps(why.render('zh'), ensure_ascii=False)})")
        else:
            extra = f", setup={constant}_SETUP" if test.setup else ""
            extra += ", locked=LOCKED" if locked else ""
            extra += ', mode="sandbox"' if test.mode == "sandbox" else ""
            if test.mode == "sandbox":
                lines.append(f"    # {why.render('en')}: it runs beside the student's code, which could fool it")
            lines.append(f"    notebook_test(submission, {json.dumps(test.grade_id)}, {constant}{extra})")
        parts.append("\n".join(lines))
    return "\n\n\n".join(parts) + "\n"


# -- the exercise --------------------------------------------------------------------------------

NOTEBOOK_TOML = '''title = {title}
topics = []
difficulty = 1
points = {points:g}                   # the sum of the checks' points (nbgrader's autograded tests)
time_limit = 10
hints = []                   # one to three, gentle to strong: `grade hint` shows them one at a time
'''


def from_notebook(course_root: Path, notebook: Path, exercise_id: str | None = None,
                  title: str | None = None, track: str | None = None) -> tuple[list[Path], list[Text]]:
    """Make an exercise of an nbgrader notebook (see the module's docstring), titled `title` (else by its first
    heading), in the teaching order of `track` if given; return the files written and the report for the teacher,
    a line per test and per cell graded by hand."""
    from grader.author.scaffold import write_exercise

    exercise_id = exercise_id or re.sub(r"[^a-z0-9_]", "_", notebook.stem.lower())
    imported = read_assignment(notebook, exercise_id)
    if not imported.tests:
        raise CourseError(f"{notebook.name} has no autograded test cell: nothing in it is graded automatically"
                          + (f" ({len(imported.by_hand)} cell(s) graded by hand)" if imported.by_hand else ""))
    written = write_exercise(course_root, exercise_id, {
        ("exercises", f"{exercise_id}.py"): imported.stub.rstrip("\n") + "\n",
        ("exercises", "README.md"): imported.statement.rstrip("\n") + "\n",
        ("exercises", "exercise.toml"): NOTEBOOK_TOML.format(title=json.dumps(title or imported.title,
                                                                         ensure_ascii=False),
                                                             points=sum(t.points for t in imported.tests)),
        ("solutions", None): imported.solution.rstrip("\n") + "\n",
        ("checks", None): checks_source(exercise_id, notebook.name, imported.tests, imported.locked),
    }, track)
    course = load_course(course_root.resolve())
    return written, report(imported) + [Text(
        "write the hints in exercise.toml and at least one known mistake in {folder}/ (a submission you have graded "
        "will do): `grade validate {id}` tells when they are done", "在 exercise.toml 中写提示，并在 {folder}/ 中至少"
        "放一个已知错误示例（你批改过的一份提交即可）：`grade validate {id}` 会告诉你何时完成",
        folder=verbatim(course.mistakes_dir / exercise_id), id=exercise_id)]


def report(imported: Assignment) -> list[Text]:
    """A line per test (a check run in the judge, in the sandbox and why, or not converted and why), per read-only
    cell and per cell graded by hand."""
    lines = []
    for test in imported.tests:
        head = Text("test {id} ({points:g} {unit}{hidden})", "测试 {id}（{points:g} 分{hidden}）", id=test.grade_id,
                    points=test.points, unit=_unit(test.points), hidden=Text(", hidden tests kept out of the stub",
                                                                             "，隐藏测试不进入初始代码")
                    if test.hidden else Text("", ""))
        if test.mode == "judge":
            lines.append(Text("{head}: a check run in the judge, whose asserts the student's code cannot forge",
                              "{head}：在评分进程中运行的检查，学生代码无法伪造它的断言", head=head))
        elif test.mode == "sandbox":
            lines.append(Text("{head}: a check run beside the student's code, as nbgrader runs it, because {why}: a "
                              "submission written to fool it could pass it",
                              "{head}：像 nbgrader 一样在学生代码旁边运行的检查，因为{why}："
                              "专门为骗过它而写的提交可能通过它",
                              head=head, why=test.why))
        else:
            lines.append(Text("{head}: NOT converted, because {why}: its check fails until you rewrite it",
                              "{head}：没有转换，因为{why}：在你改写它之前，它的检查总是不通过",
                              head=head, why=test.why))
    for grade_id in imported.locked:
        lines.append(Text("read-only cell {id}: kept in the checks (LOCKED), so that a submitted notebook's tests run "
                          "after it as you wrote it, whatever the student made of it, as nbgrader restores it",
                          "只读单元格 {id}：保存在检查中（LOCKED），因此提交的 notebook 中的测试"
                          "会在你写的这个版本之后运行，无论学生把它改成了什么，与 nbgrader 恢复它的做法相同",
                          id=grade_id))
    for grade_id, points, kind in imported.by_hand:
        lines.append(Text("{kind} {id} ({points:g} {unit}): graded by hand in nbgrader, so not a check: give its "
                          "points with `grade review`", "{kind} {id}（{points:g} 分）：在 nbgrader 中人工评分，所以不是"
                          "检查：用 `grade review` 给分", kind=Text("task", "任务") if kind == "task" else
                          Text("answer", "答案"), id=grade_id, points=points, unit=_unit(points)))
    return lines


def _unit(points: float) -> Text:
    return Text("point" if points == 1 else "points", "分")
