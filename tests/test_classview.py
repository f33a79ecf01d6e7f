"""The class view as a teacher meets it: every student and roster entry gets a row in natural order,
missing / error / grader error / a real 0 told apart, totals out of the assignment, misconceptions
counted, problems on the page, symbolic links never followed, LMS downloads read as they come, and a
rerun with nothing to grade that neither imports torch nor appends the same error again."""

import csv
import json
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, run_grade
from grader.teacher.collect import collect, collect_from
from grader.course.exercises import all_exercises, find_exercise
from grader.teacher.gradebook import build_gradebook, misconceptions
from grader.judge.result import CheckResult, Result
from grader.text import Text

EX05 = ROOT / "tests" / "mistakes" / "ex05_manual_backward"
SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"
STUB = find_exercise("ex05").stub
EX06 = ROOT / "solutions" / "ex06_manual_training_loop.py"


def put(folder, name, source):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(source.read_text() if hasattr(source, "read_text") else source)


def rows(out):
    return list(csv.DictReader((out / "grades.csv").open(encoding="utf-8")))


@pytest.fixture
def klass(tmp_path):
    """A class as it comes: good and bad students, an empty folder, misnamed files, a corrupt zip, a
    student who skipped ex05, and folder names that string order sorts wrongly."""
    subs = tmp_path / "subs"
    put(subs / "s01_2", "ex05.py", SOLUTION)
    put(subs / "s01_10", "ex05.py", EX05 / "sign_flipped.py")
    put(subs / "s01_1", "ex05.py", STUB)  # a real 0: graded, nothing started
    put(subs / "s01_3", "ex05.py", "def f(:\n")  # an error: the file cannot be loaded
    put(subs / "s01_4", "ex06.py", EX06)  # skipped ex05
    (subs / "s01_5").mkdir()  # empty
    put(subs / "s01_6", "homework.py", SOLUTION)  # misnamed
    (subs / "s01_7.zip").write_bytes(b"not a zip")
    roster = tmp_path / "roster.csv"
    roster.write_text("folder,id,name,email\n" + "".join(
        f"s01_{n},{1000 + n},Student {n},s{n}@uni.edu\n" for n in (1, 2, 3, 4, 5, 6, 7, 10))
                      + ",1099,Never Submitted,never@uni.edu\n")
    return subs, roster


def test_every_student_gets_a_row_and_states_are_told_apart(klass, tmp_path):
    subs, roster = klass
    out = tmp_path / "grades"
    proc = run_grade("batch", subs, "-e", "ex05", "--out", out, "--workers", "2", "--roster", roster)
    assert proc.returncode == 0, proc.stderr
    table = rows(out)
    assert [r["student"] for r in table] == ["1099", *[f"s01_{n}" for n in (1, 2, 3, 4, 5, 6, 7, 10)]]
    by = {r["student"]: r for r in table}
    assert (by["s01_1"]["ex05"], by["s01_1"]["ex05_status"]) == ("0", "graded")
    assert (by["s01_3"]["ex05"], by["s01_3"]["ex05_status"]) == ("0", "error")
    for missing in ("s01_4", "s01_5", "1099"):
        assert (by[missing]["ex05"], by[missing]["ex05_status"]) == ("", "missing"), missing
    for look in ("s01_6", "s01_7"):  # a file that matched nothing, a zip that does not open: a person decides
        assert (by[look]["ex05"], by[look]["ex05_status"]) == ("", "needs a look"), look
    assert by["s01_2"]["total"] == "10" and by["s01_2"]["max_total"] == "10" and by["s01_2"]["email"] == "s2@uni.edu"
    assert by["1099"]["name"] == "Never Submitted"
    assert "homework.py matches no exercise" in by["s01_6"]["problems"]
    assert "s01_7.zip is not a readable zip" in by["s01_7"]["problems"]

    page = (out / "index.html").read_text()
    assert page.index("What the class got wrong") < page.index(">Gradebook</h2>")
    assert page.index(">s01_2<") < page.index(">s01_10<")  # natural order
    assert "s01_7.zip is not a readable zip" in page and "homework.py matches no exercise" in page
    assert "feedback/s01_10.html#ex05" in page and "<script>" in page and "id='filter'" in page
    feedback = (out / "feedback" / "s01_10.md").read_text()
    assert "ex06" not in feedback and "/10**" in feedback  # only the assignment's exercise


