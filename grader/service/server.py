"""The warm grading service behind `grade`, `grade watch` and `check()`: one per user and install.

It imports torch, pytest and the grader once, then grades each request as `grade batch` grades a
submission: the file is loaded here (a trusted parse), and a judge is forked per grading (judge/pool.py, the
same judge and OS sandbox, so the same result); it never runs learner code itself, and each grading forks from
the same clean state. Several gradings may be in flight: two clients at once are both answered. Once nobody
waits, it imports the rest of what exercises use (torch._dynamo, every exercise's checks).

It listens on a unix socket in a folder only its owner can enter, and believes no peer on its uid alone: a
connection must come from a process in its own user, PID and network namespaces and prove, in a handshake, that
it can read the secret the service wrote in that folder (address.py). Whatever a connection sends, it is read
with bounds (framing.py): a malformed, huge, deep, slow or unproven request closes that connection and nothing
else. Beside it, its front (cli/front.py) runs a client's `grade EXERCISE` on the client's terminal, and asks
this service to grade as any client does. A proven request from another version or install, or a change of the
grader or torch (a content hash, checked per request), closes its socket: the client starts a fresh service.
What it keeps warm (a checks module, the pytest prepared for it) is keyed by the file it came from, so two courses
with an exercise of the same name, or a course and its release, are each graded with their own checks.
It stops after `--idle` seconds without a request, or on `grade server stop`, leaving no socket, secret, pid file
or process behind.

    python -m grader.service.server --dir FOLDER --idle SECONDS [--ready-fd FD]   (started by service/client.py)

Runs in: the service, a process of its own parented by init. Trusted; a door, so it opens to no one unproven.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from grader import framing
from grader.course.exercises import CourseError, UnknownExercise, load_course
from grader.sandbox.source import SubmissionError, load_source
from grader.service import address, client
from grader.version import __version__

if TYPE_CHECKING:
    from grader.judge.grading import SpareJudge  # imported with torch, once the service runs
    from grader.judge.pool import JudgePool

OPTIONS = ("seed", "lang", "device", "time_limit", "memory", "languages", "variant")  # those of judge.grade
QUIET = 0.3  # seconds without a grading before warming up the rest (so a first request never waits on it)
SPARE_AFTER = 0.3  # seconds without a grading, once warm, before a spare judge is forked for the next one
MAX_ARRIVING = 64  # connections proving themselves at once: more are closed as they come


@dataclass(eq=False)
class Arriving:
    """A connection that has not made its request yet: the bytes so far, the nonce its request must prove."""

    sock: socket.socket
    since: float = field(default_factory=time.monotonic)
    lines: framing.Lines = field(default_factory=framing.Lines)
    nonce: str | None = None  # set once it said hello and got our proof


class Service:
    """The socket, the connections whose request is arriving, and the gradings in flight."""

    def __init__(self, folder: Path, idle: float):
        self.folder, self.idle = folder, idle
        self.path, self.pid_file = client.socket_path(folder), client.pid_path(folder)
        self.secret_file = client.secret_path(folder)
        self.door = address.Door(address.write_secret(str(folder)))
        self.listener: socket.socket | None = None
        self.inode: int | None = None
        self.front: subprocess.Popen | None = None  # cli/front.py
        self.front_inode: int | None = None
        self.arriving: dict[socket.socket, Arriving] = {}
        self.pool: JudgePool | None = None  # the gradings in flight: each answered on its connection
        self.base = client.contents_hash()  # the grader's code and torch, as imported
        self.courses: dict[str, str] = {}  # course root -> its contents hash when first graded
        self.cold: list = []  # courses whose exercises are not all imported yet
        self.warmed = False
        self.spared = 0  # gradings judged by a spare judge
        self.spare: SpareJudge | None = None  # forked ahead for the next grading, while nothing runs
        self.stop_request: socket.socket | None = None
        self.started, self.last, self.graded = time.time(), time.monotonic(), 0

    @property
    def running(self) -> int:
        return len(self.pool) if self.pool is not None else 0

    def listen(self) -> None:
        """Our socket in place, then the pid file, then the front's socket and process."""
        from grader.judge.pool import JudgePool

        self.pool = JudgePool()
        self.listener, self.inode = self.bound(self.path)
        self.pid_file.write_text(str(os.getpid()))
        self.listener.setblocking(False)
        self.start_front()

    def start_front(self) -> None:
        """The front (cli/front.py): a small process with the CLI imported, on a socket of its own beside ours, that
        runs a client's `grade EXERCISE` on its terminal. Without it, clients run the command themselves."""
        path = client.front_path(self.folder)
        try:
            sock, self.front_inode = self.bound(path)
        except OSError:
            return
        with sock:
            try:
                self.front = subprocess.Popen([sys.executable, "-m", "grader.cli.front", str(sock.fileno()),
                                               str(self.folder)],
                                              pass_fds=[sock.fileno()], stdin=subprocess.DEVNULL,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
            except OSError:  # no front: nobody listens on its socket, so it goes
                path.unlink()

    def bound(self, path: Path) -> tuple[socket.socket, int]:
        """A fresh socket listening at `path`, moved into place atomically (over a stale one); its inode."""
        temporary = self.folder / f".{os.getpid()}.{path.name}"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(temporary))
            sock.listen(64)
            os.replace(temporary, path)
            return sock, os.stat(path).st_ino
        except OSError:
            sock.close()
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise

    def close(self) -> None:
        """Take no more requests: the socket goes (if it is still ours), the secret with it; gradings in flight
        finish."""
        if self.listener is None:
            return
        self.listener.close()
        self.listener = None
        if self.spare is not None:
            self.spare.discard()
            self.spare = None
        for path, inode in ((self.path, self.inode), (client.front_path(self.folder), self.front_inode)):
            with contextlib.suppress(OSError):
                if os.stat(path).st_ino == inode:
                    path.unlink()
        with contextlib.suppress(OSError):
            if address.read_secret(str(self.folder)) == self.door.secret:
                self.secret_file.unlink()
        if self.front is not None:  # a command it runs asks us (or, once we are gone, a new service) to grade
            self.front.kill()
            self.front.wait()
            self.front = None

    def cleanup(self) -> None:
        """Nothing left: no socket, no judge, no pid file."""
        self.close()
        for arriving in self.arriving.values():
            arriving.sock.close()
        if self.pool is not None:
            for conn in self.pool.running.values():
                cast(socket.socket, conn).close()
            self.pool.stop()
        with contextlib.suppress(OSError):
            if self.pid_file.read_text() == str(os.getpid()):
                self.pid_file.unlink()

    def serve(self) -> None:
        assert self.pool is not None
        while self.listener is not None or self.running:
            now = time.monotonic()
            waits = [a.since + address.HANDSHAKE_TIMEOUT - now for a in self.arriving.values()]
            if not self.running:
                waits.append(self.last + self.next_task()[0] - now)
            readable = [self.listener] if self.listener is not None else []
            ready, done = self.pool.wait(others=[*readable, *self.arriving], timeout=max(0.0, min(waits, default=60)))
            for sock in ready:
                if sock is self.listener:
                    self.accept()
                else:
                    self.receive(sock)
            for conn, result in done:
                self.finish(conn, result)
            self.drop_slow()
            if self.stop_request is not None:
                return
            if not self.running:  # (a request arriving takes microseconds: it never holds the service up)
                after, task = self.next_task()
                if time.monotonic() < self.last + after:
                    continue
                if task == "stop":
                    return
                if task == "warm up":
                    self.warm_up()
                else:
                    from grader.judge.grading import SpareJudge

                    self.spare = SpareJudge()

    def next_task(self) -> tuple[float, str]:
        """What to do next while no grading runs, and how many seconds after the last grading: warm up, fork a
        spare judge, or stop."""
        if not self.warmed:
            return QUIET, "warm up"
        if self.spare is None and self.listener is not None and SPARE_AFTER < self.idle:
            return SPARE_AFTER, "spare"
        return self.idle, "stop"

    # -- a connection, from its first byte to its request ------------------------------------------------

    def accept(self) -> None:
        if self.listener is None:
            return
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        if len(self.arriving) >= MAX_ARRIVING or not address.ours(conn):  # another user, a sandbox, a flood
            conn.close()
            return
        conn.setblocking(False)
        self.arriving[conn] = Arriving(conn)

    def receive(self, conn: socket.socket) -> None:
        """What a connection sent: its hello (answered with our proof), then its request (handled once proven).
        Anything else, or a connection that closes, drops that connection alone."""
        arriving = self.arriving[conn]
        try:
            chunk = conn.recv(65536)
            if not chunk:
                raise EOFError
            for message in arriving.lines.feed(chunk):
                if arriving.nonce is None:
                    answer, arriving.nonce = self.door.greet(message)
                    conn.sendall(framing.encode(answer))
                    continue
                del self.arriving[conn]
                conn.setblocking(True)
                if not self.door.admits(message, arriving.nonce):
                    conn.close()
                    return
                try:
                    self.handle(conn, message)
                except Exception as exc:  # one request's failure never stops the service
                    reply(conn, {"error": f"{type(exc).__name__}: {exc}"})
                return
        except (OSError, EOFError, framing.FrameError):
            self.arriving.pop(conn, None)
            conn.close()

    def drop_slow(self) -> None:
        """Close the connections that did not make their request in time (a legitimate client takes microseconds)."""
        late = time.monotonic() - address.HANDSHAKE_TIMEOUT
        for conn in [c for c, a in self.arriving.items() if a.since < late]:
            del self.arriving[conn]
            conn.close()

    def handle(self, conn: socket.socket, request: dict) -> None:
        """A proven request: from another version or install, a restart; else its operation."""
        if not address.signed_here(request):
            self.close()
            return reply(conn, {"restart": "a service of another version or install"})
        op = request.get("op")
        if op == "status":
            reply(conn, self.status())
        elif op == "stop":
            self.stop_request = conn
            self.close()
        elif op == "grade":
            self.grade(conn, request)
        else:
            reply(conn, {"error": f"unknown request {op!r}"})

    def status(self) -> dict:
        return {"pid": os.getpid(), "version": __version__, "since": self.started, "graded": self.graded,
                "running": self.running, "idle_stop_s": self.idle, "memory_mib": resident_mib(),
                "socket": str(self.path), "warm": self.warmed, "front": self.front.pid if self.front else None,
                "spare": self.spare.pid if self.spare else None, "spared": self.spared}

    # -- grading ---------------------------------------------------------------------------------------

    def grade(self, conn: socket.socket, request: dict) -> None:
        """Fork a judge for the request's file, as `grade batch` does; answer when it is done."""
        from grader.judge.grading import prewarm

        assert self.pool is not None
        self.last = time.monotonic()  # only gradings keep the service up (not `grade server status`)
        try:
            ref = request["course"]
            course = load_course(Path(ref["root"]), ref["spec"])
            exercise = course.find(request["exercise"], request.get("assignment"))
            now = client.contents_hash(course, grader=False)
            if client.contents_hash() != self.base or self.courses.setdefault(ref["root"], now) != now:
                self.close()
                return reply(conn, {"restart": "the grader, torch or the course changed"})
            os.chdir(request["cwd"])  # a relative path reads, and is reported, as the client gave it
            source = load_source(Path(request["path"]))
            options = {k: v for k, v in request.get("options", {}).items() if k in OPTIONS}
        except (KeyError, TypeError, OSError, CourseError, UnknownExercise, SubmissionError) as exc:
            return reply(conn, {"error": str(exc)})  # the client grades it itself, and says why
        if all(c.root != course.root for c in self.cold):
            self.cold.append(course)
            self.warmed = False
        with contextlib.suppress(Exception):  # a check that does not import: its judge reports it, as without us
            prewarm([exercise])  # its checks (this course's own, whatever else has its name) and preloads: once
        spare, self.spare = self.spare, None
        grading = self.pool.start(conn, exercise, source, spare=spare, **options)
        self.spared += spare is not None and grading.pid == spare.pid

    def finish(self, conn, result) -> None:
        reply(conn, {"result": result.to_json()})  # its texts in the language asked for
        self.graded += 1
        self.last = time.monotonic()

    def warm_up(self) -> None:
        """Import what the exercises import lazily (torch._dynamo, the checks of each course graded), while nobody
        waits, so that no later grading pays for it. A course's broken check is left for its grading to report."""
        from grader.judge.grading import prewarm

        import torch._dynamo  # noqa: F401 - the first optimizer imports it (about a second)

        prewarm()
        for course in self.cold:
            for exercise in course.exercises():
                with contextlib.suppress(Exception):
                    prewarm([exercise])
        self.cold.clear()
        self.warmed = True


