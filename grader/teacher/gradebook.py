"""Batch outputs rebuilt from results.jsonl: the class's gradebook (gradebook.json, grades.csv, index.html),
feedback/<student>.md and .html, junit.xml and problems.json.

results.jsonl is the record (one line per graded student and exercise, appended as each result
completes); everything here can be rebuilt from it at any time, the latest line winning.

Every student gets a row: each one found in the submissions (even with nothing gradable), each one in
results.jsonl, and each roster entry. A cell tells "missing" (no file), "needs a look" (two files for it, a
file that could not be read, a file or zip that matched nothing: no score until the teacher chooses), "error"
(the student's code could not be graded: 0), "grader error" (the grader failed: no score, regraded by the
next run), "excused" (an excused student's missing work: out of their maximum) and a real score apart. Scores are
computed with the current points from the stored per-check outcomes, then the late policy and the teacher's review
(review.toml) are applied (`current_results`). Totals count the assignment's exercises only, and a student with
nothing scored has none. Every problem is in one list (`class_problems`), which problems.json, the class page, the
rows and the batch's count all read.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree as ET

from grader.teacher import csvsafe
from grader.teacher.collect import natural_key
from grader.course.exercises import Exercise, current_course
from grader.judge.result import MARKS, Result
from grader.teacher.roster import IDENTITY_FIELDS, match_roster
from grader.report.cell_text import late_text, review_text
from grader.text import Text, say, verbatim, visible

LOOK_AT = 0.1  # a check passed by at most this share of the students who reached it is flagged
LOOK_AT_MIN = 5  # ... once at least this many reached it
SHOWN_PROBLEMS = 5  # of a student's problems, the first in their row (grades.csv, the pages); all in problems.json


def read_results(path: Path) -> list[Result]:
    """The latest result of each (student, exercise) in results.jsonl; a torn last line is ignored."""
    latest: dict[tuple[str, str], Result] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                result = Result.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError):
                continue
            latest[(result.student or "", result.exercise)] = result
    return [latest[k] for k in sorted(latest)]


def cell_state(result: Result | None) -> str:
    """missing, grader error, needs a look, or the result's status (graded, error, timeout, crashed, tampered)."""
    if result is None:
        return "missing"
    if result.needs_look:
        return "needs a look"
    return "grader error" if result.grader_failure else result.status


UNSCORED = ("missing", "grader error", "needs a look")  # blank in grades.csv and every export


def _cell(result: Result | None, exercise: Exercise, lang: str) -> dict:
    state = cell_state(result)
    scored = result is not None and state not in UNSCORED
    cell = {"state": state, "score": result.score if result is not None and scored else None,
            "max_score": result.max_score if result is not None and scored else exercise.points,
            "message": (result.needs_look or result.message.render(lang)) if result else ""}
    if result is not None:
        for key in ("review", "late_work", "submitted"):
            if getattr(result, key):
                cell[key] = getattr(result, key)
    return cell


def _needs_look(cell: dict, reason: str) -> dict:
    return {**cell, "state": "needs a look", "score": None, "message": reason}


def current_results(results: list[Result], exercises: list[Exercise], out: Path, assignment: str | None = None,
                    people: dict[str, dict] | None = None) -> list[Result]:
    """The results as they count now: scored with the current points (grader/teacher/graded_against.py), less the late
    policy's penalty (grader/teacher/late.py; `people`: each student's identity, for their extension, excuse or
    submission time; out/submitted.json: what the LMS and the teacher said of each file), with the teacher's review
    applied (grader/teacher/review.py)."""
    from grader.teacher.graded_against import rescore
    from grader.teacher.late import SUBMITTED, apply_late, late_policy, student_policy, submission
    from grader.teacher.review import apply_review, read_reviews

    by_key = {**{ex.name: ex for ex in exercises}, **{ex.id: ex for ex in exercises}}
    reviews = {(student, by_key[ex].id): review for (student, ex), review in read_reviews(out).items() if ex in by_key}
    policy = late_policy(current_course(), assignment)
    facts = json.loads((out / SUBMITTED).read_text(encoding="utf-8")) if (out / SUBMITTED).is_file() else {}
    points = {ex.id: ex.check_points() for ex in exercises}
    latest = {(r.student or "", r.exercise): r for r in results}
    current = []
    for key in sorted(set(latest) | set(reviews)):
        result, ex = latest.get(key), by_key.get(key[1])
        if ex is not None:
            identity = (people or {}).get(key[0])
            mine = student_policy(policy, key[0], identity)
            when = submission(identity, facts.get(key[0], {}).get(ex.id, {}), policy)
            scored = apply_late(rescore(result, ex, points[ex.id]), mine, when) if result else None
            result = apply_review(scored, reviews.get(key), ex)
        if result is not None:
            result = replace(result, student=key[0])
            current.append(result)
    return current


