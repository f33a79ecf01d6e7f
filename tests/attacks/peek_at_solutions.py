# Attack: reads the reference solution (through the grader package's own paths, and by searching near
# sys.path), or failing that the hidden checks' source, and runs the solution as its own code.
import glob
import os
import sys

found = {}
try:
    from grader.course import exercises

    exec(open(exercises.SOLUTIONS_DIR / "ex05_manual_backward.py").read(), found)
except Exception:  # noqa: BLE001
    pass
if "linear_grads" not in found:
    for entry in sys.path + [os.getcwd(), "/"]:
        for pattern in ("solutions/ex05*.py", "*/solutions/ex05*.py", "*/*/solutions/ex05*.py",
                        "grader/_bundle/solutions/ex05*.py"):
            for path in glob.glob(os.path.join(entry or ".", pattern)):
                try:
                    exec(open(path).read(), found)
                except Exception:  # noqa: BLE001
                    pass
CHECKS = ""
try:
    from grader.course import exercises

    CHECKS = open(exercises.CHECKS_DIR / "ex05_manual_backward.py").read()
except Exception:  # noqa: BLE001
    pass
print("read the checks:", bool(CHECKS))


def predict(x, w, b):
    return found["predict"](x, w, b)


def mse_loss(y_pred, y):
    return found["mse_loss"](y_pred, y)


def linear_grads(x, y, w, b):
    return found["linear_grads"](x, y, w, b)
