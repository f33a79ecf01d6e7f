"""`grade watch`: regrade on every save; the table with the first failure marked, a hint when asked.

Each thing is said once: the table shows the first check to fix, and what changed since the last save
("+2 checks pass", the score before and after); a hint is shown the first time an exercise fails, then only
when the learner asks for the next one (`h` and Enter here, or `grade hint` in another terminal). On a
terminal the table is redrawn in place of the last one. Gradings go to the warm grading service
(grader/service/client.py); without one, this process imports torch once and forks a fresh judge per save.
In kata mode (`practice`), it watches the attempt's file, counts it in the kata, and stops at its first pass; it
shows no hint the learner did not ask for, since each one counts in the attempt.
"""

from __future__ import annotations

import os
import select
import sys
import time

import click

from grader.learner import kata
from grader.course import variants
from grader.course.exercises import Exercise
from grader.learner.kata_report import attempt_line
from grader.report.terminal import render
from grader.judge.result import Result
from grader.sandbox.source import Source, SubmissionError, load_source
from grader.text import message_of, say
from grader.learner.workspace import Progress, learner_exercises, learner_file, workspace_root


def _mtime(path) -> float | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def hint_line(ex: Exercise, level: int, lang: str, draw: dict | None = None) -> str:
    """Hint `level` (a kata attempt's `draw` may have hints of its own)."""
    hints = ex.text("hints", lang) if draw is None else variants.hints(ex, draw, lang)
    return say(lang, "Hint {i}/{n}: {hint}", i=level, n=len(hints), hint=hints[level - 1])


def asked_for_hint(keys, interval: float) -> bool:
    """Wait `interval` seconds for a line typed on the keyboard `keys`; True if one of the lines typed is `h`.
    Without a keyboard (None, or closed), just wait."""
    if keys is None:
        time.sleep(interval)
        return False
    if not select.select([keys], [], [], interval)[0]:
        return False
    typed = os.read(keys.fileno(), 4096).decode(errors="replace")  # unbuffered: every line typed so far
    if not typed:  # the keyboard closed
        time.sleep(interval)
        return False
    return "h" in (line.strip().lower() for line in typed.splitlines())


def passing(result: Result) -> set[str]:
    return {c.id for c in result.checks if c.passed}


def change_line(before: Result, after: Result, lang: str) -> str:
    """What changed since the last save: "+2 checks pass", checks that no longer pass, the score before and after."""
    gained, lost = len(passing(after) - passing(before)), len(passing(before) - passing(after))
    changes = [say(lang, "+1 check passes") if gained == 1 else say(lang, "+{n} checks pass", n=gained)
               ] if gained else []
    if lost:
        changes.append(say(lang, "1 check no longer passes") if lost == 1 else
                       say(lang, "{n} checks no longer pass", n=lost))
    return say(lang, "Since the last save: {changes}; score {before} -> {after}.",
               changes=("，" if lang == "zh" else ", ").join(changes) or say(lang, "the same checks pass"),
               before=f"{before.score:g}/{before.max_score:g}", after=f"{after.score:g}/{after.max_score:g}")


class Grader:
    """Grades by the service; without one, here (torch imported, and what judges import lazily, once)."""

    def __init__(self, server: bool):
        self.server, self.warm = server, False

    def grade(self, ex: Exercise, source: Source, lang: str, draw: dict | None = None) -> Result:
        from grader.learner.grading import grade_here
        from grader.service.client import served

        result = served(ex, source.path, {"lang": lang, "variant": draw}) if self.server else None
        if result is None:
            result = grade_here(ex, source, warm=not self.warm, lang=lang, variant=draw)
            self.warm = True
        return result


