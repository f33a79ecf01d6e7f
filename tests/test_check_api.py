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


# -- rules by meaning: one table, rule -> what computes the same thing (grader/checking/equivalents.py) --------------

def _equivalent_calls():
    import torch
    import torch.nn.functional as F

    x, t = torch.randn(2, 3, 4, 4), torch.tensor([0, 1])
    rows, seq = x[:, :, 0, 0], x[0, 0]
    return [
        ("softmax", lambda: F.softmin(-x, 1)), ("softmax", lambda: F.log_softmax(x, 1).exp()),
        ("softmax", lambda: torch._softmax(x, 1, False)), ("softmax", lambda: torch.special.softmax(x, 1)),
        ("softmax", lambda: x.softmax(1)), ("softmax", lambda: torch.ops.aten._softmax.default(x, 1, False)),
        ("softmax", lambda: torch.nn.Softmin(1)(-x)), ("softmax", lambda: torch.special.logsumexp(x, 1)),
        ("log_softmax", lambda: torch._log_softmax(x, 1, False)), ("log_softmax", lambda: F.softmax(x, 1).log()),
        ("cross_entropy", lambda: F.nll_loss(rows, t)), ("cross_entropy", lambda: torch.special.log_softmax(rows, 1)),
        ("cross_entropy", lambda: F.kl_div(rows, F.one_hot(t, 3).float(), reduction="batchmean")),
        ("gelu", lambda: torch._C._nn.gelu(x)), ("gelu", lambda: F.gelu(x, approximate="tanh")),
        ("silu", lambda: F.silu(x.clone(), inplace=True)),
        ("linear", lambda: F.linear(x, torch.randn(2, 4))), ("linear", lambda: torch.addmm(torch.zeros(2), seq,
                                                                                          torch.randn(4, 2))),
        ("dropout", lambda: torch.native_dropout(x, 0.5, True)), ("dropout", lambda: F.dropout2d(x)),
        ("dropout", lambda: torch.feature_dropout(x, 0.5, True)),
        ("layer_norm", lambda: F.group_norm(x, 1)), ("layer_norm", lambda: F.instance_norm(x)),
        ("layer_norm", lambda: torch.native_layer_norm(x, (4,), None, None, 1e-5)),
        ("layer_norm", lambda: F.batch_norm(x, None, None, training=True)), ("layer_norm", lambda: F.rms_norm(x, (4,))),
        ("rms_norm", lambda: F.rms_norm(x, (4,))), ("batch_norm", lambda: F.layer_norm(x, (4,))),
        ("conv2d", lambda: torch.convolution(x, torch.randn(2, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0],
                                             1)),
        ("conv2d", lambda: F.conv_transpose2d(x, torch.randn(3, 2, 3, 3))),
        ("conv2d", lambda: F.conv3d(x.unsqueeze(2), torch.randn(2, 3, 1, 3, 3))),
        ("max_pool2d", lambda: F.max_pool3d(x.unsqueeze(0), (1, 2, 2))), ("max_pool2d", lambda: F.max_pool1d(x[0], 2)),
        ("max_pool2d", lambda: F.adaptive_max_pool2d(x, 2)),
        ("max_pool2d", lambda: F.fractional_max_pool2d(x, 2, output_size=2)),
        ("embedding", lambda: F.embedding_bag(t.view(1, 2), rows, mode="sum")),
        ("lstm_cell", lambda: torch.lstm_cell(seq[:1], (seq[:1], seq[:1]), torch.randn(16, 4), torch.randn(16, 4))),
        ("lstm_cell", lambda: torch.nn.LSTM(4, 4)(seq)),
        ("scaled_dot_product_attention", lambda: torch.ops.aten._scaled_dot_product_attention_math(x, x, x)),
        ("scaled_dot_product_attention", lambda: torch.nn.MultiheadAttention(4, 1)(seq, seq, seq)),
        ("multi_head_attention_forward", lambda: torch.nn.MultiheadAttention(4, 1)(seq, seq, seq)),
    ]


@pytest.mark.parametrize("case", range(len(_equivalent_calls())))
def test_each_equivalent_of_a_forbidden_built_in_is_in_its_rules_family(case):
    """What computes a forbidden built-in's value, however torch spells it, is recorded by the probes' recorder and
    listed in the rule's family: a check that asks `forbidden_calls(rule, calls)` costs the rule's points for it."""
    from grader.checking import EQUIVALENTS, forbidden_calls, recording_calls

    rule, call = _equivalent_calls()[case]
    names: set[str] = set()
    with recording_calls(names):
        call()
    assert rule in EQUIVALENTS and forbidden_calls(rule, sorted(names)), (rule, names)


def test_the_building_blocks_a_statement_allows_are_in_no_family():
    """A from-scratch answer's own operations (exp, max, sums, matmul, unfold, erf, sigmoid, scatter) are no rule's."""
    from grader.checking import EQUIVALENTS, forbidden_calls

    allowed = ["exp", "amax", "max", "sum", "mean", "var", "rsqrt", "sqrt", "log", "matmul", "__matmul__", "unfold",
               "fold", "pad", "erf", "tanh", "sigmoid", "scatter_add_", "gather", "index_select", "where", "one_hot",
               "softplus", "masked_fill", "transpose", "view", "reshape", "__getitem__", "bernoulli_", "rand"]
    assert all(forbidden_calls(rule, allowed) == [] for rule in EQUIVALENTS)
    assert forbidden_calls("softmax", ["aten._softmax.default", "softmin", "softmin"]) == ["aten._softmax.default",
                                                                                          "softmin"]
