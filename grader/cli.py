"""The `grade` command. Imports torch only when something is graded.

    grade ex05                  grade your exercises/ex05_*/ex05_*.py
    grade ex05 --file my.py     grade any file as ex05
    grade list                  the exercises
    grade validate              prove every check: solutions full, stubs and mistakes less
"""

from __future__ import annotations

import json
import locale
import os
import sys
from pathlib import Path

import click

from grader.exercises import UnknownExercise, all_exercises, find_exercise


class UsageProblem(click.ClickException):
    """A one-line error with exit code 2 (unknown exercise, missing file, bad input)."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"grade: error: {self.format_message()}", err=True)


def default_lang() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(var):
            return "zh" if os.environ[var].lower().startswith("zh") else "en"
    return "zh" if (locale.getlocale()[0] or "").lower().startswith("zh") else "en"


def exercise_or_fail(key: str):
    try:
        return find_exercise(key)
    except UnknownExercise as exc:
        raise UsageProblem(str(exc)) from None


lang_option = click.option("--lang", type=click.Choice(["en", "zh"]), default=default_lang,
                           help="Language of statements, hints and messages (default: from the locale).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


class GradeGroup(click.Group):
    """`grade ex05 ...` is short for `grade check ex05 ...`."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=GradeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="torch-katas")
def main():
    """torch-katas: PyTorch exercises graded by hidden checks, with feedback that teaches.

    Run `grade ex05` (or `grade 5`) to grade an exercise; `grade list` to see them all.
    """


@main.command("check")
@click.argument("exercise")
@click.option("--file", "file", type=click.Path(path_type=Path), help="Grade this .py file instead of your workspace's.")
@click.option("--seed", type=int, help="Seed of the checks' random inputs (to reproduce a run).")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", help="Device the checks run on.")
@click.option("--time-limit", type=click.FloatRange(0.1, 3600), help="Seconds per call into your code (default: the exercise's).")
@click.option("--memory", type=click.IntRange(256, 1 << 20), help="Memory limit of your code in MiB (default 4096).")
@json_option
@lang_option
def check_cmd(exercise, file, seed, device, time_limit, memory, as_json, lang):
    """Grade EXERCISE (ex05, 5 or ex05_manual_backward)."""
    from grader.source import SubmissionError, load_source
    from grader.workspace import learner_file

    ex = exercise_or_fail(exercise)
    path = file or learner_file(ex)
    try:
        source = load_source(path)
    except SubmissionError as exc:
        raise UsageProblem(str(exc)) from None
    from grader.judge import grade
    from grader.report import render, to_json

    result = grade(ex, source, seed=seed, lang=lang, device=device, time_limit=time_limit,
                   memory=memory << 20 if memory else None)
    click.echo(to_json(result) if as_json else render(result, lang))
    sys.exit(0 if result["score"] >= result["max_score"] and result["status"] == "graded" else 1)


@main.command("list")
@json_option
@lang_option
def list_cmd(as_json, lang):
    """List the exercises in teaching order."""
    exercises = all_exercises()
    if as_json:
        click.echo(json.dumps([ex.as_dict(lang) for ex in exercises], ensure_ascii=False))
        return
    for ex in exercises:
        stars = "*" * ex.difficulty
        click.echo(f"{ex.id}  {ex.text('title', lang):<58} {stars:<4} {', '.join(ex.topics)}")


@main.command("hint")
@click.argument("exercise")
@click.option("--all", "show_all", is_flag=True, help="Show every hint.")
@lang_option
def hint_cmd(exercise, show_all, lang):
    """Show a hint for EXERCISE."""
    ex = exercise_or_fail(exercise)
    hints = ex.text("hints", lang)
    for i, hint in enumerate(hints if show_all else hints[:1], 1):
        click.echo(f"Hint {i}/{len(hints)}: {hint}")


@main.command("notebook")
@click.argument("exercises", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Write every exercise.")
@click.option("--out", type=click.Path(path_type=Path),
              help="Notebook file (one exercise) or folder (several; default ./notebooks).")
@lang_option
def notebook_cmd(exercises, every, out, lang):
    """Write exercises as Jupyter notebooks (statement, stub cells, a checking cell)."""
    from grader.notebook import write_notebook

    chosen = all_exercises() if every else [exercise_or_fail(e) for e in exercises]
    if not chosen:
        raise UsageProblem("name an exercise (grade notebook ex05) or use --all")
    if len(chosen) == 1 and not every:
        targets = [out or Path(f"{chosen[0].name}.ipynb")]
    else:
        folder = out or Path("notebooks")
        targets = [folder / f"{ex.name}.ipynb" for ex in chosen]
    for ex, target in zip(chosen, targets):
        click.echo(f"wrote {write_notebook(ex, ex.stub, target, lang)}")


@main.command("validate")
@click.argument("exercises", nargs=-1)
@json_option
def validate_cmd(exercises, as_json):
    """Prove the checks: each solution scores full, each stub and mistake scores less."""
    chosen = [exercise_or_fail(e) for e in exercises] or all_exercises()
    from grader.validate import render_validation, validate

    reports = [validate(ex) for ex in chosen]
    click.echo(json.dumps(reports) if as_json else render_validation(reports))
    sys.exit(0 if all(r["ok"] for r in reports) else 1)


def run() -> None:
    """Entry point: a grader bug ends with one line (the traceback with GRADER_DEBUG=1), exit 3."""
    try:
        main()
    except Exception as exc:  # noqa: BLE001 - click handles usage errors; this is a last resort
        if os.environ.get("GRADER_DEBUG"):
            raise
        click.echo(f"grade: internal error: {type(exc).__name__}: {exc} (GRADER_DEBUG=1 shows the traceback)", err=True)
        sys.exit(3)


if __name__ == "__main__":  # pragma: no cover
    run()
