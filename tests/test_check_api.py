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


def test_matches_accepts_what_expect_close_and_expect_number_accept():
    import numpy as np
    import torch

    from grader.checking import matches

    t = torch.tensor([1.0, float("inf"), -2.0])
    assert matches(t.float(), t.double()) and matches(t + 1e-7, t)
    assert not matches(t, t.reshape(1, 3)) and not matches(t.tolist(), t) and not matches(None, t)
    assert not matches(torch.tensor([1.0, -float("inf"), -2.0]), t), "inf matches the same inf only"
    nan = torch.tensor([float("nan")])
    assert not matches(nan, nan) and matches(nan, nan, equal_nan=True)
    assert matches(np.float64(0.5), 0.5) and matches(torch.tensor([0.5]), 0.5) and matches(float("inf"), float("inf"))
    assert not matches(True, 1.0) and not matches(0.6, 0.5) and not matches(torch.ones(2), 1.0)


def test_is_number_is_a_type_as_python_sees_it():
    import numpy as np
    import torch

    from grader.checking import is_number

    assert is_number(np.float64(0.5)) and is_number(0.5) and not is_number(1) and is_number(1, (int, float))
    assert not is_number(True, (int, float)) and not is_number(torch.tensor(0.5))
    assert is_number(torch.tensor([0.5]), tensor=True) and not is_number(torch.ones(2), tensor=True)


def test_learner_call_keeps_an_error_as_data_and_fail_raised_reports_it(tmp_path):
    import types

    from grader.checking import CheckFailed, LearnerError, fail_raised, learner_call

    path = tmp_path / "submission.py"
    path.write_text("def fit(x):\n    if x:\n        return x * 2\n    raise ValueError('no data.\\nsecond line')\n"
                    "def todo():\n    raise NotImplementedError\n")
    module = types.ModuleType("submission")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    assert learner_call(module, module.fit, 2) == (4, None)
    value, error = learner_call(module, module.fit, 0)
    assert value is None and error["type"] == "ValueError" and error["frames"][0]["line"] == 4
    with pytest.raises(CheckFailed) as failed:
        fail_raised(error, "`fit(0)`", ("Give it data.", "给它数据。"))
    assert failed.value.message == ("`fit(0)` raised ValueError: no data (line 4, in fit: "
                                    "raise ValueError('no data.\\nsecond line')). Give it data.")
    assert failed.value.zh.startswith("`fit(0)` 抛出了 ValueError: no data") and failed.value.zh.endswith("给它数据。")
    assert failed.value.key == "raised-ValueError"
    _, todo = learner_call(module, module.todo)
    with pytest.raises(LearnerError) as not_started:
        fail_raised(todo, "`todo()`")
    assert not_started.value.not_started


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda ex: ex.id)
def test_a_message_without_values_shows_its_braces_as_written(exercise):
    """`fail` and `Text` format their templates only when given values: a template without values is shown as
    written, so `{{` there reaches the learner doubled (ex28 showed `{{k: v.clone() ...}}`)."""
    doubled = []
    for node in ast.walk(ast.parse(exercise.checks.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("fail", "Text") \
                and not [k for k in node.keywords if k.arg != "key"]:
            texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            doubled += [f"line {node.lineno}: {t[:60]}" for t in texts if "{{" in t or "}}" in t]
    assert not doubled, f"{exercise.checks.name}: {doubled}"


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda ex: ex.id)
def test_check_modules_use_the_apis_comparison_and_error_capture(exercise):
    """One matches() with the check API's tolerances, one learner_call to capture a learner's error in a probe and
    one fail_raised to report it: no local close() helper, no hand-made "raised" message."""
    source = exercise.checks.read_text(encoding="utf-8")
    tree = ast.parse(source)
    local = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.strip("_") in ("close", "raised")]
    assert not local, f"{exercise.checks.name} defines its own {local}: use matches() and fail_raised()"
    by_hand = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
               and getattr(node.func, "id", None) == "learner_error"]
    assert not by_hand, f"{exercise.checks.name} catches a learner's error by hand at lines {by_hand}: learner_call"


def test_salted_hash_hashes_strings_as_another_process_does():
    import types

    from grader.checking import salted_hash

    module = types.ModuleType("submission")
    module.h = hash  # a learner's own name for it follows too
    before = hash("seed-7"), hash(b"seed"), hash(7)
    with salted_hash(module):
        assert hash("seed-7") != before[0] and module.h("seed-7") == hash("seed-7") and hash(b"seed") != before[1]
        assert hash(7) == before[2] and hash("seed-7") == hash("seed-7")
    assert (hash("seed-7"), hash(b"seed"), module.h) == (before[0], before[1], hash)
