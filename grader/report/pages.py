"""Self-contained pages from Jinja2 templates (grader/report/templates/): a learner's page (checks, loss curves,
parameter traces), a notebook's `check()` display, the teacher's class page (what the class got wrong, the
gradebook, the score histogram, per-check pass rates, problems), the kata stats page, the similarity page and
the Markdown feedback a student reads.

Every value reaches a page through a template with autoescaping: HTML-escaped in a page, escaped for Markdown
in the feedback, so nothing learner-controlled (a student's or a file's name, what their code printed or
raised, a review comment) is ever markup, by construction, nor a control character (shown as `\x1b`). Markup
of our own in a translated sentence goes through `html_text`, which escapes the values only. Charts are inline
SVG, their shapes computed here and drawn by a template macro: no network, no plotting library, a few
milliseconds a chart.

Runs in: the `grade` process, a batch, watch, a Jupyter kernel. No torch.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from pathlib import Path
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape

from grader.judge.result import MARKS, Result
from grader.report.cell_text import late_text, review_text
from grader.report.terminal import points_text, score_text
from grader.text import Text, say, visible

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
TEMPLATES = Path(__file__).resolve().parent / "templates"


# -- the two environments: HTML pages, Markdown feedback ---------------------------------------------------

def markdown_escape(value) -> Markup:
    """A value as Markdown reads it as text: no HTML (`<img onerror=...>` stays text), one line."""
    if isinstance(value, Markup):
        return value
    return Markup(str(escape(str(value))).replace("\n", " "))


def table_cell(value) -> Markup:
    """A value in a Markdown table's cell: escaped, and its pipes too."""
    return Markup(str(markdown_escape(value)).replace("|", "\\|"))


