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

# each flag where the platform has it (Windows has none of them: a link there is no file a user makes by chance)
NO_LINK = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW_READ = os.O_RDONLY | NO_LINK | getattr(os, "O_NONBLOCK", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NO_LINK


class NotRegular(OSError):
    """The name is a link, a FIFO, a device or a folder: not read."""


def read_fd(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from the start of the regular file open on `fd` (its offset is left alone)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise NotRegular(errno.EINVAL, "not a regular file")
    chunks, at = [], 0
    while at < limit:
        if hasattr(os, "pread"):
            chunk = os.pread(fd, min(limit - at, 1 << 20), at)
        else:  # pragma: no cover (Windows): the judge's own descriptor, read by it alone
            os.lseek(fd, at, os.SEEK_SET)
            chunk = os.read(fd, min(limit - at, 1 << 20))
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
        if not hasattr(os, "O_PATH"):  # macOS: the name itself, its link never followed
            os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
            return os.open(name, _DIR, dir_fd=dir_fd)
        path_fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.chmod(f"/proc/self/fd/{path_fd}", 0o700)  # the inode we hold, never a link's target
        finally:
            os.close(path_fd)
        return os.open(name, _DIR, dir_fd=dir_fd)


def remove_tree(path: str) -> None:
    """Remove `path` and everything in it, whatever the modes, links never followed; silent where it is gone.

    Iterative (a learner can nest folders deeper than any recursion limit), relative to one open folder at a
    time (no path grows past PATH_MAX, no descriptor limit is reached): down by name without following links,
    back up by `..`, checked to be the folder it came from. Where folders cannot be opened (Windows), shutil's."""
    if os.open not in os.supports_dir_fd:  # pragma: no cover (Windows)
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        fd = _open_dir(path, None)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    stack: list[tuple[str, list[str], tuple[int, int]]] = []  # (name in its parent, entries left, parent's identity)
    try:
        os.fchmod(fd, 0o700)
        entries = os.listdir(fd)
        while True:
            if not entries:
                if not stack:
                    break
                name, entries, parent = stack.pop()
                up = os.open("..", _DIR, dir_fd=fd)
                os.close(fd)
                fd = up
                here = os.fstat(fd)
                if (here.st_dev, here.st_ino) != parent:  # moved while we were below: stop, touch nothing more
                    return
                try:
                    os.rmdir(name, dir_fd=fd)
                except OSError:
                    pass
                continue
            entry = entries.pop()
            try:
                os.unlink(entry, dir_fd=fd)
                continue
            except OSError as exc:
                if exc.errno not in (errno.EISDIR, errno.EPERM):
                    continue
            try:
                child = _open_dir(entry, fd)
            except OSError:
                continue
            here = os.fstat(fd)
            os.close(fd)
            fd = child
            stack.append((entry, entries, (here.st_dev, here.st_ino)))
            os.fchmod(fd, 0o700)
            entries = os.listdir(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass
