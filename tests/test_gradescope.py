"""The Gradescope bundle: what setup.sh installs, and run_autograder against a folder laid out like /autograder."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import zipfile

import pytest
from packaging.requirements import Requirement

from conftest import ROOT, grade_here

MISTAKE = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "sign_flipped.py"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The ex05 bundle, unpacked as Gradescope unpacks it: (root, source, names in the zip)."""
    root = tmp_path_factory.mktemp("autograder")
    path = root / "autograder.zip"
    proc = grade_here("gradescope", "ex05", "--out", path)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        zf.extractall(root / "source")
    (root / "source" / "run_autograder").chmod(0o755)  # zipfile does not restore permissions
    return root, root / "source", names


def run_autograder(root, source, submitted: dict) -> dict:
    """Grade `submitted` ({file name: text}) as Gradescope would; return results.json."""
    shutil.rmtree(root / "submission", ignore_errors=True)
    (root / "submission").mkdir()
    for name, text in submitted.items():
        (root / "submission" / name).write_text(text)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_SOURCE": str(source),
           "AUTOGRADER_PYTHON": sys.executable}  # on Gradescope: the venv setup.sh made
    subprocess.run([str(source / "run_autograder")], env=env, check=True, capture_output=True)
    return json.loads((root / "results" / "results.json").read_text())


def test_bundle_runs_like_on_gradescope(bundle):
    root, source, names = bundle
    assert "setup.sh" in names and "run_autograder" in names
    assert not any("solutions" in n for n in names)  # student code runs in that container
    report = run_autograder(root, source, {"ex05_manual_backward.py": MISTAKE.read_text()})
    assert report["score"] == 6
    assert {"name", "score", "max_score", "output", "visibility", "status"} <= set(report["tests"][0])
    assert any("opposite sign" in t["output"] for t in report["tests"])


def test_a_file_that_does_not_load_says_why_once(bundle):
    root, source, _ = bundle
    report = run_autograder(root, source, {"ex05.py": "import torch\n\ndef predict(x, w, b)\n    return x\n"})
    assert report["score"] == 0 and "SyntaxError at line 3" in report["output"]
    assert all(t["output"].startswith("Not run") for t in report["tests"])


def test_setup_installs_into_a_virtual_environment_the_torch_validated_here(bundle):
    _, source, _ = bundle
    setup = (source / "setup.sh").read_text()
    assert subprocess.run(["bash", "-n", str(source / "setup.sh")]).returncode == 0
    assert "python3 -m venv /autograder/venv" in setup and "python3-venv" in setup
    installs = [shlex.split(line) for line in setup.splitlines() if " install " in line and "apt-get" not in line]
    assert installs and all(words[0] == "/autograder/venv/bin/pip" for words in installs)
    wanted = {Requirement(w).name: str(Requirement(w).specifier) for words in installs for w in words[2:]
              if not w.startswith("-") and "://" not in w}
    from importlib.metadata import version

    assert wanted["torch"] == f"=={version('torch').split('+')[0]}"  # the version the checks were validated with
    assert {"pytest", "pytest-timeout", "nbformat", "ipython", "click", "numpy"} <= set(wanted)
    assert "/autograder/venv/bin/python" in (source / "run_autograder").read_text()


def test_a_submitted_zip_is_unpacked_and_two_files_are_named(bundle):
    import io

    root, source, _ = bundle
    solution = (ROOT / "solutions" / "ex05_manual_backward.py").read_text()
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as zf:
        zf.writestr("work/ex05_manual_backward.py", solution)
    shutil.rmtree(root / "submission", ignore_errors=True)
    (root / "submission").mkdir()
    (root / "submission" / "my_work.zip").write_bytes(packed.getvalue())
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_SOURCE": str(source),
           "AUTOGRADER_PYTHON": sys.executable}
    subprocess.run([str(source / "run_autograder")], env=env, check=True, capture_output=True)
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 10
    twice = run_autograder(root, source, {"ex05_a.py": solution, "ex05_b.py": solution})
    assert twice["score"] == 0 and "two or more files for ex05 (ex05_a.py, ex05_b.py)" in twice["output"]
    assert "no file named like" not in twice["output"]


