"""The self-study loop with real files: init, list, show, next, hint, reset, solution, watch."""

import json
import os
import shutil
import subprocess
import sys
import time

import nbformat
import pytest

from conftest import ROOT, grade_here, run_grade

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"


@pytest.fixture
def workspace(tmp_path):
    proc = grade_here("init", tmp_path / "ws")
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "ws"


def stub_of(ws, name="ex05_manual_backward"):
    return ws / "exercises" / name / f"{name}.py"


def test_init_copies_every_stub_and_refuses_twice(workspace):
    listed = json.loads(grade_here("list", "--json", cwd=workspace).stdout)
    assert all(stub_of(workspace, e["name"]).exists() for e in listed)
    assert (workspace / "exercises" / "ex05_manual_backward" / "README.zh.md").exists()
    again = grade_here("init", workspace)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_progress_is_remembered_from_a_subfolder(workspace):
    sub = workspace / "exercises" / "ex05_manual_backward"
    assert grade_here("ex05", cwd=sub).returncode == 1  # untouched stub
    states = {e["id"]: e["state"] for e in json.loads(grade_here("list", "--json", cwd=sub).stdout)}
    assert states["ex05"] == "in progress" and states["ex01"] == "not started"
    stub_of(workspace).write_text(SOLUTION.read_text())
    assert grade_here("5", cwd=sub).returncode == 0
    listed = json.loads(grade_here("list", "--json", cwd=workspace).stdout)
    assert {e["id"]: e["state"] for e in listed}["ex05"] == "done"
    text = grade_here("list", cwd=workspace).stdout
    assert f"1/{len(listed)} done" in text and "\x1b[" not in text and "Stars: difficulty" in text


def test_grading_and_showing_write_nothing_in_the_workspace_but_its_progress(workspace, tmp_path):
    """A pytest plugin installed beside the grader (pytest-benchmark makes ./.benchmarks when pytest configures) never
    runs, in the judge nor where `grade show` collects the checks: the workspace holds the learner's files and the
    progress file (and its lock file), nothing else."""
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
    assert run_grade("ex01", cwd=workspace, env=env).returncode == 1  # a fresh Python each: it finds the plugin
    assert run_grade("show", "ex01", cwd=workspace, env=env).returncode == 0
    assert run_grade("next", cwd=workspace, env=env).returncode == 0
    assert sorted(p.name for p in workspace.iterdir()) == sorted([*before, ".torch-katas-progress.json",
                                                                  ".torch-katas-progress.json.lock"])


def test_grading_a_file_from_elsewhere_does_not_touch_progress_and_says_so(workspace):
    proc = grade_here("ex05", "--file", SOLUTION, cwd=workspace)
    assert "Not recorded in your progress" in proc.stdout and str(SOLUTION) in proc.stdout
    assert not (workspace / ".torch-katas-progress.json").exists()


def test_a_notebook_in_the_workspace_counts_as_grade_ex05_does(workspace, tmp_path):
    """A pass of the learner's own notebook (in the workspace) is recorded: list says done, next moves on and
    the solution unlocks; the same notebook elsewhere is graded but not recorded."""
    notebook = workspace / "notebooks" / "ex05_manual_backward.ipynb"
    assert grade_here("notebook", "ex05", "--out", notebook, cwd=workspace).returncode == 0
    nb = nbformat.read(str(notebook), as_version=4)
    nb.cells.insert(-2, nbformat.v4.new_code_cell(SOLUTION.read_text()))
    nbformat.write(nb, str(notebook))
    elsewhere = tmp_path / "copy.ipynb"
    shutil.copy(notebook, elsewhere)
    outside = grade_here("ex05", "--file", elsewhere, cwd=workspace)
    assert outside.returncode == 0 and "Not recorded in your progress" in outside.stdout
    assert not (workspace / ".torch-katas-progress.json").exists()
    inside = grade_here("ex05", "--file", notebook, cwd=workspace / "notebooks")
    assert inside.returncode == 0 and f"Recorded in your progress ({workspace})" in inside.stdout
    states = {e["id"]: e["state"] for e in json.loads(grade_here("list", "--json", cwd=workspace).stdout)}
    assert states["ex05"] == "done"
    assert "def linear_grads" in grade_here("solution", "ex05", cwd=workspace).stdout


def test_check_in_a_notebook_records_progress(workspace, monkeypatch):
    from grader.learner.jupyter import check

    monkeypatch.chdir(workspace)
    result = check("ex05", cells=[SOLUTION.read_text()], lang="en")
    assert result.passed and f"Recorded in your progress ({workspace})" in repr(result)
    listed = json.loads(grade_here("list", "--json", cwd=workspace).stdout)
    assert {e["id"]: e["state"] for e in listed}["ex05"] == "done"


