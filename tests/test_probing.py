"""The probes' shared helpers, run as a probe would: on a learner module executed from source."""

import os
import sys

import pytest
import torch

from grader.sandbox import frames, process
from grader.checking.probe_kit import imported_anew, learner_error, pretend_cuda
from grader.sandbox.process import _load_module
from grader.sandbox.source import Source

LEARNER = '''
import torch
from torch import nn
from torch.cuda import is_available

def train_on_gpu():
    device = "cuda" if is_available() else "cpu"
    x = torch.zeros(2, 3, device=device)
    model = nn.Linear(3, 1).to(device)
    torch.cuda.manual_seed_all(0)
    return model(x.cuda()).shape, device

def train_anywhere():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.ones(2).to(device).sum(), device.type

def load_on_gpu(path):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.load(path, map_location=device, weights_only=True)["w"].device.type

def broken():
    y = 1
    raise ValueError("no good")
'''


def learner_module(label="work.py"):
    """The learner's code loaded as the sandbox loads it: a file, or (label "cell In[3]") a notebook cell."""
    stdin = sys.stdin
    try:
        module, _ = _load_module(Source(chunks=[(label, LEARNER)], filename="work.py", path=None,
                                        notebook=label != "work.py"))
    finally:
        sys.stdin = stdin  # the sandbox replaces it: not here
    return module


def test_pretend_cuda_runs_the_gpu_branch_on_the_cpu_and_records_it():
    module = learner_module()
    with pretend_cuda(module) as seen:
        shape, device = module.train_on_gpu()
    assert device == "cuda" and list(shape) == [2, 1]
    assert "zeros(device=cuda)" in seen.calls and ".cuda()" in seen.calls
    assert "torch.cuda.manual_seed_all" in seen.calls and ".to(cuda)" in seen.calls
    assert seen.seeds == [0]
    assert module.is_available is torch.cuda.is_available  # restored, the learner's alias too


def test_pretend_cuda_sees_the_cuda_seed_that_torch_manual_seed_sets():
    module = learner_module()
    with pretend_cuda(module) as seen:
        torch.manual_seed(123)
        torch.default_generator.manual_seed(7)  # the CPU generator alone: no CUDA seed
    assert seen.seeds == [123]


def test_pretend_no_cuda_takes_the_cpu_branch():
    module = learner_module()
    with pretend_cuda(module, available=False) as seen:
        assert module.train_anywhere()[1] == "cpu"
    with pretend_cuda(module) as seen:
        assert module.train_anywhere()[1] == "cuda"
    assert seen.calls == [".to(cuda)"]


def test_pretend_cuda_loads_a_checkpoint_meant_for_the_gpu_on_the_cpu(tmp_path):
    module = learner_module()
    torch.save({"w": torch.ones(2)}, tmp_path / "ckpt.pt")
    with pretend_cuda(module) as seen:
        assert module.load_on_gpu(tmp_path / "ckpt.pt") == "cpu"
    assert seen.calls == ["torch.load(map_location=cuda)"]
    with pretend_cuda(module, available=False) as seen:
        assert module.load_on_gpu(tmp_path / "ckpt.pt") == "cpu"
    assert not seen.calls


def test_learner_error_names_the_learners_line_in_a_file_and_a_notebook_cell():
    for label, where in (("work.py", "line 23, in broken: raise ValueError"), ("cell In[3]", "cell In[3], line 23")):
        module = learner_module(label)
        with pytest.raises(ValueError) as info:
            module.broken()
        error = learner_error(info.value, module)
        assert error["type"] == "ValueError" and error["message"] == "no good"
        assert where in error["where"] and not error["not_started"]


def test_where_an_error_came_from_is_data_rendered_in_the_learners_language():
    module = learner_module("cell In[3]")
    with pytest.raises(ValueError) as info:
        module.broken()
    error = learner_error(info.value, module)
    line = LEARNER.splitlines().index('    raise ValueError("no good")') + 1
    assert error["frames"][-1] == {"cell": "cell In[3]", "line": line, "function": "broken",
                                   "code": 'raise ValueError("no good")'}
    assert frames.where(error).render("en") == f" ({error['where']})"
    assert frames.where(error).render("zh").startswith(f"（单元格 In[3] 第 {line} 行，broken 中：raise ValueError")
    assert frames.where({"where": "line 3, in f: x"}).render("zh") == " (line 3, in f: x)"  # a check's own text
    assert frames.where({}).render("zh") == ""


AT_IMPORT = '''
import torch

print("imported")
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NOISE = torch.randn(3)
EPS = torch.tensor(1e-6, device=DEVICE)
SHOWN = torch.ones(2, device=DEVICE)  # a demo on the GPU, never used by a function

def device():
    return DEVICE

def shifted(x):
    return x + EPS
'''


