"""The learner's commands: grade an exercise (`grade ex05`), list, show, next, hint, init, lang, reset, solution,
watch, notebook, and the warm service's status.

Runs in: the `grade` process, or a fork of the warm service's front (a single grading). No torch but for a grading
here, through the judge.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from grader.cli import options
from grader.cli.common import (
    UsageProblem,
    cli_lang,
    command,
    exercise_or_current,
    exercise_or_fail,
    json_error,
    json_option,
    lang_asked,
    lang_option,
    assignment_option,
    no_server_option,
    problem,
)
from grader.course.exercises import CourseError, all_exercises, course_from, current_course, use_course
from grader.report.terminal import display_width, hint_lines, pad, use_color
from grader.text import LANGUAGES, locale_lang, message_of, say

@command("check")
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
    from grader.learner.grading import grade
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
    kata_line = kata_record(ex, practice, result, source, lang) if practice else None
    if report:
        from grader.report.pages import write_report

        write_report([result], report, f"{ex.id} · {result.title.render(lang)}", lang=lang)
    if as_json:
        click.echo(to_json(result))
    else:
        click.echo(render(result, lang, kata=practice is not None))
        if kata_line:
            click.echo(kata_line)
        elif file is not None:
            click.echo(say(lang, "Recorded in your progress ({workspace}).", workspace=workspace) if workspace else
                       say(lang, "Not recorded in your progress: {file} is neither your workspace's file of {ex} nor "
                                 "a notebook in a workspace.", file=file, ex=ex.id))
        if report:
            click.echo(say(lang, "wrote {path}", path=report))
    sys.exit(0 if result.full else 1)



def kata_attempt(ex, file, latest: bool):
    """(workspace, attempt) of the kata attempt a grading is for: the latest one with --kata, else the one whose
    practice folder holds `file`; None for a grading outside kata mode."""
    from grader.learner import kata
    from grader.learner.workspace import workspace_root

    try:
        found = (workspace_root(), kata.current(workspace_root(), ex)) if latest else \
            kata.attempt_of(ex, file) if file is not None else None
        if found is not None and found[1] is not None:
            found = found[0], kata.usable(ex, found[1])
    except kata.KataError as exc:
        raise problem(exc) from None
    if found is not None and found[1] is None:
        raise UsageProblem(say(cli_lang(), "no kata of {ex} started yet: `grade kata {ex}` starts one", ex=ex.id))
    return found


def kata_file(practice) -> Path:
    from grader.learner.kata import attempt_file

    return attempt_file(*practice)


def kata_record(ex, practice, result, source, lang: str) -> str:
    """Count a kata grading (of `source`) in the kata state; the line that says where the attempt stands."""
    from grader.learner.kata import record, source_code
    from grader.learner.kata_report import attempt_line

    if result.grader_failure:
        return ""
    return attempt_line(ex, record(practice[0], ex, practice[1]["n"], result, source_code(source)), lang)


def progress_bar(done: int, total: int, lang: str, width: int = 30, public: int = 0) -> str:
    """The bar of exercises done; in a release, also those whose public checks pass (never counted done)."""
    filled = round(width * done / total) if total else 0
    bar = f"[{'#' * filled}{'-' * (width - filled)}] " + say(lang, "{done}/{total} done", done=done, total=total)
    return bar + (say(lang, ", {n} with their public checks passing", n=public) if public else "")


STATES = {"done": ("✓", "green"), "public checks pass": ("◐", "cyan"), "no public check": ("?", None),
          "in progress": ("…", "yellow"), "not started": (" ", None)}


@command("list")
@click.option("--track", metavar="NAME", help="Only this track's exercises (default: the workspace's tracks).")
@click.option("--all", "every", is_flag=True, help="Every track's exercises, also those the workspace does not follow.")
@json_option
@lang_option
def list_cmd(track, every, as_json, lang):
    """List the exercises in teaching order, track by track, with your progress."""
    from grader.learner.workspace import Progress, learner_exercises, workspace_root

    from grader.learner.kata import KataError, State
    from grader.learner.kata_report import kata_cells

    course = current_course()
    try:
        exercises = [ex for ex in all_exercises() if ex.name in course.track(track).exercises] if track else \
            all_exercises() if every else learner_exercises()
    except CourseError as exc:
        raise problem(exc) from None
    progress = Progress(workspace_root())
    try:
        katas = State(workspace_root()).load()["katas"]
    except KataError as exc:
        raise problem(exc) from None
    if as_json:
        cells = ("attempts", "hints", "best_time", "due")
        click.echo(json.dumps([{**ex.as_dict(lang), "state": progress.state(ex), "best": progress.entry(ex).get("best"),
                                "track": getattr(course.track_of(ex), "name", None),
                                "kata": dict(zip(cells, kata_cells(katas.get(ex.id, {}))))}
                               for ex in exercises], ensure_ascii=False))
        return
    color = use_color()
    states = {state: say(lang, state) for state in STATES}
    shown = {progress.state(ex) for ex in exercises} | {"done", "in progress", "not started"}
    state_width = max(display_width(states[state]) for state in shown)
    width = max(display_width(ex.text("title", lang)) for ex in exercises) + 2
    heading = None
    for ex in exercises:
        here = course.track_of(ex)
        if len(course.tracks) > 1 and here is not None and here != heading:
            if heading is not None:
                click.echo("")
            heading = here
            of_track = [e for e in exercises if e.name in here.exercises]
            click.echo(click.style(say(lang, "Track {name}: {title}", name=here.name, title=here.text(lang)), bold=True)
                       if color else say(lang, "Track {name}: {title}", name=here.name, title=here.text(lang)))
            click.echo("  " + progress_bar(sum(progress.state(e) == "done" for e in of_track), len(of_track), lang))
        state = progress.state(ex)
        mark = click.style(STATES[state][0], fg=STATES[state][1]) if color else pad(states[state], state_width)
        best = f"{progress.entry(ex).get('best', 0):g}/{ex.points:g}" if state == "in progress" else ""
        attempts, hints, best_time, due = kata_cells(katas.get(ex.id, {}))
        practice = say(lang, "kata: {attempts} attempt(s), {hints} hint(s), best {best}, due {due}", attempts=attempts,
                       hints=hints, best=best_time, due=due) if attempts else ""
        click.echo(f"{mark} {ex.id}  {pad(ex.text('title', lang), width)}{'*' * ex.difficulty:<4} {pad(best, 6)}"
                   f"{practice}".rstrip())
    states_now = [progress.state(ex) for ex in exercises]
    public = states_now.count("public checks pass")
    click.echo(progress_bar(states_now.count("done"), len(exercises), lang, public=public))
    hidden = sum(ex.hidden_points for ex in exercises)
    if hidden:
        click.echo(say(lang, "Public checks run here; the hidden checks (points: {points}) are graded by your teacher, "
                             "so an exercise here is done only then.", points=f"{hidden:g}"))
    click.echo(say(lang, "Stars: difficulty, from * (gentle) to *** (hard)."))
    others = [t for t in course.tracks if not any(ex.name in t.exercises for ex in exercises)]
    if others and not track:
        click.echo(say(lang, "Also: {tracks} (`grade list --all`; `grade init --track NAME` adds a track's stubs).",
                       tracks=", ".join(t.name for t in others)))


@command("show")
@click.argument("exercise", required=False)
@assignment_option
@json_option
@lang_option
def show_cmd(exercise, assignment, as_json, lang):
    """Show the statement of EXERCISE (default: the current one)."""
    ex = exercise_or_fail(exercise, assignment) if exercise and assignment else exercise_or_current(exercise, "show")
    from grader.course.collection import CollectionError, collected_checks  # imports the checks module, and so torch
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


@command("next")
@json_option
@lang_option
@click.pass_context
def next_cmd(ctx, as_json, lang):
    """Show the first exercise you have not finished."""
    from grader.learner.workspace import Progress, current_exercise, learner_exercises, workspace_root

    ex = current_exercise()
    if ex is None:
        done = Progress(workspace_root()).all_finished_line(learner_exercises(), lang)
        click.echo(json.dumps(None) if as_json else done)
        return
    ctx.invoke(show_cmd, exercise=ex.id, assignment=None, as_json=as_json, lang=lang)


@command("hint")
@click.argument("exercise", required=False)
@click.option("--all", "show_all", is_flag=True, help="Show every hint.")
@json_option
@lang_option
def hint_cmd(exercise, show_all, as_json, lang):
    """Reveal the next hint for EXERCISE (default: the current one); each call one more, gentle to strong."""
    from grader.course import variants
    from grader.learner.workspace import Progress, workspace_root

    ex = exercise_or_current(exercise, "hint")
    attempt = count_kata_hint(ex)  # an open kata attempt: its draw's hints, counted in it
    hints = ex.text("hints", lang) if attempt is None else variants.hints(ex, attempt["variant"], lang)
    if show_all:
        shown = len(hints)
    elif attempt is not None:
        shown = min(attempt["hints"], len(hints))
    else:
        shown = Progress(workspace_root()).next_hint(ex)
    if as_json:
        click.echo(json.dumps({"exercise": ex.id, "hints": hints[:shown], "total": len(hints)}, ensure_ascii=False))
        return
    if exercise is None:
        click.echo(f"{ex.id} · {ex.text('title', lang)}")
    click.echo("\n".join(hint_lines(hints, shown, lang, again=f"`grade hint {ex.id}`")))


def count_kata_hint(ex) -> dict | None:
    """A hint asked for while a kata attempt of `ex` is open counts in that attempt; return it (else None)."""
    from grader.learner.kata import KataError, hint_used, usable
    from grader.learner.workspace import workspace_root

    try:
        attempt = hint_used(workspace_root(), ex)
        return usable(ex, attempt) if attempt is not None else None
    except KataError as exc:
        raise problem(exc) from None


@command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=".")
@click.option("--course", "course", metavar="PATH|NAME",
              help="The course to work on (default: the built-in exercises).")
@click.option("--track", "tracks", multiple=True, metavar="NAME",
              help="Only this track's exercises (repeat for more; `grade list` names the tracks). In a workspace that "
                   "follows some tracks, adds this one.")
@lang_option
@click.pass_context
def init_cmd(ctx, directory, course, tracks, lang):
    """Create a workspace in DIRECTORY with every exercise's stub (of the course, with --course; of some tracks, with
    --track); it speaks the language of --lang from then on, without --lang the locale's."""
    from grader.learner.workspace import init_workspace

    if course:
        try:
            use_course(course_from(course))
        except CourseError as exc:
            raise problem(exc) from None
    try:
        chosen = ctx.get_parameter_source("lang") == click.core.ParameterSource.COMMANDLINE or lang_asked()
        spoken = current_course().languages
        if not chosen:  # the locale's language, where the course speaks it
            lang = locale_lang() if locale_lang() in spoken else "en"
        stubs = init_workspace(directory, lang, tracks=list(tracks))
    except FileExistsError:
        raise UsageProblem(say(lang, "{path} already exists: pick an empty folder",
                               path=directory / "exercises")) from None
    except CourseError as exc:
        raise problem(exc) from None
    if (directory / "exercises").is_dir() and len(stubs) < len(list((directory / "exercises").iterdir())):
        click.echo(say(lang, "Added {n} exercises to the workspace in {folder}.", n=len(stubs), folder=directory))
        return
    click.echo(say(lang, "Created a workspace with {n} exercises in {folder}.", n=len(stubs), folder=directory))
    if not chosen and len(spoken) > 1:
        click.echo(say(lang, "It speaks {lang}, from your locale: `grade lang {other}` changes it.", lang=lang,
                       other="zh" if lang == "en" else "en"))
    click.echo(say(lang, "Next: cd {folder} && grade next", folder=directory))


