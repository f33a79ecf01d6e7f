"""HTML reports: a learner's page with the loss curve and parameter traces, the teacher's index,
and pages that still work (tables, a note) without matplotlib."""

import base64
import json
import re
import shutil
import sys

import pytest

from conftest import ROOT, run_grade

SOLUTION = ROOT / "solutions" / "ex06_manual_training_loop.py"
DIVERGES = ROOT / "tests" / "mistakes" / "ex06_manual_training_loop" / "lr_too_large.py"


def images(page: str) -> list[bytes]:
    return [base64.b64decode(d) for d in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)]


def test_training_exercise_report_has_curves(tmp_path):
    pytest.importorskip("matplotlib")
    report = tmp_path / "report.html"
    proc = run_grade("ex06", "--file", SOLUTION, "--report", report)
    assert proc.returncode == 0, proc.stderr
    page = report.read_text()
    assert "<table>" in page and "Score: 10/10" in page
    pngs = images(page)
    assert len(pngs) == 2 and all(p.startswith(b"\x89PNG") and len(p) > 5000 for p in pngs)
    assert "loss per epoch" in page and "w and b per epoch" in page


def test_diverging_run_gets_a_note(tmp_path):
    report = tmp_path / "report.html"
    run_grade("ex06", "--file", DIVERGES, "--report", report)
    page = report.read_text()
    assert "learning rate is too large" in page and "Your loss grew" in page


def test_json_carries_the_curves():
    proc = run_grade("ex06", "--file", SOLUTION, "--json")
    curves = json.loads(proc.stdout)["curves"]
    loss = next(c for c in curves if c["title"] == "loss per epoch")
    assert loss["series"]["yours"][-1] < loss["series"]["yours"][0]
    assert len(loss["series"]["reference"]) == len(loss["series"]["yours"])


def test_without_matplotlib_the_page_keeps_tables(monkeypatch, tmp_path):
    from grader import html_report

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = json.loads(run_grade("ex06", "--file", DIVERGES, "--json").stdout)
    page = html_report.write_report([result], tmp_path / "r.html", "ex06").read_text()
    assert html_report.NO_PLOTS in page and not images(page)
    assert "<th>first</th>" in page  # the curve's first and last values as a table


def test_batch_writes_student_pages_and_a_class_index(tmp_path):
    pytest.importorskip("matplotlib")
    subs = tmp_path / "subs"
    for student, src in {"ann": SOLUTION, "ben": DIVERGES}.items():
        (subs / student).mkdir(parents=True)
        shutil.copy(src, subs / student / "ex06.py")
    out = tmp_path / "grades"
    assert run_grade("batch", subs, "-e", "ex06", "--out", out).returncode == 0
    assert len(images((out / "feedback" / "ann.html").read_text())) == 2
    index = (out / "index.html").read_text()
    assert len(images(index)) == 1 and "most failed first" in index and "feedback/ben.html" in index


@pytest.mark.parametrize("name", ["ex09_optimizers", "ex14_training_loop", "ex17_amp"])
def test_other_training_exercises_record_their_loss(name):
    result = json.loads(run_grade(name, "--file", ROOT / "solutions" / f"{name}.py", "--json").stdout)
    assert result["score"] == result["max_score"]
    yours = [c["series"]["yours"] for c in result["curves"]]
    assert yours and all(len(s) >= 5 and min(s[1:]) < s[0] for s in yours)
