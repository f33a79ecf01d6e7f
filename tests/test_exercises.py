"""Every exercise is proven: the solution and correct variants score full, the stub scores less,
every known mistake scores less with a message that names it (grade validate, in-process)."""

import pytest

from grader.exercises import all_exercises
from grader.validate import mistakes, validate

EXERCISES = all_exercises()


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_validate(exercise):
    report = validate(exercise, seed=0)  # fixed, so CI is repeatable; `grade validate --seeds N` explores more
    bad = [f"{r['kind']} {r['file']}: {r['why']}" for r in report["rows"] if not r["ok"]]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_exercise_is_complete(exercise):
    assert exercise.stub.exists() and exercise.solution.exists() and exercise.checks.exists()
    assert (exercise.folder / "README.md").exists() and (exercise.folder / "README.zh.md").exists()
    assert len(exercise.hints) == 3 and len(exercise.zh["hints"]) == 3 and exercise.zh["title"]
    assert len(mistakes(exercise)) >= 3
    stub = exercise.stub.read_text(encoding="utf-8")
    assert "TODO" in stub, "the stub marks what to do with TODO"
    statement = exercise.statement()
    assert exercise.id in statement


def test_teaching_order():
    """The built-in course is taught in the order of its ids, none missing, so `grade 5` is ex05 and `grade next`
    after ex05 is ex06 (the number is the place in the course, the id a name: this fails if they drift apart)."""
    assert [ex.id for ex in EXERCISES] == [f"ex{n:02d}" for n in range(1, len(EXERCISES) + 1)]
    assert [ex.number for ex in EXERCISES] == [int(ex.id[2:]) for ex in EXERCISES]
