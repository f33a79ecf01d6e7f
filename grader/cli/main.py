"""The `grade` command. Imports torch only when something is graded.

    grade ex05                  grade your exercises/ex05_*/ex05_*.py
    grade ex05 --file my.py     grade any file as ex05
    grade list                  the exercises
    grade batch SUBMISSIONS     a teacher's gradebook of a class
    grade validate              prove every check: solutions full, stubs and mistakes less

`grade --course PATH|NAME ...` works on another course than the built-in exercises.
"""

from __future__ import annotations

import inspect
import json
import locale
import os
import re
import sys
from pathlib import Path

import click

from grader.cli import click_text, options
from grader.course.exercises import (
    CourseError,
    UnknownExercise,
    all_exercises,
    course_from,
    find_exercise,
    use_course,
)
from grader.report.terminal import display_width, pad, use_color
from grader.text import LANGUAGES, Text, message_of, say

LANG_KEY = "torch_katas.lang"  # in click's ctx.meta: the --lang found anywhere on the command line


def default_lang() -> str:
    """The workspace's language (`grade lang`), else the locale's."""
    from grader.learner.workspace import workspace_lang

    return workspace_lang() or locale_lang()


def locale_lang() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(var):
            return "zh" if os.environ[var].lower().startswith("zh") else "en"
    return "zh" if (locale.getlocale()[0] or "").lower().startswith("zh") else "en"


_asked: str | None = None  # the --lang of the command line being run, for what click prints after it ends


def cli_lang() -> str:
    """The language of the CLI's lines: the command line's --lang, else the locale's."""
    ctx = click.get_current_context(silent=True)
    return (ctx.meta.get(LANG_KEY) if ctx else None) or _asked or default_lang()


click_text.install(cli_lang)


def lang_in(args: list[str]) -> str | None:
    """The value of a --lang among `args` (read before click parses them, so that --help obeys it)."""
    for i, arg in enumerate(args):
        if arg.startswith("--lang="):
            value = arg.removeprefix("--lang=")
        elif arg == "--lang" and i + 1 < len(args):
            value = args[i + 1]
        else:
            continue
        if value in LANGUAGES:
            return value
    return None


class UsageProblem(click.ClickException):
    """A one-line error with exit code 2 (unknown exercise, missing file, bad input), in the CLI's language."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lang = cli_lang()  # while the command runs: shown after its context is gone

    def show(self, file=None) -> None:
        click.echo(say(self.lang, "grade: error: {message}", message=self.format_message()), err=True)


def problem(exc: Exception) -> UsageProblem:
    """A usage problem from another module's error, in the CLI's language where the error was raised with a Text."""
    return UsageProblem(message_of(exc).render(cli_lang()))


def exercise_or_fail(key: str, assignment: str | None = None):
    try:
        return find_exercise(key, assignment)
    except (UnknownExercise, CourseError) as exc:
        raise problem(exc) from None


def exercise_or_current(key: str | None, command: str):
    """The exercise named, else the current one (the first not done, as `next` and `watch` pick)."""
    if key:
        return exercise_or_fail(key)
    from grader.learner.workspace import current_exercise

    try:
        ex = current_exercise()
    except CourseError as exc:
        raise problem(exc) from None
    if ex is None:
        raise UsageProblem(say(cli_lang(), "every exercise is done: name one (`grade {command} ex05`)",
                               command=command))
    return ex


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
        raise problem(exc) from None


SIMILARITY = 0.8  # ten independently written correct ex14 solutions share at most 0.65 (tests/similarity)

lang_option = click.option("--lang", type=click.Choice(LANGUAGES), default=cli_lang,
                           help="Language of statements, hints and messages (default: from the locale).")
json_option = options.as_json
assignment_option = options.assignment
no_server_option = options.no_server

SECTIONS = {
    "For learners": ["check", "list", "show", "next", "hint", "watch", "reset", "solution", "init", "lang",
                     "notebook", "server"],
    "Practice (katas)": ["kata", "today", "stats"],
    "For teachers": ["batch", "review", "export", "gradescope", "release", "doctor"],
    "For course authors": ["new", "validate"],
}


# -- help in the learner's language: click's formatting, our words ----------------------------------

def help_text(lang: str, text: str) -> str:
    """A command's help, paragraph by paragraph through the catalogue (click rewraps each paragraph)."""
    text = inspect.cleandoc(text)
    if lang == "en":
        return text
    return "\n\n".join(say(lang, " ".join(paragraph.split())) for paragraph in text.split("\n\n"))


def option_help(lang: str, own: str, shown: str) -> str:
    """An option's help as click shows it ("its help  [default: 0.5]"), in `lang`."""
    if lang == "en":
        return shown
    extra = shown[len(own):].strip() if shown.startswith(own) else shown  # click's words: in `lang` already
    text = say(lang, " ".join(own.split())) if own else ""
    return f"{text}  {extra}".strip()


class LocalCommand(click.Command):
    """A command whose --help speaks the CLI's language: its help, its options' and click's own words, wrapped
    by display width."""

    context_class = click_text.LocalContext

    def format_usage(self, ctx, formatter):
        formatter.write_usage(ctx.command_path, " ".join(self.collect_usage_pieces(ctx)),
                              prefix=say(cli_lang(), "Usage: "))

    def format_help_text(self, ctx, formatter):
        if self.help:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(help_text(cli_lang(), self.help))

    def format_options(self, ctx, formatter):
        lang = cli_lang()
        rows = [(record[0], option_help(lang, param.help or "", record[1])) for param in self.get_params(ctx)
                if not isinstance(param, click.Argument) and (record := param.get_help_record(ctx))]
        if rows:
            with formatter.section(say(lang, "Options")):
                formatter.write_dl(rows)

    def get_short_help_str(self, limit: int = 45) -> str:
        """The first sentence of the help in the CLI's language (translated whole, then shortened)."""
        if self.short_help or not self.help:
            return Text(super().get_short_help_str(limit)).render(cli_lang())
        first = help_text(cli_lang(), self.help).split("\n\n")[0]
        match = re.match(r"(.+?(?:\.(?=\s|$)|。))", " ".join(first.split()))
        return match.group(1) if match else first


