"""Write an exercise as a Jupyter notebook: the statement as markdown, the stub's code as code
cells (one per top-level function or class), and a last cell that checks the work.

The checking cell is tagged `skip-grading`, so grading the notebook never runs it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader.exercises import Exercise

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


def build_notebook(exercise: Exercise, stub: Path, lang: str = "en"):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    cells = [new_markdown_cell(exercise.statement(lang))]
    cells += [new_code_cell(code) for code in split_cells(stub.read_text(encoding="utf-8"))]
    intro = "运行下面的单元格来检查你的答案。" if lang == "zh" else "Run the cell below to check your work."
    cells.append(new_markdown_cell(intro))
    check = new_code_cell(f'from grader import check\n\ncheck("{exercise.id}")')
    check.metadata["tags"] = [CHECK_TAG]
    cells.append(check)
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "torch_katas": {"exercise": exercise.name},
    })
    nbformat.validate(nb)
    return nb


def write_notebook(exercise: Exercise, stub: Path, out: Path, lang: str = "en") -> Path:
    import nbformat

    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_notebook(exercise, stub, lang), str(out))
    return out
