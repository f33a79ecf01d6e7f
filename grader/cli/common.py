"""What every `grade` command shares: the CLI's language, one-line usage errors (exit 2), finding the exercises
named on the command line, the common options, and help text in the learner's language.

Runs in: the `grade` process or a fork of the front. No torch.
"""

from __future__ import annotations

import inspect
import json
import re
import sys

import click

from grader.cli import click_text, options
from grader.course.exercises import CourseError, UnknownExercise, all_exercises, find_exercise
from grader.learner.workspace import default_lang
from grader.text import LANGUAGES, Text, lang_in, message_of, say

LANG_KEY = "torch_katas.lang"  # in click's ctx.meta: the --lang found anywhere on the command line


_asked: list[str | None] = [None]  # the --lang of the command line being run, for what click prints after it ends


def remember_lang(args: list[str]) -> str | None:
    """Note the --lang of the command line `args` (read before click parses them, so that --help obeys it)."""
    _asked[0] = lang_in(args)
    return _asked[0]


def lang_asked() -> str | None:
    """The --lang of the command line being run, if it has one."""
    return _asked[0]


def cli_lang() -> str:
    """The language of the CLI's lines: the command line's --lang, else the workspace's, else the locale's."""
    ctx = click.get_current_context(silent=True)
    return (ctx.meta.get(LANG_KEY) if ctx else None) or _asked[0] or default_lang()


def command(name: str):
    """A `grade` subcommand whose --help speaks the CLI's language (`LocalCommand`)."""
    return click.command(name, cls=LocalCommand)


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


lang_option = click.option("--lang", type=click.Choice(LANGUAGES), default=cli_lang,
                           help="Language of statements, hints and messages (default: from the locale).")


json_option = options.as_json


assignment_option = options.assignment


no_server_option = options.no_server


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
                if isinstance(param, click.Option) and (record := param.get_help_record(ctx))]
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


def json_error(fields: dict, message: str, code: int = 2) -> None:
    """`--json` prints a result for every outcome: bad input is status "error" with its one-line message."""
    click.echo(json.dumps({"status": "error", "score": 0.0, "max_score": 0.0, "checks": [], "notes": [], "output": "",
                           **fields, "message": message}, ensure_ascii=False))
    sys.exit(code)
