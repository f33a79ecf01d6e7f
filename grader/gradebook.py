"""Batch outputs rebuilt from results.jsonl: grades.csv, feedback/<student>.md and junit.xml.

results.jsonl is the record (one line per graded student and exercise, appended as each result
completes); everything here can be rebuilt from it at any time, the latest line winning.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from xml.etree import ElementTree as ET

from grader.exercises import Exercise


def read_results(path: Path) -> list[dict]:
    """The latest result of each (student, exercise) in results.jsonl; a torn last line is ignored."""
    latest: dict[tuple[str, str], dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            latest[(row["student"], row["exercise"])] = row
    return [latest[k] for k in sorted(latest)]


def write_csv(results: list[dict], exercises: list[Exercise], path: Path) -> None:
    students = sorted({r["student"] for r in results})
    score = {(r["student"], r["exercise"]): r["score"] for r in results}
    total_max = sum(ex.points for ex in exercises)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *[ex.id for ex in exercises], "total", "max_total"])
        for s in students:
            row = [score.get((s, ex.id), "") for ex in exercises]
            writer.writerow([s, *[f"{v:g}" if v != "" else "" for v in row],
                             f"{sum(v for v in row if v != ''):g}", f"{total_max:g}"])


def feedback_markdown(student: str, results: list[dict], exercises: list[Exercise], problems: list[dict]) -> str:
    mine = {r["exercise"]: r for r in results if r["student"] == student}
    total = sum(r["score"] for r in mine.values())
    lines = [f"# Feedback for {student}", "", f"Total: **{total:g}/{sum(ex.points for ex in exercises):g}**", ""]
    for ex in exercises:
        r = mine.get(ex.id)
        lines.append(f"## {ex.id} · {ex.title}")
        if r is None:
            lines += ["No file was submitted for this exercise.", ""]
            continue
        lines.append(f"Score: **{r['score']:g}/{r['max_score']:g}** ({r['status']})")
        if r.get("message"):
            lines.append(f"> {r['message']}")
        lines.append("")
        if r["checks"]:
            lines += ["| | check | points | feedback |", "|---|---|---|---|"]
            marks = {"passed": "✓", "failed": "✗", "not_started": "·", "skipped": "–", "not_run": "○"}
            for c in r["checks"]:
                message = c["message"].replace("|", "\\|").replace("\n", " ")
                lines.append(f"| {marks[c['outcome']]} | {c['title']} | {c['points']:g}/{c['max_points']:g} | {message} |")
            lines.append("")
    notes = [p["message"] for p in problems if p["student"] == student]
    if notes:
        lines += ["## Notes on your submission", *[f"- {n}" for n in notes], ""]
    return "\n".join(lines)


def write_junit(results: list[dict], path: Path) -> None:
    suites = ET.Element("testsuites")
    for r in results:
        failed = [c for c in r["checks"] if c["outcome"] in ("failed", "not_started", "not_run")]
        suite = ET.SubElement(suites, "testsuite", name=f"{r['student']}.{r['exercise']}", tests=str(len(r["checks"])),
                              failures=str(len(failed)), time=str(r.get("duration_s", 0)))
        for c in r["checks"]:
            case = ET.SubElement(suite, "testcase", classname=f"{r['student']}.{r['exercise']}", name=c["title"])
            if c["outcome"] == "skipped":
                ET.SubElement(case, "skipped", message=c["message"])
            elif not c["passed"]:
                ET.SubElement(case, "failure", message=c["message"] or c["outcome"])
        if not r["checks"]:
            case = ET.SubElement(suite, "testcase", classname=f"{r['student']}.{r['exercise']}", name="submission")
            ET.SubElement(case, "error", message=r.get("message", r["status"]))
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def write_gradebook(out: Path, exercises: list[Exercise], problems: list[dict]) -> list[dict]:
    """Rebuild grades.csv, feedback/*.md and junit.xml from out/results.jsonl; return the results."""
    results = read_results(out / "results.jsonl")
    write_csv(results, exercises, out / "grades.csv")
    write_junit(results, out / "junit.xml")
    feedback = out / "feedback"
    feedback.mkdir(exist_ok=True)
    from grader.html_report import write_index, write_report

    for student in sorted({r["student"] for r in results} | {p["student"] for p in problems}):
        (feedback / f"{student}.md").write_text(feedback_markdown(student, results, exercises, problems), encoding="utf-8")
        write_report([r for r in results if r["student"] == student], feedback / f"{student}.html", f"Feedback for {student}")
    write_index(results, out / "index.html", sum(ex.points for ex in exercises))
    (out / "problems.json").write_text(json.dumps(problems, indent=1, ensure_ascii=False), encoding="utf-8")
    return results