class GradeGroup(LocalCommand, click.Group):
    """`grade ex05 ...` is short for `grade check ex05 ...`; `--help` lists the commands by who uses them."""

    command_class = LocalCommand

    def parse_args(self, ctx, args):
        global _asked
        ctx.meta[LANG_KEY] = _asked = lang_in(args)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "check", self.commands["check"], args
        return super().resolve_command(ctx, args)

    def format_options(self, ctx, formatter):
        super().format_options(ctx, formatter)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx, formatter):
        for section, names in SECTIONS.items():
            rows = [(name, self.commands[name].get_short_help_str(limit=120))
                    for name in names if name in self.commands]
            with formatter.section(say(cli_lang(), section)):
                formatter.write_dl(rows)


def relayable(args: list[str]) -> bool:
    """Whether `grade ARGS` is one grading (`grade [--course C] [--lang L] [check] EXERCISE ...`): the command the
    warm service's front runs for a client, on its terminal (relay.py)."""
    rest = list(args)
    while rest and rest[0].split("=")[0] in ("--course", "--lang"):
        rest = rest[1 if "=" in rest[0] else 2:]
    if rest and rest[0] == "check":
        rest = rest[1:]
    elif rest and rest[0] in main.commands:
        return False
    return bool(rest) and not rest[0].startswith("-") and "--no-server" not in rest


@click.group(cls=GradeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--course", envvar="TORCH_KATAS_COURSE", metavar="PATH|NAME",
              help="The course: a folder with a course.toml, or an installed course's name (default: the one "
              "found from the current folder, else the built-in exercises).")
@click.option("--lang", type=click.Choice(LANGUAGES), expose_value=False,
              help="Language of the commands' text and help (default: from the locale).")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, help="Show the version and exit.",
              callback=lambda ctx, _, shown: show_version(ctx) if shown and not ctx.resilient_parsing else None)
def main(course):
    """torch-katas: PyTorch exercises graded by hidden checks, with feedback that teaches.

    Run `grade ex05` (or `grade 5`) to grade an exercise; `grade list` to see them all.
    """
    if course:
        try:
            use_course(course_from(course))
        except CourseError as exc:
            raise problem(exc) from None


def show_version(ctx) -> None:
    from grader import __version__

    click.echo(say(cli_lang(), "{prog}, version {version}", prog=ctx.info_name or "grade", version=__version__))
    ctx.exit()


@main.command("check")
@click.argument("exercise")
@click.option("--file", "file", type=click.Path(path_type=Path),
              help="Grade this file (.py or .ipynb) instead of your workspace's.")
@options.seed
@options.device
@options.time_limit()
@options.memory()
@click.option("--report", type=click.Path(path_type=Path), help="Also write an HTML report (checks and charts).")
@click.option("--kata", "in_kata", is_flag=True, help="Grade your latest kata attempt of EXERCISE (`grade kata`).")
@no_server_option
@json_option
@lang_option
def check_cmd(exercise, file, seed, device, time_limit, memory, report, in_kata, no_server, as_json, lang):
    """Grade EXERCISE (ex05, 5 or ex05_manual_backward)."""
    from grader.sandbox.source import SubmissionError, load_source
    from grader.learner.workspace import learner_file, own_work

    try:
        ex = exercise_or_fail(exercise)
    except UsageProblem as exc:
        if as_json:
            json_error({"exercise": exercise}, exc.format_message())
        raise
    practice = kata_attempt(ex, file, in_kata)  # (workspace, attempt) when this grades a kata attempt
    path = file or (kata_file(practice) if practice else learner_file(ex))
    try:
        source = load_source(path)
    except SubmissionError as exc:
        if as_json:  # a JSON result for every outcome: a file that cannot be graded is status "error"
            json_error({"exercise": ex.id, "name": ex.name, "submission": str(path), "max_score": ex.points},
                       message_of(exc).render(lang))
        raise problem(exc) from None
    from grader.service.client import grade
    from grader.report.terminal import render, to_json

    result = grade(ex, source, server=not no_server, seed=seed, lang=lang, device=device, time_limit=time_limit,
                   memory=options.memory_bytes(memory), variant=practice[1]["variant"] if practice else None)
    if result.grader_failure:
        click.echo(to_json(result) if as_json else say(lang, "grade: internal error: {message}",
                                                       message=result.message), err=not as_json)
        sys.exit(3)
    workspace = None if practice else own_work(ex, path)
    if workspace is not None:
        from grader.learner.workspace import Progress

        Progress(workspace).record(ex, result)
    kata_line = kata_record(ex, practice, result, lang) if practice else None
    if report:
        from grader.report.pages import write_report

        write_report([result], report, f"{ex.id} · {result.title.render(lang)}", lang=lang)
    if ex.hidden_points:
        result.hidden_points = ex.hidden_points
    if as_json:
        click.echo(to_json(result))
    else:
        click.echo(render(result, lang))
        if ex.hidden_points:
            click.echo(say(lang, "These are the public checks; hidden checks run when your teacher grades (their "
                                 "points: {points}).", points=f"{ex.hidden_points:g}"))
        if kata_line:
            click.echo(kata_line)
        elif file is not None:
            click.echo(say(lang, "Recorded in your progress ({workspace}).", workspace=workspace) if workspace else
                       say(lang, "Not recorded in your progress: {file} is neither your workspace's file of {ex} nor "
                                 "a notebook in a workspace.", file=file, ex=ex.id))
        if report:
            click.echo(say(lang, "wrote {path}", path=report))
    sys.exit(0 if result.full else 1)


