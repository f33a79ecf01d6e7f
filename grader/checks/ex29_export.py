"""Hidden checks of ex29: export a model as a standalone program; keep a data-dependent branch.

A probe builds each model in the sandbox from weights the judge drew, hands it to the learner in training
mode, and loads the file the learner wrote with torch.jit.load, or else torch.export.load, never with
torch.load (an export runs without the model's Python class). It runs the loaded program on fresh inputs
of the example's shape, and once more on the first (a program saved in training mode keeps its Dropout, so
two runs differ); the judge compares with the model in eval mode. The gated model's inputs take both
branches: the example takes one, so a trace records only that one.

The gated model's class is written as a file in the sandbox's folder and imported from there, because
torch.jit.script reads the source of the class it compiles. The export runs a second time with a GPU pretended
(the model and the example on the CPU): nothing may go to the GPU. The paths end in `.pt2`, the suffix
torch.export.save asks for (a `.pt` made it warn, in the learner's output, about a name the checks chose).
"""

import importlib.util
import logging
import os
import sys

import torch
from torch import nn

from grader.checking import Text, check, fail, fail_raised, learner_call, matches, pretend_cuda, probe, verbatim
from grader.devices import fail_if_gpu, imported_anew

GATED_SOURCE = '''"""The gated model of ex29's checks."""

import torch
from torch import nn


class Gated(nn.Module):
    """Two heads, each after a Dropout; the sign of the input's mean picks one."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.3)
        self.pos = nn.Linear(6, 3)
        self.neg = nn.Linear(6, 3)

    def forward(self, x):
        if x.mean() > 0:
            return self.pos(self.drop(x))
        return self.neg(self.drop(x))
'''
SHAPE = (4, 6)


def gated_class(folder=None):
    """The Gated class: from a file written in `folder` (the sandbox, for torch.jit.script), or in memory."""
    if folder is None:
        namespace = {}
        exec(compile(GATED_SOURCE, "<ex29 gated model>", "exec"), namespace)  # our own source
        return namespace["Gated"]
    path = os.path.join(folder, "ex29_gated_model.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(GATED_SOURCE)
    if os.path.samefile(folder, os.getcwd()):  # a warning about the model names its file as the learner sees it
        path = "ex29_gated_model.py"
    spec = importlib.util.spec_from_file_location("ex29_gated_model", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ex29_gated_model"] = mod
    spec.loader.exec_module(mod)
    return mod.Gated


def mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))


# -- sandbox side ---------------------------------------------------------------------------

def _load(path):
    """The learner's file as a program: TorchScript, else torch.export; (callable, kind, why not). torch's
    loaders log warnings whose format is broken, which a judge's log capture raises on: logging is off here."""
    logging.disable(logging.CRITICAL)
    try:
        try:
            return torch.jit.load(path, map_location="cpu"), "TorchScript", None
        except Exception as exc:  # the learner's file may hold anything
            first = type(exc).__name__
        try:
            return torch.export.load(path).module(), "torch.export", None
        except Exception as exc:  # the learner's file may hold anything
            return None, None, f"{first} / {type(exc).__name__}"
    finally:
        logging.disable(logging.NOTSET)


@probe
def export_probe(module, which, state, example, inputs, path):
    """The learner's export of a model in training mode, loaded and run; then the export again with a GPU
    pretended (into another file): what named CUDA there, and its error."""
    Model = mlp if which == "mlp" else gated_class(os.getcwd())
    models = [Model(), Model()]
    for model in models:
        model.load_state_dict(state)
        model.train()
    export = getattr(module, f"export_{which}")
    _, error = learner_call(module, export, models[0], example.clone(), path)
    if error:
        return {"error": error}
    with pretend_cuda(module) as seen:
        anew = imported_anew(module, seen) or module  # the file imported with the GPU there: a device chosen then too
        at_import = len(seen.calls)
        _, gpu_error = learner_call(anew, getattr(anew, f"export_{which}"), models[1], example.clone(), f"gpu_{path}")
    out = {"error": None, "exists": os.path.isfile(path), "kind": None, "why": None, "outputs": None,
           "cuda": seen.calls[at_import:], "gpu_error": gpu_error}
    if not out["exists"]:
        return out
    program, out["kind"], out["why"] = _load(path)
    if program is None:
        return out
    outputs = []
    with torch.no_grad():
        for x in [*inputs, inputs[0]]:
            try:
                y = program(x.clone())
                outputs.append(y.detach().clone() if isinstance(y, torch.Tensor) else type(y).__name__)
            except Exception as exc:  # judged as the program's failure
                outputs.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}")
    out["outputs"], out["repeat"] = outputs[:-1], outputs[-1]
    return out


