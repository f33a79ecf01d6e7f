"""The `grade` command. Imports torch only when something is graded.

    grade ex05                  grade your exercises/ex05_*/ex05_*.py
    grade ex05 --file my.py     grade any file as ex05
    grade list                  the exercises
    grade batch SUBMISSIONS     a teacher's gradebook of a class
    grade validate              prove every check: solutions full, stubs and mistakes less

`grade --course PATH|NAME ...` works on another course than the built-in exercises.
"""

from __future__ import annotations

import json
import locale
import os
import sys
from pathlib import Path

import click

from grader.exercises import CourseError, UnknownExercise, all_exercises, course_from, find_exercise, use_course
from grader.report import display_width, pad, use_color


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


def exercise_or_fail(key: str, assignment: str | None = None):
    try:
        return find_exercise(key, assignment)
    except (UnknownExercise, CourseError) as exc:
        raise UsageProblem(str(exc)) from None


def exercises_or_fail(keys, assignment: str | None = None, default=None):
    """The exercises named (resolved in the assignment, if one is given), else the assignment's, else
    `default` (None: every exercise of the course)."""
    try:
        if keys:
            return [find_exercise(k, assignment) for k in keys]
        if assignment or default is None:
            return all_exercises(assignment)
        return default
    except (UnknownExercise, CourseError) as exc:
        raise UsageProblem(str(exc)) from None


SIMILARITY = 0.8  # ten independently written correct ex14 solutions share at most 0.65 (tests/similarity)

lang_option = click.option("--lang", type=click.Choice(["en", "zh"]), default=default_lang,
                           help="Language of statements, hints and messages (default: from the locale).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


assignment_option = click.option("--assignment", "-a", help="An assignment of the course (its course.toml): its "
                                 "exercises and points.")

SECTIONS = {
    "For learners": ["check", "list", "show", "next", "hint", "watch", "reset", "solution", "init", "notebook"],
    "For teachers": ["batch", "export", "gradescope", "release", "doctor"],
    "For course authors": ["new", "validate"],
}


class GradeGroup(click.Group):
    """`grade ex05 ...` is short for `grade check ex05 ...`; `--help` lists the commands by who uses them."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "check", self.commands["check"], args
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx, formatter):
        for section, names in SECTIONS.items():
            rows = [(name, self.commands[name].get_short_help_str(limit=120)) for name in names if name in self.commands]
            with formatter.section(section):
                formatter.write_dl(rows)


@click.group(cls=GradeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--course", envvar="TORCH_KATAS_COURSE", metavar="PATH|NAME",
              help="The course: a folder with a course.toml, or an installed course's name (default: the one "
              "found from the current folder, else the built-in exercises).")
@click.version_option(package_name="torch-katas")
def main(course):
    """torch-katas: PyTorch exercises graded by hidden checks, with feedback that teaches.

    Run `grade ex05` (or `grade 5`) to grade an exercise; `grade list` to see them all.
    """
    if course:
        try:
            use_course(course_from(course))
        except CourseError as exc:
            raise UsageProblem(str(exc)) from None


@main.command("check")
@click.argument("exercise")
@click.option("--file", "file", type=click.Path(path_type=Path), help="Grade this .py file instead of your workspace's.")
@click.option("--seed", type=int, help="Seed of the checks' random inputs (to reproduce a run).")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", help="Device the checks run on.")
@click.option("--time-limit", type=click.FloatRange(0.1, 3600), help="Seconds per call into your code (default: the exercise's).")
@click.option("--memory", type=click.IntRange(256, 1 << 20), help="Memory limit of your code in MiB (default 4096).")
@click.option("--report", type=click.Path(path_type=Path), help="Also write an HTML report (checks and charts).")
@json_option
@lang_option
def check_cmd(exercise, file, seed, device, time_limit, memory, report, as_json, lang):
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
    if result.get("grader_failure"):
        click.echo(to_json(result) if as_json else f"grade: internal error: {result['message']}", err=not as_json)
        sys.exit(3)
    if file is None:
        from grader.workspace import Progress, workspace_root

        Progress(workspace_root()).record(ex, result)
    if report:
        from grader.html_report import write_report

        write_report([result], report, f"{ex.id} · {result['title']}")
    click.echo(to_json(result) if as_json else render(result, lang))
    sys.exit(0 if result["score"] >= result["max_score"] and result["status"] == "graded" else 1)


def progress_bar(done: int, total: int, width: int = 30) -> str:
    filled = round(width * done / total) if total else 0
    return f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total} done"


@main.command("list")
@json_option
@lang_option
def list_cmd(as_json, lang):
    """List the exercises in teaching order, with your progress."""
    from grader.workspace import Progress, workspace_root

    exercises = all_exercises()
    progress = Progress(workspace_root())
    if as_json:
        click.echo(json.dumps([{**ex.as_dict(lang), "state": progress.state(ex), "best": progress.entry(ex).get("best")}
                               for ex in exercises], ensure_ascii=False))
        return
    color = use_color()
    marks = {"done": ("✓", "green"), "in progress": ("…", "yellow"), "not started": (" ", None)}
    width = max(display_width(ex.text("title", lang)) for ex in exercises) + 2
    for ex in exercises:
        state = progress.state(ex)
        mark = click.style(marks[state][0], fg=marks[state][1]) if color else f"{state:<11}"
        best = f"{progress.entry(ex).get('best', 0):g}/{ex.points:g}" if state == "in progress" else ""
        title = ex.text("title", lang)
        click.echo(f"{mark} {ex.id}  {pad(title, width)}{'*' * ex.difficulty:<4} {best}".rstrip())
    click.echo(progress_bar(sum(progress.state(ex) == "done" for ex in exercises), len(exercises)))


@main.command("show")
@click.argument("exercise")
@json_option
@lang_option
def show_cmd(exercise, as_json, lang):
    """Show the statement of EXERCISE."""
    ex = exercise_or_fail(exercise)
    from grader.workspace import learner_file

    checks = [{**c, "points": ex.overrides.get(c["id"], c["points"])} for c in ex.declared_checks()]
    if as_json:
        click.echo(json.dumps({**ex.as_dict(lang), "statement": ex.statement(lang), "file": str(learner_file(ex)),
                               "checks": checks}, ensure_ascii=False))
        return
    click.echo(ex.statement(lang))
    if checks:
        click.echo(f"Checks ({ex.points:g} points):")
        width = max(len(c["title"]) for c in checks)
        for c in checks:
            click.echo(f"  {c['title']:<{width}}  {c['points']:g}")
    click.echo(f"Edit {learner_file(ex)}, then run `grade {ex.id}`.")


@main.command("next")
@json_option
@lang_option
@click.pass_context
def next_cmd(ctx, as_json, lang):
    """Show the first exercise you have not finished."""
    from grader.workspace import Progress, workspace_root

    ex = Progress(workspace_root()).first_unfinished(all_exercises())
    if ex is None:
        click.echo(json.dumps(None) if as_json else "Every exercise is done. Well done!")
        return
    ctx.invoke(show_cmd, exercise=ex.id, as_json=as_json, lang=lang)


@main.command("hint")
@click.argument("exercise")
@click.option("--all", "show_all", is_flag=True, help="Show every hint.")
@json_option
@lang_option
def hint_cmd(exercise, show_all, as_json, lang):
    """Reveal the next hint for EXERCISE (each call one more, gentle to strong)."""
    from grader.workspace import Progress, workspace_root

    ex = exercise_or_fail(exercise)
    hints = ex.text("hints", lang)
    shown = len(hints) if show_all else Progress(workspace_root()).next_hint(ex)
    if as_json:
        click.echo(json.dumps({"exercise": ex.id, "hints": hints[:shown], "total": len(hints)}, ensure_ascii=False))
        return
    for i, hint in enumerate(hints[:shown], 1):
        click.echo(f"Hint {i}/{len(hints)}: {hint}")
    if shown < len(hints):
        click.echo(f"(`grade hint {ex.id}` again for a stronger hint)")


@main.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=".")
@click.option("--course", "course", metavar="PATH|NAME", help="The course to work on (default: the built-in exercises).")
def init_cmd(directory, course):
    """Create a workspace in DIRECTORY with every exercise's stub (of the course, with --course)."""
    from grader.workspace import init_workspace

    if course:
        try:
            use_course(course_from(course))
        except CourseError as exc:
            raise UsageProblem(str(exc)) from None
    try:
        stubs = init_workspace(directory)
    except FileExistsError as exc:
        raise UsageProblem(f"{exc}: pick an empty folder") from None
    click.echo(f"Created a workspace with {len(stubs)} exercises in {directory}.")
    click.echo(f"Next: cd {directory} && grade next")


@main.command("reset")
@click.argument("exercise")
def reset_cmd(exercise):
    """Restore the stub of EXERCISE (your file is backed up first)."""
    from grader.workspace import reset_exercise

    ex = exercise_or_fail(exercise)
    backup = reset_exercise(ex)
    click.echo(f"Restored the stub of {ex.id}." + (f" Your file was saved as {backup}." if backup else ""))


@main.command("solution")
@click.argument("exercise")
@click.option("--force", is_flag=True, help="Show it before you have solved the exercise.")
def solution_cmd(exercise, force):
    """Show the reference solution of EXERCISE, once you have a full score."""
    from grader.workspace import Progress, workspace_root

    ex = exercise_or_fail(exercise)
    if not ex.solution.is_file():
        raise UsageProblem(f"the reference solutions of {ex.course.name} are not installed here (a student install "
                           "carries none): compare with your own passing code, or ask your teacher")
    if Progress(workspace_root()).state(ex) != "done":
        if not force:
            raise UsageProblem(f"the solution of {ex.id} unlocks after a full score (or use --force)")
        click.echo("Warning: reading the solution before solving it teaches much less. Try `grade hint` first.", err=True)
    click.echo(ex.solution.read_text(encoding="utf-8"))


@main.command("watch")
@click.argument("exercise", required=False)
@click.option("--interval", type=click.FloatRange(0.05, 60), default=0.5, show_default=True,
              help="Seconds between checks for a saved file.")
@click.option("--runs", type=click.IntRange(1), help="Stop after this many gradings (for scripts).")
@lang_option
def watch_cmd(exercise, interval, runs, lang):
    """Regrade on every save. Without EXERCISE, follow the first unfinished one and move on when done."""
    from grader.watch import watch

    watch(exercise_or_fail(exercise) if exercise else None, lang=lang, interval=interval, runs=runs)


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


@main.command("batch")
@click.argument("submissions", type=click.Path(path_type=Path))
@click.option("--exercise", "-e", "chosen", multiple=True,
              help="Grade only these exercises (repeatable; default: those the students handed in).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("grades"), show_default=True,
              help="Folder for results.jsonl, grades.csv, index.html, feedback/ and junit.xml.")
@click.option("--workers", type=click.IntRange(1, 256), default=lambda: os.cpu_count() or 1,
              help="Submissions graded at once (default: the machine's cores).")
@click.option("--force", is_flag=True, help="Regrade what results.jsonl already holds.")
@click.option("--seed", type=int, help="Seed of the checks' random inputs.")
@click.option("--time-limit", type=click.FloatRange(0.1, 3600), help="Seconds per call into student code.")
@click.option("--memory", type=click.IntRange(256, 1 << 20), help="Memory limit of student code in MiB (default 4096).")
@click.option("--roster", type=click.Path(path_type=Path),
              help="CSV naming the students (folder, id, name, email...; a Canvas or Moodle export works).")
@click.option("--similarity", type=click.FloatRange(0, 1), is_flag=False, flag_value=SIMILARITY,
              help=f"List pairs of similar submissions (sharing at least this part, {SIMILARITY} alone) in "
              "similarity.html.")
@assignment_option
@json_option
@lang_option
def batch_cmd(submissions, chosen, out, workers, force, seed, time_limit, memory, roster, similarity, assignment,
              as_json, lang):
    """Grade SUBMISSIONS: a folder (or a download-all .zip) of one folder or .zip per student, files named
    after the exercise (ex05*.py); Canvas and Moodle downloads as they come."""
    import zipfile

    if not submissions.exists():
        raise UsageProblem(f"no such folder: {submissions}")
    if not submissions.is_dir() and not zipfile.is_zipfile(submissions):
        raise UsageProblem(f"{submissions} is neither a folder nor a readable zip")
    exercises = exercises_or_fail(chosen, assignment, default=[]) or None
    if roster:
        from grader.roster import RosterError, read_roster

        try:
            roster = read_roster(roster)
        except RosterError as exc:
            raise UsageProblem(str(exc)) from None
    if similarity is not None:
        from grader.similarity import MissingExtra, require

        try:
            require()
        except MissingExtra as exc:
            raise UsageProblem(str(exc)) from None
    from grader.batch import run_batch

    try:
        summary = run_batch(submissions, exercises, out, workers=workers, force=force, roster=roster,
                            similarity=similarity, seed=seed, lang=lang, time_limit=time_limit,
                            memory=memory << 20 if memory else None)
    except zipfile.BadZipFile as exc:
        raise UsageProblem(f"{submissions} cannot be unpacked: {exc}") from None
    if as_json:
        click.echo(json.dumps(summary))
    else:
        kinds = ", ".join(f"{summary.get(k, 0)} {k}" for k in ("full", "partial", "zero", "error", "timeout",
                                                               "crashed", "tampered"))
        click.echo(f"Graded {summary['graded']} ({kinds}); {summary['skipped']} already graded; "
                   f"{summary['problems']} problems noted. Gradebook in {out}/")
    if summary["interrupted"]:
        click.echo("Interrupted: what was graded is kept; run the same command to go on.", err=True)
        sys.exit(130)


@main.command("export")
@click.argument("grades", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["canvas", "moodle", "csv"]), required=True,
              help="canvas: Canvas's gradebook import; moodle: Moodle's CSV grade import; csv: a plain table.")
