"""The self-study loop with real files: init, list, show, next, hint, reset, solution, watch."""

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, run_grade

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"


@pytest.fixture
def workspace(tmp_path):
    proc = run_grade("init", tmp_path / "ws")
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "ws"


def stub_of(ws, name="ex05_manual_backward"):
    return ws / "exercises" / name / f"{name}.py"


def test_init_copies_every_stub_and_refuses_twice(workspace):
    listed = json.loads(run_grade("list", "--json", cwd=workspace).stdout)
    assert all(stub_of(workspace, e["name"]).exists() for e in listed)
    assert (workspace / "exercises" / "ex05_manual_backward" / "README.zh.md").exists()
    again = run_grade("init", workspace)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_progress_is_remembered_from_a_subfolder(workspace):
    sub = workspace / "exercises" / "ex05_manual_backward"
    assert run_grade("ex05", cwd=sub).returncode == 1  # untouched stub
    states = {e["id"]: e["state"] for e in json.loads(run_grade("list", "--json", cwd=sub).stdout)}
    assert states["ex05"] == "in progress" and states["ex01"] == "not started"
    stub_of(workspace).write_text(SOLUTION.read_text())
    assert run_grade("5", cwd=sub).returncode == 0
    listed = json.loads(run_grade("list", "--json", cwd=workspace).stdout)
    assert {e["id"]: e["state"] for e in listed}["ex05"] == "done"
    text = run_grade("list", cwd=workspace).stdout
    assert f"1/{len(listed)} done" in text and "\x1b[" not in text


def test_grading_with_file_does_not_touch_progress(workspace):
    run_grade("ex05", "--file", SOLUTION, cwd=workspace)
    assert not (workspace / ".torch-katas-progress.json").exists()


def test_hints_climb_and_are_remembered(workspace):
    first = run_grade("hint", "ex05", cwd=workspace).stdout
    second = run_grade("hint", "ex05", cwd=workspace).stdout
    assert "Hint 1/3" in first and "Hint 2/3" not in first
    assert "Hint 2/3" in second and "again for a stronger hint" in second
    everything = json.loads(run_grade("hint", "ex05", "--all", "--json", cwd=workspace).stdout)
    assert len(everything["hints"]) == 3
    zh = run_grade("hint", "ex05", "--all", "--lang", "zh", cwd=workspace).stdout
    assert "链式法则" in zh


def test_show_and_next(workspace):
    shown = run_grade("show", "ex05", cwd=workspace).stdout
    assert "# ex05" in shown and str(stub_of(workspace)) in shown
    nxt = json.loads(run_grade("next", "--json", cwd=workspace).stdout)
    assert nxt["id"] == "ex01"
    assert "ex05" in json.loads(run_grade("show", "5", "--json", "--lang", "zh", cwd=workspace).stdout)["statement"]


def test_reset_restores_the_stub_and_keeps_a_backup(workspace):
    stub = stub_of(workspace)
    original = stub.read_text()
    stub.write_text("# my attempt\n")
    proc = run_grade("reset", "ex05", cwd=workspace)
    assert proc.returncode == 0 and stub.read_text() == original
    backups = list((workspace / ".torch-katas-backup").glob("ex05_manual_backward.*.py"))
    assert len(backups) == 1 and backups[0].read_text() == "# my attempt\n"


def test_solution_unlocks_after_a_full_score(workspace):
    locked = run_grade("solution", "ex05", cwd=workspace)
    assert locked.returncode == 2 and "unlocks after a full score" in locked.stderr
    forced = run_grade("solution", "ex05", "--force", cwd=workspace)
    assert forced.returncode == 0 and "def linear_grads" in forced.stdout and "Warning" in forced.stderr
    stub_of(workspace).write_text(SOLUTION.read_text())
    run_grade("ex05", cwd=workspace)
    assert "def linear_grads" in run_grade("solution", "ex05", cwd=workspace).stdout


def test_watch_regrades_on_save(workspace):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "grader.cli", "watch", "ex05", "--interval", "0.1", "--runs", "2"],
                            cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first = ""
    while "Watching" not in first:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        first += line
    assert "0/10" in first and "First to fix" in first and "Hint 1/3" in first
    time.sleep(0.05)
    stub_of(workspace).write_text(SOLUTION.read_text())
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert "10/10" in rest


def test_watch_follows_the_first_unfinished_exercise(workspace):
    proc = run_grade("watch", "--runs", "1", "--interval", "0.1", cwd=workspace)
    assert proc.returncode == 0 and "ex01" in proc.stdout


def test_no_color_and_colors_only_on_a_terminal():
    from grader.report import use_color

    class Tty:
        def isatty(self):
            return True

    os.environ.pop("NO_COLOR", None)
    assert use_color(Tty())
    os.environ["NO_COLOR"] = "1"
    try:
        assert not use_color(Tty())
    finally:
        del os.environ["NO_COLOR"]


def test_shell_completion_is_clicks():
    env = {**os.environ, "_GRADE_COMPLETE": "bash_source"}
    proc = subprocess.run([sys.executable, "-c", "from grader.cli import main; main(prog_name='grade')"],
                          capture_output=True, text=True, env=env)
    assert "complete" in proc.stdout and "_grade_completion" in proc.stdout
