"""Hostile and broken submissions (tests/attacks/) through the real CLI: each ends with a clear
status, earns nothing it did not, and leaves nothing behind."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, grade_json

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
