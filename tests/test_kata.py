"""Kata mode: two weeks of practice on a fake clock (redo, fresh variants, bests, the FSRS schedule, `grade today`),
the state file under crashes and concurrent writers, variants' templates, watch and notebooks in kata mode."""

import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from conftest import ROOT, grade_here, run_grade
from grader.learner import kata
from grader.course import variants
from grader.cli.main import main
from grader.course.exercises import all_exercises, find_exercise

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)  # a Monday, 09:00


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    proc = grade_here("init", tmp_path / "ws")
    assert proc.returncode == 0, proc.stderr
    monkeypatch.chdir(tmp_path / "ws")
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield tmp_path / "ws"
    monkeypatch.undo()
    time.tzset()


class Learner:
    """Runs `grade` commands in this process at the moment the fake clock says (TORCH_KATAS_NOW), as a learner would:
    a save of a file happens at that moment too."""

    def __init__(self, root, monkeypatch):
        self.root, self.monkeypatch, self.now = root, monkeypatch, START
        self.at(START)

    def at(self, moment):
        self.now = moment
        self.monkeypatch.setenv(kata.NOW_ENV, moment.isoformat())

    def later(self, **delta):
        self.at(self.now + timedelta(**delta))

    def grade(self, *args, code=None, lang="en"):
        result = CliRunner().invoke(main, [*args] + ([] if "--lang" in args else ["--lang", lang]))
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        if code is not None:
            assert result.exit_code == code, result.output
        return result.output

    def state(self, ex_id):
        path = self.root / kata.STATE_FILE
        return json.loads(path.read_text())["katas"].get(ex_id, {}) if path.exists() else {}

    def attempt(self, ex_id):
        return self.state(ex_id)["attempts"][-1]

    def today(self):
        return json.loads(self.grade("today", "--json", code=0))

    def save(self, path, text):
        """Save `text` to `path` now (its modification time is the fake clock's)."""
        path.write_text(text)
        os.utime(path, (self.now.timestamp(), self.now.timestamp()))

    def write(self, ex_id, text):
        attempt = self.attempt(ex_id)
        self.save(self.root / attempt["folder"] / attempt["file"], text)

    def finish(self, ex_id):
        """Solve the exercise itself in the workspace (new katas come from finished exercises)."""
        ex = find_exercise(ex_id)
        self.save(self.root / "exercises" / ex.name / ex.stub.name, ex.solution.read_text())
        self.grade(ex_id, code=0)

    def practise(self, ex_id, minutes, *, hint=False, fail=False, lang="en", answer=None):
        """One kata: start it, a first grading of the blank stub, then an answer of the learner's own (`answer`: this
        text instead, as pasted); with `fail`, give up after that first grading. Return the last output."""
        out = self.grade("kata", ex_id, code=0, lang=lang)
        attempt = self.attempt(ex_id)
        assert (self.root / attempt["folder"] / attempt["file"]).is_file(), out
        self.later(minutes=1)
        first = self.grade(ex_id, "--kata", code=1, lang=lang)
        assert ("1 grading(s), 1:00 of active time so far" if lang == "en" else "已评分 1 次，到目前有效用时 1:00") \
            in first, first
        if fail:
            return self.grade("kata", ex_id, "--give-up", code=0, lang=lang)
        if hint:
            self.grade("hint", ex_id, code=0, lang=lang)
        self.later(minutes=minutes - 1)
        self.write(ex_id, answer if answer is not None else own_answer(ex_id, attempt["variant"], attempt["n"]))
        return self.grade(ex_id, "--kata", code=0, lang=lang)


def own_answer(ex_id, draw, n):
    """A learner's own correct answer for attempt `n`: the reference's functions and one of their own (each attempt's
    differs: not the reference, not an earlier attempt, pasted)."""
    return variants.rendered(find_exercise(ex_id).solution, draw) + f"\n\ndef _my_note():\n    return {n}\n"


def due_day(learner, ex_id):
    return datetime.fromisoformat(learner.state(ex_id)["card"]["due"]).date()


def expected_due(reviews):
    """The due date FSRS gives a card after `reviews` [(moment, rating)], computed here from fsrs itself; a failed
    kata comes back the next day at the latest."""
    from fsrs import Card, Rating, Scheduler

    scheduler = Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    card = Card(due=reviews[0][0])
    for moment, grade in reviews:
        card, _ = scheduler.review_card(card, Rating(grade), review_datetime=moment)
        if grade == kata.AGAIN:
            card.due = min(card.due, moment + timedelta(days=1))
    return card.due


