"""A teacher's own course, end to end, through the real CLI as a teacher would use it: two exercises of its
own (one scaffolded by `grade new`, one made from an nbgrader notebook), points overrides and an
assignment; validate, release, a learner grading in the released workspace, a batch over student folders,
and the course published as a package that students install and `grade init`. Nothing in torch-katas
changes for any of it."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, grade_here, runs_here, run_grade

RELU_CHECKS = '''"""Hidden checks of hw2_relu."""

import torch

from grader.checking import check, expect_close, fail


@check("relu(x) keeps positives and zeroes negatives", points=2)
def test_relu_values(submission, rng):
    x = torch.randn(5, 4, generator=rng)
    expect_close(submission.relu(x), x.clamp(min=0), "relu(x)", hints={
        "zero": ("Everything became 0: compare with 0, keep x where it is larger.", "全变成了 0。")})


@check("relu leaves x unchanged", points=1)
def test_relu_out_of_place(submission, rng):
    x = torch.randn(6, generator=rng)
    _, (after,) = submission.call_with_args("relu", x)
    if not torch.equal(after, x):
        fail("relu changed x in place: return a new tensor.", "relu 原地修改了 x：请返回新的 tensor。", key="in-place")
'''

RELU_MISTAKE = '''# Mistake: clamps at the wrong side (keeps the negatives).
# Expect: relu(x) has wrong values
def relu(x):
    return x.clamp(max=0)
'''


def nbgrader_notebook(path: Path) -> None:
    """An nbgrader assignment notebook: a statement, a solution cell with the markers, a test cell."""
    nb = nbformat.v4.new_notebook()
    solution = nbformat.v4.new_code_cell("import torch\n\n\ndef relu(x):\n    ### BEGIN SOLUTION\n"
                                         "    return x.clamp(min=0)\n    ### END SOLUTION\n")
    solution.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "relu"}
    tests = nbformat.v4.new_code_cell("assert relu(torch.tensor([-1.0])).item() == 0\n### BEGIN HIDDEN TESTS\n"
                                      "assert relu(torch.tensor([2.0])).item() == 2\n### END HIDDEN TESTS\n")
    tests.metadata["nbgrader"] = {"solution": False, "grade": True, "grade_id": "relu_tests", "points": 1}
    nb.cells = [nbformat.v4.new_markdown_cell("# ReLU by hand\n\nWrite `relu(x)`: max(x, 0), elementwise."),
                solution, tests]
    nbformat.write(nb, str(path))


def grade_in(cwd: Path, *args):
    return (grade_here if runs_here(args) else run_grade)(*args, cwd=cwd)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("teacher")
    root = tmp / "dl101"
    made = grade_in(tmp, "new", "hw1_double", "--course", root)
    assert made.returncode == 0, made.stderr
    nbgrader_notebook(tmp / "relu.ipynb")
    converted = grade_in(tmp, "new", "hw2_relu", "--from-notebook", tmp / "relu.ipynb", "--course", root)
    assert converted.returncode == 0, converted.stderr
    assert "test relu_tests (1 point, hidden tests kept out of the stub): a check run in the judge" in converted.stdout
    # what the teacher then writes: checks of their own in place of the imported one, the hints, a known mistake
    (root / "checks" / "hw2_relu.py").write_text(RELU_CHECKS)
    (root / "mistakes" / "hw2_relu").mkdir(parents=True)
    (root / "mistakes" / "hw2_relu" / "keeps_negatives.py").write_text(RELU_MISTAKE)
    toml = root / "exercises" / "hw2_relu" / "exercise.toml"
    toml.write_text(toml.read_text().replace("points = 1 ", "points = 3 ").replace(
        "hints = []", 'hints = ["Compare each value with 0."]'))
    with (root / "course.toml").open("a") as f:
        f.write('\n[points]\n"hw1_double.double" = 4\n\n[assignments.week1]\nexercises = ["hw2_relu"]\n'
                '[assignments.week1.points]\n"hw2_relu.relu_out_of_place" = 2\n')
    return root


def test_the_notebook_became_a_stub_and_a_solution(course):
    stub = (course / "exercises" / "hw2_relu" / "hw2_relu.py").read_text()
    solution = (course / "solutions" / "hw2_relu.py").read_text()
    assert "raise NotImplementedError()" in stub and "clamp" not in stub and "BEGIN" not in stub
    assert "return x.clamp(min=0)" in solution and "BEGIN" not in solution and "assert" not in solution
    assert "# ReLU by hand" in (course / "exercises" / "hw2_relu" / "README.md").read_text()


def test_validate_proves_the_course_and_fails_a_broken_check(course):
    proved = grade_in(course, "validate")
    assert proved.returncode == 0, proved.stdout
    assert "2 of 2 validations ok" in proved.stdout
    checks = course / "checks" / "hw1_double.py"
    good = checks.read_text()
    checks.write_text(good.replace("2 * x, \"double(x)\"", "3 * x, \"double(x)\""))
    try:
        broken = grade_in(course, "validate", "hw1")
        assert broken.returncode == 1 and "FAIL solution" in broken.stdout
    finally:
        checks.write_text(good)


def test_validate_holds_a_course_check_module_to_the_check_api(course):
    """The import contracts hold grader/checks/ to the check API; validate holds a course's own checks/ to it."""
    checks = course / "checks" / "hw1_double.py"
    good = checks.read_text()
    checks.write_text("from grader.judge.result import Result  # noqa\nimport grader.sandbox.source\n" + good)
    try:
        broken = grade_in(course, "validate", "hw1")
        assert broken.returncode == 1
        assert "line 1 imports grader.judge.result: a check module imports only the check API" in broken.stdout
        assert "line 2 imports grader.sandbox.source" in broken.stdout
    finally:
        checks.write_text(good)


