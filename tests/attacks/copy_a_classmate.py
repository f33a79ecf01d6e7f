# Attack: finds the batch's submissions folder in the grading processes' command lines (/proc/<pid>/cmdline)
# and runs a classmate's ex05 file as its own.
import glob
import os

found = {}
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if b"batch" not in args:
        continue
    folder = args[args.index(b"batch") + 1].decode()
    for path in glob.glob(os.path.join(folder, "*", "ex05*.py")):
        if "copy_a_classmate" in path:
            continue
        try:
            exec(open(path).read(), found)
            break
        except Exception:  # noqa: BLE001
            pass


def predict(x, w, b):
    return found["predict"](x, w, b)


def mse_loss(y_pred, y):
    return found["mse_loss"](y_pred, y)


def linear_grads(x, y, w, b):
    return found["linear_grads"](x, y, w, b)
