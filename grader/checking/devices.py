"""The pretend-GPU harness: run learner functions once with a CUDA device pretended, and judge what went to it.

On a machine without a GPU, code behind `if torch.cuda.is_available():` never runs, so `.to("cuda")` or
`device="cuda"` there goes unseen. `pretend_cuda` (grader/checking/probe_kit.py) makes torch report a GPU, runs
what names CUDA on the CPU and records it. Here that is one standard step for any exercise: `cuda_run` runs some of the
learner's functions that way (a probe), and `expect_cpu_only` fails when one of them sent something to the
pretended GPU although every input was on the CPU; `expect_cpu_module` does the same for a module built and run on
an input (its parameters, buffers and whatever its forward makes). Both also import the learner's code anew with the
GPU pretended (`imported_with_gpu`) and run the same calls on that module: a device chosen at import (module level,
`DEVICE = "cuda" if torch.cuda.is_available() else "cpu"`) is "cpu" in the module the sandbox loaded, and shows
only there, as do the tensors made with it at import, where a call uses them. Probes that drive modules and
optimizers use `pretend_cuda` themselves and hand what it recorded to `fail_if_gpu`, and what `imported_with_gpu`
recorded to `fail_if_gpu_anew`.
"""

from __future__ import annotations

import copy

from grader.checking.expect import Text, fail, fail_raised, learner_call, learner_error, pretend_cuda, probe, verbatim
from grader.checking.probe_kit import imported_anew

__all__ = ["cuda_run", "expect_cpu_module", "expect_cpu_only", "fail_if_gpu", "fail_if_gpu_anew", "imported_anew",
           "imported_with_gpu"]


def _copied(args: list) -> list:
    """A copy of a call's arguments for a second run (the first may have changed them in place); the same
    objects where one cannot be copied."""
    try:
        return copy.deepcopy(args)
    except Exception:  # a tensor that is no leaf, an object of the learner's
        return args


def imported_with_gpu(module, run) -> dict | None:
    """The learner's code imported anew with a GPU pretended, then `run(new module, the record)` (the probe's own
    calls, each error caught): what named CUDA during `run` (`cuda`: what the import put there counts where `run`
    uses it) and `run`'s value (`value`); None when importing it again raised. `fail_if_gpu_anew` judges it."""
    with pretend_cuda(module) as seen:
        fresh = imported_anew(module, seen)
        if fresh is None:
            return None
        at_import = len(seen.calls)
        value = run(fresh, seen)
    return {"cuda": seen.calls[at_import:], "value": value}


@probe
def cuda_run(module, calls):
    """Run each [function name, args] of `calls` with a GPU pretended; per call, what named CUDA and the error
    it raised, if any (an error is the other checks' to judge; here it only explains). Then the same with the
    learner's code imported anew with the GPU there (`anew`: what named CUDA as it was imported, and per call)."""
    found, kept = [], [_copied(args) for _, args in calls]
    for name, args in calls:
        with pretend_cuda(module) as seen:
            try:
                getattr(module, name)(*args)
                error = None
            except Exception as exc:  # the learner's error, reported as data
                error = learner_error(exc, module)
        found.append({"name": name, "cuda": seen.calls, "error": error})

    def run(fresh, seen):
        per_call = []
        for (name, _), args in zip(calls, kept):
            before = len(seen.calls)
            learner_call(fresh, getattr(fresh, name), *args)
            per_call.append(seen.calls[before:])
        return per_call

    return {"calls": found, "anew": imported_with_gpu(module, run)}


SEEDING = {"manual_seed", "manual_seed_all", "seed", "seed_all"}  # torch.cuda's seeding: it moves no tensor


