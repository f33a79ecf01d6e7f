"""The portable isolation backend against the Linux one, in the same run: every file `grade validate` grades as a .py
(the solution, the stub, each known mistake and each variant, the default draw) graded once by each backend with the
same seed, the verdicts compared (status, score, each check's points and mistake key) and the time of each grading
taken (a warm parent: the Linux backend's zygote and prepared pytest warm, the portable one spawning its judge and
sandbox each time, as it always does).

Usage: python bench/bench_portable.py [--exercises ex01,ex05] [--kinds solution,stub,mistake,variant]
                                     [--out verdicts.jsonl]
One JSON line per file to --out (appended as it goes), a summary on stdout.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.author.validate import mistakes, variants  # noqa: E402
from grader.course.exercises import all_exercises  # noqa: E402
from grader.judge.grading import grade, prewarm  # noqa: E402
from grader.sandbox import backend  # noqa: E402
from grader.sandbox.source import load_source  # noqa: E402

SEED = 1234


def verdict(result) -> dict:
    """What must be the same whichever backend graded: the status, the score, each check's points and mistake."""
    return {"status": result.status, "score": result.score, "grader_failure": result.grader_failure,
            "checks": [[c.id, c.outcome, c.points, c.key] for c in result.checks]}


def graded(exercise, path: Path, name: str) -> tuple[dict, float]:
    os.environ[backend.ENV] = name
    started = time.perf_counter()
    result = grade(exercise, load_source(path), seed=SEED)
    return verdict(result), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--exercises", default="")
    parser.add_argument("--kinds", default="solution,stub,mistake,variant")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    wanted = set(filter(None, args.exercises.split(",")))
    kinds = set(args.kinds.split(","))
    times: dict[str, list[float]] = {backend.LINUX: [], backend.PORTABLE: []}
    same = differ = 0
    for exercise in all_exercises():
        if wanted and exercise.id not in wanted and exercise.name not in wanted:
            continue
        os.environ[backend.ENV] = backend.LINUX
        prewarm([exercise])
        files = [("solution", exercise.solution), ("stub", exercise.stub),
                 *(("mistake", p) for p in mistakes(exercise)), *(("variant", p) for p in variants(exercise))]
        for kind, path in files:
            if kind not in kinds:
                continue
            linux, linux_s = graded(exercise, path, backend.LINUX)
            portable, portable_s = graded(exercise, path, backend.PORTABLE)
            times[backend.LINUX].append(linux_s)
            times[backend.PORTABLE].append(portable_s)
            agree = linux == portable
            same, differ = same + agree, differ + (not agree)
            line = {"exercise": exercise.id, "kind": kind, "file": path.name, "same": agree,
                    "linux_s": round(linux_s, 2), "portable_s": round(portable_s, 2), "score": linux["score"],
                    **({} if agree else {"linux": linux, "portable": portable})}
            if args.out:
                with open(args.out, "a", encoding="utf-8") as out:
                    out.write(json.dumps(line) + "\n")
            print(json.dumps(line), flush=True)
    summary = {"files": same + differ, "same_verdicts": same, "different": differ,
               **{f"{name}_median_s": round(statistics.median(t), 2) for name, t in times.items() if t}}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
