"""Hostile and broken submissions (tests/attacks/) through the real CLI: each ends with a clear
status, earns nothing it did not, and leaves nothing behind."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import (NAMESPACES, ROOT, dedicated_uid_or_skip, gets_a_dedicated_uid, grade_here, grade_json,
                      ordinary_user_or_skip, run_grade, run_grade_as)
from grader.sandbox import isolation

pytestmark = pytest.mark.slow

ATTACKS = ROOT / "tests" / "attacks"


def attack(name: str, *extra) -> dict:
    return grade_json("ex05", "--file", ATTACKS / f"{name}.py", "--time-limit", "2", *extra)


def messages(result) -> str:
    return " | ".join([c["message"] for c in result["checks"]] + [result["message"]])


def test_infinite_loop_times_out_and_keeps_other_points():
    result = attack("infinite_loop")
    assert result["status"] == "timeout"
    assert result["score"] == 3  # predict and mse_loss are right
    assert "did not finish within 2 s" in messages(result)
    assert result["duration_s"] < 30


def test_a_check_after_a_timeout_speaks_of_its_own_call():
    """linear_grads hangs in the first check that calls it; each later check that would call it says so in its own
    words, naming that check, and never repeats its message."""
    checks = attack("infinite_loop")["checks"]
    hung = [c for c in checks if "did not finish within 2 s" in c["message"]]
    assert len(hung) == 1
    later = checks[checks.index(hung[0]) + 1:]
    assert later and all(c["outcome"] == "failed" for c in later)
    for c in later:
        assert c["message"] == (f"`linear_grads` was not called: `linear_grads` ran past the time limit in an earlier "
                                f"check (“{hung[0]['title']}”).")


def test_sleep_at_import_times_out():
    result = attack("sleep_at_import")
    assert result["status"] == "timeout" and result["score"] == 0
    assert "top-level code" in messages(result)


def test_memory_bomb_is_a_clear_error():
    result = attack("memory_bomb", "--memory", "2048")
    assert result["score"] < 10 and "ran out of memory (the limit is 2048 MiB)" in messages(result)


def test_segfault_is_crashed():
    result = attack("segfault")
    assert result["status"] == "crashed" and result["score"] == 3
    assert "segmentation fault" in messages(result)


def test_forged_output_and_sys_exit_earn_nothing():
    result = attack("exit_at_import")
    assert result["status"] == "error" and result["score"] == 0
    assert "sys.exit()" in messages(result)
    assert '"score": 10.0' in result["output"]  # shown as what the learner printed, nothing more


def test_os_exit_and_writes_to_inherited_fds_earn_nothing():
    result = attack("os_exit_in_call")
    assert result["status"] == "crashed" and result["score"] == 3
    assert "os._exit()" in messages(result)
    assert [c["id"] for c in result["checks"]].count("dw") == 1


def test_base_exceptions_are_learner_errors():
    result = attack("keyboard_interrupt")
    assert result["status"] == "graded" and result["score"] == 0
    text = messages(result)
    assert "KeyboardInterrupt" in text and "sys.exit()" in text and "Escape" in text


def test_output_flood_is_capped():
    result = attack("output_flood")
    assert len(result["output"]) <= 520 and result["score"] < 10


def test_child_processes_are_killed():
    attack("child_processes")
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", "sleep 4242"], capture_output=True, text=True).stdout
    assert left == ""


def test_files_go_to_a_temporary_directory_and_solutions_are_hidden(tmp_path):
    result = grade_json("ex05", "--file", ATTACKS / "writes_files.py", cwd=tmp_path)
    assert not (tmp_path / "planted_by_student.txt").exists() and not (tmp_path / "conftest.py").exists()
    assert not (ROOT / "planted_by_student.txt").exists()
    assert result["checks"][0]["outcome"] == "not_started"  # the reference solution could not be imported


@pytest.mark.parametrize("name", ["patches_torch"])
def test_patching_torch_and_pytest_is_tampering(name):
    result = attack(name)
    assert result["status"] == "tampered" and result["score"] == 0
    assert "torch.allclose" in result["message"] and "tampering" in result["message"]


def test_lying_tensor_subclass_is_judged_on_its_data():
    result = attack("lying_subclass")
    assert result["score"] <= 3
    assert "all zeros" in messages(result)


def test_hard_coded_answers_fail_because_inputs_change(tmp_path):
    # An answer copied from one graded run: the values the checks used with seed 1.
    first = grade_json("ex05", "--file", ROOT / "solutions" / "ex05_manual_backward.py", "--seed", "1")
    assert first["score"] == 10
    cheat = tmp_path / "cheat.py"
    cheat.write_text(
        "import torch\n"
        "def predict(x, w, b):\n    return w * x + b\n"
        "def mse_loss(y_pred, y):\n    return ((y_pred - y) ** 2).mean()\n"
        "def linear_grads(x, y, w, b):\n    return torch.tensor([0.123]), torch.tensor([0.456])\n")
    assert grade_json("ex05", "--file", cheat)["score"] < 10


def test_grader_process_survives_every_attack_in_one_batch_of_calls():
    # Grading keeps working after the attacks above: no stray state in the parent.
    result = grade_json("ex05", "--file", ROOT / "solutions" / "ex05_manual_backward.py")
    assert result["score"] == 10 and os.getpid() > 0


def test_attacks_in_batch_mode_do_not_reach_other_students(tmp_path):
    """Every attack as a student of one batch, with honest students between them: each attack
    ends with its status, and every honest student still scores full."""
    import json as _json
    import shutil

    subs = tmp_path / "subs"
    attacks = ["patches_torch", "segfault", "os_exit_in_call", "exit_at_import", "child_processes",
               "keyboard_interrupt", "lying_subclass", "writes_files", "infinite_loop"]
    for k, name in enumerate(attacks):
        (subs / f"a{k}_{name}").mkdir(parents=True)
        shutil.copy(ATTACKS / f"{name}.py", subs / f"a{k}_{name}" / "ex05.py")
        (subs / f"a{k}_zhonest").mkdir()
        shutil.copy(ROOT / "solutions" / "ex05_manual_backward.py", subs / f"a{k}_zhonest" / "ex05.py")
    out = tmp_path / "grades"
    from conftest import run_grade

    proc = run_grade("batch", subs, "-e", "ex05", "--out", out, "--time-limit", "2", "--workers", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    results = {r["student"]: r for r in map(_json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert all(r["score"] == 10 for s, r in results.items() if s.endswith("zhonest"))
    assert results["a0_patches_torch"]["status"] == "tampered" and results["a1_segfault"]["status"] == "crashed"
    assert results["a3_exit_at_import"]["status"] == "error" and results["a8_infinite_loop"]["status"] == "timeout"
    assert all(r["score"] <= 3 for s, r in results.items() if not s.endswith("zhonest"))


def test_planted_files_in_a_student_folder_are_never_imported(tmp_path):
    """conftest.py, test_*.py and modules named like ours beside the submission do nothing."""
    import shutil

    marker = tmp_path / "imported.txt"
    student = tmp_path / "subs" / "eve"
    student.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "ex05_manual_backward.py", student / "ex05.py")
    plant = f"open({str(marker)!r}, 'a').write(__name__)\nraise SystemExit(0)\n"
    for name in ("conftest.py", "test_hack.py", "grader.py", "torch.py", "pytest.py", "submission.py"):
        (student / name).write_text(plant)
    import json as _json
    import sys

    grade = str(Path(sys.executable).parent / "grade")  # the console script, as a teacher runs it
    out = tmp_path / "grades"
    batch = subprocess.run([grade, "batch", str(tmp_path / "subs"), "-e", "ex05", "--out", str(out)], cwd=student,
                           capture_output=True, text=True)
    assert batch.returncode == 0, batch.stderr
    single = subprocess.run([grade, "ex05", "--file", "ex05.py", "--json"], cwd=student, capture_output=True, text=True)
    assert _json.loads(single.stdout)["score"] == 10 and not marker.exists()
    assert "eve,10" in (out / "grades.csv").read_text()


# -- attacks through the operating system: run as root and as an ordinary user ------------------------------

@pytest.fixture(params=["root", "root, a dedicated uid", "ordinary user"])
def user(request):
    """Who runs the grader: root with this Python (None); root with a Python other users can read, where each
    sandbox runs as a uid of its own (as in Docker or Gradescope); or an ordinary user (its name)."""
    return {"root": lambda: None, "root, a dedicated uid": dedicated_uid_or_skip,
            "ordinary user": ordinary_user_or_skip}[request.param]()


def os_attack(user, folder: Path, name: str, *extra, env=None, source: str | None = None) -> dict:
    """Grade tests/attacks/NAME.py (or `source`) as ex05, as `user`, from a folder that user can read."""
    path = folder / f"{name}.py"
    path.write_text(source if source is not None else (ATTACKS / f"{name}.py").read_text())
    path.chmod(0o644)
    proc = run_grade_as(user, "ex05", "--file", path, "--time-limit", "5", "--json", *extra, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    result = json.loads(proc.stdout)
    if result["isolation"]:  # unknown where the sandbox never answered (a timeout)
        assert ("dedicated uid" in result["isolation"]) == gets_a_dedicated_uid(user), result["isolation"]
    return result


def test_the_curriculum_runs_in_the_sandbox_whoever_grades(user):
    """What the exercises need works under every identity: DataLoader workers and /dev/shm (ex13),
    torch.save and torch.load (ex15), optimizers, which import torch._dynamo and write to TMPDIR (ex09)."""
    for exercise in ("ex09_optimizers", "ex13_data", "ex15_checkpoints"):
        proc = run_grade_as(user, exercise, "--file", ROOT / "solutions" / f"{exercise}.py", "--json")
        result = json.loads(proc.stdout)
        assert (result["status"], result["score"]) == ("graded", result["max_score"]), result


def test_doctor_names_the_layers_and_every_attempt_is_refused(user):
    """`grade doctor` sets up a sandbox as grading does; its self-test attacks the grading process."""
    proc = run_grade_as(user, "doctor", "--json")
    report = json.loads(proc.stdout)
    assert report["managed"] and not any(report["managed"].values()), report["managed"]
    assert proc.returncode == 0
    layers = {name.split(" (")[0] for name in report["applied"]}
    for layer, available in (("namespaces", NAMESPACES), ("landlock", isolation.landlock_abi() > 0),
                             ("process limit", NAMESPACES and isolation.pid_max_per_namespace())):
        assert (layer in layers) == available, (layer, report)
    assert "Every attempt was refused." in run_grade_as(user, "doctor").stdout


def test_forging_the_judges_result_pipe_earns_nothing(user, world_readable_tmp):
    result = os_attack(user, world_readable_tmp, "forge_result_pipe")
    assert result["status"] == "graded" and (result["score"], result["max_score"]) == (0, 10)
    assert {c["id"] for c in result["checks"]} == {"predict", "mse_loss", "grad_shapes", "dw", "db", "by_hand"}


def test_a_fork_bomb_stops_at_the_process_limit(user, world_readable_tmp):
    """The bomb gains nothing and the limit holds; its sandbox answering afterwards within the time limit is not
    asked (on a slow machine it may time out: an outcome for the attacker, not a failure of the grader)."""
    if not NAMESPACES or not isolation.pid_max_per_namespace():
        pytest.skip("the process limit needs namespaces and Linux 6.14+ (a pid_max per PID namespace)")
    result = os_attack(user, world_readable_tmp, "fork_bomb")
    assert result["status"] in ("graded", "timeout") and result["score"] <= 1, result["message"]
    forked = re.search(r"forked: (\d+)", result["output"])
    assert forked is None or 0 < int(forked.group(1)) < isolation.PROCESS_LIMIT
    assert forked is not None or result["status"] == "timeout"


def test_ptrace_and_memory_writes_on_the_judge_are_refused(user, world_readable_tmp):
    result = os_attack(user, world_readable_tmp, "ptrace_the_judge")
    assert "reached: []" in result["output"] and result["score"] == 0


def test_solutions_and_checks_cannot_be_read(user, world_readable_tmp):
    result = os_attack(user, world_readable_tmp, "peek_at_solutions")
    assert result["score"] == 0 and "read the checks: False" in result["output"]


def test_the_teachers_environment_stays_out_of_reach(user, world_readable_tmp):
    env = {**os.environ, "HF_TOKEN": "hf_secret_token_1234", "AWS_SECRET_ACCESS_KEY": "aws/secret/key/5678"}
    result = os_attack(user, world_readable_tmp, "leak_environment", env=env)
    assert "TMPDIR" in result["output"]  # it printed its environment: the sandbox's own
    text = json.dumps(result)
    assert "hf_secret_token_1234" not in text and "aws/secret/key/5678" not in text


def test_nothing_is_written_outside_the_work_dir(user, world_readable_tmp):
    import site

    result = os_attack(user, world_readable_tmp, "write_outside")
    assert result["score"] >= 1  # its predict ran: the attack ran to the end
    targets = [Path("/tmp/torch-katas-planted.txt"), Path("/root/torch-katas-planted.txt"),
               ROOT / "grader" / "planted.py", *(Path(p) / "torch_katas_planted.pth" for p in site.getsitepackages())]
    assert not [t for t in targets if t.exists()]


def test_no_network_not_even_loopback(user, world_readable_tmp):
    import socket
    import threading

    tcp = socket.create_server(("127.0.0.1", 0))
    unix_path = world_readable_tmp / "service.sock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(unix_path))
    unix_path.chmod(0o777)
    unix.listen()
    reached = []

    def serve(server):
        server.settimeout(15)
        try:
            conn, _ = server.accept()
            reached.append(conn.recv(100))
        except OSError:
            pass

    threads = [threading.Thread(target=serve, args=(s,)) for s in (tcp, unix)]
    for t in threads:
        t.start()
    source = (ATTACKS / "reach_the_network.py").read_text().replace("PORT = 0", f"PORT = {tcp.getsockname()[1]}") \
        .replace('SOCKET_PATH = ""', f"SOCKET_PATH = {str(unix_path)!r}")
    try:
        result = os_attack(user, world_readable_tmp, "reach_the_network", source=source)
    finally:
        tcp.close()
        unix.close()  # ends the accepts
        for t in threads:
            t.join()
    assert result["score"] >= 1 and reached == []


def test_batch_attacks_on_classmates_and_the_grader_cost_nobody_anything(user, world_readable_tmp):
    """Attackers that forge results, kill every process they see, copy a classmate, peek at the solutions,
    ptrace the judge or fork all they can, graded beside honest students, several at once: every honest
    student keeps a full score, no attacker gains a point."""
    import shutil

    subs = world_readable_tmp / "subs"
    attackers = ["forge_result_pipe", "kill_everyone", "copy_a_classmate", "peek_at_solutions", "ptrace_the_judge",
                 "fork_bomb"]
    for k, name in enumerate(attackers):
        for student, source in ((f"s{k}_{name}", ATTACKS / f"{name}.py"),
                                (f"s{k}_honest", ROOT / "solutions" / "ex05_manual_backward.py")):
            (subs / student).mkdir(parents=True)
            shutil.copy(source, subs / student / "ex05.py")
    for path in [subs, *subs.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    out = world_readable_tmp / "grades"
    out.mkdir()
    out.chmod(0o777)
    proc = run_grade_as(user, "batch", subs, "-e", "ex05", "--out", out, "--time-limit", "5", "--workers", "3",
                        "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Isolation of student code:" in proc.stderr
    results = {r["student"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert len(results) == 2 * len(attackers)
    honest = {s: (r["status"], r["score"]) for s, r in results.items() if s.endswith("honest")}
    assert set(honest.values()) == {("graded", 10)}, honest
    earned = {"s5_fork_bomb": 1}  # its predict is right, if its sandbox still serves after the bomb
    gained = {s: r["score"] for s, r in results.items() if not s.endswith("honest") and r["score"] > earned.get(s, 0)}
    assert gained == {}


# -- the result channel and judge failures ---------------------------------------------------------------

def judge_events(*checks, end=True):
    """A judge's event stream for ex05's checks: (id, points got) pairs."""
    declared = {"predict": 1.0, "mse_loss": 2.0, "grad_shapes": 2.0, "dw": 3.0, "db": 1.0, "by_hand": 1.0}
    events = [{"event": "collected", "checks": [{"id": k, "max_points": v} for k, v in declared.items()]}]
    for cid, points, *max_points in checks:
        full = max_points[0] if max_points else declared.get(cid, points)
        events.append({"event": "check", "id": cid, "title": cid, "outcome": "passed" if points else "failed",
                       "passed": bool(points), "points": points, "max_points": full, "message": "", "key": None})
    if end:
        events.append({"event": "end", "status": "graded", "output": "", "message": "", "curves": []})
    return events


@pytest.mark.parametrize("events,why", [
    (judge_events(("predict", 1.0), ("forged", 1000.0, 1000.0)), "unknown check 'forged'"),
    (judge_events(("predict", 1.0), ("predict", 1.0)), "the same check 'predict'"),
    (judge_events(("dw", 30.0, 30.0)), "points that do not match check 'dw'"),
    (judge_events(("dw", 2.0)), "points that do not match check 'dw'"),
    (judge_events(("predict", 1.0)) + [{"event": "end", "status": "graded"}], "events after the end"),
    (judge_events(("predict", 1.0))[1:], "no list of collected checks"),
])
def test_the_parent_accepts_only_what_a_judge_sends(events, why):
    from grader.course.exercises import find_exercise
    from grader.judge.grading import assemble
    from grader.sandbox.source import Source

    result = assemble(find_exercise("ex05"), Source([], "x.py", Path("x.py")), events, False, 0, 0.1)
    assert result.status == "error" and result.grader_failure and result.score == 0
    assert why in str(result.message) and "not a grade" in str(result.message)


def test_a_well_formed_stream_is_a_grade_and_a_dead_judge_is_not():
    from grader.course.exercises import find_exercise
    from grader.judge.grading import assemble
    from grader.sandbox.source import Source

    ex, src = find_exercise("ex05"), Source([], "x.py", Path("x.py"))
    every = [("predict", 1.0), ("mse_loss", 0.0), ("grad_shapes", 0.0), ("dw", 0.0), ("db", 0.0), ("by_hand", 0.0)]
    good = assemble(ex, src, judge_events(*every), False, 0, 0.1)
    assert good.status == "graded" and good.score == 1 and not good.grader_failure
    short = assemble(ex, src, judge_events(*every[:4]), False, 0, 0.1)  # two checks never said a word: not a grade
    assert short.status == "error" and short.grader_failure and "its checks are worth 8 points" in str(short.message)
    dead = assemble(ex, src, judge_events(("predict", 1.0), end=False), False, 0, 0.1, judge_failed=True)
    assert dead.status == "error" and dead.grader_failure and "ended before it finished" in str(dead.message)
    late = assemble(ex, src, judge_events(("predict", 1.0), end=False), True, 0, 0.1)
    assert late.status == "timeout" and not late.grader_failure  # killed at its deadline: slow code


def test_a_judge_killed_from_outside_is_graded_again(tmp_path):
    """In a batch, a judge that dies (here: SIGKILL from outside, as the OOM killer would) is retried once;
    the student's grade is the retry's, never a crash."""
    import signal

    subs = tmp_path / "subs"
    (subs / "slow").mkdir(parents=True)
    (subs / "slow" / "ex05.py").write_text("import time\ntime.sleep(3)\n"
                                           + (ROOT / "solutions" / "ex05_manual_backward.py").read_text())
    out = tmp_path / "grades"
    batch = subprocess.Popen([sys.executable, "-m", "grader.cli.main", "batch", str(subs), "-e", "ex05",
                              "--out", str(out),
                              "--workers", "1", "--time-limit", "10"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    def children(pid):
        try:
            return [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            return []

    def zygote(pid) -> bool:
        try:
            return b"grader.sandbox.zygote" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False

    judge = None
    deadline = time.monotonic() + 60
    while judge is None and time.monotonic() < deadline:  # batch -> zygote -> sandbox -> learner code (PID 1),
        kids = children(batch.pid)                         # batch -> judge
        started = [k for k in kids if zygote(k)]
        if any(children(s) for z in started for s in children(z)):
            judge = next((k for k in kids if k not in started), None)
        time.sleep(0.05)
    assert judge is not None, "no judge was seen"
    os.kill(judge, signal.SIGKILL)
    _, err = batch.communicate(timeout=120)
    assert batch.returncode == 0, err
    assert "slow/ex05: The grader itself failed" in err and "Grading it again." in err
    (result,) = map(json.loads, (out / "results.jsonl").read_text().splitlines())
    assert (result["status"], result["score"]) == ("graded", 10.0)


# -- the trusted side: what the judge and the parent do for the learner (issue 19) ----------------------------------

def scratch(folder: Path) -> dict:
    """An environment whose temporary folder is `folder` (open to every uid): where the grading's work dirs go,
    so a test sees what was left behind."""
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    return {**os.environ, "TMPDIR": str(folder)}


@pytest.mark.parametrize("target", ["a file of the grader's", "fifo"])
def test_the_judge_follows_no_link_and_cleans_what_was_made_unreadable(user, world_readable_tmp, target):
    """The work dir's output replaced by a link to a file only the grader may read, or by a FIFO; folders made
    unreadable: the judge reads its own descriptor, never blocks, and nothing stays behind."""
    secret = world_readable_tmp / "grader-only.txt"
    secret.write_text("teachers_token_1234")
    secret.chmod(0o600)
    link = "fifo" if target == "fifo" else str(secret)
    source = (ATTACKS / "link_the_output.py").read_text().replace('SECRET = ""', f"SECRET = {link!r}")
    env = scratch(world_readable_tmp / "scratch")
    result = os_attack(user, world_readable_tmp, "link_the_output", source=source, env=env)
    assert "teachers_token_1234" not in json.dumps(result)
    assert result["status"] == "graded" and result["score"] == 1  # predict: the attack ran to its end
    assert list((world_readable_tmp / "scratch").iterdir()) == []


def test_the_sandbox_holds_no_secret_memory(user, world_readable_tmp):
    """Not the teacher's environment block, not the judge's or the parent's variables, not the hidden checks
    by any name (tests/attacks/search_memory.py; what stays in memory unreferenced: docs/security.md)."""
    env = {**os.environ, "HF_TOKEN": "hf_secret_token_1234"}
    result = os_attack(user, world_readable_tmp, "search_memory", env=env)
    assert "found: []" in result["output"], result["output"]
    assert "hf_secret_token_1234" not in json.dumps(result)


def test_without_forgetting_the_sandbox_would_find_the_judges_variables(monkeypatch):
    """The same attack graded in this process, its sandbox forked from the judge (no zygote) with the sandbox's
    forgetting turned off: it finds them."""
    from grader.sandbox import process as sandbox
    from grader.course.exercises import find_exercise
    from grader.judge.grading import grade
    from grader.sandbox.source import load_source

    monkeypatch.setenv("TORCH_KATAS_ZYGOTE", "0")
    monkeypatch.setattr(sandbox, "_forget", lambda limits: None)
    result = grade(find_exercise("ex05"), load_source(ATTACKS / "search_memory.py"))
    assert "the locals of" in result.output and "found: []" not in result.output


def test_a_sandbox_from_the_zygote_holds_nothing_of_the_graders_even_unreferenced(user, world_readable_tmp):
    """What the garbage collector still lists and raw memory still holds (tests/attacks/search_raw_memory.py):
    a sandbox started by the zygote never held the checks, the gradings or the teacher's token."""
    env = {**os.environ, "HF_TOKEN": "hf_secret_token_1234"}
    result = os_attack(user, world_readable_tmp, "search_raw_memory", env=env)
    assert "deep found: []" in result["output"], result["output"]
    assert result["score"] == 1  # its predict: the attack ran to its end


