"""The naive baseline of bench_batch.py: pytest in one process with the student's module imported
into it (as nbgrader-style graders do). Never used for grading."""

import importlib.util
import os

import torch


def load():
    spec = importlib.util.spec_from_file_location("student", os.environ["SUBMISSION"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_submission():
    student = load()
    if os.environ["EXERCISE"] == "ex05":
        x, y = torch.randn(8, 1), torch.randn(8, 1)
        w, b = torch.randn(1, requires_grad=True), torch.randn(1, requires_grad=True)
        ((w * x + b - y) ** 2).mean().backward()
        dw, db = student.linear_grads(x, y, w.detach(), b.detach())
        assert torch.allclose(dw, w.grad) and torch.allclose(db, b.grad)
    else:
        x = torch.randn(64, 1) * 5
        y = 2.5 * x + 1.3
        w, b, losses = student.train(x, y, 200)
        assert losses[-1] < losses[0] and abs(float(w) - 2.5) < 0.1
