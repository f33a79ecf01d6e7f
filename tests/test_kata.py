"""Kata mode: two weeks of practice on a fake clock (redo, fresh variants, bests, the FSRS schedule, `grade today`),
the state file under crashes and concurrent writers, variants' templates, watch and notebooks in kata mode."""

import json
import multiprocessing
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from conftest import ROOT, run_grade
from grader.learner import kata
from grader.course import variants
from grader.cli.main import main
from grader.course.exercises import all_exercises, find_exercise

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)  # a Monday, 09:00


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    proc = run_grade("init", tmp_path / "ws")
    assert proc.returncode == 0, proc.stderr
    monkeypatch.chdir(tmp_path / "ws")
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield tmp_path / "ws"
    monkeypatch.undo()
    time.tzset()


class Learner:
    """Runs `grade` commands in this process at the moment the fake clock says."""

    def __init__(self, root, monkeypatch):
        self.root, self.monkeypatch, self.now = root, monkeypatch, START
        self.at(START)

    def at(self, moment):
        self.now = moment
        self.monkeypatch.setenv(kata.NOW_ENV, moment.isoformat())

    def later(self, **delta):
        self.at(self.now + timedelta(**delta))

    def grade(self, *args, code=None):
        result = CliRunner().invoke(main, [*args] + ([] if "--lang" in args else ["--lang", "en"]))
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        if code is not None:
            assert result.exit_code == code, result.output
        return result.output

    def state(self, ex_id):
        return json.loads((self.root / kata.STATE_FILE).read_text())["katas"].get(ex_id, {})

    def attempt(self, ex_id):
        return self.state(ex_id)["attempts"][-1]

    def today(self):
        return json.loads(self.grade("today", "--json", code=0))

    def write(self, ex_id, draw):
        """Write the reference solution of `draw` (another draw's solution: a memorised answer) in the attempt."""
        ex = find_exercise(ex_id)
        attempt = self.attempt(ex_id)
        (self.root / attempt["folder"] / attempt["file"]).write_text(variants.rendered(ex.solution, draw))

    def practise(self, ex_id, minutes, *, hint=False, fail=False):
        """One kata: start it, a first grading of the blank stub, then the answer; return the last output."""
        out = self.grade("kata", ex_id, code=0)
        attempt = self.attempt(ex_id)
        assert f"attempt {attempt['n']}" in out and (self.root / attempt["folder"] / attempt["file"]).is_file()
        self.later(minutes=1)
        assert "1 grading(s), 1:00 so far" in self.grade(ex_id, "--kata", code=1)
        if hint:
            self.grade("hint", ex_id, code=0)
        self.later(minutes=minutes - 1)
        draw = attempt["variant"]
        if fail:  # the answer to another draw than this attempt's
            other = next(d for d in variants.all_draws(find_exercise(ex_id)) if d != draw)
            self.write(ex_id, other)
            out = self.grade(ex_id, "--kata", code=1)
            self.grade("kata", ex_id, "--give-up", code=0)
            return out
        self.write(ex_id, draw)
        return self.grade(ex_id, "--kata", code=0)


def due_day(learner, ex_id):
    return datetime.fromisoformat(learner.state(ex_id)["card"]["due"]).date()


