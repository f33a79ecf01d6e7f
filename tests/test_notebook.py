"""Notebooks: written from an exercise, graded like the same code as a .py, broken ones explained."""

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from conftest import ROOT, grade_json, run_grade
from grader.jupyter import CheckResult, check

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"


def outcomes(result):
    return [(c["id"], c["outcome"], c["points"]) for c in result["checks"]]


def write(path, cells, **meta):
    nb = new_notebook(cells=cells, metadata=meta)
    nbformat.write(nb, str(path))
    return path


def test_stub_notebook_grades_like_the_stub(tmp_path):
    proc = run_grade("notebook", "ex05", "--out", tmp_path / "ex05.ipynb")
    assert proc.returncode == 0, proc.stderr
    nb = nbformat.read(str(tmp_path / "ex05.ipynb"), as_version=4)
    assert nb.cells[0].cell_type == "markdown" and "ex05" in nb.cells[0].source
    assert "skip-grading" in nb.cells[-1].metadata["tags"] and 'check("ex05")' in nb.cells[-1].source
    as_notebook = grade_json("ex05", "--file", tmp_path / "ex05.ipynb", "--seed", "5")
    as_py = grade_json("ex05", "--file", ROOT / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py",
                       "--seed", "5")
    assert outcomes(as_notebook) == outcomes(as_py)


def test_solution_as_notebook_scores_full_and_magics_are_skipped(tmp_path):
    cells = [new_markdown_cell("# my work"), new_code_cell("%matplotlib inline\nimport torch\n!pip install x"),
             new_code_cell(SOLUTION.read_text()), new_code_cell("raise RuntimeError('tagged')")]
    cells[-1].metadata["tags"] = ["skip-grading"]
    result = grade_json("ex05", "--file", write(tmp_path / "work.ipynb", cells), "--seed", "5")
    assert result["score"] == result["max_score"] == 10
    assert any("2 IPython magic" in n for n in result["notes"])
    assert any("cell 4 (tagged skip-grading)" in n for n in result["notes"])


def test_cell_magic_cell_is_skipped(tmp_path):
    cells = [new_code_cell("%%bash\necho hi"), new_code_cell(SOLUTION.read_text())]
    assert grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells))["score"] == 10


def test_error_in_a_cell_names_cell_and_line(tmp_path):
    cells = [new_markdown_cell("intro"), new_code_cell("import torch\n\nx = 1 / 0")]
    result = grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells))
    assert result["status"] == "error"
    assert "cell 2, line 3" in result["checks"][0]["message"] and "ZeroDivisionError" in result["checks"][0]["message"]


def test_syntax_error_in_a_cell_names_cell_and_line(tmp_path):
    cells = [new_code_cell("import torch"), new_code_cell("def predict(x, w, b)\n    return x")]
    result = grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells))
    assert "SyntaxError at cell 2, line 1" in result["checks"][0]["message"]


@pytest.mark.parametrize("content, says", [
    ("{not json", "invalid JSON"),
    (json.dumps({"nbformat": 2, "nbformat_minor": 0, "cells": []}), "unsupported notebook format version 2"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "only text"}]}), "no code cells"),
    (json.dumps([1, 2]), "not a valid notebook"),
])
def test_broken_notebooks_one_line_exit_2(tmp_path, content, says):
    path = tmp_path / "broken.ipynb"
    path.write_text(content)
    proc = run_grade("ex05", "--file", path)
    assert proc.returncode == 2 and says in proc.stderr and proc.stderr.strip().count("\n") == 0


def test_check_in_notebook_code_grades_the_given_cells():
    result = check("ex05", cells=["%matplotlib inline", SOLUTION.read_text()], lang="en")
    assert isinstance(result, CheckResult) and result.passed
    assert "<table>" in result._repr_html_() and "Score: 10/10" in repr(result)
    stub = check("ex05", cells=["import torch\ndef predict(x, w, b):\n    return -(w * x + b)\n"], lang="en")
    assert not stub.passed and "Hint:" in repr(stub) and "💡" in stub._repr_html_()


def test_notebook_for_every_exercise(tmp_path):
    proc = run_grade("notebook", "--all", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list(tmp_path.glob("ex*.ipynb"))) == len(json.loads(run_grade("list", "--json").stdout))


def test_check_in_a_real_kernel(tmp_path):
    """check() inside a running Jupyter kernel grades the cells executed so far (needs ipykernel and
    nbclient, which the grader itself does not depend on: skipped where they are not installed)."""
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [new_code_cell("x = 1\n%time y = 2"),
             new_code_cell(SOLUTION.read_text()),
             new_code_cell('from grader import check\nresult = check("ex05")\nprint("PASSED", result.passed)\nresult')]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[-1].outputs
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "PASSED True" in printed
    html = [o for o in outputs if o.output_type == "execute_result"][0]["data"]["text/html"]
    assert "<table>" in html and "Score: 10/10" in html