def json_error(fields: dict, message: str, code: int = 2) -> None:
    """`--json` prints a result for every outcome: bad input is status "error" with its one-line message."""
    click.echo(json.dumps({"status": "error", "score": 0.0, "max_score": 0.0, "checks": [], "notes": [], "output": "",
                           **fields, "message": message}, ensure_ascii=False))
    sys.exit(code)


def kata_attempt(ex, file, latest: bool):
    """(workspace, attempt) of the kata attempt a grading is for: the latest one with --kata, else the one whose
    practice folder holds `file`; None for a grading outside kata mode."""
    from grader.learner import kata
    from grader.learner.workspace import workspace_root

    try:
        found = (workspace_root(), kata.current(workspace_root(), ex)) if latest else \
            kata.attempt_of(ex, file) if file is not None else None
        if found is not None and found[1] is not None:
            kata.usable(ex, found[1])
    except kata.KataError as exc:
        raise problem(exc) from None
    if found is not None and found[1] is None:
        raise UsageProblem(say(cli_lang(), "no kata of {ex} started yet: `grade kata {ex}` starts one", ex=ex.id))
    return found


def kata_file(practice) -> Path:
    from grader.learner.kata import attempt_file

    return attempt_file(*practice)


def kata_record(ex, practice, result, lang: str) -> str:
    """Count a kata grading in the kata state; the line that says where the attempt stands."""
    from grader.learner.kata import record
    from grader.learner.kata_report import attempt_line

    if result.grader_failure:
        return ""
    return attempt_line(ex, record(practice[0], ex, practice[1]["n"], result), lang)


def progress_bar(done: int, total: int, lang: str, width: int = 30) -> str:
    filled = round(width * done / total) if total else 0
    return f"[{'#' * filled}{'-' * (width - filled)}] " + say(lang, "{done}/{total} done", done=done, total=total)


STATES = {"done": ("✓", "green"), "in progress": ("…", "yellow"), "not started": (" ", None)}


@main.command("list")
@json_option
@lang_option
def list_cmd(as_json, lang):
    """List the exercises in teaching order, with your progress."""
    from grader.learner.workspace import Progress, workspace_root

    from grader.learner.kata import KataError, State
    from grader.learner.kata_report import kata_cells

    exercises = all_exercises()
    progress = Progress(workspace_root())
    try:
        katas = State(workspace_root()).load()["katas"]
    except KataError as exc:
        raise problem(exc) from None
    if as_json:
        cells = ("attempts", "hints", "best_time", "due")
        click.echo(json.dumps([{**ex.as_dict(lang), "state": progress.state(ex), "best": progress.entry(ex).get("best"),
                                "kata": dict(zip(cells, kata_cells(katas.get(ex.id, {}))))}
                               for ex in exercises], ensure_ascii=False))
        return
    color = use_color()
    states = {state: say(lang, state) for state in STATES}
    state_width = max(map(display_width, states.values()))
    width = max(display_width(ex.text("title", lang)) for ex in exercises) + 2
    for ex in exercises:
        state = progress.state(ex)
        mark = click.style(STATES[state][0], fg=STATES[state][1]) if color else pad(states[state], state_width)
        best = f"{progress.entry(ex).get('best', 0):g}/{ex.points:g}" if state == "in progress" else ""
        attempts, hints, best_time, due = kata_cells(katas.get(ex.id, {}))
        practice = say(lang, "kata: {attempts} attempt(s), {hints} hint(s), best {best}, due {due}", attempts=attempts,
                       hints=hints, best=best_time, due=due) if attempts else ""
        click.echo(f"{mark} {ex.id}  {pad(ex.text('title', lang), width)}{'*' * ex.difficulty:<4} {pad(best, 6)}"
                   f"{practice}".rstrip())
    click.echo(progress_bar(sum(progress.state(ex) == "done" for ex in exercises), len(exercises), lang))
    click.echo(say(lang, "Stars: difficulty, from * (gentle) to *** (hard)."))


@main.command("show")
@click.argument("exercise", required=False)
@assignment_option
@json_option
@lang_option
def show_cmd(exercise, assignment, as_json, lang):
    """Show the statement of EXERCISE (default: the current one)."""
    ex = exercise_or_fail(exercise, assignment) if exercise and assignment else exercise_or_current(exercise, "show")
    from grader.judge.collection import CollectionError, collected_checks  # imports the checks module, and so torch
    from grader.learner.workspace import learner_file

    try:
        checks = collected_checks(ex)
    except CollectionError as exc:
        raise problem(exc) from None
    if as_json:
        click.echo(json.dumps({**ex.as_dict(lang), "statement": ex.statement(lang), "file": str(learner_file(ex)),
                               "checks": checks}, ensure_ascii=False))
        return
    click.echo(ex.statement(lang))
    if checks:
        click.echo(say(lang, "Checks ({points} points):", points=f"{ex.points:g}"))
        titles = [c["zh"] if lang == "zh" else c["title"] for c in checks]
        width = max(map(display_width, titles))
        for title, c in zip(titles, checks):
            click.echo(f"  {pad(title, width)}  {c['points']:g}")
    if ex.hidden_points:
        click.echo(say(lang, "These are the public checks; hidden checks run when your teacher grades (their "
                             "points: {points}).", points=f"{ex.hidden_points:g}"))
    click.echo(say(lang, "Edit {file}, then run `grade {ex}`.", file=learner_file(ex), ex=ex.id))


