"""Similar submissions: a copy with renamed variables and reordered functions is found; ten
independently written correct solutions are not flagged; scores never change; without the extra the
command says how to install it."""

import csv
import json
import shutil

import pytest

from conftest import ROOT, run_grade

SOLUTIONS = ROOT / "tests" / "similarity" / "ex14"  # s01..s10 written independently; copy_of_s03 is s03 disguised


def test_a_disguised_copy_is_found_and_independent_solutions_are_not(tmp_path):
    pytest.importorskip("copydetect")
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


def test_without_copydetect_the_command_says_how_to_install_it(tmp_path):
    blocker = tmp_path / "blocker" / "copydetect"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('not installed')\n")
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    env = {"PYTHONPATH": str(tmp_path / "blocker"), "PATH": "/usr/bin:/bin"}
    proc = run_grade("batch", tmp_path / "subs", "--out", tmp_path / "out", "--similarity", env=env)
    assert proc.returncode == 2 and "pip install 'torch-katas[similarity]'" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_groups_are_listed_as_maximal_sets():
    from grader.teacher.similarity import maximal

    entries = [{"exercise": "ex14", "students": ["a", "b"]}, {"exercise": "ex14", "students": ["a", "b", "c"]},
               {"exercise": "ex15", "students": ["a", "b"]}]
    assert maximal(entries) == entries[1:]  # a and b again with c: once; another exercise stays
