"""HTML reports: a learner's page with the loss curve and parameter traces as inline SVG (a diverging
curve stops where it leaves the chart), and the teacher's index."""

import json
import re
import shutil

import pytest

from conftest import ROOT, run_grade

SOLUTION = ROOT / "solutions" / "ex06_manual_training_loop.py"
DIVERGES = ROOT / "tests" / "mistakes" / "ex06_manual_training_loop" / "lr_too_large.py"


def charts(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page)


def points(chart: str) -> list[int]:
    """How many points each line of a chart has."""
    return [len(p.split()) for p in re.findall(r'<polyline [^>]*points="([^"]*)"', chart)]


def test_training_exercise_report_has_curves(tmp_path):
    report = tmp_path / "report.html"
    proc = run_grade("ex06", "--file", SOLUTION, "--report", report)
    assert proc.returncode == 0, proc.stderr
    page = report.read_text()
    assert "<table>" in page and "Score: 10/10" in page
    loss, params = charts(page)
    assert "loss per epoch" in loss and "w and b per epoch" in params and "true w = " in params
    assert all(n > 5 for n in points(loss) + points(params))
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained
    assert page.count("ex06 · ") == 2  # the <title> and the <h1>, no <h2> saying it again


def test_diverging_run_gets_a_note_and_its_curve_stops_where_it_leaves(tmp_path):
    report = tmp_path / "report.html"
    run_grade("ex06", "--file", DIVERGES, "--report", report)
    page = report.read_text()
    assert "learning rate is too large" in page and "Your loss grew" in page
    loss, params = charts(page)
    assert "your curve leaves the chart at epoch" in params
    *yours, w_ref, b_ref = points(params)  # yours oscillate and explode: drawn only while on the chart
    assert max(yours, default=0) < 10 and min(w_ref, b_ref) > 50 and "▲" in params


def test_json_carries_the_curves():
    proc = run_grade("ex06", "--file", SOLUTION, "--json")
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