@main.command("next")
@json_option
@lang_option
@click.pass_context
def next_cmd(ctx, as_json, lang):
    """Show the first exercise you have not finished."""
    from grader.learner.workspace import current_exercise

    ex = current_exercise()
    if ex is None:
        click.echo(json.dumps(None) if as_json else say(lang, "Every exercise is done. Well done!"))
        return
    ctx.invoke(show_cmd, exercise=ex.id, assignment=None, as_json=as_json, lang=lang)


@main.command("hint")
@click.argument("exercise", required=False)
@click.option("--all", "show_all", is_flag=True, help="Show every hint.")
@json_option
@lang_option
def hint_cmd(exercise, show_all, as_json, lang):
    """Reveal the next hint for EXERCISE (default: the current one); each call one more, gentle to strong."""
    from grader.course import variants
    from grader.learner.workspace import Progress, workspace_root

    ex = exercise_or_current(exercise, "hint")
    draw = count_kata_hint(ex)  # an open kata attempt's draw: its hints
    hints = ex.text("hints", lang) if draw is None else variants.hints(ex, draw, lang)
    shown = len(hints) if show_all else Progress(workspace_root()).next_hint(ex)
    if as_json:
        click.echo(json.dumps({"exercise": ex.id, "hints": hints[:shown], "total": len(hints)}, ensure_ascii=False))
        return
    if exercise is None:
        click.echo(f"{ex.id} · {ex.text('title', lang)}")
    click.echo("\n".join(hint_lines(hints, shown, lang, again=f"`grade hint {ex.id}`")))


def count_kata_hint(ex) -> dict | None:
    """A hint asked for while a kata attempt of `ex` is open counts in that attempt; return its draw (else None)."""
    from grader.learner.kata import KataError, hint_used
    from grader.learner.workspace import workspace_root

    try:
        return hint_used(workspace_root(), ex)
    except KataError as exc:
        raise problem(exc) from None


def hint_lines(hints: list[str], shown: int, lang: str, again: str) -> list[str]:
    """The hints revealed so far, and how to get a stronger one (`again`: the command that does)."""
    if not hints:
        return [say(lang, "This exercise has no hints.")]
    lines = [say(lang, "Hint {i}/{n}: {hint}", i=i, n=len(hints), hint=hint) for i, hint in enumerate(hints[:shown], 1)]
    if shown < len(hints):
        lines.append(say(lang, "({again} again for a stronger hint)", again=again))
    return lines


@main.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=".")
@click.option("--course", "course", metavar="PATH|NAME",
              help="The course to work on (default: the built-in exercises).")
@lang_option
@click.pass_context
def init_cmd(ctx, directory, course, lang):
    """Create a workspace in DIRECTORY with every exercise's stub (of the course, with --course); with --lang,
    the workspace speaks that language from then on."""
    from grader.learner.workspace import init_workspace

    if course:
        try:
            use_course(course_from(course))
        except CourseError as exc:
            raise problem(exc) from None
    try:
        chosen = ctx.get_parameter_source("lang") == click.core.ParameterSource.COMMANDLINE or _asked
        stubs = init_workspace(directory, lang if chosen else None, stub_lang=lang)
    except FileExistsError:
        raise UsageProblem(say(lang, "{path} already exists: pick an empty folder",
                               path=directory / "exercises")) from None
    click.echo(say(lang, "Created a workspace with {n} exercises in {folder}.", n=len(stubs), folder=directory))
    click.echo(say(lang, "Next: cd {folder} && grade next", folder=directory))


@main.command("lang")
@click.argument("language", type=click.Choice(LANGUAGES), required=False)
def lang_cmd(language):
    """Show the language of this workspace, or set it to LANGUAGE (en or zh); --lang still overrides it."""
    from grader.learner.workspace import find_workspace, restub, workspace_lang, write_settings

    root = find_workspace()
    if language is None:
        click.echo(say(cli_lang(), "The language here is {lang}.", lang=workspace_lang() or locale_lang()))
        return
    if root is None:
        raise UsageProblem(say(cli_lang(), "no workspace here: `grade init DIR --lang {lang}` makes one",
                               lang=language))
    write_settings(root, lang=language)
    click.echo(say(language, "This workspace now speaks {lang} (in {path}).", lang=language,
                   path=root / "torch-katas.toml"))
    rewritten = restub(root, language)
    if rewritten:
        click.echo(say(language, "{n} stub(s) you had not started were written again in {lang}.", n=len(rewritten),
                       lang=language))


@main.command("reset")
@click.argument("exercise", required=False)
@click.option("--yes", "-y", is_flag=True, help="Do not ask first (for scripts).")
@lang_option
def reset_cmd(exercise, yes, lang):
    """Restore the stub of EXERCISE (default: the current one); your file is backed up first."""
    from grader.learner.workspace import BACKUP_DIR, edited, learner_file, reset_exercise

    ex = exercise_or_current(exercise, "reset")
    if edited(ex) and not yes:
        click.echo(say(lang, "This replaces {file} with the stub of {ex}; your file is kept in {backups}/ first.",
                       file=learner_file(ex), ex=ex.id, backups=BACKUP_DIR))
        try:
            go_on = click.confirm(say(lang, "Restore the stub?"), default=False)
        except click.Abort:
            go_on = False
        if not go_on:
            click.echo(say(lang, "Nothing changed."))
            sys.exit(1)
    backup = reset_exercise(ex, lang=lang)
    click.echo(say(lang, "Restored the stub of {ex}.", ex=ex.id)
               + (say(lang, " Your file was saved as {backup}.", backup=backup) if backup else ""))