def test_without_e_the_assignment_is_what_was_handed_in(tmp_path):
    subs = tmp_path / "subs"
    put(subs / "ann", "ex05.py", SOLUTION)
    put(subs / "bo", "ex05.py", STUB)
    out = tmp_path / "grades"
    assert run_grade("batch", subs, "--out", out, "--workers", "2").returncode == 0
    assert {r["max_total"] for r in rows(out)} == {"10"}
    assert "No file was submitted" not in (out / "feedback" / "bo.md").read_text()


NOTHING_TO_DO = """
import json, sys
from pathlib import Path
from grader.teacher.batch import run_batch
from grader.course.exercises import find_exercise
summary = run_batch(Path(sys.argv[1]), [find_exercise("ex05")], Path(sys.argv[2]), workers=2)
print(json.dumps({"torch": "torch" in sys.modules, **summary}))
"""


def test_rerun_with_nothing_to_grade_imports_no_torch_and_appends_nothing(klass, tmp_path):
    subs, _ = klass
    put(subs / "s01_9", "ex05.py", SOLUTION)
    put(subs / "s01_9", "ex05_v2.py", SOLUTION)  # two files: an error line for ex05
    out = tmp_path / "grades"
    run_grade("batch", subs, "-e", "ex05", "--out", out, "--workers", "2")
    lines = (out / "results.jsonl").read_text()
    rerun = subprocess.run([sys.executable, "-c", NOTHING_TO_DO, str(subs), str(out)], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    summary = json.loads(rerun.stdout)
    assert summary["torch"] is False and summary["graded"] == 0 and summary["skipped"] == 4
    assert (out / "results.jsonl").read_text() == lines


def test_a_grader_failure_shows_as_such_and_is_regraded(tmp_path):
    subs = tmp_path / "subs"
    put(subs / "ann", "ex05.py", SOLUTION)
    out = tmp_path / "grades"
    assert run_grade("batch", subs, "-e", "ex05", "--out", out).returncode == 0
    line = json.loads((out / "results.jsonl").read_text())
    failed = {**line, "status": "error", "grader_failure": True, "score": 0.0, "checks": [],
              "message": "the judge died"}
    (out / "results.jsonl").write_text(json.dumps(failed) + "\n")
    ex05 = find_exercise("ex05")
    book = build_gradebook([Result.from_json(failed)], [ex05], {"ann": {}}, [])
    assert book["rows"][0]["cells"]["ex05"]["state"] == "grader error"
    assert book["rows"][0]["cells"]["ex05"]["score"] is None
    again = json.loads(run_grade("batch", subs, "-e", "ex05", "--out", out, "--json").stdout)
    assert again["graded"] == 1 and again["full"] == 1
    assert rows(out)[0]["ex05"] == "10"


def failed_check(check, key, message):
    return {"id": check, "title": check, "outcome": "failed", "passed": False, "points": 0, "max_points": 1,
            "message": message, "key": key}


def test_misconceptions_count_keys_and_fall_back_to_the_check():
    graded = {"exercise": "ex05", "status": "graded", "score": 0, "max_score": 1}
    results = [{**graded, "student": f"s{i}", "checks": [failed_check("dw", key, msg)]}
               for i, (key, msg) in enumerate([("sign", "opposite sign"), ("sign", "opposite sign again"),
                                               ("factor-2", "half"), (None, "something else")])]
    results.append({**graded, "student": "old",
                    "checks": [{k: v for k, v in failed_check("dw", None, "older").items() if k != "key"}]})
    results.append({**graded, "student": "after",  # a consequence of an earlier one
                    "checks": [{**failed_check("dw", "sign", "above fails too"), "after": "grad_shapes"}]})
    counts = {(m["check"], m["label"]): (m["count"], m["example"])
              for m in misconceptions([Result.from_json(r) for r in results])}
    assert counts == {("dw", "sign"): (2, "opposite sign"), ("dw", "factor-2"): (1, "half"),
                      ("dw", "not diagnosed"): (2, "older")}


def test_misconceptions_of_real_gradings_match_the_mistakes_made(tmp_path):
    subs = tmp_path / "subs"
    made = {"sign_flipped": 3, "missing_factor_two": 2}
    for name, count in made.items():
        for i in range(count):
            put(subs / f"{name}{i}", "ex05.py", EX05 / f"{name}.py")
    put(subs / "good", "ex05.py", SOLUTION)
    out = tmp_path / "grades"
    assert run_grade("batch", subs, "-e", "ex05", "--out", out, "--workers", "2").returncode == 0
    book = json.loads((out / "gradebook.json").read_text())
    dw = [m for m in book["misconceptions"] if m["check"] == "dw"]
    assert sum(m["count"] for m in dw) == 5 and all(m["submitted"] == 6 for m in dw)
    assert {m["key"]: m["count"] for m in dw} == {"sign": 3, "factor-0.5": 2}
    assert not any("good" in m["students"] for m in book["misconceptions"])


def test_symbolic_links_are_never_followed(tmp_path):
    subs = tmp_path / "subs"
    put(subs / "ann", "ex05.py", SOLUTION)
    outside = tmp_path / "elsewhere"
    put(outside, "ex06.py", EX06)
    (subs / "bob").mkdir()
    (subs / "bob" / "ex05.py").symlink_to(subs / "ann" / "ex05.py")  # a classmate's file
    (subs / "bob" / "ex06.py").symlink_to(outside / "ex06.py")  # a file outside the submissions
    (subs / "bob" / "more").symlink_to(outside, target_is_directory=True)
    (subs / "cat").symlink_to(subs / "ann", target_is_directory=True)  # a student entry that is a link
    with zipfile.ZipFile(subs / "dan.zip", "w") as zf:
        link = zipfile.ZipInfo("ex05.py")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, str(SOLUTION))
    found = collect(subs, all_exercises(), tmp_path / "unpack")
    assert [(j.student, j.exercise.id) for j in found.jobs] == [("ann", "ex05")]
    problems = {(p["student"], str(p["message"])) for p in found.problems}  # the English of each Text
    assert problems == {("bob", "ex05.py is a symbolic link: not graded"),
                        ("bob", "ex06.py is a symbolic link: not graded"),
                        ("bob", "more is a symbolic link: not graded"),
                        ("cat", "cat is a symbolic link: not graded"),
                        ("dan", "ex05.py in dan.zip is a symbolic link: not graded")}
    assert not list((tmp_path / "unpack").rglob("ex05.py"))
    assert set(found.students) == {"ann", "bob", "cat", "dan"}


