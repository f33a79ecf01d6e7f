"""The checks of an exercise come from one source, pytest's collection: `grade show`, points overrides and the
judge agree, parametrized checks included."""

import json

import pytest

from conftest import grade_here
from grader.course.collection import collected_checks
from grader.course.exercises import CourseError, all_exercises, builtin_course


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda ex: ex.id)
def test_the_collected_checks_add_up_to_the_exercise(exercise):
    checks = collected_checks(exercise)
    assert sum(c["points"] for c in checks) == exercise.points
    assert len({c["id"] for c in checks}) == len(checks) and all(c["title"] and c["zh"] for c in checks)
    functions = {c["id"] for c in exercise.declared_checks()}  # read from the source: may miss some (ex07's)
    assert functions <= {c["id"].split("[")[0] for c in checks}


def test_a_parametrized_check_can_be_given_its_own_points():
    course = builtin_course()
    course.points = {"ex11.init_weights[Linear]": 3}
    ex11 = course.find("ex11")
    checks = {c["id"]: c["points"] for c in collected_checks(ex11)}
    assert checks["init_weights[Linear]"] == 3 and ex11.points == 12 == sum(checks.values())
    course.points = {"ex11.init_weights[Nope]": 3}
    with pytest.raises(CourseError, match=r"ex11 has no check init_weights\[Nope\]"):
        course.find("ex11")


def test_show_lists_every_parametrized_check():
    shown = json.loads(grade_here("show", "ex07", "--json").stdout)
    assert len(shown["checks"]) == 6 and sum(c["points"] for c in shown["checks"]) == shown["points"] == 10
