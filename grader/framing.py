"""Messages between the grader's own processes: one JSON object a line, read with bounds.

The client and the service, the client and the front, a judge and the zygote, a judge and its warm parent, a
cluster worker and its grading process all speak it. Whatever arrives may come from a process that was
attacked, or from one that is not ours: a line longer than its limit, bytes that are not JSON, JSON nested deep
enough to exhaust the parser's stack, anything but an object, all end as one `FrameError` for that one message
(the connection that sent it is dropped), never as an exception that stops the process reading.

Runs in: every process of the grader, both sides of each connection. No torch.
"""

from __future__ import annotations

import json
import os
import socket

MAX_LINE = 1 << 20  # bytes of one message: requests and answers are small (a result: a few KiB)


class FrameError(Exception):
    """What arrived is not one well-formed message."""


def encode(message: dict) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


def decode(line: bytes) -> dict:
    """One line as the object it holds; FrameError for anything else."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError, MemoryError) as exc:  # RecursionError: "[" * 200000
        raise FrameError(f"not a JSON line ({type(exc).__name__})") from None
    if not isinstance(value, dict):
        raise FrameError(f"a JSON {type(value).__name__}, not an object")
    return value


class Lines:
    """Lines as they arrive in chunks (a non-blocking socket, a pipe): `feed` returns the messages complete."""

    def __init__(self, limit: int = MAX_LINE):
        self.buffer, self.limit = b"", limit

    def feed(self, chunk: bytes) -> list[dict]:
        """The messages `chunk` completes, in order; FrameError for a line over the limit or not an object (the
        sender is not to be read further)."""
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        if len(self.buffer) > self.limit or any(len(line) > self.limit for line in lines):
            raise FrameError(f"a line longer than {self.limit} bytes")
        return [decode(line) for line in lines if line.strip()]


class Connection:
    """A socket carrying messages both ways, blocking (its timeout applies to each read); what arrives beyond one
    message is kept for the next."""

    def __init__(self, sock: socket.socket, limit: int = MAX_LINE):
        self.sock, self.lines, self.pending = sock, Lines(limit), list[dict]()

    def send(self, message: dict, fds: list[int] | None = None) -> None:
        if fds:
            socket.send_fds(self.sock, [encode(message)], fds)
        else:
            self.sock.sendall(encode(message))

    def receive(self, fds: int = 0) -> tuple[dict, list[int]]:
        """The next message, and up to `fds` descriptors sent with it (SCM_RIGHTS: the first message's); EOFError
        if the other end closed first, FrameError for a malformed message (every descriptor received is closed)."""
        passed: list[int] = []
        try:
            while not self.pending:
                if fds:
                    chunk, more, _, _ = socket.recv_fds(self.sock, 65536, max(1, fds - len(passed)))
                    passed += more
                else:
                    chunk = self.sock.recv(65536)
                if not chunk:
                    raise EOFError("the other end closed the connection")
                self.pending += self.lines.feed(chunk)
        except BaseException:
            for fd in passed:
                os.close(fd)
            raise
        if len(passed) > fds:  # more than asked for: none of them is believed
            for fd in passed:
                os.close(fd)
            raise FrameError(f"{len(passed)} descriptors where {fds} were expected")
        return self.pending.pop(0), passed

    def close(self) -> None:
        self.sock.close()