def misconceptions(results: list[Result], lang: str = "en") -> list[dict]:
    """How many students made each diagnosed mistake, per (exercise, check, key), with one example message.

    A failed check without a key (an older result, or no mistake named) counts under its check as
    "not diagnosed"; one that failed after a check it builds on (`after`) is that earlier mistake's
    consequence, not a mistake of its own, and is not counted. Most frequent first.
    """
    groups: dict[tuple, dict] = {}
    submitted: dict[str, int] = defaultdict(int)
    for r in sorted(results, key=lambda r: natural_key(r.student or "")):
        if r.grader_failure:
            continue
        submitted[r.exercise] += 1
        for c in r.checks:
            if c.outcome != "failed" or c.after:
                continue
            group = groups.setdefault((r.exercise, c.id, c.key), {
                "exercise": r.exercise, "check": c.id, "title": c.title.render(lang), "key": c.key,
                "label": c.key or say(lang, "not diagnosed"), "example": c.message.render(lang), "students": []})
            group["students"].append(r.student)
    entries = [{**g, "count": len(g["students"]), "submitted": submitted[g["exercise"]]} for g in groups.values()]
    return sorted(entries, key=lambda m: (-m["count"], m["exercise"], m["check"], m["label"]))


def explained(entries: list[dict], exercises: list[Exercise], lang: str) -> list[dict]:
    """Each misconception with what its key means (`meaning`, in `lang`; "" when no registry describes it)."""
    from grader.course.mistake_keys import describe, registered

    keys = {ex.id: registered(ex) for ex in exercises}
    for m in entries:
        meaning = describe(m["key"], keys[m["exercise"]]) if m["key"] and m["exercise"] in keys else None
        m["meaning"] = meaning.render(lang) if meaning else ""
    return entries


def check_rates(results: list[Result], lang: str = "en") -> list[dict]:
    """Each check's pass rate among the students who reached it (passed or failed), lowest first; `look`
    flags one that (nearly) everybody fails: a check or a statement to look at."""
    rates: dict[tuple[str, str], dict] = {}
    for r in results:
        for c in r.checks:
            if c.outcome in ("passed", "failed") and not r.grader_failure:
                entry = rates.setdefault((r.exercise, c.id), {"exercise": r.exercise, "check": c.id,
                                                             "title": c.title.render(lang), "passed": 0,
                                                             "attempted": 0})
                entry["passed"] += c.passed
                entry["attempted"] += 1
    for entry in rates.values():
        entry["rate"] = entry["passed"] / entry["attempted"]
        entry["look"] = entry["attempted"] >= LOOK_AT_MIN and entry["rate"] <= LOOK_AT
    return sorted(rates.values(), key=lambda e: (e["rate"], e["exercise"], e["check"]))


def isolation_groups(results: list[Result]) -> list[dict]:
    """Which isolation layers graded which submissions (on a cluster, several machines may differ): one
    entry per set of layers the sandbox applied, most submissions first. A submission that never reached a
    sandbox (unreadable, the grader's failure) is in none."""
    groups: dict[tuple, list[str]] = {}
    for r in results:
        if not r.grader_failure and r.checks:
            groups.setdefault(tuple(r.isolation or ()), []).append(f"{r.student}/{r.exercise}")
    return [{"layers": list(layers), "count": len(names), "submissions": sorted(names, key=natural_key)}
            for layers, names in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))]


def class_list(results: list[Result], students: dict[str, dict], roster: list[dict] | None,
               lang: str = "en") -> tuple[dict[str, dict], list[dict]]:
    """Every student of the class (those found, those with a result, the roster's) with their identity, and the
    problems matching them to the roster found."""
    identities = {key: dict(identity) for key, identity in students.items()}
    for r in results:
        identities.setdefault(r.student or "", {})
    if roster is None:
        return identities, []
    merged, unmatched = match_roster(identities, roster)
    return merged, [{**p, "message": Text.of(p["message"]).render(lang)} for p in unmatched]


