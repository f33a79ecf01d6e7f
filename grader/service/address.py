"""Where the warm grading service listens, and a connection to it with the peer's uid checked.

This is all a relayed `grade EXERCISE` imports (relay.py) besides the standard library's os, socket and json: no
pathlib, no hashlib, no typing, which together took a third of the client's own time. client.py builds on it.
The sockets lie in a folder only their owner can enter ($XDG_RUNTIME_DIR/torch-katas, else
~/.cache/torch-katas/run, both 0700), named per install (Python environment and grader), so that each install has a
service of its own.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys
import zlib

from grader.version import __version__

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # grader/, as course.exercises says it

NO_SERVER_ENV = "TORCH_KATAS_NO_SERVER"
DIR_ENV = "TORCH_KATAS_SERVER_DIR"  # where the socket lies (tests use their own)
SOCKET, PID_FILE, FRONT = "grade.sock", "grade.pid", "front.sock"


class ServiceError(Exception):
    """The service cannot be used (another uid, a folder others can enter, no answer): grade here instead."""


def wanted() -> bool:
    """Whether `grade` may start and use the service: not with TORCH_KATAS_NO_SERVER set, nor in CI."""
    off = ("", "0", "false", "no")
    return os.environ.get(NO_SERVER_ENV, "").lower() in off and os.environ.get("CI", "").lower() in off


def folder_path() -> str:
    """The per-user folder of the sockets and pid file (not made, not checked: `checked_folder`)."""
    if os.environ.get(DIR_ENV):
        return os.environ[DIR_ENV]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "torch-katas")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "torch-katas", "run")


def checked_folder(folder: str) -> str:
    """`folder`, refused (ServiceError) unless it is ours, 0700 and not a link."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        from grader.text import Text, verbatim

        raise ServiceError(Text("no folder for the grading service: {why}", why=verbatim(str(exc)))) from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        from grader.text import Text

        raise ServiceError(Text("{folder} is not a folder only you can enter: the grading service is not used",
                                folder=folder))
    return folder


def install_key() -> str:
    """This install (Python environment and grader): each has a service of its own."""
    return f"{zlib.crc32(f'{sys.prefix}{chr(0)}{PACKAGE_DIR}'.encode()):08x}"


def file_name(kind: str) -> str:
    """The name of this install's socket, pid file or front socket (SOCKET, PID_FILE, FRONT) in the folder."""
    return f"{install_key()}-{kind}"


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a unix socket (SO_PEERCRED)."""
    _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid


def connect(path: str) -> socket.socket | None:
    """A connection to the socket at `path`, None if none answers; ServiceError for another uid's."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    if peer_uid(sock) != os.getuid():
        sock.close()
        from grader.text import Text

        raise ServiceError(Text("the grading service at {socket} runs as another user: not used", socket=path))
    return sock


def signed(message: dict) -> dict:
    """A request with what the service must have been built from: this version and install."""
    return {"version": __version__, "package": PACKAGE_DIR, "python": sys.prefix, **message}


def signed_here(request: dict) -> bool:
    """Whether `request` was `signed` by this version, checkout and environment."""
    return all(request.get(key) == value for key, value in signed({}).items())
