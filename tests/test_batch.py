"""Teacher batch grading through the real CLI: matching, problems, outputs, resuming, isolation."""

import csv
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from xml.etree import ElementTree as ET

import nbformat
import pytest

from conftest import ROOT, run_grade

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"
MISTAKE = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "sign_flipped.py"
ATTACKS = ROOT / "tests" / "attacks"


@pytest.fixture
def submissions(tmp_path):
    subs = tmp_path / "subs"
    for student, files in {
        "alice": {"ex05_manual_backward.py": SOLUTION},
        "bob": {"bob_ex05.py": MISTAKE},
        "mallory": {"ex05.py": ATTACKS / "patches_torch.py"},
        "nina": {"ex05.py": SOLUTION},  # graded after mallory's tampering: must still score full
        "carol": {"ex05.py": SOLUTION, "EX05_final.py": MISTAKE},
        "dave": {"ex05.py": ATTACKS / "infinite_loop.py", "notes.txt": MISTAKE},
        "erin": {},
    }.items():
        (subs / student).mkdir(parents=True)
        for name, src in files.items():
            shutil.copy(src, subs / student / name)
    (subs / "olga").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("my ex05"),
                                         nbformat.v4.new_code_cell("%matplotlib inline\n" + SOLUTION.read_text())])
    nbformat.write(nb, str(subs / "olga" / "ex05_work.ipynb"))
    with zipfile.ZipFile(subs / "zoe.zip", "w") as zf:
        zf.write(SOLUTION, "work/ex05.py")
        zf.writestr("../escape_ex05.py", "x = 1")
    (subs / "yan.zip").write_bytes(b"not a zip")
    return subs


def batch(subs, out, *extra):
    return run_grade("batch", subs, "-e", "ex05", "--out", out, "--time-limit", "2", "--workers", "2", *extra)


def test_batch_grades_everyone_and_reports_problems(submissions, tmp_path):
    out = tmp_path / "grades"
    proc = batch(submissions, out, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["full"] == 4 and summary["tampered"] == 1 and summary["timeout"] == 1

    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert rows["alice"]["ex05"] == "10" and rows["nina"]["ex05"] == "10" and rows["zoe"]["ex05"] == "10"
    assert rows["olga"]["ex05"] == "10"  # a notebook
    assert rows["bob"]["ex05"] == "6" and rows["mallory"]["ex05"] == "0"
    assert rows["carol"]["ex05"] == "" and rows["carol"]["ex05_status"] == "needs a look"  # two files: no grade
    assert rows["yan"]["ex05_status"] == "needs a look" and rows["erin"]["ex05_status"] == "missing"
    assert rows["dave"]["ex05"] == "3"

    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all({"student", "exercise", "status", "score", "max_score", "checks"} <= set(r) for r in lines)
    problems = " | ".join(p["message"] for p in json.loads((out / "problems.json").read_text()))
    assert "two or more files for ex05" in problems and "notes.txt matches no exercise" in problems
    assert "no files submitted" in problems and "yan.zip is not a readable zip" in problems
    assert not (submissions.parent / "escape_ex05.py").exists()

    bob = (out / "feedback" / "bob.md").read_text()
    assert "opposite sign" in bob and "6/10" in bob
    assert "two or more files" in (out / "feedback" / "carol.md").read_text()
    suites = ET.parse(out / "junit.xml").getroot()
    assert any(s.get("name") == "bob.ex05" and s.get("failures") == "2" for s in suites)


def test_rerun_skips_what_is_graded_unless_forced(submissions, tmp_path):
    out = tmp_path / "grades"
    batch(submissions, out)
    again = json.loads(batch(submissions, out, "--json").stdout)
    assert again["skipped"] == 7 and again.get("full", 0) == 0
    shutil.copy(SOLUTION, submissions / "bob" / "bob_ex05.py")  # bob resubmits: graded again
    third = json.loads(batch(submissions, out, "--json").stdout)
    assert third["full"] == 1 and third["skipped"] == 6
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert rows["bob"]["ex05"] == "10"
    forced = json.loads(batch(submissions, out, "--json", "--force").stdout)
    assert forced["skipped"] == 0


def test_interrupted_batch_keeps_what_is_done(submissions, tmp_path):
    out = tmp_path / "grades"
    proc = subprocess.Popen([sys.executable, "-m", "grader.cli.main", "batch", str(submissions), "-e", "ex05",
                             "--out", str(out),
                             "--time-limit", "5", "--workers", "1"], cwd=ROOT, env={**os.environ},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.read_text().count("\n") >= 2):
        assert time.monotonic() < deadline and proc.poll() is None, "the batch never graded two results"
        time.sleep(0.05)
    proc.send_signal(2)  # Ctrl-C, while later students are still being graded
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Interrupted" in err, err.decode()[-2000:]
    kept = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(kept) >= 2 and (out / "grades.csv").exists()
    resumed = json.loads(batch(submissions, out, "--json").stdout)
    assert resumed["skipped"] >= 1


def test_missing_submissions_folder_exit_2(tmp_path):
    proc = run_grade("batch", tmp_path / "nope")
    assert proc.returncode == 2 and "no such folder" in proc.stderr