def fenced(value) -> Markup:
    """A block of text as it is (a load error's line and caret keep their columns), in a code fence longer than any
    run of backticks inside it: nothing in it can close the block."""
    text = str(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markup(f"{fence}\n{text}\n{fence}")


@functools.cache
def environment(kind: str) -> jinja2.Environment:
    """The Jinja2 environment of `kind` ("html" or "markdown"): HTML autoescaped, Markdown escaped by `finalize`."""
    loader = jinja2.FileSystemLoader(TEMPLATES)
    if kind == "html":
        return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined,
                                  keep_trailing_newline=True)
    env = jinja2.Environment(loader=loader, autoescape=False, finalize=markdown_escape,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters.update(cell=table_cell, fenced=fenced)
    return env


def render(template: str, **values) -> str:
    """A template of grader/report/templates filled with `values` (escaped as its kind requires), with every control
    character a value brought shown as an escape (`\\x1b`): a page opened in a terminal or a pager draws nothing."""
    page = environment("markdown" if template.endswith(".md.j2") else "html").get_template(template).render(**values)
    return visible(page)


def html_text(text: Text, lang: str) -> Markup:
    """A sentence of ours with markup in its template (`<b>{count}</b> in {ex}`): the values escaped, not the
    template."""
    return Markup(text.render(lang, escape=escape))


def write(path: Path, template: str, **values) -> Path:
    path.write_text(render(template, style=STYLE, **values), encoding="utf-8")
    return path


# -- charts --------------------------------------------------------------------------------------------

def _finite(values) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi]."""
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def shape(tag: str, text: str = "", tip: str = "", **attrs) -> dict:
    """One SVG element for the `svg` macro: its attributes (a trailing _ dropped, _ read as -) and text."""
    return {"tag": tag, "text": text, "tip": tip,
            "attrs": {name.rstrip("_").replace("_", "-"): value for name, value in attrs.items()}}


def chart(curve: dict, lang: str = "en") -> dict:
    """One recorded curve as a line chart, for the `svg` macro.

    The reference series and true values fix the visible range, so a diverging learner's curve cannot
    flatten everything else: it is drawn until it leaves the chart, marked there, and not after (an
    oscillating, exploding curve would otherwise cross the chart at every step, a solid band).
    A curve may also give `x` (each point's x value, for the axis; else 0, 1, 2...), `gaps` (a value that is not
    finite is a point missing, not a curve leaving the chart: each point is drawn as a dot, the line joins
    neighbours only) and `marks` ({label: value}: a dashed line at each value, labelled in the chart's own words,
    where `truth` labels it "true {name} = {value}").
    """
    width, height, left, right, top, bottom = 640, 300, 60, 170, 30, 40
    series = curve["series"]
    gaps = bool(curve.get("gaps"))
    truth = {**curve.get("truth", {}), **curve.get("marks", {})}
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
    xs = list(curve.get("x") or range(steps))
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_at(i: int) -> float:
        return left + plot_w * ((xs[i] - xs[0]) / max(1, xs[-1] - xs[0]))

    def y_at(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    shapes = [shape("rect", x=left, y=top, width=plot_w, height=plot_h, fill="none", stroke="#999")]
    for t in nice_ticks(lo, hi):
        shapes += [shape("line", x1=left - 4, x2=left + plot_w, y1=f"{y_at(t):.1f}", y2=f"{y_at(t):.1f}",
                         stroke="#eee"),
                   shape("text", f"1e{t:g}" if log else f"{t:.4g}", x=left - 6, y=f"{y_at(t) + 4:.1f}",
                         text_anchor="end")]
    for t in nice_ticks(xs[0], max(xs[0] + 1, xs[-1])):
        if t == int(t) and t <= xs[-1]:
            x = left + plot_w * ((t - xs[0]) / max(1, xs[-1] - xs[0]))
            shapes.append(shape("text", str(int(t)), x=f"{x:.1f}", y=top + plot_h + 16, text_anchor="middle"))
    xlabel = curve.get("xlabel", "step")
    shapes.append(shape("text", xlabel, x=left + plot_w / 2, y=height - 6, text_anchor="middle"))
    for name, value in truth.items():
        y = y_at(scale(value))
        label_y = y - 4 if y - 16 > top else y + 13  # inside the plot, clear of the title above it
        label = name if name in curve.get("marks", {}) else say(lang, "true {name} = {value}", name=name,
                                                                 value=f"{value:g}")
        shapes += [shape("line", x1=left, x2=left + plot_w, y1=f"{y:.1f}", y2=f"{y:.1f}", stroke="gray",
                         stroke_dasharray="5,4"),
                   shape("text", label, x=left + 4, y=f"{label_y:.1f}")]
    left_at = []
    for n, (name, values) in enumerate(series.items()):
        color = COLORS[n % len(COLORS)]
        points: list[str] = []
        for i, v in enumerate(values):
            inside = math.isfinite(v) and (not log or v > 0) and lo <= scale(v) <= hi
            if gaps and not math.isfinite(v):  # a point missing: the line stops here, and starts again after it
                if len(points) > 1:
                    shapes.append(shape("polyline", fill="none", stroke=color, stroke_width="1.6",
                                        points=" ".join(points)))
                points = []
                continue
            if gaps and inside:
                shapes.append(shape("circle", cx=f"{x_at(i):.1f}", cy=f"{y_at(scale(v)):.1f}", r="3", fill=color))
            if not inside:
                edge = top if not math.isfinite(v) or scale(v) > hi else top + plot_h
                shapes.append(shape("text", "▲" if edge == top else "▼", x=f"{x_at(i):.1f}",
                                    y=edge + (10 if edge == top else -3), fill=color, text_anchor="middle"))
                left_at.append(i)
                break
            points.append(f"{x_at(i):.1f},{y_at(scale(v)):.1f}")
        if len(points) > 1 or (points and not gaps):
            shapes.append(shape("polyline", fill="none", stroke=color, stroke_width="1.6", points=" ".join(points)))
        y = top + 14 * n + 6
        shapes += [shape("line", x1=width - right + 10, x2=width - right + 30, y1=y, y2=y, stroke=color,
                         stroke_width="2"),
                   shape("text", series_label(name, lang), x=width - right + 34, y=y + 4)]
    leaves = say(lang, " (your curve leaves the chart at {xlabel} {at})", xlabel=xlabel, at=xs[min(left_at)]) \
        if left_at else ""
    title = curve["title"] + leaves
    shapes.insert(0, shape("text", title, x=left, y=top - 10, font_weight="bold"))
    return {"width": width, "height": height, "label": title, "shapes": shapes,
            "diverged": say(lang, DIVERGED) if diverged(curve) else ""}


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


def histogram(totals: list[float], max_total: float, lang: str = "en", bins: int = 20) -> dict:
    """The distribution of totals as bars, for the `svg` macro."""
    width, height, left, bottom, top = 640, 220, 40, 30, 10
    top_value = max_total or max(totals, default=1) or 1
    counts = [0] * bins
    for t in totals:
        counts[min(bins - 1, int(bins * t / top_value))] += 1
    tallest = max(counts) or 1
    bar_w = (width - left - 10) / bins
    shapes = []
    for i, n in enumerate(counts):
        h = (height - top - bottom) * n / tallest
        x = left + i * bar_w
        tip = Text("{n} student" + ("" if n == 1 else "s") + ": {lo} to {hi}", "{n} 名学生：{lo} 到 {hi}", n=n,
                   lo=f"{top_value * i / bins:g}", hi=f"{top_value * (i + 1) / bins:g}").render(lang)
        shapes.append(shape("rect", tip=tip, x=f"{x:.1f}", y=f"{height - bottom - h:.1f}", width=f"{bar_w - 2:.1f}",
                            height=f"{h:.1f}", fill="#1f77b4"))
        if n:
            shapes.append(shape("text", str(n), x=f"{x + bar_w / 2:.1f}", y=f"{height - bottom - h - 2:.1f}",
                                text_anchor="middle"))
    for t in nice_ticks(0, top_value):
        shapes.append(shape("text", f"{t:g}", x=f"{left + (width - left - 10) * t / top_value:.1f}", y=height - 12,
                            text_anchor="middle"))
    return {"width": width, "height": height, "label": Text("score distribution", "分数分布").render(lang),
            "shapes": shapes}


# -- one grading ------------------------------------------------------------------------------------------

GRADER_FAILED = "The grader failed on this exercise (not your code): it will be regraded."


def heading(result: Result, lang: str = "en") -> str:
    return f"{result.exercise} · {result.title.render(lang) or result.name}"


def section(result: Result, lang: str = "en", show_heading: bool = True, cell: dict | None = None) -> dict:
    """One result's section, for the `section` macro; `cell`, in a batch, is the gradebook's cell (the teacher's
    review, late work)."""
    cell = cell or {}
    notes = []
    if cell.get("review"):
        notes.append({"label": say(lang, "Your teacher’s review:"), "text": review_text(cell, lang)})
    if late_text(cell, lang):
        notes.append({"label": "", "text": f"{late_text(cell, lang)} {cell.get('submitted', '')}"})
    score = status = message = ""
    if cell.get("state") == "needs a look":
        notes.append({"label": "", "text": f"{say(lang, 'Your teacher needs to look at this submission:')} "
                                           f"{cell['message']}"})
    elif result.grader_failure:
        notes.append({"label": "", "text": say(lang, GRADER_FAILED)})
    else:
        score = score_text(result, lang)
        status = Text("({status})", "（{status}）", status=say(lang, result.status)).render(lang)
        message = result.message.render(lang)
    return {"heading": heading(result, lang) if show_heading else "", "anchor": result.exercise, "notes": notes,
            "score": score, "status": status, "message": message,
            "checks": [{"outcome": c.outcome, "mark": MARKS[c.outcome], "title": c.title.render(lang),
                        "message": c.message.render(lang), "points": points_text(c, lang)} for c in result.checks],
            "charts": [chart(curve, lang) for curve in result.curves], "output": result.output,
            "words": {"check": say(lang, "check"), "points": say(lang, "points"),
                      "printed": say(lang, "Your code printed:")}}


def write_report(results: list[Result], path: Path, title: str, notes: list[Text] | None = None,
                 lang: str = "en", total: tuple[str, float] | None = None,
                 cells: dict[str, dict] | None = None) -> Path:
    """One page for one learner, in `lang`: the total (in a batch), every result's checks and charts, then notes
    (missing files, problems). A section's heading is left out when it would repeat the page's title (a
    one-exercise report). `cells`, in a batch: the gradebook's cell of each exercise (review, late work)."""
    said = say(lang, "Total: {score}/{max_score}", score=total[0], max_score=f"{total[1]:g}") if total else ""
    every_note = [note for r in results for note in r.notes] + list(notes or [])
    return write(path, "learner.html.j2", lang=lang, title=title, total=said,
                 sections=[section(r, lang, show_heading=heading(r, lang) != title,
                                   cell=(cells or {}).get(r.exercise)) for r in results],
                 notes=[Text.of(n).render(lang) for n in every_note],
                 notes_heading=say(lang, "Notes on your submission"))


