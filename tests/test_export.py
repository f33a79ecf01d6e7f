"""`grade export`: the gradebook in the CSV layouts Canvas and Moodle import, with the headers they
document, identities from a roster (a Canvas export or a Moodle grading worksheet works as one)."""

import csv
import json

from conftest import grade_here
from grader.course.exercises import find_exercise
from grader.teacher.export import export
from grader.teacher.gradebook import build_gradebook
from grader.judge.result import Result
from grader.teacher.roster import read_roster

EX05, EX06 = find_exercise("ex05"), find_exercise("ex06")


def result(student, exercise, score, status="graded", **extra):
    return Result.from_json({"student": student, "exercise": exercise.id, "status": status, "score": score,
                             "max_score": exercise.points, "checks": [], **extra})


def book(roster=None):
    results = [result("ann", EX05, 10), result("ann", EX06, 4), result("bob", EX05, 0, "error"),
               result("cat", EX05, 0, "error", grader_failure=True)]
    students = {"ann": {}, "bob": {}, "cat": {}, "dan": {}}
    return build_gradebook(results, [EX05, EX06], students, [], roster)


ROSTER = [{"folder": s, "id": str(100 + n), "name": f"{s.title()} Doe", "email": f"{s}@uni.edu", "section": "A",
           "sis_user_id": f"S{n}", "sis_login_id": s} for n, s in enumerate(["ann", "bob", "cat"])]


def read(path):
    return list(csv.reader(path.open(encoding="utf-8")))


def test_canvas_layout(tmp_path):
    warnings = export(book(ROSTER), "canvas", tmp_path / "c.csv")
    header, points, *body = read(tmp_path / "c.csv")
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                      f"ex05 {EX05.title}", f"ex06 {EX06.title}"]
    assert points == ["Points Possible", "", "", "", "", "10", "10"]
    assert body == [["Ann Doe", "100", "S0", "ann", "A", "10", "4"],
                    ["Bob Doe", "101", "S1", "bob", "A", "0", ""],  # an error is a 0, missing is left blank
                    ["Cat Doe", "102", "S2", "cat", "A", "", ""]]  # a grader failure is no grade
    assert any("cat: ex05 not graded yet" in str(w) for w in warnings)
    assert any(str(w).startswith("dan: no Canvas ID") for w in warnings)
    assert any(w.render("zh").startswith("dan：没有 Canvas ID") for w in warnings)


def test_moodle_layout_and_one_assignment_column(tmp_path):
    export(book(ROSTER), "moodle", tmp_path / "m.csv")
    assert read(tmp_path / "m.csv")[:2] == [["Email address", f"ex05 {EX05.title}", f"ex06 {EX06.title}", "Feedback"],
                                            ["ann@uni.edu", "10", "4", ""]]
    export(book(ROSTER), "moodle", tmp_path / "one.csv", assignment="Homework 3")
    assert read(tmp_path / "one.csv")[:2] == [["Email address", "Homework 3", "Feedback"], ["ann@uni.edu", "14", ""]]


def test_missing_work_is_blank_in_every_layout_and_listed(tmp_path):
    roster = ROSTER + [{**ROSTER[0], "folder": "dan", "id": "103", "email": "dan@uni.edu", "sis_login_id": "dan",
                        "sis_user_id": "S3", "name": "Dan Doe"}]
    for fmt in ("canvas", "moodle", "csv"):
        warnings = export(book(roster), fmt, tmp_path / f"{fmt}.csv", assignment="Homework 3")
        dan = next(r for r in read(tmp_path / f"{fmt}.csv") if "dan@uni.edu" in r or "Dan Doe" in r or "dan" in r)
        assert "0" not in dan and "" in dan, (fmt, dan)  # nothing submitted: blank, never 0
        assert any("ex06: 3 students submitted nothing" in str(w) for w in warnings)
        assert any("ex05: 1 student submitted nothing" in str(w) for w in warnings)


def test_an_export_the_lms_would_reject_is_refused(tmp_path):
    import pytest

    from grader.teacher.export import ExportError

    with pytest.raises(ExportError, match="Moodle's grade import matches students by e-mail"):
        export(book(), "moodle", tmp_path / "m.csv")
    assert not (tmp_path / "m.csv").exists()
    (tmp_path / "gradebook.json").write_text(json.dumps(book()))
    refused = grade_here("export", tmp_path, "--format", "moodle")
    assert refused.returncode == 2 and "--roster" in refused.stderr


def test_rosters_from_canvas_and_moodle_exports(tmp_path):
    canvas = tmp_path / "canvas.csv"
    canvas.write_text("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (12)\n    Points Possible,,,,,5\n"
                      "\"Doe, Ann\",100,S0,ann,A,5\n")
    assert read_roster(canvas) == [{"folder": "", "id": "100", "name": "Doe, Ann", "email": "", "section": "A",
                                    "sis_user_id": "S0", "sis_login_id": "ann"}]
    moodle = tmp_path / "worksheet.csv"
    moodle.write_text("Identifier,Full name,Email address,Status,Grade\nParticipant 1234567,Ana Pérez,ana@uni.edu,,\n")
    entry = read_roster(moodle)[0]
    assert (entry["id"], entry["name"], entry["email"]) == ("1234567", "Ana Pérez", "ana@uni.edu")


def test_export_command(tmp_path):
    (tmp_path / "gradebook.json").write_text(json.dumps(book(ROSTER)))
    proc = grade_here("export", tmp_path, "--format", "csv")
    assert proc.returncode == 0 and "dan" not in proc.stderr
    assert read(tmp_path / "csv.csv")[0] == ["student", "id", "name", "email", f"ex05 {EX05.title}",
                                             f"ex06 {EX06.title}", "total", "Feedback"]
    missing = grade_here("export", tmp_path / "nothing", "--format", "canvas")
    assert missing.returncode == 2 and "run `grade batch" in missing.stderr
