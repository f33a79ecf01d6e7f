"""The self-study loop with real files: init, list, show, next, hint, reset, solution, watch."""

import json
import os
import shutil
import subprocess
import sys
import time

import nbformat
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
    assert f"1/{len(listed)} done" in text and "\x1b[" not in text and "Stars: difficulty" in text


def test_grading_and_showing_write_nothing_in_the_workspace_but_its_progress(workspace, tmp_path):
    """A pytest plugin installed beside the grader (pytest-benchmark makes ./.benchmarks when pytest configures) never
    runs, in the judge nor where `grade show` collects the checks: the workspace holds the learner's files and the
    progress file, nothing else."""
    plugins = tmp_path / "site"
    (plugins / "writes_here-1.0.dist-info").mkdir(parents=True)
    (plugins / "writes_here-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: writes-here\n"
                                                                      "Version: 1.0\n")
    (plugins / "writes_here-1.0.dist-info" / "entry_points.txt").write_text("[pytest11]\nwrites_here = writes_here\n")
    (plugins / "writes_here.py").write_text("import os\n\ndef pytest_configure(config):\n"
                                            "    os.makedirs('.benchmarks', exist_ok=True)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])}
    probe = subprocess.run([sys.executable, "-c", "import importlib.metadata as m; "
                            "print([e.name for e in m.entry_points(group='pytest11')])"], env=env,
                           capture_output=True, text=True)
    assert "writes_here" in probe.stdout  # pytest would load it, as it loads pytest-benchmark
    before = sorted(p.name for p in workspace.iterdir())
    assert run_grade("ex01", cwd=workspace, env=env).returncode == 1
    assert run_grade("show", "ex01", cwd=workspace, env=env).returncode == 0
    assert run_grade("next", cwd=workspace, env=env).returncode == 0
    assert sorted(p.name for p in workspace.iterdir()) == sorted([*before, ".torch-katas-progress.json"])


def test_grading_a_file_from_elsewhere_does_not_touch_progress_and_says_so(workspace):
    proc = run_grade("ex05", "--file", SOLUTION, cwd=workspace)
    assert "Not recorded in your progress" in proc.stdout and str(SOLUTION) in proc.stdout
    assert not (workspace / ".torch-katas-progress.json").exists()


def test_a_notebook_in_the_workspace_counts_as_grade_ex05_does(workspace, tmp_path):
    """A pass of the learner's own notebook (in the workspace) is recorded: list says done, next moves on and
    the solution unlocks; the same notebook elsewhere is graded but not recorded."""
    notebook = workspace / "notebooks" / "ex05_manual_backward.ipynb"
    assert run_grade("notebook", "ex05", "--out", notebook, cwd=workspace).returncode == 0
    nb = nbformat.read(str(notebook), as_version=4)
    nb.cells.insert(-2, nbformat.v4.new_code_cell(SOLUTION.read_text()))
    nbformat.write(nb, str(notebook))
    elsewhere = tmp_path / "copy.ipynb"
    shutil.copy(notebook, elsewhere)
    outside = run_grade("ex05", "--file", elsewhere, cwd=workspace)
    assert outside.returncode == 0 and "Not recorded in your progress" in outside.stdout
    assert not (workspace / ".torch-katas-progress.json").exists()
    inside = run_grade("ex05", "--file", notebook, cwd=workspace / "notebooks")
    assert inside.returncode == 0 and f"Recorded in your progress ({workspace})" in inside.stdout
    states = {e["id"]: e["state"] for e in json.loads(run_grade("list", "--json", cwd=workspace).stdout)}
    assert states["ex05"] == "done"
    assert "def linear_grads" in run_grade("solution", "ex05", cwd=workspace).stdout


def test_check_in_a_notebook_records_progress(workspace, monkeypatch):
    from grader.learner.jupyter import check

    monkeypatch.chdir(workspace)
    result = check("ex05", cells=[SOLUTION.read_text()], lang="en")
    assert result.passed and f"Recorded in your progress ({workspace})" in repr(result)
    listed = json.loads(run_grade("list", "--json", cwd=workspace).stdout)
    assert {e["id"]: e["state"] for e in listed}["ex05"] == "done"


def test_hints_climb_and_are_remembered(workspace):
    first = run_grade("hint", "ex05", cwd=workspace).stdout
    second = run_grade("hint", "ex05", cwd=workspace).stdout
    assert "Hint 1/3" in first and "Hint 2/3" not in first
    assert "Hint 2/3" in second and "again for a stronger hint" in second
    everything = json.loads(run_grade("hint", "ex05", "--all", "--json", cwd=workspace).stdout)
    assert len(everything["hints"]) == 3
    zh = run_grade("hint", "ex05", "--all", "--lang", "zh", cwd=workspace).stdout
    assert "链式法则" in zh


def test_hint_show_reset_and_solution_default_to_the_current_exercise(workspace):
    """Without an argument, the exercise `next` and `watch` pick: the first one not done."""
    hint = run_grade("hint", cwd=workspace)
    assert hint.returncode == 0 and hint.stdout.startswith("ex01 · ") and "Hint 1/3" in hint.stdout
    assert "`grade hint ex01` again" in hint.stdout
    assert run_grade("show", cwd=workspace).stdout == run_grade("show", "ex01", cwd=workspace).stdout
    stub_of(workspace, "ex01_tensors").write_text(
        (ROOT / "solutions" / "ex01_tensors.py").read_text())
    assert run_grade("ex01", cwd=workspace).returncode == 0
    assert run_grade("show", "--json", cwd=workspace).stdout == run_grade("next", "--json", cwd=workspace).stdout
    locked = run_grade("solution", cwd=workspace)
    assert locked.returncode == 2 and "the solution of ex02 unlocks" in locked.stderr
    assert "the last one you solved: `grade solution ex01`" in locked.stderr
    stub_of(workspace, "ex02_views").write_text("# my attempt\n")
    reset = run_grade("reset", "--yes", cwd=workspace)
    assert reset.returncode == 0 and "Restored the stub of ex02" in reset.stdout


def test_show_and_next(workspace):
    shown = run_grade("show", "ex05", cwd=workspace).stdout
    assert "# ex05" in shown and str(stub_of(workspace)) in shown
    nxt = json.loads(run_grade("next", "--json", cwd=workspace).stdout)
    assert nxt["id"] == "ex01"
    assert "ex05" in json.loads(run_grade("show", "5", "--json", "--lang", "zh", cwd=workspace).stdout)["statement"]


def test_reset_asks_first_and_keeps_a_backup(workspace):
    stub = stub_of(workspace)
    original = stub.read_text()
    stub.write_text("# my attempt\n")
    kept = run_grade("reset", "ex05", input="n\n", cwd=workspace)
    assert kept.returncode == 1 and stub.read_text() == "# my attempt\n" and "Nothing changed" in kept.stdout
    assert ".torch-katas-backup/" in kept.stdout  # the backup is said before the question
    proc = run_grade("reset", "ex05", input="y\n", cwd=workspace)
    assert proc.returncode == 0 and stub.read_text() == original
    backups = list((workspace / ".torch-katas-backup").glob("ex05_manual_backward.*.py"))
    assert len(backups) == 1 and backups[0].read_text() == "# my attempt\n" and str(backups[0]) in proc.stdout
    untouched = run_grade("reset", "ex05", cwd=workspace)  # the stub as it is: nothing to lose, no question
    assert untouched.returncode == 0 and "?" not in untouched.stdout


def test_solution_unlocks_after_a_full_score(workspace):
    locked = run_grade("solution", "ex05", cwd=workspace)
    assert locked.returncode == 2 and "unlocks after a full score" in locked.stderr
    forced = run_grade("solution", "ex05", "--force", cwd=workspace)
    assert forced.returncode == 0 and "def linear_grads" in forced.stdout and "Warning" in forced.stderr
    stub_of(workspace).write_text(SOLUTION.read_text())
    run_grade("ex05", cwd=workspace)
    assert "def linear_grads" in run_grade("solution", "ex05", cwd=workspace).stdout


def read_until(proc, marker: str) -> str:
    text = ""
    while marker not in text:
        line = proc.stdout.readline()
        assert line, text + proc.stderr.read()
        text += line
    return text


def test_watch_says_each_thing_once(workspace):
    """One table with the first failure marked (no second block repeating it), the hint once, then again only when
    it changes (`grade hint` in another terminal), and the full score when the file is fixed."""
    mistake = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "sign_flipped.py"
    stub_of(workspace).write_text(mistake.read_text())
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "grader.cli.main", "watch", "ex05", "--interval", "0.1",
                             "--runs", "3"],
                            cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first = read_until(proc, "Watching")
    assert "6/10" in first and first.count("← first to fix") == 1 and first.count("opposite sign") == 2
    marked = next(line for line in first.splitlines() if "← first to fix" in line)
    assert "dw matches" in marked and first.count("Hint 1/3") == 1
    time.sleep(0.05)
    stub_of(workspace).write_text(mistake.read_text() + "\n# saved again\n")
    second = read_until(proc, "Watching")
    assert "6/10" in second and "Hint" not in second
    run_grade("hint", "ex05", cwd=workspace)
    run_grade("hint", "ex05", cwd=workspace)
    time.sleep(0.5)
    stub_of(workspace).write_text(SOLUTION.read_text())
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert rest.count("Hint 2/3") == 1 and "Hint 1/3" not in rest and rest.index("Hint 2/3") < rest.index("10/10")


def test_watch_follows_the_first_unfinished_exercise(workspace):
    proc = run_grade("watch", "--runs", "1", "--interval", "0.1", cwd=workspace)
    assert proc.returncode == 0 and "ex01" in proc.stdout


def test_no_color_and_colors_only_on_a_terminal():
    from grader.report.terminal import use_color

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
    proc = subprocess.run([sys.executable, "-c", "from grader.cli.main import main; main(prog_name='grade')"],
                          capture_output=True, text=True, env=env)
    assert "complete" in proc.stdout and "_grade_completion" in proc.stdout


def test_watch_hears_h_and_enter_as_asking_for_a_hint():
    from grader.learner.watch import asked_for_hint

    read, write = os.pipe()
    with os.fdopen(read) as keys:
        assert not asked_for_hint(keys, 0.01)  # nothing typed: it only waits
        os.write(write, b"x\n")
        assert not asked_for_hint(keys, 0.01)
        os.write(write, b"\nh\n")  # two lines at once: both are read
        assert asked_for_hint(keys, 0.01)
        os.close(write)
        started = time.monotonic()
        assert not asked_for_hint(keys, 0.05) and time.monotonic() - started >= 0.05  # closed: it waits, no spin