def notebook_html(result: Result, lines: list[str], lang: str) -> str:
    """`check()`'s display in Jupyter: the grading, then its next step, hint and record lines."""
    return render("notebook.html.j2", heading=heading(result, lang), s=section(result, lang, show_heading=False),
                  lines=lines)


def hints_html(lines: list[str]) -> str:
    """`hint()`'s display in Jupyter."""
    return render("hints.html.j2", lines=lines)


# -- the class page (in the teacher's language, `lang`) --------------------------------------------------

def _t(lang: str, en: str, zh: str, **values) -> str:
    return Text(en, zh, **values).render(lang)


CELL_TEXT = {"missing": Text("missing", "未提交"), "error": Text("error", "出错"),
             "grader error": Text("grader error: regrade", "评分器出错：请重评"),
             "needs a look": Text("look", "待查看"), "excused": Text("excused", "已免除")}
STATE_TITLE = {
    "needs a look": Text("needs a look: no score until the teacher chooses (see the problems)",
                         "需要查看：老师决定之前没有分数（见问题）"),
    "missing": Text("no file submitted", "没有提交文件"),
    "excused": Text("excused (the late policy): counts neither way", "已免除（迟交规定）：不计入总分"),
    "error": Text("the file could not be graded (see the feedback)", "文件无法评分（见反馈）"),
    "timeout": Text("ran past its time limit", "超过了时间限制"),
    "crashed": Text("crashed the sandbox", "让沙箱崩溃了"),
    "tampered": Text("tampered with the grader: 0", "篡改了评分器：0 分"),
    "grader error": Text("the grader failed, not the student: run grade batch again to regrade",
                         "是评分器出错，不是学生的问题：再运行一次 `grade batch` 重新评分"),
}
STATE_WORD = {"timeout": Text("timeout", "超时"), "crashed": Text("crashed", "崩溃"),
              "tampered": Text("tampered", "篡改"), "graded": Text("graded", "已评分")}


