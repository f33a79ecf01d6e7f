"""What the review page shows, read from a grades folder at each request: the class by exercise and by mistake,
one submission (its code, checks, the diff against the reference, similar submissions, flags, its reviews), and
every submission that made one mistake, side by side.

Mistakes are grouped as the checks diagnosed them (results.jsonl), not as reviewed: a group keeps its students
after the teacher overrides one of their checks, and each card says how it was reviewed. Everything here is
plain data for the templates in grader/report/templates/review/, its words in the page's language.

Runs in: the review page's process (`grade review --serve`). No torch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote, urlencode

from grader.course.exercises import Exercise
from grader.judge.result import Result
from grader.report import code_view
from grader.report.cell_text import review_text
from grader.report.pages import CELL_TEXT, STATE_TITLE, STATE_WORD, by_mistake, file_name, section
from grader.teacher.gradebook import (batch_state, build_gradebook, current_results, explained, misconceptions,
                                      read_results, total_text)
from grader.teacher.review import KEPT, REVIEW_FILE, closest, history, read_items
from grader.text import Text


class NotFound(LookupError):
    """The page names a student, exercise or mistake the batch does not have."""


def _t(lang: str, en: str, zh: str, **values) -> str:
    return Text(en, zh, **values).render(lang)


@dataclass
class Batch:
    """A grades folder as the page reads it now: the gradebook with the reviews applied, the results as graded."""

    out: Path
    lang: str
    exercises: list[Exercise]
    book: dict
    current: dict[tuple[str, str], Result]  # (student, exercise id) -> the result as it counts, reviews applied
    graded: dict[tuple[str, str], Result]  # ... as the checks said it
    similar: list[dict]
    items: dict[tuple[str, str], dict]  # (exercise id, name) -> its rubric item (review.toml)

    def rubric(self, exercise: str) -> list[dict]:
        """The rubric items of an exercise, as the forms offer them."""
        return [{**item, "label": (f"{item['points']:+g} " if item["points"] else "") + (item["text"] or item["name"])}
                for (ex, _), item in self.items.items() if ex == exercise]

    def exercise(self, key: str) -> Exercise:
        found = next((ex for ex in self.exercises if ex.id == key), None)
        if found is None:
            raise NotFound(Text("no exercise {ex} in this batch", "这批作业中没有练习 {ex}", ex=key)
                           + closest(key, [ex.id for ex in self.exercises]))
        return found

    @functools.cached_property
    def rows(self) -> dict[str, dict]:
        return {row["student"]: row for row in self.book["rows"]}

    def row(self, student: str) -> dict:
        found = self.rows.get(student)
        if found is None:
            raise NotFound(Text("no student {student} in this batch", "这批作业中没有学生 {student}", student=student)
                           + closest(student, list(self.rows)))
        return found

    @functools.cached_property
    def mistakes(self) -> list[dict]:
        """Each mistake of each exercise, as the checks diagnosed it: most made first."""
        entries = misconceptions(list(self.graded.values()), self.lang)
        return by_mistake(explained(entries, self.exercises, self.lang))


# What the page read last, kept while the files it came from are unchanged (their size and time of change): a rerun
# or a `grade review` from the command line shows at the next request, and a review the page writes re-reads
# review.toml alone. (grades folder, language) -> (stamp of the batch's files, its state and results, stamp of
# review.toml, the Batch)
_KEPT: dict[tuple[Path, str], tuple] = {}
GRADED_FILES = ("batch.json", "results.jsonl", "roster.json")


def stamp(out: Path, names) -> tuple:
    """The size and time of change of each file named in `out` (None for one that is not there)."""
    stamps: list[tuple[int, int] | None] = []
    for name in names:
        try:
            stat = (Path(out) / name).stat()
            stamps.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def titled(exercise: Exercise) -> dict[str, Text]:
    """Each check's title in both languages, as its module writes it now (a result keeps the batch's language)."""
    return {c["id"]: Text(c["title"], c["zh"] or c["title"]) for c in exercise.declared_checks()
            if c["title"] != f"test_{c['id']}"}


def load(out: Path, lang: str) -> Batch:
    """The batch in `out` now (ReviewError without one, or with a review.toml that does not read); read again only
    where its files changed."""
    key = (Path(out).resolve(), lang)
    graded_stamp, review_stamp = stamp(out, GRADED_FILES), stamp(out, [REVIEW_FILE])
    kept = _KEPT.get(key)
    if kept and kept[0] == graded_stamp and kept[2] == review_stamp:
        return kept[3]
    if kept and kept[0] == graded_stamp:
        state, graded = kept[1]
    else:
        state = batch_state(out)
        titles = {ex.id: titled(ex) for ex in state["exercises"]}
        graded = [replace(r, checks=[replace(c, title=titles[r.exercise].get(c.id, c.title)) for c in r.checks])
                  for r in read_results(Path(out) / "results.jsonl") if r.exercise in titles]
    exercises = state["exercises"]
    current = current_results(graded, exercises, out, state["assignment"])
    book = build_gradebook(current, exercises, state["students"], state["problems"], state["roster"], state["similar"],
                           lang)
    batch = Batch(out=Path(out), lang=lang, exercises=exercises, book=book,
                  current={(r.student or "", r.exercise): r for r in current},
                  graded={(r.student or "", r.exercise): r for r in graded}, similar=state["similar"] or [],
                  items=read_items(out))
    _KEPT[key] = (graded_stamp, (state, graded), review_stamp, batch)
    return batch


# -- links ------------------------------------------------------------------------------------------------------

def submission_link(student: str, exercise: str, group: dict | None = None) -> str:
    return f"/s/{quote(student, safe='')}/{quote(exercise, safe='')}" + (f"?{urlencode(group)}" if group else "")


def group_of(mistake: dict) -> dict:
    """The query naming a mistake: its key, or for a failed check without one, the check."""
    return {"exercise": mistake["exercise"], **({"key": mistake["key"]} if mistake["key"] else
                                                {"check": mistake["check"]})}


def mistake_link(group: dict) -> str:
    return f"/mistake?{urlencode(group)}"


# -- the class ------------------------------------------------------------------------------------------------

def cell_view(student: str, ex_id: str, cell: dict, lang: str) -> dict:
    """A gradebook cell on the page: its score or state, a class for its colour, a link to the submission."""
    state, score = cell["state"], cell["score"]
    if state == "graded":
        kind, text = ("full" if score >= cell["max_score"] else "partial" if score > 0 else "zero"), f"{score:g}"
    else:
        kind = state.replace(" ", "_")
        text = CELL_TEXT[state].render(lang) if state in CELL_TEXT else f"{STATE_WORD[state].render(lang)} {score:g}"
    reviewed = review_text(cell, lang)
    title = STATE_TITLE[state].render(lang) if state in STATE_TITLE else f"{score:g}/{cell['max_score']:g}"
    return {"kind": kind, "text": text + (" *" if reviewed else ""),
            "title": " | ".join(filter(None, (title, reviewed))),
            "score": f"{score:g}/{cell['max_score']:g}" if state == "graded" else text,
            "link": "" if state == "missing" else submission_link(student, ex_id)}


def class_page(batch: Batch) -> dict:
    """The class by mistake (each exercise's mistakes, how many made each, how many of them are reviewed), then by
    exercise (the gradebook, each cell a link to the submission)."""
    lang, t = batch.lang, functools.partial(_t, batch.lang)
    every = batch.mistakes
    groups = []
    for ex in batch.exercises:
        mistakes = []
        for m in (m for m in every if m["exercise"] == ex.id):
            reviewed = sum(1 for s in m["students"] if (r := batch.current.get((s, ex.id))) and r.review)
            mistakes.append({"label": m["label"], "meaning": m["meaning"], "titles": m["title"],
                             "count": t("{n} of {of}", "{of} 名中的 {n} 名", n=m["count"], of=m["submitted"]),
                             "reviewed": t("{n} reviewed", "已复核 {n} 名", n=reviewed) if reviewed else "",
                             "link": mistake_link(group_of(m)), "students": m["students"]})
        groups.append({"heading": f"{ex.id} · {ex.text('title', lang)}", "mistakes": mistakes})
    rows = [{"student": row["student"], "name": row.get("name", ""), "total": total_text(row, "–"),
             "cells": [cell_view(row["student"], ex.id, row["cells"][ex.id], lang) for ex in batch.exercises]}
            for row in batch.book["rows"]]
    return {"title": t("Review: {out}", "复核：{out}", out=batch.out.name), "groups": groups, "rows": rows,
            "exercises": [{"id": ex.id, "title": ex.text("title", lang)} for ex in batch.exercises],
            "total": t("total /{max}", "总分 /{max}", max=f"{batch.book['max_total']:g}")}


WORDS = {  # the page's own words: key -> (English, Chinese)
    "class": ("The class", "全班"), "by_mistake": ("By mistake", "按错误"), "by_exercise": ("By exercise", "按练习"),
    "none": ("No failed checks.", "没有未通过的检查。"), "student": ("student", "学生"), "name": ("name", "姓名"),
    "prev": ("previous", "上一份"), "next": ("next", "下一份"), "up": ("back to the list", "回到列表"),
    "code": ("Code", "代码"), "checks": ("Checks", "检查"), "diff": ("Diff against the reference", "与参考答案的差异"),
    "reference": ("Reference", "参考答案"), "same": ("Same as the reference.", "与参考答案相同。"),
    "similar": ("Similar submissions", "相似的提交"), "identical": ("identical files", "文件完全相同"),
    "flags": ("Flagged for a look", "需要人工查看"), "problems": ("Problems", "问题"),
    "history": ("Reviews so far", "已有的复核"), "no_history": ("Not reviewed yet.", "还没有复核。"),
    "review": ("Your review", "你的复核"), "score": ("Score (empty: the checks decide)", "分数（留空：由检查决定）"),
    "bonus": ("a bonus: the score may pass the exercise's points", "加分：分数可以超过满分"),
    "rubric": ("Rubric items", "评分项"),
    "new_item": ("A new rubric item of this exercise (the same name again changes it for every submission)",
                 "这道练习的新评分项（同名再定义一次，会改动所有用到它的提交）"),
    "item_name": ("Name", "名称"), "item_points": ("Points, relative to the checks' score (-2, 1)",
                                                  "分数，相对检查的得分（-2、1）"),
    "item_text": ("What the student reads", "学生会读到的说明"), "define": ("Define the item", "定义评分项"),
    "check": ("Check", "检查"), "keep": ("as graded", "保持评分结果"), "passed": ("passed", "已通过"),
    "failed": ("failed", "未通过"), "comment": ("Comment the student reads", "学生会读到的评语"),
    "file": ("Of two files, the one to grade (used by the next grade batch)",
             "两个文件中要评分的那个（下次 grade batch 时使用）"),
    "save": ("Save the review", "保存复核"), "apply": ("Apply to the selected submissions", "应用到选中的提交"),
    "open": ("open alone", "单独打开"), "back": ("Back to the class", "回到全班"),
    "keyboard": ("Keys: j/k move, o open, x select, n/p next/previous submission, c comment, u back to the list, "
             "Ctrl+Enter save.",
             "快捷键：j/k 移动，o 打开，x 选中，n/p 下一份/上一份提交，c 写评语，u 回到列表，Ctrl+Enter 保存。"),
}


def words(lang: str) -> dict:
    """The page's own words in `lang` (the checks' messages come in the batch's language)."""
    return {key: Text(en, zh).render(lang) for key, (en, zh) in WORDS.items()} | {
        "other_lang": "中文" if lang == "en" else "English"}


# -- one submission -------------------------------------------------------------------------------------------

def kept_file(out: Path, result: Result) -> Path | None:
    """The kept copy of the file a result graded (out/files/<student>/<name>), None where there is none."""
    name = Path(result.submission).name
    if not result.submission or not result.student or any(part in ("", ".", "..") or "/" in part
                                                            for part in (result.student, name)):
        return None
    return out / KEPT / file_name(result.student) / name


def code(out: Path, result: Result | None, lang: str) -> dict:
    """The student's graded file as the page shows it: a notebook as cells, other files as lines; its text
    (`text`, for the diff) and a note when it is cut or not kept."""
    path = kept_file(out, result) if result else None
    try:
        stat = path.lstat() if path else None
    except OSError:
        stat = None
    shown = _shown(path, stat.st_mtime_ns, stat.st_size, lang) if path and stat else None
    if shown is None:
        return {"name": "", "cells": None, "lines": [], "text": "", "note": _t(
            lang, "No graded file of this exercise is kept in this folder.", "这个文件夹里没有这道练习被评分的文件。")}
    return shown


@functools.lru_cache(maxsize=4096)
def _shown(path: Path, mtime_ns: int, size: int, lang: str) -> dict | None:
    """code()'s answer for the kept file at `path` as it is now (highlighted once while it stays the same)."""
    from grader.sandbox.safefs import read_regular
    from grader.sandbox.source import MAX_SOURCE

    try:
        data = read_regular(str(path), MAX_SOURCE)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    notebook = path.suffix == ".ipynb"
    cells = code_view.cells(text) if notebook else None
    cut = not cells and len(text) > code_view.MAX_SHOWN
    shown = text[:code_view.MAX_SHOWN]
    return {"name": path.name, "cells": cells, "lines": [] if cells else code_view.highlighted(shown),
            "text": code_view.code_of(text, notebook),
            "note": _t(lang, "Only the first {n} characters are shown.", "只显示前 {n} 个字符。", n=len(shown))
            if cut else ""}


def reference(exercise: Exercise, shown: dict, lang: str) -> dict:
    """The reference solution (highlighted) and the diff from it to the student's code as `shown` (none without a
    file); empty where the course ships no solution."""
    try:
        solution = exercise.solution.read_text(encoding="utf-8")
    except OSError:
        return {"lines": [], "diff": [], "none": _t(lang, "No reference solution here.", "这里没有参考答案。")}
    diff = code_view.diff(solution, shown["text"], (exercise.solution.name, shown["name"])) if shown["name"] else []
    return {"lines": code_view.highlighted(solution), "diff": diff, "none": ""}


def neighbours(batch: Batch, student: str, exercise: str, group: dict | None) -> dict:
    """The previous and next submission of the list the teacher walks: the mistake's students, or the exercise's."""
    if group:
        students = mistake_students(batch, group)
    else:
        students = [row["student"] for row in batch.book["rows"] if (row["student"], exercise) in batch.current]
    at = students.index(student) if student in students else -1
    link = functools.partial(submission_link, exercise=exercise, group=group)
    return {"prev": link(students[at - 1]) if at > 0 else "",
            "next": link(students[at + 1]) if 0 <= at < len(students) - 1 else "",
            "up": mistake_link(group) if group else "/", "at": f"{at + 1}/{len(students)}" if at >= 0 else ""}


def entry_text(entry: dict, lang: str) -> str:
    """One review entry as a line: what it set (the file to grade too), who and when."""
    said = review_text({"review": entry}, lang)
    if not entry.get("file"):
        return said
    if not said.lstrip().startswith(("(", "（")):  # more than who and when
        said = _t(lang, "; {said}", "；{said}", said=said)
    return _t(lang, "file to grade: {file}{said}", "要评分的文件：{file}{said}", file=entry["file"], said=said)


def submission_page(batch: Batch, student: str, exercise: str, group: dict | None = None) -> dict:
    """One submission: who and what, its score and review, the code, the checks with their messages, the reference
    and the diff against it, similar submissions, flags and problems, its reviews one by one, and the form."""
    lang, t = batch.lang, functools.partial(_t, batch.lang)
    ex, row = batch.exercise(exercise), batch.row(student)
    result = batch.current.get((student, ex.id))
    cell = row["cells"][ex.id]
    shown = code(batch.out, result, lang)
    similar = [{"students": [s for s in p["students"] if s != student], "identical": p["identical"],
                "shared": f"{100 * p['similarity']:.0f}%"}
               for p in batch.similar if p["exercise"] == ex.id and student in p["students"]]
    for p in similar:
        p["links"] = [(s, submission_link(s, ex.id)) for s in p["students"]]
    flags = [t("{what} (line {line})", "{what}（第 {line} 行）", what=f["what"], line=f["line"])
             for f in (result.flags if result else [])]
    problems = [cell["message"]] if cell["state"] == "needs a look" else []
    problems += [p for p in row["problems"] if p not in problems]
    return {"title": f"{row.get('name') or student} · {ex.id} · {ex.text('title', lang)}", "student": student,
            "exercise": ex.id, "score": cell_view(student, ex.id, cell, lang)["title"],
            "review": review_text(cell, lang),
            "section": section(result, lang, show_heading=False, cell=cell) if result else None,
            "code": shown, "reference": reference(ex, shown, lang), "similar": similar, "flags": flags,
            "problems": problems, "history": [entry_text(entry, lang) for entry in history(batch.out, student, ex.id)],
            "nav": neighbours(batch, student, ex.id, group),
            "checks": [{"id": c.id, "title": c.title.render(lang)} for c in (result.checks if result else [])],
            "rubric": batch.rubric(ex.id), "group": group or {}}


# -- one mistake, every submission that made it -------------------------------------------------------------

def _made(result: Result, group: dict) -> list:
    """The failed checks of `result` that are this mistake (a check that failed after another one is left out)."""
    return [c for c in result.checks if c.outcome == "failed" and not c.after
            and (c.key == group["key"] if "key" in group else (c.key is None and c.id == group["check"]))]


def mistake_students(batch: Batch, group: dict) -> list[str]:
    ex = batch.exercise(group.get("exercise", ""))
    return [row["student"] for row in batch.book["rows"]
            if (r := batch.graded.get((row["student"], ex.id))) and not r.grader_failure and _made(r, group)]


def mistake_page(batch: Batch, group: dict) -> dict:
    """Every submission that made one mistake: one card per code (the same code, comments and layout aside, as the
    batch hashed it: `code_hash`) with its students, their reviews, the messages for the mistake and the code once,
    most handed in first; one form applies a comment, a score or a check's verdict to the students selected (a card's
    students, all of them at once)."""
    lang, t = batch.lang, functools.partial(_t, batch.lang)
    ex = batch.exercise(group.get("exercise", ""))
    students = mistake_students(batch, group)
    if not students:
        raise NotFound(Text("no submission of {ex} made this mistake", "{ex} 没有提交犯了这个错误", ex=ex.id))
    entry = next((m for m in batch.mistakes if group_of(m) == group), None)
    same: dict[str, list[str]] = {}
    for student in students:
        graded = batch.graded[(student, ex.id)]
        same.setdefault(graded.code_hash or f"student:{student}", []).append(student)  # no hash: a card alone
    cards, checks = [], {}
    for members in sorted(same.values(), key=len, reverse=True):
        first = members[0]
        made = _made(batch.graded[(first, ex.id)], group)
        checks.update({c.id: c.title.render(lang) for c in made})
        people = []
        for student in members:
            row = batch.row(student)
            people.append({"student": student, "name": row.get("name", ""),
                           "cell": cell_view(student, ex.id, row["cells"][ex.id], lang),
                           "review": review_text(row["cells"][ex.id], lang),
                           "link": submission_link(student, ex.id, group)})
        cards.append({"students": people, "messages": [c.message.render(lang) for c in made],
                      "same": t("{n} submissions with this code (comments and layout aside)",
                                "{n} 份提交是这份代码（不计注释和排版）", n=len(members)) if len(members) > 1 else "",
                      "code": code(batch.out, batch.current.get((first, ex.id)), lang)})
    label = group.get("key") or t("not diagnosed: {check}", "未诊断：{check}", check=group.get("check", ""))
    return {"title": t("{ex}: {label}, {n} submissions", "{ex}：{label}，{n} 份提交", ex=ex.id, label=label,
                       n=len(students)),
            "meaning": entry["meaning"] if entry else "", "exercise": ex.id, "cards": cards,
            "checks": [{"id": cid, "title": title} for cid, title in checks.items()],
            "rubric": batch.rubric(ex.id), "group": group}
