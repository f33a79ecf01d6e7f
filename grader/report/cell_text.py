"""The words a gradebook cell shows beside its score: late work and the teacher's review, in the reader's language.

Runs in: the `grade` process of a batch, a review or an export. No torch.
"""

from __future__ import annotations

from grader.text import Text, say


def late_text(cell: dict, lang: str = "en") -> str:
    """'late' or 'late 2 days (-20%)'."""
    late = cell.get("late_work")
    if not late:
        return ""
    if "days" not in late:
        return say(lang, "late")
    penalty = f"{100 * late['penalty']:g}" if late.get("penalty") else ""
    if lang == "zh":
        return f"迟交 {late['days']} 天" + (f"（-{penalty}%）" if penalty else "")
    return f"late {plural(late['days'], 'day')}" + (f" (-{penalty}%)" if penalty else "")


def review_text(cell: dict, lang: str = "en") -> str:
    """The teacher's review of a cell: 'score set to 3; 'comment' (by x, 2026-...)'."""
    review = cell.get("review")
    if not review:
        return ""
    parts = []
    if review.get("score") is not None:
        parts.append(Text("score set to {score}", "分数改为 {score}", score=f"{review['score']:g}").render(lang))
    if review.get("checks"):
        checks = ", ".join(f"{c} {say(lang, v)}" for c, v in review["checks"].items())
        parts.append(Text("checks set: {checks}", "检查结果改为：{checks}", checks=checks).render(lang))
    if review.get("comment"):
        parts.append(review["comment"])
    who = ", ".join(str(review[k]) for k in ("by", "at") if review.get(k))
    said = ("；" if lang == "zh" else "; ").join(parts)
    return said + ((f"（{who}）" if lang == "zh" else f" ({who})") if who else "")


def plural(n: int, word: str) -> str:
    """'1 student', '2 students'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
