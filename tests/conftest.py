"""Shared helpers of the test suite: run the real `grade` CLI and read its JSON."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_grade(*args, cwd=ROOT, timeout=300, env=None):
    """Run `grade ARGS` as a learner would (a fresh process); return the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "grader.cli", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


def grade_json(*args, **kwargs) -> dict:
    """Run `grade ARGS --json`; stdout must be exactly one JSON object."""
    proc = run_grade(*args, "--json", **kwargs)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def root() -> Path:
    return ROOT
