"""The probe registry: the check modules' functions that run inside a sandbox (`probe`), by name, and the seeding of
torch that a judge and its sandbox do alike.

Runs in: the judge, which imports the check modules (their `@probe` fills PROBES, by which a probe is named and
shipped: probe_shipping.py), and the sandbox, which runs the probes by name (process.py). Trusted code on both
sides of the line; in a sandbox, learner code may replace anything here, which process.py watches for (`tampered`).
Imports nothing of the sandbox's main loop, nothing Linux-only.
"""

from __future__ import annotations

import types

import torch

PROBES: dict[str, types.FunctionType] = {}


def probe(fn):
    """Mark a check-module function as a probe: trusted code run inside the sandbox.

    A probe receives the learner's module first, then the plain-data arguments the judge sent,
    and returns plain data. It is how checks observe behaviour (count zero_grad calls, record a
    loss curve) without the judge ever importing learner code.
    """
    PROBES[f"{fn.__module__}.{fn.__name__}"] = fn
    fn.probe_name = f"{fn.__module__}.{fn.__name__}"
    return fn


def seed_torch(seed: int, gpu: bool) -> None:
    """Seed torch: the CPU's generator, and the GPU's where the process may use one. torch.manual_seed seeds every
    device torch knows of, and for each one not initialised yet records the caller's stack to seed it later (about
    3 ms from a judge's stack): a process that cannot reach a GPU seeds the CPU's alone, the same numbers."""
    if gpu:
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(seed)
