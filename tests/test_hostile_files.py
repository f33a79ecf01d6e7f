"""Hostile student files through the real CLI: the trusted side reads each through one guarded parse
(grader/sandbox/guarded_parse.py), so a file too large, too long or too deep to parse is that student's problem and
score, never the batch's; every output stays bounded and clean (no control character in a file name, a CSV cell or
junit.xml; a student's problems summarised)."""

import csv
import json
import zipfile
from xml.etree import ElementTree as ET

import nbformat
import pytest

from conftest import ROOT, grade_here, run_grade

SOLUTION = (ROOT / "solutions" / "ex01_tensors.py").read_text()
DEEP = 200_000
HOSTILE = {  # student -> the bytes of their ex01 file
    "minus": b"x = " + b"-" * DEEP + b"1\n",
    "nots": b"x = " + b"not " * DEEP + b"1\n",
    "lambdas": b"f = " + b"lambda: " * DEEP + b"1\n",
    "attributes": b"x = a" + b".b" * DEEP + b"\n",
    "brackets": b"x = " + b"(" * 100_000 + b")" * 100_000 + b"\n",
    "continued": b"x = (" + b"-\n" * 30_000 + b"1)\n",  # short lines, one statement of 30 000 tokens
    "sums": b"x = " + b"+".join([b"1"] * 2_000) + b"\n",  # parses: a tree 2 000 levels deep
    "nul": SOLUTION.encode() + b"\nx = 1\0\n",
    "huge_line": b"x = '" + b"a" * (10 << 20) + b"'\n",
    "not_utf8": b"x = '\xff\xfe'\n" + SOLUTION.encode(),
}
REFUSED = {"minus", "nots", "lambdas", "attributes", "brackets", "continued", "sums"}  # by the trusted side's parse
UNREADABLE = {"huge_line", "not_utf8"}  # no code to grade: no score until the teacher looks
ESC = "esc\x1b[31mname\u202e"


