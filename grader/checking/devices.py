"""The pretend-GPU harness: run learner functions once with a CUDA device pretended, and judge what went to it.

On a machine without a GPU, code behind `if torch.cuda.is_available():` never runs, so `.to("cuda")` or
`device="cuda"` there goes unseen. `pretend_cuda` (grader/checking/probe_kit.py) makes torch report a GPU, runs
what names CUDA on the CPU and records it. Here that is one standard step for any exercise: `cuda_run` runs some of the
learner's functions that way (a probe), and `expect_cpu_only` fails when one of them sent something to the
pretended GPU although every input was on the CPU; `expect_cpu_module` does the same for a module built and run on
an input (its parameters, buffers and whatever its forward makes). Probes that drive modules and optimizers use
`pretend_cuda` themselves and hand what it recorded to `fail_if_gpu`.
"""

from __future__ import annotations

from grader.checking.expect import Text, fail, fail_raised, learner_call, learner_error, pretend_cuda, probe, verbatim

__all__ = ["cuda_run", "expect_cpu_module", "expect_cpu_only", "fail_if_gpu"]


@probe
def cuda_run(module, calls):
    """Run each [function name, args] of `calls` with a GPU pretended; per call, what named CUDA and the error
    it raised, if any (an error is the other checks' to judge; here it only explains)."""
    found = []
    for name, args in calls:
        with pretend_cuda(module) as seen:
            try:
                getattr(module, name)(*args)
                error = None
            except Exception as exc:  # the learner's error, reported as data
                error = learner_error(exc, module)
        found.append({"name": name, "cuda": seen.calls, "error": error})
    return found


def fail_if_gpu(cuda: list[str], what: str | Text) -> None:
    """Fail when, with a GPU pretended, `what` (a call, every input on the CPU) did something that names CUDA."""
    if cuda:
        fail("With a GPU present, {what} sends tensors to it (`{calls}`), although every input is on the CPU: the "
             "result would land on the GPU, or meet a CPU tensor and fail. Keep to the inputs' device: create "
             "tensors without a device (or with device=x.device), and move nothing to `\"cuda\"`.",
             "有 GPU 时，{what} 会把 tensor 放到 GPU 上（`{calls}`），而所有输入都在 CPU 上："
             "结果会落到 GPU 上，或与 CPU 上的 tensor 相遇而报错。请留在输入所在的设备上："
             "创建 tensor 时不指定设备（或用 device=x.device），不要把任何东西移到 `\"cuda\"`。",
             what=what if isinstance(what, Text) else verbatim(what), calls=verbatim(", ".join(dict.fromkeys(cuda))),
             key="moved-to-gpu")


def expect_cpu_only(submission, calls: list[tuple[str, list]], what: str | None = None) -> None:
    """Run the learner's `calls` ([name, args], every tensor on the CPU) once with a GPU pretended; fail when one
    of them sent something to it."""
    for row, (name, _args) in zip(submission.probe(cuda_run, [[n, list(a)] for n, a in calls],
                                                  what=what or "the functions with a GPU pretended"), calls):
        fail_if_gpu(row["cuda"], f"`{name}(...)`")


@probe
def built_with_gpu(module, name, args, inputs):
    """Build module.<name>(*args) and run it on `inputs` with a GPU pretended: what named CUDA, and the error, if
    any."""
    with pretend_cuda(module) as seen:
        _, error = learner_call(module, lambda: getattr(module, name)(*args)(*inputs))
    return {"cuda": seen.calls, "error": error}


def expect_cpu_module(submission, name: str, args: list, inputs: list) -> None:
    """Build the learner's module `name(*args)` and run it on `inputs` (on the CPU) once with a GPU pretended; fail
    when its parameters, buffers or forward sent anything to it, or when it raised there."""
    call = f"`{name}({', '.join(map(str, args))})(x)`"
    got = submission.probe(built_with_gpu, name, list(args), list(inputs), what=call)
    fail_if_gpu(got["cuda"], call)
    if got["error"]:
        fail_raised(got["error"], Text("with a GPU present, {call}", "有 GPU 时，{call}", call=verbatim(call)))
