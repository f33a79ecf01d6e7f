"""The teacher's commands: grade a class (`grade batch`), review, export to an LMS, Gradescope bundles, and
`grade doctor`, which proves the sandbox on this machine.

Runs in: the `grade` process; `grade batch` becomes the warm parent that forks the judges (teacher/batch.py).
"""

from __future__ import annotations

import json
import math
import os
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
from grader.text import Text, message_of, say

SIMILARITY = 0.8  # independent correct ex14 solutions share at most 0.46, disguised copies 1 (bench_similarity.py)


@command("batch")
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
@click.option("--cluster-timeout", type=click.FloatRange(1), metavar="SECONDS",
              help="With --cluster: how long to wait while no worker can grade before stopping (keeping what is "
              "done; default 600).")
@click.option("--require-isolation", metavar="LAYERS",
              help="With --cluster: refuse every worker whose sandbox lacks one of these layers (comma-separated: "
              "namespaces, landlock, dedicated uid, seccomp, process limit).")
@click.option("--isolation", type=click.Choice(["files", "none"]), default="files", show_default=True,
              help="none: grade even where nothing keeps student code from the files you can read (the portable "
              "backend off macOS, a container refusing namespaces and Landlock; see `grade doctor`).")
@click.option("--collected-at", "collected", metavar="DATE-TIME",
              help="When the files were collected, with its offset (2026-03-02T10:00+08:00): the submission time of "
              "every file the LMS gave no time for (never the files' own times).")
@assignment_option
@json_option
@lang_option
def batch_cmd(submissions, chosen, out, workers, force, seed, time_limit, memory, roster, similarity, pick, cluster,
              cluster_timeout, require_isolation, isolation, collected, assignment, as_json, lang):
    """Grade SUBMISSIONS: a folder (or a download-all .zip) of one folder or .zip per student, files named
    after the exercise (ex05*.py); Canvas and Moodle downloads as they come."""
    import zipfile

    if not submissions.exists():
        raise UsageProblem(say(lang, "no such folder: {path}", path=submissions))
    if not submissions.is_dir() and not zipfile.is_zipfile(submissions):
        raise UsageProblem(say(lang, "{path} is neither a folder nor a readable zip", path=submissions))
    exercises = exercises_or_fail(chosen, assignment, default=[]) or None
    collected = collected and instant(collected, lang)
    if roster:
        from grader.teacher.roster import RosterError, read_roster

        try:
            roster = read_roster(roster)
        except RosterError as exc:
            raise problem(exc) from None
    target = cluster_target(cluster, require_isolation, lang, cluster_timeout)
    if target is None and isolation != "none":
        refuse_without_file_walls(lang)
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
                            lang=lang, time_limit=time_limit, memory=options.memory_bytes(memory), collected=collected,
                            isolation=isolation)
    except zipfile.BadZipFile as exc:
        raise UsageProblem(say(lang, "{path} cannot be unpacked: {error}", path=submissions, error=exc)) from None
    except (ClusterError, LateError) as exc:
        raise problem(exc) from None
    for line in summary["late_problems"]:  # the LMS and our due date disagree: loud, one line per student
        click.echo(say(lang, "warning: {warning}", warning=line), err=True)
    if summary["undecided"]:
        click.echo(Text("warning: a due date, but {n} files with no submission time (no LMS record, no "
                        "--collected-at): not judged late",
                        "警告：有截止时间，但有 {n} 个文件没有提交时间（没有 LMS 记录，也没有 "
                        "--collected-at）：不判为迟交",
                        n=summary["undecided"]).render(lang), err=True)
    if as_json:
        click.echo(json.dumps(summary))
    else:
        from grader.judge.result import KIND_TEXT

        kinds = Text(", ", "，").render(lang).join(f"{summary.get(k, 0)} {KIND_TEXT[k].render(lang)}"
                                                   for k in KIND_TEXT if summary.get(k) or k in ("full", "partial"))
        for reason, n in summary["regraded"].items():
            click.echo(say(lang, "{n} regraded: {reason}", n=n, reason=reason))
        for change in summary["changed"]:
            click.echo(Text("{student} {ex}: score {before} -> {after}", "{student} {ex}：分数 {before} -> {after}",
                            student=change["student"], ex=change["exercise"], before=score_word(change["from"], lang),
                            after=score_word(change["to"], lang)).render(lang))
        click.echo(say(lang, "Graded {graded} ({kinds}); {skipped} already graded; problems noted: {problems}. "
                             "Gradebook in {out}/", graded=summary["graded"], kinds=kinds, skipped=summary["skipped"],
                       problems=summary["problems"], out=out))
    if summary["interrupted"]:
        click.echo(say(lang, "Interrupted: what was graded is kept; run the same command to go on."), err=True)
        sys.exit(130)
    if summary["stopped"]:
        click.echo(say(lang, "grade: {message}", message=summary["stopped"]), err=True)
        sys.exit(124)


