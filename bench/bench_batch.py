"""Batch grading speed: `grade batch` over 100 generated submissions (solutions, stubs and mistakes of
ex05 and ex06) against one `grade --file` process per submission and a naive pytest process per
submission; plus the per-submission grading overhead, a worker's peak memory, a rerun with nothing to
grade (against importing torch), and the class outputs of 500 students x 3 exercises (gradebook, page,
a feedback page each) against the time grading them takes at the rate just measured; with chromium
installed, the class page's load time in a headless browser against a blank page.

With --cluster (needs the cluster extra), only the Dask path instead: the same 100 submissions graded by
`grade batch --cluster local:2` (2 worker processes) against `grade batch --workers 2`, wall-clock and CPU time,
the cluster path's CPU per submission, Dask's own round trip per task, and the submissions per second of 1
and 2 workers.

Usage: python bench/bench_batch.py [--sample 20] [--cluster]   (sample: how many single runs to time and scale)
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
CLASS_EXERCISES = ["ex05_manual_backward", "ex06_manual_training_loop", "ex07_fix_zero_grad"]
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


def overhead(zygote: bool = True) -> float:
    """Median in-process time to grade an untouched stub: every check stops at once, so what is
    measured is the grading machinery (fork judge, pytest session, sandbox, messages). `zygote`: the sandbox is
    forked by the zygote (the default), else by the judge (as before issue 19)."""
    import os

    os.environ["TORCH_KATAS_ZYGOTE"] = "1" if zygote else "0"
    sys.path.insert(0, str(ROOT))
    from grader.course.exercises import find_exercise
    from grader.judge.grading import grade, prewarm
    from grader.sandbox.source import load_source

    times = []
    for name in EXERCISES:
        ex = find_exercise(name)
        source = load_source(ex.stub)
        prewarm([ex])  # as `grade batch` does: the checks imported once, the probes' code made once
        grade(ex, source)
        for _ in range(10):
            start = time.perf_counter()
            grade(ex, source)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def class_outputs(students: int) -> tuple[float, Path]:
    """Seconds to write every batch output of `students` x 3 exercises from results.jsonl (the results are
    real gradings of the solutions, stubs and mistakes, spread over the class); and the folder written."""
    from grader.course.exercises import find_exercise
    from grader.teacher.gradebook import write_gradebook
    from grader.judge.grading import grade
    from grader.sandbox.source import load_source

    graded = {name: [grade(find_exercise(name), load_source(p)) for p in candidates(name)] for name in CLASS_EXERCISES}
    out = Path(tempfile.mkdtemp())
    names = [f"s{i:03d}" for i in range(students)]
    with (out / "results.jsonl").open("w", encoding="utf-8") as f:
        for i, student in enumerate(names):
            for results in graded.values():
                f.write(json.dumps({**results[i % len(results)].to_json(), "student": student}) + "\n")
    start = time.perf_counter()
    write_gradebook(out, [find_exercise(n) for n in CLASS_EXERCISES], [], {s: {} for s in names})
    return time.perf_counter() - start, out


def browser_load(page: Path) -> tuple[float, float] | None:
    """Median seconds for headless chromium to load and lay out `page`, and a blank page (None without it)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return None

    def load(target: Path) -> float:
        with tempfile.TemporaryDirectory() as profile:
            return timed([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}", "--dump-dom",
                          target.as_uri()])

    blank = page.parent / "blank.html"
    blank.write_text("<!doctype html><title>blank</title>")
    return statistics.median(load(page) for _ in range(3)), statistics.median(load(blank) for _ in range(3))


