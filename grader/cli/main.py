"""The `grade` command: one group, its commands by audience (learner.py, practice.py, teacher.py, author.py), and
`run`, the entry of a command run here. Imports torch only when something is graded.

    grade ex05                  grade your exercises/ex05_*/ex05_*.py
    grade ex05 --file my.py     grade any file as ex05
    grade list                  the exercises
    grade batch SUBMISSIONS     a teacher's gradebook of a class
    grade validate              prove every check: solutions full, stubs and mistakes less

`grade --course PATH|NAME ...` works on another course than the built-in exercises.

Runs in: the `grade` process, or a fork of the warm service's front (front.py).
"""

from __future__ import annotations

import os
import sys

import click

from grader.cli import author, click_text, learner, practice, teacher
from grader.cli.common import LANG_KEY, LocalCommand, cli_lang, json_error, problem, remember_lang
from grader.course.exercises import CourseError, UnknownExercise, course_from, use_course
from grader.learner.workspace import default_lang
from grader.text import LANGUAGES, say

click_text.install(cli_lang)

SECTIONS = {
    "For learners": ["check", "list", "show", "next", "hint", "watch", "reset", "solution", "init", "lang",
                     "notebook", "server"],
    "Practice (katas)": ["kata", "today", "stats"],
    "For teachers": ["batch", "review", "export", "gradescope", "release", "doctor"],
    "For course authors": ["new", "validate"],
}


class GradeGroup(LocalCommand, click.Group):
    """`grade ex05 ...` is short for `grade check ex05 ...`; `--help` lists the commands by who uses them."""

    command_class = LocalCommand

    def parse_args(self, ctx, args):
        ctx.meta[LANG_KEY] = remember_lang(args)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "check", self.commands["check"], args
        return super().resolve_command(ctx, args)

    def invoke(self, ctx):
        """A course that cannot be read, wherever a command meets it, is bad input: one line, exit 2."""
        try:
            return super().invoke(ctx)
        except (CourseError, UnknownExercise) as exc:
            raise problem(exc) from None

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
    warm service's front runs for a client, on its terminal (front.py)."""
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
    from grader.version import __version__

    click.echo(say(cli_lang(), "{prog}, version {version}", prog=ctx.info_name or "grade", version=__version__))
    ctx.exit()


for audience in (learner, practice, teacher, author):
    for command in audience.COMMANDS:
        main.add_command(command)


def run(prog_name: str | None = None) -> None:
    """Entry point: a grader bug ends with one line (the traceback with GRADER_DEBUG=1), exit 3. `prog_name`: how
    the usage lines name the command (click's guess from sys.argv[0] where None)."""
    try:
        main(prog_name=prog_name)
    except Exception as exc:  # click handles usage errors; this is a last resort
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
