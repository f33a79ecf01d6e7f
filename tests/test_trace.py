"""Every rule of a statement names the checks that verify it, and every check is named by a rule."""

import dataclasses

import pytest

from grader.course.exercises import all_exercises, find_exercise
from grader.course.statement_rules import rules, trace_problems


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda ex: ex.id)
def test_every_rule_traced_to_a_check(exercise):
    assert trace_problems(exercise) == []


def test_a_rule_without_a_check_and_a_check_without_a_rule_are_named(tmp_path):
    exercise = find_exercise("ex01")
    statement = (exercise.folder / "README.md").read_text(encoding="utf-8")
    found = rules(statement, "## What the checks verify")
    assert found[0][1] == ["weights_values", "weights_grad"]
    cut = statement.replace(" <!-- checks: share -->", "").replace(", share, snapshot -->", ", snapshot -->") \
        .replace("weights_grad", "weights_gradient")
    folder = tmp_path / exercise.name
    folder.mkdir()
    (folder / "README.md").write_text(cut, encoding="utf-8")
    problems = [str(p) for p in trace_problems(dataclasses.replace(exercise, folder=folder))]
    assert any("'`share_from_numpy` keeps values" in p and "names no check" in p for p in problems), problems
    assert any("'weights_gradient', which is no check" in p for p in problems), problems
    assert any("no rule names the check 'weights_grad'" in p for p in problems), problems
    assert any("no rule names the check 'share'" in p for p in problems), problems


def test_show_leaves_the_markers_out():
    assert "checks:" not in find_exercise("ex14").statement() and "checks:" not in find_exercise("ex14").statement("zh")
