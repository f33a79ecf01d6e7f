"""Generated mutants: each is one learner slip with a stable id, and the checks kill a fast sample of them
(the whole course: `grade validate --mutants`)."""

import pytest
import ast

from grader.course.exercises import all_exercises, find_exercise
from grader.author.mutants import equivalent_marks, generate, given_code, mutants_of, run_mutants

pytestmark = pytest.mark.slow

CODE = '''
import torch


def step(w, x, y, lr):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad.zero_()
    return loss.item()
'''


def by_operator(mutants):
    found = {}
    for m in mutants:
        found.setdefault(m.id.split(".")[1], []).append(m)
    return found


def test_each_mutant_is_one_slip_that_still_compiles():
    mutants = generate(CODE)
    ops = by_operator(mutants)
    for op in ("reduction", "flip-operator", "swap-operands", "drop-statement", "move-statement", "drop-with",
               "out-of-place", "drop-call", "off-by-one"):
        assert op in ops, op
    original = ast.unparse(ast.parse(CODE))
    codes = [m.code for m in mutants]
    assert original not in codes and len(set(codes)) == len(codes)
    for m in mutants:
        compile(m.code, m.id, "exec")
    dropped = [m for m in ops["drop-with"]]
    assert dropped[0].after == "w -= lr * w.grad" and "no_grad" not in dropped[0].code
    assert all(m.code.splitlines()[-1].strip().startswith("return") for m in ops["move-statement"]), \
        "a statement never moves past the return"
    assert any(m.before == "loss.item()" and m.after == "loss" for m in ops["drop-call"])


def test_ids_survive_edits_elsewhere():
    ids = {m.id: m.after for m in generate(CODE)}
    edited = CODE.replace("import torch\n", "import torch\n\n\ndef helper():\n    return 1\n")
    moved = {m.id: m.after for m in generate(edited) if not m.id.startswith("helper.")}
    assert moved == ids


def test_a_sample_of_ex04s_mutants_is_killed():
    exercise = find_exercise("ex04")
    wanted = [m.id for m in mutants_of(exercise)
              if m.id.startswith("sgd_step.") and m.id.split(".")[1] in ("drop-with", "drop-call", "flip-operator")]
    assert wanted
    [report] = run_mutants([exercise], only=set(wanted), workers=2)
    assert report["total"] == len(wanted)
    assert report["killed"] == len(wanted), report["survivors"]


def test_marks_name_existing_mutants_with_a_reason():
    for exercise in all_exercises():
        marks = equivalent_marks(exercise)
        assert set(marks) <= {m.id for m in mutants_of(exercise)}, exercise.id
        assert all(len(reason) > 20 for reason in marks.values()), exercise.id


def test_code_the_stub_hands_over_is_not_mutated():
    given = "\n\ndef given(x):\n    return x - 1\n"
    stub = CODE.replace("    w.grad.zero_()\n", "    raise NotImplementedError\n") + given
    solution = CODE + given
    mutants = generate(solution, given_code(stub))
    assert not [m for m in mutants if m.id.startswith("given.") or m.line < 9]
    assert [m for m in mutants if m.before == "w.grad.zero_()"]
    assert [m for m in generate(solution) if m.id.startswith("given.")]
