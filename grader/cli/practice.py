"""The kata commands: `grade kata` (a fresh attempt, timed, a new variant), `grade today`, `grade stats`.

Runs in: the `grade` process. No torch.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from grader.cli.common import UsageProblem, command, exercise_or_fail, json_option, lang_option, problem
from grader.course.exercises import all_exercises
from grader.text import message_of, say

@command("kata")
@click.argument("exercise", required=False)
@click.option("--notebook", is_flag=True, help="Write the attempt as a Jupyter notebook instead of a .py file.")
@click.option("--watch", "then_watch", is_flag=True, help="Then regrade on every save until its first full score.")
@click.option("--give-up", is_flag=True,
              help="Close the open attempt without a pass (once graded, it counts as forgotten).")
@lang_option
def kata_cmd(exercise, notebook, then_watch, give_up, lang):
    """Practise EXERCISE again from a fresh blank stub (default: the first kata of `grade today`).

    A new folder under practice/, a new variant where the exercise has some, a timer until the first full score.
    An attempt still open is resumed, never replaced (--give-up closes it). Your solved file and progress stay as
    they are."""
    from grader.learner import kata
    from grader.learner.kata_report import started_lines
    from grader.learner.workspace import learner_exercises, workspace_root

    root = workspace_root()
    try:
        if exercise:
            ex = exercise_or_fail(exercise)
        else:
            items = kata.today(root, learner_exercises(), finished_ids(root))
            first = (items["open"] + items["due"] + items["new"] + items["early"])[:1]
            if not first:
                raise UsageProblem(say(lang, "nothing is due today: name an exercise you have finished "
                                             "(grade kata EXERCISE)"))
            ex = first[0]["exercise"]
        if give_up:
            closed = kata.give_up(root, ex)
            if closed is None:
                click.echo(say(lang, "No attempt of {ex} is open.", ex=ex.id))
            elif closed["gradings"]:
                click.echo(say(lang, "Closed attempt {n} of {ex}: it counts as forgotten, so it comes back soon.",
                               n=closed["n"], ex=ex.id))
            else:
                click.echo(say(lang, "Closed attempt {n} of {ex} before its first grading: it counts for nothing.",
                               n=closed["n"], ex=ex.id))
            return
        attempt = kata.start(root, ex, lang=lang, notebook=notebook)
        said = started_lines(ex, attempt, root, lang)
    except kata.AttemptOpen as exc:
        attempt, said = exc.attempt, [message_of(exc).render(lang)]
    except kata.KataError as exc:
        raise problem(exc) from None
    click.echo("\n".join(said))
    if then_watch:
        from grader.learner.watch import watch

        try:
            attempt = kata.usable(ex, attempt)
        except kata.KataError as exc:
            raise problem(exc) from None
        watch(ex, lang=lang, interval=0.5, runs=None, practice=(root, attempt))


def finished_ids(root: Path) -> set[str]:
    """The exercises the learner has finished (a full score, in the workspace or a kata): new katas come from those."""
    from grader.learner.workspace import Progress, learner_exercises

    progress = Progress(root)
    return {ex.id for ex in learner_exercises(root) if progress.state(ex) == "done"}


@command("today")
@click.option("--new", "new_per_day", type=click.IntRange(0, 50), default=2, show_default=True,
              help="New katas a day, besides those due.")
@json_option
@lang_option
def today_cmd(new_per_day, as_json, lang):
    """What to practise today: the katas due for review, then new ones, with an estimate of the time."""
    from grader.learner import kata
    from grader.learner.kata_report import today_lines
    from grader.learner.workspace import learner_exercises, workspace_root

    root = workspace_root()
    try:
        finished = finished_ids(root)
        items = kata.today(root, learner_exercises(root), finished, new_per_day)
    except kata.KataError as exc:
        raise problem(exc) from None
    if as_json:
        click.echo(json.dumps({kind: [{"exercise": i["exercise"].id, "minutes": round(i["minutes"], 1),
                                       "due": i["due"].isoformat() if i["due"] else None} for i in items[kind]]
                               for kind in ("open", "due", "new", "early")} | {"minutes": round(items["minutes"], 1)}))
        return
    click.echo("\n".join(today_lines(items, lang, len(finished))))


@command("stats")
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
        rows = kata.summary_rows(root, all_exercises(), lang)
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


COMMANDS = [kata_cmd, today_cmd, stats_cmd]