@click.option("--out", type=click.Path(path_type=Path), help="File to write (default: GRADES/<format>.csv).")
@click.option("--assignment", help="One column with the total under this name, instead of one per exercise.")
def export_cmd(grades, fmt, out, assignment):
    """Write the gradebook of GRADES (a `grade batch --out` folder) as a CSV an LMS imports."""
    from grader.export import ExportError, export, read_gradebook

    try:
        book = read_gradebook(grades)
    except ExportError as exc:
        raise UsageProblem(str(exc)) from None
    out = out or grades / f"{fmt}.csv"
    for warning in export(book, fmt, out, assignment):
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"wrote {out}")


@main.command("gradescope")
@click.argument("exercises", nargs=-1)
@assignment_option
@click.option("--out", type=click.Path(path_type=Path), default=Path("autograder.zip"), show_default=True)
@click.option("--time-limit", type=click.FloatRange(0.1, 3600), help="Seconds per call into student code.")
@click.option("--memory", type=click.IntRange(256, 1 << 20), help="Memory limit of student code in MiB (default 4096).")
@lang_option
def gradescope_cmd(exercises, assignment, out, time_limit, memory, lang):
    """Build a Gradescope autograder bundle that grades EXERCISES (or an assignment, or the whole course)."""
    from grader.gradescope import build_bundle

    chosen = exercises_or_fail(exercises, assignment)
    bundle = build_bundle(chosen, out, time_limit=time_limit, memory=memory, lang=lang, assignment=assignment)
    click.echo(f"wrote {bundle}: upload it as the assignment's autograder")


