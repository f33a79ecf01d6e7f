"""Every exercise is proven: the solution and correct variants score full, the stub scores less,
every known mistake scores less with a message that names it (grade validate, in-process)."""

import re

import pytest

from grader.course.exercises import CourseError, UnknownExercise, all_exercises, builtin_course, find_in, load_course
from grader.author.validate import mistakes, validate

EXERCISES = all_exercises()


@pytest.mark.slow  # grades every file of every exercise (`python -m pytest --exercise ex05`: one exercise's)
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
    """The built-in course is taught in one order, numbered 1..N across its tracks (`grade 5` is the 5th, `grade
    next` after it the 6th): the basics are every exNN once, ex01-ex21 in the order of their ids and the later ones
    placed after the exercise they build on, without renumbering anything; the from-scratch track follows, fsNN in
    order. Fails if the numbers, the tracks and the order drift apart."""
    ids = [ex.id for ex in EXERCISES]
    assert [ex.number for ex in EXERCISES] == list(range(1, len(EXERCISES) + 1))
    basics, scratch = (builtin_course().track(name).exercises for name in ("basics", "from-scratch"))
    assert [ex.name for ex in EXERCISES] == basics + scratch
    assert sorted(ids[:len(basics)]) == [f"ex{n:02d}" for n in range(1, len(basics) + 1)]
    first = [i for i in ids if i.startswith("ex") and int(i[2:]) <= 21]
    assert first == sorted(first)
    assert ids[len(basics):] == [f"fs{n:02d}" for n in range(1, len(scratch) + 1)]


def test_find_resolves_every_key_as_the_full_list_does():
    course = builtin_course()
    every = course.exercises()
    for key in ("5", "29", "30", str(len(every)), "ex05", "ex17", "ex05_manual_backward", "ex05_man", "EX05", "fs01"):
        assert course.find(key) == find_in(every, key)
    for key in ("ex", "ex2", "fs", str(len(every) + 1), "nope"):  # ambiguous, out of range, unknown: one error
        with pytest.raises(UnknownExercise) as full:
            find_in(every, key)
        with pytest.raises(UnknownExercise, match=re.escape(str(full.value))):
            course.find(key)


def test_find_reads_only_the_exercise_it_finds(tmp_path):
    (tmp_path / "course.toml").write_text('name = "two"\nexercises = ["hw1_ok", "hw2_broken"]\n')
    for name, meta in (("hw1_ok", 'title = "Fine"\npoints = 2\n'), ("hw2_broken", "title = [unclosed\n")):
        (tmp_path / "exercises" / name).mkdir(parents=True)
        (tmp_path / "exercises" / name / "exercise.toml").write_text(meta)
    course = load_course(tmp_path)
    assert course.find("hw1").title == "Fine" and course.find("1").points == 2
    with pytest.raises(CourseError, match="hw2_broken"):
        course.find("hw2")
    with pytest.raises(CourseError, match="hw2_broken"):  # the list still says what is broken
        course.exercises()