def test_hints_climb_and_are_remembered(workspace):
    first = grade_here("hint", "ex05", cwd=workspace).stdout
    second = grade_here("hint", "ex05", cwd=workspace).stdout
    assert "Hint 1/3" in first and "Hint 2/3" not in first
    assert "Hint 2/3" in second and "again for a stronger hint" in second
    everything = json.loads(grade_here("hint", "ex05", "--all", "--json", cwd=workspace).stdout)
    assert len(everything["hints"]) == 3
    zh = grade_here("hint", "ex05", "--all", "--lang", "zh", cwd=workspace).stdout
    assert "链式法则" in zh


def test_hint_show_reset_and_solution_default_to_the_current_exercise(workspace):
    """Without an argument, the exercise `next` and `watch` pick: the first one not done."""
    hint = grade_here("hint", cwd=workspace)
    assert hint.returncode == 0 and hint.stdout.startswith("ex01 · ") and "Hint 1/3" in hint.stdout
    assert "`grade hint ex01` again" in hint.stdout
    assert grade_here("show", cwd=workspace).stdout == grade_here("show", "ex01", cwd=workspace).stdout
    stub_of(workspace, "ex01_tensors").write_text(
        (ROOT / "solutions" / "ex01_tensors.py").read_text())
    assert grade_here("ex01", cwd=workspace).returncode == 0
    assert grade_here("show", "--json", cwd=workspace).stdout == grade_here("next", "--json", cwd=workspace).stdout
    locked = grade_here("solution", cwd=workspace)
    assert locked.returncode == 2 and "the solution of ex02 unlocks" in locked.stderr
    assert "the last one you solved: `grade solution ex01`" in locked.stderr
    stub_of(workspace, "ex02_views").write_text("# my attempt\n")
    reset = grade_here("reset", "--yes", cwd=workspace)
    assert reset.returncode == 0 and "Restored the stub of ex02" in reset.stdout


def test_show_and_next(workspace):
    shown = grade_here("show", "ex05", cwd=workspace).stdout
    assert "# ex05" in shown and str(stub_of(workspace)) in shown
    nxt = json.loads(grade_here("next", "--json", cwd=workspace).stdout)
    assert nxt["id"] == "ex01"
    assert "ex05" in json.loads(grade_here("show", "5", "--json", "--lang", "zh", cwd=workspace).stdout)["statement"]


def test_reset_asks_first_and_keeps_a_backup(workspace):
    stub = stub_of(workspace)
    original = stub.read_text()
    stub.write_text("# my attempt\n")
    kept = grade_here("reset", "ex05", input="n\n", cwd=workspace)
    assert kept.returncode == 1 and stub.read_text() == "# my attempt\n" and "Nothing changed" in kept.stdout
    assert ".torch-katas-backup/" in kept.stdout  # the backup is said before the question
    proc = grade_here("reset", "ex05", input="y\n", cwd=workspace)
    assert proc.returncode == 0 and stub.read_text() == original
    backups = list((workspace / ".torch-katas-backup").glob("ex05_manual_backward.*.py"))
    assert len(backups) == 1 and backups[0].read_text() == "# my attempt\n" and str(backups[0]) in proc.stdout
    untouched = grade_here("reset", "ex05", cwd=workspace)  # the stub as it is: nothing to lose, no question
    assert untouched.returncode == 0 and "?" not in untouched.stdout


def test_solution_unlocks_after_a_full_score(workspace):
    locked = grade_here("solution", "ex05", cwd=workspace)
    assert locked.returncode == 2 and "unlocks after a full score" in locked.stderr
    forced = grade_here("solution", "ex05", "--force", cwd=workspace)
    assert forced.returncode == 0 and "def linear_grads" in forced.stdout and "Warning" in forced.stderr
    stub_of(workspace).write_text(SOLUTION.read_text())
    grade_here("ex05", cwd=workspace)
    assert "def linear_grads" in grade_here("solution", "ex05", cwd=workspace).stdout


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
    grade_here("hint", "ex05", cwd=workspace)
    grade_here("hint", "ex05", cwd=workspace)
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


