"""A semester with torch-katas, played through the real CLI on a tiny course: a release that is a working student
workspace with public checks, a Canvas batch with a late submission and two files for one exercise, a change of
points (scores recomputed, nothing regraded), a fixed check (regraded, and said so), a teacher's override with a
comment (in every output, kept after a rerun), the choice of a file, and the exports for Canvas and Moodle."""

import pytest
import csv
import json
import os
import subprocess
import sys
import time
from dataclasses import replace

from conftest import run_grade

from grader.judge.result import CheckResult, Result
from grader.text import Text

pytestmark = pytest.mark.slow

CHECKS = '''"""Checks of hw1_double."""

import torch

from grader.checking import check, expect_close, fail

SIZE = 5


def reference(x):
    return x * 2


@check("double(x) is twice x", points=2, visibility="public")
def test_values(submission, rng):
    x = torch.randn(SIZE, generator=rng)
    expect_close(submission.double(x), 2 * x, "double(x)")


@check("double(x) leaves x unchanged", points=1, depends="values")
def test_out_of_place(submission, rng):
    x = torch.randn(SIZE, generator=rng)
    _, (after,) = submission.call_with_args("double", x)
    if not torch.equal(after, x) or not torch.equal(reference(after), 2 * x):
        fail("double changed x in place: return a new tensor.", "double 原地修改了 x：请返回新的 tensor。")
'''
STUB = "import torch\n\n\ndef double(x):\n    # TODO\n    raise NotImplementedError\n"
SOLUTION = "import torch\n\n\ndef double(x):\n    return 2 * x\n"
IN_PLACE = "import torch\n\n\ndef double(x):\n    return x.mul_(2)\n"
WRONG = "import torch\n\n\ndef double(x):\n    return 3 * x\n"


def make_course(root):
    for folder in ("exercises/hw1_double", "solutions", "checks", "mistakes/hw1_double"):
        (root / folder).mkdir(parents=True)
    (root / "course.toml").write_text('name = "sem"\nexercises = ["hw1_double"]\n\n[points]\n')
    (root / "exercises/hw1_double/exercise.toml").write_text(
        'title = "Double"\npoints = 3\ntime_limit = 10\nhints = ["Multiply by 2.", "Return 2 * x."]\n')
    (root / "exercises/hw1_double/README.md").write_text("# Double\n\nWrite `double(x)`: twice x, a new tensor.\n")
    (root / "exercises/hw1_double/hw1_double.py").write_text(STUB)
    (root / "solutions/hw1_double.py").write_text(SOLUTION)
    (root / "checks/hw1_double.py").write_text(CHECKS)
    (root / "mistakes/hw1_double/triples.py").write_text("# Expect: double(x)\n" + WRONG)


def canvas_download(folder):
    """Canvas's 'Download Submissions': name[_LATE]_userid_submissionid_original; cai sent two files."""
    folder.mkdir()
    files = {"ana_LATE_101_9001_hw1_double.py": SOLUTION, "ben_102_9002_hw1_double.py": IN_PLACE,
             "cai_103_9003_hw1_double.py": WRONG, "cai_103_9004_hw1_double_final.py": SOLUTION,
             "dan_105_9005_hw1_double.py": WRONG}
    for n, (name, text) in enumerate(files.items()):
        (folder / name).write_text(text)
        os.utime(folder / name, (time.time() - 100 + n, time.time() - 100 + n))  # cai's final one is the latest