def test_two_weeks_of_practice(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    ex05 = find_exercise("ex05")
    assert len(variants.all_draws(ex05)) == 2

    # day 0: nothing practised yet, so two new katas in teaching order
    today = me.today()
    assert today["due"] == [] and [i["exercise"] for i in today["new"]] == ["ex01", "ex02"]
    out = me.practise("ex05", 4)
    assert "Kata ex05 passed in 4:00 (your first pass), your 1st clean pass" in out
    first_draw = me.state("ex05")["attempts"][0]["variant"]
    out = me.practise("ex01", 6, hint=True)
    assert "Kata ex01 passed in 6:00 (your first pass), with 1 hint(s)" in out
    assert me.attempt("ex01")["hints"] == 1 and me.attempt("ex01")["rating"] == kata.HARD
    assert me.attempt("ex05")["rating"] == kata.GOOD
    # both katas started today used the day's allowance of new ones; the solved files were never touched
    assert me.today()["new"] == []
    assert (workspace / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py").read_text() == \
        ex05.stub.read_text()
    listed = me.grade("list", code=0)
    assert "kata: 1 attempt(s), 1 hint(s), best 6:00" in listed

    intervals = {ex: [(due_day(me, ex) - START.date()).days] for ex in ("ex05", "ex01")}
    assert intervals["ex01"][0] < intervals["ex05"][0]  # a pass with a hint comes back sooner than a clean one
    failed_on = None
    for day in range(1, 15):
        me.at(START + timedelta(days=day))
        date = me.now.date()
        expected_due = sorted(ex for ex in ("ex05", "ex01") if due_day(me, ex) <= date)
        today = me.today()
        assert sorted(i["exercise"] for i in today["due"]) == expected_due, day
        assert [i["exercise"] for i in today["new"]] == ["ex02", "ex03"]  # never practised: still new, two a day
        assert today["minutes"] == pytest.approx(sum(i["minutes"] for k in ("due", "new") for i in today[k]))
        for ex_id in expected_due:
            before = due_day(me, ex_id)
            previous = me.attempt(ex_id)
            fail = ex_id == "ex05" and failed_on is None and day >= 3
            out = me.practise(ex_id, 3, fail=fail)
            attempt = me.state(ex_id)["attempts"][-1]
            if ex_id == "ex05":
                assert attempt["variant"] != previous["variant"]  # a redo never repeats the last draw
            if fail:
                failed_on = day
                assert "Kata ex05" in out and "passed" not in out
                assert attempt["rating"] == kata.AGAIN and attempt["passed"] is None
                gap = (due_day(me, ex_id) - date).days
                assert 1 <= gap < intervals[ex_id][-1]  # forgotten: it comes back sooner than the last interval
                intervals[ex_id].append(gap)
                continue
            assert attempt["seconds"] == 180 and "passed in 3:00" in out
            gap = (due_day(me, ex_id) - date).days
            assert due_day(me, ex_id) > before and gap >= 1
            if failed_on is None or day > failed_on + 1 or ex_id != "ex05":
                assert gap >= intervals[ex_id][-1], (ex_id, day, intervals)  # clean passes move it further out
            intervals[ex_id].append(gap)
    assert failed_on is not None
    # the memorised answer of the first draw failed on the other draw: variants differ between attempts
    assert {json.dumps(a["variant"], sort_keys=True) for a in me.state("ex05")["attempts"]} == \
        {json.dumps(d, sort_keys=True) for d in variants.all_draws(ex05)} and first_draw in variants.all_draws(ex05)
    stats = me.grade("stats", code=0)
    ex01_row = next(line for line in stats.splitlines() if line.startswith("ex01"))
    assert "3:00" in ex01_row  # the best time
    rows = json.loads(me.grade("stats", "--json", code=0))
    assert [r["exercise"] for r in rows] == ["ex01", "ex05"]
    assert all(0 < r["retention"] <= 1 for r in rows)


def test_pass_lines_bests_and_clean_passes(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    me.practise("ex01", 5)
    out = me.practise("ex01", 4)
    assert "passed in 4:00, a new best (was 5:00), your 2nd clean pass" in out
    assert me.attempt("ex01")["rating"] == kata.EASY
    out = me.practise("ex01", 6)
    assert "passed in 6:00, best 4:00, your 3rd clean pass" in out and me.attempt("ex01")["rating"] == kata.GOOD
    zh = CliRunner().invoke(main, ["stats", "--lang", "zh"]).output
    assert "尝试次数" in zh and "次" in zh


def test_stats_page_and_export(workspace, monkeypatch, tmp_path):
    me = Learner(workspace, monkeypatch)
    me.practise("ex01", 5, hint=True)
    me.practise("ex01", 4)
    for lang, words in (("en", "minutes to pass"), ("zh", "通过用时")):
        page = tmp_path / f"stats.{lang}.html"
        CliRunner().invoke(main, ["stats", "--html", str(page), "--lang", lang])
        text = page.read_text()
        assert text.count("<svg") == 2 and words in text and "<table>" in text
    export = tmp_path / "for-teacher.json"
    CliRunner().invoke(main, ["stats", "--export", str(export)])
    data = json.loads(export.read_text())
    assert data["format"] == "torch-katas practice export" and data["katas"][0]["attempts"] == 2
    assert [a["hints"] for a in data["katas"][0]["history"]] == [1, 0]


def test_rating_from_objective_signals():
    assert kata.rating(False, None, 100, 0, 3) == kata.AGAIN
    assert kata.rating(True, 50, 100, 1, 1) == kata.HARD  # a hint
    assert kata.rating(True, 90, 100, 2, 1) == kata.HARD  # hints count, however fast
    assert kata.rating(True, 90, 100, 0, 2) == kata.EASY  # a new best, few gradings
    assert kata.rating(True, 150, 100, 0, 2) == kata.GOOD
    assert kata.rating(True, 250, 100, 0, 2) == kata.HARD  # slower than twice the best
    assert kata.rating(True, 90, 100, 0, 6) == kata.HARD  # many gradings
    assert kata.rating(True, 90, None, 0, 1) == kata.GOOD  # a first pass: nothing to compare


def _add_hints(root, ex_id, times):
    ex = find_exercise(ex_id)
    for _ in range(times):
        kata.hint_used(root, ex)


def test_state_merges_concurrent_writers_and_survives_a_crash(tmp_path):
    ex = find_exercise("ex01")
    kata.start(tmp_path, ex)
    ctx = multiprocessing.get_context("fork")
    writers = [ctx.Process(target=_add_hints, args=(tmp_path, "ex01", 40)) for _ in range(3)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    state = kata.State(tmp_path)
    assert state.kata(ex)["attempts"][-1]["hints"] == 120  # no writer lost another's change
    before = state.path.read_bytes()
    with pytest.raises(RuntimeError):
        with state.change() as data:
            data["katas"]["ex01"]["attempts"][-1]["hints"] = 0
            raise RuntimeError("a crash in the middle of a change")
    assert state.path.read_bytes() == before and not list(tmp_path.glob("*.tmp"))
    data = json.loads(before)
    assert data["version"] == kata.VERSION
    state.path.write_text(json.dumps({**data, "version": kata.VERSION + 1}))
    with pytest.raises(kata.KataError, match="newer torch-katas"):
        kata.start(tmp_path, ex)


def test_bad_state_file_is_a_one_line_error(workspace):
    (workspace / kata.STATE_FILE).write_text("{not json")
    proc = run_grade("today", cwd=workspace)
    assert proc.returncode == 2 and "cannot be read as JSON" in proc.stderr and len(proc.stderr.splitlines()) == 1
    proc = run_grade("ex01", "--kata", cwd=workspace)
    assert proc.returncode == 2


def test_today_list_and_stats_import_no_torch(workspace):
    script = ("import sys\nfrom grader.cli.main import main\nfor args in (['today'], ['list'], ['stats']):\n"
              "    try:\n        main(args)\n    except SystemExit as exc:\n"
              "        assert exc.code in (0, None), exc.code\n"
              "assert 'torch' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", script], cwd=workspace, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_grading_without_an_attempt_says_how_to_start(workspace):
    proc = run_grade("ex01", "--kata", cwd=workspace)
    assert proc.returncode == 2 and "grade kata ex01" in proc.stderr


def test_every_template_renders_to_its_file_and_names_known_parameters():
    for ex in all_exercises():
        assert variants.template_problems(ex) == [], ex.id
    draws = [ex.id for ex in all_exercises() if len(variants.all_draws(ex)) > 1]
    assert {"ex03", "ex05", "ex07", "ex08", "ex12", "ex16", "ex18", "ex19", "ex24", "ex25"} <= set(draws)
    with pytest.raises(variants.VariantError, match="names no parameter"):
        variants.render("x = {{nope}}", {"reduction": "mean"})


def test_watch_and_notebook_in_kata_mode(workspace, monkeypatch):
    """`grade watch --kata` stops at the attempt's pass; check() in a kata notebook counts in the kata."""
    monkeypatch.setenv(kata.NOW_ENV, START.isoformat())
    assert run_grade("kata", "ex01", cwd=workspace).returncode == 0
    attempt = json.loads((workspace / kata.STATE_FILE).read_text())["katas"]["ex01"]["attempts"][-1]
    (workspace / attempt["folder"] / attempt["file"]).write_text((ROOT / "solutions" / "ex01_tensors.py").read_text())
    proc = run_grade("watch", "ex01", "--kata", "--interval", "0.1", cwd=workspace, timeout=120)
    assert proc.returncode == 0 and "Kata ex01 passed in 0:00 (your first pass)" in proc.stdout, proc.stdout
    proc = run_grade("kata", "ex01", "--notebook", cwd=workspace)
    assert proc.returncode == 0
    attempt = json.loads((workspace / kata.STATE_FILE).read_text())["katas"]["ex01"]["attempts"][-1]
    assert attempt["n"] == 2 and attempt["file"] == "ex01_tensors.ipynb"
    assert not (workspace / attempt["folder"] / "ex01_tensors.py").exists()
    from grader.learner.jupyter import check

    monkeypatch.chdir(workspace / attempt["folder"])
    result = check("ex01", cells=[(ROOT / "solutions" / "ex01_tensors.py").read_text()], lang="en")
    assert result.passed
    attempt = json.loads((workspace / kata.STATE_FILE).read_text())["katas"]["ex01"]["attempts"][-1]
    assert attempt["passed"] and attempt["gradings"] == 1
    progress = workspace / ".torch-katas-progress.json"
    assert not progress.exists() or "ex01" not in json.loads(progress.read_text())  # the kata is not the exercise


def test_a_hint_in_a_kata_fits_its_draw_and_counts(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    ex05 = find_exercise("ex05")
    me.grade("kata", "ex05", code=0)
    if me.attempt("ex05")["variant"]["reduction"]["name"] != "sum":
        me.grade("kata", "ex05", code=0)  # a redo draws the other one
    attempt = me.attempt("ex05")
    assert attempt["variant"]["reduction"]["name"] == "sum"
    stub = (workspace / attempt["folder"] / attempt["file"]).read_text()
    assert "L = sum((y_pred - y) ** 2) (reduction='sum')" in stub and "{{" not in stub
    assert "the sum of the squared errors" in (workspace / attempt["folder"] / "README.md").read_text()
    out = me.grade("hint", "ex05", code=0)
    assert "L = sum((y_pred - y)^2)" in out and "mean" not in out
    assert "没有 1/N" in me.grade("hint", "ex05", "--lang", "zh", code=0)
    assert me.attempt("ex05")["hints"] == 2
    me.grade("kata", "ex05", "--give-up", code=0)
    assert "closed without a pass" in me.grade("ex05", "--kata", code=1)
    out = me.grade("hint", "ex05", code=0)  # no attempt open: the exercise's own hints
    assert "mean((y_pred - y)^2)" in out and me.attempt("ex05")["hints"] == 2
    assert ex05.hints[0] in out


def test_an_edited_state_file_is_refused_with_one_line(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    me.grade("kata", "ex05", code=0)
    state = json.loads((workspace / kata.STATE_FILE).read_text())
    state["katas"]["ex05"]["attempts"][-1]["variant"] = {"reduction": {"name": "max"}}
    (workspace / kata.STATE_FILE).write_text(json.dumps(state))
    proc = run_grade("ex05", "--kata", cwd=workspace)
    assert proc.returncode == 2 and "no longer has" in proc.stderr and len(proc.stderr.splitlines()) == 1
    state["katas"]["ex05"]["attempts"][-1]["started"] = "yesterday"
    (workspace / kata.STATE_FILE).write_text(json.dumps(state))
    for args in (["today"], ["list"], ["stats"], ["ex05", "--kata"], ["hint", "ex05"]):
        proc = run_grade(*args, cwd=workspace)
        assert proc.returncode == 2 and "not a kata state file" in proc.stderr, (args, proc.stderr)
