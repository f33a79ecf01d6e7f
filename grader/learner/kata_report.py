"""What the kata commands print and write: the line after a kata grading, `grade today`, `grade stats` in the
terminal, its HTML page (inline SVG charts, as the reports draw them) and the export a learner may hand a
teacher. Reads the kata state (grader/learner/kata.py); never imports torch.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from grader.learner import kata
from grader.course import variants
from grader.course.exercises import Exercise
from grader.report.terminal import display_width, pad
from grader.text import say


def attempt_line(ex: Exercise, summary: dict, lang: str) -> str:
    """After a kata grading: the pass ("passed in 4:12 of active time, best 3:40, your 3rd clean pass; next review in
    6 days"), a pass that pasted an earlier answer (a review, said so), or where the attempt stands."""
    attempt = summary["attempt"]
    if summary["passed_now"] and attempt.get("copy_of"):
        copied = attempt["copy_of"]
        what = say(lang, "the reference solution") if copied == "reference" else \
            say(lang, "your own solved file of {ex}", ex=ex.id) if copied == "own file" else \
            say(lang, "your attempt {n}", n=copied)
        return say(lang, "Kata {ex} passed, but your code is the same as {what} (names and layout aside), in less time "
                         "than typing it takes: it counts as a review rated hard, not as a clean pass or a best time. "
                         "Next review: {when}.",
                   ex=ex.id, what=what, when=kata.in_days(summary["due"], lang))
    if summary["passed_now"]:
        line = say(lang, "Kata {ex} passed in {time} of active time", ex=ex.id, time=kata.clock(attempt["active_s"]))
        before = summary["best_before"]
        if before is None:
            line += say(lang, " (your first pass)")
        elif attempt["active_s"] < before:
            line += say(lang, ", a new best (was {best})", best=kata.clock(before))
        else:
            line += say(lang, ", best {best}", best=kata.clock(before))
        if attempt["hints"]:
            line += say(lang, ", with {n} hint(s)", n=attempt["hints"])
        else:
            line += say(lang, ", your {nth} clean pass", nth=kata.ordinal(summary["clean"], lang))
        return line + say(lang, ". Next review: {when}.", when=kata.in_days(summary["due"], lang))
    if attempt.get("passed"):
        return say(lang, "Kata {ex}, attempt {n}: already passed in {time}; `grade kata {ex}` starts a new one.",
                   ex=ex.id, n=attempt["n"], time=kata.clock(attempt["active_s"]))
    if attempt.get("closed"):
        return say(lang, "Kata {ex}, attempt {n}: closed without a pass; `grade kata {ex}` starts a new one.",
                   ex=ex.id, n=attempt["n"])
    return say(lang, "Kata {ex}, attempt {n}: {gradings} grading(s), {time} of active time so far (more than {idle} "
                     "minutes without a save, a grading or a hint is a break: it does not count); it stops at the "
                     "first full score.",
               ex=ex.id, n=attempt["n"], gradings=attempt["gradings"], time=kata.clock(attempt["active_s"]),
               idle=kata.BREAK_S // 60)


def started_lines(ex: Exercise, attempt: dict, root: Path, lang: str) -> list[str]:
    """After `grade kata`: where the stub is; the draw in the learner's words, and whether the statement differs
    from the one they read last (the last attempt's, else the exercise's own)."""
    lines = [say(lang, "Kata {ex} · {title}, attempt {n}: a fresh stub in {path}", ex=ex.id,
                 title=ex.text("title", lang), n=attempt["n"], path=kata.attempt_file(root, attempt))]
    if len(variants.all_draws(ex)) > 1:
        earlier = [a for a in kata.State(root).kata(ex).get("attempts", []) if a["n"] < attempt["n"]]
        before = variants.same_draw(ex, earlier[-1]["variant"]) if earlier else None
        last = before or variants.default_draw(ex)
        changed = variants.statement(ex, attempt["variant"], lang) != variants.statement(ex, last, lang)
        said = (("This attempt's variant: {variant}. Its statement differs from your last attempt's: read it."
                 if changed else "This attempt's variant: {variant}. Its statement is your last attempt's; the code "
                 "differs.") if before else
                ("This attempt's variant: {variant}. Its statement differs from the exercise's: read it." if changed
                 else "This attempt's variant: {variant}. Its statement is the exercise's."))
        lines.append(say(lang, said, variant=variants.describe(attempt["variant"], lang)))
    lines.append(say(lang, "The timer counts your active time until your first full score. Grade it with `grade {ex} "
                           "--kata`, or `grade watch {ex} --kata`; the statement is in {folder}.",
                     ex=ex.id, folder=root / attempt["folder"]))
    return lines


def today_lines(items: dict, lang: str, finished: int) -> list[str]:
    """`grade today`: the katas to do, with an estimate of the time; why there are none (`finished`: how many
    exercises the learner has finished, the only ones new katas come from)."""
    rows = [(say(lang, "started"), i) for i in items["open"]] + [(say(lang, "due"), i) for i in items["due"]] + \
        [(say(lang, "new"), i) for i in items["new"]] + [(say(lang, "early"), i) for i in items["early"]]
    if not rows:
        if not finished:
            return [say(lang, "No katas yet: katas are for the exercises you have finished. Finish one first "
                              "(`grade next` shows which), then come back.")]
        return [say(lang, "Nothing due today. Come back tomorrow, or practise one of the exercises you have finished: "
                          "`grade kata EXERCISE`.")]
    width = max(display_width(kind) for kind, _ in rows)
    title_width = max(display_width(i["exercise"].text("title", lang)) for _, i in rows)
    lines = [say(lang, "Today: {n} kata(s), about {minutes} minutes.", n=len(rows), minutes=round(items["minutes"]))]
    for kind, item in rows:
        ex = item["exercise"]
        lines.append(f"  {pad(kind, width)}  {ex.id}  {pad(ex.text('title', lang), title_width)}  "
                     + say(lang, "~{minutes} min", minutes=round(item["minutes"])))
    first = rows[0][1]["exercise"].id
    if items["open"]:
        lines.append(say(lang, "Carry on with your open attempt of {ex}: `grade watch {ex} --kata` grades it on every "
                               "save.", ex=first))
    else:
        lines.append(say(lang, "Start with `grade kata {ex}` (or just `grade kata`).", ex=first))
    if items["early"]:
        lines.append(say(lang, "Nothing is due for a few days: {ex} comes early, so that no week goes by without "
                               "practice.", ex=items["early"][0]["exercise"].id))
    return lines


def stats_lines(rows: list[dict], lang: str) -> list[str]:
    if not rows:
        return [say(lang, "No katas yet: `grade today` says where to start.")]
    head = [say(lang, h) for h in ("kata", "attempts", "passes", "hints", "best", "last done", "next review",
                                   "recall now")]
    table = [[r["exercise"], str(r["attempts"]), str(r["passes"]), str(r["hints"]), kata.clock(r["best_s"]),
              (r["last"] or "-")[:10], kata.in_days(r["due"], lang) if r["due"] else "-",
              f"{r['retention']:.0%}" if r["retention"] is not None else "-"] for r in rows]
    widths = [max(display_width(row[i]) for row in [head, *table]) for i in range(len(head))]
    lines = ["  ".join(pad(cell, w) for cell, w in zip(row, widths)).rstrip() for row in [head, *table]]
    total = sum(a["active_s"] or 0 for r in rows for a in r["history"])
    lines.append(say(lang, "{passes} passes in {attempts} attempts; {time} of active practice.",
                     passes=sum(r["passes"] for r in rows), attempts=sum(r["attempts"] for r in rows),
                     time=kata.clock(total)))
    lines.append(say(lang, "Times are active time: from an attempt's start to its first full score, less breaks (more "
                           "than {idle} minutes without a save, a grading or a hint). A pass of code you had already "
                           "(your own or the reference), in less time than typing it takes, is no best time.",
                     idle=kata.BREAK_S // 60))
    return lines


def kata_cells(kata_state: dict) -> tuple[str, str, str, str]:
    """(attempts, hints, best, due) of one exercise for `grade list` ("" when it has no attempt that counts)."""
    attempts = kata.counted(kata_state)
    if not attempts:
        return "", "", "", ""
    due = kata.due_date(kata_state)
    return (str(len(attempts)), str(sum(a["hints"] for a in attempts)), kata.clock(kata.best_time(kata_state)),
            due.date().isoformat() if due else "-")


# -- the HTML page and the export ---------------------------------------------------------------------

def history_chart(row: dict, lang: str) -> dict:
    """Per attempt, numbered as its folder is (attempt-3): the minutes of active time of each timed pass, a gap where
    an attempt did not pass or pasted its answer; the hints of each."""
    from grader.report.pages import chart

    history = row["history"]
    minutes = [a["active_s"] / 60 if a["passed"] and not a.get("copy_of") else math.nan for a in history]
    return chart({"title": say(lang, "{ex}: minutes of active time to pass, and hints, per attempt",
                               ex=row["exercise"]),
                  "series": {say(lang, "minutes"): minutes, say(lang, "hints"): [float(a["hints"]) for a in history]},
                  "x": [a["n"] for a in history], "gaps": True, "truth": {}, "log": False,
                  "xlabel": say(lang, "attempt")}, lang)


def retention_chart(row: dict, lang: str) -> dict | None:
    """Recall probability from the first review to today and two weeks on, by FSRS, a point a day."""
    from datetime import timedelta

    from fsrs import Card, Rating

    from grader.report.pages import chart

    if not row["reviews"]:
        return None
    scheduler = kata.scheduler()
    reviews = [(kata.at(r["at"]), r["rating"]) for r in row["reviews"]]

    start, end = reviews[0][0], kata.now() + timedelta(days=14)
    days = max(1, (end - start).days)
    card, points, upcoming = Card(due=start), [], list(reviews)
    for day in range(days + 1):
        moment = start + timedelta(days=day)
        while upcoming and upcoming[0][0] <= moment:
            card, _ = scheduler.review_card(card, Rating(upcoming[0][1]), review_datetime=upcoming[0][0])
            upcoming.pop(0)
        points.append(scheduler.get_card_retrievability(card, moment))
    target = scheduler.desired_retention
    return chart({"title": say(lang, "{ex}: chance of recalling it (FSRS), by day", ex=row["exercise"]),
                  "series": {say(lang, "recall"): points},
                  "marks": {say(lang, "due for review when it falls to {percent}", percent=f"{target:.0%}"): target},
                  "log": False, "xlabel": say(lang, "days since the first review")}, lang)


def write_stats_html(rows: list[dict], path: Path, lang: str) -> Path:
    from grader.report.pages import write

    katas = []
    for row in rows:
        cells = []
        for a in row["history"]:
            rating = say(lang, kata.RATING_NAMES[a["rating"]]) if a["rating"] else "-"
            time = say(lang, "passed, pasted: not timed") if a.get("copy_of") else \
                kata.clock(a["active_s"]) if a["passed"] else say(lang, "not passed")
            cells.append([a["n"], (a["started"] or "")[:16].replace("T", " "), time, a["hints"], a["gradings"],
                          rating, variants.describe(a["variant"], lang) or "-"])
        charts = [c for c in (history_chart(row, lang), retention_chart(row, lang)) if c]
        katas.append({"heading": f"{row['exercise']} · {row['title']}", "charts": charts, "rows": cells})
    return write(path, "stats.html.j2", lang=lang, title=say(lang, "Your katas"),
                 summary=stats_lines(rows, lang)[-2:], katas=katas,
                 head=[say(lang, h) for h in ("attempt", "started at", "active time", "hints", "gradings", "rating",
                                              "variant")])


def export(rows: list[dict], path: Path, workspace: Path) -> Path:
    """The learner's practice data as one JSON file to hand a teacher: nothing else, nothing sent anywhere."""
    data = {"format": "torch-katas practice export", "version": kata.VERSION, "exported": kata.now().isoformat(),
            "workspace": workspace.name, "katas": rows}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return path