def test_a_sandbox_forked_from_the_judge_still_reaches_the_checks(monkeypatch):
    """The same attack with the zygote switched off: after gc.unfreeze() the forked sandbox lists the parent's
    grading and the judge's code (what scrub.py cannot reach); the hidden check module and its reference
    computations too, whenever anything of the judge's or the parent's still refers to them (the sandbox now forks
    before pytest collects the checks, so in a process that never imported them nothing does)."""
    from grader.course.exercises import find_exercise
    from grader.judge.grading import grade
    from grader.sandbox.source import load_source

    monkeypatch.setenv("TORCH_KATAS_ZYGOTE", "0")
    result = grade(find_exercise("ex05"), load_source(ATTACKS / "search_raw_memory.py"))
    found = result.output.rsplit("deep found:", 1)[-1]
    for leak in ("a Grading", "a function of grader.judge.grading"):
        assert leak in found, result.output


@pytest.mark.parametrize("zygote", ["1", "0"])
def test_a_batch_sandbox_holds_no_job_and_no_classmates_folder(tmp_path, zygote):
    """A batch: the attacker's sandbox searches the gc's lists for the batch's jobs and the batch's code, and its
    raw memory for a classmate's folder. Forked from the judge (the old path) it finds jobs and the batch's
    functions; started by the zygote, nothing."""
    import shutil

    subs = tmp_path / "subs"
    for student, source in (("classmate_zz_folder", ROOT / "solutions" / "ex05_manual_backward.py"),
                            ("attacker", ATTACKS / "search_raw_memory.py")):
        (subs / student).mkdir(parents=True)
        shutil.copy(source, subs / student / "ex05.py")
    out = tmp_path / "grades"
    proc = run_grade("batch", subs, "-e", "ex05", "--out", out, "--workers", "1", "--json",
                     env={**os.environ, "TORCH_KATAS_ZYGOTE": zygote})
    assert proc.returncode == 0, proc.stderr
    results = {r["student"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    output = results["attacker"]["output"]
    if zygote == "1":
        assert "deep found: []" in output, output
    else:
        assert "a Job" in output and "a function of grader.teacher.batch" in output, output


ROUTES = ["engine", "default argument", "torch.func", "jacobian", "thread", "own hooks", "fork", "forward mode",
          "sympy", "finite differences"]


@pytest.mark.parametrize("route", ROUTES)
def test_gradients_from_autograd_by_any_route_are_not_earned(tmp_path, route):
    """Whatever machine differentiates for linear_grads (autograd by any entry point or thread, forward-mode AD,
    torch.func, a child process, sympy, finite differences): its values earn nothing, and the source is flagged."""
    path = tmp_path / "ex05.py"
    path.write_text((ATTACKS / "autograd_routes.py").read_text().replace('ROUTE = "engine"', f"ROUTE = {route!r}"))
    result = grade_json("ex05", "--file", path)
    assert result["score"] == 3  # what predict and mse_loss earn
    assert {c["id"] for c in result["checks"] if not c["passed"]} == {"grad_shapes", "dw", "db", "by_hand"}
    assert result["flags"] and "autograd" in {f["route"] for f in result["flags"]}


def test_code_that_is_honest_only_while_watched_gains_nothing(tmp_path):
    """linear_grads that derives by hand only while the grader's saved-tensor hooks are set, and uses autograd
    otherwise: every value the checks judge comes from a watched call, so it earns what its derivation earns, and
    what it looks at is flagged for a person."""
    path = tmp_path / "ex05.py"
    path.write_text((ATTACKS / "autograd_routes.py").read_text().replace('ROUTE = "engine"',
                                                                         'ROUTE = "tell the probe apart"'))
    result = grade_json("ex05", "--file", path)
    assert any("_top_saved_tensors_default_hooks" in f["what"] for f in result["flags"]), result["flags"]


OUT_OF_SIGHT = {  # tests/attacks/out_of_sight.py's routes: what the by-hand check names, what the scan flags
    "make_fx": ("traced from autograd", "import of `torch.fx.experimental.proxy_tensor`"),
    "thread at import": ("another thread worked", "import of `threading`"),
    "process at import": ("a child process was alive", "import of `torch.multiprocessing`"),
    "start_new_thread": ("another thread worked", "`.start_new_thread`"),
    "profile hook off": ("the grader's watch was switched off", "`.attrgetter`"),
    "aten backward": ("ATen's own backward kernels", "`.mse_loss_backward`"),
    "dual numbers": ("finite differences", "dual numbers?"),
    "complex step": ("complex-step differentiation", "the complex number"),
    "inline finite differences": ("w or b shifted by a small step", None),
}


def out_of_sight(route: str) -> str:
    return (ATTACKS / "out_of_sight.py").read_text().replace('ROUTE = "make_fx"', f"ROUTE = {route!r}")


@pytest.mark.parametrize("route", OUT_OF_SIGHT)
def test_gradients_computed_out_of_the_calls_sight_are_not_earned(tmp_path, route):
    """A machine that differentiates where the call's own watch does not look (a graph traced at import, a thread or
    a process started at import, a thread started with _thread, the profile hook switched off through a name in
    pieces, ATen's backward kernel, dual numbers, complex step, finite differences written inline): the gradient
    checks fail with a message naming what was seen, and the scan flags the name the route takes."""
    path = tmp_path / "ex05.py"
    path.write_text(out_of_sight(route))
    result = grade_json("ex05", "--file", path, "--time-limit", "60")  # make_fx's import takes seconds: not the lesson
    assert (result["status"], result["score"]) == ("graded", 3), result
    assert {c["id"] for c in result["checks"] if not c["passed"]} == {"grad_shapes", "dw", "db", "by_hand"}
    said, flagged = OUT_OF_SIGHT[route]
    assert said in next(c["message"] for c in result["checks"] if c["id"] == "by_hand")
    if flagged:
        assert any(flagged in f["what"] for f in result["flags"]), result["flags"]


def test_gradients_out_of_sight_in_a_batch_earn_nothing_whoever_grades(user, world_readable_tmp):
    """The out-of-sight routes as students of one batch, beside honest students, as root, as a dedicated uid and as
    an ordinary user: every route earns what predict and mse_loss earn, every honest student full."""
    subs = world_readable_tmp / "subs"
    for k, route in enumerate(OUT_OF_SIGHT):
        for student, source in ((f"s{k}_route", out_of_sight(route)),
                                (f"s{k}_honest", (ROOT / "solutions" / "ex05_manual_backward.py").read_text())):
            (subs / student).mkdir(parents=True)
            (subs / student / "ex05.py").write_text(source)
    for path in [subs, *subs.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    out = world_readable_tmp / "grades"
    out.mkdir()
    out.chmod(0o777)
    proc = run_grade_as(user, "batch", subs, "-e", "ex05", "--out", out, "--workers", "2", "--time-limit", "60",
                        "--json")
    assert proc.returncode == 0, proc.stderr
    results = {r["student"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert {(r["status"], r["score"]) for s, r in results.items() if s.endswith("honest")} == {("graded", 10)}
    assert {s: r["score"] for s, r in results.items() if s.endswith("route")} == {
        f"s{k}_route": 3 for k in range(len(OUT_OF_SIGHT))}


def test_replacing_the_graders_probe_is_tampering():
    result = attack("replace_the_probe")
    assert (result["status"], result["score"]) == ("tampered", 0)
    assert "PROBES" in result["message"]


@pytest.mark.parametrize("name,text", [
    ("deep.ipynb", "[" * 100_000 + "]" * 100_000),
    ("number.ipynb", json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                 "cells": [{"cell_type": "code", "source": 5, "metadata": {}, "outputs": []}]})),
    ("cookie.py", "# -*- coding: no-such-codec -*-\n"),
])
def test_a_file_that_cannot_be_read_is_a_json_error_with_exit_2(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    proc = grade_here("ex05", "--file", tmp_path / name, "--json")
    assert proc.returncode == 2 and proc.stderr == ""
    result = json.loads(proc.stdout)
    assert result["status"] == "error" and result["score"] == 0 and "\n" not in result["message"]
    plain = grade_here("ex05", "--file", tmp_path / name)
    assert plain.returncode == 2 and plain.stderr.startswith("grade: error:") and len(plain.stderr.splitlines()) == 1


def test_a_gbk_file_python_runs_is_graded(tmp_path):
    code = (ROOT / "solutions" / "ex05_manual_backward.py").read_text(encoding="utf-8")
    (tmp_path / "ex05.py").write_bytes(("# -*- coding: gbk -*-\n# 手写反向传播\n" + code).encode("gbk"))
    result = grade_json("ex05", "--file", tmp_path / "ex05.py")
    assert (result["status"], result["score"]) == ("graded", 10)


def test_a_batch_of_broken_files_and_formula_names_finishes_with_its_gradebook(tmp_path):
    """Beside honest classmates: a notebook nested 100 000 deep, a cell source that is a number, a FIFO, a corrupt
    zip, a student folder named as a spreadsheet formula. The batch finishes, every honest student keeps a full
    score, each broken file is that student's error, and grades.csv holds no formula."""
    import csv
    import io
    import shutil

    subs = tmp_path / "subs"
    honest = ROOT / "solutions" / "ex05_manual_backward.py"
    evil = '=HYPERLINK("http:\\\\evil","x")'  # a folder name has no slash: the issue's own example
    for student in ("s1_honest", evil, "s3_deep", "s4_number", "s5_fifo"):
        (subs / student).mkdir(parents=True)
    shutil.copy(honest, subs / "s1_honest" / "ex05.py")
    shutil.copy(honest, subs / evil / "ex05.py")
    (subs / "s3_deep" / "ex05.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    (subs / "s4_number" / "ex05.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                               "cells": [{"cell_type": "code", "source": 5}]}))
    os.mkfifo(subs / "s5_fifo" / "ex05.py")
    (subs / "s6_corrupt.zip").write_bytes(b"PK\x03\x04 broken")
    out = tmp_path / "grades"
    proc = run_grade("batch", subs, "-e", "ex05", "--out", out, "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    results = {r["student"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert (results["s1_honest"]["score"], results[evil]["score"]) == (10, 10)
    for student in ("s3_deep", "s4_number"):
        assert results[student]["status"] == "error" and "\n" not in results[student]["message"]
    rows = {row["student"]: row for row in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert "'" + evil in rows and rows["'" + evil]["ex05"] == "10"
    assert not any(cell.startswith(("=", "+", "@")) for row in rows.values() for cell in row.values() if cell)
    assert "not a regular file" in rows["s5_fifo"]["problems"]
    assert "not a readable zip" in rows["s6_corrupt"]["problems"]


# -- one memory budget, and learner text that drives nothing (issue 34) ------------------------------------

def test_children_and_files_share_one_memory_budget(user, world_readable_tmp):
    """Six children each holding 400 MiB and files filling the work dir and /dev/shm, under --memory 2048: with a
    memory cgroup, all of it together stays within 2048 MiB (the kernel stops what passes it); without one (an
    ordinary user whose cgroup is not delegated), the files stay within their share of the budget (512 MiB) and
    `grade doctor` says the cgroup is missing."""
    result = os_attack(user, world_readable_tmp, "hold_memory", "--memory", "2048", "--time-limit", "60")
    assert result["score"] <= 1, result
    held = re.search(r"held: (\d+) written: (\d+)", result["output"])
    cgroup = "memory cgroup" in result["isolation"]
    if held is None:  # the kernel stopped the sandbox's own process: said, and never a gain
        assert cgroup and "memory" in result["message"], result
        return
    children, written = int(held.group(1)), int(held.group(2))
    assert written <= 512, written
    if cgroup:
        assert children * 400 + written <= 2048, (children, written)
    else:
        assert "memory cgroup" in json.loads(run_grade_as(user, "doctor", "--json").stdout)["missing"]


def test_learner_text_never_drives_a_terminal_a_spreadsheet_or_a_page(tmp_path):
    """Escape sequences in what a submission prints and raises, and in a student's folder name beside an
    `<img onerror=...>`: the terminal shows them as escapes, --json leaves none raw, grades.csv has none, and
    the pages and the Markdown feedback escape the markup."""
    import shutil

    attack = ATTACKS / "draw_on_the_terminal.py"
    shown = grade_here("ex05", "--file", attack)
    assert "\x1b" not in shown.stdout + shown.stderr and "\x07" not in shown.stdout and "\x9b" not in shown.stdout
    assert "\\x1b]0;pwned\\x07" in shown.stdout and "\\u202e" in shown.stdout
    as_json = grade_here("ex05", "--file", attack, "--json").stdout
    assert not any(c in as_json for c in "\x1b\x07\x9b\u202e") and json.loads(as_json)["score"] == 0
    subs = tmp_path / "subs"
    name = "eve\x1b]0;pwned\x07<img src=x onerror=alert(1)>"
    for student, source in ((name, attack), ("ann", ROOT / "solutions" / "ex05_manual_backward.py")):
        (subs / student).mkdir(parents=True)
        shutil.copy(source, subs / student / "ex05.py")
    out = tmp_path / "grades"
    batch = run_grade("batch", subs, "-e", "ex05", "--out", out)
    assert batch.returncode == 0 and "\x1b" not in batch.stdout + batch.stderr, batch.stderr
    csv_text = (out / "grades.csv").read_text()
    assert not any(c in csv_text for c in "\x1b\x07\x9b\u202e") and "ann" in csv_text
    for page in [out / "index.html", *(out / "feedback").glob("*.html"), *(out / "feedback").glob("*.md")]:
        text = page.read_text()
        assert "<img src=x" not in text and "\x1b" not in text, page
    assert any("&lt;img src=x" in p.read_text() for p in (out / "feedback").glob("*.md"))