def class_problems(problems: list[dict], results: list[Result], lang: str) -> list[dict]:
    """Every problem of the batch in one list, each once: what collecting the files found, the roster's, a file
    that could not be read when graded, code too large or too deep to compare, a banned route seen in a source (for
    a person, never a score), and where the LMS and our due date disagree on late work (`late`)."""
    listed = [{**p, "message": Text.of(p["message"]).render(lang)} for p in problems]  # JSON from here on
    said = {(p["student"], p.get("exercise")) for p in listed if p.get("look")}
    for r in results:
        student = r.student or ""
        if r.needs_look and (student, r.exercise) not in said:
            listed.append({"student": student, "exercise": r.exercise, "look": True,
                           "message": f"{r.exercise}: {r.needs_look}"})
        if r.unread:
            listed.append({"student": student, "exercise": r.exercise, "message": Text(
                "{exercise}: not compared with the class's code ({why})", "{exercise}：未与全班的代码比较（{why}）",
                exercise=r.exercise, why=verbatim(r.unread)).render(lang)})
        if r.flags:
            seen = ", ".join(f"{f['what']} (line {f['line']})" for f in r.flags[:3]) + (" ..." if len(r.flags) > 3
                                                                                         else "")
            listed.append({"student": student, "exercise": r.exercise, "message": Text(
                "{exercise} flagged for a look: {seen}", "{exercise} 需要人工查看：{seen}", exercise=r.exercise,
                seen=verbatim(seen)).render(lang)})
        disagree = (r.late_work or {}).get("problem")
        if disagree:
            listed.append({"student": student, "exercise": r.exercise, "late": True,
                           "message": f"{r.exercise}: {Text(*disagree).render(lang)}"})
    return listed


def shown_problems(messages: list[str], lang: str) -> list[str]:
    """A student's problems as their row shows them: the first SHOWN_PROBLEMS, then how many more there are."""
    if len(messages) <= SHOWN_PROBLEMS:
        return messages
    more = len(messages) - SHOWN_PROBLEMS
    return messages[:SHOWN_PROBLEMS] + [Text("and {n} more (problems.json lists them all)",
                                             "还有 {n} 个（problems.json 列出了全部）", n=more).render(lang)]


def build_gradebook(results: list[Result], exercises: list[Exercise], students: dict[str, dict], problems: list[dict],
                    roster: list[dict] | None = None, similar: list[dict] | None = None, lang: str = "en",
                    assignment: str | None = None) -> dict:
    """The class's gradebook: one row per student, one cell per exercise of the assignment; its words in `lang`.
    A student with nothing scored has no total (blank), and an excused student's missing work counts neither way."""
    from grader.teacher.consistency import differing_checks, seeds_used
    from grader.teacher.late import late_policy, student_policy

    ids = {ex.id for ex in exercises}
    results = [r for r in results if r.exercise in ids]
    latest = {(r.student, r.exercise): r for r in results}
    identities, unmatched = class_list(results, students, roster, lang)
    problems = sorted(class_problems(problems, list(latest.values()), lang) + unmatched,
                      key=lambda p: natural_key(p["student"]))
    policy = late_policy(current_course(), assignment)
    notes = defaultdict(list)
    for p in problems:
        notes[p["student"]].append(p["message"])
    # student -> exercise (or "" for all their missing work) -> why it needs a look
    look: defaultdict[str, dict[str, str]] = defaultdict(dict)
    for p in problems:
        if p.get("look"):
            look[p["student"]].setdefault(p.get("exercise", ""), p["message"])
    rows = []
    for key in sorted(identities, key=natural_key):
        excused = student_policy(policy, key, identities[key])["excused"]
        cells = {ex.id: _cell(latest.get((key, ex.id)), ex, lang) for ex in exercises}
        for ex_id, cell in cells.items():
            reason = look[key].get(ex_id) or (look[key].get("") if cell["state"] == "missing" else None)
            teacher_scored = (cell.get("review") or {}).get("score") is not None
            if reason and not teacher_scored:
                cells[ex_id] = _needs_look(cell, reason)
            elif excused and cell["state"] == "missing":
                cells[ex_id] = {**cell, "state": "excused", "max_score": 0.0}
        scored = [c["score"] for c in cells.values() if c["score"] is not None]
        rows.append({"student": key, **{f: identities[key].get(f, "") for f in IDENTITY_FIELDS},
                     "cells": cells, "total": round(sum(scored), 4) if scored else None,
                     "max_total": sum(ex.points for ex in exercises if cells[ex.id]["state"] != "excused"),
                     "problems": shown_problems(notes[key], lang), "problem_count": len(notes[key])})
    return {"exercises": [{"id": ex.id, "name": ex.name, "title": ex.text("title", lang), "points": ex.points}
                          for ex in exercises],
            "seeds": seeds_used(results), "differing": differing_checks(results, lang),
            "max_total": sum(ex.points for ex in exercises), "rows": rows,
            "misconceptions": explained(misconceptions(results, lang), exercises, lang),
            "checks": check_rates(results, lang), "isolation": isolation_groups(results),
            "problems": problems, "lang": lang,
            "stray": [p for p in problems if p["student"] not in identities], "similar": similar}