def table(out):
    return {r["student"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}


def test_a_semester(tmp_path):
    course = tmp_path / "sem"
    make_course(course)

    # the release is a student workspace: list, hint, grade with the public checks, init
    release = tmp_path / "release"
    assert run_grade("release", "--out", release, "--notebooks", cwd=course).returncode == 0
    shipped = (release / "course" / "checks" / "hw1_double.py").read_text()
    assert "test_values" in shipped and "test_out_of_place" not in shipped and "reference" not in shipped
    assert "fail" not in shipped.split('"""')[-1]  # what only the hidden check used is left out too
    assert "hw1_double" in run_grade("list", cwd=release).stdout
    assert "Multiply by 2." in run_grade("hint", "hw1", cwd=release).stdout
    shown = run_grade("show", "hw1", cwd=release).stdout
    assert "hidden checks run when your teacher grades (their points: 1)" in shown
    stub = run_grade("hw1", cwd=release)
    assert stub.returncode == 1 and "hidden checks run when your teacher grades (their points: 1)" in stub.stdout
    assert run_grade("init", tmp_path / "ws", cwd=release).returncode == 0
    assert (tmp_path / "ws/exercises/hw1_double/hw1_double.py").read_text() == STUB
    assert run_grade("--course", release, "init", tmp_path / "ws2").returncode == 0
    assert "hw1_double" in run_grade("list", cwd=tmp_path / "ws2").stdout
    notebook_check = ("import json; from grader import check; r = check('hw1', cells=[open('answer.py').read()]); "
                      "print(json.dumps([r.result.score, r.result.max_score, r.result.hidden_points]))")
    (release / "notebooks/answer.py").write_text(SOLUTION)  # the cells a notebook ran, as check() reads them
    ran = subprocess.run([sys.executable, "-c", notebook_check], cwd=release / "notebooks", capture_output=True,
                         text=True)
    assert json.loads(ran.stdout) == [2, 2, 1], ran.stderr  # check() in a released notebook: the public checks

    # a Canvas batch with a roster: ana late, ben loses the check that builds on the one he passes, cai needs a look
    subs = tmp_path / "canvas"
    canvas_download(subs)
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS Login ID,Email\nAna,101,ana,ana@uni.edu\nBen,102,ben,ben@uni.edu\n"
                      "Cai,103,cai,cai@uni.edu\nDee,104,dee,dee@uni.edu\nDan,105,dan,dan@uni.edu\n")
    out = tmp_path / "grades"
    first = run_grade("batch", subs, "--out", out, "--roster", roster, "--workers", "2", cwd=course)
    assert first.returncode == 0, first.stderr
    rows = table(out)
    assert rows["ana_101"]["hw1_double"] == "3" and "hw1_double: late" in rows["ana_101"]["late"]
    assert rows["ana_101"]["submitted"]
    assert rows["ben_102"]["hw1_double"] == "2"  # twice x, but x changed in place
    assert rows["dan_105"]["hw1_double"] == "0"  # x unchanged, but that check builds on the values dan got wrong
    assert rows["cai_103"]["hw1_double"] == "" and rows["cai_103"]["hw1_double_status"] == "needs a look"
    assert "no files submitted" in rows["104"]["problems"]  # Dee submitted nothing, as a folder would say
    kept = json.loads((out / "results.jsonl").read_text().splitlines()[0])["submission"]
    assert os.path.exists(kept)

    # a change of points: recomputed from the stored outcomes, nothing regraded
    (course / "course.toml").write_text('name = "sem"\nexercises = ["hw1_double"]\n\n[points]\n'
                                        '"hw1_double.values" = 4\n')
    again = run_grade("batch", subs, "--out", out, "--roster", roster, "--json", cwd=course)
    summary = json.loads(again.stdout)
    assert summary["graded"] == 0 and summary["skipped"] == 3
    assert table(out)["ana_101"]["hw1_double"] == "5" and table(out)["ana_101"]["max_total"] == "5"

    # a fixed check: regraded, and said so
    checks = course / "checks" / "hw1_double.py"
    checks.write_text(checks.read_text().replace("SIZE = 5", "SIZE = 6"))
    fixed = run_grade("batch", subs, "--out", out, "--roster", roster, cwd=course)
    assert "3 regraded: hw1_double's checks changed" in fixed.stdout and "2 already graded" not in fixed.stdout

    # the teacher overrides ben's score with a comment: every output, kept after a rerun
    reviewed = run_grade("review", out, "ben_102", "hw1", "--score", "2.5", "--comment", "In place: see me.",
                         "--by", "Prof. Li", cwd=course)
    assert reviewed.returncode == 0, reviewed.stderr
    unknown = run_grade("review", out, "bne_102", "hw1", "--score", "1", cwd=course)
    assert unknown.returncode == 2 and "no student bne_102" in unknown.stderr
    run_grade("batch", subs, "--out", out, "--roster", roster, cwd=course)
    assert table(out)["ben_102"]["hw1_double"] == "2.5"
    assert "In place: see me. (Prof. Li" in table(out)["ben_102"]["review"]
    for page in ("feedback/ben_102.md", "feedback/ben_102.html", "index.html", "gradebook.json"):
        assert "In place: see me." in (out / page).read_text(encoding="utf-8"), page
    assert "Total: 2.5/5" in (out / "feedback/ben_102.html").read_text()
    assert "Ben" in (out / "feedback/ben_102.md").read_text()

    # the exports: cai left blank and listed; the LMS's identities
    canvas = run_grade("export", out, "--format", "canvas", cwd=course)
    assert "cai_103 hw1_double needs a look" in canvas.stderr
    lines = list(csv.reader((out / "canvas.csv").open()))
    assert ["Cai", "103", "", "cai", "", ""] in lines and ["Ben", "102", "", "ben", "", "2.5"] in lines
    moodle = run_grade("export", out, "--format", "moodle", cwd=course)
    assert moodle.returncode == 0
    rows = {r[0]: r for r in csv.reader((out / "moodle.csv").open())}
    assert rows["ben@uni.edu"][1] == "2.5" and "score set to 2.5; In place: see me." in rows["ben@uni.edu"][2]
    assert rows["cai@uni.edu"] == ["cai@uni.edu", "", ""] and rows["dee@uni.edu"] == ["dee@uni.edu", "", ""]

    # the teacher chooses cai's latest file: graded
    picked = run_grade("batch", subs, "--out", out, "--roster", roster, "--pick", "latest", "--json", cwd=course)
    assert json.loads(picked.stdout)["full"] == 1 and table(out)["cai_103"]["hw1_double"] == "5"