@main.command("solution")
@click.argument("exercise", required=False)
@click.option("--force", is_flag=True, help="Show it before you have solved the exercise.")
@lang_option
def solution_cmd(exercise, force, lang):
    """Show the reference solution of EXERCISE (default: the current one), once you have a full score."""
    from grader.learner.workspace import Progress, workspace_root

    ex = exercise_or_current(exercise, "solution")
    if not ex.solution.is_file():
        raise UsageProblem(say(lang, "the reference solutions of {course} are not installed here (a student install "
                                     "carries none): compare with your own passing code, or ask your teacher",
                               course=ex.course.name))
    progress = Progress(workspace_root())
    if progress.state(ex) != "done":
        if not force:
            done = [e for e in all_exercises() if progress.state(e) == "done"]
            last = max(done, key=lambda e: progress.entry(e).get("last", ""), default=None)
            raise UsageProblem(say(lang, "the solution of {ex} unlocks after a full score (or use --force)", ex=ex.id)
                               + (say(lang, "; the last one you solved: `grade solution {last}`", last=last.id)
                                  if last and exercise is None else ""))
        click.echo(say(lang, "Warning: reading the solution before solving it teaches much less. Try `grade hint` "
                             "first."), err=True)
    click.echo(ex.solution.read_text(encoding="utf-8"))


@main.command("watch")
@click.argument("exercise", required=False)
@click.option("--interval", type=click.FloatRange(0.05, 60), default=0.2, show_default=True,
              help="Seconds between checks for a saved file.")
@click.option("--runs", type=click.IntRange(1), help="Stop after this many gradings (for scripts).")
@click.option("--kata", "in_kata", is_flag=True, help="Watch your latest kata attempt of EXERCISE; stop at its pass.")
@no_server_option
@lang_option
def watch_cmd(exercise, interval, runs, in_kata, no_server, lang):
    """Regrade on every save. Without EXERCISE, follow the first unfinished one and move on when done."""
    from grader.learner.watch import watch

    if in_kata and not exercise:
        raise UsageProblem(say(lang, "name the kata to watch: grade watch ex05 --kata"))
    ex = exercise_or_fail(exercise) if exercise else None
    watch(ex, lang=lang, interval=interval, runs=runs, practice=kata_attempt(ex, None, True) if in_kata else None,
          server=not no_server)


@main.command("kata")
@click.argument("exercise", required=False)
@click.option("--notebook", is_flag=True, help="Write the attempt as a Jupyter notebook instead of a .py file.")
@click.option("--watch", "then_watch", is_flag=True, help="Then regrade on every save until its first full score.")
@click.option("--give-up", is_flag=True, help="Close the open attempt without a pass (it counts as forgotten).")
@lang_option
def kata_cmd(exercise, notebook, then_watch, give_up, lang):
    """Practise EXERCISE again from a fresh blank stub (default: the first kata due today).

    A new folder under practice/, a new variant where the exercise has some, a timer until the first full score.
    Your solved file and progress stay as they are."""
    from grader.learner import kata
    from grader.learner.kata_report import started_lines
    from grader.learner.workspace import workspace_root

    root = workspace_root()
    try:
        if exercise:
            ex = exercise_or_fail(exercise)
        else:
            items = kata.today(root, all_exercises())
            first = (items["open"] + items["due"] + items["new"])[:1]
            if not first:
                raise UsageProblem(say(lang, "nothing is due today: name an exercise (grade kata ex05)"))
            ex = first[0]["exercise"]
        if give_up:
            closed = kata.give_up(root, ex)
            click.echo(say(lang, "Closed attempt {n} of {ex}: it counts as forgotten, so it comes back soon.",
                           n=closed["n"], ex=ex.id) if closed else say(lang, "No attempt of {ex} is open.", ex=ex.id))
            return
        attempt = kata.start(root, ex, lang=lang, notebook=notebook)
    except kata.KataError as exc:
        raise problem(exc) from None
    click.echo("\n".join(started_lines(ex, attempt, root, lang)))
    if then_watch:
        from grader.learner.watch import watch

        watch(ex, lang=lang, interval=0.5, runs=None, practice=(root, attempt))


@main.command("today")
@click.option("--new", "new_per_day", type=click.IntRange(0, 50), default=2, show_default=True,
              help="New katas a day, besides those due.")
@json_option
@lang_option
def today_cmd(new_per_day, as_json, lang):
    """What to practise today: the katas due for review, then new ones, with an estimate of the time."""
    from grader.learner import kata
    from grader.learner.kata_report import today_lines
    from grader.learner.workspace import workspace_root

    try:
        items = kata.today(workspace_root(), all_exercises(), new_per_day)
    except kata.KataError as exc:
        raise problem(exc) from None
    if as_json:
        click.echo(json.dumps({kind: [{"exercise": i["exercise"].id, "minutes": round(i["minutes"], 1),
                                       "due": i["due"].isoformat() if i["due"] else None} for i in items[kind]]
                               for kind in ("open", "due", "new")} | {"minutes": round(items["minutes"], 1)}))
        return
    click.echo("\n".join(today_lines(items, lang)))


@main.command("stats")
@click.option("--html", "html_path", type=click.Path(path_type=Path), help="Also write a page with charts.")
@click.option("--export", "export_path", type=click.Path(path_type=Path),
              help="Write your practice data as JSON to hand to a teacher (nothing is sent anywhere).")
@json_option
@lang_option
def stats_cmd(html_path, export_path, as_json, lang):
    """Your katas: attempts, passes, hints, best time, last done, next review, chance of recall now."""
    from grader.learner import kata
    from grader.learner.kata_report import export, stats_lines, write_stats_html
    from grader.learner.workspace import workspace_root

    root = workspace_root()
    try:
        rows = kata.summary_rows(root, all_exercises())
    except kata.KataError as exc:
        raise problem(exc) from None
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False))
    else:
        click.echo("\n".join(stats_lines(rows, lang)))
    if html_path:
        click.echo(say(lang, "wrote {path}", path=write_stats_html(rows, html_path, lang)), err=as_json)
    if export_path:
        click.echo(say(lang, "wrote {path}", path=export(rows, export_path, root)), err=as_json)