def instant(text: str, lang: str) -> str:
    """`--collected-at`'s ISO 8601 text, with an offset, as ISO 8601; a time without a zone is refused."""
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageProblem(Text("--collected-at {value} is not a date-time (2026-03-02T10:00+08:00)",
                                "--collected-at {value} 不是日期时间（2026-03-02T10:00+08:00）",
                                value=text).render(lang)) from None
    if moment.tzinfo is None:
        raise UsageProblem(Text("--collected-at {value} has no time zone: write its offset (2026-03-02T10:00+08:00)",
                                "--collected-at {value} 没有时区：请写上偏移（2026-03-02T10:00+08:00）",
                                value=text).render(lang))
    return moment.isoformat()


def score_word(score: float | None, lang: str) -> str:
    """A score as a rerun lists its change: the number, or 'blank'."""
    return Text("blank", "空").render(lang) if score is None else f"{score:g}"


def cluster_target(address: str | None, layers: str | None, lang: str, timeout: float | None = None):
    """`--cluster`, `--require-isolation` and `--cluster-timeout` as a grader.cluster.dispatch.Target (None without
    --cluster)."""
    from grader.cluster.dispatch import LAYERS, TIMEOUT, MissingExtra, Target, require

    if layers and not address:
        raise UsageProblem(say(lang, "--require-isolation goes with --cluster"))
    if timeout is not None and not address:
        raise UsageProblem(say(lang, "--cluster-timeout goes with --cluster"))
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
    return Target(address, required, TIMEOUT if timeout is None else timeout)


@command("export")
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


@command("review")
@click.argument("grades", type=click.Path(path_type=Path, file_okay=False))
@click.argument("student", required=False)
@click.argument("exercise", required=False)
@click.option("--score", type=float, help="The exercise's score, instead of the checks' (up to its points).")
@click.option("--bonus", is_flag=True, help="With --score: a score above the exercise's points, given as a bonus (said "
              "so wherever the review is shown).")
@click.option("--check", "checks", multiple=True, metavar="ID=passed|failed", help="Override a check's verdict "
              "(repeatable).")
@click.option("--comment", help="A comment the student reads in their feedback.")
@click.option("--apply", "apply", multiple=True, metavar="ITEM", help="Apply a rubric item of the exercise "
              "(repeatable; defined with --item).")
@click.option("--item", metavar="EXERCISE:NAME", help="With GRADES alone: define (or change, for every submission "
              "that has it) a rubric item, with --points, --text and any --check it overrides.")
@click.option("--points", type=float, help="With --item: the item's points, relative to the checks' score (-2, 1).")
@click.option("--text", "item_text", help="With --item: what the student reads.")
@click.option("--file", "file", help="Of two files for the exercise, the one to grade (used by the next grade batch).")
@click.option("--confirm", is_flag=True, help="Keep the review of a file the student has since replaced (no longer "
              "stale).")
