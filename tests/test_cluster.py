"""`grade batch --cluster` on real Dask clusters: the same records and class outputs as a local batch, resume,
workers that refuse a batch, and a worker killed mid-batch whose submissions are graded elsewhere, once."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, grade_here, run_grade

pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed", reason="the cluster extra is not installed")

EX01 = "ex01_tensors"
EX05 = "ex05_manual_backward"
SLOW = "import time\ntime.sleep(2)  # a slow submission: its worker is busy with it for a while\n"


def stage(folder, files: dict) -> None:
    """Write {student: {file name: path or text}} as one folder per student."""
    for student, given in files.items():
        (folder / student).mkdir(parents=True)
        for name, src in given.items():
            (folder / student / name).write_text(src if isinstance(src, str) else src.read_text())


@pytest.fixture
def submissions(tmp_path):
    subs = tmp_path / "subs"
    stage(subs, {
        "s1": {"ex01.py": ROOT / "solutions" / f"{EX01}.py", "ex05.py": ROOT / "solutions" / f"{EX05}.py"},
        "s2": {"ex01.py": ROOT / "exercises" / EX01 / f"{EX01}.py",
               "ex05.py": ROOT / "tests" / "mistakes" / EX05 / "sign_flipped.py"},
        "s3": {"ex01.py": ROOT / "tests" / "mistakes" / EX01 / "default_int64.py",
               "ex05.ipynb": '{"cells": "not a list"}'},  # unreadable: an error, recorded by the batch itself
        "s4": {"ex01.py": ROOT / "tests" / "mistakes" / EX01 / "snapshot_with_detach.py",
               "ex05.py": ROOT / "exercises" / EX05 / f"{EX05}.py"},
    })
    return subs


@pytest.fixture(scope="module")
def local_cluster():
    """A Dask LocalCluster with 2 worker processes of one thread each."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster


def timeless(result: dict) -> dict:
    """A result without its duration, which differs from run to run."""
    return {k: v for k, v in result.items() if k != "duration_s"}


def outless(out, name: str) -> str:
    """A file of out/ as text, with out/'s own path (the kept copies of the graded files lie in it) as <out>."""
    return (out / name).read_text(encoding="utf-8").replace(str(out), "<out>")


def records(out) -> dict:
    """results.jsonl by (student, exercise), without the durations."""
    lines = [json.loads(line) for line in outless(out, "results.jsonl").splitlines()]
    return {(r["student"], r["exercise"]): timeless(r) for r in lines}


def lines_timeless(out) -> list[str]:
    """results.jsonl's lines as written, their durations blanked, in order of student and exercise."""
    lines = outless(out, "results.jsonl").splitlines()
    blanked = [re.sub(r'"duration_s": [0-9.e+-]+', '"duration_s": 0', line) for line in lines]
    return sorted(blanked, key=lambda line: (json.loads(line)["student"], json.loads(line)["exercise"]))


