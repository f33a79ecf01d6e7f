"""Public checks, through `grade release` as a teacher and a student use it: every built-in exercise ships some
(exercise.toml's `public`), and a course sets the visibility of the exercises it borrows (course.toml's
[visibility."torch-katas:ex05"]), with unknown names refused."""

import json
import shutil
import tomllib

import pytest

from conftest import ROOT, grade_here, run_grade

BORROWS = 'name = "dl"\nexercises = ["torch-katas:ex05", "torch-katas:ex07", "torch-katas:ex22"]\n'
SETS = '\n[visibility."torch-katas:ex05"]\npublic = ["dw"]\nhidden = ["predict"]\n'


def test_every_built_in_exercise_ships_public_checks_worth_less_than_it():
    from grader.course.exercises import builtin_course
    from grader.course.visibility import release_points

    for ex in builtin_course().exercises():
        public, _, hidden = release_points(ex)  # exercise.toml's public names checks the exercise has
        assert public and hidden > 0, ex.id  # something to run, never the whole exercise
        assert set(ex.visibility) == {cid.split("[")[0] for cid in public}, ex.id


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A course of three built-in exercises (two bug fixes), ex05's visibility set by the course, released:
    (course, release)."""
    tmp = tmp_path_factory.mktemp("borrowed")
    course = tmp / "dl"
    course.mkdir()
    (course / "course.toml").write_text(BORROWS + SETS)
    made = grade_here("release", "--out", tmp / "week1", cwd=course)
    assert made.returncode == 0, made.stderr
    return course, tmp / "week1"


def test_a_release_of_built_in_exercises_ships_their_public_checks_and_the_course_s(released):
    _, out = released
    checks = {path.stem: path.read_text() for path in (out / "course" / "checks").glob("*.py")}
    ex05 = checks["ex05_manual_backward"]
    assert "def test_grad_shapes" in ex05 and "def test_dw" in ex05  # exercise.toml's, and the course's
    assert "def test_predict" not in ex05 and "def test_by_hand" not in ex05  # hidden by the course, hidden
    assert checks["ex07_fix_zero_grad"].count("def test_") == 1 and "def test_returns" in checks["ex07_fix_zero_grad"]
    meta = tomllib.loads((out / "course/exercises/ex05_manual_backward/exercise.toml").read_text())
    assert (meta["points"], meta["hidden_points"], sorted(meta["public"])) == (5, 5, ["dw", "grad_shapes"])


@pytest.mark.parametrize("name", ["ex05_manual_backward", "ex07_fix_zero_grad", "ex22_loss_not_decreasing"])
def test_a_student_runs_the_public_checks_of_a_released_built_in_exercise(released, name):
    """The stub (a bug-fix exercise's runs) does not pass them; the reference solution passes them all."""
    _, out = released
    stub = out / "exercises" / name / f"{name}.py"
    untouched = json.loads(run_grade(name, "--json", cwd=out).stdout)
    assert untouched["score"] < untouched["max_score"]
    shutil.copy(ROOT / "solutions" / f"{name}.py", stub)
    solved = json.loads(run_grade(name, "--json", cwd=out).stdout)
    assert solved["submission"] == str(stub) and solved["score"] == solved["max_score"] > 0
    assert solved["hidden_points"] > 0 and {c["visibility"] for c in solved["checks"]} == {"public"}


@pytest.mark.parametrize("table, said", [
    ('[visibility."torch-katas:ex5"]\npublic = ["dw"]', "there is no exercise torch-katas:ex5 (did you mean "
                                                         "torch-katas:ex05?)"),
    ('[visibility.ex05]\npublic = ["grad_shape"]', "there is no check grad_shape (did you mean grad_shapes?)"),
    ('[visibility.ex05]\nshown = ["dw"]', "takes lists of check ids: public = [...]"),
])
def test_a_course_naming_what_is_not_there_is_refused_with_the_closest_name(tmp_path, table, said):
    (tmp_path / "course.toml").write_text(f"{BORROWS}\n{table}\n")
    refused = grade_here("release", "--out", tmp_path / "out", cwd=tmp_path)
    assert refused.returncode == 2 and said in refused.stderr, refused.stderr
    assert not (tmp_path / "out").exists()


def test_exercise_toml_naming_a_check_that_is_not_there_is_refused_and_fails_validate(tmp_path):
    made = grade_here("new", "hw1_double", "--course", tmp_path / "dl", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    meta = tmp_path / "dl" / "exercises" / "hw1_double" / "exercise.toml"
    meta.write_text(meta.read_text().replace('public = ["returns_tensor"]', 'public = ["doubel"]', 1))
    refused = grade_here("release", "--out", tmp_path / "out", cwd=tmp_path / "dl")
    assert refused.returncode == 2 and "exercise.toml: public: there is no check doubel (did you mean double?)" \
        in refused.stderr, refused.stderr
    proved = run_grade("validate", "hw1", cwd=tmp_path / "dl")
    assert proved.returncode == 1 and "public names doubel, which hw1_double does not have" in proved.stdout