def test_ids_points_overrides_and_assignments(course):
    listed = json.loads(grade_in(course, "list", "--json").stdout)
    assert [e["id"] for e in listed] == ["hw1_double", "hw2_relu"]
    assert [e["points"] for e in listed] == [5, 3]  # hw1_double: returns_tensor's 1, and double's 4 of course.toml
    shown = json.loads(grade_in(course, "show", "2", "--json").stdout)
    assert shown["id"] == "hw2_relu" and {c["id"]: c["points"] for c in shown["checks"]} == \
        {"relu_values": 2, "relu_out_of_place": 1}
    in_week1 = json.loads(grade_in(course, "show", "hw2", "--assignment", "week1", "--json").stdout)
    assert in_week1["points"] == 4 and {c["id"]: c["points"] for c in in_week1["checks"]}["relu_out_of_place"] == 2
    solved = json.loads(grade_in(course, "hw1", "--file", course / "solutions" / "hw1_double.py", "--json").stdout)
    assert (solved["score"], solved["max_score"]) == (5, 5)
    unknown = grade_in(course, "hw9")
    assert unknown.returncode == 2 and "unknown exercise 'hw9'" in unknown.stderr


def test_release_writes_the_student_version_only(course, tmp_path):
    out = tmp_path / "week1"
    released = grade_in(course, "release", "--assignment", "week1", "--out", out, "--check", "--notebooks")
    assert released.returncode == 0, released.stderr
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["course/checks/hw2_relu.py", "course/course.toml", "course/exercises/hw2_relu/README.md",
                     "course/exercises/hw2_relu/exercise.toml", "course/exercises/hw2_relu/hw2_relu.py",
                     "exercises/hw2_relu/README.md", "exercises/hw2_relu/hw2_relu.py", "notebooks/hw2_relu.ipynb",
                     "torch-katas.toml"]
    text = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert "clamp(min=0)" not in text and "expect_close" not in text and "keeps_negatives" not in text
    # a learner works in the released workspace and grades with the course's checks
    stub = out / "exercises" / "hw2_relu" / "hw2_relu.py"
    shutil.copy(course / "solutions" / "hw2_relu.py", stub)
    result = json.loads(grade_here("--course", course, "hw2_relu", "--json", cwd=out).stdout)
    assert result["submission"] == str(stub) and result["score"] == result["max_score"] == 3


def test_release_check_refuses_a_stub_that_already_passes(course, tmp_path):
    stub = course / "exercises" / "hw1_double" / "hw1_double.py"
    original = stub.read_text()
    stub.write_text((course / "solutions" / "hw1_double.py").read_text())
    try:
        refused = grade_in(course, "release", "--out", tmp_path / "out", "--check")
        assert refused.returncode == 2 and "already scores full" in refused.stderr
        assert not (tmp_path / "out").exists()
    finally:
        stub.write_text(original)