def test_a_due_date_and_late_policy_apply_and_show():
    from grader.teacher.late import apply_late

    policy = {"due": "2026-03-01T23:59:00+00:00", "penalty": 0.1, "accept_days": 3}
    result = Result(exercise="hw1", name="hw1", submission="", status="graded", score=10.0, max_score=10.0,
                    submitted="2026-03-03T08:00:00+00:00")
    late = apply_late(result, policy)
    assert late is not None and late.score == 8 and late.late_work and late.late_work["days"] == 2
    assert apply_late(replace(result, submitted="2026-03-01T20:00:00+00:00"), policy).score == 10
    assert apply_late(replace(result, submitted="2026-03-09T08:00:00+00:00"), policy).score == 0  # past accept_days
    flagged = apply_late(replace(result, submitted=None, late=True), {})
    assert flagged.late_work == {"late": True}  # the LMS's flag: shown, no penalty


def test_a_review_overrides_a_check_and_reads_back(tmp_path):
    from grader.teacher.review import add_review, apply_review, read_reviews

    add_review(tmp_path, "ana", "hw1_double", by="Prof. Li", checks={"values": "passed"}, comment='said "ok"')
    add_review(tmp_path, "ana", "hw1_double", by="Prof. Li", comment="second thought")
    review = read_reviews(tmp_path)[("ana", "hw1_double")]
    assert review["checks"] == {"values": "passed"} and review["comment"] == "second thought" and review["at"]
    result = Result(exercise="hw1_double", name="hw1_double", submission="", status="graded", score=0.0,
                    max_score=3.0, checks=[CheckResult(id="values", title=Text("values", "values"), outcome="failed",
                                                       points=0.0, max_points=2.0)])

    class Ex:
        id, name, points, title, zh = "hw1_double", "hw1_double", 3.0, "Double", {}

    reviewed = apply_review(result, review, Ex)
    assert reviewed is not None and reviewed.score == 2 and reviewed.checks[0].reviewed
    assert reviewed.review and reviewed.review["by"] == "Prof. Li"
    assert reviewed.to_json()["checks"][0]["reviewed"] is True


def test_validate_refuses_points_an_empty_file_earns(tmp_path):
    course = tmp_path / "sem"
    make_course(course)
    checks = course / "checks" / "hw1_double.py"
    vacuous = CHECKS.replace(', depends="values"', "").replace(  # "x unchanged" passes when there is no double
        '    _, (after,) = submission.call_with_args("double", x)\n',
        '    try:\n        _, (after,) = submission.call_with_args("double", x)\n'
        '    except LearnerError:\n        return\n')
    checks.write_text(vacuous.replace("import check,", "import LearnerError, check,"))
    refused = run_grade("validate", "hw1", cwd=course)
    assert refused.returncode == 1 and "empty.py earns points from double(x) leaves x unchanged" in refused.stdout, \
        refused.stdout
    assert "ok   solution" in refused.stdout and "ok   stub" in refused.stdout  # the rest of the exercise is sound


def test_gradescope_shows_each_check_as_its_visibility_says():
    from grader.teacher.gradescope import to_gradescope

    checks = [CheckResult(id=v, title=Text(v, v), outcome="passed", points=1.0, max_points=1.0, visibility=v)
              for v in ("public", "hidden", "after_due_date")]
    report = to_gradescope([Result(exercise="hw1", name="hw1", submission="", status="graded", score=3.0,
                                   max_score=3.0, checks=checks)], [])
    assert [t["visibility"] for t in report["tests"]] == ["visible", "after_published", "after_due_date"]
