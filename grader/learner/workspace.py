"""The learner's workspace: the folder whose exercises/ holds the files they edit, the plain JSON file
there that remembers progress (best scores, hints revealed; changed through grader/learner/store.py only), and its
settings in torch-katas.toml (the
course it follows, the learner's language).

Found from the current directory upwards; without one, the exercises shipped with the grader
(a clone of the repository is itself a workspace). Never imports torch.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.course import stub_text
from grader.course.exercises import WORKSPACE_FILE, Exercise, all_exercises, current_course
from grader.judge.result import Result
from grader.learner.store import Corrupt, Store
from grader.text import LANGUAGES, locale_lang, say

PROGRESS_FILE = ".torch-katas-progress.json"
BACKUP_DIR = ".torch-katas-backup"


def find_workspace(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` that holds an exercises/ folder of stubs."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        exercises = folder / "exercises"
        if exercises.is_dir() and any((p / f"{p.name}.py").is_file() for p in exercises.iterdir()):
            return folder
    return None


def workspace_root(start: Path | None = None) -> Path:
    """The workspace in use: the one found from `start`, else the folder holding the course's exercises."""
    return find_workspace(start) or current_course().exercises_dir.parent


def learner_file(exercise: Exercise, start: Path | None = None) -> Path:
    """The file `grade exNN` grades: the workspace's copy of the stub."""
    return workspace_root(start) / "exercises" / exercise.name / f"{exercise.name}.py"


def own_work(exercise: Exercise, path: Path) -> Path | None:
    """The workspace whose progress a grading of `path` as `exercise` counts in: the workspace's own
    file of the exercise, or a notebook inside a workspace. None for a file from elsewhere."""
    path = Path(path).resolve()
    if path == learner_file(exercise).resolve():
        return workspace_root()
    if path.suffix == ".ipynb":
        return find_workspace(path.parent)
    return None


def current_exercise(start: Path | None = None) -> Exercise | None:
    """The exercise the learner is on: the first one not finished (None when every one is)."""
    return Progress(workspace_root(start)).first_unfinished(learner_exercises(start))


def workspace_tracks(start: Path | None = None) -> list[str]:
    """The tracks the workspace follows (`grade init --track`); empty: every one."""
    tracks = settings(find_workspace(start)).get("tracks")
    return [t for t in tracks if isinstance(t, str)] if isinstance(tracks, list) else []


def learner_exercises(start: Path | None = None) -> list[Exercise]:
    """The exercises of the learner's path, in teaching order: those of the workspace's tracks, else every one
    (`grade next`, `list`, `watch`, `today`). Any exercise can still be named (`grade fs03`)."""
    every = all_exercises()
    course = current_course()
    chosen = [t for t in workspace_tracks(start) if t in {track.name for track in course.tracks}]
    if not chosen:
        return every
    names = {name for track in course.tracks if track.name in chosen for name in track.exercises}
    return [ex for ex in every if ex.name in names]


def edited(exercise: Exercise, start: Path | None = None) -> bool:
    """Whether the workspace's file of the exercise differs from the stub in every language (reset would replace
    work)."""
    path = learner_file(exercise, start)
    return path.exists() and path.read_text(encoding="utf-8", errors="replace") not in {
        stub_text.stub(exercise, lang) for lang in LANGUAGES}


def settings(root: Path | None) -> dict:
    """The workspace's torch-katas.toml: `course` (another course than the built-in one), `lang`."""
    try:
        return tomllib.loads((root / WORKSPACE_FILE).read_text(encoding="utf-8")) if root else {}
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def write_settings(root: Path, **changes: str | list[str]) -> Path:
    """Change the workspace's settings (torch-katas.toml), keeping the others."""
    values = {**settings(root), **changes}
    lines = ["# this workspace's settings: the course it follows (grade --course overrides it), the learner's "
             "language (grade lang; --lang overrides it), the tracks it follows (grade init --track)"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in values.items() if value]
    path = root / WORKSPACE_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def workspace_lang(start: Path | None = None) -> str | None:
    """The workspace's language (`grade init` records it, `grade lang` changes it), if it has one."""
    lang = settings(find_workspace(start)).get("lang")
    return lang if isinstance(lang, str) else None


def default_lang() -> str:
    """The workspace's language (`grade lang`), else the locale's."""
    return workspace_lang() or locale_lang()


def init_workspace(target: Path, lang: str, tracks: list[str] | None = None) -> list[Path]:
    """Create a fresh workspace in `target` that speaks `lang`, with every stub (in `lang`) and statement of the
    current course, or of its `tracks` only, and a torch-katas.toml saying so; return the stubs written. With `tracks`,
    a workspace that follows some tracks already gets these added (their stubs in its own language, never over a
    file)."""
    course = current_course()
    chosen = [course.track(t).name for t in tracks or []]  # CourseError for a track the course lacks
    names = {name for t in course.tracks if t.name in chosen for name in t.exercises}
    following = [t for t in settings(target).get("tracks", []) if isinstance(t, str)]
    if following and settings(target).get("lang") in LANGUAGES:
        lang = settings(target)["lang"]
    if (target / "exercises").exists() and not (chosen and following):
        raise FileExistsError(f"{target / 'exercises'} already exists")
    written = []
    for ex in all_exercises():
        folder = target / "exercises" / ex.name
        if (chosen and ex.name not in names) or folder.exists():
            continue
        folder.mkdir(parents=True)
        for name in ("README.md", "README.zh.md"):
            if (ex.folder / name).exists():
                shutil.copy2(ex.folder / name, folder / name)
        (folder / ex.stub.name).write_text(stub_text.stub(ex, lang), encoding="utf-8")
        written.append(folder / ex.stub.name)
    if following:
        write_settings(target, tracks=following + [t for t in chosen if t not in following])
        return written
    (target / ".gitignore").write_text(f"{BACKUP_DIR}/\n__pycache__/\n*.lock\n*.corrupt-*\n")  # the store's files
    write_settings(target, course="" if course.built_in else course.spec, lang=lang, tracks=chosen)
    return written


