"""Notebooks: written from an exercise, graded like the same code as a .py, broken ones explained."""

import json
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from conftest import ROOT, grade_here, grade_json
from grader.course import stub_text
from grader.course.exercises import all_exercises, find_exercise
from grader.learner.jupyter import CheckResult, check
from grader.sandbox.cell_text import cell_to_python
from grader.sandbox.source import not_run

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"


def outcomes(result):
    return [(c["id"], c["outcome"], c["points"]) for c in result["checks"]]


def write(path, cells, **meta):
    nb = new_notebook(cells=cells, metadata=meta)
    nbformat.write(nb, str(path))
    return path


@pytest.mark.parametrize("exercise", ["ex05", "ex07"])  # ex07's docstring has a line ending in "go?"
def test_stub_notebook_grades_like_the_stub(tmp_path, exercise):
    proc = grade_here("notebook", exercise, "--out", tmp_path / "stub.ipynb")
    assert proc.returncode == 0, proc.stderr
    nb = nbformat.read(str(tmp_path / "stub.ipynb"), as_version=4)
    assert nb.cells[0].cell_type == "markdown" and exercise in nb.cells[0].source
    checking = [c for c in nb.cells if "skip-grading" in c.metadata.get("tags", [])]
    assert len(checking) == 1 and f'check("{exercise}")' in checking[0].source
    as_notebook = grade_json(exercise, "--file", tmp_path / "stub.ipynb", "--seed", "5")
    stub = next((ROOT / "exercises").glob(f"{exercise}_*/{exercise}_*.py"))
    as_py = grade_json(exercise, "--file", stub, "--seed", "5")
    assert as_notebook["status"] == as_py["status"] == "graded" and not as_notebook["message"]
    assert outcomes(as_notebook) == outcomes(as_py)


def test_solution_as_notebook_scores_full_and_magics_are_skipped(tmp_path):
    cells = [new_markdown_cell("# my work"), new_code_cell("%matplotlib inline\nimport torch\n!pip install x"),
             new_code_cell(SOLUTION.read_text()), new_code_cell("raise RuntimeError('tagged')")]
    cells[-1].metadata["tags"] = ["skip-grading"]
    result = grade_json("ex05", "--file", write(tmp_path / "work.ipynb", cells), "--seed", "5")
    assert result["score"] == result["max_score"] == 10
    assert "1 IPython magic or shell line(s) not run when grading: !" in result["notes"]  # %matplotlib: unsaid
    assert any("cell In[3] (tagged skip-grading)" in n for n in result["notes"])  # code cells count, as In [N]


def test_cell_magic_cell_is_skipped(tmp_path):
    cells = [new_code_cell("%%bash\necho hi"), new_code_cell(SOLUTION.read_text())]
    assert grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells))["score"] == 10


def test_a_cell_that_raises_does_not_zero_the_others(tmp_path):
    cells = [new_markdown_cell("intro"), new_code_cell("import torch\n\nx = 1 / 0"),
             new_code_cell(SOLUTION.read_text()), new_code_cell("def broken(x)\n    return x"),
             new_code_cell("after = 1")]
    result = grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells))
    assert result["status"] == "graded" and result["score"] == 10  # the checks ran with what the cells defined
    message = result["message"]
    assert "cell In[1]: ZeroDivisionError" in message and "cell In[1], line 3" in message
    assert "cell In[3]: SyntaxError at line 1: expected ':'" in message and "    def broken(x)\n" in message
    assert "In[2]" not in message and "In[4]" not in message


