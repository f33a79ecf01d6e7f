"""`grade batch`: grade a folder of student submissions with several judges in flight.

This process is the warm parent: when something must be graded, it imports torch, pytest, the grader
and the exercises' check modules once, then forks one fresh judge per submission (no import per submission, no state
carried from one student to the next). Each result is appended to results.jsonl and flushed the
moment it completes, so an interrupted run loses nothing; a rerun skips what is already graded against the same
file, checks, data and grader (grader/teacher/graded_against.py; a grader failure is regraded), and decides so before
importing torch.
"""

from __future__ import annotations

import json
import select
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import click

from grader.teacher.collect import Collection, Job, collect_from
from grader.course.exercises import Exercise, all_exercises
from grader.teacher.gradebook import read_results, write_gradebook
from grader.judge.result import Result
from grader.sandbox.source import SubmissionError, load_source
from grader.text import Text, message_of, say


def error_result(student: str, exercise: Exercise, message: str | Text, submission: str = "",
                 sha256: str | None = None) -> Result:
    """A result for a submission that could not be graded at all (unreadable, two candidates, missing)."""
    return Result(exercise=exercise.id, name=exercise.name, submission=submission, status="error", score=0.0,
                  max_score=exercise.points, title=Text(exercise.title, exercise.zh.get("title")),
                  message=Text.of(message), student=student, sha256=sha256)


def assignment(found: Collection, recorded: dict) -> list[Exercise]:
    """Without -e, the assignment is the exercises some student handed in, now or in results.jsonl."""
    ids = {j.exercise.id for j in found.jobs} | {p["exercise"] for p in found.problems if "exercise" in p}
    ids |= {exercise for student, exercise in recorded if student in found.students}
    return [ex for ex in all_exercises() if ex.id in ids]


def run_batch(submissions: Path, exercises: list[Exercise] | None, out: Path, *, workers: int, force: bool = False,
              roster: list[dict] | None = None, similarity: float | None = None, pick: str | None = None,
              assignment_name: str | None = None, cluster=None, **options) -> dict:
    """Grade every student's files as `exercises` (None: the exercises they handed in); write out/;
    return a summary of counts. `roster` names the students; `similarity` is the threshold above which
    pairs of submissions of one exercise are listed for a person to look at; `pick` ("latest") resolves two
    files for one exercise (review.toml's `file` does it for one student); `cluster` (a grader.cluster.dispatch.Target)
    grades on a Dask cluster's workers instead of `workers` here."""
    from grader.teacher.graded_against import changed, fingerprint, why
    from grader.teacher.review import kept_copy, make_picker, save_state

    out.mkdir(parents=True, exist_ok=True)
    records = out / "results.jsonl"
    recorded = {(r.student, r.exercise): r for r in read_results(records)}
    if roster is not None:
        (out / "roster.json").write_text(json.dumps(roster, indent=1, ensure_ascii=False), encoding="utf-8")
    elif (out / "roster.json").exists():
        roster = json.loads((out / "roster.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="torch-katas-batch-") as unpack:
        found = collect_from(submissions, exercises or all_exercises(), Path(unpack), pick=make_picker(out, pick))
        chosen = exercises or assignment(found, recorded)
        prints = {ex.id: fingerprint(ex) for ex in {j.exercise.id: j.exercise for j in found.jobs}.values()}
        reasons: Counter = Counter()
        todo = []
        for job in found.jobs:
            before = recorded.get((job.student, job.exercise.id))
            if force or not before or before.grader_failure or before.sha256 != job.sha256:
                todo.append(job)
            elif parts := changed(before.fingerprint, prints[job.exercise.id]):
                todo.append(job)
                reasons[why(job.exercise.id, parts)] += 1
        skipped = len(found.jobs) - len(todo)
        counts: Counter = Counter()
        interrupted = False
        with records.open("a", encoding="utf-8") as log:
            def record(result: Result, job: Job) -> None:
                result.student, result.sha256 = job.student, job.sha256
                result.fingerprint = prints[job.exercise.id]
                result.late = bool(job.lms.get("late"))
                result.submitted = job.lms.get("submitted")
                result.submission = kept_copy(job.path, out, job.student)
                log.write(json.dumps(result.to_json(options.get("lang", "en")), ensure_ascii=False) + "\n")
                log.flush()
                counts[result.outcome] += 1

            if todo and cluster is not None:
                from grader.cluster.dispatch import grade_on_cluster  # the workers import torch, not this process

                interrupted = grade_on_cluster(cluster, todo, record, options, out)
            elif todo:
                from grader.sandbox import zygote

                zygote.shared()  # its torch import runs beside ours
                from grader.judge.grading import prewarm  # torch: only when something must be graded

                prewarm(list({j.exercise.name: j.exercise for j in todo}.values()))  # checks, preloads: once
                hidden = (submissions, out, Path(unpack))  # classmates' files and grades: never seen by student code
                interrupted = _grade_all(todo, workers, record, {**options, "hidden": hidden})
        similar = None
        if similarity is not None:
            from grader.teacher.similarity import find_similar, write_similarity

            similar = find_similar(found.jobs, similarity)
            write_similarity(similar, out)
    save_state(out, chosen, found.problems, found.students, similar, options.get("lang", "en"), assignment_name)
    write_gradebook(out, chosen, found.problems, found.students, roster, similar, lang=options.get("lang", "en"),
                    assignment=assignment_name)
    return {"graded": sum(counts.values()), "skipped": skipped, "problems": len(found.problems),
            "regraded": dict(reasons), "interrupted": interrupted, **counts}


def _grade_all(jobs: list[Job], workers: int, record, options: dict) -> bool:
    """Keep up to `workers` judges in flight; return True if interrupted by Ctrl-C."""
    from grader.sandbox.doctor import run_self_test, summary_line
    from grader.judge.grading import Grading, finished

    click.echo(summary_line(run_self_test(), options.get("lang", "en")), err=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C stops cleanly, even if started ignoring it
    queue = list(reversed(jobs))
    running: dict[Grading, Job] = {}
    retried: set[int] = set()  # jobs whose judge failed once: graded again, once
    label = Text("Grading", "评分中").render(options.get("lang", "en"))
    with click.progressbar(length=len(jobs), label=label, show_eta=True, file=sys.stderr,
                           hidden=not sys.stderr.isatty()) as bar:
        try:
            while queue or running:
                while queue and len(running) < workers:
                    job = queue.pop()
                    try:
                        source = load_source(job.path)
                    except SubmissionError as exc:
                        result = error_result(job.student, job.exercise, message_of(exc), str(job.path), job.sha256)
                        result.needs_look = Text("the file cannot be read: {error}", "文件无法读取：{error}",
                                                 error=message_of(exc)).render(options.get("lang", "en"))
                        record(result, job)
                        bar.update(1)
                        continue
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # no Ctrl-C between fork and
                    try:                                                        # registering the judge
                        running[Grading(job.exercise, source, **options)] = job
                    finally:
                        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
                if not running:
                    continue
                wait = max(0.0, min(g.deadline for g in running) - time.monotonic())
                ready = select.select(list(running), [], [], wait)[0]
                for grading in finished(running, ready):
                    job = running.pop(grading)
                    result = grading.result()
                    if result.grader_failure and id(job) not in retried:
                        click.echo(f"{job.student}/{job.exercise.id}: {result.message.render(result.lang)} "
                                   + say(result.lang, "Grading it again."), err=True)
                        retried.add(id(job))
                        queue.append(job)  # the grader's failure, not the student's: once more
                        continue
                    record(result, job)
                    bar.update(1)
        except KeyboardInterrupt:
            for grading in running:
                grading.kill()
                grading.result()
            return True
    return False