def expected_rating(kind, seconds, best):
    """The rating the kata's rules give (kata.rating's docstring): what the learner expects."""
    if kind in ("fail",):
        return kata.AGAIN
    if kind in ("hint", "paste", "paste-own"):
        return kata.HARD
    if best is None:
        return kata.GOOD
    if seconds > 2 * best:
        return kata.HARD
    return kata.EASY if seconds <= best else kata.GOOD


PLAN = {  # each exercise's katas, in turn, as they come due
    "ex01": ["clean:3", "hint:4", "fail", "clean:5", "paste-own", "ungraded", "overnight", "clean:2", "clean:3"],
    "ex05": ["clean:4", "paste", "clean:3", "fail", "hint:6", "clean:3", "clean:7", "clean:3"],
}


def test_a_month_of_katas_in_both_languages(workspace, monkeypatch):
    """Thirty days of a learner who finished ex01 and ex05: clean passes, hints, a failure, a give-up before any
    grading, answers pasted from an earlier attempt and from the reference, an attempt left open overnight. Each day
    `grade today` lists what FSRS (computed here, from the fsrs package) says is due; every card's due date is FSRS's;
    every line reads in the day's language (en, then zh, in turn)."""
    from grader.text import cjk_typography, english_prose

    me = Learner(workspace, monkeypatch)
    assert me.today() == {"open": [], "due": [], "new": [], "early": [], "minutes": 0}  # nothing finished: no kata yet
    assert "katas are for the exercises you have finished" in me.grade("today", code=0)
    me.finish("ex01")
    me.finish("ex05")
    listed = [i["exercise"] for i in me.today()["new"]]
    assert listed == ["ex01", "ex05"]  # the finished ones only: never ex02 or ex03, not started
    reviews = {ex: [] for ex in PLAN}  # the test's own log of (moment, rating)
    bests = {ex: None for ex in PLAN}
    turn = {ex: 0 for ex in PLAN}
    seen_kinds = set()
    for day in range(30):
        lang = "zh" if day % 2 else "en"
        me.at(max(me.now, START + timedelta(days=day)))
        due = sorted(ex for ex in PLAN if reviews[ex] and expected_due(reviews[ex]).date() <= me.now.date())
        new = [ex for ex in PLAN if not reviews[ex]]
        today = me.today()
        assert sorted(i["exercise"] for i in today["due"]) == due, (day, today)
        assert [i["exercise"] for i in today["new"]] == new, (day, today)
        listing = me.grade("today", code=0, lang=lang)
        assert not english_prose(listing) if lang == "zh" else "Today:" in listing or "Nothing due" in listing
        for ex_id in new + due:
            kind = PLAN[ex_id][turn[ex_id] % len(PLAN[ex_id])]
            turn[ex_id] += 1
            seen_kinds.add(kind.split(":")[0])
            before = me.state(ex_id).get("attempts", [])
            previous = [a for a in before if a.get("passed")]
            ungraded = kind == "ungraded"
            if ungraded:  # begun, given up before any grading: no attempt, no review; then done properly
                me.grade("kata", ex_id, code=0, lang=lang)
                out = me.grade("kata", ex_id, "--give-up", code=0, lang=lang)
                assert ("counts for nothing" if lang == "en" else "不算一次尝试") in out
                assert me.today()["due"] == today["due"]  # still due
                kind = "clean:3"
            if kind == "overnight":  # begun at night, graded once, finished next morning
                me.at(me.now.replace(hour=21))
                me.grade("kata", ex_id, code=0, lang=lang)
                me.later(minutes=2)
                me.grade(ex_id, "--kata", code=1, lang=lang)
                me.later(hours=11)
                attempt = me.attempt(ex_id)
                me.write(ex_id, own_answer(ex_id, attempt["variant"], attempt["n"]))
                out = me.grade(ex_id, "--kata", code=0, lang=lang)
                seconds = 2 * 60  # two minutes of work, then a break that counts nothing
                assert kata.clock(seconds) in out and "11:0" not in out, out
                rating = expected_rating("clean", seconds, bests[ex_id])
            elif kind == "fail":
                out = me.practise(ex_id, 3, fail=True, lang=lang)
                assert ("counts as forgotten" if lang == "en" else "记为已遗忘") in out
                rating, seconds = kata.AGAIN, None
            elif kind in ("paste", "paste-own"):
                attempt_text = None
                if kind == "paste-own":  # the last passing attempt's file, copied in
                    last_pass = previous[-1]
                    attempt_text = (workspace / last_pass["folder"] / last_pass["file"]).read_text()
                me.grade("kata", ex_id, code=0, lang=lang)
                attempt = me.attempt(ex_id)
                if attempt_text is None:
                    attempt_text = variants.rendered(find_exercise(ex_id).solution, attempt["variant"])
                elif previous[-1]["variant"] != attempt["variant"]:  # another draw: the learner's old answer
                    attempt_text = own_answer(ex_id, attempt["variant"], previous[-1]["n"])  # written for it
                me.later(seconds=10)  # pasted at once: less time than typing it takes
                me.write(ex_id, attempt_text)
                out = me.grade(ex_id, "--kata", code=0, lang=lang)
                attempt = me.attempt(ex_id)
                # finish() solved the exercise with the reference: for its draw, the learner's own file is it too
                copied = ("own file", "reference") if kind == "paste" else (previous[-1]["n"],)
                assert attempt["copy_of"] in copied, (attempt, previous[-1])
                assert ("not as a clean pass or a best time" if lang == "en" else "不算不看提示的通过") in out, out
                rating, seconds = kata.HARD, None
            else:
                what, minutes = kind.split(":")
                out = me.practise(ex_id, int(minutes), hint=what == "hint", lang=lang)
                seconds = int(minutes) * 60
                assert kata.clock(seconds) in out, out
                rating = expected_rating(what, seconds, bests[ex_id])
            attempt = me.attempt(ex_id)
            assert attempt["rating"] == rating, (day, ex_id, kind, attempt, bests[ex_id])
            prior = [a for a in before if a["gradings"] or a.get("passed")]  # the attempts that count
            if len(variants.all_draws(find_exercise(ex_id))) > 1 and prior:
                if kata.failed_attempt(prior[-1]):  # a failed draw comes back next
                    assert attempt["variant"] == prior[-1]["variant"], (prior[-1], attempt)
                elif not ungraded:  # else another one than the last
                    assert attempt["variant"] != before[-1]["variant"], (before[-1], attempt)
            when = datetime.fromisoformat(attempt["passed"] or attempt["closed"])
            reviews[ex_id].append((when, rating))
            if seconds is not None and rating != kata.AGAIN and kind != "hint":
                bests[ex_id] = seconds if bests[ex_id] is None else min(bests[ex_id], seconds)
            elif kind.startswith("hint") and seconds is not None:
                bests[ex_id] = seconds if bests[ex_id] is None else min(bests[ex_id], seconds)
            assert datetime.fromisoformat(me.state(ex_id)["card"]["due"]) == expected_due(reviews[ex_id])
            if lang == "zh":
                assert not english_prose(out) and not cjk_typography(out), out
            else:
                assert "Next review" in out or "comes back soon" in out, out
    assert {"clean", "hint", "fail", "paste", "paste-own", "ungraded", "overnight"} <= seen_kinds
    rows = json.loads(me.grade("stats", "--json", code=0))
    for row in rows:
        state = me.state(row["exercise"])
        assert row["attempts"] == sum(1 for a in state["attempts"] if a["gradings"])  # the ungraded one: not counted
        assert row["best_s"] == bests[row["exercise"]]
        assert len(row["reviews"]) == len(reviews[row["exercise"]])
    for lang in ("en", "zh"):
        out = me.grade("stats", code=0, lang=lang)
        assert not english_prose(out) if lang == "zh" else "of active practice" in out


