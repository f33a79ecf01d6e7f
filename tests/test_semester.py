"""A semester with torch-katas, played through the real CLI on a tiny course: a release that is a working student
workspace with public checks, a Canvas batch with a late submission and two files for one exercise, a change of
points (scores recomputed, nothing regraded), a fixed check (regraded, and said so), a teacher's override with a
comment (in every output, kept after a rerun), the choice of a file, and the exports for Canvas and Moodle."""

import csv
import json
import os
import subprocess
import sys
import time
import zipfile

import pytest

from conftest import ROOT, grade_here, run_grade

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
    assert grade_here("release", "--out", release, "--notebooks", cwd=course).returncode == 0
    shipped = (release / "course" / "checks" / "hw1_double.py").read_text()
    assert "test_values" in shipped and "test_out_of_place" not in shipped and "reference" not in shipped
    assert "fail" not in shipped.split('"""')[-1]  # what only the hidden check used is left out too
    assert "hw1_double" in grade_here("list", cwd=release).stdout
    assert "Multiply by 2." in grade_here("hint", "hw1", cwd=release).stdout
    shown = grade_here("show", "hw1", cwd=release).stdout
    assert "hidden checks run when your teacher grades (their points: 1)" in shown
    stub = grade_here("hw1", cwd=release)
    assert stub.returncode == 1 and "Public checks: 0/2; the hidden checks (points: 1) are graded by" in stub.stdout
    assert grade_here("init", tmp_path / "ws", cwd=release).returncode == 0
    assert (tmp_path / "ws/exercises/hw1_double/hw1_double.py").read_text() == STUB
    assert grade_here("--course", release, "init", tmp_path / "ws2").returncode == 0
    assert "hw1_double" in grade_here("list", cwd=tmp_path / "ws2").stdout
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
    first = run_grade("batch", subs, "--out", out, "--roster", roster, "--workers", "2", "--collected-at",
                      "2026-03-02T10:00:00+08:00", cwd=course)
    assert first.returncode == 0, first.stderr
    rows = table(out)
    assert rows["ana_101"]["hw1_double"] == "3" and "hw1_double: late" in rows["ana_101"]["late"]
    assert rows["ana_101"]["submitted"] == "hw1_double: 2026-03-02T10:00:00+08:00"
    assert rows["ben_102"]["hw1_double"] == "2"  # twice x, but x changed in place
    assert rows["dan_105"]["hw1_double"] == "0"  # x unchanged, but that check builds on the values dan got wrong
    assert rows["cai_103"]["hw1_double"] == "" and rows["cai_103"]["hw1_double_status"] == "needs a look"
    assert "no files submitted" in rows["dee_104"]["problems"]  # Dee submitted nothing: named as Canvas names them
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

    # a message and a title reworded: only the results whose feedback quotes a message are graded again
    checks.write_text(checks.read_text().replace("return a new tensor.", "return a new tensor instead.")
                      .replace("double(x) leaves x unchanged", "double(x) leaves its input unchanged"))
    reworded = run_grade("batch", subs, "--out", out, "--roster", roster, cwd=course)
    assert "2 regraded: hw1_double's messages changed, which their feedback quotes" in reworded.stdout, reworded.stdout
    assert "1 already graded" in reworded.stdout  # ana passed every check: her outcomes stand
    assert "return a new tensor instead." in (out / "feedback/ben_102.md").read_text()
    assert "double(x) leaves its input unchanged" in (out / "feedback/ana_101.md").read_text()  # titles: read again

    # the teacher overrides ben's score with a comment: every output, kept after a rerun
    reviewed = grade_here("review", out, "ben_102", "hw1", "--score", "2.5", "--comment", "In place: see me.",
                         "--by", "Prof. Li", cwd=course)
    assert reviewed.returncode == 0, reviewed.stderr
    unknown = grade_here("review", out, "bne_102", "hw1", "--score", "1", cwd=course)
    assert unknown.returncode == 2 and "no student bne_102" in unknown.stderr
    run_grade("batch", subs, "--out", out, "--roster", roster, cwd=course)
    assert table(out)["ben_102"]["hw1_double"] == "2.5"
    assert "In place: see me. (Prof. Li" in table(out)["ben_102"]["review"]
    for page in ("feedback/ben_102.md", "feedback/ben_102.html", "index.html", "gradebook.json"):
        assert "In place: see me." in (out / page).read_text(encoding="utf-8"), page
    assert "Total: 2.5/5" in (out / "feedback/ben_102.html").read_text()
    assert "Ben" in (out / "feedback/ben_102.md").read_text()

    # the exports: cai left blank and listed; the LMS's identities
    canvas = grade_here("export", out, "--format", "canvas", cwd=course)
    assert "cai_103 hw1_double needs a look" in canvas.stderr
    lines = list(csv.reader((out / "canvas.csv").open()))
    assert ["Cai", "103", "", "cai", "", ""] in lines and ["Ben", "102", "", "ben", "", "2.5"] in lines
    moodle = grade_here("export", out, "--format", "moodle", cwd=course)
    assert moodle.returncode == 0
    rows = {r[0]: r for r in csv.reader((out / "moodle.csv").open())}
    assert rows["ben@uni.edu"][1] == "2.5" and "score set to 2.5; In place: see me." in rows["ben@uni.edu"][2]
    assert rows["cai@uni.edu"] == ["cai@uni.edu", "", ""] and rows["dee@uni.edu"] == ["dee@uni.edu", "", ""]

    # the teacher chooses cai's latest file: graded
    picked = run_grade("batch", subs, "--out", out, "--roster", roster, "--pick", "latest", "--json", cwd=course)
    assert json.loads(picked.stdout)["full"] == 1 and table(out)["cai_103"]["hw1_double"] == "5"


