"""Batch grading speed: `grade batch` over 100 generated submissions (solutions, stubs and mistakes of
ex05 and ex06) against one `grade --file` process per submission and a naive pytest process per
submission; plus the per-submission grading overhead and a worker's peak memory.

Usage: python bench/bench_batch.py [--sample 20]   (sample: how many single runs to time and scale)
"""

import argparse
import itertools
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ["ex05_manual_backward", "ex06_manual_training_loop"]
NAIVE_TEST = ROOT / "bench" / "naive_test.py"


def candidates(name: str) -> list[Path]:
    return [ROOT / "solutions" / f"{name}.py", ROOT / "exercises" / name / f"{name}.py",
            *sorted((ROOT / "tests" / "mistakes" / name).glob("*.py"))]


def generate(folder: Path, count: int = 100) -> list[tuple[str, Path]]:
    """count submission files: count/2 students, one file for each of ex05 and ex06."""
    made = []
    pools = {name: itertools.cycle(candidates(name)) for name in EXERCISES}
    for i in range(count // 2):
        student = folder / f"student{i:03d}"
        student.mkdir(parents=True)
        for name in EXERCISES:
            target = student / f"{name}.py"
            shutil.copy(next(pools[name]), target)
            made.append((name.split("_")[0], target))
    return made


def timed(cmd, **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, cwd=ROOT, **kwargs)
    return time.perf_counter() - start


def overhead() -> float:
    """Median in-process time to grade an untouched stub: every check stops at once, so what is
    measured is the grading machinery (fork judge, pytest session, sandbox, messages)."""
    sys.path.insert(0, str(ROOT))
    from grader.exercises import find_exercise
    from grader.judge import grade
    from grader.source import load_source

    times = []
    for name in EXERCISES:
        ex = find_exercise(name)
        source = load_source(ex.stub)
        grade(ex, source)
        for _ in range(10):
            start = time.perf_counter()
            grade(ex, source)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=20, help="single-process runs timed (scaled to 100)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    grade = [sys.executable, "-m", "grader.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "subs"
        made = generate(subs)
        n = len(made)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        batch = timed(grade + ["batch", str(subs), "-e", "ex05", "-e", "ex06", "--out", str(Path(tmp) / "out"),
                               "--workers", str(args.workers)])
        peak_kib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        lines = (Path(tmp) / "out" / "results.jsonl").read_text().splitlines()
        assert len(lines) == n, f"batch graded {len(lines)} of {n}"
        statuses = [json.loads(line)["status"] for line in lines]
        sample = made[:: max(1, n // args.sample)][: args.sample]
        single = statistics.mean(timed(grade + [ex, "--file", str(path)]) for ex, path in sample) * n
        naive = statistics.mean(
            timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(NAIVE_TEST)],
                  env={"SUBMISSION": str(path), "EXERCISE": ex, "PATH": "/usr/bin:/bin"})
            for ex, path in sample) * n
    per = overhead()
    print(f"{n} submissions ({statuses.count('graded')} graded, {n - statuses.count('graded')} other statuses)")
    print(f"grade batch --workers {args.workers}        {batch:7.1f} s   ({batch / n:.2f} s per submission)")
    print(f"grade --file, one process each  {single:7.1f} s   (from {len(sample)} timed, scaled)  "
          f"batch is {single / batch:.1f}x faster (target >= 4x)")
    print(f"naive pytest process each       {naive:7.1f} s   (from {len(sample)} timed, scaled)  "
          f"batch is {naive / batch:.1f}x faster")
    print(f"grading overhead per submission {per:7.3f} s   (target <= 0.2 s)")
    print(f"largest RSS of any process      {peak_kib / 1024:7.0f} MiB (warm parent, judges and sandboxes; the torch "
          "pages forked children share are counted in each)")


if __name__ == "__main__":
    main()