def test_notebook_semantics(tmp_path):
    """Cells run as in Jupyter: %time and %%time run their code, %%capture captures, display() prints,
    `!` never runs a shell (not even inside a block), other magics and help (`x?`) do nothing."""
    marker = tmp_path / "shell_ran"
    cells = [
        new_code_cell("%time import torch"),
        new_code_cell(SOLUTION.read_text()),
        new_code_cell(f"if True:\n    !touch {marker}\nfiles = !ls {tmp_path}\n%pip install nothing\npredict?\n"
                      "z = %time 40 + 2\n%timeit -n 3 -r 1 counter = z"),
        new_code_cell("%%time\n\nchecked = counter + 1\nprint('ran', checked)"),
        new_code_cell("%%capture out\nprint('hidden')"),
        new_code_cell("print('captured', out.stdout.strip(), files)\ndisplay('shown')"),
        new_code_cell("\n%%time\nundefined_name"),
    ]
    result = grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells))
    assert result["score"] == 10 and not marker.exists()
    assert "ran 43" in result["output"] and "captured hidden []" in result["output"] and "shown" in result["output"]
    assert "hidden\n" not in result["output"]
    assert "cell In[7]: NameError" in result["message"]
    assert "cell In[7], line 3, in <module>: undefined_name" in result["message"]
    assert not any(f"In[{n}]" in result["message"] for n in range(1, 7))
    assert any("not run when grading: !, %pip, %pinfo" in n for n in result["notes"])


@pytest.mark.parametrize("run", ["%run -i helper.py", "%run helper"])
def test_a_helper_written_by_writefile_runs_with_run(tmp_path, run):
    """%%writefile writes its cell into the sandbox's work dir and %run runs it there, with -i among the notebook's
    names or in its own namespace whose names then join the notebook's; neither is a magic "not run"."""
    cells = [new_code_cell("%%writefile helper.py\n" + SOLUTION.read_text()), new_code_cell(run),
             new_code_cell("%%writefile -a 'helper.py'\n# appended\n")]
    result = grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells), "--seed", "3")
    assert result["score"] == 10 and not result["message"], result["message"]
    assert "Writing helper.py" in result["output"] and "Appending to helper.py" in result["output"]
    assert not any("not run when grading" in n for n in result["notes"])
    missing = grade_json("ex05", "--file", write(tmp_path / "m.ipynb", [new_code_cell("%run -i other.py")]))
    assert "cell In[1]: FileNotFoundError: %run other.py: no such file where the notebook is graded" in \
        missing["message"]


def test_underscores_and_out_follow_ipython_and_timeit_options_are_ipythons(tmp_path):
    cells = [new_code_cell(SOLUTION.read_text()), new_code_cell("40 + 2"), new_code_cell("answer = _ + 1"),
             new_code_cell("%%timeit -n1 -r1\nfrom_timeit = answer"), new_code_cell("7;"),
             new_code_cell("print('seen', answer, Out[2], _2, from_timeit, _, repr(__))"),
             new_code_cell("for _ in range(3):\n    pass"), new_code_cell("'shown'"),
             new_code_cell("print('kept', _)")]
    result = grade_json("ex05", "--file", write(tmp_path / "w.ipynb", cells), "--seed", "3")
    assert result["score"] == 10 and not result["message"], result["message"]
    assert "seen 43 42 42 43 42 ''" in result["output"]  # `7;` is quiet: neither shown nor kept
    assert "kept 2" in result["output"]  # the learner's own `_` is theirs: the hook leaves it, as IPython does


def test_cells_become_python_with_the_lines_the_learner_sees():
    assert cell_to_python("\n\nx = 1\n%time y = 2\n").splitlines() == [
        "", "", "x = 1", "get_ipython().run_line_magic('time', 'y = 2')"]
    kept = 'def f():\n    """Why do we go?"""\n    # and why?\n    return "?"\n'
    assert cell_to_python(kept) == kept
    assert not_run(cell_to_python("%matplotlib inline\n!ls\n%time x = 1\n%%capture\n")) == ["!"]
    assert not_run(cell_to_python("%load_ext autoreload\n%autoreload 2\n%load_ext tensorboard\nx = %env\n")) == [
        "%load_ext", "%env"]
    assert not_run(cell_to_python("%%bash\necho hi\n")) == ["%%bash"]


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
    proc = grade_here("ex05", "--file", path)
    assert proc.returncode == 2 and says in proc.stderr and proc.stderr.strip().count("\n") == 0


