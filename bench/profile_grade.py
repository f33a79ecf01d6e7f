"""Where a warm `grade exNN --file <solution>` spends its time, phase by phase (issue 23).

Usage: python bench/profile_grade.py [--runs 3] [GLOB]     (GLOB of solutions/, default every exercise)

The service runs in this process with timestamps around its phases (functions wrapped here, inherited by the
forked judges); each `grade` is a separate client process, as a learner runs it. Per exercise, the median in ms:

  client      the client's start: Python, its imports, finding the exercise, loading the file, connecting
  handle      the service reads the request, checks its fingerprints, loads the file, until the judge's fork
  fork        the fork of the judge
  pytest      the judge's start and its pytest.main until the checks are collected (configuration, plugins,
              fixtures)
  sandbox     the first check starts the sandbox: fork, isolation, scrub, the learner's file loaded
  checks      the checks themselves, until pytest's session finishes
  exit        from the judge's last result to the service noticing its end (pytest's teardown, the exit)
  answer      the service assembles the result and sends it
  render      the client reads the answer, prints the report and exits

Timings are wall-clock: read them on a quiet machine, or as shares of the total.
"""

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grader.judge.grading as judge  # noqa: E402
import grader.judge.plugin as plugin  # noqa: E402
import grader.sandbox.handle as handle  # noqa: E402
from grader.service import client, address, server  # noqa: E402

LOG = Path(tempfile.mkdtemp(prefix="tk-profile-")) / "marks"
PHASES = {  # phase: (the mark it starts at, the mark it ends at)
    "client": ("client>", "receive>"), "handle": ("receive>", "Grading>"), "fork": ("Grading>", "judge>"),
    "pytest": ("judge>", "collected>"), "sandbox": ("Sandbox.start>", "Sandbox.start<"),
    "checks": ("Sandbox.start<", "sessionfinish<"), "exit": ("sessionfinish<", "finish>"),
    "answer": ("finish>", "finish<"), "render": ("finish<", "client<"),
}


def mark(what: str) -> None:
    with open(LOG, "a") as log:
        log.write(f"{time.monotonic():.6f} {what}\n")


def wrap(owner, name: str, label: str) -> None:
    """Mark `label>` before and `label<` after each call of `owner.name` (forks inherit the wrapper)."""
    fn = getattr(owner, name)

    @functools.wraps(fn)
    def marked(*args, **kwargs):
        mark(f"{label}>")
        try:
            return fn(*args, **kwargs)
        finally:
            mark(f"{label}<")

    setattr(owner, name, marked)


def phases(cmd: list[str], env: dict) -> dict[str, float]:
    LOG.write_text("")
    mark("client>")
    subprocess.run(cmd, capture_output=True, cwd=ROOT, env=env)
    mark("client<")
    first: dict[str, float] = {}
    for line in LOG.read_text().splitlines():
        at, what = line.split()
        first.setdefault(what, float(at))
    took = {name: (first[end] - first[start]) * 1000 for name, (start, end) in PHASES.items()
            if start in first and end in first}
    took["total"] = (first["client<"] - first["client>"]) * 1000
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("glob", nargs="?", default="ex*_*.py")
    args = parser.parse_args()
    for owner, name, label in [(server.Service, "receive", "receive"), (server.Service, "finish", "finish"),
                               (judge.Grading, "__init__", "Grading"), (judge, "_judge_main", "judge"),
                               (plugin.JudgePlugin, "pytest_collection_finish", "collected"),
                               (plugin.JudgePlugin, "pytest_sessionfinish", "sessionfinish"),
                               (handle.Sandbox, "start", "Sandbox.start")]:
        wrap(owner, name, label)
    folder = Path(tempfile.mkdtemp(prefix="tk-profile-"))
    unset = (address.NO_SERVER_ENV, "CI", "PYTHONDONTWRITEBYTECODE")
    env = {**{k: v for k, v in os.environ.items() if k not in unset}, address.DIR_ENV: str(folder)}
    service = server.Service(folder, 600)
    service.listen()
    pid = os.fork()
    if pid == 0:  # the service, with the wrappers
        service.serve()
        os._exit(0)
    grade = [sys.executable, "-m", "grader.cli.main"]
    try:
        solutions = sorted((ROOT / "solutions").glob(args.glob))
        subprocess.run(grade + ["ex05", "--file", str(solutions[0])], capture_output=True, cwd=ROOT, env=env)
        while not (client.status(folder) or {}).get("warm"):  # it imports the rest once nobody waits
            time.sleep(0.5)
        print(f"{'ms':<28}" + "".join(f"{name:>9}" for name in [*PHASES, "total"]))
        for solution in solutions:
            cmd = grade + [solution.stem.split("_")[0], "--file", str(solution)]
            runs = [phases(cmd, env) for _ in range(args.runs)]
            print(f"{solution.stem[:28]:<28}" + "".join(
                f"{statistics.median(r.get(name, float('nan')) for r in runs):9.0f}" for name in [*PHASES, "total"]),
                flush=True)
    finally:
        client.stop(folder)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
