"""Find exercises and read their metadata (exercise.toml). Never imports torch."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKS_DIR = PACKAGE_DIR / "checks"


def _bundle_dir(name: str) -> Path:
    """The exercises/ or solutions/ folder: inside the wheel, or beside the package in a clone."""
    bundled = PACKAGE_DIR / "_bundle" / name
    return bundled if bundled.is_dir() else PACKAGE_DIR.parent / name


EXERCISES_DIR = _bundle_dir("exercises")
SOLUTIONS_DIR = _bundle_dir("solutions")


class UnknownExercise(LookupError):
    """Raised for an exercise id that matches nothing."""


@dataclass
class Exercise:
    """One exercise: its folder, metadata and the places of its pieces."""

    name: str  # ex05_manual_backward
    folder: Path
    title: str
    topics: list[str]
    difficulty: int
    points: float
    time_limit: float
    hints: list[str]
    zh: dict = field(default_factory=dict)
    device: str = "cpu"
    preload: list[str] = field(default_factory=list)  # modules the judge imports before learner code runs

    @property
    def id(self) -> str:
        return self.name.split("_", 1)[0]

    @property
    def number(self) -> int:
        return int(self.id[2:])

    @property
    def stub(self) -> Path:
        return self.folder / f"{self.name}.py"

    @property
    def solution(self) -> Path:
        return SOLUTIONS_DIR / f"{self.name}.py"

    @property
    def checks(self) -> Path:
        return CHECKS_DIR / f"{self.name}.py"

    def statement(self, lang: str = "en") -> str:
        path = self.folder / ("README.zh.md" if lang == "zh" else "README.md")
        if not path.exists():
            path = self.folder / "README.md"
        return path.read_text(encoding="utf-8")

    def text(self, key: str, lang: str = "en"):
        """A metadata text (title, hints) in the asked language, English as fallback."""
        if lang == "zh" and key in self.zh:
            return self.zh[key]
        return getattr(self, key)

    def as_dict(self, lang: str = "en") -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "title": self.text("title", lang),
            "topics": self.topics,
            "difficulty": self.difficulty,
            "points": self.points,
        }


def load_exercise(folder: Path) -> Exercise:
    meta = tomllib.loads((folder / "exercise.toml").read_text(encoding="utf-8"))
    return Exercise(
        name=folder.name,
        folder=folder,
        title=meta["title"],
        topics=list(meta.get("topics", [])),
        difficulty=int(meta.get("difficulty", 1)),
        points=float(meta["points"]),
        time_limit=float(meta.get("time_limit", 10)),
        hints=list(meta.get("hints", [])),
        zh=dict(meta.get("zh", {})),
        device=meta.get("device", "cpu"),
        preload=list(meta.get("preload", [])),
    )


def all_exercises(root: Path = EXERCISES_DIR) -> list[Exercise]:
    """Every exercise in teaching order (by number)."""
    folders = [p for p in root.iterdir() if re.fullmatch(r"ex\d\d_\w+", p.name) and (p / "exercise.toml").exists()]
    return [load_exercise(p) for p in sorted(folders)]


def find_exercise(key: str, root: Path = EXERCISES_DIR) -> Exercise:
    """Resolve `5`, `ex05` or `ex05_manual_backward` to an exercise."""
    key = key.strip().lower()
    if key.isdigit():
        key = f"ex{int(key):02d}"
    for ex in all_exercises(root):
        if key in (ex.id, ex.name):
            return ex
    raise UnknownExercise(f"unknown exercise '{key}' (see `grade list`)")