# -- judge side -----------------------------------------------------------------------------

def build(which, rng):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
    model = mlp() if which == "mlp" else gated_class()()
    if which == "mlp":
        bn = model[1]
        with torch.no_grad():
            bn.running_mean.copy_(torch.randn(16, generator=rng))
            bn.running_var.copy_(torch.rand(16, generator=rng) + 0.5)
    return model


def shifted(rng, sign):
    """An input whose mean has the given sign, by a clear margin."""
    x = torch.randn(*SHAPE, generator=rng)
    return x - x.mean() + sign * (0.5 + float(torch.rand(1, generator=rng)))


def run(submission, rng, which):
    def exported():
        model = build(which, rng)
        sign = 1 if bool(torch.rand(1, generator=rng) < 0.5) else -1
        example = shifted(rng, sign)
        inputs = [shifted(rng, sign), shifted(rng, -sign)] if which == "gated" else \
            [torch.randn(*SHAPE, generator=rng) for _ in range(2)]
        path = f"{which}_{int(torch.randint(0, 10**6, (1,), generator=rng))}.pt2"
        call = f"`export_{which}(model, example, path)`"
        out = submission.probe(export_probe, which, model.state_dict(), example, inputs, path, what=call)
        model.eval()
        with torch.no_grad():
            want = [model(x) for x in inputs]
        return model, inputs, want, call, out
    model, inputs, want, call, out = submission.once(which, exported)
    if out["error"]:
        err = out["error"]
        message = err["message"] or ""
        lesson = None
        if which == "gated" and ("data-dependent" in message or "Guard" in err["type"] or "guard" in message):
            lesson = Text("torch.export cannot export an `if` on a tensor's values (it would need torch.cond in the "
                          "model): torch.jit.script compiles the `if` itself.",
                          "torch.export 无法导出基于 tensor 值的 `if`（那需要在模型里使用 torch.cond）：torch.jit.script 会把 `if` "
                          "本身编译进去。")
        fail_raised(err, call, lesson)
    return model, inputs, want, call, out


def expect_cpu_path(out, call):
    """With a GPU pretended (the model and the example on the CPU), the export sends nothing there and runs."""
    fail_if_gpu(out["cuda"], call)
    if out["gpu_error"]:
        fail_raised(out["gpu_error"], Text("with a GPU present, {call}", "有 GPU 时，{call}", call=call))


def expect_program(out, call):
    if not out["exists"]:
        fail("{call} wrote no file at path.", "{call} 没有在 path 写出文件。", call=call, key="no-file")
    if out["kind"] is None:
        fail("the file {call} wrote is neither TorchScript (torch.jit.load) nor a torch.export program "
             "(torch.export.load): {why}. torch.save(model) pickles the Python object, which needs the model's class "
             "and code to load; torch.save(model.state_dict()) holds weights only. Save a program: "
             "torch.jit.save(torch.jit.trace(...) or torch.jit.script(...), path), or torch.export.save(...).",
             "{call} 写出的文件既不是 TorchScript（torch.jit.load），也不是 torch.export 程序（torch.export.load）：{why}。"
             "torch.save(model) pickle 的是 Python 对象，加载时需要模型的类和代码；torch.save(model.state_dict()) 只有权重。"
             "请保存程序：torch.jit.save(torch.jit.trace(...) 或 torch.jit.script(...), path)，或 torch.export.save(...)。",
             call=call, why=verbatim(out["why"]), key="not-a-program")


def random_outputs(out):
    """Whether the program gave two different outputs for the same input: its Dropout is on."""
    first, again = out["outputs"][0], out["repeat"]
    return isinstance(first, torch.Tensor) and isinstance(again, torch.Tensor) and not torch.equal(first, again)


