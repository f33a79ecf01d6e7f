"""The learner's loop around the grader: the grader's own cells in a notebook are neutral; watch says what changed."""

import json

import nbformat
from nbformat.v4 import new_code_cell

from conftest import ROOT, grade_here
from grader.sandbox.check_cells import grader_names, without_own_api
from grader.judge.result import CheckResult, Result
from grader.sandbox.source import load_source
from grader.text import Text
from grader.learner.watch import change_line

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"


def test_the_graders_own_statements_are_blanked_and_the_rest_kept():
    cells = ['x = 1; c("ex05")  # again', "from grader import check as c, hint\nimport grader.learner.jupyter",
             'r = c("ex05")\nhint("ex05")\ny = 2', 'grader.check("ex05")', "def check(t):\n    return t"]
    names = grader_names(cells)
    assert names == {"c", "hint", "grader"}  # `check` is the learner's own here
    assert [without_own_api(code, names) for code in cells] == [
        "x = 1; None  # again", "\n", "\n\ny = 2", "", "def check(t):\n    return t"]
    assert without_own_api("def f(:\n    pass", names) == "def f(:\n    pass"  # the learner's error, left to show
    assert without_own_api('check("ex05")', set()) == 'check("ex05")'  # a check() of the learner's own


def tagged_cell(nb) -> int:
    """Where the checking cell `grade notebook` writes is (tagged skip-grading)."""
    return next(i for i, cell in enumerate(nb.cells) if "skip-grading" in cell.metadata.get("tags", []))


def test_a_notebook_with_check_and_hint_cells_grades_as_without_them(tmp_path):
    path = tmp_path / "work.ipynb"
    assert grade_here("notebook", "ex05", "--out", path).returncode == 0
    nb = nbformat.read(path, as_version=4)
    body = [new_code_cell(SOLUTION.read_text()), new_code_cell('from grader import hint\nhint("ex05")'),
            new_code_cell('%time x = 1\nfrom grader import check\ncheck("ex05")\nchecked = True')]
    at = tagged_cell(nb)
    nb.cells[1:at - 1] = body  # the solution, a hint cell, a copied check cell; the tool's own check cell stays
    nbformat.write(nb, path)
    source = load_source(path)
    assert source.notes == [] and len(source.chunks) == 3  # the hint cell is only the grader's: not even a cell
    assert source.chunks[-1][1].startswith('if __name__ == "__main__":')  # the stub's demo, after the check
    proc = grade_here("ex05", "--file", path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for unsaid in ("skip-grading", "did not run", "not run", "PermissionError", str(ROOT), "%time", "raised"):
        assert unsaid not in proc.stdout, unsaid
    tagged = nbformat.read(path, as_version=4)
    tagged.cells[tagged_cell(tagged)].source += "\nprint('mine')"  # learner code in the tagged cell: left out
    nbformat.write(tagged, path)
    assert "(tagged skip-grading) not run" in " ".join(note.render("en") for note in load_source(path).notes)


def test_check_in_a_notebook_does_not_replay_the_earlier_check_and_hint_cells(tmp_path, monkeypatch):
    from grader.learner.jupyter import check

    monkeypatch.chdir(tmp_path)
    cells = [SOLUTION.read_text(), 'from grader import check, hint\ncheck("ex05")', 'hint("ex05")']
    shown = check("ex05", cells=cells, lang="en")
    assert shown.passed and "Error" not in json.dumps(shown.result.to_json()) and str(ROOT) not in repr(shown)


def test_watch_says_what_changed_since_the_last_save():
    def result(*passed, score):
        checks = [CheckResult(id=i, title=Text(i), outcome="passed" if i in passed else "failed",
                              points=0, max_points=1) for i in "abcd"]
        return Result(exercise="ex05", name="ex05_manual_backward", submission="ex05.py", status="graded",
                      score=score, max_score=10, checks=checks)

    assert change_line(result("a", score=2), result("a", "b", "c", score=7), "en") == \
        "Since the last save: +2 checks pass; score 2/10 -> 7/10."
    assert change_line(result("a", "b", score=5), result("a", "c", score=5), "en") == \
        "Since the last save: +1 check passes, 1 check no longer passes; score 5/10 -> 5/10."
    assert change_line(result("a", score=2), result("a", score=2), "zh") == \
        "与上次保存相比：通过的检查没有变化；得分 2/10 -> 2/10。"