def _record(path, writer, count, acks, stall_at=None):
    """A writer process: `count` records of its own through the store, each acknowledged on `acks` once written;
    with `stall_at`, it stops for good in the middle of writing that record (its temporary file written and synced,
    not yet in place), to be killed there."""
    from grader.learner import store

    if stall_at is not None:
        real = os.fsync

        def fsync(fd):
            real(fd)
            if stalled[0] == stall_at:
                os.write(acks, f"{writer} stalled\n".encode())
                time.sleep(3600)

        stalled = [0]
        store.os.fsync = fsync  # type: ignore[attr-defined]
    records = store.Store(path, dict)
    for i in range(count):
        if stall_at is not None:
            stalled[0] = i
        with records.change() as data:
            data[f"w{writer}-{i}"] = {"attempts": 1}
        os.write(acks, f"{writer} {i}\n".encode())
    os._exit(0)


def test_records_from_many_processes_at_once_are_never_lost_even_when_writers_are_killed(workspace):
    """Twelve writers record 40 records each into the progress store at once; three are killed (SIGKILL) in the middle
    of writing, after some of their records were acknowledged. Every acknowledged record is there, the file always
    reads, and the killed writers' temporary files are gone after a change. No timing: the kills wait for the
    writers' own words."""
    import multiprocessing
    import signal

    from grader.learner.store import Store
    from grader.learner.workspace import PROGRESS_FILE

    path = workspace / PROGRESS_FILE
    read_end, write_end = os.pipe()
    ctx = multiprocessing.get_context("fork")
    stalls = {0: 5, 1: 12, 2: 0}  # writer -> the record it is killed while writing
    writers = [ctx.Process(target=_record, args=(path, w, 40, write_end, stalls.get(w))) for w in range(12)]
    for w in writers:
        w.start()
    os.close(write_end)
    acked: dict[int, set[int]] = {w: set() for w in range(12)}
    killed = set()
    with os.fdopen(read_end) as lines:
        for line in lines:
            writer, what = line.split()
            if what == "stalled":
                os.kill(writers[int(writer)].pid, signal.SIGKILL)
                killed.add(int(writer))
            else:
                acked[int(writer)].add(int(what))
                assert isinstance(json.loads(path.read_text()), dict)  # the file reads, whenever it is looked at
    for w in writers:
        w.join()
    assert killed == set(stalls) and [writers[w].exitcode for w in killed] == [-signal.SIGKILL] * 3
    data = json.loads(path.read_text())
    assert {k for k in data} == {f"w{w}-{i}" for w, done in acked.items() for i in done}
    assert all(len(acked[w]) == 40 for w in range(3, 12)) and [len(acked[w]) for w in range(3)] == [5, 12, 0]
    with Store(path, dict).change() as again:
        again["after"] = {}
    assert not list(workspace.glob(f"{PROGRESS_FILE}.*.tmp"))
    assert len(json.loads(path.read_text())) == 9 * 40 + 5 + 12 + 1


def test_hints_and_gradings_in_processes_at_once_are_all_recorded(workspace):
    """Six `grade hint` and two `grade` processes at once, as a learner's terminals beside `grade watch`: each
    grading and each hint is in the progress file afterwards."""
    command = [sys.executable, "-m", "grader"]
    procs = [subprocess.Popen(command + ["hint", ex], cwd=workspace, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for ex in ("ex02", "ex03", "ex05") * 2]
    procs += [subprocess.Popen(command + [ex, "--no-server"], cwd=workspace, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE) for ex in ("ex01", "ex02")]
    assert [p.wait(timeout=300) for p in procs] == [0] * 6 + [1, 1], [p.stderr.read() for p in procs]
    progress = json.loads((workspace / ".torch-katas-progress.json").read_text())
    assert {ex: progress[ex].get("hints") for ex in ("ex02", "ex03", "ex05")} == {"ex02": 2, "ex03": 2, "ex05": 2}
    assert progress["ex01"]["attempts"] == 1 and progress["ex02"]["attempts"] == 1


def test_a_progress_file_that_cannot_be_read_is_kept_aside_and_said_so(workspace):
    (workspace / ".torch-katas-progress.json").write_text('{"ex05": {"best": 3')
    proc = grade_here("hint", "ex05", cwd=workspace)
    kept = list(workspace.glob(".torch-katas-progress.json.corrupt-*"))
    assert proc.returncode == 0 and len(kept) == 1 and kept[0].read_text() == '{"ex05": {"best": 3'
    assert f"kept as {kept[0].name}" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert json.loads((workspace / ".torch-katas-progress.json").read_text()) == {"ex05": {"hints": 1}}
    (workspace / ".torch-katas-progress.json").write_text("[1, 2]")
    zh = grade_here("list", "--lang", "zh", cwd=workspace, env={**os.environ, "LANG": "zh_CN.UTF-8"})
    assert zh.returncode == 0 and "已另存为" in zh.stderr
    assert len(list(workspace.glob(".torch-katas-progress.json.corrupt-*"))) == 2
