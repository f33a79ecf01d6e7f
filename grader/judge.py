"""Grade one submission: fork a judge that runs pytest over the exercise's hidden checks.

The calling process is the warm parent: it has imported torch, pytest and the grader but never
computes, so forks are cheap and safe (see DESIGN.md). The judge forks the sandbox that runs the
learner's code; results come back to the parent line by line through a pipe the sandbox never
sees, so nothing learner code prints or does can forge them.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import random
import select
import signal
import sys
import time

os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # is_available() stays fork-safe

import pytest  # noqa: E402
import torch  # noqa: E402

from grader.exercises import CHECKS_DIR, Exercise  # noqa: E402
from grader.plugin import JudgePlugin  # noqa: E402
from grader.sandbox import Limits  # noqa: E402
from grader.source import Source  # noqa: E402

torch.set_num_threads(1)  # forked children must never inherit a multi-threaded OpenMP pool


def prewarm(exercises: list[Exercise] = ()) -> None:
    """For processes that grade many submissions (batch, watch, validate): import what torch loads
    lazily on first use, once here rather than once per forked judge and sandbox. The first
    `backward(gradient=...)` imports sympy through torch.fx (1-2 s); the exercises' `preload`
    modules and their checks are imported too."""
    import torch.fx.experimental.symbolic_shapes  # noqa: F401

    for exercise in exercises:
        preload(exercise)
        importlib.import_module(f"grader.checks.{exercise.name}")


def preload(exercise: Exercise) -> None:
    """Import the modules the exercise's metadata names (`preload`), such as torch._dynamo, which the
    first optimizer imports (seconds): in the judge, before the sandbox forks, that cost stays out of
    the learner's timed calls, and what the import rebinds is part of the sandbox's baseline."""
    for name in exercise.preload:
        importlib.import_module(name)


def limits_for(exercise: Exercise, memory: int | None = None, time_limit: float | None = None) -> Limits:
    """The sandbox limits: the exercise's time limit and the default memory, unless overridden."""
    limits = Limits(time=time_limit or exercise.time_limit)
    if memory:
        limits.memory = memory
    return limits


def _judge_main(fd: int, exercise: Exercise, source: Source, seed: int, lang: str, device: str,
                limits: Limits, languages: tuple[str, ...]) -> None:
    """The judge process: run the checks under pytest, emit results on `fd`. Never returns."""
    os.setsid()
    if not os.environ.get("GRADER_DEBUG"):
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(null, std)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only our plugins: faster, and nothing else
    preload(exercise)
    torch.manual_seed(seed)
    out = os.fdopen(fd, "w", buffering=1)

    def emit(event: dict) -> None:
        out.write(json.dumps(event) + "\n")

    plugin = JudgePlugin(source, limits, seed, lang, device, emit, languages)
    args = [
        str(exercise.checks), "-c", str(CHECKS_DIR / "pytest.ini"), "--rootdir", str(CHECKS_DIR),
        "-p", "pytest_timeout", "-p", "no:cacheprovider", "-p", "no:unraisableexception",
        "-p", "no:threadexception", "-p", "no:faulthandler", "--noconftest", "--assert=plain", "-q", "--tb=line",
        "--timeout", str(int(limits.time * 3 + 10)), "--timeout-method", "signal",
    ]
    try:
        pytest.main(args, plugins=[plugin])
    finally:
        out.flush()
        os._exit(0)


class Grading:
    """One grading in flight: a forked judge whose result lines arrive on a pipe.

    `grade` waits for one; batch grading keeps several in flight and feeds each as its pipe
    becomes readable (`fileno`, `feed`), killing any that pass their deadline.
    """

    def __init__(self, exercise: Exercise, source: Source, *, seed: int | None = None, lang: str = "en",
                 device: str = "cpu", memory: int | None = None, time_limit: float | None = None,
                 languages: tuple[str, ...] = ()):
        self.exercise, self.source, self.lang = exercise, source, lang
        self.seed = random.randrange(2**31) if seed is None else seed
        limits = limits_for(exercise, memory, time_limit)
        self.started = time.monotonic()
        self.deadline = self.started + max(60.0, limits.time * 20)
        self.events: list[dict] = []
        self.timed_out = False
        self._buf = b""
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()  # the warm parent's objects: never collected in children, pages stay shared
        read_fd, write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - runs in the child
            os.close(read_fd)
            _judge_main(write_fd, exercise, source, self.seed, lang, device, limits, languages)
        os.close(write_fd)
        self.fd = read_fd

    def fileno(self) -> int:
        return self.fd

    def feed(self) -> bool:
        """Read what the judge sent; True once it has finished (end of the pipe)."""
        chunk = os.read(self.fd, 65536)
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        self.events += [json.loads(line) for line in lines if line.strip()]
        return not chunk

    def kill(self) -> None:
        """Stop a judge past its deadline (its sandbox dies with it)."""
        self.timed_out = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def result(self) -> dict:
        """Reap the judge and assemble its result."""
        os.close(self.fd)
        os.waitpid(self.pid, 0)
        result = assemble(self.exercise, self.source, self.events, self.timed_out, self.seed,
                          time.monotonic() - self.started)
        result["title"] = self.exercise.text("title", self.lang)
        return result


def grade(exercise: Exercise, source: Source, **options) -> dict:
    """Grade `source` as `exercise`; return the result dict (the --json schema).

    Options: seed, lang, device, memory (bytes), time_limit (seconds per call), languages (also give
    each check's message in these languages, under "messages").
    """
    grading = Grading(exercise, source, **options)
    while True:
        left = grading.deadline - time.monotonic()
        if left <= 0:
            grading.kill()
            break
        if select.select([grading], [], [], left)[0] and grading.feed():
            break
    return grading.result()


def assemble(exercise: Exercise, source: Source, events: list[dict], timed_out: bool, seed: int,
             duration: float) -> dict:
    """The result: checks as reported, plus a failed entry for points no check reported."""
    checks = [{k: v for k, v in e.items() if k != "event"} for e in events if e["event"] == "check"]
    end = next((e for e in events if e["event"] == "end"), None)
    status = end["status"] if end else ("timeout" if timed_out else "crashed")
    reported = sum(c["max_points"] for c in checks)
    if reported < exercise.points:
        checks.append({
            "id": "unreported", "title": "Checks that never reported", "outcome": "failed", "passed": False,
            "points": 0.0, "max_points": exercise.points - reported,
            "message": "The grading stopped before these checks ran." if end is None
            else "Some checks did not report a result.",
        })
    skipped = sum(c["max_points"] for c in checks if c["outcome"] == "skipped")
    max_score = exercise.points - skipped
    score = 0.0 if status == "tampered" else min(sum(c["points"] for c in checks), max_score)
    return {
        "exercise": exercise.id,
        "name": exercise.name,
        "submission": str(source.path),
        "status": status,
        "score": round(score, 4),
        "max_score": round(max_score, 4),
        "checks": checks,
        "duration_s": round(duration, 3),
        "seed": seed,
        "message": end["message"] if end else "The grading stopped before it finished.",
        "output": end["output"] if end else "",
        "notes": source.notes,
        "curves": end.get("curves", []) if end else [],
    }
