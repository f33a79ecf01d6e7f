"""`grade batch`: grade a folder of student submissions with several judges in flight.

This process is the warm parent: when something must be graded, it imports torch, pytest, the grader
and the exercises' check modules once, then forks one fresh judge per submission (no import per submission, no state
carried from one student to the next). Each result is appended to results.jsonl and flushed the
moment it completes, so an interrupted run loses nothing; a rerun skips what is already graded against the same
file, checks, data and grader (grader/teacher/graded_against.py; a grader failure is regraded), and decides so before
importing torch.

When each file was submitted is not the files' own business: submitted.json keeps, per student and exercise, what the
LMS said of it (Canvas's `_LATE`) and when the teacher collected it (`--collected-at`), for grader/teacher/late.py.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from grader.teacher.collect import Collection, collect_from
from grader.course.exercises import Exercise, all_exercises, current_course
from grader.teacher.gradebook import class_list, read_results, write_gradebook
from grader.judge.job import Job
from grader.judge.result import Result
from grader.text import message_of


def assignment(found: Collection, recorded: dict) -> list[Exercise]:
    """Without -e, the assignment is the exercises some student handed in, now or in results.jsonl."""
    ids = {j.exercise.id for j in found.jobs} | {p["exercise"] for p in found.problems if "exercise" in p}
    ids |= {exercise for student, exercise in recorded if student in found.students}
    return [ex for ex in all_exercises() if ex.id in ids]


def record_submissions(out: Path, jobs: list[Job], collected: str | None) -> dict[str, dict[str, dict]]:
    """Write out/submitted.json: student -> exercise -> {"sha256", "lms_late"?, "collected"?}; a collection time
    given before is kept for a file that did not change since. Return it."""
    from grader.teacher.late import SUBMITTED

    path = out / SUBMITTED
    before = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    facts: dict[str, dict[str, dict]] = {student: dict(entries) for student, entries in before.items()}
    for job in jobs:
        old = before.get(job.student, {}).get(job.exercise.id, {})
        entry = {"sha256": job.sha256, **job.lms}
        if collected or (old.get("sha256") == job.sha256 and old.get("collected")):
            entry["collected"] = collected or old["collected"]
        facts.setdefault(job.student, {})[job.exercise.id] = entry
    path.write_text(json.dumps(facts, indent=1, ensure_ascii=False), encoding="utf-8")
    return facts


def scores(out: Path) -> dict[tuple[str, str], float | None]:
    """(student, exercise) -> the score gradebook.json shows (None: blank); {} before the first batch."""
    path = out / "gradebook.json"
    if not path.is_file():
        return {}
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return {(row["student"], ex): cell["score"] for row in rows for ex, cell in row["cells"].items()}


def graded_by(cluster, isolation: str) -> dict:
    """How this batch isolated student code, as batch.json records it (each result also names its sandbox's
    layers, shown on the class page)."""
    if cluster is not None:
        return {"backend": "cluster"}  # each worker's: its results say which layers
    from grader.sandbox import backend

    return {"backend": backend.name(), "file_walls": backend.file_walls(), "waived": isolation == "none"}


def run_batch(submissions: Path, exercises: list[Exercise] | None, out: Path, *, workers: int, force: bool = False,
              roster: list[dict] | None = None, similarity: float | None = None, pick: str | None = None,
              assignment_name: str | None = None, cluster=None, collected: str | None = None,
              isolation: str = "files", **options) -> dict:
    """Grade every student's files as `exercises` (None: the exercises they handed in); write out/;
    return a summary of counts. `roster` names the students; `similarity` is the threshold above which
    pairs of submissions of one exercise are listed for a person to look at; `pick` ("latest") resolves two
    files for one exercise (review.toml's `file` does it for one student); `cluster` (a grader.cluster.dispatch.Target)
    grades on a Dask cluster's workers instead of `workers` here; `collected` (ISO 8601 with an offset) is when the
    teacher collected the files; `isolation` ("none": the teacher accepted grading where nothing keeps student code
    from their files) is recorded in batch.json with the backend that graded. LateError (before any grading) where the
    late policy names a student nobody in the class is."""
    from grader.teacher.consistency import code_hash, exercise_seeds
    from grader.teacher.graded_against import changed, regrade, verdict_hashes, why
    from grader.teacher.late import check_class, late_policy, submission
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
        policy = late_policy(current_course(), assignment_name)
        people = class_list(list(recorded.values()), found.students, roster)[0]
        check_class(policy, people)  # a name nobody has: said before any grading
        facts = record_submissions(out, found.jobs, collected)
        undecided = sum(1 for job in found.jobs if policy.get("due") and not submission(
            people.get(job.student), facts[job.student][job.exercise.id], policy))
        shown = scores(out)  # the scores before this run
        prints = {ex.id: verdict_hashes(ex) for ex in {j.exercise.id: j.exercise for j in found.jobs}.values()}
        reasons: Counter = Counter()
        todo = []
        for job in found.jobs:
            before = recorded.get((job.student, job.exercise.id))
            if force or not before or before.grader_failure or before.sha256 != job.sha256:
                todo.append(job)
            elif regrade(before, parts := changed(before.fingerprint, prints[job.exercise.id])):
                todo.append(job)
                reasons[why(job.exercise.id, parts)] += 1
        skipped = len(found.jobs) - len(todo)
        seeds = exercise_seeds(out, {job.exercise.id for job in found.jobs}, options.pop("seed", None))
        for job in todo:
            job.seed = seeds[job.exercise.id]
        counts: Counter = Counter()
        interrupted, stopped = False, None
        spoken = [lang for lang in ("en", "zh") if any(lang in j.exercise.course.languages for j in todo)]
        if len(spoken) > 1:  # each check's message kept in each language: the review page speaks either
            options["languages"] = tuple(spoken)
        with records.open("a", encoding="utf-8") as log:
            def record(result: Result, job: Job) -> None:
                for check in result.checks:  # what validate reads (values masked), never a batch's record
                    check.messages = check.spliced = None
                result.student, result.sha256 = job.student, job.sha256
                result.fingerprint = prints[job.exercise.id]
                result.submission = kept_copy(job.path, out, job.student)
                result.code_hash, unread = code_hash(job.path)
                result.unread = unread.render(options.get("lang", "en")) if unread else None
                log.write(json.dumps(result.to_json(options.get("lang", "en")), ensure_ascii=False) + "\n")
                log.flush()
                counts[result.outcome] += 1

            if todo and cluster is not None:
                from grader.cluster.dispatch import ClusterStopped, grade_on_cluster  # the workers import torch

                try:
                    interrupted = grade_on_cluster(cluster, todo, record, options, out)
                except ClusterStopped as exc:  # no worker for too long: what was graded is kept, and written
                    stopped = message_of(exc).render(options.get("lang", "en"))
            elif todo:
                from grader.sandbox import zygote

                zygote.shared()  # its torch import runs beside ours
                from grader.judge.grading import prewarm  # torch: only when something must be graded
                from grader.judge.pool import grade_all

                prewarm(list({j.exercise.name: j.exercise for j in todo}.values()))  # checks, preloads: once
                hidden = (submissions, out, Path(unpack))  # classmates' files and grades: never seen by student code
                interrupted = grade_all(todo, workers, record, {**options, "hidden": hidden})
        similar = None
        if similarity is not None:
            from grader.teacher.similarity import find_similar, write_similarity

            similar = find_similar(found.jobs, similarity)
            write_similarity(similar, out)
    save_state(out, chosen, found.problems, found.students, similar, options.get("lang", "en"), assignment_name, seeds,
               graded_by(cluster, isolation))
    book = write_gradebook(out, chosen, found.problems, found.students, roster, similar,
                           lang=options.get("lang", "en"), assignment=assignment_name)
    now = scores(out)
    moved = [{"student": student, "exercise": ex, "from": score, "to": now[(student, ex)]}
             for (student, ex), score in shown.items() if (student, ex) in now and now[(student, ex)] != score]
    return {"graded": sum(counts.values()), "skipped": skipped, "problems": len(book["problems"]),
            "regraded": dict(reasons), "interrupted": interrupted, "stopped": stopped, "changed": moved,
            "late_problems": [f"{p['student']} {p['message']}" for p in book["problems"] if p.get("late")],
            "undecided": undecided, **counts}