def fail_if_gpu(cuda: list[str], what: str | Text, at_import: bool = False) -> None:
    """Fail when, with a GPU pretended, `what` (a call, every input on the CPU) did something that names CUDA;
    `at_import`: it did so only where the learner's code was imported with the GPU there."""
    what = what if isinstance(what, Text) else verbatim(what)
    cuda = [c for c in cuda if c.rsplit(".", 1)[-1] not in SEEDING]  # a seed sends no tensor anywhere
    calls = verbatim(", ".join(dict.fromkeys(cuda)))
    if cuda and at_import:
        fail("With a GPU present when your file is imported, {what} uses it (`{calls}`), although every input is on "
             "the CPU: a choice made at import, such as a module-level `DEVICE = \"cuda\" if "
             "torch.cuda.is_available() else \"cpu\"` or `torch.set_default_device(...)`, used inside. Imported "
             "without a GPU, the same call keeps to the CPU. Keep to the inputs' device: create tensors without a "
             "device (or with device=x.device), set no default device, and move nothing to `\"cuda\"`.",
             "导入你的文件时如果有 GPU，{what} 会用到它（`{calls}`），而所有输入都在 CPU 上："
             "这是导入时做出的选择（例如模块级的 `DEVICE = \"cuda\" if torch.cuda.is_available() else \"cpu\"` "
             "或 `torch.set_default_device(...)`）在函数里被用到了。没有 GPU 时导入，同样的调用会留在 CPU 上。"
             "请留在输入所在的设备上：创建 tensor 时不指定设备（或用 device=x.device），不要设置默认设备，"
             "也不要把任何东西移到 `\"cuda\"`。",
             what=what, calls=calls, key="gpu-at-import")
    if cuda:
        fail("With a GPU present, {what} sends tensors to it (`{calls}`), although every input is on the CPU: the "
             "result would land on the GPU, or meet a CPU tensor and fail. Keep to the inputs' device: create "
             "tensors without a device (or with device=x.device), and move nothing to `\"cuda\"`.",
             "有 GPU 时，{what} 会把 tensor 放到 GPU 上（`{calls}`），而所有输入都在 CPU 上："
             "结果会落到 GPU 上，或与 CPU 上的 tensor 相遇而报错。请留在输入所在的设备上："
             "创建 tensor 时不指定设备（或用 device=x.device），不要把任何东西移到 `\"cuda\"`。",
             what=what, calls=calls, key="moved-to-gpu")


def fail_if_gpu_anew(anew: dict | None, what: str | Text) -> None:
    """Fail when, with a GPU pretended as the learner's code was imported anew (`imported_with_gpu`), `what` named
    CUDA on that module."""
    if anew:
        fail_if_gpu(anew["cuda"], what, at_import=True)


def expect_cpu_only(submission, calls: list[tuple[str, list]], what: str | None = None) -> None:
    """Run the learner's `calls` ([name, args], every tensor on the CPU) once with a GPU pretended; fail when one
    of them sent something to it, or did with the learner's code imported with the GPU there."""
    got = submission.probe(cuda_run, [[n, list(a)] for n, a in calls],
                           what=what or "the functions with a GPU pretended")
    for row, (name, _args) in zip(got["calls"], calls):
        fail_if_gpu(row["cuda"], f"`{name}(...)`")
    for cuda, (name, _args) in zip(got["anew"]["value"] if got["anew"] else [], calls):
        fail_if_gpu(cuda, f"`{name}(...)`", at_import=True)


@probe
def built_with_gpu(module, name, args, inputs):
    """Build module.<name>(*args) and run it on `inputs` with a GPU pretended: what named CUDA, and the error, if
    any; then the same with the learner's code imported anew with the GPU there (`anew`)."""
    kept = _copied(inputs)
    with pretend_cuda(module) as seen:
        _, error = learner_call(module, lambda: getattr(module, name)(*args)(*inputs))

    def run(fresh, _seen) -> None:
        learner_call(fresh, lambda: getattr(fresh, name)(*args)(*kept))

    anew = imported_with_gpu(module, run)
    return {"cuda": seen.calls, "error": error, "anew": anew}


def expect_cpu_module(submission, name: str, args: list, inputs: list) -> None:
    """Build the learner's module `name(*args)` and run it on `inputs` (on the CPU) once with a GPU pretended; fail
    when its parameters, buffers or forward sent anything to it, or when it raised there."""
    call = f"`{name}({', '.join(map(str, args))})(x)`"
    got = submission.probe(built_with_gpu, name, list(args), list(inputs), what=call)
    fail_if_gpu(got["cuda"], call)
    if got["error"]:
        fail_raised(got["error"], Text("with a GPU present, {call}", "有 GPU 时，{call}", call=verbatim(call)))
    fail_if_gpu_anew(got["anew"], call)
