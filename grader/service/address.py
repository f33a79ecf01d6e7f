"""Where the warm grading service listens, and how each end of a connection proves itself to the other.

The sockets lie in a folder only their owner can enter ($XDG_RUNTIME_DIR/torch-katas, else
~/.cache/torch-katas/run, both 0700), named per install (Python environment and grader), so that each install has a
service of its own. No end believes the other on its uid alone:
- the service writes a secret (random, 0600) into that folder before it listens, and removes it when it stops;
- a connection opens with a handshake (`handshake` on the client's side, `Door` on the service's and the
  front's): the client sends a nonce, the server answers with a proof of the secret over it and a nonce of its
  own, and the client's request carries its proof over that one. A socket someone else put in place cannot prove
  it (the client then grades in its own process, saying so); a client that cannot read the secret is refused;
- the server also requires its peer to be in its own user, PID and network namespaces (a sandbox is in none of
  them: isolation.py), besides its uid.

This is all a relayed `grade EXERCISE` imports (cli/entry.py) besides the standard library's os, socket and
json, and _blake2 for the proofs: no pathlib, hashlib (OpenSSL), hmac or typing, which together took a third of
the client's own time. client.py builds on it.

Runs in: the `grade` client, `grade watch`, `check()` in a kernel, the front and its forks, the service.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys
import zlib
from _blake2 import blake2b
from _operator import _compare_digest

from grader import framing
from grader.version import __version__

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # grader/, as course.exercises says it

NO_SERVER_ENV = "TORCH_KATAS_NO_SERVER"
DIR_ENV = "TORCH_KATAS_SERVER_DIR"  # where the socket lies (tests use their own)
SOCKET, PID_FILE, FRONT, SECRET = "grade.sock", "grade.pid", "front.sock", "secret"
HANDSHAKE_TIMEOUT = 10.0  # seconds a connection may take to prove itself (a legitimate one takes microseconds)
NAMESPACES = ("user", "pid", "net")


class ServiceError(Exception):
    """The service cannot be used (another uid, a folder others can enter, no answer): grade here instead."""


class Refused(ServiceError):
    """The other end did not prove itself: a client not ours, or a socket put in place of the service's."""


REFUSED: list[str] = []  # folders whose service did not prove itself to this process: not asked again

def wanted() -> bool:
    """Whether `grade` may start and use the service: not with TORCH_KATAS_NO_SERVER set, nor in CI, nor on the
    portable isolation backend (the service forks its front's commands and its judges, and believes a peer by its
    unix socket's credentials: Linux's; there, each command grades in its own process, its judges spawned)."""
    from grader.sandbox import backend

    off = ("", "0", "false", "no")
    return os.environ.get(NO_SERVER_ENV, "").lower() in off and os.environ.get("CI", "").lower() in off \
        and not backend.portable()


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
    """The name of this install's socket, pid file, front socket or secret (SOCKET, ...) in the folder."""
    return f"{install_key()}-{kind}"


# -- the secret -------------------------------------------------------------------------------------------

def write_secret(folder: str) -> bytes:
    """A new secret for the service starting, in the folder (0600, written whole before it is in place)."""
    secret = os.urandom(32)
    path = os.path.join(folder, file_name(SECRET))
    temporary = f"{path}.{os.getpid()}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, secret.hex().encode())
    finally:
        os.close(fd)
    os.replace(temporary, path)
    return secret


def read_secret(folder: str) -> bytes | None:
    """The running service's secret, None if there is none (or it is not a plain file of ours)."""
    try:
        fd = os.open(os.path.join(folder, file_name(SECRET)), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
            return None
        return bytes.fromhex(os.read(fd, 128).decode("ascii", "replace"))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def proof(secret: bytes, role: str, nonce: str) -> str:
    """What only a holder of `secret` can say about `nonce`, as `role` ("service" or "client")."""
    return blake2b(f"{role}\0{nonce}".encode(), key=secret, digest_size=32).hexdigest()


def _proven(secret: bytes, role: str, nonce: str, said) -> bool:
    expected = proof(secret, role, nonce).encode()
    return isinstance(said, str) and _compare_digest(expected, said.encode("utf-8", "replace"))


# -- the peer ------------------------------------------------------------------------------------------

def peer(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a unix socket (SO_PEERCRED; pid 0 if it is in a PID namespace
    this process cannot see)."""
    pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def peer_uid(sock: socket.socket) -> int:
    return peer(sock)[1]


def ours(sock: socket.socket) -> bool:
    """Whether the peer runs as our uid, in our user, PID and network namespaces (a sandbox is in none of them;
    where the peer's namespaces cannot be read, it is not ours)."""
    pid, uid = peer(sock)
    if uid != os.getuid() or pid <= 0:
        return False
    try:
        return all(os.readlink(f"/proc/{pid}/ns/{ns}") == os.readlink(f"/proc/self/ns/{ns}") for ns in NAMESPACES)
    except OSError:
        return False


# -- a connection, client side -------------------------------------------------------------------------

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


def handshake(sock: socket.socket, folder: str) -> tuple[framing.Connection, dict]:
    """Prove the server at the other end holds the service's secret, and sign what we send with ours: the
    connection, and the fields that make a request signed (`signed`). Refused for a server that cannot prove it,
    ServiceError where there is no secret to prove (no service started, or one stopping)."""
    secret = read_secret(folder)
    if secret is None:
        raise ServiceError("no secret in the service's folder: no service is running")
    conn = framing.Connection(sock)
    sock.settimeout(HANDSHAKE_TIMEOUT)
    nonce = os.urandom(16).hex()
    try:
        conn.send({"hello": nonce})
        answer, _ = conn.receive()
    except (OSError, EOFError, framing.FrameError) as exc:
        raise ServiceError(f"the grading service did not answer the handshake: {exc}") from None
    if not _proven(secret, "service", nonce, answer.get("proof")) or not isinstance(answer.get("nonce"), str):
        from grader.text import Text

        REFUSED.append(folder)  # said once: this process grades here from now on
        raise Refused(Text("the grading service in {folder} could not prove it is yours: grading here instead",
                           folder=folder))
    return conn, {"proof": proof(secret, "client", answer["nonce"])}


# -- a connection, server side -------------------------------------------------------------------------

class Door:
    """The server's side of the handshake, for the service and the front: who may ask, and the secret they prove."""

    def __init__(self, secret: bytes):
        self.secret = secret

    def greet(self, hello: dict) -> tuple[dict, str]:
        """The answer to a client's hello (our proof over its nonce, a nonce of ours), and the nonce its request
        must prove; FrameError for a hello that is not one."""
        nonce = hello.get("hello")
        if not isinstance(nonce, str) or len(nonce) > 128:
            raise framing.FrameError("no hello")
        ours_ = os.urandom(16).hex()
        return {"proof": proof(self.secret, "service", nonce), "nonce": ours_}, ours_

    def admits(self, request: dict, nonce: str) -> bool:
        """Whether a request proves the secret over our nonce."""
        return _proven(self.secret, "client", nonce, request.get("proof"))


def signed(message: dict) -> dict:
    """A request with what the service must have been built from: this version and install."""
    return {"version": __version__, "package": PACKAGE_DIR, "python": sys.prefix, **message}


def signed_here(request: dict) -> bool:
    """Whether `request` was `signed` by this version, checkout and environment."""
    return all(request.get(key) == value for key, value in signed({}).items())