def reply(conn: socket.socket, answer: dict) -> None:
    with conn, contextlib.suppress(OSError):  # a client gone (Ctrl-C) misses its answer, nothing more
        conn.settimeout(30)
        conn.sendall(framing.encode(answer))


def resident_mib() -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description="The warm grading service (started by `grade`).")
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--idle", type=float, default=client.IDLE_DEFAULT)
    parser.add_argument("--ready-fd", type=int)
    args = parser.parse_args()
    if os.fork():  # the starting client waits for this process only; the service lives on, parented by init
        os._exit(0)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    from grader.sandbox import zygote

    zygote.shared()  # the sandboxes' clean parent: its torch import runs beside ours
    import grader.judge.pool  # noqa: F401 - torch, pytest, the grader: the one slow import

    service = Service(args.dir, args.idle)
    try:
        service.listen()
        if args.ready_fd is not None:
            os.write(args.ready_fd, b"ok\n")
            os.close(args.ready_fd)
        service.serve()
    finally:
        service.cleanup()
    if service.stop_request is not None:  # answered after the cleanup; the connection closes as the process ends
        with contextlib.suppress(OSError):
            service.stop_request.setblocking(True)
            service.stop_request.sendall(framing.encode({"stopped": True}))
        os._exit(0)


if __name__ == "__main__":
    main()