HIDDEN_ONLY = CHECKS.replace(', visibility="public"', "").replace("double", "halve").replace("2 * x", "x / 2") \
    .replace("x * 2", "x / 2").replace(', depends="values"', "")


def test_a_release_never_says_done_before_the_teacher_grades(tmp_path):
    """A release's `grade`, check() and `grade list` tell the public checks from the teacher's grading: "public checks
    pass; N points of hidden checks are graded by your teacher", never "done" or "all checks pass"; an exercise with
    no public check says so, exits 1 and is never counted done."""
    course = tmp_path / "sem"
    make_course(course)
    (course / "exercises/hw2_halve").mkdir()
    (course / "exercises/hw2_halve/exercise.toml").write_text('title = "Halve"\npoints = 3\nhints = ["x / 2"]\n')
    (course / "exercises/hw2_halve/README.md").write_text("# Halve\n")
    (course / "exercises/hw2_halve/hw2_halve.py").write_text(STUB.replace("double", "halve"))
    (course / "checks/hw2_halve.py").write_text(HIDDEN_ONLY)
    (course / "course.toml").write_text('name = "sem"\nexercises = ["hw1_double", "hw2_halve"]\n')
    release = tmp_path / "release"
    assert grade_here("release", "--out", release, "--notebooks", cwd=course).returncode == 0
    assert "Never solutions, checks" not in grade_here("release", "--help").stdout
    assert "the checks marked public" in grade_here("release", "--help").stdout

    untouched = grade_here("hw2", cwd=release)  # nothing public: nothing passes, nothing is done
    assert untouched.returncode == 1, untouched.stdout
    assert "No public check: nothing is checked here; the hidden checks (points: 3) are graded by your teacher." \
        in untouched.stdout and "all checks pass" not in untouched.stdout and "Score: 0/0" not in untouched.stdout
    (release / "exercises/hw1_double/hw1_double.py").write_text(IN_PLACE)  # passes the public check, not the hidden
    public = grade_here("hw1", cwd=release)
    assert public.returncode == 0, public.stdout
    assert "Next: public checks pass; the hidden checks (points: 1) are graded by your teacher." in public.stdout
    assert "all checks pass" not in public.stdout
    listed = grade_here("list", cwd=release).stdout
    assert "0/2 done, 1 with their public checks passing" in listed, listed
    assert "public checks pass hw1_double" in listed and "no public check    hw2_halve" in listed, listed
    assert "the hidden checks (points: 4) are graded by your teacher, so an exercise here is done only then" in listed
    assert "Every exercise's public checks pass (or it has none)" in grade_here("next", cwd=release).stdout
    states = {e["id"]: e["state"] for e in json.loads(grade_here("list", "--json", cwd=release).stdout)}
    assert states == {"hw1_double": "public checks pass", "hw2_halve": "no public check"}

    notebook_check = ("from grader import check; print(repr(check('hw1', cells=[open('answer.py').read()])))")
    (release / "notebooks/answer.py").write_text(SOLUTION)
    ran = subprocess.run([sys.executable, "-c", notebook_check], cwd=release / "notebooks", capture_output=True,
                         text=True)
    assert "Public checks: 2/2; the hidden checks (points: 1) are graded by your teacher." in ran.stdout, ran.stderr
    assert "all checks pass" not in ran.stdout