def test_the_runner_takes_the_options_batch_takes(tmp_path):
    path = tmp_path / "autograder.zip"
    proc = grade_here("gradescope", "ex05", "--out", path, "--time-limit", "3", "--memory", "1024", "--lang", "zh")
    assert proc.returncode == 0, proc.stderr
    run = zipfile.ZipFile(path).read("run_autograder").decode()
    assert "--lang zh --time-limit 3 --memory 1024 ex05" in run


CLASS_COURSE = '''name = "dl101"
reviewer = "Prof. Li"
exercises = ["torch-katas:ex05", "torch-katas:ex06"]

[points]
"ex05.dw" = 4

[late]
due = 2026-03-01T23:59:00+08:00
penalty = 0.1
excused = ["dee_104"]

[late.extensions]
ana_101 = 2

[assignments.week1]
exercises = ["ex05"]
late = { due = 2026-03-08T23:59:00+08:00, extensions = { ben_102 = 3 } }

[assignments.week1.points]
"ex05.db" = 2

[visibility."torch-katas:ex05"]
public = ["dw"]
after_due_date = ["by_hand"]
'''


def test_a_course_s_bundle_carries_nothing_about_students(tmp_path):
    """The teacher's course.toml names students ([late]'s extensions and excused, the reviewer) and the course folder
    holds a roster and reviews: the bundle carries what grading reads, its points and visibility, and none of that."""
    import tomllib

    course = tmp_path / "dl101"
    (course / "grades").mkdir(parents=True)
    (course / "course.toml").write_text(CLASS_COURSE)
    (course / "roster.csv").write_text("folder,id,extension\nana_101,1,\ncai_103,3,2\n")
    (course / "grades" / "review.toml").write_text('[ana_101.ex05_manual_backward]\nby = "Prof. Li"\n')
    path = tmp_path / "autograder.zip"
    proc = grade_here("gradescope", "--assignment", "week1", "--out", path, cwd=course)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(path) as zf:
        zf.extractall(tmp_path / "source")
        names = zf.namelist()
    data = [name for name in names if not name.startswith("grader/") or name.startswith("grader/_bundle/")]
    assert data and not any(word in name for name in data for word in ("roster", "review", "grades", "ex06"))
    carried = (tmp_path / "source" / "course" / "course.toml").read_text()
    for student in ("ana_101", "ben_102", "cai_103", "dee_104", "Prof. Li", "late", "reviewer", "extensions"):
        assert student not in carried
    assert tomllib.loads(carried) == {
        "name": "dl101", "languages": ["en"], "short_ids": False,
        "exercises": ["torch-katas:ex05", "torch-katas:ex06"], "points": {"ex05.dw": 4.0},
        "assignments": {"week1": {"exercises": ["ex05"], "points": {"ex05.db": 2.0}}},
        "visibility": {"torch-katas:ex05": {"public": ["dw"], "after_due_date": ["by_hand"]}}}
    (tmp_path / "source" / "run_autograder").chmod(0o755)
    report = run_autograder(tmp_path, tmp_path / "source",
                            {"ex05_manual_backward.py": (ROOT / "solutions" / "ex05_manual_backward.py").read_text()})
    assert report["score"] == 12  # 10, with dw worth 4 (not 3) and db 2 (not 1): the course's and week1's points
    shown = {t["name"].split(": ", 1)[1]: t["visibility"] for t in report["tests"]}
    assert shown["dw matches autograd and finite differences"] == "visible"  # the course's visibility
    assert shown["dw and db have the shapes of w and b"] == "visible"  # exercise.toml's
    assert shown["linear_grads derives the gradients by hand (no autograd)"] == "after_due_date"
    assert shown["db matches autograd and finite differences"] == "after_published"