@click.option("--by", help="Who reviews, as students read it (default: $TORCH_KATAS_REVIEWER, else course.toml's "
              "reviewer, else nobody is named).")
@click.option("--serve", is_flag=True, help="Review in a browser instead: a page on 127.0.0.1, by student or by "
              "mistake (needs the review extra).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="With --serve: the port (default: a free one).")
@lang_option
def review_cmd(grades, student, exercise, score, bonus, checks, comment, apply, item, points, item_text, file,
               confirm, by, serve, port, lang):
    """Review STUDENT's EXERCISE in GRADES (a `grade batch --out` folder): override a score or a check, add a
    comment. Kept in GRADES/review.toml with who, when and of which file, applied to every output now and after every
    rerun. With --serve, review in a browser instead."""
    from grader.course.exercises import current_course

    grades_course(grades, lang)
    by = by or os.environ.get("TORCH_KATAS_REVIEWER") or current_course().reviewer
    if serve:
        if student or score is not None or bonus or checks or comment or apply or item or file or confirm:
            raise UsageProblem(say(lang, "--serve takes GRADES alone: the page reviews every student"))
        return serve_review(grades, port, by, lang)
    from grader.teacher.gradebook import batch_state, read_results, rebuild
    from grader.teacher.review import (ReviewError, add_review, closest, locked, read_items, score_problem,
                                       students_of)

    if item:
        return define_item(grades, student, item, points, item_text, checks, by, lang)
    if points is not None or item_text:
        raise UsageProblem(say(lang, "--points and --text go with --item"))
    if not exercise:
        raise UsageProblem(say(lang, "say which STUDENT and EXERCISE to review, or --serve for the review page"))

    verdicts = {}
    for item in checks:
        cid, _, verdict = item.partition("=")
        if verdict not in ("passed", "failed"):
            raise UsageProblem(say(lang, "--check takes ID=passed or ID=failed, not {item}", item=item))
        verdicts[cid] = verdict
    if score is None and not verdicts and not comment and not apply and not file and not confirm:
        raise UsageProblem(say(lang, "say what to review: --score, --check, --comment, --apply, --file or --confirm"))
    if bonus and score is None:
        raise UsageProblem(say(lang, "--bonus goes with --score"))
    students = students_of(grades)
    if students is None:
        raise UsageProblem(say(lang, "no batch in {out}: run `grade batch SUBMISSIONS --out {out}` first", out=grades))
    if student not in students:
        raise UsageProblem(say(lang, "no student {student} in {out} (the student column of grades.csv)",
                               student=student, out=grades) + closest(student, students).render(lang))
    try:
        batch_exercises = batch_state(grades)["exercises"]
    except ReviewError as exc:
        raise problem(exc) from None
    from grader.course.exercises import UnknownExercise, find_in

    try:
        ex = find_in(batch_exercises, exercise)  # an id, a name, a number or a unique prefix, of this batch's
    except UnknownExercise as exc:
        if sum(exercise.lower() in (e.id.lower()[:len(exercise)], e.name.lower()[:len(exercise)])
               for e in batch_exercises) > 1:
            raise problem(exc) from None  # a prefix of several: say which
        raise UsageProblem(say(lang, "no exercise {ex} in {out} (its exercises: {exercises})", ex=exercise,
                               out=grades, exercises=", ".join(e.id for e in batch_exercises))
                           + closest(exercise, [e.id for e in batch_exercises]).render(lang)) from None
    if score is not None and (why := score_problem(score, ex, bonus)):
        raise UsageProblem(why.render(lang))
    try:
        defined = [name for e, name in read_items(grades) if e == ex.id]
    except ReviewError as exc:
        raise problem(exc) from None
    for name in apply:
        if name not in defined:
            raise UsageProblem(say(lang, "{ex} has no rubric item {item} (define it with --item {ex}:{item})",
                                   ex=ex.id, item=name) + closest(name, defined).render(lang))
    unknown = sorted(c for c in verdicts if c.split("[")[0] not in {d["id"] for d in ex.declared_checks()})
    if unknown:
        raise UsageProblem(say(lang, "{ex} has no check {checks} (see `grade show {ex}`)", ex=ex.id,
                               checks=", ".join(unknown)))
    graded = next((r for r in read_results(grades / "results.jsonl") if (r.student, r.exercise) == (student, ex.id)),
                  None)
    try:
        with locked(grades):  # the review page may be writing too
            add_review(grades, student, ex.id, by=by, score=score, bonus=bonus or None, checks=verdicts,
                       comment=comment, items=list(apply) or None, file=file,
                       sha256=graded.sha256 if graded else None)
            rebuild(grades)
    except ReviewError as exc:
        raise problem(exc) from None
    click.echo(say(lang, "reviewed {student} {ex}; the gradebook in {out}/ is written again",
                   student=student, ex=ex.id, out=grades))


def grades_course(grades: Path, lang: str) -> None:
    """Make the course a grades folder was graded in (batch.json's `course`) the one every command sees, wherever
    the command runs; `grade --course` (or TORCH_KATAS_COURSE) still decides."""
    from grader.course.exercises import CourseError, course_from, use_course
    from grader.teacher.review import STATE_FILE

    if click.get_current_context().find_root().params.get("course"):
        return
    try:
        spec = json.loads((grades / STATE_FILE).read_text(encoding="utf-8")).get("course")
    except (OSError, ValueError, AttributeError):
        return  # no batch there (said where it matters), or one from before courses were recorded
    if spec:
        try:
            use_course(course_from(spec))
        except CourseError as exc:
            raise UsageProblem(Text("{out} was graded in the course {course}, which cannot be read now ({error}): "
                                    "name it with grade --course", "{out} 是在课程 {course} 中评分的，但现在读不到它"
                                    "（{error}）：请用 grade --course 指定", out=grades, course=spec,
                                    error=message_of(exc)).render(lang)) from None


def define_item(grades: Path, student: str | None, item: str, points: float | None, text: str | None,
                checks: tuple[str, ...], by: str | None, lang: str) -> None:
    """`grade review GRADES --item EXERCISE:NAME --points P --text T [--check ID=passed|failed]`: a rubric item
    defined, or changed for every submission that has it."""
    from grader.course.exercises import UnknownExercise, find_in
    from grader.teacher.gradebook import batch_state, rebuild
    from grader.teacher.review import ReviewError, add_item, closest, locked

    key, _, name = item.partition(":")
    if student or not key or not name.strip() or points is None or not math.isfinite(points):
        raise UsageProblem(say(lang, "--item takes EXERCISE:NAME with GRADES alone, and --points (a number)"))
    try:
        exercises = batch_state(grades)["exercises"]
        ex = find_in(exercises, key)
    except ReviewError as exc:
        raise problem(exc) from None
    except UnknownExercise:
        raise UsageProblem(say(lang, "no exercise {ex} in {out} (its exercises: {exercises})", ex=key, out=grades,
                               exercises=", ".join(e.id for e in exercises))
                           + closest(key, [e.id for e in exercises]).render(lang)) from None
    verdicts = dict(c.partition("=")[::2] for c in checks)
    declared = {d["id"] for d in ex.declared_checks()}
    wrong = sorted(f"{c}={v}" for c, v in verdicts.items() if v not in ("passed", "failed")
                   or c.split("[")[0] not in declared)
    if wrong:
        raise UsageProblem(say(lang, "{ex} has no check {checks} (see `grade show {ex}`)", ex=ex.id,
                               checks=", ".join(wrong)))
    try:
        with locked(grades):
            add_item(grades, ex.id, name.strip(), points, text or "", by, verdicts)
            rebuild(grades)
    except ReviewError as exc:
        raise problem(exc) from None
    click.echo(say(lang, "rubric item {item} of {ex} ({points}); the gradebook in {out}/ is written again",
                   item=name.strip(), ex=ex.id, points=f"{points:+g}", out=grades))


def serve_review(grades: Path, port: int, by: str | None, lang: str) -> None:
    """`grade review GRADES --serve`: the review page until Ctrl-C."""
    from grader.teacher.review import ReviewError
    from grader.teacher.review_app import MissingExtra, serve

    def announce(url: str) -> None:
        click.echo(say(lang, "The review page of {out}, to open in a browser on this machine (Ctrl-C stops it):",
                       out=grades))
        click.echo(url)

    if not grades.is_dir():
        raise UsageProblem(say(lang, "no batch in {out}: run `grade batch SUBMISSIONS --out {out}` first", out=grades))
    try:
        serve(grades, port, lang, by, announce)
    except KeyboardInterrupt:  # uvicorn stops serving, then passes Ctrl-C on: the page's work is all written
        click.echo(say(lang, "The review page stopped."))
    except (MissingExtra, ReviewError) as exc:
        raise problem(exc) from None
    except OSError as exc:
        raise UsageProblem(say(lang, "cannot listen on 127.0.0.1:{port}: {error}", port=port,
                               error=exc.strerror or exc)) from None


@command("gradescope")
@click.argument("exercises", nargs=-1)
@assignment_option
@click.option("--out", type=click.Path(path_type=Path), default=Path("autograder.zip"), show_default=True)
@options.time_limit("student code")
@options.memory("student code")
@lang_option
def gradescope_cmd(exercises, assignment, out, time_limit, memory, lang):
    """Build a Gradescope autograder bundle that grades EXERCISES (or an assignment, or the whole course)."""
    from grader.teacher.gradescope import BundleError, build_bundle

    chosen = exercises_or_fail(exercises, assignment)
    try:
        bundle = build_bundle(chosen, out, time_limit=time_limit, memory=memory, lang=lang, assignment=assignment)
    except BundleError as exc:
        raise problem(exc) from None
    from grader.teacher.gradescope import validated_torch

    click.echo(say(lang, "wrote {path}: upload it as the assignment's autograder", path=bundle))
    click.echo(say(lang, "It installs torch {version}, the version here (the one `grade validate` proved the checks "
                         "with).", version=validated_torch()))


def refuse_without_file_walls(lang: str) -> None:
    """A batch grades students' code beside the teacher's files: refused where no layer keeps it from them."""
    from grader.sandbox import backend

    if not backend.file_walls():
        raise UsageProblem(Text(
            "nothing here keeps student code from the files you can read (the {backend} isolation backend, with "
            "neither namespaces nor Landlock, nor macOS's Seatbelt): a submission could read the solutions or the "
            "other students' files. Grade on a machine where `grade doctor` shows them, or pass --isolation none to "
            "grade anyway",
            "这里没有任何隔离能阻止学生代码读取你能读的文件（{backend} 隔离后端，既没有 namespaces 和 Landlock，"
            "也没有 macOS 的 Seatbelt）：一份提交可以读取参考答案或其他学生的文件。请在 `grade doctor` 显示有这些"
            "隔离的机器上评分，或者加上 --isolation none 仍然评分", backend=backend.name()).render(lang))


@command("doctor")
@json_option
@lang_option
def doctor_cmd(as_json, lang):
    """Show what isolates learner code on this machine, proved by a test sandbox."""
    from grader.judge.doctor import render, run_self_test
    from grader.service.address import folder_path

    report = run_self_test(folders=[folder_path()])  # where the warm service keeps its sockets: dialled from inside
    click.echo(json.dumps(report) if as_json else render(report, lang))
    sys.exit(1 if any(report["managed"].values()) else 0)


COMMANDS = [batch_cmd, export_cmd, review_cmd, gradescope_cmd, doctor_cmd]
