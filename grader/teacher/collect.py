"""Find what each student submitted, files matched to exercises by the exercise's id or name in their name
(ex05*.py, my_ex05.ipynb, hw1_backprop.py).

The submissions are one folder or one .zip per student, or an LMS download as it comes:
- Canvas "Download Submissions": one flat folder of `name[_LATE]_userid_submissionid_original.py` files
  (a resubmission adds `-1` before the extension); the student is the Canvas user id.
- Moodle "Download all submissions": `Full Name_1234567_assignsubmission_file_` folders, or flat
  `Full Name_1234567_assignsubmission_file_original.py` files; the student is the participant id.
- Either of these as the single download-all zip (`collect_from` unpacks it first).
Canvas's `_LATE` in its names is kept with each job (grader/teacher/late.py decides); no file's time is read.

Submissions are data: a symbolic link is never followed, read or unpacked, anywhere. Everything odd is
reported, not fatal: two files for one exercise, a file matching nothing, an empty student, a corrupt
or oversized zip, a link.
"""

from __future__ import annotations

import hashlib
import os
import time
import re
import stat
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.course.exercises import Exercise, Named, current_course
from grader.judge.job import Job
from grader.text import Text, verbatim

MAX_ZIP_BYTES = 50 << 20  # one student's zip
MAX_DOWNLOAD_BYTES = 2 << 30  # a whole class's download-all zip
MAX_ZIP_FILES = 1000  # files in one student's zip: far more than any homework, far fewer than a zip bomb of names
MAX_DOWNLOAD_FILES = 200_000  # files in a whole class's download-all zip
IGNORED = re.compile(r"(^|/)(__MACOSX|\.ipynb_checkpoints|__pycache__|\.[^/]*)(/|$)")
CANVAS_FILE = re.compile(r"^(?P<name>[^_]+)(?P<late>_LATE)?_(?P<id>\d+)_\d+_(?P<original>.+)$")
MOODLE_ENTRY = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_assign(?:submission|feedback)_[a-z]+_(?P<original>.*)$")


@dataclass
class Collection:
    jobs: list[Job] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)  # {"student", "exercise"?, "message": a Text, "look"?}
    students: dict[str, dict] = field(default_factory=dict)  # every student seen: key -> {"id", "name"} (from the LMS)


def sha256(path: Path) -> str:
    """The file's hash; of nothing for what is no regular file (never followed, never blocks: the grading
    says what is wrong with it)."""
    from grader.sandbox.safefs import read_regular
    from grader.sandbox.source import MAX_SOURCE

    try:
        return hashlib.sha256(read_regular(str(path), MAX_SOURCE + 1)).hexdigest()
    except OSError:
        return hashlib.sha256(b"").hexdigest()


def natural_key(text: str) -> list:
    """Sort key that puts s01_2 before s01_10."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


def is_link(info: zipfile.ZipInfo) -> bool:
    """A zip member stored as a symbolic link (unix mode bits in the external attributes)."""
    return stat.S_ISLNK(info.external_attr >> 16)


def extract(archive: Path, into: Path, limit: int = MAX_ZIP_BYTES, most: int = MAX_ZIP_FILES) -> list[str]:
    """Unpack a zip safely: no paths outside `into`, no more than `limit` bytes or `most` files, no symbolic links.

    Returns the names of the links left out.
    """
    links = []
    with zipfile.ZipFile(archive) as zf:
        members = [m for m in zf.infolist() if not m.is_dir()]
        if sum(m.file_size for m in members) > limit:
            raise zipfile.BadZipFile(f"more than {limit >> 20} MiB unpacked")
        if len(members) > most:
            raise zipfile.BadZipFile(f"more than {most} files")
        for m in members:
            if is_link(m):
                links.append(m.filename)
                continue
            target = (into / m.filename).resolve()
            if into.resolve() not in target.parents:
                continue  # an absolute path or ../ escape: never written
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(m))
            stamp = time.mktime((*m.date_time, 0, 0, -1))  # the zip's time, zoneless: for --pick latest's order only
            os.utime(target, (stamp, stamp))
    return links


def lms_identity(name: str) -> tuple[str, str, str, str] | None:
    """(student key, LMS id, display name, original file name) for a Canvas or Moodle download entry."""
    for pattern in (MOODLE_ENTRY, CANVAS_FILE):
        match = pattern.match(name)
        if match:
            key = f"{match['name']}_{match['id']}"
            return key, match["id"], match["name"], match["original"]
    return None


@dataclass
class _Student:
    """What one student handed in: (file, name shown and matched) pairs, and the notes on it."""

    files: list[tuple[Path, str]] = field(default_factory=list)
    notes: list[Text] = field(default_factory=list)
    lms_late: bool | None = None  # Canvas's marker, `_LATE` in the names of its download, or not; None: no word


def readable(name: str) -> str:
    """A name from the file system as text: bytes that are not UTF-8 shown as escapes (`\\xff`)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _walk(folder: Path, into: _Student, unpack_dir: Path | None = None) -> None:
    """Add every regular file under `folder`, the files of a .zip in it too (unpacked into `unpack_dir`, one
    level deep); a symbolic link (file or folder) is reported, never followed."""
    for top, dirs, files in os.walk(folder):
        base = Path(top)
        for name in sorted(dirs + files):
            path = base / name
            relative = readable(path.relative_to(folder).as_posix())
            if IGNORED.search(relative):
                continue
            if path.is_symlink():
                into.notes.append(Text("{path} is a symbolic link: not graded", "{path} 是一个符号链接：不评分",
                                       path=relative))
            elif name in files and not path.is_file():
                into.notes.append(Text("{path} is not a regular file: not graded", "{path} 不是普通文件：不评分",
                                       path=relative))
            elif name in files and unpack_dir is not None and path.suffix.lower() == ".zip":
                _add_zip(path, relative, unpack_dir, into)
            elif name in files:
                into.files.append((path, relative))
        dirs[:] = [d for d in dirs if not (base / d).is_symlink() and not IGNORED.search(d)]


