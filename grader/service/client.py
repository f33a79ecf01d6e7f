"""Talk to the warm grading service (grader/service/server.py): find it, check it, start it, ask it to grade.

This side imports no torch: `grade ex05` on a warm service is a small process that sends the file's path
over a unix socket and prints the result the service sends back. The socket lies in a folder only its
owner can enter ($XDG_RUNTIME_DIR/torch-katas, else ~/.cache/torch-katas/run, both 0700), and the peer's uid
is checked on every connection: a service of another uid is never used. Anything wrong with the service
(none, stale, crashed mid-grading, another version) means grading here, in this process, as without it.

The service is started on first use and the client waits for it (the first answer is cold, as without a
service); it is neither started nor used with --no-server, TORCH_KATAS_NO_SERVER=1, or in CI (CI set).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grader import framing
from grader.service import address
from grader.service.address import ServiceError, signed, wanted

if TYPE_CHECKING:
    from grader.course.exercises import Course, Exercise
    from grader.judge.result import Result

PACKAGE_DIR = Path(address.PACKAGE_DIR)

IDLE_ENV = "TORCH_KATAS_SERVER_IDLE"  # seconds without a request before the service stops
IDLE_DEFAULT = 15 * 60


def service_dir(create: bool = True) -> Path:
    """The per-user folder of the socket and pid file, made 0700; refused unless it is ours, 0700, not a link."""
    folder = Path(address.folder_path())
    if create:
        with contextlib.suppress(FileExistsError):
            folder.parent.mkdir(parents=True, exist_ok=True)
            folder.mkdir(mode=0o700)
    return Path(address.checked_folder(str(folder)))


def socket_path(folder: Path) -> Path:
    return folder / address.file_name(address.SOCKET)


def pid_path(folder: Path) -> Path:
    return folder / address.file_name(address.PID_FILE)


def secret_path(folder: Path) -> Path:
    """The running service's secret, which each end of a connection proves it can read (address.py)."""
    return folder / address.file_name(address.SECRET)


def front_path(folder: Path) -> Path:
    """The socket of the service's front, which runs a client's `grade EXERCISE` on its terminal (relay.py)."""
    return folder / address.file_name(address.FRONT)


# -- what the service was built from ------------------------------------------------------------------