SEED_PARITY = "import torch\n\n\ndef double(x):\n    return (2 if torch.initial_seed() % 2 == 0 else 3) * x\n"


def seeds_of(out) -> dict:
    return {r["student"]: r["seed"] for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


def test_equal_code_earns_an_equal_score_in_a_class(tmp_path):
    """One seed per exercise per batch, recorded and reused by reruns; `--seed` overrides it; the class page flags a
    check whose outcome differs between students with the same code (here: code right on even seeds only)."""
    course = tmp_path / "sem"
    make_course(course)
    subs, out = tmp_path / "subs", tmp_path / "grades"
    for student, text in {"ana": SEED_PARITY, "ben": "# mine\n" + SEED_PARITY.replace(" * x", " * x  # twice")}.items():
        (subs / student).mkdir(parents=True)
        (subs / student / "hw1_double.py").write_text(text)
    assert run_grade("batch", subs, "--out", out, "--workers", "2", cwd=course).returncode == 0
    seed = json.loads((out / "batch.json").read_text())["seeds"]["hw1_double"]
    assert seeds_of(out) == {"ana": seed, "ben": seed}
    assert table(out)["ana"]["hw1_double"] == table(out)["ben"]["hw1_double"]
    book = json.loads((out / "gradebook.json").read_text())
    assert book["seeds"] == {"hw1_double": [seed]} and book["differing"] == []

    (subs / "ana" / "hw1_double.py").write_text(SEED_PARITY + "# resubmitted\n")  # regraded with the batch's seed
    assert run_grade("batch", subs, "--out", out, cwd=course).returncode == 0
    assert seeds_of(out) == {"ana": seed, "ben": seed}

    (subs / "cai").mkdir()
    (subs / "cai" / "hw1_double.py").write_text(SEED_PARITY)
    other = seed + 1  # the other parity: cai's verdict differs from ana's and ben's for the same code
    assert run_grade("batch", subs, "--out", out, "--seed", other, cwd=course).returncode == 0
    assert seeds_of(out) == {"ana": seed, "ben": seed, "cai": other}
    book = json.loads((out / "gradebook.json").read_text())
    assert book["seeds"] == {"hw1_double": sorted([seed, other])}
    assert [(d["check"], sorted(d["outcomes"].values())) for d in book["differing"]] == [
        ("values", [["ana", "ben"], ["cai"]])], book["differing"]
    page = (out / "index.html").read_text()
    assert f"hw1_double was graded with 2 seeds ({min(seed, other)}, {max(seed, other)})" in page
    assert "Checks whose outcome differs between students who handed in the same code" in page


def test_validate_warns_of_a_verdict_that_changes_with_the_seed_and_reads_the_keys_file(tmp_path):
    course = tmp_path / "sem"
    make_course(course)
    (course / "variants/hw1_double").mkdir(parents=True)
    (course / "variants/hw1_double/parity.py").write_text(SEED_PARITY)
    (course / "checks/hw1_double.keys.toml").write_text('in-place = ["x changed in place"]\n')
    proc = run_grade("validate", "hw1", "--seeds", "2", cwd=course)
    assert 'hw1_double.keys.toml: in-place = ["x changed in place"]: a description is ["English", "中文"]' \
        in proc.stdout, proc.stdout
    assert "warning: hw1_double: the check values on parity.py changes its verdict with the seed (failed with seed " \
           "1; passed with seed 0)" in proc.stdout, proc.stdout
    assert proc.stdout.count("warning:") == 1  # the solution, the stub and the mistake: the same on both seeds


def page_problems(out) -> int:
    import re

    return int(re.search(r"Problems \((\d+)\)", (out / "index.html").read_text()).group(1))


def test_every_problem_is_in_one_list_counted_the_same_everywhere(tmp_path):
    """A broken notebook, a file that matches nothing, a student with no files: each in problems.json, the page's
    list, the problems column and the summary's count alike; the roster's student named as the download names the
    others; work nobody handed in has a blank total, never 0."""
    course = tmp_path / "sem"
    make_course(course)
    subs = tmp_path / "canvas"
    subs.mkdir()
    (subs / "ana_101_9001_hw1_double.py").write_text(SOLUTION)
    (subs / "ben_102_9002_hw1_double.ipynb").write_text('{"cells": "not a list"}')  # broken
    (subs / "cai_103_9003_notes.txt").write_text("my notes")
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,Email\nAna,101,ana@uni.edu\nBen,102,ben@uni.edu\nCai,103,cai@uni.edu\n"
                      "\"Doe, Jane\",1008,jane@uni.edu\n")
    out = tmp_path / "grades"
    proc = run_grade("batch", subs, "--out", out, "--roster", roster, "--json", cwd=course)
    assert proc.returncode == 0, proc.stderr
    listed = json.loads((out / "problems.json").read_text())
    rows = table(out)
    in_rows = sum(len(r["problems"].split(" | ")) for r in rows.values() if r["problems"])
    assert json.loads(proc.stdout)["problems"] == len(listed) == page_problems(out) == in_rows == 3, listed
    assert any(p["student"] == "ben_102" and "hw1_double" in p["message"] for p in listed)  # the broken notebook
    assert rows["ben_102"]["hw1_double_status"] == "needs a look" and "cannot be read" in rows["ben_102"]["problems"]
    assert sorted(rows) == ["ana_101", "ben_102", "cai_103", "doejane_1008"]  # named as Canvas names the others
    assert rows["doejane_1008"]["total"] == "" and rows["cai_103"]["total"] == "" and rows["ana_101"]["total"] == "3"
    assert "Total: –/3" in (out / "feedback" / "doejane_1008.md").read_text()


