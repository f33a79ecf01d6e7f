"""Similar submissions: a copy with renamed variables, reordered functions and changed comments is found, in a long
exercise and in a short one; ten independently written correct solutions are not flagged, nor a class of identical
correct answers; scores never change; nothing to install."""

import csv
import json
import os
import shutil

from conftest import ROOT, run_grade

SOLUTIONS = ROOT / "tests" / "similarity" / "ex14"  # s01..s10 written independently; copy_of_s03 is s03 disguised
SHORT = ROOT / "tests" / "similarity" / "ex05"  # the same for a short exercise: copy_of_s06 is s06 disguised


def test_a_disguised_copy_is_found_and_independent_solutions_are_not(tmp_path):
    subs = tmp_path / "subs"
    for path in SOLUTIONS.glob("*.py"):
        (subs / path.stem).mkdir(parents=True)
        shutil.copy(path, subs / path.stem / "ex14_training_loop.py")
    out = tmp_path / "grades"
    proc = run_grade("batch", subs, "--out", out, "--workers", "2", "--similarity")
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads((out / "similarity.json").read_text())
    assert [(p["students"], p["identical"]) for p in pairs] == [(["copy_of_s03", "s03"], False)]
    assert pairs[0]["similarity"] > 0.9
    assert {r["ex14"] for r in csv.DictReader((out / "grades.csv").open())} == {"10"}  # all correct, none changed
    page = (out / "similarity.html").read_text()
    assert page.count("<mark>") >= 2 and "def loop_over" in page and "def run_batches" in page
    assert "copy_of_s03 · s03" in (out / "index.html").read_text()


def test_a_short_exercise_copy_is_found_without_flooding_a_class_of_identical_answers(tmp_path):
    """ex05: a few lines of the students' own under a long stub. The disguised copy is found; ten independent
    solutions and twelve students handing in the same correct answer (the class's common answer) are not listed."""
    subs = tmp_path / "subs"
    for path in SHORT.glob("*.py"):
        (subs / path.stem).mkdir(parents=True)
        shutil.copy(path, subs / path.stem / "ex05_manual_backward.py")
    for n in range(12):
        (subs / f"same{n:02d}").mkdir()
        shutil.copy(ROOT / "solutions" / "ex05_manual_backward.py", subs / f"same{n:02d}" / "ex05.py")
    out = tmp_path / "grades"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'blocker'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    (tmp_path / "blocker" / "copydetect").mkdir(parents=True)  # not needed: a copydetect that cannot import
    (tmp_path / "blocker" / "copydetect" / "__init__.py").write_text("raise ImportError('not installed')\n")
    proc = run_grade("batch", subs, "--out", out, "--workers", "2", "--similarity", env=env)
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads((out / "similarity.json").read_text())
    assert [(p["students"], p["identical"]) for p in pairs] == [(["copy_of_s06", "s06"], False)], pairs
    assert pairs[0]["similarity"] == 1


def test_groups_are_listed_as_maximal_sets():
    from grader.teacher.similarity import maximal

    entries = [{"exercise": "ex14", "students": ["a", "b"]}, {"exercise": "ex14", "students": ["a", "b", "c"]},
               {"exercise": "ex15", "students": ["a", "b"]}]
    assert maximal(entries) == entries[1:]  # a and b again with c: once; another exercise stays
