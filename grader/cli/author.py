"""The course author's commands: scaffold an exercise or import a notebook (`grade new`), prove the checks
(`grade validate`, `--mutants`), write the student version (`grade release`).

Runs in: the `grade` process, a warm parent forking judges for validate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from grader.cli import options
from grader.cli.common import (
    UsageProblem,
    assignment_option,
    command,
    exercises_or_fail,
    json_option,
    lang_option,
    problem,
)
from grader.course.exercises import CourseError
from grader.text import say

@command("validate")
@click.argument("exercises", nargs=-1)
@click.option("--seeds", type=click.IntRange(1), default=1, show_default=True,
              help="Validate with this many seeds (0, 1, ...); without it, one random seed.")
@options.device
@click.option("--mutants", is_flag=True,
              help="Grade generated mutants of each solution instead (one slip each); list those that score full.")
@click.option("--workers", type=click.IntRange(1), default=2, show_default=True, help="Mutants graded at once.")
@click.option("--family", "kinds", multiple=True, type=click.Choice(["slip", "spec", "device", "edge"]),
              help="With --mutants: only the mutants of this family (repeat for more); each family is scored on its "
                   "own.")
@assignment_option
@json_option
@lang_option
def validate_cmd(exercises, seeds, device, mutants, workers, kinds, assignment, as_json, lang):
    """Prove the checks: each solution and variant scores full, each stub and mistake scores less."""
    if kinds and not mutants:
        raise UsageProblem(say(lang, "--family goes with --mutants"))
    chosen = exercises_or_fail(exercises, assignment)
    if mutants:
        from grader.author.mutants import MINIMUM, mutation_ok, render_mutants, run_mutants

        found = run_mutants(chosen, seeds=list(range(seeds)), workers=workers, device=device,
                            kinds=set(kinds) or None)
        click.echo(json.dumps(found) if as_json else render_mutants(found, MINIMUM, lang))
        sys.exit(0 if all(mutation_ok(r, MINIMUM) for r in found) else 1)
    from grader.author.validate import render_validation, seed_warnings, validate

    seed_list = list(range(seeds)) if seeds > 1 else [None]
    reports = [validate(ex, seed=seed, device=device) for ex in chosen for seed in seed_list]
    warnings = seed_warnings(reports)
    click.echo(json.dumps(reports) if as_json else render_validation(reports, lang))
    for warning in warnings:
        click.echo(say(lang, "warning: {warning}", warning=warning.render(lang)), err=as_json)
    sys.exit(0 if all(r["ok"] for r in reports) else 1)


@command("new")
@click.argument("exercise_id", required=False)
@click.option("--course", "course_dir", type=click.Path(path_type=Path), required=True,
              help="The course folder (made, with a course.toml, if it does not exist yet).")
@click.option("--from-notebook", "notebook", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="An nbgrader notebook: its stub, solution and statement, its autograded tests as checks.")
@click.option("--title", help="The exercise's title (default: from its id, or the notebook's first heading).")
@click.option("--track", help="The track whose teaching order it joins, in a course of [[tracks]] (needed where it "
                              "has several).")
@lang_option
def new_cmd(exercise_id, course_dir, notebook, title, track, lang):
    """Scaffold a new exercise EXERCISE_ID in a course: stub, statement, metadata, solution, checks, a mistake."""
    from grader.author.from_nbgrader import from_notebook
    from grader.author.scaffold import new_exercise

    if not exercise_id and not notebook:
        raise UsageProblem(say(lang, "name the exercise (grade new hw1_backprop --course my-course) or give "
                               "--from-notebook"))
    try:
        if notebook:
            written, notes = from_notebook(course_dir, notebook, exercise_id, title, track)
        else:
            written, notes = new_exercise(course_dir, exercise_id, title, track), []
    except CourseError as exc:
        raise problem(exc) from None
    for path in written:
        click.echo(say(lang, "wrote {path}", path=path))
    for note in notes:
        click.echo(say(lang, "note: {note}", note=note))
    name = written[0].parent.name
    click.echo(say(lang, "Next: grade --course {course} validate {name}", course=course_dir, name=name))


@command("release")
@assignment_option
@click.option("--out", type=click.Path(path_type=Path), required=True, help="An empty folder for the student version.")
@click.option("--notebooks", is_flag=True, help="Also write each exercise as a Jupyter notebook.")
@click.option("--check", "check_first", is_flag=True,
              help="First prove that each stub scores less than full and each solution full; refuse if not.")
@lang_option
def release_cmd(assignment, out, notebooks, check_first, lang):
    """Write the student version of the course (or of an assignment): stubs, statements, metadata, notebooks, and
    the checks marked public, so that the student version grades itself. Never solutions, hidden checks, mistakes or
    variants."""
    from grader.author.scaffold import release
    from grader.course.exercises import current_course

    course = current_course()
    exercises = exercises_or_fail((), assignment)
    if check_first:
        from grader.author.validate import check_release

        refused = check_release(exercises)
        if refused:
            for line in refused:
                click.echo(f"  {line.render(lang)}", err=True)
            raise UsageProblem(say(lang, "not released: {n} exercise(s) would not grade as they should (above)",
                                   n=len(refused)))
    try:
        written = release(course, exercises, out, notebooks=notebooks, lang=lang)
    except CourseError as exc:
        raise problem(exc) from None
    click.echo(say(lang, "wrote the student version of {n} exercise(s) of {course} in {out}/ ({files} files): hand it "
                         "out, or `grade init` it as a workspace", n=len(exercises), course=course.name, out=out,
                   files=len(written)))


COMMANDS = [validate_cmd, new_cmd, release_cmd]