@main.command("server")
@click.argument("action", type=click.Choice(["status", "start", "stop"]), default="status")
@json_option
@lang_option
def server_cmd(action, as_json, lang):
    """See, start or stop the warm grading service that makes `grade`, `watch` and `check()` answer at once."""
    import time

    from grader.service import client, address

    try:
        folder = client.service_dir()
    except address.ServiceError as exc:
        raise problem(exc) from None
    if action == "stop":
        stopped = client.stop(folder)
        click.echo(json.dumps({"stopped": stopped}) if as_json else say(lang, "Stopped the grading service.")
                   if stopped else say(lang, "No grading service was running."))
        return
    if action == "start" and not client.start(folder):
        raise UsageProblem(say(lang, "the grading service did not start"))
    info = client.status(folder)
    if as_json:
        click.echo(json.dumps(info))
    elif info is None:
        click.echo(say(lang, "No grading service is running; `grade` starts one when it grades."))
    else:
        click.echo(say(lang, "The grading service is running (pid {pid}, since {since}, {graded} gradings, "
                             "{memory} MiB resident); it stops after {idle} minutes without a grading. "
                             "Socket: {socket}",
                       pid=info["pid"], since=time.strftime("%H:%M", time.localtime(info["since"])),
                       graded=info["graded"], memory=f"{info['memory_mib']:g}", idle=f"{info['idle_stop_s'] / 60:g}",
                       socket=info["socket"]))


@main.command("notebook")
@click.argument("exercises", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Write every exercise.")
@click.option("--out", type=click.Path(path_type=Path),
              help="Notebook file (one exercise) or folder (several; default ./notebooks).")
@lang_option
def notebook_cmd(exercises, every, out, lang):
    """Write exercises as Jupyter notebooks (statement, stub cells, a checking cell)."""
    from grader.course import stub_text
    from grader.course.notebook_writer import write_notebook

    chosen = all_exercises() if every else [exercise_or_fail(e) for e in exercises]
    if not chosen:
        raise UsageProblem(say(lang, "name an exercise (grade notebook ex05) or use --all"))
    if len(chosen) == 1 and not every:
        targets = [out or Path(f"{chosen[0].name}.ipynb")]
    else:
        folder = out or Path("notebooks")
        targets = [folder / f"{ex.name}.ipynb" for ex in chosen]
    for ex, target in zip(chosen, targets):
        click.echo(say(lang, "wrote {path}", path=write_notebook(ex, stub_text.stub(ex, lang), target, lang)))


@main.command("batch")
@click.argument("submissions", type=click.Path(path_type=Path))
@click.option("--exercise", "-e", "chosen", multiple=True,
              help="Grade only these exercises (repeatable; default: those the students handed in).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("grades"), show_default=True,
              help="Folder for results.jsonl, grades.csv, index.html, feedback/ and junit.xml.")
@click.option("--workers", type=click.IntRange(1, 256), default=lambda: os.cpu_count() or 1,
              help="Submissions graded at once (default: the machine's cores).")
@click.option("--force", is_flag=True, help="Regrade what results.jsonl already holds.")
@options.seed
@options.time_limit("student code")
@options.memory("student code")
@click.option("--roster", type=click.Path(path_type=Path),
              help="CSV naming the students (folder, id, name, email...; a Canvas or Moodle export works).")
@click.option("--similarity", type=click.FloatRange(0, 1), is_flag=False, flag_value=SIMILARITY,
              help=f"List pairs of similar submissions (sharing at least this part, {SIMILARITY} alone) in "
              "similarity.html.")
@click.option("--pick", type=click.Choice(["latest"]), help="Where a student has two files for one exercise, grade "
              "the latest (default: neither, the cell needs a look; review.toml's file = ... chooses for one student).")
@click.option("--cluster", metavar="ADDRESS",
              help="Grade on a Dask cluster's workers: its scheduler's address (tcp://host:8786), a scheduler file "
              "(.json), or local:N for N worker processes here (needs the cluster extra; see docs/cluster.md).")
@click.option("--require-isolation", metavar="LAYERS",
              help="With --cluster: refuse every worker whose sandbox lacks one of these layers (comma-separated: "
              "namespaces, landlock, dedicated uid, seccomp, process limit).")
@assignment_option
@json_option
@lang_option
def batch_cmd(submissions, chosen, out, workers, force, seed, time_limit, memory, roster, similarity, pick, cluster,
              require_isolation, assignment, as_json, lang):
    """Grade SUBMISSIONS: a folder (or a download-all .zip) of one folder or .zip per student, files named
    after the exercise (ex05*.py); Canvas and Moodle downloads as they come."""
    import zipfile

    if not submissions.exists():
        raise UsageProblem(say(lang, "no such folder: {path}", path=submissions))
    if not submissions.is_dir() and not zipfile.is_zipfile(submissions):
        raise UsageProblem(say(lang, "{path} is neither a folder nor a readable zip", path=submissions))
    exercises = exercises_or_fail(chosen, assignment, default=[]) or None
    if roster:
        from grader.teacher.roster import RosterError, read_roster

        try:
            roster = read_roster(roster)
        except RosterError as exc:
            raise problem(exc) from None
    if similarity is not None:
        from grader.teacher.similarity import MissingExtra, require

        try:
            require()
        except MissingExtra as exc:
            raise problem(exc) from None
    target = cluster_target(cluster, require_isolation, lang)
    from grader.teacher.batch import run_batch
    from grader.course.exercises import current_course
    from grader.teacher.late import LateError, late_policy
    from grader.teacher.review import ReviewError, read_reviews
    from grader.cluster.dispatch import ClusterError

    try:
        late_policy(current_course(), assignment), read_reviews(out)  # a broken one: said now, before any grading
    except (LateError, ReviewError) as exc:
        raise problem(exc) from None
    try:
        summary = run_batch(submissions, exercises, out, workers=workers, force=force, roster=roster,
                            similarity=similarity, pick=pick, assignment_name=assignment, cluster=target, seed=seed,
                            lang=lang, time_limit=time_limit, memory=options.memory_bytes(memory))
    except zipfile.BadZipFile as exc:
        raise UsageProblem(say(lang, "{path} cannot be unpacked: {error}", path=submissions, error=exc)) from None
    except ClusterError as exc:
        raise problem(exc) from None
    if as_json:
        click.echo(json.dumps(summary))
    else:
        from grader.judge.result import KIND_TEXT

        kinds = Text(", ", "，").render(lang).join(f"{summary.get(k, 0)} {KIND_TEXT[k].render(lang)}"
                                                   for k in KIND_TEXT if summary.get(k) or k in ("full", "partial"))
        for reason, n in summary["regraded"].items():
            click.echo(say(lang, "{n} regraded: {reason}", n=n, reason=reason))
        click.echo(say(lang, "Graded {graded} ({kinds}); {skipped} already graded; problems noted: {problems}. "
                             "Gradebook in {out}/", graded=summary["graded"], kinds=kinds, skipped=summary["skipped"],
                       problems=summary["problems"], out=out))
    if summary["interrupted"]:
        click.echo(say(lang, "Interrupted: what was graded is kept; run the same command to go on."), err=True)
        sys.exit(130)


def cluster_target(address: str | None, layers: str | None, lang: str):
    """`--cluster` and `--require-isolation` as a grader.cluster.dispatch.Target (None without --cluster)."""
    from grader.cluster.dispatch import LAYERS, MissingExtra, Target, require

    if layers and not address:
        raise UsageProblem(say(lang, "--require-isolation goes with --cluster"))
    required = tuple(layer.strip() for layer in (layers or "").split(",") if layer.strip())
    unknown = [layer for layer in required if layer not in LAYERS]
    if unknown:
        raise UsageProblem(say(lang, "unknown isolation layer {layer} (known: {known})", layer=unknown[0],
                               known=", ".join(LAYERS)))
    if not address:
        return None
    if address.startswith("local:") and not (address[6:].isdigit() and int(address[6:]) > 0):
        raise UsageProblem(say(lang, "--cluster local:N needs a number of workers, not {value}", value=address))
    if address.endswith(".json") and not Path(address).is_file():
        raise UsageProblem(say(lang, "no such scheduler file: {path}", path=address))
    try:
        require()
    except MissingExtra as exc:
        raise problem(exc) from None
    return Target(address, required)


@main.command("export")
@click.argument("grades", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["canvas", "moodle", "csv"]), required=True,
              help="canvas: Canvas's gradebook import; moodle: Moodle's CSV grade import; csv: a plain table.")