def timed_cpu(cmd) -> tuple[float, float]:
    """Wall-clock seconds and CPU seconds of `cmd` and every process it started (all reaped when it ends)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def cluster(grade: list[str], rounds: int) -> None:
    """`grade batch --cluster local:2` and `local:1` (a LocalCluster of worker processes, started and stopped by
    the batch, so every process it used is counted) against `grade batch --workers 2`, in alternating rounds
    (the machine's speed drifts); wall-clock and CPU time, medians of the rounds."""
    import dask
    from distributed import Client, LocalCluster, as_completed

    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "subs"
        n = len(generate(subs))
        command = grade + ["batch", str(subs), "-e", "ex05", "-e", "ex06", "--force", "--out"]
        runs: dict[str, list[tuple[float, float]]] = {"local": [], "cluster 2": [], "cluster 1": []}
        for i in range(rounds):
            runs["local"].append(timed_cpu(command + [str(Path(tmp) / "local"), "--workers", "2"]))
            runs["cluster 2"].append(timed_cpu(command + [str(Path(tmp) / "two"), "--cluster", "local:2"]))
            lines = (Path(tmp) / "two" / "results.jsonl").read_text().splitlines()
            assert len(lines) == n * (i + 1), f"the cluster graded {len(lines) - n * i} of {n}"
        runs["cluster 1"].append(timed_cpu(command + [str(Path(tmp) / "one"), "--cluster", "local:1"]))
    dask.config.set({"distributed.worker.profile.enabled": False})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local_dask, \
            Client(local_dask) as client:  # Dask's own round trip: 200 empty tasks, 2 at a time
        start = time.perf_counter()
        list(as_completed(client.map(int, range(200), pure=False)))
        round_trip = (time.perf_counter() - start) / 200 * 2
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
    ratios = [c[0] / loc[0] for loc, c in zip(runs["local"], runs["cluster 2"])]
    print(f"{n} submissions (solutions, stubs and mistakes of ex05 and ex06), {rounds} alternating rounds")
    for name, label in (("local", "grade batch --workers 2"), ("cluster 2", "grade batch --cluster local:2"),
                        ("cluster 1", "grade batch --cluster local:1")):
        print(f"{label:34s} {wall[name]:6.1f} s  ({n / wall[name]:.1f} submissions/s)  CPU {cpu[name]:6.1f} s; "
              f"rounds: {', '.join(f'{w:.1f}' for w, _ in runs[name])}")
    print(f"  cluster of 2 / local, wall-clock {statistics.median(ratios):6.2f}x  (target <= 1.3x; rounds: "
          f"{', '.join(f'{r:.2f}' for r in ratios)})")
    print(f"  cluster of 2 / local, CPU time   {cpu['cluster 2'] / cpu['local']:6.2f}x  (what a busy machine "
          "pays for)")
    print(f"  2 workers / 1 worker             {wall['cluster 1'] / wall['cluster 2']:6.2f}x faster")
    extra = (cpu["cluster 2"] - cpu["local"]) / n
    print(f"the cluster path's CPU per submission beyond a local batch's {extra * 1000:5.0f} ms  (starting the "
          "workers and their grading processes, Dask, the pipe; over the submissions)")
    print(f"Dask's round trip per task {round_trip * 1000:5.1f} ms  (empty tasks, 2 at a time)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=20, help="single-process runs timed (scaled to 100)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--class-size", type=int, default=500, help="students of the class outputs measured")
    parser.add_argument("--cluster", action="store_true", help="measure the Dask cluster path instead")
    parser.add_argument("--rounds", type=int, default=3, help="with --cluster: alternating local and cluster runs")
    args = parser.parse_args()
    grade = [sys.executable, "-m", "grader.cli.main"]
    if args.cluster:
        return cluster(grade, args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "subs"
        made = generate(subs)
        n = len(made)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        batch = timed(grade + ["batch", str(subs), "-e", "ex05", "-e", "ex06", "--out", str(Path(tmp) / "out"),
                               "--workers", str(args.workers)])
        peak_kib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        rerun = timed(grade + ["batch", str(subs), "-e", "ex05", "-e", "ex06", "--out", str(Path(tmp) / "out")])
        torch_import = timed([sys.executable, "-c", "import torch"])
        lines = (Path(tmp) / "out" / "results.jsonl").read_text().splitlines()
        assert len(lines) == n, f"batch graded {len(lines)} of {n}"
        statuses = [json.loads(line)["status"] for line in lines]
        sample = made[:: max(1, n // args.sample)][: args.sample]
        single = statistics.mean(timed(grade + [ex, "--file", str(path), "--no-server"])  # a process each, cold
                                 for ex, path in sample) * n
        naive = statistics.mean(
            timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(NAIVE_TEST)],
                  env={"SUBMISSION": str(path), "EXERCISE": ex, "PATH": "/usr/bin:/bin"})
            for ex, path in sample) * n
    forked = overhead(zygote=False)
    per = overhead()
    outputs, folder = class_outputs(args.class_size)
    grading = batch / n * args.class_size * len(CLASS_EXERCISES)
    index = folder / "index.html"
    loads = browser_load(index)
    print(f"{n} submissions ({statuses.count('graded')} graded, {n - statuses.count('graded')} other statuses)")
    print(f"grade batch --workers {args.workers}        {batch:7.1f} s   ({batch / n:.2f} s per submission)")
    print(f"grade --file, one process each  {single:7.1f} s   (from {len(sample)} timed, scaled)  "
          f"batch is {single / batch:.1f}x faster (target >= 4x)")
    print(f"naive pytest process each       {naive:7.1f} s   (from {len(sample)} timed, scaled)  "
          f"batch is {naive / batch:.1f}x faster")
    print(f"grading overhead per submission {per:7.3f} s   (target <= 0.15 s; sandboxes from the zygote; forked from "
          f"the judge: {forked:.3f} s, x{per / forked:.2f})")
    print(f"largest RSS of any process      {peak_kib / 1024:7.0f} MiB (warm parent, judges and sandboxes; the torch "
          "pages forked children share are counted in each)")
    print(f"rerun, nothing to grade         {rerun:7.2f} s   ({rerun / torch_import:.2f}x `import torch`, "
          f"{torch_import:.2f} s: torch is not imported)")
    print(f"class outputs, {args.class_size} x {len(CLASS_EXERCISES)}         {outputs:7.2f} s   "
          f"({100 * outputs / grading:.1f}% of the {grading:.0f} s grading them takes at the rate above); index.html "
          f"{index.stat().st_size / 1024:.0f} KiB, all outputs "
          f"{sum(p.stat().st_size for p in folder.rglob('*') if p.is_file()) / 2**20:.1f} MiB")
    if loads:
        print(f"index.html in headless chromium {loads[0]:7.2f} s   (a blank page: {loads[1]:.2f} s, so "
              f"{loads[0] - loads[1]:.2f} s for the page)")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
