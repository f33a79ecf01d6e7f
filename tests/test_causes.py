"""A message names a cause only when the probe saw it, and one mistake costs the checks of what it breaks.

`grade validate` proves that each known mistake gets a message containing its `# Expect:` text; these tests
prove what it cannot: which checks fail, and what the messages must not claim."""

from pathlib import Path

from grader.course.exercises import find_exercise
from grader.judge.grading import grade
from grader.sandbox.source import load_source

MISTAKES = Path(__file__).resolve().parent / "mistakes"


def failed(exercise: str, folder: str, name: str) -> dict[str, str]:
    """The failing checks of a known mistake (seed 0): check id -> its English message."""
    result = grade(find_exercise(exercise), load_source(MISTAKES / folder / f"{name}.py"), seed=0)
    return {c.id: c.message.render("en") for c in result.checks if not c.passed}


def test_ex16_one_cpu_call_on_the_loss_fails_only_the_losses_check():
    bad = failed("ex16", "ex16_device_agnostic", "loss_moved_to_cpu")
    assert "moved a tensor to cpu" in bad.pop("losses_on_device")
    assert "builds on it" in bad.pop("training_values")  # depends on the losses check: says so, no second lesson
    assert bad == {}


def test_ex16_pick_device_that_asked_is_not_told_it_hard_codes_cuda():
    bad = failed("ex16", "ex16_device_agnostic", "pick_device_inverted")
    assert "returned False" in bad["pick_device"] and "hard-coded" not in bad["pick_device"]


def test_ex21_fewer_backwards_names_summed_losses_only_when_seen():
    summed = failed("ex21", "ex21_grad_accumulation", "single_backward")["step_every_k"]
    assert "their losses were combined before backward" in summed
    concatenated = failed("ex21", "ex21_grad_accumulation", "concatenated_group")["step_every_k"]
    assert "concatenating micro-batches" in concatenated and "combined" not in concatenated
    skipped = failed("ex21", "ex21_grad_accumulation", "backward_last_of_group")
    assert all("combined" not in text and "summing" not in text and "concatenat" not in text
               for text in skipped.values())
    assert "came after 1 backward" not in skipped["accumulated_gradient"]  # the step came after the whole group


def test_ex14_a_helper_sending_batches_to_the_gpu_costs_only_its_own_check():
    bad = failed("ex14", "ex14_training_loop", "batches_to_gpu")
    assert "With a GPU present" in bad["train_one_epoch"] and "fit_one_device" not in bad