def total_text(row: dict, blank: str = "") -> str:
    """A row's total as shown: `blank` when nothing of the student's is scored (missing work is no 0)."""
    return blank if row["total"] is None else f"{row['total']:g}"


def write_csv(book: dict, path: Path) -> None:
    """grades.csv: a score column per exercise (empty when missing, needing a look or after a grader error), the
    total, then each exercise's state, the student's identity and problems, then the late work (flag, days,
    penalty, submission time) and the teacher's reviews."""
    ids = [ex["id"] for ex in book["exercises"]]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csvsafe.writer(f)
        writer.writerow(["student", *ids, "total", "max_total", *[f"{i}_status" for i in ids], "id", "name", "email",
                         "problems", "late", "submitted", "review"])
        for row in book["rows"]:
            cells = [row["cells"][i] for i in ids]
            writer.writerow([row["student"], *["" if c["score"] is None else f"{c['score']:g}" for c in cells],
                             total_text(row), f"{row['max_total']:g}", *[c["state"] for c in cells],
                             row["id"], row["name"], row["email"], " | ".join(row["problems"]),
                             " | ".join(f"{i}: {late_text(c)}" for i, c in zip(ids, cells) if late_text(c)),
                             " | ".join(f"{i}: {c['submitted']}" for i, c in zip(ids, cells) if c.get("submitted")),
                             " | ".join(f"{i}: {review_text(c, teacher=True)}" for i, c in zip(ids, cells)
                                        if review_text(c))])


def feedback_markdown(row: dict, results: dict[str, Result], exercises: list[Exercise], lang: str = "en") -> str:
    """What one student reads, in `lang`: each exercise of the assignment (the teacher's review, late work, what
    needs a look), then the notes on the submission (templates/feedback.md.j2: every value escaped)."""
    from grader.report.pages import GRADER_FAILED, render
    from grader.report.terminal import points_text, score_text

    shown = []
    for ex in exercises:
        r = results.get(ex.id)
        cell = row["cells"][ex.id]
        state = cell["state"]
        entry: dict = {"heading": f"{ex.id} · {ex.text('title', lang)}", "review": review_text(cell, lang),
                       "lines": [], "score": "", "checks": []}
        if state == "missing" or r is None:
            entry["lines"].append(Text("No file was submitted for this exercise.",
                                       "这个练习没有提交文件。").render(lang))
        elif state == "needs a look":
            entry["lines"].append(f"{say(lang, 'Your teacher needs to look at this submission:')} {cell['message']}")
        elif state == "grader error":
            entry["lines"].append(say(lang, GRADER_FAILED))
        else:
            if late_text(cell, lang):
                entry["lines"].append(Text("Submitted {late}", "提交：{late}", late=late_text(cell, lang)).render(lang)
                                      + (f" ({cell['submitted']})" if cell.get("submitted") else ""))
            message = r.message.render(lang)
            entry.update(score=score_text(r, lang), status=Text("({status})", "（{status}）",
                                                                status=say(lang, r.status)).render(lang),
                         block=message if "\n" in message else "", message=message,
                         checks=[{"mark": MARKS[c.outcome], "title": c.title.render(lang),
                                  "points": points_text(c, lang), "message": c.message.render(lang)}
                                 for c in r.checks])
        shown.append(entry)
    notes = [n.render(lang) for ex in exercises if ex.id in results for n in results[ex.id].notes] + row["problems"]
    return render("feedback.md.j2",
                  heading=say(lang, "Feedback for {student}", student=row.get("name") or row["student"]),
                  total=Text("Total: {total}/{max}", "总分：{total}/{max}", total=total_text(row, "–"),
                             max=f"{row['max_total']:g}").render(lang),
                  exercises=shown, notes=notes,
                  words={"review": say(lang, "Your teacher’s review:"), "check": say(lang, "check"),
                         "points": say(lang, "points"), "feedback": say(lang, "feedback"),
                         "notes": say(lang, "Notes on your submission")})


XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # not a character of XML 1.0


def xml_text(value: str) -> str:
    """`value` as junit.xml holds it: control characters shown as escapes (`\\x1b`), any other character XML 1.0 has
    not (a lone surrogate, U+FFFF) too."""
    return XML_INVALID.sub(lambda m: f"\\u{ord(m.group()):04x}", visible(value))


