"""`grade EXERCISE ...` run by the warm service's front, on the learner's own terminal (the `grade` command's entry).

Of a warm `grade ex05`, the client's own start (Python, click and the grader's modules) was about half. As Rails'
Spring does, the client here only hands what the command needs to the service's front, a small process the service
starts beside itself with the CLI imported and no torch: its arguments, working folder, environment and umask, and
its stdin, stdout and stderr (SCM_RIGHTS). The front forks; the fork runs the same command (grader.cli) with them:
it asks the service to grade as any client does (client.py: the judge forks from the service's clean state,
learner code runs in the sandbox, never in the front), writes straight to the learner's terminal, and sends the
exit status back. So a relayed `grade ex05` prints, writes and exits exactly as one run here.

Only a single grading is relayed (`cli.relayable`, decided by the front before it forks). Anything else (no service
running, --no-server, TORCH_KATAS_NO_SERVER or CI, another command, another version) and the command runs in this
process as before, which starts the service when there is none. This module and endpoint.py are all the client
imports, and it ends with os._exit once the front's fork has (it has nothing to tear down, and Python's finalization
took 17 ms). The front's socket lies beside the service's, in the same folder only its owner can enter, and both
ends check the other's uid.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

MAX_REQUEST = 1 << 20
REQUEST_TIMEOUT = 10.0  # seconds the front waits for a request it accepted (one client never holds it up for long)


def main() -> None:
    """The `grade` command: relayed to the service's front when one runs, else run here."""
    code = run(sys.argv)
    if code is None:
        from grader.cli import run as run_here

        run_here()
    else:  # nothing of ours to tear down: Python's own finalization took longer than the rest of this process
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run(argv: list[str]) -> int | None:
    """The exit status of `argv` run by the front; None if it was not (then run it here)."""
    from grader import endpoint

    if "--no-server" in argv or not endpoint.wanted():
        return None
    try:
        folder = endpoint.checked_folder(endpoint.folder_path())
        sock = endpoint.connect(os.path.join(folder, endpoint.file_name(endpoint.FRONT)))
    except (endpoint.ServiceError, OSError):
        return None  # none yet, or not one we may use: the command here says why, and starts one
    if sock is None:
        return None
    umask = os.umask(0)
    os.umask(umask)
    with sock:
        try:
            request = endpoint.signed({
                "op": "relay", "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask,
                "stdout": [getattr(sys.stdout, "encoding", None) or "utf-8",
                           getattr(sys.stdout, "errors", None) or "strict"],
            })
            socket.send_fds(sock, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
            lines = sock.makefile("rb")
            first = _answer(lines)
            if first is None or "pid" not in first:
                return None  # declined: nothing was printed
            return _exit_status(lines, int(first["pid"]))
        except OSError:  # a folder deleted under us, a closed stdin, a front gone before it forked
            return None


def _answer(lines) -> dict | None:
    try:
        answer = json.loads(lines.readline())
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def _exit_status(lines, pid: int) -> int:
    """Wait for the fork's exit status; Ctrl-C here interrupts the command there, as it would here."""
    while True:
        try:
            answer = _answer(lines)
        except KeyboardInterrupt:
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            continue
        if answer is None or not isinstance(answer.get("exit"), int):  # the fork died: never silently a success
            from grader.cli import default_lang, lang_in
            from grader.text import say

            print(say(lang_in(sys.argv) or default_lang(), "grade: the grading service ended before the command "
                      "did; run it again with `--no-server`."), file=sys.stderr)
            return 3
        return answer["exit"]


# -- the front ------------------------------------------------------------------------------------------

def front(listen_fd: int) -> None:
    """The front's loop (started by the service, which made the listening socket): for each client of our uid with
    one grading to run, fork and run it (`serve`). Dies with the service."""
    from grader import cli, client, endpoint, isolation  # noqa: F401 - the CLI, imported once: each fork starts warm

    isolation.die_with_parent()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = socket.socket(fileno=listen_fd)
    while True:
        conn, _ = listener.accept()
        fds: list[int] = []
        try:
            if endpoint.peer_uid(conn) != os.getuid():  # never another user's client
                continue
            request, fds = _request(conn)
            argv = request.get("argv") if request else None
            if request is None or not endpoint.signed_here(request) or len(fds) != 3 \
                    or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) \
                    or not cli.relayable(argv[1:]):
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
    except BaseException:  # noqa: BLE001 - whatever happened, the client hears and the fork ends
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - a closed terminal: nothing more to say on it
                pass
    try:
        conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
    finally:
        os._exit(0)


def _command() -> int:
    """Run the CLI as `grade` would; its exit status."""
    from grader.cli import run as run_here

    try:
        run_here()
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # python -m grader.relay FD: the front, started by the service
    front(int(sys.argv[1]))