def test_a_cluster_grades_as_a_local_batch_does(submissions, tmp_path, local_cluster):
    local, remote = tmp_path / "local", tmp_path / "remote"
    proc = run_grade("batch", submissions, "--out", local, "--workers", "2", "--seed", "7")
    assert proc.returncode == 0, proc.stderr
    proc = run_grade("batch", submissions, "--out", remote, "--cluster", local_cluster.scheduler_address,
                     "--seed", "7", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["graded"] == 8

    mine, theirs = records(local), records(remote)
    assert len((remote / "results.jsonl").read_text().splitlines()) == len(theirs) == 8  # each graded once
    assert theirs == mine
    assert lines_timeless(remote) == lines_timeless(local)  # byte for byte: the same Result.to_json
    assert {k: r["score"] for k, r in theirs.items() if r["score"] == r["max_score"]} == \
        {("s1", "ex01"): 10.0, ("s1", "ex05"): 10.0}
    assert theirs[("s3", "ex05")]["status"] == "error" and not theirs[("s3", "ex05")].get("grader_failure")
    for name in ("gradebook.json", "grades.csv", "index.html", "problems.json", "feedback/s2.md", "feedback/s2.html"):
        assert outless(remote, name) == outless(local, name), name

    workers = json.loads((remote / "workers.json").read_text())
    assert len(workers) == 2 and all(w["ready"] for w in workers)
    assert {w["worker"] for w in workers} == set(local_cluster.scheduler_info["workers"])
    assert "Isolation of student code" in proc.stderr  # each worker's layers, as a local batch says its own
    layers = json.loads((remote / "gradebook.json").read_text())["isolation"]
    assert sum(group["count"] for group in layers) == 7  # every submission that reached a sandbox
    assert layers[0]["layers"] == workers[0]["isolation"]["applied"]

    proc = run_grade("batch", submissions, "--out", remote, "--cluster", "tcp://127.0.0.1:9", "--json")
    assert proc.returncode == 0, proc.stderr  # nothing left to grade: the cluster is not even asked
    assert json.loads(proc.stdout) == {**json.loads(proc.stdout), "graded": 0, "skipped": 8}


def test_a_teachers_course_travels_to_the_workers(local_cluster, tmp_path):
    root = tmp_path / "dl101"
    made = grade_here("new", "hw1_double", "--course", root, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    with (root / "course.toml").open("a") as f:
        f.write('\n[assignments.week1]\nexercises = ["hw1_double"]\n'
                '[assignments.week1.points]\n"hw1_double.double" = 4\n')
    subs = tmp_path / "subs"
    stage(subs, {"ana": {"hw1_double.py": root / "solutions" / "hw1_double.py"},
                 "ben": {"hw1_double.py": root / "exercises" / "hw1_double" / "hw1_double.py"}})
    args = ["batch", subs, "--assignment", "week1", "--seed", "5"]
    local = run_grade(*args, "--out", tmp_path / "local", "--workers", "2", cwd=root)
    remote = run_grade(*args, "--out", tmp_path / "remote", "--cluster", local_cluster.scheduler_address, cwd=root)
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr
    theirs = records(tmp_path / "remote")
    assert theirs == records(tmp_path / "local")  # the course was shipped as a zip, the points as overridden
    assert theirs[("ana", "hw1_double")]["score"] == theirs[("ana", "hw1_double")]["max_score"] > 0
    assert theirs[("ben", "hw1_double")]["score"] < theirs[("ben", "hw1_double")]["max_score"]


def test_a_worker_with_other_checks_or_fewer_layers_refuses(local_cluster, tmp_path):
    from grader.cluster.dispatch import grading_environment as fingerprint
    from grader.cluster.worker_plugin import GradingPlugin
    from grader.course.exercises import builtin_course

    mine = fingerprint(builtin_course())
    with distributed.Client(local_cluster) as client:
        other = {**mine, "course": "0" * 64, "torch": "1.0.0"}
        client.register_plugin(GradingPlugin("other", {"course": "torch-katas", "fingerprint": other, "require": [],
                                                       "exercises": [EX01]}, None), name="other")
        statuses = client.run(lambda dask_worker: dask_worker.plugins["other"].status)
        client.unregister_worker_plugin("other")
    for status in statuses.values():
        assert not status.get("ready")
        assert "another grader, course, torch or Python" in status["refused"]
        assert f"torch: the batch's 1.0.0, this worker's {mine['torch'][:12]}" in status["refused"]
        assert "course: the batch's 000000000000, this worker's" in status["refused"]

    subs = tmp_path / "subs"
    stage(subs, {"s1": {"ex01.py": ROOT / "solutions" / f"{EX01}.py"}})
    every = "namespaces,landlock,dedicated uid,seccomp,process limit"
    proc = run_grade("batch", subs, "--out", tmp_path / "out", "--cluster", local_cluster.scheduler_address,
                     "--require-isolation", every)
    report = json.loads(run_grade("doctor", "--json").stdout)
    if not report["missing"]:
        assert proc.returncode == 0, proc.stderr  # this machine has every layer: nothing to refuse
        return
    assert proc.returncode == 2, proc.stderr
    assert "no worker of the cluster can grade this batch" in proc.stderr and "REFUSED" in proc.stderr
    assert not (tmp_path / "out" / "results.jsonl").read_text()  # nothing graded without the layers


def test_a_grading_process_that_ended_is_started_again(local_cluster):
    from dataclasses import asdict

    from grader.cluster.dispatch import grading_environment as fingerprint
    from grader.cluster.worker_plugin import GradingPlugin, grade_task
    from grader.course.exercises import builtin_course
    from grader.sandbox.source import load_source

    course = builtin_course()
    ex = course.find("ex01")
    source = {**asdict(load_source(ex.solution)), "path": "s1/ex01.py"}
    request = {"exercise": ex.name, "points": ex.points, "overrides": {}, "source": source, "options": {"seed": 3}}
    config = {"course": "torch-katas", "fingerprint": fingerprint(course), "require": [], "exercises": [ex.name]}
    with distributed.Client(local_cluster) as client:
        client.register_plugin(GradingPlugin("again", config, None), name="again")
        try:
            first = client.submit(grade_task, "again", request, resources={"again": 1}, pure=False).result()
            pids = client.run(lambda dask_worker: dask_worker.plugins["again"].grader.process.pid)
            for pid in pids.values():
                os.kill(pid, signal.SIGKILL)
            while not all(client.run(lambda dask_worker: dask_worker.plugins["again"].grader.gone).values()):
                time.sleep(0.1)
            worker = next(iter(pids))
            again = client.submit(grade_task, "again", request, resources={"again": 1}, workers=[worker],
                                  pure=False).result()
            now = client.run(lambda dask_worker: dask_worker.plugins["again"].grader.process.pid, workers=[worker])
        finally:
            client.unregister_worker_plugin("again")
    assert first["score"] == again["score"] == ex.points and first["submission"] == "s1/ex01.py"
    assert timeless(first) == timeless(again)
    assert now[worker] != pids[worker]  # graded by a new grading process


def test_ctrl_c_keeps_what_is_done_and_the_same_command_goes_on(local_cluster, tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    stage(subs, {f"s{i:02d}": {"ex01.py": SLOW + (ROOT / "solutions" / f"{EX01}.py").read_text()} for i in range(6)})
    command = [sys.executable, "-m", "grader.cli.main", "batch", subs, "--out", out, "--cluster",
               local_cluster.scheduler_address]
    batch = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = out / "results.jsonl"
    while batch.poll() is None and not (results.exists() and results.read_text().count("\n")):
        time.sleep(0.1)
    batch.send_signal(signal.SIGINT)
    _, stderr = batch.communicate()
    assert batch.returncode == 130, stderr
    assert "Interrupted: what was graded is kept" in stderr
    kept = [json.loads(line)["student"] for line in results.read_text().splitlines()]
    assert 1 <= len(kept) < 6 and len(set(kept)) == len(kept)
    proc = run_grade("batch", subs, "--out", out, "--cluster", local_cluster.scheduler_address, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["skipped"] == len(kept)
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["student"] for r in lines) == [f"s{i:02d}" for i in range(6)]  # each once
    assert all(r["score"] == r["max_score"] for r in lines)


@pytest.mark.parametrize("args, error", [
    (["--cluster", "local:0"], "--cluster local:N needs a number of workers, not local:0"),
    (["--cluster", "nowhere.json"], "no such scheduler file: nowhere.json"),
    (["--require-isolation", "landlock"], "--require-isolation goes with --cluster"),
    (["--cluster-timeout", "5"], "--cluster-timeout goes with --cluster"),
    (["--cluster", "local:1", "--require-isolation", "landlock,moat"], "unknown isolation layer moat (known: "),
])
def test_bad_cluster_options_are_one_line_errors(tmp_path, args, error):
    stage(tmp_path / "subs", {"s1": {"ex01.py": "x = 1"}})
    proc = run_grade("batch", tmp_path / "subs", "--out", tmp_path / "out", *args)
    assert proc.returncode == 2 and proc.stderr.startswith(f"grade: error: {error}") and proc.stderr.count("\n") == 1


def test_extra_missing_says_what_to_install(tmp_path):
    stage(tmp_path / "subs", {"s1": {"ex01.py": "x = 1"}})
    code = "import sys, runpy; sys.modules['distributed'] = None; sys.argv = ['grade', *sys.argv[1:]]; " \
           "runpy.run_module('grader.cli.main', run_name='__main__')"
    proc = subprocess.run([sys.executable, "-c", code, "batch", str(tmp_path / "subs"), "--cluster", "local:1"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "grade: error: --cluster needs Dask: pip install 'torch-katas[cluster]'"


@contextlib.contextmanager
def dask_command_cluster(tmp_path, workers: int):
    """A scheduler and `workers` workers as the `dask` command starts them on a machine of a cluster (no nanny: a
    worker killed stays dead); yields the scheduler file."""
    scheduler_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    started = [subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
                                 scheduler_file], start_new_session=True, stderr=subprocess.DEVNULL)]
    try:
        while not scheduler_file.exists():
            assert started[0].poll() is None, "the scheduler did not start"
            time.sleep(0.1)
        worker = [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", scheduler_file,
                  "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard"]
        started += [subprocess.Popen(worker, start_new_session=True, stderr=subprocess.DEVNULL)
                    for _ in range(workers)]
        yield scheduler_file
    finally:
        for process in started:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()


def test_a_cluster_worker_sandbox_reaches_nothing(local_cluster, tmp_path):
    """A submission graded on a worker looks for the grader's sockets (the user's service under the home folder,
    runtime folders, abstract names, a socket pair) and the scheduler's address: it reaches none of them, and its
    score is its code's."""
    import shutil

    attack = ROOT / "tests" / "attacks" / "reach_the_service.py"
    scheduler = local_cluster.scheduler_address.removeprefix("tcp://")
    host, port = scheduler.rsplit(":", 1)
    source = attack.read_text() + (
        "\nimport socket as _s\ntry:\n"
        f"    _s.create_connection(({host!r}, {port}), 2).close()\n    print('reached the scheduler')\n"
        "except OSError:\n    pass\n")
    (tmp_path / "subs" / "mallory").mkdir(parents=True)
    (tmp_path / "subs" / "mallory" / "ex05.py").write_text(source)
    shutil.copytree(tmp_path / "subs" / "mallory", tmp_path / "subs" / "alice")
    shutil.copy(ROOT / "solutions" / "ex05_manual_backward.py", tmp_path / "subs" / "alice" / "ex05.py")
    out = tmp_path / "out"
    proc = run_grade("batch", tmp_path / "subs", "-e", "ex05", "--out", out, "--cluster",
                     local_cluster.scheduler_address)
    assert proc.returncode == 0, proc.stderr
    results = {r["student"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert results["alice"]["score"] == results["mallory"]["score"] == 10
    assert "reached: []" in results["mallory"]["output"] and "scheduler" not in results["mallory"]["output"]


def kill_a_busy_worker(client, batch, out) -> tuple[str, dict]:
    """Kill a worker in the middle of a grading, once a first result is recorded; its address, and every worker's
    pid."""
    pids = client.run(os.getpid)
    busy = None
    while busy is None and batch.poll() is None:
        results = out / "results.jsonl"
        done = results.exists() and results.read_text().count("\n")
        busy = next((w for w, keys in client.processing().items() if keys and done), None)
        time.sleep(0.1)
    assert busy is not None, "the batch ended before a worker could be killed"
    os.kill(pids[busy], signal.SIGKILL)
    return busy, pids


def test_a_worker_killed_mid_batch_loses_nothing_and_doubles_nothing(tmp_path):
    """One worker is killed while it grades, then the other's grading process: the submissions they held are graded
    again (by the other worker, by a new grading process), each recorded once, none as a failure; the lost worker
    is said as it happens, and in workers.json."""
    subs = tmp_path / "subs"
    solution = (ROOT / "solutions" / f"{EX05}.py").read_text()
    stage(subs, {f"s{i:02d}": {"ex05.py": SLOW + solution} for i in range(12)})
    with dask_command_cluster(tmp_path, 2) as scheduler_file:
        out = tmp_path / "out"
        batch = subprocess.Popen([sys.executable, "-m", "grader.cli.main", "batch", subs, "--out", out, "--cluster",
                                  scheduler_file, "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        with distributed.Client(scheduler_file=str(scheduler_file)) as client:
            client.wait_for_workers(2)
            busy, pids = kill_a_busy_worker(client, batch, out)
            survivor = next(w for w in pids if w != busy)
            grading = client.run(lambda dask_worker: [p.grader.process.pid for n, p in dask_worker.plugins.items()
                                                      if n.startswith("torch-katas-")], workers=[survivor])
            os.kill(grading[survivor][0], signal.SIGKILL)  # and the other's grading process: started again there
            stdout, stderr = batch.communicate()
    assert batch.returncode == 0, stderr
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["student"] for r in lines) == [f"s{i:02d}" for i in range(12)]  # all, once each
    assert all(r["status"] == "graded" and r["score"] == r["max_score"] for r in lines), stderr
    assert json.loads(stdout)["full"] == 12
    assert f"{busy} (" in stderr and ": LOST; what it was grading goes to another worker." in stderr
    workers = {w["worker"]: w for w in json.loads((out / "workers.json").read_text())}
    assert workers[busy].get("lost") and not workers[survivor].get("lost")


def test_a_cluster_left_without_workers_waits_says_so_and_stops_keeping_what_is_done(tmp_path):
    """Its only worker killed mid-batch: the batch says the worker is lost, says it waits for one, and after the
    teacher's timeout stops with a message and exit 124, what was graded kept; the same command goes on later."""
    subs = tmp_path / "subs"
    solution = (ROOT / "solutions" / f"{EX05}.py").read_text()
    stage(subs, {f"s{i:02d}": {"ex05.py": SLOW + solution} for i in range(6)})
    with dask_command_cluster(tmp_path, 1) as scheduler_file:
        out = tmp_path / "out"
        batch = subprocess.Popen([sys.executable, "-m", "grader.cli.main", "batch", subs, "--out", out, "--cluster",
                                  scheduler_file, "--cluster-timeout", "5"], cwd=ROOT, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        with distributed.Client(scheduler_file=str(scheduler_file)) as client:
            client.wait_for_workers(1)
            busy, _ = kill_a_busy_worker(client, batch, out)
            _, stderr = batch.communicate(timeout=300)
    assert batch.returncode == 124, stderr
    assert ": LOST;" in stderr and "No worker of the cluster can grade this batch: waiting for one" in stderr
    assert stderr.rstrip().endswith("grade: no worker of the cluster could grade this batch for 5 s: stopped; what "
                                    "was graded is kept, and the same command goes on"), stderr
    kept = [json.loads(line)["student"] for line in (out / "results.jsonl").read_text().splitlines()]
    assert 1 <= len(kept) < 6 and len(set(kept)) == len(kept)
    assert (out / "grades.csv").is_file()  # the gradebook of what is done
    assert json.loads((out / "workers.json").read_text())[0]["lost"]