def test_imported_anew_decides_at_import_in_the_world_pretended_and_records_what_uses_it(monkeypatch, capsys):
    source = Source(chunks=[("work.py", AT_IMPORT)], filename="work.py", path=None, notebook=False)
    stdin = sys.stdin
    try:
        served, _ = _load_module(source)
        monkeypatch.setattr(process, "SERVING", [served, source, {}])
        state = torch.get_rng_state()
        with pretend_cuda(served) as seen:
            fresh = imported_anew(served, seen)
            at_import = list(seen.calls)
            fresh.shifted(torch.zeros(2))
            torch.ones(2) + 1  # touches nothing the import made
        with pretend_cuda(served, available=False) as without:
            plain = imported_anew(served, without)
    finally:
        sys.stdin = stdin
    assert served.device() == "cpu" and fresh.device() == "cuda" and plain.device() == "cpu"
    assert at_import == ["tensor(device=cuda)", "ones(device=cuda)"]
    assert seen.calls[2:] == ["add() with what your file put on cuda at import"]  # the unused demo counts for nothing
    assert sys.modules["submission"] is served and not without.calls
    assert torch.equal(torch.get_rng_state(), state)  # the import's draw left the generator as it was
    assert capsys.readouterr().out == "imported\n"  # printed by the served import only
    monkeypatch.setattr(process, "SERVING", [served, Source(chunks=[("work.py", "raise ValueError")],
                                                           filename="work.py", path=None, notebook=False), {}])
    with pretend_cuda(served) as seen:
        assert imported_anew(served, seen) is None


def test_pretend_cuda_records_a_cuda_generator_and_the_tensors_of_a_cuda_default_device():
    module = learner_module()
    with pretend_cuda(module) as seen:
        generator = torch.Generator(device="cuda")
        torch.set_default_device("cuda")
        x = torch.zeros(2) + torch.randn(2, generator=generator)
    assert isinstance(generator, torch.Generator) and x.device.type == "cpu"
    assert seen.calls == ["torch.Generator(device=cuda)", "set_default_device(cuda), then zeros()",
                          "set_default_device(cuda), then randn()"]
    assert torch.get_default_device().type == "cpu" and torch.zeros(1).device.type == "cpu"
    with pretend_cuda(module) as seen:
        torch.zeros(2)  # a default set in an earlier block is gone
    assert not seen.calls


def test_watching_autograd_sees_a_machine_however_a_backward_reaches_it():
    """A hand-written backward is watched for what differentiates, not for the names it calls: the engine run from a
    thread it starts, ATen's own backward kernel with or without its overload, next to the entry points it patches."""
    import threading
    import types

    from grader.checking.probe_kit import watching_autograd
    from grader.checking.routes import machine_derivatives

    module = types.ModuleType("learner")
    x, y = torch.randn(4, 1), torch.randn(4, 1)

    def in_a_thread():
        leaf = x.clone().requires_grad_()
        worker = threading.Thread(target=lambda: torch.autograd.Variable._execution_engine.run_backward(
            (((leaf - y) ** 2).mean(),), (torch.ones(()),), False, False, (leaf,), False, False))
        worker.start()
        worker.join()

    routes = {"thread": in_a_thread,
              "kernel": lambda: torch.ops.aten.mse_loss_backward(torch.ones(()), x, y, 1),
              "overload": lambda: torch.ops.aten.mse_loss_backward.default(torch.ones(()), x, y, 1),
              "by hand": lambda: 2 * (x - y) / x.shape[0]}
    seen = {}
    for name, route in routes.items():
        with watching_autograd(module, into := []):
            route()
        seen[name] = into
    assert seen == {"thread": ["torch.autograd.Variable._execution_engine.run_backward"],
                    "kernel": ["aten.mse_loss_backward"], "overload": ["aten.mse_loss_backward"], "by hand": []}
    # machine_derivatives counts any child process alive as a machine: this test process may hold the suite's
    # zygote (conftest.grade_here), so these run in a fork of it, which has no child, as a sandbox has none
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the fork
        ok = (machine_derivatives(routes["overload"])[1] == ["ATen's backward kernels"]
              and machine_derivatives(routes["by hand"], params=(x,), inputs=(y,))[1] == []
              and machine_derivatives(lambda: (x + 1e-4 - y) ** 2, params=(x,), inputs=(y,))[1]
              == ["finite differences"]
              and machine_derivatives(lambda: (x + 1e-20j - y) ** 2)[1] == ["complex-step differentiation"])
        os._exit(0 if ok else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
