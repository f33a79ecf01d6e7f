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

A blank cell (no file, or a grader failure waiting for a regrade) leaves the LMS's grade as it is; an
error (the student's file could not be graded) is a 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from grader import csvsafe

FORMATS = ("canvas", "moodle", "csv")
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_IDENTITY = ["Email address"]


class ExportError(ValueError):
    """No gradebook to export."""


def read_gradebook(grades_dir: Path) -> dict:
    path = Path(grades_dir) / "gradebook.json"
    if not path.exists():
        raise ExportError(f"no gradebook in {grades_dir}: run `grade batch SUBMISSIONS --out {grades_dir}` first")
    return json.loads(path.read_text(encoding="utf-8"))


def _score(cell: dict) -> str:
    return "" if cell["score"] is None else f"{cell['score']:g}"


def grade_columns(book: dict, assignment: str | None) -> tuple[list[str], list[float], Callable[[dict], list[str]]]:
    """(names, points possible, a function row -> values): one column per exercise, or one named
    `assignment` holding the total."""
    if assignment:
        return [assignment], [book["max_total"]], lambda row: [f"{row['total']:g}"]
    exercises = book["exercises"]
    return ([f"{ex['id']} {ex['title']}" for ex in exercises], [ex["points"] for ex in exercises],
            lambda row: [_score(row["cells"][ex["id"]]) for ex in exercises])


def export(book: dict, fmt: str, path: Path, assignment: str | None = None) -> list[str]:
    """Write the gradebook in `fmt` to `path`; return warnings (students left out, grades pending)."""
    names, points, values = grade_columns(book, assignment)
    warnings = []
    rows = []
    for row in book["rows"]:
        pending = [ex for ex, cell in row["cells"].items() if cell["state"] == "grader error"]
        if pending:
            warnings.append(f"{row['student']}: {', '.join(pending)} not graded yet (grader error): left blank, "
                            "run grade batch again")
        if fmt == "canvas":
            if not (row["id"] or row["sis_user_id"] or row["sis_login_id"]):
                warnings.append(f"{row['student']}: no Canvas ID, SIS User ID or SIS Login ID (add a roster): left out")
                continue
            identity = [row["name"] or row["student"], row["id"], row["sis_user_id"], row["sis_login_id"],
                        row["section"]]
        elif fmt == "moodle":
            if not row["email"]:
                warnings.append(f"{row['student']}: no e-mail address (add a roster): left out")
                continue
            identity = [row["email"]]
        else:
            identity = [row["student"], row["id"], row["name"], row["email"]]
        rows.append(identity + values(row) + ([f"{row['total']:g}"] if fmt == "csv" and not assignment else []))
    if fmt == "canvas":
        header = [CANVAS_IDENTITY + names, ["Points Possible", "", "", "", ""] + [f"{p:g}" for p in points]]
    elif fmt == "moodle":
        header = [MOODLE_IDENTITY + names]
    else:
        header = [["student", "id", "name", "email", *names, *([] if assignment else ["total"])]]
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        csvsafe.writer(f).writerows(header + rows)
    return warnings
