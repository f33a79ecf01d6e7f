"""Time `grade` cold and warm against bare `python -c "import torch"`, each run paired with one.

Usage: python bench/bench_grade.py [--runs 5] [--warm-runs 3] [--skip-cold] [--skip-kernel]

- cold: `grade exNN --file <solution> --no-server` for ex01-ex06 (the path without a service: no slower than
  before, median ratio target at most 1.3), and the first `grade` with no service running (it starts one);
- warm: `grade NAME --file <solution>` on a running service for every exercise of every track (target: at most 0.25x
  `import torch` and under 0.3 s), `check("ex05")` in a live Jupyter kernel (target under 0.3 s), `grade watch`
  from a save to its table (target under 0.5 s), and the service's idle memory;
- `grade --help` and `grade list` (no torch; target under 0.5 s).
The service runs in a folder of its own (never the user's) and is stopped at the end.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.service import client, address  # noqa: E402

FOLDER = Path(tempfile.mkdtemp(prefix="tk-bench-"))
# PYTHONDONTWRITEBYTECODE dropped: an install has its bytecode (pip compiles it), a checkout writes it on first use;
# without it, every `grade` below would compile the grader's modules again (about 25 ms)
ENV = {**{k: v for k, v in os.environ.items() if k not in (address.NO_SERVER_ENV, "CI", "PYTHONDONTWRITEBYTECODE")},
       address.DIR_ENV: str(FOLDER)}
GRADE = [sys.executable, "-m", "grader"]  # what `grade` runs (relay.py)
IMPORT_TORCH = [sys.executable, "-c", "import torch"]


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, cwd=ROOT, env=ENV)
    return time.perf_counter() - start


def paired(cmd: list[str], runs: int, before=lambda: None) -> tuple[float, float]:
    """Median wall time of `cmd` and median ratio to `import torch`, each run of `cmd` paired with a run of
    `import torch` just before it, so that a machine getting busier or quieter affects both alike."""
    pairs = []
    for _ in range(runs):
        baseline = wall(IMPORT_TORCH)
        before()
        pairs.append((baseline, wall(cmd)))
    return statistics.median(t for _, t in pairs), statistics.median(t / b for b, t in pairs)


def solutions(pattern: str = "*_*.py") -> list[Path]:
    return sorted((ROOT / "solutions").glob(pattern))


def cold(runs: int) -> None:
    ratios = []
    for solution in solutions("ex0[1-6]_*.py"):
        cmd = GRADE + [solution.stem.split("_")[0], "--file", str(solution), "--no-server"]
        wall(cmd)
        t, ratio = paired(cmd, runs)
        ratios.append(ratio)
        print(f"cold  grade {solution.stem:<32} {t:6.2f} s  ratio {ratio:4.2f}")
    print(f"cold  median ratio {statistics.median(ratios):.2f} (target <= 1.3)")
    first = GRADE + ["ex05", "--file", str(solutions("ex05_*.py")[0])]
    t, ratio = paired(first, runs, before=lambda: client.stop(FOLDER))
    print(f"first grade ex05, starting the service   {t:6.2f} s  ratio {ratio:4.2f}  (the first answer waits for it)")


def warm(runs: int) -> list[float]:
    subprocess.run(GRADE + ["server", "start"], capture_output=True, cwd=ROOT, env=ENV)  # as the gradings see it
    subprocess.run(GRADE + ["ex05", "--file", str(solutions("ex05_*.py")[0])], capture_output=True, cwd=ROOT, env=ENV)
    while not client.status(FOLDER)["warm"]:  # it imports the rest once nobody waits
        time.sleep(1)
    ratios, times = [], []
    for solution in solutions():
        cmd = GRADE + [solution.stem.split("_")[0], "--file", str(solution)]
        wall(cmd)
        t, ratio = paired(cmd, runs)
        ratios.append(ratio)
        times.append(t)
        print(f"warm  grade {solution.stem:<32} {t:6.2f} s  ratio {ratio:4.2f}")
    print(f"warm  {len(ratios)} exercises: ratio median {statistics.median(ratios):.2f}, max {max(ratios):.2f} "
          f"(target <= 0.25); time median {statistics.median(times):.2f} s, max {max(times):.2f} s (target < 0.3 s)")
    return ratios


def kernel(runs: int) -> None:
    """check("ex05") in a live ipykernel, timed inside the kernel."""
    try:
        from jupyter_client.manager import start_new_kernel
    except ImportError:
        print("check() in a kernel: skipped (the jupyter extra is not installed)")
        return
    manager, kc = start_new_kernel(env=ENV, cwd=str(FOLDER))
    try:
        code = (f"import time\nfrom grader import check\ncells = [open({str(solutions('ex05_*.py')[0])!r}).read()]\n"
                "times = []\nfor _ in range({n}):\n    t = time.perf_counter(); r = check('ex05', cells=cells)\n"
                "    times.append(time.perf_counter() - t)\nprint(sorted(times)[len(times) // 2], r.passed)")
        kc.execute_interactive(code.replace("{n}", "1"), output_hook=lambda msg: None, timeout=600)
        out = []
        kc.execute_interactive(code.replace("{n}", str(runs)), timeout=600,
                               output_hook=lambda msg: out.append(msg["content"].get("text", "")))
        median, passed = "".join(out).split()
        print(f"warm  check('ex05') in a live kernel         {float(median):6.2f} s  "
              f"(passed: {passed}; target < 0.3 s)")
    finally:
        kc.stop_channels()
        manager.shutdown_kernel(now=True)


def watch(runs: int) -> None:
    """From writing the file to the line after watch's table."""
    workspace = Path(tempfile.mkdtemp(prefix="tk-bench-ws-"))
    subprocess.run(GRADE + ["init", str(workspace / "ws")], capture_output=True, env=ENV)
    ws = workspace / "ws"
    target = next(ws.glob("exercises/ex05_*/ex05_*.py"))
    proc = subprocess.Popen(GRADE + ["watch", "ex05"], cwd=ws, env={**ENV, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def until_watching():
        while "Watching" not in proc.stdout.readline():
            pass

    until_watching()
    times = []
    solution, mistake = solutions("ex05_*.py")[0].read_text(), target.read_text()
    for i in range(runs):
        time.sleep(0.5)
        start = time.perf_counter()
        target.write_text(solution if i % 2 == 0 else mistake)
        until_watching()
        times.append(time.perf_counter() - start)
    proc.kill()
    proc.wait()
    shutil.rmtree(workspace, ignore_errors=True)
    print(f"warm  grade watch, save -> table           {statistics.median(times):6.2f} s  (median of {runs}; "
          f"target < 0.5 s)")


def memory() -> None:
    info = client.status(FOLDER)
    pss = next((line.split()[1] for line in Path(f"/proc/{info['pid']}/smaps_rollup").read_text().splitlines()
                if line.startswith("Pss:")), "0")
    print(f"service idle memory: {info['memory_mib']:.0f} MiB resident, {int(pss) / 1024:.0f} MiB proportional "
          f"(after {info['graded']} gradings)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--skip-kernel", action="store_true")
    args = parser.parse_args()
    try:
        baseline, _ = paired(IMPORT_TORCH, args.runs)
        print(f"baseline  python -c 'import torch'         {baseline:6.2f} s  (each run below is paired with one)")
        if not args.skip_cold:
            cold(args.runs)
        warm(args.warm_runs)
        if not args.skip_kernel:
            kernel(args.warm_runs * 2 + 1)
        watch(args.warm_runs * 2 + 1)
        memory()
        for cmd in (["--help"], ["list"]):
            t = statistics.median(wall(GRADE + cmd) for _ in range(args.runs))
            print(f"grade {' '.join(cmd):<36} {t:6.2f} s  (target < 0.5 s)")
    finally:
        client.stop(FOLDER)
        FOLDER.rmdir()


if __name__ == "__main__":
    main()
