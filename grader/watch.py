"""`grade watch`: regrade on every save; the table with the first failure marked, a hint when asked.

Each thing is said once: the table shows the first check to fix; a hint is shown the first time an
exercise fails, then only when the learner asks for the next one (`h` and Enter here, or
`grade hint` in another terminal). The process imports torch once; each regrade forks a fresh
judge, so a save is graded in a fraction of a second.
"""

from __future__ import annotations

import os
import select
import sys
import time

import click

from grader import kata, variants
from grader.exercises import Exercise, all_exercises
from grader.practice import attempt_line
from grader.report import render, use_color
from grader.source import SubmissionError, load_source
from grader.text import message_of, say
from grader.workspace import Progress, learner_file, workspace_root


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


def watch(exercise: Exercise | None, *, lang: str, interval: float, runs: int | None, practice=None) -> None:
    """Regrade `exercise` (None: follow the first unfinished one) on every save; with `practice`, a (workspace,
    attempt) of kata mode, watch that attempt's file until its first full score."""
    from grader.judge import grade, prewarm  # torch, once

    prewarm()

    follow = exercise is None
    draw = practice[1]["variant"] if practice else None
    keys = sys.stdin if sys.stdin.isatty() else None
    seen: dict[str, float | None] = {}  # exercise id -> the file's mtime when last graded
    shown: dict[str, int] = {}  # exercise id -> the hint level shown last
    failing: set[str] = set()  # exercises whose last grading had a failing check
    graded = 0
    try:
        while runs is None or graded < runs:
            progress = Progress(workspace_root())
            ex = exercise or progress.first_unfinished(all_exercises())
            if ex is None:
                click.echo(say(lang, "Every exercise is done. Well done!"))
                return
            level = max(1, progress.entry(ex).get("hints", 0)) if ex.hints else 0
            if ex.id in failing and level and shown.get(ex.id) != level:  # `grade hint` ran in another terminal
                click.echo(hint_line(ex, level, lang, draw))
                shown[ex.id] = level
            path = kata.attempt_file(*practice) if practice else learner_file(ex)
            stamp = _mtime(path)
            if ex.id in seen and seen[ex.id] == stamp:
                if asked_for_hint(keys, interval) and level:
                    shown[ex.id] = progress.next_hint(ex)
                    if practice:
                        kata.hint_used(practice[0], ex)
                    click.echo(hint_line(ex, shown[ex.id], lang, draw))
                continue
            seen[ex.id] = stamp
            if use_color():
                click.clear()
            try:
                result = grade(ex, load_source(path), lang=lang, variant=draw)
            except SubmissionError as exc:
                click.echo(f"{ex.id}: {message_of(exc).render(lang)}")
                graded += 1
                continue
            graded += 1
            if not practice:
                progress.record(ex, result)
            click.echo(render(result, lang, mark_first=True))
            if practice and not result.grader_failure:
                summary = kata.record(practice[0], ex, practice[1]["n"], result)
                click.echo(attempt_line(ex, summary, lang))
                if summary["passed_now"]:
                    return
            failing.discard(ex.id)
            if result.first_to_fix() is not None:
                failing.add(ex.id)
                if level and ex.id not in shown:
                    click.echo(hint_line(ex, level, lang, draw))
                    shown[ex.id] = level
            if result.full and follow:
                click.echo(say(lang, "{ex} is done: moving on to the next exercise.", ex=ex.id))
                exercise = None
            else:
                click.echo(say(lang, "Watching {path} (Ctrl-C to stop)...", path=path)
                           + (say(lang, " Press h and Enter for a hint.") if keys and level else ""))
    except KeyboardInterrupt:
        click.echo(say(lang, "Stopped watching."))
