"""The front of the warm service: a small process with the CLI imported and no torch, which runs a client's
`grade EXERCISE` in a fork of its own, on the client's terminal (entry.py hands it the command).

Runs in: the front, a child of the service (`python -m grader.cli.front FD FOLDER`), and its forks. Trusted: it
acts with the user's rights, so it is a door, opened only to the user's own `grade`: a client must be of its uid
and in its user, PID and network namespaces (a sandbox is in none of them), and must prove in the handshake that
it can read the service's secret, as the front proves it to the client (service/address.py). Each connection is
handled in a fork made as it is accepted, so a slow or malformed one holds up nothing else. The fork runs only a
single grading (`main.relayable`), with the front's own environment but for the variables a command reads
(`entry.passed`), and never starts a service: a command whose service is gone grades in the fork itself.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import sys

from grader import framing
from grader.cli import entry, main
from grader.sandbox import isolation
from grader.service import address, client


def front(listen_fd: int, folder: str) -> None:
    """The front's loop (started by the service, which made the listening socket and the secret): each connection
    of our own user is forked off at once (`serve`). Dies with the service."""
    isolation.die_with_parent()
    secret = address.read_secret(folder)
    if secret is None:
        return  # the service stopped as it started us
    door = address.Door(secret)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = socket.socket(fileno=listen_fd)
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        try:
            if address.ours(conn) and os.fork() == 0:  # pragma: no cover - runs in the fork
                listener.close()
                serve(conn, door)
        except OSError:
            pass
        finally:
            conn.close()


def serve(sock: socket.socket, door: address.Door) -> None:
    """In the front's fork: the handshake, the request, then become the client's command; send its exit status.
    Ends the process whatever happens."""
    code: int | None = 3
    started = False
    conn = framing.Connection(sock)
    fds: list[int] = []
    try:
        sock.settimeout(address.HANDSHAKE_TIMEOUT)
        answer, nonce = door.greet(conn.receive()[0])
        conn.send(answer)
        request, fds = conn.receive(fds=3)
        argv = request.get("argv")
        if not door.admits(request, nonce) or not address.signed_here(request) or len(fds) != 3 \
                or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) \
                or not main.relayable(argv[1:]):
            conn.send({"decline": True})
            os._exit(0)
        become(request, fds)
        sock.settimeout(None)
        conn.send({"pid": os.getpid()})
        started = True
        code = _command()
    except client.Restarting:  # nothing printed yet: the client runs the command itself
        code = None
    except BaseException:  # whatever happened, the client hears (if it can) and the fork ends
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # a closed terminal: nothing more to say on it
                pass
    try:
        if started:  # (a connection that never became a command hears nothing more)
            conn.send({"exit": code} if code is not None else {"rerun": True})
    finally:
        os._exit(0)


def become(request: dict, fds: list[int]) -> None:
    """This fork as the client's command: its terminal, folder, umask, the variables it may pass, its arguments."""
    for std, fd in enumerate(fds):
        os.dup2(fd, std)
    for fd in fds:
        os.close(fd)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    os.chdir(str(request["cwd"]))
    os.umask(int(request["umask"]) & 0o777)
    env = request.get("env") if isinstance(request.get("env"), dict) else {}
    for name in [k for k in os.environ if k in entry.PASSED or k.startswith(entry.PASSED_PREFIXES)]:
        del os.environ[name]  # the client's value, or its absence, wins
    os.environ.update(entry.passed(env))
    client.START = False  # a relayed command never starts a service: without one, it grades here
    encoding, errors = request["stdout"]
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
    sys.stdout, sys.stderr = (io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding=encoding,
                                               errors=errors if fd == 1 else "backslashreplace",
                                               line_buffering=True) for fd in (1, 2))
    sys.argv = [str(a) for a in request["argv"]]


def _command() -> int:
    """Run the CLI as `grade` would, named in its usage lines as the client was started; its exit status."""
    started = os.path.basename(sys.argv[0]) if sys.argv else ""
    try:
        main.run(prog_name="python -m grader" if started in ("__main__.py", "") else started)
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # python -m grader.cli.front FD FOLDER: the front, started by the service
    front(int(sys.argv[1]), sys.argv[2])