def test_reviews_stay_true(tmp_path):
    """A check passed by review releases the checks that build on it; a review of a file since replaced is stale on
    the page and in the CSV (not in the student's feedback) until confirmed; a final score has no late penalty
    beside it; the reviewer is named by the course, never by the login."""
    course = tmp_path / "sem"
    make_course(course)
    (course / "course.toml").write_text('name = "sem"\nexercises = ["hw1_double"]\nreviewer = "Prof. Li"\n\n'
                                        '[late]\ndue = 2026-01-10T00:00:00+00:00\npenalty = 0.1\n')
    subs, out = tmp_path / "subs", tmp_path / "grades"
    for student, text in {"ana": SOLUTION, "dan": WRONG}.items():
        (subs / student).mkdir(parents=True)
        (subs / student / "hw1_double.py").write_text(text)
    roster = tmp_path / "roster.csv"  # the LMS's record: ana 2.5 days after the due date (3 started days)
    roster.write_text("folder,id,submitted\nana,1,2026-01-12T12:00:00+00:00\ndan,2,2026-01-09T12:00:00+00:00\n")
    env = {k: v for k, v in os.environ.items() if k != "TORCH_KATAS_REVIEWER"}
    assert run_grade("batch", subs, "--out", out, "--roster", roster, cwd=course).returncode == 0
    assert table(out)["dan"]["hw1_double"] == "0" and "late 3 days (-30%)" in table(out)["ana"]["late"]

    assert grade_here("review", out, "dan", "hw1", "--check", "values=passed", cwd=course, env=env).returncode == 0
    assert table(out)["dan"]["hw1_double"] == "3"  # "x unchanged" passed on its own: released with "values"
    feedback = (out / "feedback" / "dan.md").read_text()
    dan = next(r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines()) if r["student"] == "dan")
    failed = [c["message"] for c in dan["checks"]]
    assert "Passed, by your teacher’s review." in feedback and "above does not pass" not in feedback
    assert failed[0] and failed[0] not in feedback  # no ✓ beside the old failure text
    assert 'by = "Prof. Li"' in (out / "review.toml").read_text()

    scored = grade_here("review", out, "ana", "hw1", "--score", "2", "--comment", "ok", cwd=course, env=env)
    assert scored.returncode == 0, scored.stderr
    ana = table(out)["ana"]
    assert ana["hw1_double"] == "2" and "(the teacher’s score is final)" in ana["late"] and "-30%" not in ana["late"]
    (subs / "ana" / "hw1_double.py").write_text(SOLUTION + "# resubmitted\n")
    assert run_grade("batch", subs, "--out", out, cwd=course).returncode == 0
    assert "stale: the file changed after this review" in table(out)["ana"]["review"]
    assert "stale review" in (out / "index.html").read_text()
    assert "stale" not in (out / "feedback" / "ana.md").read_text()  # the student reads the review, not our note
    assert grade_here("review", out, "ana", "hw1", "--confirm", cwd=course, env=env).returncode == 0
    assert "stale" not in table(out)["ana"]["review"] and table(out)["ana"]["hw1_double"] == "2"


