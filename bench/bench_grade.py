"""Time `grade exNN --file <solution>` for ex01-ex06 against bare `python -c "import torch"`.

Usage: python bench/bench_grade.py [--runs 5]
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(cmd: list[str], runs: int) -> float:
    """Median wall time of `cmd` over `runs` runs (after one warm-up run)."""
    subprocess.run(cmd, capture_output=True, cwd=ROOT)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    grade = [sys.executable, "-m", "grader.cli"]
    baseline = wall([sys.executable, "-c", "import torch"], args.runs)
    print(f"baseline  python -c 'import torch'           {baseline:6.2f} s")
    ratios = []
    for solution in sorted((ROOT / "solutions").glob("ex0[1-6]_*.py")):
        t = wall(grade + [solution.stem.split("_")[0], "--file", str(solution)], args.runs)
        ratios.append(t / baseline)
        print(f"grade {solution.stem:<36} {t:6.2f} s  ratio {t / baseline:4.2f}")
    print(f"median ratio {statistics.median(ratios):.2f} (target <= 1.3)")
    for cmd in (["--help"], ["list"]):
        t = wall(grade + cmd, args.runs)
        print(f"grade {' '.join(cmd):<36} {t:6.2f} s  (target < 0.5 s)")


if __name__ == "__main__":
    main()
