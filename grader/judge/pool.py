"""The judges in flight of a warm parent: one forked judge per grading, all waited on at once, each result handed
back as its judge ends; a judge past its deadline is killed (its result says so). `grade_all` grades a list of
jobs (one file as one exercise for one student) with a number of judges in flight: a batch, the mutants of
`grade validate --mutants`.

Runs in: a warm parent that forks judges: the service, `grade batch`, a cluster worker's grading process. Each
keeps one pool and waits on it beside its own inputs (`wait(others=...)`): the service's sockets, the worker's pipe.
"""

from __future__ import annotations

import multiprocessing.connection
import signal
import sys
import time
from collections.abc import Hashable, Iterable
from typing import cast

import click

from grader.judge.grading import Grading, finished
from grader.judge.job import Job
from grader.judge.result import Result, error_result
from grader.sandbox.source import SubmissionError, load_source
from grader.text import Text, message_of, say, visible


class JudgePool:
    """Gradings in flight, each known by the key its caller gave it (a job, a connection, a request id)."""

    def __init__(self) -> None:
        self.running: dict[Grading, Hashable] = {}

    def __len__(self) -> int:
        return len(self.running)

    def start(self, key: Hashable, exercise, source, **options) -> Grading:
        """Fork the judge of one grading (`Grading`'s options); Ctrl-C cannot fall between the fork and its record."""
        mask = getattr(signal, "pthread_sigmask", lambda how, signals: None)  # Windows has none: Ctrl-C may fall there
        mask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            grading = Grading(exercise, source, **options)
            self.running[grading] = key
        finally:
            mask(signal.SIG_UNBLOCK, {signal.SIGINT})
        return grading

    def wait(self, others: Iterable = (), timeout: float | None = None) -> tuple[list, list[tuple[Hashable, Result]]]:
        """Wait until one of `others` (anything `multiprocessing.connection.wait` takes) is readable, a judge ends or
        passes its deadline, or `timeout` seconds pass; return the readable `others` and the (key, result) of each
        grading done."""
        others = list(others)
        if self.running:
            nearest = max(0.0, min(g.deadline for g in self.running) - time.monotonic())
            timeout = nearest if timeout is None else min(timeout, nearest)
        waited = {id(grading.waitable()): grading for grading in self.running}
        ready = [waited.get(id(r), r) for r in multiprocessing.connection.wait(
            [*others, *(grading.waitable() for grading in self.running)], timeout)] if others or self.running else []
        if not others and not self.running and timeout:
            time.sleep(timeout)
        done = [(self.running.pop(grading), grading.result()) for grading in finished(self.running, ready)]
        return [r for r in ready if not isinstance(r, Grading)], done

    def stop(self) -> None:
        """Kill every judge in flight (its sandboxes die with it) and reap it."""
        for grading in self.running:
            grading.kill()
            grading.result()
        self.running.clear()


def grade_all(jobs: list[Job], workers: int, record, options: dict) -> bool:
    """Keep up to `workers` judges in flight; a judge that failed (the grader's failure, never the student's) grades
    its job once more. Return True if interrupted by Ctrl-C."""
    from grader.judge.doctor import run_self_test, summary_line

    click.echo(summary_line(run_self_test(), options.get("lang", "en")), err=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C stops cleanly, even if started ignoring it
    queue = list(reversed(jobs))
    pool = JudgePool()
    retried: set[int] = set()  # jobs whose judge failed once: graded again, once
    label = Text("Grading", "评分中").render(options.get("lang", "en"))
    with click.progressbar(length=len(jobs), label=label, show_eta=True, file=sys.stderr,
                           hidden=not sys.stderr.isatty()) as bar:
        try:
            while queue or len(pool):
                while queue and len(pool) < workers:
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
                    seed = options.get("seed") if job.seed is None else job.seed  # a batch's: its exercise's
                    pool.start(job, job.exercise, source, **{**options, "seed": seed})
                if not len(pool):
                    continue
                for key, result in pool.wait()[1]:
                    job = cast(Job, key)
                    if result.grader_failure and id(job) not in retried:
                        click.echo(f"{visible(job.student)}/{job.exercise.id}: {result.message.render(result.lang)} "
                                   + say(result.lang, "Grading it again."), err=True)
                        retried.add(id(job))
                        queue.append(job)  # the grader's failure, not the student's: once more
                        continue
                    record(result, job)
                    bar.update(1)
        except KeyboardInterrupt:
            pool.stop()
            return True
    return False