def test_extensions_and_excused_work_in_the_late_policy(tmp_path):
    """[late]'s extensions (days, or a due date of one's own) and excused students, from course.toml and from a
    roster's columns: no penalty within the extension, excused missing work out of the total."""
    course = tmp_path / "sem"
    make_course(course)
    (course / "course.toml").write_text(
        'name = "sem"\nexercises = ["hw1_double"]\n\n[late]\ndue = 2026-01-10T00:00:00+00:00\npenalty = 0.1\n'
        'excused = ["eve"]\n\n[late.extensions]\nben = 3\n')
    subs, out = tmp_path / "subs", tmp_path / "grades"
    for student in ("ana", "ben", "cai"):
        (subs / student).mkdir(parents=True)
        (subs / student / "hw1_double.py").write_text(SOLUTION)
    (subs / "eve").mkdir()
    roster = tmp_path / "roster.csv"
    roster.write_text("folder,id,extension,excused\nana,1,,\nben,2,,\ncai,3,2026-01-13T23:59:00Z,\neve,4,,\n"
                      "flo,5,,yes\n")
    assert run_grade("batch", subs, "--out", out, "--roster", roster, "--collected-at", "2026-01-12T12:00:00+00:00",
                     cwd=course).returncode == 0
    rows = table(out)
    assert rows["ana"]["hw1_double"] == "2.1" and "late 3 days (-30%)" in rows["ana"]["late"]
    assert rows["ben"]["hw1_double"] == "3"  # within his 3 more days: the late column shows them
    assert rows["ben"]["late"] == "hw1_double: on time (extended to 2026-01-13T00:00:00+00:00)"
    assert rows["cai"]["hw1_double"] == "3"  # the roster's own due date
    assert rows["cai"]["late"] == "hw1_double: on time (extended to 2026-01-13T23:59:00+00:00)"
    for student in ("eve", "flo"):  # excused: missing work counts neither way
        assert rows[student]["hw1_double_status"] == "excused" and rows[student]["max_total"] == "0"
        assert rows[student]["total"] == ""


LATE_TABLE = '\n[late]\ndue = 2026-03-01T23:59:00+08:00\npenalty = 0.1\n\n[late.extensions]\ncai_103 = 2\n'


