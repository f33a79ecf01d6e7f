"""The judge's pytest, prepared once in a warm parent (judge.Prepared): every judge forked after it gives the result
pytest.main gives, and one that cannot be prepared runs pytest.main."""

import sys

import pytest

from conftest import ROOT
from grader.judge import grading as judge
from grader.course.exercises import find_exercise
from grader.sandbox.source import load_source

MISTAKES = ROOT / "tests" / "mistakes" / "ex05_manual_backward"


def graded(exercise, path, prepared, monkeypatch):
    key = judge.prepared_key(exercise, judge.timeout_for(judge.limits_for(exercise)))
    monkeypatch.setitem(judge._prepared, key, prepared)
    result = judge.grade(exercise, load_source(path), seed=11).to_json()
    result.pop("duration_s")
    return result


@pytest.mark.parametrize("path", [ROOT / "solutions" / "ex05_manual_backward.py", MISTAKES / "loss_without_mean.py",
                                  MISTAKES / "divides_by_n_twice.py"], ids=lambda p: p.stem)
def test_a_judge_of_pytest_prepared_in_the_parent_gives_the_result_of_pytest_main(path, monkeypatch):
    exercise = find_exercise("ex05")
    judge.prewarm([exercise])
    prepared = judge.prepare(exercise, judge.timeout_for(judge.limits_for(exercise)))
    assert prepared is not None and [item.name for item in prepared.session.items][:1] == ["test_predict"]
    with_prepared = graded(exercise, path, prepared, monkeypatch)
    assert with_prepared == graded(exercise, path, None, monkeypatch)  # pytest.main in the judge
    assert with_prepared["status"] == "graded" and len(with_prepared["checks"]) == len(prepared.session.items)


def test_checks_that_cannot_be_prepared_are_left_to_pytest_main(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # pytest's collection puts tmp_path first: not for later tests
    monkeypatch.setattr(judge, "_prepared", dict(judge._prepared))
    exercise = find_exercise("ex05")
    broken = tmp_path / "checks_that_do_not_import.py"
    broken.write_text("raise ImportError('a check module that cannot be imported')\n")
    monkeypatch.setattr(type(exercise), "checks", property(lambda self: broken))
    assert judge.prepare(exercise, 40) is None