MAX_NAME = 200  # bytes of a student's part of a file name (a file system allows 255 for the whole)


def file_name(student: str) -> str:
    """A student's name as the batch names their files (feedback/<name>.html, files/<name>/): every control character
    shown as an escape (`\\x1b`), a line break or a tab too, a `/` as `\\x2f`; one longer than MAX_NAME bytes cut,
    with a hash of the whole so that two stay apart."""
    name = visible(student).translate({0x09: "\\x09", 0x0a: "\\x0a", 0x2f: "\\x2f"})
    if len(name.encode("utf-8", "surrogateescape")) <= MAX_NAME:
        return name
    digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return name.encode("utf-8", "surrogateescape")[:MAX_NAME - 13].decode("utf-8", "ignore") + "-" + digest


def feedback_link(student: str, exercise: str = "") -> str:
    return f"feedback/{quote(file_name(student))}.html" + (f"#{quote(exercise)}" if exercise else "")


def _cell(student: str, ex_id: str, cell: dict, lang: str) -> dict:
    state, score = cell["state"], cell["score"]
    if state == "graded":
        kind = "full" if score >= cell["max_score"] else "partial" if score > 0 else "zero"
        text = f"{score:g}"
    else:
        kind = state.replace(" ", "_")
        text = CELL_TEXT[state].render(lang) if state in CELL_TEXT else f"{STATE_WORD[state].render(lang)} {score:g}"
    value = {"missing": -1, "excused": -1, "grader error": -2, "needs a look": -3}[state] if score is None else score
    title = STATE_TITLE[state].render(lang) if state in STATE_TITLE else f"{score:g}/{cell['max_score']:g}"
    if state == "needs a look":
        title = _t(lang, "needs a look: {why}", "需要查看：{why}", why=cell["message"])
    reviewed = review_text(cell, lang, teacher=True)
    marks = [mark for mark in (late_text(cell, lang), reviewed and _t(lang, "reviewed: {review}", "已复核：{review}",
                                                                         review=reviewed)) if mark]
    if marks:
        if reviewed:
            text += " *" + (_t(lang, " (stale review)", "（复核已过时）") if cell["review"].get("stale") else "")
        else:
            text += _t(lang, " (excused)", "（已免除）") if cell["late_work"].get("excused") else \
                _t(lang, " (late)", "（迟交）") if cell["late_work"].get("late") else ""
        title += " | " + " | ".join(marks)
    return {"kind": kind, "value": f"{value:g}", "title": title, "link": feedback_link(student, ex_id), "text": text}


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


