"""The words a gradebook cell shows beside its score: late work and the teacher's review, in the reader's language.

Runs in: the `grade` process of a batch, a review or an export. No torch.
"""

from __future__ import annotations

from grader.text import Text, say


def late_text(cell: dict, lang: str = "en") -> str:
    """'late', 'late 2 days (-20%)', 'late 2 days (the teacher's score is final)', 'excused', with the student's own
    due date where they have an extension ('on time (extended to ...)' within it)."""
    late = cell.get("late_work")
    if not late:
        return ""
    if late.get("excused"):
        return Text("excused", "已免除").render(lang)
    extended = Text(" (extended to {due})", "（延期至 {due}）", due=late.get("due", "")).render(lang) \
        if late.get("extended") else ""
    if not late.get("late"):
        return Text("on time{extended}", "按时{extended}", extended=extended).render(lang) if extended else ""
    if "days" not in late:
        return say(lang, "late") + extended
    penalty = f"{100 * late['penalty']:g}" if late.get("penalty") else ""
    if late.get("final"):
        said = Text(" (the teacher’s score is final)", "（以老师给的分数为准）").render(lang)
    else:
        said = Text(" (-{penalty}%)", "（-{penalty}%）", penalty=penalty).render(lang) if penalty else ""
    if lang == "zh":
        return f"迟交 {late['days']} 天{said}{extended}"
    return f"late {plural(late['days'], 'day')}{said}{extended}"


def review_text(cell: dict, lang: str = "en", teacher: bool = False) -> str:
    """The teacher's review of a cell: 'score set to 3; 'comment' (by x, 2026-...)'; for the `teacher`, marked stale
    when the student handed in another file after it."""
    review = cell.get("review")
    if not review:
        return ""
    parts = []
    if review.get("score") is not None:
        parts.append(Text("score set to {score}", "分数改为 {score}", score=f"{review['score']:g}").render(lang)
                     + (Text(" (bonus)", "（加分）").render(lang) if review.get("bonus") else ""))
    if review.get("checks"):
        checks = ", ".join(f"{c} {say(lang, v)}" for c, v in review["checks"].items())
        parts.append(Text("checks set: {checks}", "检查结果改为：{checks}", checks=checks).render(lang))
    for item in review.get("rubric", []):
        parts.append((f"{item['points']:+g} " if item["points"] else "") + (item["text"] or item["name"]))
    if review.get("comment"):
        parts.append(review["comment"])
    who = ", ".join(str(review[k]) for k in ("by", "at") if review.get(k))
    said = ("；" if lang == "zh" else "; ").join(parts)
    said += (f"（{who}）" if lang == "zh" else f" ({who})") if who else ""
    if teacher and review.get("stale"):
        said += Text(" [stale: the file changed after this review; `grade review … --confirm` keeps it]",
                     "［已过时：复核之后文件又换了；`grade review … --confirm` 保留它］").render(lang)
    return said


def plural(n: int, word: str) -> str:
    """'1 student', '2 students'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
