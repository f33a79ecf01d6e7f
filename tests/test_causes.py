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


def keys_of(exercise: str, folder: str, name: str, root: Path = MISTAKES) -> dict[str, tuple[str | None, str]]:
    """The failing checks of a file (seed 0): check id -> (its key, its English message)."""
    result = grade(find_exercise(exercise), load_source(root / folder / f"{name}.py"), seed=0)
    return {c.id: (c.key, c.message.render("en")) for c in result.checks if not c.passed}


def test_fs14_no_mask_is_not_a_mask_on_the_queries_and_an_edge_costs_its_check():
    ignored = keys_of("fs14", "fs14_attention", "mask_left_out")
    assert ignored["padding"][0] == "mask-ignored" and all("queries (rows)" not in m for _, m in ignored.values())
    assert set(keys_of("fs14", "fs14_attention", "loop_over_queries")) == {"shape"}, "wrong at Tq = 0 only"
    assert keys_of("fs14", "fs14_attention", "causal_triu_diagonal")["causal"][0] == "causal-diagonal"


def test_fs08_a_forward_that_raised_is_no_graph_cut_and_no_grader_error():
    bad = keys_of("fs08", "fs08_batchnorm", "sequences_raise")
    assert bad["gradient"][0] == bad["running_stats"][0] == "raised-RuntimeError"
    assert all(key not in ("graph-cut", "check-error", "running-not-updated") for key, _ in bad.values())


def test_false_causes_of_the_outside_set_are_gone():
    squeezed = keys_of("fs01", "fs01_softmax", "squeezed_input")
    assert all("keepdim" not in m for _, m in squeezed.values())
    stacked = keys_of("fs12", "fs12_lstm_cell", "stacked_wrong_axis")
    assert set(stacked) == {"sequence"} and stacked["sequence"][0] == "stacked-wrong-axis"
    assert all(key != "groups-ignored" for key, _ in keys_of("fs09", "fs09_conv2d", "batch_in_rows").values())
    support = keys_of("fs19", "fs19_sampling", "sample_follows_wrong_probs")["support"]
    assert support[0] == "probs-support-wrong" and "not from the softmax" not in support[1]
    assert "top_k" in keys_of("fs19", "fs19_sampling", "top_k_beyond_vocabulary"), "top_k > V is tried"
    seeded = keys_of("fs04", "fs04_linear_init", "fixed_seed")
    assert "forward" not in seeded and seeded["fresh_draws"][0] == "fixed-seed", "a seed sends nothing to the GPU"
    summed = keys_of("ex06", "ex06_manual_training_loop", "sum_not_mean")["train_converges"]
    assert summed[0] == "factor-N" and "smaller" not in summed[1]


def test_fs11_a_lookup_of_padding_only_needs_no_graph():
    variant = Path(__file__).resolve().parent / "variants" / "fs11_embedding" / "padding_rows_detached.py"
    assert grade(find_exercise("fs11"), load_source(variant), seed=0).full


def test_an_edge_only_mistake_fails_the_edges_checks_only():
    assert set(keys_of("fs15", "fs15_multihead", "out_proj_bias_always")) == {"no_bias"}
    assert set(keys_of("fs06", "fs06_layernorm", "grad_last_dim_only")) == {"backward_x", "by_hand"}
