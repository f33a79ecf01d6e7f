"""Find what each student submitted: one folder or one .zip per student in a submissions folder,
files matched to exercises by the exercise id in their name (ex05*.py, ex05*.ipynb).

Everything odd is reported, not fatal: two files for one exercise, a file matching nothing,
an empty student, a corrupt or oversized zip.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.exercises import Exercise

MAX_ZIP_BYTES = 50 << 20
IGNORED = re.compile(r"(^|/)(__MACOSX|\.ipynb_checkpoints|__pycache__|\.[^/]*)(/|$)")
EXERCISE_ID = re.compile(r"(?i)(?:^|[^a-z0-9])ex(\d\d)(?:[^0-9]|$)")


@dataclass
class Job:
    """One file to grade as one exercise for one student."""

    student: str
    exercise: Exercise
    path: Path
    sha256: str


@dataclass
class Collection:
    jobs: list[Job] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)  # {"student", "exercise"?, "message"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extract(archive: Path, into: Path) -> None:
    """Unpack a student's zip safely: no paths outside `into`, no more than MAX_ZIP_BYTES."""
    with zipfile.ZipFile(archive) as zf:
        members = [m for m in zf.infolist() if not m.is_dir()]
        if sum(m.file_size for m in members) > MAX_ZIP_BYTES:
            raise zipfile.BadZipFile(f"more than {MAX_ZIP_BYTES >> 20} MiB unpacked")
        for m in members:
            target = (into / m.filename).resolve()
            if into.resolve() not in target.parents:
                continue  # an absolute path or ../ escape: never written
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(m))


def _student_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not IGNORED.search(p.relative_to(folder).as_posix()))


def collect(submissions: Path, exercises: list[Exercise], unpack_dir: Path) -> Collection:
    """Match every student's files to `exercises`; zips are unpacked into `unpack_dir`."""
    by_number = {ex.number: ex for ex in exercises}
    found = Collection()
    for entry in sorted(submissions.iterdir()):
        if IGNORED.search(entry.name):
            continue
        if entry.is_dir():
            student, folder = entry.name, entry
        elif entry.suffix.lower() == ".zip":
            student, folder = entry.stem, unpack_dir / entry.stem
            try:
                _extract(entry, folder)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                found.problems.append({"student": student, "message": f"{entry.name} is not a readable zip: {exc}"})
                continue
        else:
            found.problems.append({"student": entry.stem, "message": f"{entry.name} is neither a student folder nor a .zip"})
            continue
        files = _student_files(folder)
        if not files:
            found.problems.append({"student": student, "message": "no files submitted"})
            continue
        candidates: dict[int, list[Path]] = {}
        for path in files:
            match = EXERCISE_ID.search(path.name)
            if path.suffix not in (".py", ".ipynb") or not match:
                found.problems.append({"student": student, "message": f"{path.relative_to(folder)} matches no exercise: ignored"})
                continue
            if int(match.group(1)) in by_number:
                candidates.setdefault(int(match.group(1)), []).append(path)
        for number, paths in sorted(candidates.items()):
            ex = by_number[number]
            if len(paths) > 1:
                names = ", ".join(str(p.relative_to(folder)) for p in paths)
                found.problems.append({"student": student, "exercise": ex.id,
                                       "message": f"two or more files for {ex.id} ({names}): keep one, none was graded"})
                continue
            found.jobs.append(Job(student, ex, paths[0], sha256(paths[0])))
    return found
