# Attack: writes files into its working directory and tries to read the reference solution.
from pathlib import Path

Path("conftest.py").write_text("import pytest\n")
Path("planted_by_student.txt").write_text("hello")
try:
    import solutions.ex05_manual_backward as peek  # noqa: F401
    LEAKED = True
except ImportError:
    LEAKED = False


def predict(x, w, b):
    if LEAKED:
        return peek.predict(x, w, b)
    raise NotImplementedError
