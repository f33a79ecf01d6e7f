"""A non-editable install works: the wheel carries the exercises, checks and metadata, and the
installed grader grades and creates workspaces from anywhere."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp), str(ROOT)], check=True,
                   capture_output=True)
    wheel = next(tmp.glob("torch_katas-*.whl"))
    target = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    return wheel, target


def run_installed(target, *args, cwd):
    env = {**os.environ, "PYTHONPATH": str(target)}
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True)


def test_wheel_carries_exercises_checks_and_metadata(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert "grader/_bundle/exercises/ex05_manual_backward/exercise.toml" in names
    assert "grader/_bundle/exercises/ex05_manual_backward/README.zh.md" in names
    assert "grader/checks/ex05_manual_backward.py" in names and "grader/checks/pytest.ini" in names
    assert "grader/checks/ex05_manual_backward.keys.toml" in names  # what the class page says each key means
    assert {"grader/report/static/review.js", "grader/report/templates/review/mistake.html.j2"} <= set(names)
    assert sum(n.endswith("exercise.toml") for n in names) == len(list((ROOT / "exercises").glob("*/exercise.toml")))
    folders = [set(n.split("/")[:-1]) for n in names]  # a student install: no such folder (course/variants.py: code)
    assert not [n for n, parts in zip(names, folders) if parts & {"solutions", "mistakes", "variants"}]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "grade = grader.cli.entry:main" in zipfile.ZipFile(wheel).read(entry_points).decode()  # what `grade` runs


def test_installed_grader_grades_from_anywhere(installed, tmp_path):
    _, target = installed
    where = run_installed(target, "list", "--json", cwd=tmp_path)
    assert where.returncode == 0 and len(json.loads(where.stdout)) >= 21
    code = "import grader; print(grader.__file__)"
    origin = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(target)},
                            capture_output=True, text=True).stdout
    assert origin.startswith(str(target))
    solution = ROOT / "solutions" / "ex05_manual_backward.py"
    graded = run_installed(target, "ex05", "--file", solution, "--json", cwd=tmp_path)
    assert json.loads(graded.stdout)["score"] == 10


def test_an_installed_grader_has_no_solutions_to_show(installed, tmp_path):
    _, target = installed
    shown = run_installed(target, "solution", "ex05", "--force", cwd=tmp_path)
    assert shown.returncode == 2 and "not installed here" in shown.stderr and "def " not in shown.stdout
    proved = run_installed(target, "validate", "ex05", cwd=tmp_path)
    assert proved.returncode == 1 and "no reference solution here" in proved.stdout


def test_installed_grader_creates_a_workspace(installed, tmp_path):
    _, target = installed
    assert run_installed(target, "init", "ws", cwd=tmp_path).returncode == 0
    stub = tmp_path / "ws" / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py"
    assert stub.exists()
    result = json.loads(run_installed(target, "ex05", "--json", cwd=tmp_path / "ws").stdout)
    assert result["submission"] == str(stub) and result["score"] == 0