@main.command("validate")
@click.argument("exercises", nargs=-1)
@click.option("--seeds", type=click.IntRange(1), default=1, show_default=True,
              help="Validate with this many seeds (0, 1, ...); without it, one random seed.")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", help="Device the checks run on.")
@assignment_option
@json_option
def validate_cmd(exercises, seeds, device, assignment, as_json):
    """Prove the checks: each solution and variant scores full, each stub and mistake scores less."""
    chosen = exercises_or_fail(exercises, assignment)
    from grader.validate import render_validation, validate

    seed_list = list(range(seeds)) if seeds > 1 else [None]
    reports = [validate(ex, seed=seed, device=device) for ex in chosen for seed in seed_list]
    click.echo(json.dumps(reports) if as_json else render_validation(reports))
    sys.exit(0 if all(r["ok"] for r in reports) else 1)


@main.command("new")
@click.argument("exercise_id", required=False)
@click.option("--course", "course_dir", type=click.Path(path_type=Path), required=True,
              help="The course folder (made, with a course.toml, if it does not exist yet).")
@click.option("--from-notebook", "notebook", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="An nbgrader notebook (### BEGIN SOLUTION / ### END SOLUTION): its stub and solution.")
@click.option("--title", help="The exercise's title (default: from its id, or the notebook's first heading).")
def new_cmd(exercise_id, course_dir, notebook, title):
    """Scaffold a new exercise EXERCISE_ID in a course: stub, statement, metadata, solution, checks, a mistake."""
    from grader.authoring import from_notebook, new_exercise

    if not exercise_id and not notebook:
        raise UsageProblem("name the exercise (grade new hw1_backprop --course my-course) or give --from-notebook")
    try:
        if notebook:
            written, notes = from_notebook(course_dir, notebook, exercise_id)
        else:
            written, notes = new_exercise(course_dir, exercise_id, title), []
    except CourseError as exc:
        raise UsageProblem(str(exc)) from None
    for path in written:
        click.echo(f"wrote {path}")
    for note in notes:
        click.echo(f"note: {note}")
    name = written[0].parent.name
    click.echo(f"Next: grade --course {course_dir} validate {name}")


