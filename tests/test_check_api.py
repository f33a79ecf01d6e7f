"""Check modules use the public check API only: what `__all__` of grader.checking, grader.gradients and
grader.devices offers (docs/authoring.md), so the rest of the grader can change without breaking a course."""

import ast

import pytest

import grader.checking
import grader.devices
import grader.gradients
from grader.course.exercises import all_exercises

API = {"grader.checking": set(grader.checking.__all__), "grader.gradients": set(grader.gradients.__all__),
       "grader.devices": set(grader.devices.__all__)}


def grader_imports(path):
    """(module, name) for each name a module imports from the grader package."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "grader":
            yield from ((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from ((alias.name, "") for alias in node.names if alias.name.split(".")[0] == "grader")


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda ex: ex.id)
def test_check_modules_import_only_the_check_api(exercise):
    outside = [f"{module}.{name}" if name else module for module, name in grader_imports(exercise.checks)
               if name not in API.get(module, ())]
    assert not outside, f"{exercise.checks.name} imports past the check API: {', '.join(outside)}"


def test_the_check_api_names_exist():
    for module, names in API.items():
        missing = [n for n in names if not hasattr(__import__(module, fromlist=["_"]), n)]
        assert not missing, f"{module}.__all__ names what it does not define: {missing}"


def test_an_import_past_the_api_is_found(tmp_path):
    path = tmp_path / "checks.py"
    path.write_text("from grader.checking import check\nfrom grader.text import Text\nimport grader.wire\n")
    assert list(grader_imports(path)) == [("grader.checking", "check"), ("grader.text", "Text"), ("grader.wire", "")]


def test_once_makes_a_shared_run_once_per_grading_and_retries_one_that_raised():
    from grader.judge.submission import Submission

    submission, made = Submission(None, None), []

    def make():
        made.append(len(made))
        if len(made) == 1:
            raise RuntimeError("the sandbox died")
        return {"run": len(made)}

    with pytest.raises(RuntimeError):
        submission.once("fit", make)
    first = submission.once("fit", make)
    assert first == {"run": 2} and submission.once("fit", make) is first and len(made) == 2
    assert submission.once("other", lambda: "its own") == "its own"
    assert Submission(None, None).once("fit", lambda: "a new grading draws anew") == "a new grading draws anew"
