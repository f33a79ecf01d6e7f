"""The one store of the learner's records (progress, katas): a JSON file in the workspace, changed only under an
exclusive lock on a lock file beside it (fcntl.flock; msvcrt.locking on Windows), read afresh under that lock and
replaced atomically (a temporary file in the same folder, fsynced, then os.replace). So gradings, `grade watch`,
check() in notebooks, katas, hints and the service's forks, however many at once, never lose each other's records,
and a writer killed at any point leaves the file as it was or as it became, never half of it.

A file that cannot be read (not JSON, not the shape its records have) is kept aside, renamed
<name>.corrupt-<time>, and said so on stderr: never read as empty and overwritten. Trusted side; never imports torch.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from grader.course.exercises import WORKSPACE_FILE
from grader.text import Text, locale_lang, verbatim

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:
    msvcrt = None  # type: ignore[assignment]

REPLACE_TRIES = 100  # Windows refuses to replace a file another process has open: try again a moment later


class Corrupt(ValueError):
    """Raised by a store's `check` for data that is not the store's records: the file is kept aside."""


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of the lock file `path` (released by the system too if this process dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        elif msvcrt is not None:  # pragma: no cover (Windows)
            while True:
                try:
                    lock.seek(0)
                    msvcrt.locking(lock.fileno(), msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
                    break
                except OSError:
                    continue
        else:  # pragma: no cover
            raise OSError("no file locking on this platform (neither fcntl nor msvcrt)")
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_UN)
            elif msvcrt is not None:  # pragma: no cover (Windows)
                lock.seek(0)
                msvcrt.locking(lock.fileno(), msvcrt.LK_UNLCK, 1)


class Store:
    """One JSON file of records. `empty()`: the records before the first; `check(data)`: the records as read (an
    older layout upgraded), raising Corrupt for data that is none (any other exception is the caller's)."""

    def __init__(self, path: Path, empty: Callable[[], dict], check: Callable[[object], dict] | None = None):
        self.path = Path(path)
        self.lock = self.path.with_name(self.path.name + ".lock")
        self.empty = empty
        self.check = check or _a_dict

    def read(self) -> dict:
        """The records now (without the lock: a replace is atomic, so a read sees a whole file)."""
        try:
            return self._parse(self.path.read_bytes())
        except FileNotFoundError:
            return self.empty()
        except Corrupt:
            with locked(self.lock):
                return self._read_locked()

    @contextlib.contextmanager
    def change(self) -> Iterator[dict]:
        """Yield the records, read afresh under the lock; write them back atomically when the block ends (not when
        it raises: then nothing changes)."""
        with locked(self.lock):
            for debris in self.path.parent.glob(f"{self.path.name}.*.tmp"):  # a killed writer's
                with contextlib.suppress(OSError):
                    debris.unlink()
            data = self._read_locked()
            yield data
            self._write(data)

    def _parse(self, raw: bytes) -> dict:
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise Corrupt() from None
        return self.check(data)

    def _read_locked(self) -> dict:
        try:
            return self._parse(self.path.read_bytes())
        except FileNotFoundError:
            return self.empty()
        except Corrupt:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{datetime.now(timezone.utc):%Y%m%d-%H%M%S-%f}")
            os.replace(self.path, aside)
            lang = _lang(self.path.parent)
            sys.stderr.write(Text("{path} could not be read: kept as {aside}; your records start afresh beside it.",
                                  path=verbatim(self.path), aside=verbatim(aside.name)).render(lang) + "\n")
            return self.empty()

    def _write(self, data: dict) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1, sort_keys=True, ensure_ascii=False)
                out.flush()
                os.fsync(out.fileno())
            for attempt in range(REPLACE_TRIES):
                try:
                    os.replace(tmp, self.path)
                    break
                except PermissionError:  # pragma: no cover (Windows: a reader has the file open)
                    if attempt == REPLACE_TRIES - 1:
                        raise
                    time.sleep(0.02)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _a_dict(data: object) -> dict:
    if not isinstance(data, dict):
        raise Corrupt()
    return data


def _lang(folder: Path) -> str:
    """The language of the command that reads the store (its `--lang`, as resolved), else of the workspace in
    `folder` (its torch-katas.toml's `lang`), else the locale's."""
    import click

    context = click.get_current_context(silent=True)
    chosen = context.params.get("lang") or context.find_root().params.get("lang") if context else None
    if chosen in ("en", "zh"):
        return chosen
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        lang = tomllib.loads((folder / WORKSPACE_FILE).read_text(encoding="utf-8")).get("lang")
    except (OSError, ValueError):
        lang = None
    return lang if isinstance(lang, str) and lang else locale_lang()