def canvas_files(folder):
    """Canvas's "Download Submissions": name[_LATE]_userid_submissionid_original (a resubmission: -1)."""
    put(folder, "smithjohn_1234_99001_ex05_manual_backward.py", SOLUTION)
    put(folder, "smithjohn_1234_99002_ex06.py", EX06)
    put(folder, "leeanna_LATE_5678_99003_ex05-1.py", EX05 / "sign_flipped.py")
    put(folder, "wuli_91011_99004_notes.txt", "my notes")


def test_canvas_download_maps_each_file_to_its_user_id(tmp_path):
    canvas_files(tmp_path / "subs")
    found = collect(tmp_path / "subs", all_exercises(), tmp_path / "unpack")
    assert sorted((j.student, j.exercise.id) for j in found.jobs) == [
        ("leeanna_5678", "ex05"), ("smithjohn_1234", "ex05"), ("smithjohn_1234", "ex06")]
    assert found.students == {"leeanna_5678": {"id": "5678", "name": "leeanna"},
                              "smithjohn_1234": {"id": "1234", "name": "smithjohn"},
                              "wuli_91011": {"id": "91011", "name": "wuli"}}
    assert found.problems == [{"student": "wuli_91011", "message": "notes.txt matches no exercise: ignored",
                               "look": True}]
    late = {j.student: j.lms["lms_late"] for j in found.jobs}
    assert late == {"leeanna_5678": True, "smithjohn_1234": False}  # Canvas's _LATE marker, or its absence, kept