def watch(exercise: Exercise | None, *, lang: str, interval: float, runs: int | None, server: bool = True,
          practice=None) -> None:
    """Regrade `exercise` (None: follow the first unfinished one) on every save; with `practice`, a (workspace,
    attempt) of kata mode, watch that attempt's file until its first full score."""
    grader = Grader(server)
    draw = practice[1]["variant"] if practice else None
    redraw = sys.stdout.isatty()
    last: dict[str, Result] = {}  # exercise id -> its last result

    follow = exercise is None
    keys = sys.stdin if sys.stdin.isatty() else None
    seen: dict[str, float | None] = {}  # exercise id -> the file's mtime when last graded
    shown: dict[str, int] = {}  # exercise id -> the hint level shown last
    failing: set[str] = set()  # exercises whose last grading had a failing check
    graded = 0
    try:
        while runs is None or graded < runs:
            progress = Progress(workspace_root())
            ex = exercise or progress.first_unfinished(learner_exercises())
            if ex is None:
                click.echo(progress.all_finished_line(learner_exercises(), lang))
                return
            if practice:  # the hints asked for in this attempt, none unasked
                level = min(kata.hints_asked(practice[0], ex, practice[1]["n"]),
                            len(variants.hints(ex, practice[1]["variant"], lang)))
            else:
                level = max(1, progress.entry(ex).get("hints", 0)) if ex.hints else 0
            if ex.id in failing and level and shown.get(ex.id) != level:  # `grade hint` ran in another terminal
                click.echo(hint_line(ex, level, lang, draw))
                shown[ex.id] = level
            path = kata.attempt_file(*practice) if practice else learner_file(ex)
            stamp = _mtime(path)
            if ex.id in seen and seen[ex.id] == stamp:
                if asked_for_hint(keys, interval) and ex.hints:
                    used = kata.hint_used(practice[0], ex) if practice else None
                    if used is not None:
                        shown[ex.id] = min(used["hints"], len(variants.hints(ex, practice[1]["variant"], lang)))
                    elif not practice:
                        shown[ex.id] = progress.next_hint(ex)
                    if ex.id in shown:
                        click.echo(hint_line(ex, shown[ex.id], lang, draw))
                continue
            seen[ex.id] = stamp
            try:
                source = load_source(path)
            except SubmissionError as exc:
                click.echo(f"{ex.id}: {message_of(exc).render(lang)}")
                graded += 1
                continue
            result = grader.grade(ex, source, lang, draw)
            graded += 1
            if redraw:
                click.clear()  # the new table in place of the last one
            if result.grader_failure:  # not a grade: not recorded, not compared
                click.echo(say(lang, "grade: internal error: {message}", message=result.message))
                continue
            if not practice:  # a kata counts in its own state
                progress.record(ex, result)
            click.echo(render(result, lang, mark_first=True, watch=True))
            if ex.id in last:
                click.echo(change_line(last[ex.id], result, lang))
            last[ex.id] = result
            if practice:
                summary = kata.record(practice[0], ex, practice[1]["n"], result, kata.source_code(source))
                click.echo(attempt_line(ex, summary, lang))
                if summary["passed_now"]:
                    return
            failing.discard(ex.id)
            if result.first_to_fix() is not None:
                failing.add(ex.id)
                if level and ex.id not in shown:  # in a kata, the hints already asked for
                    click.echo(hint_line(ex, level, lang, draw))
                    shown[ex.id] = level
            if (result.full or progress.finished(ex)) and follow:
                click.echo(say(lang, "{ex} is done: moving on to the next exercise.", ex=ex.id) if result.done else
                           say(lang, "{ex}: moving on to the next exercise (its hidden checks are graded by your "
                                     "teacher).", ex=ex.id))
                exercise = None
            else:
                press = ""
                if keys and ex.hints:
                    press = say(lang, " Press h and Enter for a hint (it counts in this attempt).") if practice else \
                        say(lang, " Press h and Enter for a hint.")
                click.echo(say(lang, "Watching {path}: save it to grade it again (Ctrl-C to stop)...", path=path)
                           + press)
    except KeyboardInterrupt:
        click.echo(say(lang, "Stopped watching."))
