"""`grade export`: the gradebook of a batch (gradebook.json) in the CSV an LMS imports.

- canvas: the layout of Canvas's gradebook export, which its Gradebook import reads back (Canvas
  Instructor Guide, "How do I import grades in the Gradebook?"; Ohio State's CarmenCanvas guide "Import
  a CSV file to Carmen Grades" lists the same columns): Student, ID, SIS User ID, SIS Login ID, Section,
  then one column per assignment, and a "Points Possible" row under the header. A column whose name is
  no assignment of the course creates one. Students are matched by ID (the Canvas user id, from the
  roster or the submission's file name), SIS User ID or SIS Login ID.
- moodle: Moodle's "Import grades > CSV file" (docs.moodle.org, "Grade import") maps one column to a
  user identifier (here "Email address", mapped to useremail) and each other column to a grade item.
- csv: the same table for anything else: student, id, name, email, one column per exercise, total.

Moodle and csv end with a "Feedback" column: the teacher's reviews (review.toml), which Moodle's import maps
to the grade item's feedback; Canvas's gradebook import takes no comments (they are in the feedback pages).

A blank cell (no file, a submission that needs the teacher's look, or a grader failure waiting for a regrade)
leaves the LMS's grade as it is, in every layout, and `export` lists what it left blank; an error (the
student's code could not be graded) is a 0. With `assignment`, the one total is blank when the student has
no score at all or a cell waits for a look or a regrade. A layout the LMS would reject (Moodle without a single
e-mail, Canvas without a single ID) is refused with the fix.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from grader.teacher import csvsafe
from grader.text import Text, verbatim

FORMATS = ("canvas", "moodle", "csv")
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_IDENTITY = ["Email address"]


class ExportError(ValueError):
    """No gradebook to export, or one the LMS would reject."""


def read_gradebook(grades_dir: Path) -> dict:
    path = Path(grades_dir) / "gradebook.json"
    if not path.exists():
        raise ExportError(Text("no gradebook in {dir}: run `grade batch SUBMISSIONS --out {dir}` first",
                               "{dir} 中没有成绩册：先运行 `grade batch SUBMISSIONS --out {dir}`",
                               dir=verbatim(grades_dir)))
    return json.loads(path.read_text(encoding="utf-8"))


def _score(cell: dict) -> str:
    return "" if cell["score"] is None else f"{cell['score']:g}"


def total(row: dict) -> str:
    """The row's total, blank where it would not be the student's grade (nothing scored, or a cell pending)."""
    cells = row["cells"].values()
    if all(c["score"] is None for c in cells) or any(c["state"] in ("needs a look", "grader error") for c in cells):
        return ""
    return f"{row['total']:g}"


def feedback(row: dict) -> str:
    """The teacher's reviews of a row's cells, one line."""
    from grader.report.cell_text import review_text

    return " | ".join(f"{ex}: {review_text(cell)}" for ex, cell in row["cells"].items() if review_text(cell))


def blanks(book: dict) -> list[Text]:
    """What an export leaves blank, for the teacher: each cell that needs a look, and the missing work counted."""
    lines = []
    missing: dict[str, int] = {}
    for row in book["rows"]:
        for ex, cell in row["cells"].items():
            if cell["state"] == "needs a look":
                lines.append(Text("left blank: {student} {ex} needs a look ({message})",
                                  "留空：{student} 的 {ex} 需要你看一看（{message}）", student=verbatim(row["student"]),
                                  ex=ex, message=verbatim(cell["message"])))
            elif cell["state"] == "missing":
                missing[ex] = missing.get(ex, 0) + 1
    for ex, n in missing.items():
        lines.append(Text("left blank: {ex}: 1 student submitted nothing" if n == 1 else
                          "left blank: {ex}: {n} students submitted nothing",
                          "留空：{ex}：{n} 名学生什么也没交", ex=ex, n=n))
    return lines


def refusal(book: dict, fmt: str) -> Text | None:
    """Why the LMS would reject this export, with the fix; None when it would not."""
    rows = book["rows"]
    if fmt == "moodle" and rows and not any(row["email"] for row in rows):
        return Text("no student has an e-mail address, and Moodle's grade import matches students by e-mail: give "
                    "`grade batch` a --roster with an email column (Moodle's grading worksheet is one), then export "
                    "again", "没有一个学生有电子邮件地址，而 Moodle 的成绩导入按电子邮件匹配学生："
                    "给 `grade batch` 一个带 email 列的 --roster（Moodle 的评分工作表就是一个），然后再导出")
    if fmt == "canvas" and rows and not any(row["id"] or row["sis_user_id"] or row["sis_login_id"] for row in rows):
        return Text("no student has a Canvas ID, SIS User ID or SIS Login ID, and Canvas's import matches students by "
                    "them: grade a Canvas download, or give `grade batch` a --roster (Canvas's gradebook export is "
                    "one)", "没有一个学生有 Canvas ID、SIS User ID 或 SIS Login ID，而 Canvas 的导入按它们匹配学生："
                    "评分一份从 Canvas 下载的作业，或给 `grade batch` 一个 --roster（Canvas 的成绩册导出就是一个）")
    return None


def grade_columns(book: dict, assignment: str | None) -> tuple[list[str], list[float], Callable[[dict], list[str]]]:
    """(names, points possible, a function row -> values): one column per exercise, or one named
    `assignment` holding the total."""
    if assignment:
        return [assignment], [book["max_total"]], lambda row: [total(row)]
    exercises = book["exercises"]
    return ([f"{ex['id']} {ex['title']}" for ex in exercises], [ex["points"] for ex in exercises],
            lambda row: [_score(row["cells"][ex["id"]]) for ex in exercises])


def export(book: dict, fmt: str, path: Path, assignment: str | None = None) -> list[Text]:
    """Write the gradebook in `fmt` to `path`; return warnings (students left out, grades pending, what was
    left blank). Raise ExportError for what the LMS would reject."""
    refused = refusal(book, fmt)
    if refused:
        raise ExportError(refused)
    names, points, values = grade_columns(book, assignment)
    warnings = []
    rows = []
    for row in book["rows"]:
        pending = [ex for ex, cell in row["cells"].items() if cell["state"] == "grader error"]
        if pending:
            warnings.append(Text("{student}: {pending} not graded yet (grader error): left blank, run grade batch "
                                 "again", "{student}：{pending} 还没有评分（评分程序出错）：留空，请再运行一次 "
                                 "`grade batch`", student=verbatim(row["student"]), pending=", ".join(pending)))
        if fmt == "canvas":
            if not (row["id"] or row["sis_user_id"] or row["sis_login_id"]):
                warnings.append(Text("{student}: no Canvas ID, SIS User ID or SIS Login ID (add a roster): left out",
                                     "{student}：没有 Canvas ID、SIS User ID 或 SIS Login ID（请加一份名单）：未导出",
                                     student=verbatim(row["student"])))
                continue
            identity = [row["name"] or row["student"], row["id"], row["sis_user_id"], row["sis_login_id"],
                        row["section"]]
        elif fmt == "moodle":
            if not row["email"]:
                warnings.append(Text("{student}: no e-mail address (add a roster): left out",
                                     "{student}：没有电子邮件地址（请加一份名单）：未导出",
                                     student=verbatim(row["student"])))
                continue
            identity = [row["email"]]
        else:
            identity = [row["student"], row["id"], row["name"], row["email"]]
        rows.append(identity + values(row) + ([total(row)] if fmt == "csv" and not assignment else [])
                    + ([feedback(row)] if fmt != "canvas" else []))
    if fmt == "canvas":
        header = [CANVAS_IDENTITY + names, ["Points Possible", "", "", "", ""] + [f"{p:g}" for p in points]]
    elif fmt == "moodle":
        header = [MOODLE_IDENTITY + names + ["Feedback"]]
    else:
        header = [["student", "id", "name", "email", *names, *([] if assignment else ["total"]), "Feedback"]]
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        csvsafe.writer(f).writerows(header + rows)
    return warnings + blanks(book)