def _notebook(code: str) -> str:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One batch of ex01 with --similarity: the hostile students, a notebook with a hostile cell, two honest ones (one
    with an ESC and a bidi override in their folder name) and a zip of many empty files; then a review of it."""
    subs = tmp_path_factory.mktemp("hostile") / "subs"
    for student, data in HOSTILE.items():
        (subs / student).mkdir(parents=True)
        (subs / student / "ex01_tensors.py").write_bytes(data)
    (subs / "cells").mkdir()
    (subs / "cells" / "ex01_tensors.ipynb").write_text(_notebook("x = (" + "-\n" * 30_000 + "1)"))
    (subs / "big_cells").mkdir()  # IPython's transformer would take a minute: never given it
    (subs / "big_cells" / "ex01_tensors.ipynb").write_text(_notebook("x = " + "-" * (2 << 20) + "1"))
    for student in ("honest", ESC):
        (subs / student).mkdir()
        (subs / student / "ex01_tensors.py").write_text(SOLUTION)
    with zipfile.ZipFile(subs / "many.zip", "w") as zf:
        zf.writestr("ex01_tensors.py", SOLUTION)
        for n in range(50):
            zf.writestr(f"empty{n:02d}.txt", "")
    out = subs.parent / "grades"
    proc = run_grade("batch", subs, "-e", "ex01", "--out", out, "--workers", "2", "--similarity", "--json")
    review = grade_here("review", out, "minus", "ex01", "--comment", "seen \x1b[2J")
    return proc, review, out


def test_a_hostile_file_is_its_students_problem_and_the_others_are_graded(graded):
    proc, review, out = graded
    assert proc.returncode == 0, proc.stderr
    assert review.returncode == 0, review.stderr
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert rows["honest"]["ex01"] == "10" and rows["esc\\x1b[31mname\\u202e"]["ex01"] == "10"
    for student in [*HOSTILE, "cells"]:
        if student in UNREADABLE:
            assert rows[student]["ex01_status"] == "needs a look" and rows[student]["problems"], rows[student]
        else:  # a score: whatever the sandbox gave
            assert rows[student]["ex01_status"] not in ("grader error", "needs a look"), (student, rows[student])
            assert rows[student]["ex01"] != "", student
    for student in [*REFUSED, "cells"]:
        assert "ex01: not compared with the class's code" in rows[student]["problems"], student
    assert "holds more than 4 MiB of code" in rows["huge_line"]["problems"]
    assert rows["big_cells"]["ex01_status"] == "needs a look"
    assert "holds more than 1 MiB of code" in rows["big_cells"]["problems"]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "minus</a>: ex01: not compared with the class&#39;s code (line 1 is longer than 20000" in page
    assert [p["students"] for p in json.loads((out / "similarity.json").read_text())] == [[ESC, "honest", "many"]]


def test_every_output_is_clean_of_control_characters(graded):
    _, _, out = graded
    names = [p.name for p in (out / "feedback").iterdir()] + [p.name for p in (out / "files").iterdir()]
    assert "esc\\x1b[31mname\\u202e.html" in names and "esc\\x1b[31mname\\u202e" in names
    assert all(name.isprintable() for name in names), names
    for output in ("grades.csv", "index.html", "junit.xml", "similarity.html", "feedback/minus.md"):
        text = (out / output).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\u202e" not in text, output
    suites = ET.parse(out / "junit.xml").getroot()
    assert "esc\\x1b[31mname\\u202e.ex01" in {s.get("name") for s in suites}


def test_every_output_is_bounded(graded):
    """A 200 kB line quoted by a syntax error is cut: no record, page or cell grows with the file."""
    _, _, out = graded
    assert max(map(len, (out / "results.jsonl").read_text().splitlines())) < 20_000
    assert max(p.stat().st_size for p in (out / "feedback").iterdir()) < 50_000
    assert (out / "grades.csv").stat().st_size < 20_000 and (out / "index.html").stat().st_size < 100_000


def test_a_students_problems_are_summarised(graded):
    _, _, out = graded
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    shown = rows["many"]["problems"].split(" | ")
    assert len(shown) == 6 and shown[-1] == "and 45 more (problems.json lists them all)", shown
    assert rows["many"]["ex01"] == "10"
    listed = [p for p in json.loads((out / "problems.json").read_text()) if p["student"] == "many"]
    assert len(listed) == 50
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count("matches no exercise: ignored") == 2 * 5 and "and 45 more" in page  # the row's title, the list


@pytest.mark.parametrize("student, command", [("minus", ["ex01"]), ("continued", ["check", "ex01"]),
                                              ("nul", ["ex01"])])
def test_the_learners_command_grades_a_hostile_file(tmp_path, student, command):
    path = tmp_path / "ex01_tensors.py"
    path.write_bytes(HOSTILE[student])
    proc = run_grade(*command, "--file", path, "--json")
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] in ("error", "graded") and not result.get("grader_failure"), result
    assert result["score"] < result["max_score"] and "Traceback" not in proc.stdout + proc.stderr


def test_the_guarded_parse_refuses_what_it_cannot_read_and_reads_the_rest():
    from grader.learner.same_code import fingerprint
    from grader.checking.routes import scan
    from grader.sandbox.check_cells import without_own_api
    from grader.sandbox.guarded_parse import Unparsed, parse
    from grader.teacher.similarity import normalised

    for student in HOSTILE.keys() - {"not_utf8"}:
        code = HOSTILE[student].decode()
        tree = parse(code)
        assert isinstance(tree, Unparsed) and tree.refused == (student != "nul"), student
        assert fingerprint(code) is None and scan([("f.py", code)], {"f": ["autograd"]}) == []
        assert without_own_api(code, {"check"}) == code
        if tree.refused:
            assert normalised(code) == []
    assert not isinstance(parse(SOLUTION), Unparsed) and fingerprint(SOLUTION) is not None
    reasons = {k: parse(HOSTILE[k].decode()).reason.render("zh") for k in ("minus", "continued", "sums")}
    assert reasons == {"minus": "第 1 行长于 20000 个字符", "continued": "第 1 行的语句超过 10000 个词法单元",
                       "sums": "嵌套超过 100 层"}


def test_a_zip_of_too_many_files_is_one_problem_not_thousands(tmp_path):
    """A zip of 20 000 empty files is refused whole (one line for its student), never unpacked file by file."""
    from grader.teacher.collect import MAX_ZIP_FILES, extract

    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for n in range(MAX_ZIP_FILES + 1):
            zf.writestr(f"empty{n}.txt", "")
    with pytest.raises(zipfile.BadZipFile, match=f"more than {MAX_ZIP_FILES} files"):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
