# Attack: connects to a local TCP service (the port a test opened: PORT below is rewritten) and to a unix
# socket in /tmp, and sends what it finds to the network.
import socket

PORT = 0
SOCKET_PATH = ""
for connect in (lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2),
                lambda: socket.create_connection(("1.1.1.1", 80), timeout=2)):
    try:
        with connect() as conn:
            conn.sendall(b"reached from the sandbox\n")
    except OSError:
        pass
if SOCKET_PATH:
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(SOCKET_PATH)
            conn.sendall(b"reached from the sandbox\n")
    except OSError:
        pass


def predict(x, w, b):
    return w * x + b