def _add_zip(archive: Path, shown: str, unpack_dir: Path, into: _Student) -> None:
    unpack_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=unpack_dir))
    try:
        if archive.is_symlink() or not archive.is_file():
            raise OSError("not a regular file")
        links = extract(archive, folder)
    except Exception as exc:  # zipfile raises many kinds (zlib.error, NotImplementedError...)
        into.notes.append(Text("{path} is not a readable zip: {error}", "{path} 不是可读的 zip：{error}", path=shown,
                               error=verbatim(str(exc)[:120] or type(exc).__name__)))
        return
    into.notes += [Text("{link} in {path} is a symbolic link: not graded", "{path} 中的 {link} 是一个符号链接：不评分",
                        link=link, path=shown) for link in links]
    _walk(folder, into)


def _gather(submissions: Path, unpack_dir: Path) -> tuple[dict[str, tuple[_Student, tuple[str, str]]], list[dict]]:
    """Each student's files and notes with (LMS id, display name), keyed by student; and the problems of
    entries that are no student (a stray file beside the students' folders)."""
    students: dict[str, tuple[_Student, tuple[str, str]]] = {}
    stray = []
    for entry in sorted(submissions.iterdir(), key=lambda p: natural_key(p.name)):
        if IGNORED.search(entry.name):
            continue
        shown = readable(entry.name)
        lms = lms_identity(shown)
        is_zip = entry.suffix.lower() == ".zip"
        if lms:
            key, identity, original = lms[0], (lms[1], lms[2]), lms[3]
        elif entry.is_dir() or is_zip or entry.is_symlink():
            key, identity, original = Path(shown).stem if is_zip else shown, ("", ""), ""
        else:
            neither = Text("{name} is neither a student folder nor a .zip", "{name} 既不是学生文件夹也不是 .zip",
                           name=shown)
            stray.append({"student": Path(shown).stem, "message": neither})
            continue
        student = students.setdefault(key, (_Student(), identity))[0]
        canvas = CANVAS_FILE.match(entry.name)
        if canvas:  # the LMS's word, in its own names; the files' times are the student's, never read
            student.lms_late = bool(student.lms_late or canvas["late"])
        try:
            if entry.is_symlink():
                student.notes.append(Text("{path} is a symbolic link: not graded", "{path} 是一个符号链接：不评分",
                                          path=shown))
            elif entry.is_dir():
                _walk(entry, student, unpack_dir / "zips")
            elif is_zip:
                _add_zip(entry, original or shown, unpack_dir / "zips", student)
            else:
                student.files.append((entry, original))
        except RecursionError:
            student.notes.append(Text("{path} is nested too deeply to be read: not graded",
                                      "{path} 嵌套太深，无法读取：不评分", path=shown))
        except OSError as exc:  # a folder the grader cannot read, a name too long...
            student.notes.append(Text("{path} could not be read ({error}): not graded",
                                      "{path} 无法读取（{error}）：不评分",
                                      path=shown, error=verbatim(exc.strerror or exc)))
    return students, stray


