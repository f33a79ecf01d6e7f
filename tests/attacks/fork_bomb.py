# Attack: a fork bomb. While loading, forks children that wait, as many as it can (at most 1,000, so that
# a machine without the process limit survives the test), and prints how many it got before a fork failed.
import os
import signal
import time

children = []
for _ in range(1000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    children.append(pid)
print(f"forked: {len(children)}")
for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    raise NotImplementedError


def linear_grads(x, y, w, b):
    raise NotImplementedError
