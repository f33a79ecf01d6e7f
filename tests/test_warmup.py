"""The warm-up a zygote and a warm parent run before they fork (grader/sandbox/warmup.py), and the seeding of judges and
sandboxes (sandbox.seed_torch): they change nothing a grading could see."""

import json
import subprocess
import sys

import torch

from conftest import ROOT
from grader.sandbox.probes import seed_torch

PROBE = """
import json, os, sys
import torch
from grader.sandbox import warmup

def state():
    return {"rng": torch.get_rng_state().tolist(), "grad": torch.is_grad_enabled(),
            "threads": len(os.listdir("/proc/self/task")), "torch_threads": torch.get_num_threads()}

torch.set_num_threads(1)
report = {}
with torch.no_grad():
    before = state()
    warmup.run()
    report["first"] = [before == state(), sorted(warmup._done), "torch._dynamo" in sys.modules]
    import torch._dynamo  # noqa: F401 - as a preload does
    warmup.run()
    warmup.run()
    report["after_dynamo"] = [before == state(), sorted(warmup._done)]
print(json.dumps(report))
"""


def test_the_warm_up_leaves_the_random_state_grad_mode_and_threads_as_they_were_and_never_imports_dynamo():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["first"] == [True, ["modules"], False]  # the optimizers wait for torch._dynamo (seconds to import)
    assert report["after_dynamo"] == [True, ["modules", "optimizers"]]


def test_seeding_the_cpu_alone_draws_the_numbers_torch_manual_seed_draws():
    seed_torch(1234, gpu=False)
    ours = (torch.rand(5), torch.randn(3, 3), torch.randperm(10), torch.nn.Linear(4, 2).weight.detach())
    torch.manual_seed(1234)
    theirs = (torch.rand(5), torch.randn(3, 3), torch.randperm(10), torch.nn.Linear(4, 2).weight.detach())
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))
