"""`grade watch`: regrade on every save, the first failing check and its hint up front.

The process imports torch once; each regrade forks a fresh judge, so a save is graded in a
fraction of a second.
"""

from __future__ import annotations

import time

import click

from grader.exercises import Exercise, all_exercises
from grader.report import render, use_color
from grader.source import SubmissionError, load_source
from grader.workspace import Progress, learner_file, workspace_root


def _mtime(path) -> float | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def headline(ex: Exercise, result: dict, progress: Progress, lang: str) -> list[str]:
    """What matters first: the score, the first failing check and the hint to try."""
    lines = [f"{ex.id} · {ex.text('title', lang)}: {result['score']:g}/{result['max_score']:g}"]
    failing = next((c for c in result["checks"] if not c["passed"] and c["outcome"] not in ("skipped", "not_run")),
                   None)
    if failing:
        lines.append(f"First to fix: {failing['title']}")
        if failing["message"]:
            lines.append(f"  {failing['message']}")
        hints = ex.text("hints", lang)
        level = max(1, progress.entry(ex).get("hints", 0))
        if hints:
            lines.append(f"Hint {level}/{len(hints)}: {hints[level - 1]}")
    lines.append("")
    return lines


def watch(exercise: Exercise | None, *, lang: str, interval: float, runs: int | None) -> None:
    from grader.judge import grade, prewarm  # torch, once

    prewarm()

    follow = exercise is None
    seen: dict[str, float | None] = {}
    graded = 0
    try:
        while runs is None or graded < runs:
            progress = Progress(workspace_root())
            ex = exercise or progress.first_unfinished(all_exercises())
            if ex is None:
                click.echo("Every exercise is done. Well done!")
                return
            path = learner_file(ex)
            stamp = _mtime(path)
            if ex.id in seen and seen[ex.id] == stamp:
                time.sleep(interval)
                continue
            seen[ex.id] = stamp
            if use_color():
                click.clear()
            try:
                result = grade(ex, load_source(path), lang=lang)
            except SubmissionError as exc:
                click.echo(f"{ex.id}: {exc}")
                graded += 1
                continue
            graded += 1
            progress.record(ex, result)
            click.echo("\n".join(headline(ex, result, progress, lang)))
            click.echo(render(result, lang))
            done = result["status"] == "graded" and result["score"] >= result["max_score"]
            if done and follow:
                click.echo(f"{ex.id} is done: moving on to the next exercise.")
                exercise = None
            else:
                click.echo(f"Watching {path} (Ctrl-C to stop)...")
    except KeyboardInterrupt:
        click.echo("Stopped watching.")
