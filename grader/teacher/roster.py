"""The class roster: who the students are, from a CSV file, matched to the submissions' folders.

Any CSV with a header row works, with these columns (case and spacing ignored; the others are ignored):
folder, id (or "student id", "user id", Moodle's "identifier"), name (or "student", "full name"), email
(or "email address"), section, "sis user id", "sis login id" (or "login", "username"). So a gradebook
exported from Canvas (Student, ID, SIS User ID, SIS Login ID, Section) or Moodle's grading worksheet
(Identifier "Participant 1234567", Full name, Email address) is a roster as it is. Three more columns set the late
policy per student (grader/teacher/late.py): extension (a due date of their own, or days more), excused, and
submitted, the LMS's record of when they submitted (Moodle's worksheet: "Last modified (submission)").

A submission matches the entry whose folder, id, e-mail or SIS login is its folder name, or whose id is
the id its LMS download carried (Canvas user id, Moodle participant id). A roster entry nobody's files matched
is named as the download names the others: `doejane_1008` beside Canvas's `lastfirst_userid`, `Jane Doe_1008`
beside Moodle's `Full Name_participantid`, else by its folder, id or e-mail.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

IDENTITY_FIELDS = ("id", "name", "email", "section", "sis_user_id", "sis_login_id")
HEADERS = {
    "folder": ("folder", "submission", "directory"),
    "id": ("id", "student id", "user id", "identifier", "participant"),
    "name": ("name", "student", "student name", "full name"),
    "email": ("email", "e-mail", "email address"),
    "section": ("section",),
    "sis_user_id": ("sis user id",),
    "sis_login_id": ("sis login id", "login", "username"),
    "extension": ("extension", "extended due", "due date"),
    "excused": ("excused",),
    "submitted": ("submitted", "submitted at", "submission time", "last modified (submission)"),
}
POLICY_FIELDS = ("extension", "excused", "submitted")  # the late policy's, per student
MATCHED_BY = ("folder", "id", "email", "sis_login_id", "sis_user_id")


class RosterError(ValueError):
    """The roster file cannot be used (unreadable, or no column that names a student)."""


def _field(header: str) -> str | None:
    name = re.sub(r"[\s_]+", " ", header.strip().lower())
    return next((field for field, names in HEADERS.items() if name in names), None)


def read_roster(path: Path) -> list[dict]:
    """The roster's entries: dicts with the fields above (empty strings where the file has none)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"cannot read the roster {path}: {exc}") from None
    reader = csv.reader(text.splitlines())
    header = next(reader, [])
    columns = {i: _field(h) for i, h in enumerate(header)}
    if not {"folder", "id", "email", "sis_login_id", "sis_user_id"} & set(columns.values()):
        raise RosterError(f"the roster {path} has no folder, id or email column (its header: {', '.join(header)})")
    entries = []
    for values in reader:
        entry = {field: "" for field in ("folder", *IDENTITY_FIELDS, *(f for f in POLICY_FIELDS
                                                                       if f in columns.values()))}
        for i, value in enumerate(values):
            column = columns.get(i)
            if column and not entry[column]:
                entry[column] = value.strip()
        entry["id"] = entry["id"].removeprefix("Participant ").strip()  # Moodle's grading worksheet
        if entry["name"] == "Points Possible" or not any(entry[f] for f in MATCHED_BY):
            continue  # Canvas's second row, or a blank line
        entries.append(entry)
    return entries


def match_roster(identities: dict[str, dict], roster: list[dict]) -> tuple[dict[str, dict], list[dict]]:
    """Identities completed from the roster, plus a row for each roster entry nobody's folder matched;
    and a problem for each student the roster does not know."""
    index: dict[str, int] = {}
    for n, entry in enumerate(roster):
        for field in MATCHED_BY:
            if entry[field]:
                index.setdefault(entry[field].lower(), n)
    matched, merged, problems = set(), {}, []
    for key, identity in identities.items():
        row = index.get(key.lower(), index.get(identity.get("id", "").lower()))
        if row is None:
            merged[key] = identity
            problems.append({"student": key, "message": f"{key} has no entry in the roster"})
            continue
        if row in matched:
            problems.append({"student": key, "message": f"{key} matches the same roster entry as another folder: "
                             "keep one"})
        matched.add(row)
        merged[key] = {**identity, **{f: roster[row][f] for f in (*IDENTITY_FIELDS, *POLICY_FIELDS)
                                      if roster[row].get(f)}}
    naming = lms_naming(identities)
    for n, entry in enumerate(roster):
        if n not in matched:
            key = naming(entry) if naming and entry["id"] and entry["name"] else \
                next(entry[f] for f in MATCHED_BY if entry[f])
            merged.setdefault(key, {f: entry.get(f, "") for f in (*IDENTITY_FIELDS, *POLICY_FIELDS)})
            problems.append({"student": key, "message": "no files submitted"})  # as an empty folder says
    return merged, problems


def canvas_name(name: str) -> str:
    """A name as Canvas writes it in a download's file names: lower case, letters and digits only ("Doe, Jane" ->
    "doejane")."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def lms_naming(identities: dict[str, dict]):
    """How the download named its students, as a function roster entry -> key: Canvas's `lastfirst_userid`, Moodle's
    `Full Name_participantid`; None when the students are not named by an LMS download."""
    named = [(key, identity) for key, identity in identities.items()
             if identity.get("id") and key == f"{identity.get('name')}_{identity['id']}"]
    if not named:
        return None
    if all(canvas_name(identity["name"]) == identity["name"] for _, identity in named):
        return lambda entry: f"{canvas_name(entry['name'])}_{entry['id']}"
    return lambda entry: f"{entry['name']}_{entry['id']}"