def zip_of(path, members: dict, when: tuple):
    """A zip whose members carry `when` (a zoneless date and time, as every zip's do)."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=when), text)


def test_canvas_decides_lateness_in_any_time_zone_and_says_where_our_due_date_disagrees(tmp_path):
    """A Canvas download-all zip (its members' times zoneless, on time in +08:00) graded under TZ=UTC against a +08:00
    due date, then against the same instant written in UTC under TZ=Asia/Shanghai: Canvas's `_LATE` decides, the
    collection time says how late, an extension shows in the late column, and the roster's record of a time that
    Canvas contradicts is a problem for that student in grades.csv, the class page and the batch's stderr."""
    course = tmp_path / "sem"
    make_course(course)
    (course / "course.toml").write_text('name = "sem"\nexercises = ["hw1_double"]\n' + LATE_TABLE)
    download = tmp_path / "submissions.zip"
    zip_of(download, {"ana_LATE_101_9001_hw1_double.py": SOLUTION, "ben_102_9002_hw1_double.py": SOLUTION,
                      "cai_LATE_103_9003_hw1_double.py": SOLUTION, "dee_LATE_104_9004_hw1_double.py": SOLUTION,
                      "eve_105_9005_hw1_double.py": SOLUTION}, (2026, 3, 1, 22, 0, 0))
    roster = tmp_path / "roster.csv"  # the LMS's record of ana's and ben's times, which Canvas's marks contradict
    roster.write_text("Student,ID,Email,Submitted\nAna,101,ana@uni.edu,2026-03-01T20:00:00+08:00\n"
                      "Ben,102,ben@uni.edu,2026-03-02T09:00:00+08:00\nCai,103,cai@uni.edu,\nDee,104,dee@uni.edu,\n"
                      "Eve,105,eve@uni.edu,\n")
    out = tmp_path / "grades"
    utc = run_grade("batch", download, "--out", out, "--roster", roster, "--workers", "2", "--collected-at",
                    "2026-03-02T10:00:00+08:00", cwd=course, env={**os.environ, "TZ": "UTC"})
    assert utc.returncode == 0, utc.stderr
    rows = table(out)
    assert rows["dee_104"]["hw1_double"] == "2.7" and rows["dee_104"]["late"] == "hw1_double: late 1 day (-10%)"
    assert rows["eve_105"]["hw1_double"] == "3" and rows["eve_105"]["late"] == ""  # on time by Canvas: collected later
    assert rows["cai_103"]["hw1_double"] == "3"  # Canvas's mark is of its due date; within his extension
    assert rows["cai_103"]["late"] == "hw1_double: on time (extended to 2026-03-03T23:59:00+08:00)"
    assert rows["ana_101"]["hw1_double"] == "3" and rows["ana_101"]["late"] == "hw1_double: late"
    said = {"ana_101": "hw1_double: Canvas marks it late, but it was submitted 2026-03-01T20:00:00+08:00, before the "
                       "due date 2026-03-01T23:59:00+08:00: no penalty taken (are the due dates the same?)",
            "ben_102": "hw1_double: Canvas says on time, but it was submitted 2026-03-02T09:00:00+08:00, after the due "
                       "date 2026-03-01T23:59:00+08:00: no penalty taken"}
    assert rows["ben_102"]["hw1_double"] == "3" and rows["ben_102"]["late"] == ""
    page = (out / "index.html").read_text()
    for student, line in said.items():
        assert line in rows[student]["problems"] and line in page
        assert f"warning: {student} {line}" in utc.stderr, utc.stderr
    assert utc.stderr.count("warning: ") == 2, utc.stderr

    (course / "course.toml").write_text(  # the same instant, written in UTC, graded where the clock is +08:00
        'name = "sem"\nexercises = ["hw1_double"]\n' + LATE_TABLE.replace("2026-03-01T23:59:00+08:00",
                                                                         "2026-03-01T15:59:00Z"))
    shanghai = run_grade("batch", download, "--out", out, "--json", cwd=course, env={**os.environ,
                                                                                     "TZ": "Asia/Shanghai"})
    assert shanghai.returncode == 0, shanghai.stderr
    assert json.loads(shanghai.stdout)["changed"] == [] and shanghai.stderr.count("warning: ") == 2
    again = table(out)
    assert {s: (r["hw1_double"], r["late"]) for s, r in again.items()} == {
        s: (r["hw1_double"], r["late"].replace("2026-03-03T23:59:00+08:00", "2026-03-03T15:59:00+00:00"))
        for s, r in rows.items()}


MOODLE = "{name}_{id}_assignsubmission_file_"


def test_moodle_times_are_the_worksheets_and_never_the_students(tmp_path):
    """A Moodle download with its grading worksheet as the roster: a due date without a zone is refused until the
    course declares one; the worksheet's "Last modified (submission)" decides; a zip backdated to 2025 inside a
    student's folder is late by the collection time; an extension naming nobody is refused with the closest name;
    a rerun lists whose scores changed; the grades folder finds its course from anywhere."""
    course = tmp_path / "sem"
    make_course(course)
    toml = 'name = "sem"\nexercises = ["hw1_double"]\n\n[late]\ndue = 2026-03-01T23:59:00\npenalty = 0.1\n'
    (course / "course.toml").write_text(toml)
    subs = tmp_path / "moodle"
    for name, pid in (("Ito Ika", 1234567), ("Jo Lin", 1234568)):
        (subs / MOODLE.format(name=name, id=pid)).mkdir(parents=True)
        (subs / MOODLE.format(name=name, id=pid) / "hw1_double.py").write_text(SOLUTION)
    (subs / MOODLE.format(name="Kim Wu", id=1234569)).mkdir()
    zip_of(subs / MOODLE.format(name="Kim Wu", id=1234569) / "work.zip", {"hw1_double.py": SOLUTION},
           (2025, 1, 1, 12, 0, 0))  # dated by the student, long before the due date
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text('Identifier,Full name,Email address,Status,Grade,Last modified (submission)\n'
                         '"Participant 1234567","Ito Ika",ito@uni.edu,Submitted,,"Sunday, 1 March 2026, 11:00 PM"\n'
                         '"Participant 1234568","Jo Lin",jo@uni.edu,Submitted,,"Monday, 2 March 2026, 1:30 AM"\n'
                         '"Participant 1234569","Kim Wu",kim@uni.edu,Submitted,,-\n')
    out = tmp_path / "grades"
    grade = ("batch", subs, "--out", out, "--roster", worksheet, "--workers", "2")
    naive = run_grade(*grade, cwd=course)
    assert naive.returncode == 2 and naive.stderr.count("\n") == 1, naive.stderr
    assert "late.due (2026-03-01T23:59:00) has no time zone" in naive.stderr
    no_zone = run_grade(*grade, "--collected-at", "2026-03-02T10:00", cwd=course)
    assert no_zone.returncode == 2 and "--collected-at 2026-03-02T10:00 has no time zone" in no_zone.stderr

    (course / "course.toml").write_text(toml + 'timezone = "Asia/Shanghai"\n\n[late.extensions]\n'
                                        '"Ito Iko_1234567" = 1\n')
    typo = run_grade(*grade, cwd=course)
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1, typo.stderr
    assert "course.toml: late.extensions names Ito Iko_1234567, who is not in this class (did you mean Ito " \
           "Ika_1234567?)" in typo.stderr and not (out / "results.jsonl").exists()  # nothing graded

    (course / "course.toml").write_text(toml + 'timezone = "Asia/Shanghai"\n')
    graded = run_grade(*grade, "--collected-at", "2026-03-02T10:00:00+08:00", cwd=course,
                       env={**os.environ, "TZ": "UTC"})
    assert graded.returncode == 0, graded.stderr
    rows = table(out)
    assert rows["Ito Ika_1234567"]["hw1_double"] == "3" and rows["Ito Ika_1234567"]["late"] == ""
    assert rows["Ito Ika_1234567"]["submitted"] == "hw1_double: 2026-03-01T23:00:00+08:00"
    assert rows["Jo Lin_1234568"]["hw1_double"] == "2.7" and "late 1 day (-10%)" in rows["Jo Lin_1234568"]["late"]
    assert rows["Kim Wu_1234569"]["hw1_double"] == "2.7" and "late 1 day (-10%)" in rows["Kim Wu_1234569"]["late"]
    assert rows["Kim Wu_1234569"]["submitted"] == "hw1_double: 2026-03-02T10:00:00+08:00"  # collected, not 2025

    (course / "course.toml").write_text(toml.replace("0.1", "0.2") + 'timezone = "Asia/Shanghai"\n')
    rerun = run_grade(*grade, cwd=course)  # nothing regraded; the collection time kept for the unchanged files
    assert rerun.returncode == 0, rerun.stderr
    assert "Jo Lin_1234568 hw1_double: score 2.7 -> 2.4" in rerun.stdout
    assert "Kim Wu_1234569 hw1_double: score 2.7 -> 2.4" in rerun.stdout and "Ito Ika" not in rerun.stdout

    elsewhere = tmp_path / "elsewhere"  # the grades folder knows its course: no --course needed
    elsewhere.mkdir()
    reviewed = grade_here("review", out, "Jo Lin_1234568", "hw1", "--score", "3", "--by", "T", cwd=elsewhere)
    assert reviewed.returncode == 0, reviewed.stderr
    assert table(out)["Jo Lin_1234568"]["hw1_double"] == "3"
    wrong = grade_here("--course", "torch-katas", "review", out, "Jo Lin_1234568", "hw1", "--score", "3",
                      cwd=elsewhere)
    assert wrong.returncode == 2 and "unknown exercise 'hw1_double'" in wrong.stderr  # --course still decides
    assert grade_here("export", out, "--format", "csv", cwd=elsewhere).returncode == 0


def test_an_assignment_names_exercises_as_the_course_list_does(tmp_path):
    """`[assignments.x] exercises` takes the `COURSE:EXERCISE` form of the course's own list."""
    course = tmp_path / "sem"
    make_course(course)
    (course / "course.toml").write_text('name = "sem"\nexercises = ["hw1_double", "torch-katas:ex01"]\n\n'
                                        '[assignments.week1]\nexercises = ["torch-katas:ex01", "hw1_double"]\n')
    from grader.course.exercises import UnknownExercise, load_course

    week1 = load_course(course).exercises("week1")
    assert [ex.id for ex in week1] == ["ex01", "hw1_double"]
    assert week1[0].folder.is_relative_to(ROOT) and week1[1].folder.is_relative_to(course)  # ex01: the built-in one
    (course / "course.toml").write_text('name = "sem"\nexercises = ["hw1_double"]\n\n'
                                        '[assignments.week1]\nexercises = ["torch-katas:ex01"]\n')
    with pytest.raises(UnknownExercise, match="the course's exercises list nothing of torch-katas"):
        load_course(course).exercises("week1")


def test_validate_names_a_missing_template_on_a_draw(tmp_path):
    """An exercise copied by hand without its solution's template: the other draw's failure says the template is
    missing, not only what the checks saw."""
    course = tmp_path / "sem"
    make_course(course)
    folder = course / "exercises/hw1_double"
    (folder / "exercise.toml").write_text((folder / "exercise.toml").read_text() + "".join(
        f'\n[[variants.factor]]\nname = "{n}"\nn = {n}\nlabel = "{n} times x"\nlabel_zh = "x 的 {n} 倍"\n'
        for n in (2, 3)))
    (folder / "hw1_double.py.tmpl").write_text(STUB.replace("# TODO", "# TODO: {{factor.n}} times x"))
    (folder / "hw1_double.py").write_text(STUB.replace("# TODO", "# TODO: 2 times x"))
    checks = course / "checks/hw1_double.py"
    checks.write_text(checks.read_text().replace("import check,", "import check, variant,")
                      .replace("expect_close(submission.double(x), 2 * x,", "expect_close(submission.double(x), "
                               "variant(\"factor\")[\"n\"] * x,"))
    proc = run_grade("validate", "hw1", cwd=course)
    assert proc.returncode == 1
    assert "hw1_double.py has no template hw1_double.py.tmpl: it is graded as written on this draw" in proc.stdout, \
        proc.stdout


def test_a_due_date_and_late_policy_apply_and_show():
    from grader.teacher.late import apply_late

    policy = {"due": "2026-03-01T23:59:00+00:00", "penalty": 0.1, "accept_days": 3}
    result = Result(exercise="hw1", name="hw1", submission="", status="graded", score=10.0, max_score=10.0)
    late = apply_late(result, policy, {"submitted": "2026-03-03T08:00:00+00:00", "by": "lms"})
    assert late is not None and late.score == 8 and late.late_work and late.late_work["days"] == 2
    assert late.submitted == "2026-03-03T08:00:00+00:00"
    assert apply_late(result, policy, {"submitted": "2026-03-01T20:00:00+00:00", "by": "lms"}).score == 10
    assert apply_late(result, policy, {"submitted": "2026-03-09T08:00:00+00:00", "by": "lms"}).score == 0  # past 3
    flagged = apply_late(result, {}, {"lms_late": True})
    assert flagged.late_work == {"late": True} and flagged.score == 10  # the LMS's flag: shown, no penalty
    assert apply_late(result, policy, {"lms_late": False, "submitted": "2026-03-03T08:00:00+00:00",
                                       "by": "collected"}).late_work is None  # collected later: Canvas said on time


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