def write_junit(results: list[Result], path: Path, lang: str = "en") -> None:
    suites = ET.Element("testsuites")
    for r in results:
        failed = [c for c in r.checks if c.outcome in ("failed", "not_started", "not_run")]
        name = xml_text(f"{r.student}.{r.exercise}")
        suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(r.checks)),
                              failures=str(len(failed)), time=str(r.duration_s))
        for c in r.checks:
            case = ET.SubElement(suite, "testcase", classname=name, name=xml_text(c.title.render(lang)))
            if c.outcome == "skipped":
                ET.SubElement(case, "skipped", message=xml_text(c.message.render(lang)))
            elif not c.passed:
                ET.SubElement(case, "failure", message=xml_text(c.message.render(lang) or c.outcome))
        if not r.checks:
            case = ET.SubElement(suite, "testcase", classname=name, name="submission")
            ET.SubElement(case, "error", message=xml_text(r.message.render(lang) or r.status))
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def write_gradebook(out: Path, exercises: list[Exercise], problems: list[dict], students: dict[str, dict] | None = None,
                    roster: list[dict] | None = None, similar: list[dict] | None = None, lang: str = "en",
                    assignment: str | None = None) -> dict:
    """Rebuild every batch output from out/results.jsonl and out/review.toml (the students' feedback pages in
    `lang`); return the gradebook."""
    from grader.report.pages import file_name, write_index, write_report

    recorded = read_results(out / "results.jsonl")
    people = class_list(recorded, students or {}, roster)[0]
    results = current_results(recorded, exercises, out, assignment, people)
    book = build_gradebook(results, exercises, students or {}, problems, roster, similar, lang, assignment)
    written = out / "gradebook.json.tmp"  # replaced whole: a reader never sees half of it (grade review reads it)
    written.write_text(json.dumps(book, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(written, out / "gradebook.json")
    write_csv(book, out / "grades.csv")
    write_junit(results, out / "junit.xml", lang)
    feedback = out / "feedback"
    feedback.mkdir(exist_ok=True)
    mine: dict[str, dict[str, Result]] = defaultdict(dict)
    for r in results:
        mine[r.student or ""][r.exercise] = r
    for row in book["rows"]:
        student = row["student"]
        (feedback / f"{file_name(student)}.md").write_text(feedback_markdown(row, mine[student], exercises, lang),
                                                encoding="utf-8")
        missing = [Text("{ex}: no file was submitted", "{ex}：没有提交文件", ex=ex.id)
                   for ex in exercises if row["cells"][ex.id]["state"] == "missing"]
        write_report([mine[student][ex.id] for ex in exercises if ex.id in mine[student]],
                     feedback / f"{file_name(student)}.html",
                     say(lang, "Feedback for {student}", student=row.get("name") or student),
                     missing + [Text.of(p) for p in row["problems"]], lang=lang,
                     total=(total_text(row, "–"), row["max_total"]),
                     cells=row["cells"])
    write_index(book, out / "index.html", lang)
    (out / "problems.json").write_text(json.dumps(book["problems"], indent=1, ensure_ascii=False), encoding="utf-8")
    return book


def batch_state(out: Path) -> dict:
    """What a batch left in `out` to write its outputs again (its exercises, problems, students, roster,
    similar pairs, language and assignment), as write_gradebook's arguments; ReviewError without a batch."""
    from grader.course.exercises import all_exercises, find_in
    from grader.teacher.review import STATE_FILE, ReviewError

    path = Path(out) / STATE_FILE
    if not path.is_file():
        raise ReviewError(Text("no batch in {out}: run `grade batch SUBMISSIONS --out {out}` first", out=out))
    state = json.loads(path.read_text(encoding="utf-8"))
    every = all_exercises(state.get("assignment"))
    roster_file = Path(out) / "roster.json"
    return {"exercises": [find_in(every, key) for key in state["exercises"]], "problems": state["problems"],
            "students": state["students"],
            "roster": json.loads(roster_file.read_text(encoding="utf-8")) if roster_file.is_file() else None,
            "similar": state.get("similar"), "lang": state.get("lang", "en"), "assignment": state.get("assignment")}


def rebuild(out: Path) -> dict:
    """Write every output of a batch again from its results, its state and review.toml (nothing is regraded);
    ReviewError where the late policy cannot be used."""
    from grader.teacher.late import LateError
    from grader.teacher.review import ReviewError

    try:
        return write_gradebook(Path(out), **batch_state(out))
    except LateError as exc:
        raise ReviewError(*exc.args) from None