def match_exercise(filename: str, exercises: Sequence[Exercise | Named]) -> Exercise | Named | None:
    """The exercise whose id or name stands in `filename` as a word of its own (`ex05`, `HW1_backprop`);
    where several do, the longest match (`hw1_backprop_extra` before `hw1`)."""
    stem = Path(filename).stem.lower()
    best = None
    for ex in exercises:
        for key in {ex.id.lower(), ex.name.lower()}:
            named = re.search(rf"(?:^|[^a-z0-9]){re.escape(key)}(?:[^a-z0-9]|$)", stem)
            if named and (best is None or len(key) > best[0]):
                best = (len(key), ex)
    return best[1] if best else None


Picker = Callable[[str, Exercise, list[tuple[Path, str]]], "tuple[Path, str] | None"]


def collect(submissions: Path, exercises: list[Exercise], unpack_dir: Path, pick: Picker | None = None) -> Collection:
    """Match every student's files to `exercises`; zips are unpacked into `unpack_dir`. A file named for
    another exercise of the course is left out silently. Where a student has two files for one exercise,
    `pick(student, exercise, files)` may choose one; without a choice it is a problem that needs a look."""
    students, stray = _gather(submissions, unpack_dir)
    chosen = {ex.name: ex for ex in exercises}
    known: list[Exercise | Named] = [*exercises, *(e for e in current_course().entries() if e.name not in chosen)]
    found = Collection(problems=stray)
    for student, (given, (lms_id, name)) in students.items():
        found.students[student] = {"id": lms_id, "name": name} if lms_id else {}
        found.problems += [{"student": student, "message": note, "look": True} for note in given.notes]
        if not given.files and not given.notes:
            found.problems.append({"student": student, "message": Text("no files submitted", "没有提交任何文件")})
        candidates: dict[str, list[tuple[Path, str]]] = {}
        for path, label in given.files:
            ex = match_exercise(Path(label).name, known) if path.suffix in (".py", ".ipynb") else None
            if ex is None:
                found.problems.append({"student": student, "message": f"{label} matches no exercise: ignored",
                                       "look": True})
            elif ex.name in chosen:
                candidates.setdefault(ex.name, []).append((path, label))
        for name, files in sorted(candidates.items()):
            ex = chosen[name]
            if len(files) > 1:
                chosen_file = pick(student, ex, files) if pick else None
                if chosen_file is None:
                    names = ", ".join(label for _, label in files)
                    found.problems.append({"student": student, "exercise": ex.id, "look": True, "files": [
                        label for _, label in files], "message": Text(
                        "two or more files for {ex} ({names}): none was graded; choose one (grade batch --pick "
                        "latest, or file = ... in review.toml)",
                        "{ex} 有两个或更多文件（{names}）：都没有评分；请选一个（grade batch --pick latest，或在 "
                        "review.toml 中写 file = ...）", ex=ex.id, names=names)})
                    continue
                found.problems.append({"student": student, "exercise": ex.id, "message": Text(
                    "two or more files for {ex}: graded {file} as chosen", "{ex} 有两个或更多文件：按选择评了 {file}",
                    ex=ex.id, file=chosen_file[1])})
                files = [chosen_file]
            said = {} if given.lms_late is None else {"lms_late": given.lms_late}
            found.jobs.append(Job(student, ex, files[0][0], sha256(files[0][0]), said))
    return found


def collect_from(submissions: Path, exercises: list[Exercise], unpack_dir: Path,
                 pick: Picker | None = None) -> Collection:
    """`collect` for a submissions folder, or for one download-all zip (unpacked first)."""
    if submissions.is_file() and submissions.suffix.lower() == ".zip":
        root = unpack_dir / "download"
        root.mkdir(parents=True)
        try:
            links = extract(submissions, root, limit=MAX_DOWNLOAD_BYTES, most=MAX_DOWNLOAD_FILES)
        except zipfile.BadZipFile:
            raise
        except Exception as exc:  # zlib.error, NotImplementedError...: one kind for the caller
            raise zipfile.BadZipFile(f"{submissions.name}: {str(exc)[:120] or type(exc).__name__}") from None
        found = collect(root, exercises, unpack_dir, pick)
        found.problems += [{"student": Path(link).parts[0], "message": f"{link} in {submissions.name} is a symbolic "
                            "link: not graded"} for link in links]
        return found
    return collect(submissions, exercises, unpack_dir, pick)