def _mistakes(book: dict, lang: str) -> tuple[list[dict], list[dict]]:
    """The five mistakes most made, as lines, and each exercise's table of them."""
    entries = by_mistake(book["misconceptions"])
    lines = []
    for m in entries[:5]:
        count = _t(lang, "{n} of {of} students", "{of} 名学生中有 {n} 名", n=m["count"], of=m["submitted"])
        meaning = Markup(" ") + m["meaning"] if m.get("meaning") else ""
        lines.append({"line": html_text(Text("<b>{count}</b> in {ex}: {key}{meaning} ({title})",
                                             "{ex}：<b>{count}</b> {key}{meaning}（{title}）", count=count,
                                             ex=m["exercise"], key=Markup("<code>{}</code>").format(m["label"]),
                                             meaning=meaning, title=m["title"]), lang)})
    tables = [{"heading": f"{ex['id']} · {ex['title']}", "rows": mine} for ex in book["exercises"]
              if (mine := [m for m in entries if m["exercise"] == ex["id"]])]
    return lines, tables


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
              "{n} 名学生什么都没有提交（不在直方图中）。", n=nothing) if nothing else ""
    mistakes, tables = _mistakes(book, lang)
    exercises = book["exercises"]
    problems = [{"link": feedback_link(row["student"]), "student": row["student"], "message": message}
                for row in rows for message in row["problems"]]
    problems += [{"link": "", "student": "", "message": p["message"]} for p in book.get("stray", [])]
    similar = book.get("similar")
    comma = _t(lang, ", ", "、")  # 、: the layers' names stay apart
    seeds = book.get("seeds", {})
    mixed = [_t(lang, "{ex} was graded with {n} seeds ({seeds}): `grade batch --force` grades every submission of it "
                "with one.", "{ex} 用了 {n} 个种子评分（{seeds}）：`grade batch --force` 会用同一个种子重评它的"
                "全部提交。",
                ex=ex, n=len(used), seeds=", ".join(map(str, used))) for ex, used in seeds.items() if len(used) > 1]
    differing = [{**d, "outcomes": _t(lang, "; ", "；").join(f"{say(lang, outcome)}: {', '.join(students)}"
                                                            for outcome, students in d["outcomes"].items()),
                  "seeds": ", ".join(map(str, d["seeds"]))} for d in book.get("differing", [])]
    isolation = [{"line": (comma.join(g["layers"]) or _t(lang, "none reported", "未报告")) + _t(lang, ": ", "：")
                  + _t(lang, "{n} submissions", "{n} 份提交", n=g["count"]), "submissions": g["submissions"]}
                 for g in book.get("isolation") or []]
    t = functools.partial(_t, lang)
    return write(
        path, "class.html.j2", lang=lang, title=t("Class report", "班级报告"), counts=counts, nothing=none,
        mistakes=mistakes, mistake_tables=tables, exercises=exercises, named=any(row.get("name") for row in rows),
        rows=[{"student": row["student"], "name": row.get("name", ""), "link": feedback_link(row["student"]),
               "cells": [_cell(row["student"], ex["id"], row["cells"][ex["id"]], lang) for ex in exercises],
               "total": "" if row["total"] is None else f"{row['total']:g}",
               "value": -1 if row["total"] is None else f"{row['total']:g}", "problems": row["problems"],
               "problem_count": row.get("problem_count", len(row["problems"]))}
              for row in rows],
        histogram=histogram([row["total"] for row in submitted if row["total"] is not None], book["max_total"], lang),
        checks=[{**c, "rate": f"{100 * c['rate']:.0f}"} for c in book["checks"]], problems=problems,
        similar=None if similar is None else [{**p, "shared": f"{100 * p['similarity']:.0f}"} for p in similar],
        isolation=isolation, differing=differing, mixed=mixed,
        seeds=_t(lang, "Each exercise is graded with one seed for the whole class, so equal code earns an equal score: "
                 "{seeds}.", "每个练习对全班使用同一个种子评分，所以相同的代码得到相同的分数：{seeds}。",
                 seeds=comma.join(f"{ex} {' '.join(map(str, used))}" for ex, used in seeds.items())) if seeds else "",
        words={"wrong": t("What the class got wrong", "全班常见的错误"),
               "no_failed": t("No failed checks.", "没有未通过的检查。"),
               "mistake_head": [t("students", "学生数"), t("mistake", "错误"), t("failed check", "未通过的检查"),
                                t("an example of the message they got", "他们收到的一条反馈示例")],
               "gradebook": t("Gradebook", "成绩册"), "student": t("student", "学生"), "name": t("name", "姓名"),
               "total": t("total /{max}", "总分 /{max}", max=f"{book['max_total']:g}"),
               "problems": t("problems", "问题"),
               "filter": t("filter: a name, an id, missing, error...", "筛选：姓名、学号、未提交、出错……"),
               "totals": t("Totals", "总分分布"),
               "checks": t("Checks, most failed first", "各项检查，未通过最多的在前"),
               "checks_note": t("Students who reached the check (not started and skipped left out). A check that "
                                "(nearly) every student fails may be wrong, or its statement unclear.",
                                "只算做到这个检查的学生（未开始和跳过的不算）。几乎所有学生都没通过的检查，可能检查本身有错，"
                                "或者题目没有写清楚。"),
               "checks_head": [t("exercise", "练习"), t("check", "检查"), t("passed", "已通过"),
                               t("rate", "通过率"), ""],
               "look": t("a check or a statement to look at", "这个检查或题目需要看一看"),
               "problems_heading": t("Problems ({n})", "问题（{n}）", n=len(book["problems"])),
               "similar_heading": t("Similar submissions ({n})", "相似的提交（{n}）", n=len(similar or [])),
               "similar_none_heading": t("Similar submissions", "相似的提交"),
               "similar_none": t("No pair above the threshold.", "没有超过阈值的提交对。"),
               "similar_note": html_text(Text(
                   "For a person to look at, side by side in {link}; scores are unchanged.",
                   "请人工在 {link} 中并排查看；分数不受影响。",
                   link=Markup("<a href='similarity.html'>similarity.html</a>")), lang),
               "similar_head": [t("exercise", "练习"), t("students", "学生"), t("shared", "相同部分")],
               "equal": t("Equal code, equal score", "相同的代码，相同的分数"),
               "differing": t("Checks whose outcome differs between students who handed in the same code (comments and "
                              "layout left out): a check that depends on something else than the code, or learner code "
                              "that draws its own random numbers. For a person to look at.",
                              "提交了相同代码（不计注释和排版）的学生之间结果不同的检查：检查依赖于代码以外的东西，或者学生代码"
                              "自己抽取随机数。请人工查看。"),
               "differing_head": [t("exercise", "练习"), t("check", "检查"), t("outcomes", "结果"),
                                  t("seeds", "种子")],
               "isolation": t("Isolation", "隔离"),
               "isolation_note": t("The layers of the sandbox that graded each submission.",
                                   "为每份提交评分的沙箱所用的隔离层。"),
               "which": t("which", "是哪些")})