@click.option("--out", type=click.Path(path_type=Path), help="File to write (default: GRADES/<format>.csv).")
@click.option("--column", help="One column with the total under this name (an LMS assignment), instead of one per "
              "exercise.")
@lang_option
def export_cmd(grades, fmt, out, column, lang):
    """Write the gradebook of GRADES (a `grade batch --out` folder) as a CSV an LMS imports."""
    from grader.teacher.export import ExportError, export, read_gradebook

    try:
        book = read_gradebook(grades)
    except ExportError as exc:
        raise problem(exc) from None
    out = out or grades / f"{fmt}.csv"
    try:
        warnings = export(book, fmt, out, column)
    except ExportError as exc:
        raise problem(exc) from None
    for warning in warnings:
        click.echo(say(lang, "warning: {warning}", warning=warning), err=True)
    click.echo(say(lang, "wrote {path}", path=out))


@main.command("review")
@click.argument("grades", type=click.Path(path_type=Path, file_okay=False))
@click.argument("student")
@click.argument("exercise")
@click.option("--score", type=float, help="The exercise's score, instead of the checks'.")
@click.option("--check", "checks", multiple=True, metavar="ID=passed|failed", help="Override a check's verdict "
              "(repeatable).")
@click.option("--comment", help="A comment the student reads in their feedback.")
@click.option("--file", "file", help="Of two files for the exercise, the one to grade (used by the next grade batch).")
@click.option("--by", help="Who reviews (default: $TORCH_KATAS_REVIEWER, else the login name).")
@lang_option
def review_cmd(grades, student, exercise, score, checks, comment, file, by, lang):
    """Review STUDENT's EXERCISE in GRADES (a `grade batch --out` folder): override a score or a check, add a
    comment. Kept in GRADES/review.toml with who and when, applied to every output now and after every rerun."""
    from grader.teacher.review import ReviewError, add_review, rebuild, students_of

    verdicts = {}
    for item in checks:
        cid, _, verdict = item.partition("=")
        if verdict not in ("passed", "failed"):
            raise UsageProblem(say(lang, "--check takes ID=passed or ID=failed, not {item}", item=item))
        verdicts[cid] = verdict
    if score is None and not verdicts and not comment and not file:
        raise UsageProblem(say(lang, "say what to review: --score, --check, --comment or --file"))
    students = students_of(grades)
    if students is None:
        raise UsageProblem(say(lang, "no batch in {out}: run `grade batch SUBMISSIONS --out {out}` first", out=grades))
    if student not in students:
        raise UsageProblem(say(lang, "no student {student} in {out} (the student column of grades.csv)",
                               student=student, out=grades))
    ex = exercise_or_fail(exercise)
    unknown = sorted(c for c in verdicts if c.split("[")[0] not in {d["id"] for d in ex.declared_checks()})
    if unknown:
        raise UsageProblem(say(lang, "{ex} has no check {checks} (see `grade show {ex}`)", ex=ex.id,
                               checks=", ".join(unknown)))
    try:
        add_review(grades, student, ex.id, by=by, score=score, checks=verdicts, comment=comment, file=file)
        rebuild(grades)
    except ReviewError as exc:
        raise problem(exc) from None
    click.echo(say(lang, "reviewed {student} {ex}; the gradebook in {out}/ is written again",
                   student=student, ex=ex.id, out=grades))


