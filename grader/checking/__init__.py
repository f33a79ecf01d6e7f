"""The check API: everything a check module may import (docs/authoring.md lists it), and nothing else of the grader.

    from grader.checking import check, fail, expect_close, probe     # declare, fail, compare, observe
    from grader.checking import learner_call, fail_raised, matches   # a learner's error captured, reported; close?
    from grader.checking import notebook_test                         # an nbgrader test cell (notebook_tests.py)
    from grader.gradients import expect_gradient                      # against autograd and finite differences
    from grader.devices import expect_cpu_only, expect_cpu_module     # a GPU, pretended
    from grader.checking import function_forward, function_backward  # a hand-written autograd.Function, observed

Runs in: the judge (checks, comparisons, messages) and, for what a `@probe` uses (`probe_kit`, `routes.engine_ran`),
the sandbox. The names are imported on first use, so that a sandbox importing `grader.checking.routes` imports no
pytest. `grader.gradients` and `grader.devices` are the public names of `checking.gradients` and `checking.devices`.
"""

from __future__ import annotations

import importlib

__all__ = [  # what a checks module may import: the stable surface (docs/authoring.md)
    "CheckFailed", "LearnerError", "Opaque", "Text", "check", "describe", "does_not_define", "error_text",
    "expect_close", "expect_number", "expect_tensor", "explain", "fail", "fail_raised", "is_number", "learner_call",
    "learner_error", "matches", "names", "patched", "pretend_cuda", "probe", "record_curve", "recording_calls",
    "relation", "relation_cause", "relation_key", "relation_text", "salted_hash", "tensor_info", "variant", "verbatim",
    "watching_autograd", "where",
    "engine_ran", "machine_derivatives", "joined", "notebook_test", "not_converted",
    "function_forward", "function_forwards", "function_values", "function_backward", "tensor_attributes",
    "EQUIVALENTS", "base_name", "forbidden_calls",
]
ELSEWHERE = {"notebook_test": "grader.checking.notebook_tests", "not_converted": "grader.checking.notebook_tests",
             **dict.fromkeys(("function_forward", "function_forwards", "function_values", "function_backward",
                              "tensor_attributes"),
                             "grader.checking.function_probes"),
             **dict.fromkeys(("EQUIVALENTS", "base_name", "forbidden_calls"), "grader.checking.equivalents")}


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(ELSEWHERE.get(name, "grader.checking.expect")), name)
    raise AttributeError(f"module 'grader.checking' has no attribute {name!r}")