def reset_exercise(exercise: Exercise, start: Path | None = None, lang: str = "en") -> Path | None:
    """Restore the stub (in `lang`) in the workspace; return the backup of the learner's file (None if it was
    untouched)."""
    path = learner_file(exercise, start)
    backup = None
    if edited(exercise, start):
        folder = workspace_root(start) / BACKUP_DIR
        folder.mkdir(exist_ok=True)
        backup = folder / f"{exercise.name}.{time.strftime('%Y%m%d-%H%M%S')}.py"
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(stub_text.stub(exercise, lang), encoding="utf-8")
    return backup


def restub(root: Path, lang: str) -> list[Path]:
    """Write the untouched stubs of the workspace in `root` again in `lang` (after `grade lang`); return them."""
    written = []
    for ex in all_exercises():
        path = learner_file(ex, root)
        if path.is_file() and not edited(ex, root):
            text = stub_text.stub(ex, lang)
            if path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
                written.append(path)
    return written


class Progress:
    """Per exercise: best score, whether it is done, attempts, hints revealed. A plain JSON file; an exercise whose
    kata (grader/learner/kata.py) has passed is done too."""

    def __init__(self, root: Path):
        self.store = Store(root / PROGRESS_FILE, dict, entries)
        self.path = self.store.path
        self.data = self.store.read()
        self._kata_passed: set[str] | None = None

    def entry(self, exercise: Exercise) -> dict:
        return self.data.get(exercise.id, {})

    def state(self, exercise: Exercise) -> str:
        """'done' (a full score here, or a kata of it passed), 'public checks pass' (in a release: the rest is
        graded by the teacher), 'no public check' (in a release: nothing to check here, never done), 'in progress'
        or 'not started'."""
        entry = self.entry(exercise)
        if entry.get("done") or exercise.id in self.kata_passed():
            return "done"
        if exercise.hidden_points and not exercise.points:
            return "no public check"
        if entry.get("public_pass"):
            return "public checks pass"
        return "in progress" if entry.get("attempts") else "not started"

    def finished(self, exercise: Exercise) -> bool:
        """Whether `grade next` and `grade watch` move past it: done, its public checks pass, or it has no public
        check and was graded once (which said so)."""
        state = self.state(exercise)
        return state in ("done", "public checks pass") or (state == "no public check"
                                                            and bool(self.entry(exercise).get("attempts")))

    def kata_passed(self) -> set[str]:
        """The exercises with a passed kata (none where the kata state cannot be read: its commands say why)."""
        if self._kata_passed is None:
            from grader.learner import kata

            try:
                katas = kata.State(self.path.parent).load()["katas"]
            except kata.KataError:
                katas = {}
            self._kata_passed = {ex_id for ex_id, k in katas.items() if kata.passes(k)}
        return self._kata_passed

    def record(self, exercise: Exercise, result: Result) -> None:
        """Count a grading, in the file as it is now (other processes record too)."""
        with self.store.change() as data:
            entry = data.setdefault(exercise.id, {})
            entry["attempts"] = entry.get("attempts", 0) + 1
            entry["best"] = max(entry.get("best", 0.0), result.score)
            entry["max"] = result.max_score
            entry["done"] = entry.get("done", False) or result.done
            if result.full and result.hidden_points:
                entry["public_pass"] = True
            entry["last"] = time.strftime("%Y-%m-%d %H:%M:%S")
        self.data = data

    def next_hint(self, exercise: Exercise) -> int:
        """Reveal one more hint; return how many are revealed now."""
        with self.store.change() as data:
            entry = data.setdefault(exercise.id, {})
            entry["hints"] = min(entry.get("hints", 0) + 1, len(exercise.hints))
        self.data = data
        return entry["hints"]

    def first_unfinished(self, exercises: list[Exercise]) -> Exercise | None:
        return next((ex for ex in exercises if not self.finished(ex)), None)

    def all_finished_line(self, exercises: list[Exercise], lang: str) -> str:
        """What `grade next` and `grade watch` say once every exercise is finished: done only if every one is."""
        if all(self.state(ex) == "done" for ex in exercises):
            return say(lang, "Every exercise is done. Well done!")
        return say(lang, "Every exercise's public checks pass (or it has none); the hidden checks (points: {points}) "
                         "are graded by your teacher.", points=f"{sum(ex.hidden_points for ex in exercises):g}")


def entries(data: object) -> dict:
    """The progress file's records: {exercise id: {...}}; anything else is no progress file (kept aside)."""
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise Corrupt()
    return data
