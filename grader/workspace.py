"""The learner's workspace: the folder whose exercises/ holds the files they edit.

Found from the current directory upwards; without one, the exercises shipped with the grader.
"""

from __future__ import annotations

from pathlib import Path

from grader.exercises import EXERCISES_DIR, Exercise


def find_workspace(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` that holds an exercises/ folder of stubs."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        exercises = folder / "exercises"
        if exercises.is_dir() and any(exercises.glob("ex[0-9][0-9]_*/ex[0-9][0-9]_*.py")):
            return folder
    return None


def learner_file(exercise: Exercise, start: Path | None = None) -> Path:
    """The file `grade exNN` grades: the workspace's copy of the stub."""
    workspace = find_workspace(start)
    root = workspace / "exercises" if workspace else EXERCISES_DIR
    return root / exercise.name / f"{exercise.name}.py"
