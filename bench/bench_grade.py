"""Time `grade exNN --file <solution>` for ex01-ex06 against bare `python -c "import torch"`.

Usage: python bench/bench_grade.py [--runs 5]   (each grade run is paired with an `import torch` run)
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def paired(cmd: list[str], baseline: list[str], runs: int) -> tuple[float, float]:
    """Median wall time of `cmd` and median ratio to `baseline`, each run of `cmd` paired with a run of
    `baseline` just before it, so that a machine getting busier or quieter affects both alike."""
    wall(cmd)
    pairs = [(wall(baseline), wall(cmd)) for _ in range(runs)]
    return statistics.median(t for _, t in pairs), statistics.median(t / b for b, t in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    grade = [sys.executable, "-m", "grader.cli"]
    import_torch = [sys.executable, "-c", "import torch"]
    baseline, _ = paired(import_torch, import_torch, args.runs)
    print(f"baseline  python -c 'import torch'           {baseline:6.2f} s  (each run below is paired with one)")
    ratios = []
    for solution in sorted((ROOT / "solutions").glob("ex0[1-6]_*.py")):
        t, ratio = paired(grade + [solution.stem.split("_")[0], "--file", str(solution)], import_torch, args.runs)
        ratios.append(ratio)
        print(f"grade {solution.stem:<36} {t:6.2f} s  ratio {ratio:4.2f}")
    print(f"median ratio {statistics.median(ratios):.2f} (target <= 1.3)")
    for cmd in (["--help"], ["list"]):
        t = statistics.median(wall(grade + cmd) for _ in range(args.runs))
        print(f"grade {' '.join(cmd):<36} {t:6.2f} s  (target < 0.5 s)")


if __name__ == "__main__":
    main()