def test_batch_grades_an_assignment_with_its_points(course, tmp_path):
    subs = tmp_path / "subs"
    for student, source in (("ana", course / "solutions" / "hw2_relu.py"),
                            ("ben", course / "mistakes" / "hw2_relu" / "keeps_negatives.py")):
        (subs / student).mkdir(parents=True)
        shutil.copy(source, subs / student / "hw2_relu.py")
    (subs / "cai").mkdir()
    (subs / "cai" / "notes.txt").write_text("forgot")
    out = tmp_path / "grades"
    batch = grade_in(course, "batch", subs, "--assignment", "week1", "--out", out, "--workers", "2")
    assert batch.returncode == 0, batch.stderr
    rows = {r["student"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert (rows["ana"]["score"], rows["ana"]["max_score"]) == (4, 4)  # relu_out_of_place is worth 2 in week1
    assert rows["ben"]["score"] == 2 and "cai" not in rows
    grades = (out / "grades.csv").read_text()
    assert "cai" in grades  # every student gets a row: cai submitted nothing


def test_a_gradescope_bundle_of_the_course_runs_like_on_gradescope(course, tmp_path):
    """The bundle carries the course's exercises and checks, never its solutions; run_autograder grades
    a folder laid out like /autograder with the assignment's points."""
    import zipfile

    path = tmp_path / "autograder.zip"
    built = grade_in(course, "gradescope", "--assignment", "week1", "--out", path)
    assert built.returncode == 0, built.stderr
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        zf.extractall(tmp_path / "source")
    assert "course/checks/hw2_relu.py" in names and "course/course.toml" in names
    course_files = [n for n in names if not n.startswith("grader/")]  # the grader's own modules may say "variants"
    assert not [n for n in course_files if "solutions" in n or "mistakes" in n or "variants" in n]
    (tmp_path / "source" / "run_autograder").chmod(0o755)
    (tmp_path / "submission").mkdir()
    shutil.copy(course / "solutions" / "hw2_relu.py", tmp_path / "submission" / "hw2_relu.py")
    env = {**os.environ, "AUTOGRADER_ROOT": str(tmp_path), "AUTOGRADER_SOURCE": str(tmp_path / "source"),
           "AUTOGRADER_PYTHON": sys.executable}
    ran = subprocess.run([str(tmp_path / "source" / "run_autograder")], env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    report = json.loads((tmp_path / "results" / "results.json").read_text())
    assert report["score"] == 4 and len(report["tests"]) == 2  # relu_out_of_place is worth 2 in week1


def test_a_course_published_as_a_package(course, tmp_path):
    """The course as a package registering itself in the torch_katas.courses entry point group, without its
    solutions; a student installs it, `grade init --course dl101`, works and grades."""
    package = tmp_path / "pkg"
    data = package / "dl101_course"
    for part in ("exercises", "checks"):
        shutil.copytree(course / part, data / part)
    shutil.copy(course / "course.toml", data / "course.toml")
    (data / "__init__.py").write_text('"""The dl101 course for torch-katas."""\n')
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "dl101-course"\nversion = "1.0"\n\n'
        '[project.entry-points."torch_katas.courses"]\ndl101 = "dl101_course"\n\n'
        '[tool.setuptools.package-data]\ndl101_course = ["course.toml", "exercises/*/*", "checks/*"]\n')
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                                "--target", str(site), str(package)], capture_output=True, text=True)
    if installed.returncode != 0 and "setuptools" in installed.stderr:
        pytest.skip(f"setuptools cannot build here: {installed.stderr.strip().splitlines()[-1]}")
    assert installed.returncode == 0, installed.stderr
    env = {**os.environ, "PYTHONPATH": str(site)}
    home = tmp_path / "student"
    home.mkdir()
    made = run_grade("init", "--course", "dl101", "ws", cwd=home, env=env)  # a fresh Python: it finds the course
    assert made.returncode == 0, made.stderr
    ws = home / "ws"
    assert 'course = "dl101"' in (ws / "torch-katas.toml").read_text()
    shutil.copy(course / "solutions" / "hw1_double.py", ws / "exercises" / "hw1_double" / "hw1_double.py")
    graded = run_grade("hw1", "--json", cwd=ws, env=env)  # the workspace knows its course
    assert json.loads(graded.stdout)["score"] == 5, graded.stderr  # returns_tensor 1, double 4 (course.toml)
    shown = run_grade("solution", "hw1", "--force", cwd=ws, env=env)
    assert shown.returncode == 2 and "not installed here" in shown.stderr


