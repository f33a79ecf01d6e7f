"""HTML reports: a learner's page with the loss curve and parameter traces as inline SVG (a diverging
curve stops where it leaves the chart), and the teacher's index."""

import json
import re
import shutil

import pytest

from conftest import ROOT, grade_here, run_grade

SOLUTION = ROOT / "solutions" / "ex06_manual_training_loop.py"
DIVERGES = ROOT / "tests" / "mistakes" / "ex06_manual_training_loop" / "lr_too_large.py"


def charts(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page)


def points(chart: str) -> list[int]:
    """How many points each line of a chart has."""
    return [len(p.split()) for p in re.findall(r'<polyline [^>]*points="([^"]*)"', chart)]


def test_training_exercise_report_has_curves(tmp_path):
    report = tmp_path / "report.html"
    proc = grade_here("ex06", "--file", SOLUTION, "--report", report)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {report}" in proc.stdout
    page = report.read_text()
    assert "<table class='checks'>" in page and "Score: 10/10" in page
    loss, params = charts(page)
    assert "loss per epoch" in loss and "w and b per epoch" in params and "true w = " in params
    assert all(n > 5 for n in points(loss) + points(params))
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained
    assert page.count("ex06 · ") == 2  # the <title> and the <h1>, no <h2> saying it again


def test_diverging_run_gets_a_note_and_its_curve_stops_where_it_leaves(tmp_path):
    report = tmp_path / "report.html"
    grade_here("ex06", "--file", DIVERGES, "--report", report)
    page = report.read_text()
    assert "learning rate is too large" in page and "Your loss grew" in page
    loss, params = charts(page)
    assert "your curve leaves the chart at epoch" in params
    *yours, w_ref, b_ref = points(params)  # yours oscillate and explode: drawn only while on the chart
    assert max(yours, default=0) < 10 and min(w_ref, b_ref) > 50 and "▲" in params


def test_json_carries_the_curves():
    proc = grade_here("ex06", "--file", SOLUTION, "--json")
    curves = json.loads(proc.stdout)["curves"]
    loss = next(c for c in curves if c["title"] == "loss per epoch")
    assert loss["series"]["yours"][-1] < loss["series"]["yours"][0]
    assert len(loss["series"]["reference"]) == len(loss["series"]["yours"])


def test_batch_writes_student_pages_and_a_class_index(tmp_path):
    subs = tmp_path / "subs"
    for student, src in {"ann": SOLUTION, "ben": DIVERGES}.items():
        (subs / student).mkdir(parents=True)
        shutil.copy(src, subs / student / "ex06.py")
    out = tmp_path / "grades"
    assert run_grade("batch", subs, "-e", "ex06", "--out", out).returncode == 0
    assert len(charts((out / "feedback" / "ann.html").read_text())) == 2
    index = (out / "index.html").read_text()
    assert len(charts(index)) == 1 and "most failed first" in index and "feedback/ben.html#ex06" in index


@pytest.mark.parametrize("name", ["ex09_optimizers", "ex14_training_loop", "ex17_amp"])
def test_other_training_exercises_record_their_loss(name):
    result = json.loads(run_grade(name, "--file", ROOT / "solutions" / f"{name}.py", "--json").stdout)
    assert result["score"] == result["max_score"]
    yours = [c["series"]["yours"] for c in result["curves"]]
    assert yours and all(len(s) >= 5 and min(s[1:]) < s[0] for s in yours)


def a_result(**changes):
    from grader.judge.result import CheckResult, Result
    from grader.text import Text

    checks = [CheckResult("a", Text("values", "数值"), "passed", 4.0, 4.0),
              CheckResult("b", Text("on the GPU", "在 GPU 上"), "skipped", 0.0, 3.0,
                          Text("not verified here: this machine has no CUDA device"))]
    return Result(**{"exercise": "ex16", "name": "ex16_device_agnostic", "title": Text("Devices"),
                     "submission": "ex16.py", "status": "graded", "score": 4.0, "max_score": 4.0, "checks": checks,
                     "duration_s": 0.5, "seed": 1, **changes})


def test_a_skipped_check_reads_as_skipped_beside_a_total_without_it():
    from grader.report.terminal import render

    text = render(a_result(), color=False)
    skipped = next(line for line in text.splitlines() if "on the GPU" in line)
    assert skipped.split()[0] == "skip" and skipped.endswith("skipped") and "0/3" not in text
    assert "Score: 4/4 (3 points skipped: not verified here)" in text
    chinese = render(a_result(), "zh", color=False)
    assert "跳过" in chinese and "得分：4/4（3 分跳过：此处无法验证）" in chinese
    assert "此处无法验证：这台机器没有 CUDA 设备" in chinese


def test_a_load_error_keeps_its_caret_under_the_line_in_html_and_markdown(tmp_path):
    from grader.course.exercises import find_exercise
    from grader.teacher.gradebook import feedback_markdown
    from grader.report.pages import write_report
    from grader.text import Text

    message = "IndentationError at line 5: unexpected indent\n      y = 2\n      ^"
    result = a_result(status="error", score=0.0, message=Text.of(message), checks=[])
    page = write_report([result], tmp_path / "r.html", "ex16 · Devices").read_text()
    assert f"<pre>{message}</pre>" in page
    row = {"student": "ann", "total": 0, "max_total": 4, "cells": {"ex16": {"state": "error"}}, "problems": []}
    markdown = feedback_markdown(row, {"ex16": result}, [find_exercise("ex16")])
    assert f"```\n{message}\n```" in markdown