@main.command("release")
@assignment_option
@click.option("--out", type=click.Path(path_type=Path), required=True, help="An empty folder for the student version.")
@click.option("--notebooks", is_flag=True, help="Also write each exercise as a Jupyter notebook.")
@click.option("--check", "check_first", is_flag=True,
              help="First prove that each stub scores less than full and each solution full; refuse if not.")
@lang_option
def release_cmd(assignment, out, notebooks, check_first, lang):
    """Write the student version of the course (or of an assignment): stubs, statements, metadata, notebooks.
    Never solutions, checks or mistakes."""
    from grader.authoring import release
    from grader.exercises import current_course

    course = current_course()
    exercises = exercises_or_fail((), assignment)
    if check_first:
        from grader.validate import check_release

        refused = check_release(exercises)
        if refused:
            for line in refused:
                click.echo(f"  {line}", err=True)
            raise UsageProblem(f"not released: {len(refused)} exercise(s) would not grade as they should (above)")
    try:
        written = release(course, exercises, out, notebooks=notebooks, lang=lang)
    except CourseError as exc:
        raise UsageProblem(str(exc)) from None
    click.echo(f"wrote the student version of {len(exercises)} exercise(s) of {course.name} in {out}/ "
               f"({len(written)} files): hand it out, or `grade init` it as a workspace")


@main.command("doctor")
@json_option
def doctor_cmd(as_json):
    """Show what isolates learner code on this machine, proved by a test sandbox."""
    from grader.doctor import render, run_self_test

    report = run_self_test()
    click.echo(json.dumps(report) if as_json else render(report))
    sys.exit(1 if any(report["managed"].values()) else 0)


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