@main.command("gradescope")
@click.argument("exercises", nargs=-1)
@assignment_option
@click.option("--out", type=click.Path(path_type=Path), default=Path("autograder.zip"), show_default=True)
@options.time_limit("student code")
@options.memory("student code")
@lang_option
def gradescope_cmd(exercises, assignment, out, time_limit, memory, lang):
    """Build a Gradescope autograder bundle that grades EXERCISES (or an assignment, or the whole course)."""
    from grader.teacher.gradescope import build_bundle

    chosen = exercises_or_fail(exercises, assignment)
    bundle = build_bundle(chosen, out, time_limit=time_limit, memory=memory, lang=lang, assignment=assignment)
    from grader.teacher.gradescope import validated_torch

    click.echo(say(lang, "wrote {path}: upload it as the assignment's autograder", path=bundle))
    click.echo(say(lang, "It installs torch {version}, the version here (the one `grade validate` proved the checks "
                         "with).", version=validated_torch()))


@main.command("validate")
@click.argument("exercises", nargs=-1)
@click.option("--seeds", type=click.IntRange(1), default=1, show_default=True,
              help="Validate with this many seeds (0, 1, ...); without it, one random seed.")
@options.device
@click.option("--mutants", is_flag=True,
              help="Grade generated mutants of each solution instead (one slip each); list those that score full.")
@click.option("--workers", type=click.IntRange(1), default=2, show_default=True, help="Mutants graded at once.")
@assignment_option
@json_option
@lang_option
def validate_cmd(exercises, seeds, device, mutants, workers, assignment, as_json, lang):
    """Prove the checks: each solution and variant scores full, each stub and mistake scores less."""
    chosen = exercises_or_fail(exercises, assignment)
    if mutants:
        from grader.author.mutants import MINIMUM, mutation_ok, render_mutants, run_mutants

        found = run_mutants(chosen, seeds=list(range(seeds)), workers=workers, device=device)
        click.echo(json.dumps(found) if as_json else render_mutants(found, MINIMUM, lang))
        sys.exit(0 if all(mutation_ok(r, MINIMUM) for r in found) else 1)
    from grader.author.validate import render_validation, validate

    seed_list = list(range(seeds)) if seeds > 1 else [None]
    reports = [validate(ex, seed=seed, device=device) for ex in chosen for seed in seed_list]
    click.echo(json.dumps(reports) if as_json else render_validation(reports, lang))
    sys.exit(0 if all(r["ok"] for r in reports) else 1)


@main.command("new")
@click.argument("exercise_id", required=False)
@click.option("--course", "course_dir", type=click.Path(path_type=Path), required=True,
              help="The course folder (made, with a course.toml, if it does not exist yet).")
@click.option("--from-notebook", "notebook", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="An nbgrader notebook (### BEGIN SOLUTION / ### END SOLUTION): its stub and solution.")
@click.option("--title", help="The exercise's title (default: from its id, or the notebook's first heading).")
@lang_option
def new_cmd(exercise_id, course_dir, notebook, title, lang):
    """Scaffold a new exercise EXERCISE_ID in a course: stub, statement, metadata, solution, checks, a mistake."""
    from grader.author.scaffold import from_notebook, new_exercise

    if not exercise_id and not notebook:
        raise UsageProblem(say(lang, "name the exercise (grade new hw1_backprop --course my-course) or give "
                               "--from-notebook"))
    try:
        if notebook:
            written, notes = from_notebook(course_dir, notebook, exercise_id)
        else:
            written, notes = new_exercise(course_dir, exercise_id, title), []
    except CourseError as exc:
        raise problem(exc) from None
    for path in written:
        click.echo(say(lang, "wrote {path}", path=path))
    for note in notes:
        click.echo(say(lang, "note: {note}", note=note))
    name = written[0].parent.name
    click.echo(say(lang, "Next: grade --course {course} validate {name}", course=course_dir, name=name))


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


@main.command("doctor")
@json_option
@lang_option
def doctor_cmd(as_json, lang):
    """Show what isolates learner code on this machine, proved by a test sandbox."""
    from grader.sandbox.doctor import render, run_self_test

    report = run_self_test()
    click.echo(json.dumps(report) if as_json else render(report, lang))
    sys.exit(1 if any(report["managed"].values()) else 0)


def run() -> None:
    """Entry point: a grader bug ends with one line (the traceback with GRADER_DEBUG=1), exit 3."""
    try:
        main()
    except Exception as exc:  # noqa: BLE001 - click handles usage errors; this is a last resort
        if os.environ.get("GRADER_DEBUG"):
            raise
        message = say(default_lang(), "grade: internal error: {message} (GRADER_DEBUG=1 shows the traceback)",
                      message=f"{type(exc).__name__}: {exc}")
        click.echo(message, err=True)
        if "--json" in sys.argv:
            json_error({"grader_failure": True}, message, code=3)
        sys.exit(3)


if __name__ == "__main__":  # pragma: no cover
    run()
