# Attack: finds the warm grading service's and its front's sockets (the home folders from /etc/passwd, the
# XDG and runtime folders, the names guessed; TARGETS below, rewritten by a test, as a perfect guess), and tries
# to run a command through them, to read the service's secret, and to signal the service (PIDS); then through
# abstract sockets and a socket pair of its own. It prints what it reached: nothing may be there.
import glob
import json
import os
import socket

TARGETS = []
PIDS = []
SECRETS = []
reached = []
homes = set()
try:
    homes = {line.split(":")[5] for line in open("/etc/passwd") if line.count(":") >= 6}
except OSError:
    pass
candidates = set(TARGETS)
for home in homes | {os.path.expanduser("~")}:
    candidates |= set(glob.glob(os.path.join(home, ".cache", "torch-katas", "run", "*.sock")))
candidates |= set(glob.glob("/run/user/*/torch-katas/*.sock")) | set(glob.glob("/tmp/*/*.sock"))
request = {"op": "relay", "argv": ["grade", "ex05", "--report", "/tmp/reached-from-the-sandbox.html"],
           "env": {"BROWSER": "touch /tmp/reached-from-the-sandbox", "TORCH_KATAS_SERVER_DIR": "/tmp"}}
for path in sorted(candidates):
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        try:
            with socket.socket(socket.AF_UNIX, kind) as conn:
                conn.settimeout(2)
                conn.connect(path)
                conn.sendall(json.dumps(request).encode() + b"\n")
                reached.append(f"{path} ({kind})")
        except OSError:
            pass
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.sendto(b"{}\n", path)
        reached.append(f"{path} through a socket pair")
    except OSError:
        pass
for name in ("torch-katas", "torch-katas-service", "grade.sock"):
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect("\0" + name)
            reached.append(f"abstract {name}")
    except OSError:
        pass
for path in SECRETS + [p.replace("front.sock", "secret").replace("grade.sock", "secret") for p in candidates]:
    try:
        reached.append(f"read {path}: {open(path).read(8)}")
    except OSError:
        pass
for pid in PIDS:
    try:
        os.kill(pid, 0)
        reached.append(f"signalled {pid}")
    except OSError:
        pass
print("reached:", reached)


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    error = 2 * (predict(x, w, b) - y) / x.shape[0]
    return (error * x).sum().reshape(1), error.sum().reshape(1)
