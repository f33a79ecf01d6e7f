"""The front of the warm service: a small process with the CLI imported and no torch, which runs a client's
`grade EXERCISE` in a fork of its own, on the client's terminal (cli/entry.py hands it the command).

Runs in: the front, a child of the service (`python -m grader.cli.front FD`). Trusted: it acts with the user's
rights, so it is a door. It answers only its own user's `grade` client, runs only a single grading, and the
fork reads nothing of the client's but the command's arguments and the allowed variables.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

MAX_REQUEST = 1 << 20
REQUEST_TIMEOUT = 10.0  # seconds the front waits for a request it accepted (one client never holds it up for long)


def front(listen_fd: int) -> None:
    """The front's loop (started by the service, which made the listening socket): for each client of our uid with
    one grading to run, fork and run it (`serve`). Dies with the service."""
    from grader.cli import main  # the CLI, imported once: each fork starts warm
    from grader.service import address
    from grader.sandbox import isolation

    isolation.die_with_parent()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = socket.socket(fileno=listen_fd)
    while True:
        conn, _ = listener.accept()
        fds: list[int] = []
        try:
            if address.peer_uid(conn) != os.getuid():  # never another user's client
                continue
            request, fds = _request(conn)
            argv = request.get("argv") if request else None
            if request is None or not address.signed_here(request) or len(fds) != 3 \
                    or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) \
                    or not main.relayable(argv[1:]):
                conn.sendall(b'{"decline": true}\n')
                continue
            if os.fork() == 0:  # pragma: no cover - runs in the fork
                listener.close()
                serve(conn, fds, request)
        except OSError:
            pass
        finally:
            conn.close()
            for fd in fds:
                os.close(fd)


def _request(conn: socket.socket) -> tuple[dict | None, list[int]]:
    """The request line and the descriptors sent with it."""
    conn.settimeout(REQUEST_TIMEOUT)
    data, fds = b"", list[int]()
    while b"\n" not in data and len(data) < MAX_REQUEST:
        chunk, more, _, _ = socket.recv_fds(conn, 65536, 3)
        data, fds = data + chunk, fds + more
        if not chunk:
            break
    try:
        request = json.loads(data.split(b"\n")[0])
    except ValueError:
        return None, fds
    return (request if isinstance(request, dict) else None), fds


def serve(conn: socket.socket, fds: list[int], request: dict) -> None:
    """In the front's fork: become the client's command, send its exit status, end."""
    import io

    code = 3
    try:
        for std, fd in enumerate(fds):
            os.dup2(fd, std)
        for fd in fds:
            os.close(fd)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.umask(int(request["umask"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in request["env"].items()})
        encoding, errors = request["stdout"]
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
        sys.stdout, sys.stderr = (io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding=encoding,
                                                   errors=errors if fd == 1 else "backslashreplace",
                                                   line_buffering=True) for fd in (1, 2))
        sys.argv = list(request["argv"])
        conn.settimeout(None)
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        code = _command()
    except BaseException:  # whatever happened, the client hears and the fork ends
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # a closed terminal: nothing more to say on it
                pass
    try:
        conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
    finally:
        os._exit(0)


def _command() -> int:
    """Run the CLI as `grade` would; its exit status."""
    from grader.cli.main import run as run_here

    try:
        run_here()
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # python -m grader.cli.front FD: the front, started by the service
    front(int(sys.argv[1]))