def test_moodle_folders_and_flat_files_map_to_the_participant_id(tmp_path):
    subs = tmp_path / "subs"
    put(subs / "Ana Pérez_1234567_assignsubmission_file_", "ex05.py", SOLUTION)
    put(subs / "Ana Pérez_1234567_assignsubmission_onlinetext_", "onlinetext.html", "<p>hi</p>")
    put(subs, "Bo Li_7654321_assignsubmission_file_ex05_work.py", STUB)
    found = collect(subs, all_exercises(), tmp_path / "unpack")
    assert sorted((j.student, j.exercise.id) for j in found.jobs) == [("Ana Pérez_1234567", "ex05"),
                                                                      ("Bo Li_7654321", "ex05")]
    assert found.students["Bo Li_7654321"] == {"id": "7654321", "name": "Bo Li"}


def test_a_download_all_zip_is_graded_without_unpacking_by_hand(tmp_path):
    canvas_files(tmp_path / "flat")
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as zf:
        for path in (tmp_path / "flat").iterdir():
            zf.write(path, path.name)
    found = collect_from(download, all_exercises(), tmp_path / "unpack")
    assert len(found.jobs) == 3 and len(found.students) == 3
    roster = tmp_path / "canvas_export.csv"  # a Canvas gradebook export, as the roster
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (55)\n"
                      "    Points Possible,,,,,10\n"
                      "\"Smith, John\",1234,S-1,jsmith,Sec 1,\n\"Lee, Anna\",5678,S-2,alee,Sec 1,\n")
    out = tmp_path / "grades"
    proc = run_grade("batch", download, "-e", "ex05", "--out", out, "--workers", "2", "--roster", roster)
    assert proc.returncode == 0, proc.stderr
    by = {r["student"]: r for r in rows(out)}
    assert by["smithjohn_1234"]["name"] == "Smith, John" and by["smithjohn_1234"]["ex05"] == "10"
    assert by["leeanna_5678"]["ex05"] == "6"
    assert "no entry in the roster" in by["wuli_91011"]["problems"]


def test_the_class_page_says_which_isolation_layers_graded_which_submissions(tmp_path):
    from grader.teacher.gradebook import isolation_groups
    from grader.report.pages import write_index

    full, some = ["namespaces", "landlock (ABI 7)", "seccomp"], ["seccomp"]
    check = CheckResult(id="dw", title=Text("dw"), outcome="passed", points=1.0, max_points=1.0)
    graded = [Result(exercise="ex05", name="ex05", submission="", status="graded", score=1.0, max_score=1.0,
                     checks=[check], isolation=layers, student=s)
              for s, layers in (("s10", full), ("s2", full), ("s3", some))]
    unread = Result(exercise="ex05", name="ex05", submission="", status="error", score=0.0, max_score=1.0,
                    student="s4")  # never reached a sandbox
    failed = Result(exercise="ex05", name="ex05", submission="", status="error", score=0.0, max_score=1.0,
                    grader_failure=True, student="s5")
    groups = isolation_groups([*graded, unread, failed])
    assert groups == [{"layers": full, "count": 2, "submissions": ["s2/ex05", "s10/ex05"]},
                      {"layers": some, "count": 1, "submissions": ["s3/ex05"]}]
    book = {**build_gradebook([], [find_exercise("ex05")], {}, []), "isolation": groups}
    page = write_index(book, tmp_path / "index.html").read_text()
    assert "namespaces, landlock (ABI 7), seccomp: 2 submissions" in page and "s2/ex05 · s10/ex05" in page