def _files(folder: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The files under `folder` whose names end with one of `suffixes`, sorted (os.walk: pathlib's globs took 4 ms of
    every request)."""
    return sorted(os.path.join(root, name) for root, _, names in os.walk(folder) for name in names
                  if name.endswith(suffixes))


def contents_hash(course: Course | None = None, grader: bool = True) -> str:
    """A hash of the content of what a grading depends on: the grader's code and catalogues and torch's version
    (`grader`), and with `course`, its course.toml, exercises' metadata and checks. A change means a new service."""
    import importlib.util

    digest = hashlib.blake2b(digest_size=16)
    paths = []
    if grader:
        paths = _files(PACKAGE_DIR, (".py", ".toml", ".ini"))
        spec = importlib.util.find_spec("torch")
        if spec and spec.origin:
            paths.append(os.path.join(os.path.dirname(spec.origin), "version.py"))
    for each in [course, *course.borrowed()] if course is not None else []:
        paths += [str(each.root / "course.toml"), *sorted(map(str, each.exercises_dir.glob("*/exercise.toml"))),
                  *_files(each.checks_dir, (".py",))]
    for path in paths:
        digest.update(path.encode() + b"\0" + _content_hash(path))
    return digest.hexdigest()


_HASHED: dict[str, tuple[tuple, bytes]] = {}  # path -> (its stat when hashed, the hash of its content)


def _content_hash(path: str) -> bytes:
    """The hash of a file's content, read again only when its stat changed (the service asks at each request)."""
    try:
        info = os.stat(path)
        key = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
        if path in _HASHED and _HASHED[path][0] == key:
            return _HASHED[path][1]
        with open(path, "rb") as f:
            _HASHED[path] = key, hashlib.blake2b(f.read(), digest_size=16).digest()
        return _HASHED[path][1]
    except OSError:
        return b"missing"


def course_ref(course: Course) -> dict:
    """How the service finds the same course again."""
    return {"root": str(course.root), "spec": course.spec}


# -- one connection -------------------------------------------------------------------------------------

def connect(folder: Path, path: Path | None = None) -> socket.socket | None:
    """A connection to the service of this install (or to the socket `path` of its folder), None if none answers;
    ServiceError for another uid's."""
    return address.connect(str(path or socket_path(folder)))


def exchange(sock: socket.socket, folder: Path, message: dict, timeout: float | None = None,
             until_closed=False) -> dict | None:
    """The handshake (address.py), one signed request, its one-line answer (and with `until_closed`, wait for the
    service to close the connection: a stopped service closes it as it exits); None if the service closed
    without answering. Refused (a ServiceError) where the other end is not the service it claims to be."""
    with sock:
        conn, proof = address.handshake(sock, str(folder))
        sock.settimeout(timeout)
        try:
            conn.send(signed({**message, **proof}))
            answer, _ = conn.receive()
            while until_closed and sock.recv(4096):
                pass
        except (OSError, EOFError, framing.FrameError):  # reset, timed out, closed, garbled
            return None
    return answer


def ask(folder: Path, message: dict, timeout: float | None = None, until_closed=False) -> dict | None:
    """One request to the service; None if none answers (or none is running: no secret to prove)."""
    sock = connect(folder)
    if sock is None:
        return None
    try:
        return exchange(sock, folder, message, timeout, until_closed)
    except address.Refused:
        raise
    except ServiceError:
        return None


# -- lifecycle ------------------------------------------------------------------------------------------

@contextlib.contextmanager
def starting(folder: Path):
    """Only one client starts the service at a time (a lock on the folder itself: no lock file left). The Linux
    backend's alone (address.wanted)."""
    import fcntl

    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


START = True  # False in a fork of the front: a relayed command never starts a service (cli/front.py)


class Restarting(BaseException):
    """In a fork of the front: the service restarts (the grader, torch or the course changed), so the client runs
    the command itself, which starts a fresh one. (A BaseException: no handler of the command's may keep it.)"""


def start(folder: Path, replace: bool = False) -> bool:
    """Start the service unless one answers (`replace`: or one answers but cannot be used); wait until it listens.
    True if one answers now."""
    import subprocess

    with starting(folder):
        if not replace and ask(folder, {"op": "status"}) is not None:
            return True
        with contextlib.suppress(FileNotFoundError):
            socket_path(folder).unlink()  # stale: nothing answers on it (a crashed service)
        read_fd, write_fd = os.pipe()
        try:
            idle = os.environ.get(IDLE_ENV) or str(IDLE_DEFAULT)
            proc = subprocess.Popen(
                [sys.executable, "-m", "grader.service.server", "--dir", str(folder), "--idle", idle,
                 "--ready-fd", str(write_fd)],
                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, cwd="/")
            os.close(write_fd)
            write_fd = -1
            proc.wait()  # it forks the service and exits at once
            ready = os.read(read_fd, 16)  # "ok" once listening; nothing if it died
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
        return ready.startswith(b"ok")


def status(folder: Path) -> dict | None:
    return ask(folder, {"op": "status"})


def stop(folder: Path) -> bool:
    """Stop the service (its gradings in flight too) and wait until it has exited; True if one was running.
    One that does not answer but whose pid file names a live `grader.service.server` of ours is sent SIGTERM."""
    pid = _pid_of_server(pid_path(folder))
    answer = ask(folder, {"op": "stop"}, until_closed=True)  # answered after its cleanup, closed as it exits
    if answer is None and pid:
        os.kill(pid, signal.SIGTERM)
    if pid:
        _wait_until_gone(pid)
    for leftover in (socket_path(folder), pid_path(folder), front_path(folder), secret_path(folder)):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
    return answer is not None or bool(pid)


def exited(pid: int) -> bool:
    """The process has exited: gone, or a zombie its parent (init, for the service) has yet to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _wait_until_gone(pid: int, limit: float = 30.0) -> None:
    """Until `pid` has exited (its connection closes before its memory is unmapped); SIGKILL after `limit` s."""
    import time

    end = time.monotonic() + limit
    while not exited(pid):
        if time.monotonic() >= end:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.02)


def _pid_of_server(path: Path) -> int | None:
    try:
        pid = int(path.read_text())
        proc = Path(f"/proc/{pid}")
        if proc.stat().st_uid == os.getuid() and b"grader.service.server" in (proc / "cmdline").read_bytes():
            return pid
    except (OSError, ValueError):
        pass
    return None


# -- grading through it -----------------------------------------------------------------------------------

def served(exercise: Exercise, path: Path, options: dict) -> Result | None:
    """The result of grading `path` as `exercise` by the service (started if need be), as `judge.grade`
    gives it (its texts in the language asked for); None if the service cannot give one (then grade here)."""
    if not wanted() or address.REFUSED:  # (a service that did not prove itself was said once, and is not asked)
        return None
    from grader.judge.result import Result
    from grader.text import message_of, say

    lang = options.get("lang") or "en"
    try:
        folder = service_dir()
        request = {"op": "grade", "cwd": os.getcwd(), "course": course_ref(exercise.course), "exercise": exercise.name,
                   "path": str(path), "options": options}
        limit = max(60.0, (options.get("time_limit") or exercise.time_limit) * 20) + 120
        for _ in range(2):  # once more after a restart (a change of the grader, torch or the course)
            sock = connect(folder)
            if sock is None:
                if not START or not start(folder) or (sock := connect(folder)) is None:
                    return None
            try:
                answer = exchange(sock, folder, request, limit)
            except address.Refused:
                raise
            except ServiceError:  # a socket left behind, a service stopping: start a fresh one, once
                answer = {"restart": "no secret"} if START and start(folder, replace=True) else None
            if answer is None:  # it crashed mid-grading, or was stopped: never a grade
                return None
            if "result" in answer:
                try:
                    result = Result.from_json(answer["result"])
                except (KeyError, TypeError, ValueError):
                    return None
                result.lang = lang
                return result
            if not answer.get("restart"):
                return None
            if not START:
                raise Restarting
            # it has closed its socket and stops once idle: the next turn starts a fresh one
    except (ServiceError, OSError) as exc:
        print(say(lang, "grade: {message}", message=message_of(exc)), file=sys.stderr)
    return None