def test_the_worked_example_in_docs_authoring_validates(tmp_path):
    """docs/authoring.md builds hw1_softmax step by step: its code, as written there, proves itself."""
    import re

    doc = (ROOT / "docs" / "authoring.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", doc, re.S)
    stub, solution, checks, mistake = [code for lang, code in blocks if lang == "python"][:4]
    statement = next(code for lang, code in blocks if lang == "markdown" and code.startswith("# "))
    metadata = next(code for lang, code in blocks if lang == "toml" and code.startswith("title"))
    keys = next(code for lang, code in blocks if lang == "toml" and code.startswith("no-max-subtraction"))
    root = tmp_path / "dl101"
    assert grade_here("new", "hw1_softmax", "--course", root, cwd=tmp_path).returncode == 0
    shutil.rmtree(root / "mistakes" / "hw1_softmax")
    shutil.rmtree(root / "variants" / "hw1_softmax")
    for path, text in {root / "exercises" / "hw1_softmax" / "hw1_softmax.py": stub,
                       root / "exercises" / "hw1_softmax" / "README.md": statement,
                       root / "exercises" / "hw1_softmax" / "exercise.toml": metadata,
                       root / "solutions" / "hw1_softmax.py": solution, root / "checks" / "hw1_softmax.py": checks,
                       root / "checks" / "hw1_softmax.keys.toml": keys,
                       root / "mistakes" / "hw1_softmax" / "no_max_subtraction.py": mistake}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    proved = run_grade("validate", "hw1", "--seeds", "2", cwd=root)
    assert proved.returncode == 0, proved.stdout


def test_a_course_uses_built_in_exercises_by_name(tmp_path):
    """`torch-katas:ex05` in course.toml: the built-in exercise as it is (its id, checks and stub), graded in a batch
    with the course's own; a bare folder name of another course is a one-line error (exit 2) that says how to name
    it; a Gradescope bundle of an assignment carries that assignment's exercises only."""
    root = tmp_path / "mixed"
    assert grade_in(tmp_path, "new", "hw1_double", "--course", root).returncode == 0
    toml = root / "course.toml"
    toml.write_text('name = "mixed"\nexercises = ["hw1_double", "ex05_manual_backward"]\n')
    bare = grade_in(root, "list")
    assert bare.returncode == 2 and bare.stderr.count("\n") == 1 and "internal error" not in bare.stderr
    assert 'to use the built-in exercise, write "torch-katas:ex05" in exercises' in bare.stderr
    toml.write_text('name = "mixed"\nexercises = ["hw1_double", "torch-katas:ex05"]\n\n'
                    '[assignments.week2]\nexercises = ["ex05"]\n')
    listed = json.loads(grade_in(root, "list", "--json").stdout)
    assert [e["id"] for e in listed] == ["hw1_double", "ex05"]
    subs = tmp_path / "subs"
    for student, file in {"ann": ROOT / "solutions/ex05_manual_backward.py",
                          "bob": ROOT / "tests/mistakes/ex05_manual_backward/sign_flipped.py"}.items():
        (subs / student).mkdir(parents=True)
        shutil.copy(file, subs / student / "ex05.py")
    batch = grade_in(root, "batch", subs, "--out", tmp_path / "grades", "--workers", "2", "--json")
    assert batch.returncode == 0, batch.stderr
    scores = {r["student"]: r["score"] for r in map(json.loads, (tmp_path / "grades/results.jsonl").read_text()
                                                    .splitlines())}
    assert scores["ann"] == 10 and scores["bob"] < 10
    built = grade_in(root, "gradescope", "--assignment", "week2", "--out", tmp_path / "week2.zip")
    assert built.returncode == 0, built.stderr
    import zipfile

    names = zipfile.ZipFile(tmp_path / "week2.zip").namelist()
    assert "grader/checks/ex05_manual_backward.py" in names and "course/course.toml" in names
    assert not [n for n in names if "ex07" in n or "ex01" in n or "hw1_double" in n], names
