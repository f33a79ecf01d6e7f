"""Files the trusted side touches in a folder learner code could write: never a link followed, never a block.

The judge and the grading parent act with more rights than the sandbox (often as root, never under
Landlock), so a work dir is hostile ground: any name in it may be a symbolic link to a secret, a FIFO
that blocks whoever opens it, a huge file, or a folder whose modes forbid reading it. Reads go through
`read_regular` (no link followed, non-blocking, a regular file only, a bounded size); removal through
`remove_tree` (file descriptors only, so no link is followed, whatever modes the learner set).
"""

from __future__ import annotations

import errno
import os
import stat

NOFOLLOW_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NotRegular(OSError):
    """The name is a link, a FIFO, a device or a folder: not read."""


def read_fd(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from the start of the regular file open on `fd` (its offset is left alone)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise NotRegular(errno.EINVAL, "not a regular file")
    chunks, at = [], 0
    while at < limit:
        chunk = os.pread(fd, min(limit - at, 1 << 20), at)
        if not chunk:
            break
        chunks.append(chunk)
        at += len(chunk)
    return b"".join(chunks)


def read_regular(path: str, limit: int, dir_fd: int | None = None) -> bytes:
    """At most `limit` bytes of the regular file `path`; OSError (NotRegular, ELOOP) for anything else."""
    try:
        fd = os.open(path, NOFOLLOW_READ, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, f"{path} is a symbolic link") from None
        raise
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def _open_dir(name: str, dir_fd: int | None) -> int:
    """A folder opened without following a link; one the learner made unreadable is made ours first."""
    try:
        return os.open(name, _DIR, dir_fd=dir_fd)
    except PermissionError:
        path_fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.chmod(f"/proc/self/fd/{path_fd}", 0o700)  # the inode we hold, never a link's target
        finally:
            os.close(path_fd)
        return os.open(name, _DIR, dir_fd=dir_fd)


def remove_tree(path: str) -> None:
    """Remove `path` and everything in it, whatever the modes, links never followed; silent where it is gone.

    Iterative (a learner can nest folders deeper than any recursion limit) and relative to open folders
    (no path grows past PATH_MAX, no name is looked up twice)."""
    try:
        top = _open_dir(path, None)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    stack = [(top, None, iter(()))]  # (folder fd, its name in the folder below, entries left)
    try:
        os.fchmod(top, 0o700)
        stack[-1] = (top, None, iter(os.listdir(top)))
        while stack:
            fd, name, entries = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                os.close(fd)
                if stack:
                    try:
                        os.rmdir(name, dir_fd=stack[-1][0])
                    except OSError:
                        pass
                continue
            try:
                os.unlink(entry, dir_fd=fd)
                continue
            except IsADirectoryError:
                pass
            except OSError as exc:
                if exc.errno not in (errno.EISDIR, errno.EPERM):
                    continue
            try:
                child = _open_dir(entry, fd)
                os.fchmod(child, 0o700)
                stack.append((child, entry, iter(os.listdir(child))))
            except OSError:
                continue
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass
