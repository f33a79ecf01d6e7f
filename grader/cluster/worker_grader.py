"""The warm grading process of a Dask worker (`python -m grader.cluster.worker_grader`, started by
grader.cluster.worker_plugin): the local batch's warm parent, fed over a pipe.

It reads its configuration (course, fingerprint, required layers, folders to hide) as the first line of its
input, loads the course, refuses if what it would grade with differs from the batch's fingerprint, imports
torch, the grader and the batch's checks once (`prewarm`), runs `grade doctor`'s self-test and refuses if a required
isolation layer is missing; else it says it is ready. Then each input line is one submission, graded by a
forked judge (`judge.Grading`, several at once) and answered by one output line with its id and result. It
never computes; the end of its input (the worker ended) stops its judges and ends it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

from grader import framing
from grader.cluster.dispatch import differences, grading_environment, missing_layers
from grader.course.exercises import course_from, use_course
from grader.sandbox.source import Source


def main() -> None:
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what anything prints goes to the worker's log, never among the replies

    def reply(message: dict) -> None:
        replies.write(framing.encode(message).decode())

    config = framing.decode(sys.stdin.buffer.readline(framing.MAX_LINE))
    course = course_from(config["course"])
    use_course(course)
    mine = grading_environment(course)
    if mine != config["fingerprint"]:
        reply({"refused": "it grades with another grader, course, torch or Python than the batch's ("
                          + "; ".join(differences(config["fingerprint"], mine)) + ")"})
        return
    from grader.sandbox import zygote

    zygote.shared()  # its torch import runs beside ours
    from grader.judge.doctor import run_self_test, summary_line
    from grader.judge.grading import prewarm

    exercises = {ex.name: ex for ex in course.exercises() if ex.name in config["exercises"]}
    prewarm(list(exercises.values()))
    report = run_self_test()
    missing = missing_layers(report["applied"], tuple(config["require"]))
    if missing:
        reply({"refused": f"its sandbox lacks {', '.join(missing)} ({summary_line(report, config.get('lang', 'en'))})",
               "isolation": report})
        return
    reply({"ready": True, "summary": summary_line(report, config.get("lang", "en")), "isolation": report})
    serve(exercises, tuple(config["hidden"]), reply)


def serve(exercises: dict, hidden: tuple[str, ...], reply) -> None:
    """Grade each request read from the input, several at once; answer each when its judge has finished."""
    from grader.judge.pool import JudgePool

    pool = JudgePool()
    lines = framing.Lines()
    while True:
        ready, done = pool.wait(others=[0])  # the input, and each judge's pipe
        if ready:
            chunk = os.read(0, 1 << 20)
            if not chunk:  # the worker is gone
                pool.stop()
                return
            for request in lines.feed(chunk):  # (a malformed line from its own worker: this process ends)
                try:
                    start(pool, request, exercises, hidden)
                except Exception as exc:  # the grader's failure, for the batch to grade again
                    reply({"id": request["id"], "error": f"{type(exc).__name__}: {exc}"})
        for request_id, result in done:
            reply({"id": request_id, "result": result.to_json()})  # in the grading's lang


def start(pool, request: dict, exercises: dict, hidden: tuple[str, ...]) -> None:
    """Fork the judge of one request: the exercise with the batch's points, the source as loaded there."""
    exercise = replace(exercises[request["exercise"]], points=request["points"], overrides=request["overrides"])
    fields = request["source"]
    source = Source(**{**fields, "chunks": [tuple(chunk) for chunk in fields["chunks"]], "path": Path(fields["path"])})
    pool.start(request["id"], exercise, source, hidden=hidden, **request["options"])


if __name__ == "__main__":
    main()
