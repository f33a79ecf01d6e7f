"""Write an exercise as a Jupyter notebook: the statement as markdown, the stub's code as code
cells (one per top-level function or class), a cell that checks the work, and the stub's demo last.

The checking cell is tagged `skip-grading`, so grading the notebook never runs it. The stub's `if __name__ ==
"__main__":` demo runs in Jupyter (a kernel's `__name__` is "__main__") and raises on a function not written yet:
it comes after the checking cell, so that Run All always reaches the check. Graded, it does not run (the module is
named `submission`), wherever it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader.course.exercises import Exercise
from grader.text import say

CHECK_TAG = "skip-grading"


def split_cells(code: str) -> list[str]:
    """Split a module into cells: the header (docstring, imports) then one cell per top-level block."""
    tree = ast.parse(code)
    lines = code.splitlines()
    starts = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If)):
            starts.append(first - 1)
    bounds = [0] + [s for s in starts if s > 0] + [len(lines)]
    cells = ["\n".join(lines[a:b]).strip("\n") for a, b in zip(bounds, bounds[1:])]
    return [c for c in cells if c.strip()]


# How a statement's words about its file read in a notebook, per language, most specific first.
NOTEBOOK_WORDS = {
    "en": [("Run the file (`python {file}`)", "Run the cells"),
           ("run `python {file}`", "run the cells"),
           ("Run `grade {id}`; stuck? `grade hint {id}`.",
            'Run `check("{id}")`, near the end, to check your work; stuck? Run `hint("{id}")`.'),
           ("`grade {id} --device cuda`", '`check("{id}", device="cuda")`'),
           ("In `{file}`", "In the cells below"),
           ("`{file}` already holds", "The cells below already hold"),
           ("`{file}` holds", "The cells below hold"),
           ("`{file}`", "this notebook")],
    "zh": [("运行这个文件（`python {file}`）", "运行这些单元格"),
           ("运行 `python {file}`", "运行这些单元格"),
           ("运行 `grade {id}`；卡住了？`grade hint {id}`。",
            '运行靠近末尾的 `check("{id}")` 来检查；卡住了？运行 `hint("{id}")`。'),
           ("`grade {id} --device cuda`", '`check("{id}", device="cuda")`'),
           ("在 `{file}` 中", "在下面的单元格中"),
           ("`{file}` 中", "下面的单元格中"),
           ("`{file}` 里", "下面的单元格里"),
           ("`{file}`", "下面的单元格")],
}


def notebook_statement(exercise: Exercise, lang: str = "en", statement: str | None = None) -> str:
    """The statement (`statement`, else the exercise's) as a notebook's first cell: "in the cells below" for "in
    `ex05_....py`", "run `check("ex05")`" and `hint("ex05")` for `grade ex05` and `grade hint ex05`."""
    text = exercise.statement(lang) if statement is None else statement
    for pattern, replacement in NOTEBOOK_WORDS.get(lang, NOTEBOOK_WORDS["en"]):
        values = {"file": exercise.stub.name, "id": exercise.id}
        text = text.replace(pattern.format(**values), replacement.format(**values))
    return text


def is_demo(cell: str) -> bool:
    """Whether a cell is a module's `if __name__ == "__main__":` block."""
    try:
        body = ast.parse(cell).body
    except SyntaxError:
        return False
    return len(body) == 1 and isinstance(body[0], ast.If) and ast.unparse(body[0].test).replace("'", '"') in (
        '__name__ == "__main__"', '"__main__" == __name__')


def build_notebook(exercise: Exercise, code: str, lang: str = "en", statement: str | None = None):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    parts = split_cells(code)
    demos = [part for part in parts if is_demo(part)]
    cells = [new_markdown_cell(notebook_statement(exercise, lang, statement))]
    cells += [new_code_cell(part) for part in parts if part not in demos]
    cells.append(new_markdown_cell(say(lang, 'Run the cell below to check your work; stuck? `hint("{id}")` in any cell '
                                             "gives a hint, one more each time.", id=exercise.id)))
    check = new_code_cell(f'from grader import check, hint\n\ncheck("{exercise.id}")')
    check.metadata["tags"] = [CHECK_TAG]
    cells.append(check)
    if demos:
        cells.append(new_markdown_cell(say(lang, "A demo of your functions, as `python {file}` runs it. It stops at a "
                                                 "function not written yet, so it comes after the check: Run All "
                                                 "reaches the check first.", file=exercise.stub.name)))
        cells += [new_code_cell(part) for part in demos]
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "torch_katas": {"exercise": exercise.name},
    })
    nbformat.validate(nb)
    return nb


def write_notebook(exercise: Exercise, code: str, out: Path, lang: str = "en", statement: str | None = None) -> Path:
    """Write the notebook of `code` (a stub in `lang`: grader/course/stub_text.py, or any file's text) as `exercise` to
    `out` (`statement`: a kata variant's, else the exercise's)."""
    import nbformat

    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_notebook(exercise, code, lang, statement), str(out))
    return out
