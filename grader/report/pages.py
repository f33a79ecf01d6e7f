"""Self-contained HTML reports: a learner's page (checks, loss curves, parameter traces) and, in batch
mode, the teacher's class page (what the class got wrong, the gradebook, the score histogram, per-check
pass rates, problems). Charts are inline SVG written here: no network, no plotting library, and a few
milliseconds a chart, so a class of 500 gets its pages in seconds.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from urllib.parse import quote

from grader.report.terminal import points_text, score_text
from grader.judge.result import MARKS, Result
from grader.text import Text, say

STYLE = """body{font-family:system-ui,"PingFang SC","Microsoft YaHei","Noto Sans CJK SC","Noto Sans SC",sans-serif;
max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}th,td.num{white-space:nowrap}.passed{color:#18794e}.failed{color:#c62828}.not_started{color:#8a6d00}.note{background:#fff5e6;
padding:8px;border-left:4px solid #f0a020}svg{max-width:100%;height:auto}svg text{font-size:11px;fill:#444}
.book td{white-space:nowrap}.book th{cursor:pointer;position:sticky;top:0;background:#f6f6f6}
.book a{text-decoration:none;color:inherit}.full{background:#e6f4ea}.partial{background:#fff8e1}
.zero{background:#fdecea}
.missing{color:#999}.error,.crashed,.timeout{background:#ffe0b2;font-weight:bold}.tampered{background:#e1bee7;font-weight:bold}
.grader_error{background:#cfd8dc;font-style:italic}.look{color:#c62828;font-weight:bold}.num{text-align:right}
code{background:#f3f3f3;padding:0 3px;white-space:nowrap}.checks .msg{color:#333;margin-top:4px}
@media (max-width:700px){table{display:block;overflow-x:auto}}"""
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def _finite(values) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi]."""
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def svg_chart(curve: dict, lang: str = "en") -> str:
    """One recorded curve as an inline SVG line chart.

    The reference series and true values fix the visible range, so a diverging learner's curve cannot
    flatten everything else: it is drawn until it leaves the chart, marked there, and not after (an
    oscillating, exploding curve would otherwise cross the chart at every step, a solid band).
    """
    width, height, left, right, top, bottom = 640, 300, 60, 170, 30, 40
    series = curve["series"]
    truth = curve.get("truth", {})
    every = [v for values in series.values() for v in _finite(values)] + list(truth.values())
    log = bool(curve.get("log")) and bool(every) and min(every) > 0
    scale = math.log10 if log else (lambda v: v)
    anchor = [scale(v) for name, values in series.items() if "yours" not in name for v in _finite(values)]
    anchor += [scale(v) for v in truth.values()]
    shown = [scale(v) for v in every] or [0.0]
    lo, hi = min(shown), max(shown)
    if anchor:
        a_lo, a_hi = min(anchor), max(anchor)
        pad = 0.5 * (a_hi - a_lo) or 1.0
        if lo < a_lo - pad or hi > a_hi + pad or len(every) < sum(map(len, series.values())) + len(truth):
            lo, hi = a_lo - pad, a_hi + pad
    if hi - lo < 1e-12:
        lo, hi = lo - 1.0, hi + 1.0
    margin = 0.06 * (hi - lo)  # nothing drawn on the frame: a true value at the edge stays visible
    lo, hi = lo - margin, hi + margin
    steps = max((len(v) for v in series.values()), default=1)
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_at(i: int) -> float:
        return left + plot_w * (i / max(1, steps - 1))

    def y_at(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    parts = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>']
    for t in nice_ticks(lo, hi):
        label = f"1e{t:g}" if log else f"{t:.4g}"
        parts.append(f'<line x1="{left - 4}" x2="{left + plot_w}" y1="{y_at(t):.1f}" y2="{y_at(t):.1f}" '
                     f'stroke="#eee"/><text x="{left - 6}" y="{y_at(t) + 4:.1f}" text-anchor="end">{label}</text>')
    for t in nice_ticks(0, max(1, steps - 1)):
        if t == int(t):
            parts.append(f'<text x="{x_at(int(t)):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{int(t)}</text>')
    xlabel = curve.get("xlabel", "step")
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">{html.escape(xlabel)}</text>')
    for name, value in truth.items():
        y = y_at(scale(value))
        label_y = y - 4 if y - 16 > top else y + 13  # inside the plot, clear of the title above it
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="gray" '
                     f'stroke-dasharray="5,4"/><text x="{left + 4}" y="{label_y:.1f}">'
                     f'{html.escape(say(lang, "true {name} = {value}", name=name, value=f"{value:g}"))}</text>')
    left_at = []
    for n, (name, values) in enumerate(series.items()):
        color = COLORS[n % len(COLORS)]
        points = []
        for i, v in enumerate(values):
            inside = math.isfinite(v) and (not log or v > 0) and lo <= scale(v) <= hi
            if not inside:
                edge = top if not math.isfinite(v) or scale(v) > hi else top + plot_h
                parts.append(f'<text x="{x_at(i):.1f}" y="{edge + (10 if edge == top else -3)}" fill="{color}" '
                             f'text-anchor="middle">{"▲" if edge == top else "▼"}</text>')
                left_at.append(i)
                break
            points.append(f"{x_at(i):.1f},{y_at(scale(v)):.1f}")
        if points:
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{" ".join(points)}"/>')
        y = top + 14 * n + 6
        legend = html.escape(series_label(name, lang))
        parts.append(f'<line x1="{width - right + 10}" x2="{width - right + 30}" y1="{y}" y2="{y}" stroke="{color}" '
                     f'stroke-width="2"/><text x="{width - right + 34}" y="{y + 4}">{legend}</text>')
    leaves = say(lang, " (your curve leaves the chart at {xlabel} {at})", xlabel=xlabel, at=min(left_at)) \
        if left_at else ""
    title = curve["title"] + leaves
    parts.insert(0, f'<text x="{left}" y="{top - 10}" font-weight="bold">{html.escape(title)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="{html.escape(title)}">{"".join(parts)}</svg>')


SERIES = {"yours": Text("yours", "你的"), "reference": Text("reference", "参考")}


def series_label(name: str, lang: str) -> str:
    """A series' legend: "yours", "reference", or a value's "w (yours)", in `lang` (other names as they are)."""
    value, _, whose = name.rpartition(" (")
    if value and whose.endswith(")") and whose[:-1] in SERIES:
        return f"{value} ({SERIES[whose[:-1]].render(lang)})"
    return SERIES[name].render(lang) if name in SERIES else name


def diverged(curve: dict) -> bool:
    """The learner's series ends not finite, or far above where it started."""
    values = curve["series"].get("yours", [])
    if not values:
        return False
    return not math.isfinite(values[-1]) or (len(values) > 1 and values[-1] > 10 * abs(values[0]) + 1e-12)


DIVERGED = ("Your loss grew instead of shrinking. That usually means the learning rate is too large, "
            "or the gradients are not zeroed each step (they accumulate), or the update has the wrong sign.")


def check_table(result: Result, lang: str = "en") -> str:
    """A row per check: its mark, its title with the feedback under it, its points (readable on a phone too)."""
    rows = "".join(
        f"<tr class='{c.outcome}'><td>{MARKS[c.outcome]}</td><td>{html.escape(c.title.render(lang))}"
        + (f"<div class='msg'>{html.escape(c.message.render(lang))}</div>" if c.message.render(lang) else "")
        + f"</td><td class='num'>{html.escape(points_text(c, lang))}</td></tr>"
        for c in result.checks)
    head = "".join(f"<th>{say(lang, word)}</th>" for word in ("check", "points"))
    return f"<table class='checks'><tr><th></th>{head}</tr>{rows}</table>"


def heading(result: Result, lang: str = "en") -> str:
    return f"{result.exercise} · {result.title.render(lang) or result.name}"


def message_html(message: str) -> str:
    """A result's message: inline, or preformatted when it has several lines (a load error's line and caret)."""
    if "\n" in message:
        return f"<pre>{html.escape(message)}</pre>"
    return html.escape(message)


def result_section(result: Result, lang: str = "en", show_heading: bool = True, cell: dict | None = None) -> str:
    """One result's section; `cell`, in a batch, is the gradebook's cell (the teacher's review, late work)."""
    parts = [f"<h2 id='{html.escape(result.exercise)}'>{html.escape(heading(result, lang))}</h2>"] if show_heading \
        else []
    cell = cell or {}
    if cell.get("review"):
        from grader.report.cell_text import review_text

        parts.append(f"<p class='note'><b>{html.escape(say(lang, 'Your teacher’s review:'))}</b> "
                     f"{html.escape(review_text(cell, lang))}</p>")
    if cell.get("late_work"):
        from grader.report.cell_text import late_text

        parts.append(f"<p class='note'>{html.escape(late_text(cell, lang))} "
                     f"{html.escape(cell.get('submitted', ''))}</p>")
    if cell.get("state") == "needs a look":
        parts.append(f"<p class='note'>{html.escape(say(lang, 'Your teacher needs to look at this submission:'))} "
                     f"{html.escape(cell['message'])}</p>")
    elif result.grader_failure:
        parts.append(f"<p class='note'>{say(lang, GRADER_FAILED)}</p>")
    else:
        status = Text("({status})", "（{status}）", status=say(lang, result.status)).render(lang)
        parts.append(f"<p><b>{html.escape(score_text(result, lang))}</b> {html.escape(status)}</p>")
        if result.message.render(lang):
            parts.append(message_html(result.message.render(lang)))
    parts.append(check_table(result, lang))
    for curve in result.curves:
        if diverged(curve):
            parts.append(f"<p class='note'>{html.escape(say(lang, DIVERGED))}</p>")
        parts.append(svg_chart(curve, lang))
    if result.output:
        parts.append(f"<p>{html.escape(say(lang, 'Your code printed:'))}</p><pre>{html.escape(result.output)}</pre>")
    return "\n".join(parts)


GRADER_FAILED = "The grader failed on this exercise (not your code): it will be regraded."


def page(title: str, body: str, script: str = "", lang: str = "en") -> str:
    return (f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>\n{body}\n"
            + (f"<script>{script}</script>" if script else "") + "</body></html>\n")


def write_report(results: list[Result], path: Path, title: str, notes: list[Text] | None = None,
                 lang: str = "en", total: tuple[float, float] | None = None,
                 cells: dict[str, dict] | None = None) -> Path:
    """One page for one learner, in `lang`: the total (in a batch), every result's checks and charts, then notes
    (missing files, problems). A section's heading is left out when it would repeat the page's title (a
    one-exercise report). `cells`, in a batch: the gradebook's cell of each exercise (review, late work)."""
    said = say(lang, "Total: {score}/{max_score}", score=f"{total[0]:g}", max_score=f"{total[1]:g}") if total else ""
    body = [f"<p><b>{html.escape(said)}</b></p>"] if total else []
    body += [result_section(r, lang, show_heading=heading(r, lang) != title, cell=(cells or {}).get(r.exercise))
             for r in results]
    notes = [note for r in results for note in r.notes] + list(notes or [])
    if notes:
        body.append(f"<h2>{say(lang, 'Notes on your submission')}</h2><ul>"
                    + "".join(f"<li>{html.escape(Text.of(n).render(lang))}</li>" for n in notes) + "</ul>")
    path.write_text(page(title, "\n".join(body), lang=lang), encoding="utf-8")
    return path


# -- the class page (in the teacher's language, `lang`) --

def _t(lang: str, en: str, zh: str, **values) -> str:
    return Text(en, zh, **values).render(lang)


CELL_TEXT = {"missing": Text("missing", "未提交"), "error": Text("error", "出错"),
             "grader error": Text("grader error: regrade", "评分器出错：请重评"),
             "needs a look": Text("look", "待查看")}
STATE_TITLE = {
    "needs a look": Text("needs a look: no score until the teacher chooses (see the problems)",
                         "需要查看：老师决定之前没有分数（见问题）"),
    "missing": Text("no file submitted", "没有提交文件"),
    "error": Text("the file could not be graded (see the feedback)", "文件无法评分（见反馈）"),
    "timeout": Text("ran past its time limit", "超过了时间限制"),
    "crashed": Text("crashed the sandbox", "让沙箱崩溃了"),
    "tampered": Text("tampered with the grader: 0", "篡改了评分器：0 分"),
    "grader error": Text("the grader failed, not the student: run grade batch again to regrade",
                         "是评分器出错，不是学生的问题：再运行一次 `grade batch` 重新评分"),
}
STATE_WORD = {"timeout": Text("timeout", "超时"), "crashed": Text("crashed", "崩溃"),
              "tampered": Text("tampered", "篡改"), "graded": Text("graded", "已评分")}
SCRIPT = """const book=document.getElementById('book'),body=book.tBodies[0],filter=document.getElementById('filter');
filter.hidden=false;filter.addEventListener('input',()=>{const q=filter.value.toLowerCase();
for(const tr of body.rows)tr.hidden=!tr.textContent.toLowerCase().includes(q);});
book.tHead.addEventListener('click',e=>{const th=e.target.closest('th');if(!th)return;const i=th.cellIndex,
up=th.dataset.dir!=='asc';th.dataset.dir=up?'asc':'desc';const key=td=>td.dataset.v??td.textContent;
const rows=[...body.rows].sort((a,b)=>{const x=key(a.cells[i]),y=key(b.cells[i]);
const c=(a.cells[i].dataset.v!==undefined)?x-y:x.localeCompare(y,undefined,{numeric:true});return up?c:-c;});
body.append(...rows);});"""


def feedback_link(student: str, exercise: str = "") -> str:
    return f"feedback/{quote(student)}.html" + (f"#{exercise}" if exercise else "")


def _cell(student: str, ex_id: str, cell: dict, lang: str) -> str:
    state, score = cell["state"], cell["score"]
    if state == "graded":
        kind = "full" if score >= cell["max_score"] else "partial" if score > 0 else "zero"
        text = f"{score:g}"
    else:
        kind = state.replace(" ", "_")
        text = CELL_TEXT[state].render(lang) if state in CELL_TEXT else f"{STATE_WORD[state].render(lang)} {score:g}"
    value = {"missing": -1, "grader error": -2, "needs a look": -3}[state] if score is None else score
    title = STATE_TITLE[state].render(lang) if state in STATE_TITLE else f"{score:g}/{cell['max_score']:g}"
    if state == "needs a look":
        title = _t(lang, "needs a look: {why}", "需要查看：{why}", why=cell["message"])
    from grader.report.cell_text import late_text, review_text

    reviewed = review_text(cell, lang)
    marks = [mark for mark in (late_text(cell, lang), reviewed and _t(lang, "reviewed: {review}", "已复核：{review}",
                                                                         review=reviewed)) if mark]
    if marks:
        text += " *" if reviewed else _t(lang, " (late)", "（迟交）")
        title += " | " + " | ".join(marks)
    return (f"<td class='{kind} num' data-v='{value:g}' title='{html.escape(title)}'>"
            f"<a href='{feedback_link(student, ex_id)}'>{html.escape(text)}</a></td>")


def _gradebook_table(book: dict, lang: str) -> str:
    exercises = book["exercises"]
    named = any(row.get("name") for row in book["rows"])
    head = f"<th>{_t(lang, 'student', '学生')}</th>" + (f"<th>{_t(lang, 'name', '姓名')}</th>" if named else "")
    head += "".join(f"<th title='{html.escape(ex['title'])}'>{ex['id']}</th>" for ex in exercises)
    total = _t(lang, "total /{max}", "总分 /{max}", max=f"{book['max_total']:g}")
    head += f"<th>{total}</th><th>{_t(lang, 'problems', '问题')}</th>"
    rows = []
    for row in book["rows"]:
        student = row["student"]
        cells = [f"<td><a href='{feedback_link(student)}'>{html.escape(student)}</a></td>"]
        if named:
            cells.append(f"<td>{html.escape(row.get('name', ''))}</td>")
        cells += [_cell(student, ex["id"], row["cells"][ex["id"]], lang) for ex in exercises]
        cells.append(f"<td class='num' data-v='{row['total']:g}'>{row['total']:g}</td>")
        notes = row["problems"]
        cells.append(f"<td class='num{' look' if notes else ''}' data-v='{len(notes)}' "
                     f"title='{html.escape(' | '.join(notes))}'>{len(notes) or ''}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    placeholder = _t(lang, "filter: a name, an id, missing, error...", "筛选：姓名、学号、未提交、出错……")
    return (f"<input id='filter' hidden placeholder='{html.escape(placeholder)}' size='40'>"
            f"<table id='book' class='book'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def by_mistake(entries: list[dict]) -> list[dict]:
    """The misconceptions as a teacher reads them: one entry per named mistake of an exercise (the students
    who made it in any check, the checks' titles joined); a failed check without a name stays on its own."""
    merged: dict[tuple, dict] = {}
    for m in entries:
        group = merged.setdefault((m["exercise"], m["key"] or m["check"], m["key"] is None),
                                  {**m, "students": [], "titles": []})
        group["students"] += [s for s in m["students"] if s not in group["students"]]
        group["titles"].append(m["title"])
    result = [{**g, "count": len(g["students"]), "title": "; ".join(g["titles"])} for g in merged.values()]
    return sorted(result, key=lambda m: (-m["count"], m["exercise"], m["label"]))


def _misconceptions(book: dict, lang: str) -> str:
    entries = by_mistake(book["misconceptions"])
    title = f"<h2>{_t(lang, 'What the class got wrong', '全班常见的错误')}</h2>"
    if not entries:
        return f"{title}<p>{_t(lang, 'No failed checks.', '没有未通过的检查。')}</p>"
    parts = [title, "<ul>"]
    for m in entries[:5]:
        count = _t(lang, "{n} of {of} students", "{of} 名学生中有 {n} 名", n=m["count"], of=m["submitted"])
        meaning = f" {html.escape(m['meaning'])}" if m.get("meaning") else ""
        parts.append("<li>" + _t(lang, "<b>{count}</b> in {ex}: {key}{meaning} ({title})",
                                 "{ex}：<b>{count}</b> {key}{meaning}（{title}）", count=count, ex=m["exercise"],
                                 key=f"<code>{html.escape(m['label'])}</code>", meaning=meaning,
                                 title=html.escape(m["title"])) + "</li>")
    parts.append("</ul>")
    head = "".join(f"<th>{word.render(lang)}</th>" for word in (
        Text("students", "学生数"), Text("mistake", "错误"), Text("failed check", "未通过的检查"),
        Text("an example of the message they got", "他们收到的一条反馈示例")))
    for ex in book["exercises"]:
        mine = [m for m in entries if m["exercise"] == ex["id"]]
        if not mine:
            continue
        rows = "".join(
            f"<tr><td class='num'>{m['count']}</td><td><code>{html.escape(m['label'])}</code>"
            + (f"<br>{html.escape(m['meaning'])}" if m.get("meaning") else "") + "</td>"
            f"<td>{html.escape(m['title'])}</td><td>{html.escape(m['example'])}</td></tr>" for m in mine)
        parts.append(f"<h3>{ex['id']} · {html.escape(ex['title'])}</h3><table><tr>{head}</tr>{rows}</table>")
    return "\n".join(parts)


def histogram_svg(totals: list[float], max_total: float, lang: str = "en", bins: int = 20) -> str:
    """The distribution of totals as inline SVG bars."""
    width, height, left, bottom, top = 640, 220, 40, 30, 10
    top_value = max_total or max(totals, default=1) or 1
    counts = [0] * bins
    for t in totals:
        counts[min(bins - 1, int(bins * t / top_value))] += 1
    tallest = max(counts) or 1
    bar_w = (width - left - 10) / bins
    parts = []
    for i, n in enumerate(counts):
        h = (height - top - bottom) * n / tallest
        x = left + i * bar_w
        tip = _t(lang, "{n} student" + ("" if n == 1 else "s") + ": {lo} to {hi}", "{n} 名学生：{lo} 到 {hi}", n=n,
                 lo=f"{top_value * i / bins:g}", hi=f"{top_value * (i + 1) / bins:g}")
        parts.append(f'<rect x="{x:.1f}" y="{height - bottom - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
                     f'fill="#1f77b4"><title>{tip}</title></rect>')
        if n:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{height - bottom - h - 2:.1f}" '
                         f'text-anchor="middle">{n}</text>')
    for t in nice_ticks(0, top_value):
        parts.append(f'<text x="{left + (width - left - 10) * t / top_value:.1f}" y="{height - 12}" '
                     f'text-anchor="middle">{t:g}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="{_t(lang, "score distribution", "分数分布")}">{"".join(parts)}</svg>')


def _pass_rates(book: dict, lang: str) -> str:
    rows = []
    look = _t(lang, "a check or a statement to look at", "这个检查或题目需要看一看")
    for c in book["checks"]:
        flag = f"<span class='look'>{look}</span>" if c["look"] else ""
        rows.append(f"<tr><td>{c['exercise']}</td><td>{html.escape(c['title'])}</td><td class='num'>{c['passed']}/"
                    f"{c['attempted']}</td><td class='num'>{100 * c['rate']:.0f}%</td><td>{flag}</td></tr>")
    head = "".join(f"<th>{word.render(lang)}</th>" for word in (
        Text("exercise", "练习"), Text("check", "检查"), Text("passed", "已通过"), Text("rate", "通过率"),
        Text("", "")))
    return (f"<h2 id='checks'>{_t(lang, 'Checks, most failed first', '各项检查，未通过最多的在前')}</h2><p>"
            + _t(lang, "Students who reached the check (not started and skipped left out). A check that (nearly) "
                       "every student fails may be wrong, or its statement unclear.",
                 "只算做到这个检查的学生（未开始和跳过的不算）。几乎所有学生都没通过的检查，可能检查本身有错，"
                 "或者题目没有写清楚。")
            + f"</p><table><tr>{head}</tr>{''.join(rows)}</table>")


def _problems(book: dict, lang: str) -> str:
    items = [f"<li><a href='{feedback_link(row['student'])}'>{html.escape(row['student'])}</a>: "
             f"{html.escape(message)}</li>" for row in book["rows"] for message in row["problems"]]
    items += [f"<li>{html.escape(p['message'])}</li>" for p in book.get("stray", [])]
    if not items:
        return ""
    return f"<h2>{_t(lang, 'Problems ({n})', '问题（{n}）', n=len(items))}</h2><ul>{''.join(items)}</ul>"


def _similar(book: dict, lang: str) -> str:
    pairs = book.get("similar")
    if pairs is None:
        return ""
    if not pairs:
        return (f"<h2>{_t(lang, 'Similar submissions', '相似的提交')}</h2>"
                f"<p>{_t(lang, 'No pair above the threshold.', '没有超过阈值的提交对。')}</p>")
    rows = "".join(f"<tr><td>{p['exercise']}</td><td>{html.escape(' · '.join(p['students']))}</td>"
                   f"<td class='num'>{100 * p['similarity']:.0f}%</td></tr>" for p in pairs[:20])
    head = "".join(f"<th>{word.render(lang)}</th>" for word in (
        Text("exercise", "练习"), Text("students", "学生"), Text("shared", "相同部分")))
    return (f"<h2>{_t(lang, 'Similar submissions ({n})', '相似的提交（{n}）', n=len(pairs))}</h2><p>"
            + _t(lang, "For a person to look at, side by side in {link}; scores are unchanged.",
                 "请人工在 {link} 中并排查看；分数不受影响。", link="<a href='similarity.html'>similarity.html</a>")
            + f"</p><table><tr>{head}</tr>{rows}</table>")


def _isolation(book: dict, lang: str) -> str:
    groups = book.get("isolation") or []
    none, comma = _t(lang, "none reported", "未报告"), _t(lang, ", ", "、")  # 、: the layers' names stay apart
    items = "".join(f"<li>{html.escape(comma.join(g['layers']) or none)}{_t(lang, ': ', '：')}"
                    + _t(lang, "{n} submissions", "{n} 份提交", n=g["count"])
                    + f"<details><summary>{_t(lang, 'which', '是哪些')}</summary>"
                      f"{html.escape(' · '.join(g['submissions']))}</details></li>"
                    for g in groups)
    if not groups:
        return ""
    return (f"<h2>{_t(lang, 'Isolation', '隔离')}</h2><p>"
            + _t(lang, "The layers of the sandbox that graded each submission.", "为每份提交评分的沙箱所用的隔离层。")
            + f"</p><ul>{items}</ul>")


def write_index(book: dict, path: Path, lang: str = "en") -> Path:
    """The teacher's page, in `lang`: what the class got wrong first, then the gradebook, the distribution of
    totals, the pass rate of each check, the problems and which isolation layers graded which
    submissions."""
    rows = book["rows"]
    submitted = [row for row in rows if any(c["state"] != "missing" for c in row["cells"].values())]
    states: dict[str, int] = {}
    for row in rows:
        for cell in row["cells"].values():
            states[cell["state"]] = states.get(cell["state"], 0) + 1
    words = {**STATE_WORD, **CELL_TEXT}
    summary = _t(lang, ", ", "，").join(f"{n} {words[state].render(lang).split(':')[0].split('：')[0]}"
                                        for state, n in sorted(states.items()))
    nothing = len(rows) - len(submitted)
    counts = _t(lang, "{n} student" + ("" if len(rows) == 1 else "s") + ", {m} exercise"
                + ("" if len(book["exercises"]) == 1 else "s") + " ({summary}).",
                "{n} 名学生，{m} 个练习（{summary}）。", n=len(rows), m=len(book["exercises"]), summary=summary)
    none = _t(lang, "{n} student" + ("" if nothing == 1 else "s") + " submitted nothing (not in the histogram).",
              "{n} 名学生什么都没有提交（不在直方图中）。", n=nothing)
    body = [f"<p>{counts}</p>",
            _misconceptions(book, lang), f"<h2 id='gradebook'>{_t(lang, 'Gradebook', '成绩册')}</h2>",
            _gradebook_table(book, lang), f"<h2 id='totals'>{_t(lang, 'Totals', '总分分布')}</h2>",
            histogram_svg([row["total"] for row in submitted], book["max_total"], lang),
            f"<p>{none}</p>" if nothing else "",
            _pass_rates(book, lang), _problems(book, lang), _similar(book, lang),
            _isolation(book, lang)]
    path.write_text(page(_t(lang, "Class report", "班级报告"), "\n".join(body), SCRIPT, lang), encoding="utf-8")
    return path
