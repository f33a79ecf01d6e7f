"""torch-katas: auto-graded PyTorch exercises.

The package is split by step of the grading flow:
exercises (find) -> submission (load) -> sandbox (run learner code) -> judge (pytest over
grader/checks) -> report. `checking` and `gradients` are the toolkit the hidden checks use.
"""

__version__ = "0.1.0"  # written once, here: pyproject.toml reads it (importlib.metadata costs `grade` 30-50 ms)


def check(exercise: str, **options):
    """In Jupyter: grade the cells this notebook has run so far, e.g. `check("ex05")`."""
    from grader.learner.jupyter import check as run_check

    return run_check(exercise, **options)


def hint(exercise: str, **options):
    """In Jupyter: reveal the next hint of an exercise, e.g. `hint("ex05")` (`all=True` for every one)."""
    from grader.learner.jupyter import hint as show_hint

    return show_hint(exercise, **options)
