"""What the sandbox's OS isolation costs: each layer's setup time in a child forked from a warm parent
(torch imported), and the whole grading of a submission with the layers against the same grading with
them switched off in this process (the baseline, measured in the same run).

Usage: python bench/bench_isolation.py [--runs 30]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402,F401 - the warm parent

from grader.sandbox import isolation  # noqa: E402


def layer_costs(runs: int) -> dict[str, float]:
    """Median milliseconds of each step in a forked child, as the sandbox runs them."""
    steps: dict[str, list[float]] = {}
    plan = isolation.Plan(tempfile.mkdtemp(prefix="torch-katas-bench-"), hidden=[str(ROOT / "solutions")])
    plan.readable()  # as in grading: the warm parent computes the allow-list once, forks inherit it
    for _ in range(runs):
        read, write = os.pipe()
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            times = {"fork (the sandbox, as before)": time.perf_counter() - started}

            def step(name, fn, *args):
                t = time.perf_counter()
                value = fn(*args)
                times[name] = time.perf_counter() - t
                return value

            step("unshare: user, PID, net, mount, IPC", isolation.unshare_all)
            t = time.perf_counter()
            if os.fork():
                os._exit(os.waitstatus_to_exitcode(os.waitpid(-1, 0)[1]))
            times["second fork (PID 1 of the namespace)"] = time.perf_counter() - t
            step("mounts: /proc, /tmp, /run, /dev/shm, masks", isolation.build_mounts, plan.workdir, plan.hidden,
                 plan.readable())
            if isolation.pid_max_per_namespace():
                step("process limit (the namespace's pid_max)", isolation.limit_processes, isolation.PROCESS_LIMIT)
            step("drop capabilities", isolation.drop_capabilities)
            paths = step("landlock: the allow-list (inherited)", plan.readable)
            step("landlock: ruleset and restrict", isolation.landlock, paths, plan.writable(), plan.devices(),
                 isolation.landlock_abi())
            step("seccomp", isolation.apply_seccomp)
            os.write(write, json.dumps(times).encode())
            os._exit(0)
        os.close(write)
        data = os.read(read, 65536)
        os.close(read)
        os.waitpid(pid, 0)
        for name, seconds in json.loads(data).items():
            steps.setdefault(name, []).append(seconds * 1000)
    return {name: statistics.median(values) for name, values in steps.items()}


def grading_time(runs: int, isolated: bool, forget: bool = True, zygote: bool = False) -> float:
    """Median seconds to grade ex05's untouched stub in this process (fork judge, sandbox, pytest, messages);
    `forget=False`: the sandbox keeps what it inherited (the env block, the frames, the check modules), as before;
    `zygote`: the sandbox is forked by the zygote (all layers on), not by the judge."""
    from grader.sandbox import process as sandbox
    from grader.course.exercises import find_exercise
    from grader.judge.grading import grade, prewarm
    from grader.sandbox.source import load_source

    saved = isolation.enter_before_fork, isolation.enter_after_fork, sandbox._forget
    if not forget:
        sandbox._forget = lambda limits: None
    if not isolated:
        sandbox.isolation.enter_before_fork = lambda plan, report: False
        sandbox.isolation.enter_after_fork = lambda plan, report, namespaces: None
    os.environ["TORCH_KATAS_ZYGOTE"] = "1" if zygote else "0"
    try:
        ex = find_exercise("ex05")
        source = load_source(ex.stub)
        prewarm([ex])  # as `grade batch` and the service do: the checks imported, the probes' code made, once
        grade(ex, source)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            grade(ex, source)
            times.append(time.perf_counter() - start)
    finally:
        sandbox.isolation.enter_before_fork, sandbox.isolation.enter_after_fork, sandbox._forget = saved
    return statistics.median(times)


def zygote_start() -> float:
    """Seconds a fresh Python takes to import what the zygote imports before it serves (grader/sandbox/zygote.py)."""
    import subprocess

    from grader.sandbox import zygote

    started = time.perf_counter()
    imports = "import torch, grader.sandbox.process, torch.fx.experimental.symbolic_shapes"
    subprocess.run([sys.executable, "-I", "-c", f"import json, sys; sys.path[:] = json.loads(sys.argv[1]); {imports}",
                    json.dumps(sys.path)],
                   env=zygote.clean_environment(), check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    user = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    print(f"Landlock ABI {isolation.landlock_abi()}, running as {user}")
    costs = layer_costs(args.runs)
    for name, ms in costs.items():
        print(f"  {name:<45} {ms:6.2f} ms")
    added = sum(ms for name, ms in costs.items() if not name.startswith("fork"))
    print(f"  {'isolation in all (beyond the plain fork)':<45} {added:6.2f} ms")
    plain = grading_time(args.runs, isolated=False)
    remembering = grading_time(args.runs, isolated=True, forget=False)
    isolated = grading_time(args.runs, isolated=True)
    spawned = grading_time(args.runs, isolated=True, zygote=True)  # its warm-up grading waits for the zygote
    ready = zygote_start()
    print(f"grading ex05's stub, layers off (baseline)  {plain * 1000:7.1f} ms")
    print(f"grading ex05's stub, layers on              {isolated * 1000:7.1f} ms   "
          f"({(isolated - plain) * 1000:+.1f} ms, x{isolated / plain:.2f}; target: overhead <= 200 ms in all)")
    print(f"  of which the sandbox forgetting what it inherited (env block, frames, checks): "
          f"{(isolated - remembering) * 1000:+.1f} ms (layers on, forgetting off: {remembering * 1000:.1f} ms)")
    print(f"grading ex05's stub, sandbox from the zygote {spawned * 1000:7.1f} ms   "
          f"({(spawned - isolated) * 1000:+.1f} ms, x{spawned / isolated:.2f} against the judge's fork, layers on)")
    print(f"  the zygote's start, once per session (what it imports, in a fresh Python): {ready:.2f} s")


if __name__ == "__main__":
    main()
