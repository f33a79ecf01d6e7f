"""Grade one submission: fork a judge that runs pytest over the exercise's hidden checks.

The calling process is the warm parent: it has imported torch, pytest and the grader but never
computes, so forks are cheap and safe (see DESIGN.md). The judge forks the sandbox that runs the
learner's code; results come back to the parent line by line through a pipe the sandbox never
sees, so nothing learner code prints or does can forge them.
"""

from __future__ import annotations

import gc
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


def limits_for(exercise: Exercise, memory: int | None = None, time_limit: float | None = None) -> Limits:
    """The sandbox limits: the exercise's time limit and the default memory, unless overridden."""
    limits = Limits(time=time_limit or exercise.time_limit)
    if memory:
        limits.memory = memory
    return limits


def _judge_main(fd: int, exercise: Exercise, source: Source, seed: int, lang: str, device: str,
                limits: Limits) -> None:
    """The judge process: run the checks under pytest, emit results on `fd`. Never returns."""
    os.setsid()
    if not os.environ.get("GRADER_DEBUG"):
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(null, std)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only our plugins: faster, and nothing else
    torch.manual_seed(seed)
    out = os.fdopen(fd, "w", buffering=1)

    def emit(event: dict) -> None:
        out.write(json.dumps(event) + "\n")

    plugin = JudgePlugin(source, limits, seed, lang, device, emit)
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


def _read_events(fd: int, deadline: float) -> tuple[list[dict], bool]:
    """Read JSON lines until EOF or the deadline; return (events, timed_out)."""
    buf, events = b"", []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return events, True
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        events += [json.loads(line) for line in lines if line.strip()]
    return events, False


def grade(exercise: Exercise, source: Source, *, seed: int | None = None, lang: str = "en",
          device: str = "cpu", memory: int | None = None, time_limit: float | None = None) -> dict:
    """Grade `source` as `exercise`; return the result dict (the --json schema)."""
    seed = random.randrange(2**31) if seed is None else seed
    limits = limits_for(exercise, memory, time_limit)
    start = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()  # the warm parent's objects: never collected in children, pages stay shared
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_fd)
        _judge_main(write_fd, exercise, source, seed, lang, device, limits)
    os.close(write_fd)
    events, timed_out = _read_events(read_fd, start + max(60.0, limits.time * 20))
    os.close(read_fd)
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.waitpid(pid, 0)
    result = assemble(exercise, source, events, timed_out, seed, time.monotonic() - start)
    result["title"] = exercise.text("title", lang)
    return result


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
    }