def test_pass_lines_bests_and_clean_passes(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    me.practise("ex01", 5)
    out = me.practise("ex01", 4)
    assert "passed in 4:00 of active time, a new best (was 5:00), your 2nd clean pass" in out
    assert me.attempt("ex01")["rating"] == kata.EASY
    out = me.practise("ex01", 6)
    assert "passed in 6:00 of active time, best 4:00, your 3rd clean pass" in out
    assert me.attempt("ex01")["rating"] == kata.GOOD
    assert "Next: all checks pass! `grade today` shows what else to practise today." in out and "grade next" not in out
    zh = me.grade("stats", lang="zh")
    assert "尝试次数" in zh and "次" in zh


def test_stats_page_draws_every_pass_in_the_learners_language(workspace, monkeypatch, tmp_path):
    """A failed attempt between passes leaves a gap in the curve, not its end; the attempts are numbered as their
    folders, in the chart and the table; the FSRS target in plain words; the exercise's title in the language."""
    me = Learner(workspace, monkeypatch)
    me.practise("ex05", 5, hint=True)
    me.practise("ex05", 3, fail=True)
    me.practise("ex05", 4)
    me.practise("ex05", 3)
    for lang, words in (("en", ["minutes of active time to pass", "due for review when it falls to 90%",
                                "Backward by hand"]),
                        ("zh", ["有效时间", "降到 90% 时安排复习", "手写反向传播"])):
        page = tmp_path / f"stats.{lang}.html"
        me.grade("stats", "--html", str(page), code=0, lang=lang)
        text = page.read_text()
        assert text.count("<svg") == 2 and "<table>" in text
        assert all(w in text for w in words), [w for w in words if w not in text]
        assert "leaves the chart" not in text and "超出了图表" not in text
        minutes = text.split("<svg")[1]
        assert minutes.count("<circle") == 3 + 4  # three passes (minutes) and four attempts' hints, each a dot
        assert re.findall(r'text-anchor="middle">(\d+)</text>', minutes) == ["1", "2", "3", "4"]  # from 1, as the table
        cells = [row.split("</td>")[0] for row in text.split("<tr><td>")[1:]]
        assert cells == ["1", "2", "3", "4"]
    export = tmp_path / "for-teacher.json"
    me.grade("stats", "--export", str(export), code=0)
    data = json.loads(export.read_text())
    assert data["format"] == "torch-katas practice export" and data["katas"][0]["attempts"] == 4
    assert [a["hints"] for a in data["katas"][0]["history"]] == [1, 0, 0, 0]


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


def test_a_state_file_that_is_not_json_is_kept_aside_and_said_so(workspace):
    (workspace / kata.STATE_FILE).write_text("{not json")
    proc = grade_here("today", cwd=workspace)
    kept = list(workspace.glob(kata.STATE_FILE + ".corrupt-*"))
    assert proc.returncode == 0 and len(kept) == 1 and kept[0].read_text() == "{not json"
    assert f"kept as {kept[0].name}" in proc.stderr and len(proc.stderr.splitlines()) == 1
    proc = grade_here("ex01", "--kata", cwd=workspace)
    assert proc.returncode == 2 and "grade kata ex01" in proc.stderr


def test_today_list_and_stats_import_no_torch(workspace):
    script = ("import sys\nfrom grader.cli.main import main\nfor args in (['today'], ['list'], ['stats']):\n"
              "    try:\n        main(args)\n    except SystemExit as exc:\n"
              "        assert exc.code in (0, None), exc.code\n"
              "assert 'torch' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", script], cwd=workspace, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_grading_without_an_attempt_says_how_to_start(workspace):
    proc = grade_here("ex01", "--kata", cwd=workspace)
    assert proc.returncode == 2 and "grade kata ex01" in proc.stderr


def test_every_template_renders_to_its_file_and_names_known_parameters():
    for ex in all_exercises():
        assert variants.template_problems(ex) == [], ex.id
    draws = [ex.id for ex in all_exercises() if len(variants.all_draws(ex)) > 1]
    assert {"ex03", "ex05", "ex07", "ex08", "ex12", "ex16", "ex18", "ex19", "ex24", "ex25"} <= set(draws)
    with pytest.raises(variants.VariantError, match="names no parameter"):
        variants.render("x = {{nope}}", {"reduction": "mean"})


def test_watch_and_notebook_in_kata_mode(workspace, monkeypatch):
    """`grade watch --kata` shows no hint unasked (each one counts in the attempt) and stops at the attempt's pass;
    check() in a kata notebook counts in the kata."""
    monkeypatch.setenv(kata.NOW_ENV, START.isoformat())
    assert run_grade("kata", "ex01", cwd=workspace).returncode == 0
    proc = run_grade("watch", "ex01", "--kata", "--runs", "1", cwd=workspace, timeout=120)
    assert proc.returncode == 0 and "Not started" in proc.stdout and "Hint" not in proc.stdout, proc.stdout
    attempt = json.loads((workspace / kata.STATE_FILE).read_text())["katas"]["ex01"]["attempts"][-1]
    assert attempt["hints"] == 0 and attempt["gradings"] == 1
    (workspace / attempt["folder"] / attempt["file"]).write_text(own_answer("ex01", {}, 1))
    monkeypatch.setenv(kata.NOW_ENV, (START + timedelta(minutes=5)).isoformat())  # written in five minutes
    proc = run_grade("watch", "ex01", "--kata", "--interval", "0.1", cwd=workspace, timeout=120)
    assert proc.returncode == 0 and "Kata ex01 passed in 5:00 of active time (your first pass)" in proc.stdout, \
        proc.stdout
    assert "`grade today`" in proc.stdout or "All checks pass!" in proc.stdout
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
        me.grade("kata", "ex05", "--give-up", code=0)
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
    proc = grade_here("ex05", "--kata", cwd=workspace)
    assert proc.returncode == 2 and "no longer has" in proc.stderr and len(proc.stderr.splitlines()) == 1
    state["katas"]["ex05"]["attempts"][-1]["started"] = "yesterday"
    (workspace / kata.STATE_FILE).write_text(json.dumps(state))
    for args in (["today"], ["list"], ["stats"], ["ex05", "--kata"], ["hint", "ex05"]):
        proc = run_grade(*args, cwd=workspace)
        assert proc.returncode == 2 and "not a kata state file" in proc.stderr, (args, proc.stderr)


def test_the_same_code_names_and_layout_aside():
    """A pasted answer is found whatever its names, comments, docstrings, annotations, layout, imports or demo; a
    change to what the code does is another answer."""
    from grader.learner.same_code import fingerprint

    reference = (ROOT / "solutions" / "ex05_manual_backward.py").read_text()
    renamed = (reference.replace("error", "e").replace("dw", "grad_w").replace(": torch.Tensor", "")
               .replace("def predict", '# my own\ndef predict') + '\nif __name__ == "__main__":\n    print(1)\n')
    assert fingerprint(renamed) == fingerprint(reference) is not None
    reordered = "\n\n".join(reversed(reference.split("\n\n\n")[1:])) + "\nimport torch\n"
    assert fingerprint(reordered) == fingerprint(reference)
    assert fingerprint(reference.replace("2 * ", "2.0 * ")) != fingerprint(reference)
    assert fingerprint("def f(:\n") is None and fingerprint("x = 1\n") is None and fingerprint("(" * 10**5) is None


def test_active_time_is_the_time_to_the_pass_less_the_breaks():
    start = START
    attempt = {"active_s": 0.0, "last_active": start.isoformat()}
    assert kata.active_until(attempt, start + timedelta(minutes=3)) == 180
    assert kata.active_until(attempt, start + timedelta(minutes=20)) == 20 * 60  # one sitting, one save: all of it
    assert kata.active_until(attempt, start + timedelta(hours=10)) == 0  # away: a break, nothing counts
    saved = start + timedelta(minutes=4)  # a save at 4 minutes, then a grading at 30: all of it
    assert kata.active_until(attempt, start + timedelta(minutes=30), saved) == 30 * 60
    saved = start + timedelta(minutes=25)  # 25 minutes, then a lunch break, then a grading: the 25 minutes
    assert kata.active_until(attempt, start + timedelta(hours=3), saved) == 25 * 60
    assert kata.active_until(attempt, start + timedelta(minutes=3), start + timedelta(days=300)) == 180  # clock skew
    busy = {"active_s": 3 * 3600.0, "last_active": start.isoformat()}  # a long day's attempt is not cut short
    assert kata.active_until(busy, start + timedelta(minutes=40)) == 3 * 3600 + 40 * 60


def test_a_state_of_version_1_is_read_with_its_times_capped(workspace, monkeypatch):
    """An attempt left open overnight recorded 24:00:09 as its time before active time: read back, it is at most
    MAX_ACTIVE_S, and `grade today` estimates that, not 1441 minutes."""
    me = Learner(workspace, monkeypatch)
    me.finish("ex01")
    passed = (START + timedelta(hours=24, seconds=9)).isoformat()
    old = {"version": 1, "katas": {"ex01": {"attempts": [
        {"n": 1, "started": START.isoformat(), "folder": "practice/ex01_tensors/attempt-1", "file": "ex01_tensors.py",
         "variant": {}, "gradings": 2, "hints": 0, "best_score": 10.0, "passed": passed, "seconds": 86409.0,
         "rating": 3, "closed": None}], "reviews": [], "card": None}}}
    (workspace / kata.STATE_FILE).write_text(json.dumps(old))
    me.at(START + timedelta(days=1))
    assert "2:00:00" in me.grade("stats", code=0) and "24:00:09" not in me.grade("stats")
    me.grade("kata", "ex01", code=0)
    state = json.loads((workspace / kata.STATE_FILE).read_text())
    assert state["version"] == kata.VERSION and state["katas"]["ex01"]["attempts"][0]["active_s"] == kata.MAX_ACTIVE_S
    assert me.today()["open"][0]["minutes"] == kata.MAX_ACTIVE_S / 60


def test_list_counts_attempts_that_were_graded_and_a_passed_kata_finishes_its_exercise(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    me.grade("kata", "ex02", code=0)
    me.grade("kata", "ex02", "--give-up", code=0)  # never graded: no attempt
    assert "kata:" not in next(line for line in me.grade("list", code=0).splitlines() if "ex02" in line)
    me.practise("ex02", 3)
    line = next(line for line in me.grade("list", code=0).splitlines() if "ex02" in line)
    assert "kata: 1 attempt(s)" in line and "done" in line  # not "not started" beside a passed kata
    zh = next(line for line in me.grade("list", code=0, lang="zh").splitlines() if "ex02" in line)
    assert "已完成" in zh and "未开始" not in zh
    assert json.loads(me.grade("stats", "--json", code=0))[0]["attempts"] == 1


def test_a_draw_is_told_in_the_learners_words_and_the_statement_only_when_it_changed(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    ex05 = find_exercise("ex05")
    out = me.grade("kata", "ex05", code=0)
    first = me.attempt("ex05")["variant"]
    said = "the loss summed over the batch" if first["reduction"]["name"] == "sum" else \
        "the loss averaged over the batch"
    assert said in out and "reduction=" not in out
    changed = variants.statement(ex05, first) != variants.statement(ex05, variants.default_draw(ex05))
    assert ("differs from the exercise's: read it" in out) == changed and ("is the exercise's" in out) != changed
    me.grade("kata", "ex05", "--give-up", code=0)
    out = me.grade("kata", "ex05", code=0, lang="zh")  # the other draw: its statement differs from the last one
    assert "题目和你上一次尝试的不同：请读题目" in out and "损失对 batch" in out and "reduction=" not in out
    ex07 = find_exercise("ex07")
    swapped, reordered = (d for d in variants.all_draws(ex07) if d["planted"]["name"] != "classic")
    assert variants.statement(ex07, swapped) == variants.statement(ex07, reordered)  # the same story, other bugs
    assert variants.describe(swapped) != variants.describe(reordered)


def test_the_solution_after_a_kata_is_the_one_of_its_draw(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    me.practise("ex05", 3)
    if me.attempt("ex05")["variant"]["reduction"]["name"] != "sum":
        me.practise("ex05", 3)  # a redo draws the other one
    out = me.grade("solution", "ex05", code=0)
    assert "For the variant of your last kata: the loss summed over the batch." in out
    assert ".sum()" in out and ".mean()" not in out and "dL/dy_pred = 2 * error" in out
    zh = me.grade("solution", "ex05", code=0, lang="zh")
    assert "对应你上一次 kata 的变体：损失对 batch 求和。" in zh and "在整个 batch 上求和" in zh


def test_a_redo_never_draws_the_last_draw_even_once_its_words_changed(workspace, monkeypatch):
    """An attempt stored before its draw's words changed (a label added, a typo fixed) is the same draw by name."""
    me = Learner(workspace, monkeypatch)
    ex07 = find_exercise("ex07")
    for _ in range(6):
        me.grade("kata", "ex07", "--give-up", code=0)
        me.grade("kata", "ex07", code=0)
        state = json.loads((workspace / kata.STATE_FILE).read_text())
        last = state["katas"]["ex07"]["attempts"][-1]
        last["variant"]["planted"] = {"name": last["variant"]["planted"]["name"]}  # as stored before the labels
        (workspace / kata.STATE_FILE).write_text(json.dumps(state))
        before = last["variant"]["planted"]["name"]
        me.grade("kata", "ex07", "--give-up", code=0)
        me.grade("kata", "ex07", code=0)
        assert me.attempt("ex07")["variant"]["planted"]["name"] != before
    assert len(variants.all_draws(ex07)) == 3


def test_one_sitting_counts_whole_however_often_it_is_saved_and_a_break_counts_nothing(workspace, monkeypatch):
    """A 20-minute sitting records 20:00, saved once or saved and graded every 5 minutes; an answer saved after 25
    minutes and graded after lunch records 25:00; `stats` says the times are active ones and how breaks are judged."""
    me = Learner(workspace, monkeypatch)
    me.grade("kata", "ex01", code=0)
    me.later(minutes=20)
    me.write("ex01", own_answer("ex01", {}, 1))
    assert "passed in 20:00 of active time (your first pass)" in me.grade("ex01", "--kata", code=0)
    me.later(days=1)
    me.grade("kata", "ex01", code=0)
    blank = (workspace / me.attempt("ex01")["folder"] / me.attempt("ex01")["file"]).read_text()
    for _ in range(3):
        me.later(minutes=5)
        me.write("ex01", blank + "\n# working\n")
        me.grade("ex01", "--kata", code=1)
    me.later(minutes=5)
    me.write("ex01", own_answer("ex01", {}, 2))
    assert "passed in 20:00 of active time, best 20:00" in me.grade("ex01", "--kata", code=0)
    me.later(days=1)
    me.grade("kata", "ex01", code=0)
    me.later(minutes=25)
    me.write("ex01", own_answer("ex01", {}, 3))
    me.later(hours=2)
    assert "passed in 25:00 of active time" in me.grade("ex01", "--kata", code=0)
    out = me.grade("stats", code=0)
    assert "active time: from an attempt's start to its first full score, less breaks (more than 45 minutes" in out
    assert "减去休息（超过 45 分钟" in me.grade("stats", code=0, lang="zh")


def test_a_pasted_answer_is_a_review_and_the_same_code_typed_anew_is_a_pass(workspace, monkeypatch):
    """The learner's own solved file pasted in at once is a review rated hard, also with a no-op line and an unused
    helper added; the same code typed again from memory, in the time typing it takes, is a clean pass and a time."""
    me = Learner(workspace, monkeypatch)
    me.finish("ex01")
    own = (workspace / "exercises" / "ex01_tensors" / "ex01_tensors.py").read_text()
    me.grade("kata", "ex01", code=0)
    me.later(seconds=10)
    me.write("ex01", own)
    out = me.grade("ex01", "--kata", code=0)
    assert "the same as your own solved file of ex01" in out and me.attempt("ex01")["copy_of"] == "own file", out
    assert me.attempt("ex01")["rating"] == kata.HARD
    me.later(days=1)
    me.grade("kata", "ex01", code=0)
    me.later(seconds=20)
    noop = own.replace("\n    return", "\n    pass\n    return", 1) + "\n\ndef _mine():\n    return 'new'\n"
    assert noop.count("pass\n") >= 1 and noop != own
    me.write("ex01", noop)
    out = me.grade("ex01", "--kata", code=0)
    assert me.attempt("ex01")["copy_of"] == 1 and "your attempt 1" in out, out  # not a new answer
    me.later(days=1)
    me.grade("kata", "ex01", code=0)
    me.later(minutes=6)
    me.write("ex01", own)
    out = me.grade("ex01", "--kata", code=0)
    attempt = me.attempt("ex01")
    assert attempt["copy_of"] is None and attempt["same_as"] == 2 and attempt["rating"] == kata.GOOD, attempt
    assert "passed in 6:00 of active time (your first pass), your 1st clean pass" in out, out
    assert json.loads(me.grade("stats", "--json", code=0))[0]["best_s"] == 360


def test_an_open_attempt_is_resumed_never_replaced(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    me.grade("kata", "ex05", code=0)
    me.later(minutes=1)
    me.grade("ex05", "--kata", code=1)
    me.write("ex05", "# my work so far\n")
    for lang, words in (("en", "Attempt 1 of ex05 is still open"), ("zh", "ex05 的第 1 次尝试还没有结束")):
        out = me.grade("kata", "ex05", code=0, lang=lang)
        assert words in out and "`grade kata ex05 --give-up`" in out and len(out.splitlines()) == 1, out
    attempt = me.attempt("ex05")
    assert attempt["n"] == 1 and not attempt["closed"] and me.state("ex05")["reviews"] == []
    assert (workspace / attempt["folder"] / attempt["file"]).read_text() == "# my work so far\n"
    out = me.grade("today", code=0)
    assert "Carry on with your open attempt of ex05: `grade watch ex05 --kata`" in out and "grade kata ex05" not in out
    assert "still open" in me.grade("kata", code=0)  # the first of today's: the open one, resumed


def test_a_failure_brings_its_variant_back_tomorrow_and_lowers_the_recall(workspace, monkeypatch):
    me = Learner(workspace, monkeypatch)
    me.practise("ex05", 4)
    me.at(datetime.fromisoformat(me.state("ex05")["card"]["due"]))
    before = json.loads(me.grade("stats", "--json", code=0))[0]["retention"]
    me.practise("ex05", 3, fail=True)
    failed = me.attempt("ex05")
    after = json.loads(me.grade("stats", "--json", code=0))[0]["retention"]
    assert after < before, (before, after)  # not the 100 % of a card just reviewed
    assert due_day(me, "ex05") <= (me.now + timedelta(days=1)).date()
    me.later(days=1)
    assert json.loads(me.grade("stats", "--json", code=0))[0]["retention"] < after
    assert [i["exercise"] for i in me.today()["due"]] == ["ex05"]
    me.grade("kata", code=0)
    assert me.attempt("ex05")["n"] == failed["n"] + 1 and me.attempt("ex05")["variant"] == failed["variant"]
    assert "recall now" in me.grade("stats", code=0)


def _graded(ex, full):
    from grader.judge.result import Result

    return Result(exercise=ex.id, name=ex.name, submission="x.py", status="graded", score=ex.points if full else 0.0,
                  max_score=ex.points)


def test_a_month_of_today_in_a_track_workspace_never_leaves_a_week_empty(tmp_path, monkeypatch):
    """A learner who finished twelve exercises of the from-scratch track does what `grade today` lists, every day for
    a month, failing one kata in five: today lists only the track's katas, never a basics exercise; a failed kata is
    due the next day with its variant; never more than EARLY_AFTER_DAYS days in a row with nothing to do."""
    assert grade_here("init", tmp_path / "ws", "--track", "from-scratch").returncode == 0
    root = tmp_path / "ws"
    monkeypatch.chdir(root)
    track = [ex for ex in all_exercises() if ex.id.startswith("fs")]
    finished = track[:12]
    (root / ".torch-katas-progress.json").write_text(json.dumps({ex.id: {"done": True, "attempts": 1}
                                                                 for ex in finished}))
    me = Learner(root, monkeypatch)
    done, empty_run, longest, failed = 0, 0, 0, {}
    for day in range(30):
        me.at(START + timedelta(days=day))
        today = me.today()
        listed = [i["exercise"] for kind in ("open", "due", "new", "early") for i in today[kind]]
        assert set(listed) <= {ex.id for ex in finished}, (day, today)
        assert set(failed) <= set(listed), (day, failed, today)  # yesterday's failures are back
        text = me.grade("today", code=0)
        assert "ex05" not in text and "ex0" not in text, text
        empty_run = 0 if listed else empty_run + 1
        longest = max(longest, empty_run)
        failed_now = {}
        for ex_id in listed:
            ex = find_exercise(ex_id)
            attempt = kata.start(root, ex)
            assert ex_id not in failed or attempt["variant"] == failed[ex_id]  # the failed draw comes back
            me.later(minutes=10)
            full = done % 5 != 4
            kata.record(root, ex, attempt["n"], _graded(ex, full))
            if not full:
                kata.give_up(root, ex)
                failed_now[ex_id] = attempt["variant"]
            done += 1
        failed = failed_now
    assert done > 30 and longest <= 2, (done, longest)


def test_a_state_of_version_2_gets_back_the_time_of_a_single_sitting(workspace, monkeypatch):
    """Version 2 counted 5 minutes at most between two signs of work: a 20-minute sitting with one save recorded 5:00.
    Read back, a pass within one sitting (start to pass under the break length) is the time from start to pass; a
    longer one keeps its time, its gaps unknown."""
    me = Learner(workspace, monkeypatch)

    def attempt(n, minutes, active_s):
        passed = (START + timedelta(days=n, minutes=minutes)).isoformat()
        return {"n": n, "started": (START + timedelta(days=n)).isoformat(),
                "folder": f"practice/ex01_tensors/attempt-{n}", "file": "ex01_tensors.py", "variant": {},
                "gradings": 1, "hints": 0, "best_score": 10.0, "passed": passed, "active_s": active_s,
                "last_active": passed, "rating": 3, "closed": None}

    old = {"version": 2, "katas": {"ex01": {"attempts": [attempt(1, 20, 300.0), attempt(2, 180, 900.0)],
                                            "reviews": [], "card": None}}}
    (workspace / kata.STATE_FILE).write_text(json.dumps(old))
    me.at(START + timedelta(days=3))
    history = json.loads(me.grade("stats", "--json", code=0))[0]["history"]
    assert [a["active_s"] for a in history] == [1200.0, 900.0]