@command("lang")
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


@command("reset")
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


@command("solution")
@click.argument("exercise", required=False)
@click.option("--force", is_flag=True, help="Show it before you have solved the exercise.")
@lang_option
def solution_cmd(exercise, force, lang):
    """Show the reference solution of EXERCISE (default: the current one), explained, once you have a full score."""
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
    click.echo("\n".join(solution_lines(ex, lang)))


def solution_lines(ex, lang: str) -> list[str]:
    """The explained solution: the idea, the code with its comments in `lang`, the mistakes it avoids (each with its
    key's meaning); for the draw of the learner's last kata of `ex` when it passed, else the exercise as written."""
    from grader.course import explained, variants
    from grader.learner import kata
    from grader.learner.workspace import workspace_root

    try:
        last = kata.latest_attempt(kata.State(workspace_root()).kata(ex))
        shown = explained.explanation(ex, lang, kata.usable(ex, last)["variant"] if last and last.get("passed")
                                      else None)
    except (kata.KataError, explained.ExplainError) as exc:
        raise problem(exc) from None
    lines = [say(lang, "{ex} · {title}: the reference solution", ex=ex.id, title=ex.text("title", lang))]
    if last and last.get("passed") and len(variants.all_draws(ex)) > 1:
        lines.append(say(lang, "For the variant of your last kata: {variant}.",
                         variant=variants.describe(kata.usable(ex, last)["variant"], lang)))
    if shown["idea"]:
        lines += ["", say(lang, "The idea:"), *("  " + line for line in shown["idea"].splitlines())]
    lines += ["", shown["code"].rstrip("\n")]
    if shown["avoids"]:
        lines += ["", say(lang, "The mistakes it avoids:")]
        lines += ["  - " + say(lang, "{text} (mistake `{key}`: {meaning})", text=item["text"], key=item["key"],
                              meaning=item["meaning"]) for item in shown["avoids"]]
    return lines


@command("watch")
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


@command("server")
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


@command("notebook")
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


COMMANDS = [check_cmd, list_cmd, show_cmd, next_cmd, hint_cmd, init_cmd, lang_cmd, reset_cmd, solution_cmd, watch_cmd,
            notebook_cmd, server_cmd]