def compare(out, want, inputs, call, label):
    for k, (got, w) in enumerate(zip(out["outputs"], want)):
        if isinstance(got, str):
            fail("the program {call} saved fails on an input of the example's shape: {error}.",
                 "{call} 保存的程序在与示例形状相同的输入上出错：{error}。", call=call, error=verbatim(got),
                 key="program-fails")
        if not matches(got, w, atol=1e-5):
            return k
    return None


@check("export_mlp saves a program (TorchScript or torch.export) that loads without the model's code", points=2,
       zh="export_mlp 保存的是一个程序（TorchScript 或 torch.export），加载时不需要模型的代码")
def test_mlp_file(submission, rng):
    *_, call, out = run(submission, rng, "mlp")
    expect_program(out, call)
    expect_cpu_path(out, call)


@check("the exported MLP computes what the model computes in eval mode", points=3,
       zh="导出的 MLP 的计算结果与模型在 eval 模式下一致", depends="mlp_file")
def test_mlp_values(submission, rng):
    model, inputs, want, call, out = run(submission, rng, "mlp")
    expect_program(out, call)
    if compare(out, want, inputs, call, "mlp") is not None:
        fail("the program {call} saved gives other outputs than the model in eval mode. Was it traced or exported "
             "in training mode (the mode the model arrives in)? Then BatchNorm normalises with each batch's "
             "statistics and Dropout drops units in the saved program. Call model.eval() before tracing or exporting.",
             "{call} 保存的程序的输出与 eval 模式下的模型不同。它是不是在训练模式（模型交给你时的模式）下被 trace 或导出的？"
             "那样的话，保存下来的程序里 BatchNorm 会用每个批次自己的统计量做归一化，Dropout 也会随机丢弃单元。"
             "请在 trace 或导出之前调用 model.eval()。",
             call=call, key="exported-in-train-mode")


@check("export_gated saves a program that loads without the model's code", points=1.5,
       zh="export_gated 保存的程序加载时不需要模型的代码")
def test_gated_file(submission, rng):
    *_, call, out = run(submission, rng, "gated")
    expect_program(out, call)
    expect_cpu_path(out, call)


@check("the exported gated model takes both branches, as the model does", points=3.5,
       zh="导出的门控模型和原模型一样会走两个分支", depends="gated_file")
def test_gated_branches(submission, rng):
    model, inputs, want, call, out = run(submission, rng, "gated")
    expect_program(out, call)
    k = compare(out, want, inputs, call, "gated")
    if k is None:
        return
    if random_outputs(out):
        fail("the program {call} saved gives two different outputs for the same input: its Dropout is still on, "
             "because it was saved in training mode (the mode the model arrives in), and a scripted program keeps "
             "the mode. Call model.eval() before scripting or exporting.",
             "{call} 保存的程序对同一个输入两次给出不同的输出：它的 Dropout 仍在工作，因为它是在训练模式（模型交给你时的模式）下保存的，"
             "而 script 得到的程序会保留这个模式。请在 script 或导出之前调用 model.eval()。",
             call=call, key="exported-in-train-mode")
    with torch.no_grad():
        frozen = model.pos(inputs[k]) if bool(inputs[0].mean() > 0) else model.neg(inputs[k])
    if k == 1 and matches(out["outputs"][k], frozen, atol=1e-5):
        fail("on an input whose mean has the other sign than the example's, the program {call} saved still runs "
             "the example's branch: tracing runs the model once and records the operations that ran, so the `if` "
             "is gone and its branch frozen (the TracerWarning 'Converting a tensor to a Python boolean' says so). "
             "Use torch.jit.script, which compiles the `if`.",
             "对于均值符号与示例相反的输入，{call} 保存的程序仍然执行示例走过的分支：trace 只运行一次模型并记录运行过的操作，"
             "所以 `if` 消失了，分支被冻结（TracerWarning `Converting a tensor to a Python boolean` 说的就是这个）。"
             "请使用 torch.jit.script，它会把 `if` 编译进去。", call=call, key="branch-frozen")
    fail("the program {call} saved gives other outputs than the model on input {k} (mean {mean:.3f}).",
         "{call} 保存的程序在第 {k} 个输入（均值 {mean:.3f}）上的输出与模型不同。", call=call, k=k + 1,
         mean=float(inputs[k].mean()), key="wrong-outputs")