def test_check_in_notebook_code_grades_the_given_cells(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a notebook outside any workspace
    result = check("ex05", cells=["%matplotlib inline", SOLUTION.read_text()], lang="en")
    assert isinstance(result, CheckResult) and result.passed
    assert "Not recorded in your progress: this notebook is not in a workspace" in repr(result)
    assert "<table class='checks'>" in result._repr_html_() and "Score: 10/10" in repr(result)
    stub = check("ex05", cells=["import torch\ndef predict(x, w, b):\n    return -(w * x + b)\n"], lang="en")
    assert not stub.passed and "Hint 1/3:" in repr(stub) and "💡" in stub._repr_html_()
    assert 'stuck? Run `hint("ex05")`' in repr(stub) and "grade hint" not in repr(stub)


def test_a_notebook_speaks_notebook():
    """The statement cell says "in the cells below" and "run `check()`", never the .py file or a grade
    command; the checking cell brings `hint` beside `check`."""
    from grader.course.exercises import all_exercises
    from grader.course.notebook_writer import build_notebook

    for ex in all_exercises():
        for lang in ("en", "zh"):
            nb = build_notebook(ex, stub_text.stub(ex, lang), lang)
            statement = nb.cells[0].source
            assert ex.stub.name not in statement and "grade " not in statement and f'hint("{ex.id}")' in statement
            at = next(i for i, c in enumerate(nb.cells) if "skip-grading" in c.metadata.get("tags", []))
            assert f'hint("{ex.id}")' in nb.cells[at - 1].source
            assert nb.cells[at].source.startswith("from grader import check, hint")
            assert at == len(nb.cells) - 1 or "Run All reaches the check first" in nb.cells[at + 1].source \
                or "Run All 总能先运行到检查" in nb.cells[at + 1].source
    ex05 = next(ex for ex in all_exercises() if ex.id == "ex05")
    assert "In the cells below:" in build_notebook(ex05, stub_text.stub(ex05)).cells[0].source
    assert "在下面的单元格中：" in build_notebook(ex05, stub_text.stub(ex05, "zh"), "zh").cells[0].source


def test_hint_in_a_notebook_climbs_like_grade_hint(tmp_path, monkeypatch):
    from grader import hint

    monkeypatch.chdir(tmp_path)  # outside a workspace: counted in this kernel
    first, second = repr(hint("ex05")), repr(hint("ex05"))
    assert "Hint 1/3" in first and "Hint 2/3" not in first and 'hint("ex05")` again' in first
    assert "Hint 2/3" in second and "💡" in hint("ex05", all=True)._repr_html_()
    assert "提示 3/3" in repr(hint("ex05", lang="zh", all=True))


def test_notebook_for_every_exercise(tmp_path):
    proc = grade_here("notebook", "--all", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list(tmp_path.glob("*.ipynb"))) == len(json.loads(grade_here("list", "--json").stdout))


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
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[-1].outputs
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "PASSED True" in printed
    html = [o for o in outputs if o.output_type == "execute_result"][0]["data"]["text/html"]
    assert "<table class='checks'>" in html and "Score: 10/10" in html


def test_validate_fails_when_a_file_scores_otherwise_as_a_notebook(tmp_path, monkeypatch):
    """A .py that raises at its end does not load; as a notebook the other cells still count."""
    from grader.author import validate as validation
    from grader.course.exercises import find_exercise

    variant = tmp_path / "raises_at_the_end.py"
    variant.write_text(SOLUTION.read_text() + "\n\nraise RuntimeError('only the .py stops here')\n")
    monkeypatch.setattr(validation, "variants", lambda exercise: [variant])
    monkeypatch.setattr(validation, "mistakes", lambda exercise: [])
    report = validation.validate(find_exercise("ex05"), seed=3)
    rows = [r for r in report["rows"] if r["kind"] == "notebook"]  # on each draw of ex05's kata variants
    assert not report["ok"] and [r["file"] for r in rows] == ["raises_at_the_end.ipynb",
                                                               "raises_at_the_end.ipynb [reduction=sum]"]
    assert "10/10 (graded) where the .py scores 0/10 (error)" in rows[0]["why"] and "RuntimeError" in rows[0]["why"]


def test_a_py_file_never_imports_ipython():
    code = ("import sys; from grader.judge.grading import grade; from grader.sandbox.source import load_source; "
            f"load_source({str(SOLUTION)!r}); print('IPython' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "False", proc.stderr


@pytest.fixture(scope="module")
def kernel_grading():
    """Jupyter kernels whose check() goes to a grading service of this module's own (each kernel would import torch
    for a grader of its own otherwise), stopped at the end, leaving nothing behind."""
    import shutil
    import tempfile
    from pathlib import Path

    from grader.service import address, client

    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    folder = Path(tempfile.mkdtemp(prefix="tk-nb-"))  # short: a socket's path is at most 107 bytes
    with pytest.MonkeyPatch.context() as patch:
        for var in (address.NO_SERVER_ENV, "CI", "LC_ALL", "LC_MESSAGES"):
            patch.delenv(var, raising=False)
        patch.setenv(address.DIR_ENV, str(folder))
        yield patch
        client.stop(folder)
    left = sorted(p.name for p in folder.iterdir())
    shutil.rmtree(folder, ignore_errors=True)
    assert left == []


@pytest.mark.parametrize("exercise", [ex.id for ex in all_exercises()])
def test_every_notebook_runs_to_its_check_in_a_real_kernel(exercise, kernel_grading, tmp_path):
    """Run All on the exercise's notebook, written from its untouched stub (in English or Chinese, in turn, with the
    learner's locale), in a Jupyter kernel of its own: no cell before the check raises, and the check grades and
    shows its table. The stub's `if __name__ == "__main__":` demo, which raises on a function not written yet in a
    kernel, comes after the check."""
    import nbclient

    from grader.course.notebook_writer import CHECK_TAG, build_notebook, is_demo

    ex = find_exercise(exercise)
    lang = ("en", "zh")[int(ex.id[2:]) % 2] if ex.id[2:].isdigit() else "en"
    kernel_grading.setenv("LANG", "zh_CN.UTF-8" if lang == "zh" else "en_US.UTF-8")
    nb = build_notebook(ex, stub_text.stub(ex, lang), lang)
    nbclient.NotebookClient(nb, timeout=240, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    at = next(i for i, c in enumerate(code) if CHECK_TAG in c.metadata.get("tags", []))
    raised = [c.source[:60] for c in code[:at] if any(o.output_type == "error" for o in c.outputs)]
    assert not raised, raised
    shown = [o["data"]["text/plain"] for o in code[at].outputs if o.output_type == "execute_result"]
    assert shown and ("Score: " if lang == "en" else "得分：") in shown[0], code[at].outputs
    assert all(is_demo(c.source) for c in code[at + 1:]) and not any(is_demo(c.source) for c in code[:at])


def test_a_notebook_runs_in_jupyters_namespace(tmp_path):
    """A correct fs04 notebook that writes its layer with %%file and imports it, asks %pwd, moves with %cd, reads
    `In`, `Out`, `_`, `_i` and `_dh` as IPython keeps them: full score, no cell raised, and only the shell line is
    said not run (`x = !ls` is an empty SList); %matplotlib and autoreload do nothing, unsaid."""
    layer = (ROOT / "solutions" / "fs04_linear_init.py").read_text()
    cells = [new_code_cell("%matplotlib inline\n%load_ext autoreload\n%autoreload 2"),
             new_code_cell("import os\nhere = %pwd\nos.makedirs('sub', exist_ok=True)\n%cd -q sub\n"
                           "print('moved', os.getcwd() == os.path.join(here, 'sub') == str(_dh[-1]))\n%cd -q -\n"
                           "print('back', os.getcwd() == here, len(_dh))"),
             new_code_cell("%%file linear.py\n" + layer),
             new_code_cell("from linear import Linear\nfiles = !ls\nprint('shell', files == [], repr(files.s))"),
             new_code_cell("Linear(3, 2).weight.shape[0]"),
             new_code_cell("print('history', In[5], _5, Out[5], _oh[5], _, _i == _i5 == In[5], len(In), _i6[:5])")]
    result = grade_json("fs04", "--file", write(tmp_path / "layer.ipynb", cells), "--seed", "3")
    assert result["score"] == result["max_score"] and not result["message"], result["message"]
    assert result["notes"] == ["1 IPython magic or shell line(s) not run when grading: !"]
    output = result["output"]
    assert "moved True\nback True 3\nWriting linear.py\nshell True ''\n" in output
    assert "history Linear(3, 2).weight.shape[0] 2 2 2 2 True 7 print" in output
