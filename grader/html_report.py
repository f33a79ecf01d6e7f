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

from grader.report import points_text
from grader.text import say, translated

STYLE = """body{font-family:system-ui,"PingFang SC","Microsoft YaHei","Noto Sans CJK SC","Noto Sans SC",sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}.passed{color:#18794e}.failed{color:#c62828}.not_started{color:#8a6d00}.note{background:#fff5e6;
padding:8px;border-left:4px solid #f0a020}svg{max-width:100%;height:auto}svg text{font-size:11px;fill:#444}
.book td{white-space:nowrap}.book th{cursor:pointer;position:sticky;top:0;background:#f6f6f6}
.book a{text-decoration:none;color:inherit}.full{background:#e6f4ea}.partial{background:#fff8e1}.zero{background:#fdecea}
.missing{color:#999}.error,.crashed,.timeout{background:#ffe0b2;font-weight:bold}.tampered{background:#e1bee7;font-weight:bold}
.grader_error{background:#cfd8dc;font-style:italic}.look{color:#c62828;font-weight:bold}.num{text-align:right}
code{background:#f3f3f3;padding:0 3px}"""
MARKS = {"passed": "✓", "failed": "✗", "not_started": "·", "skipped": "–", "not_run": "○"}
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
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="gray" '
                     f'stroke-dasharray="5,4"/><text x="{left + 4}" y="{y - 4:.1f}">'
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
        parts.append(f'<line x1="{width - right + 10}" x2="{width - right + 30}" y1="{y}" y2="{y}" stroke="{color}" '
                     f'stroke-width="2"/><text x="{width - right + 34}" y="{y + 4}">{html.escape(translated(lang, name))}</text>')
    title = curve["title"] + (say(lang, " (your curve leaves the chart at {xlabel} {at})", xlabel=xlabel, at=min(left_at))
                              if left_at else "")
    parts.insert(0, f'<text x="{left}" y="{top - 10}" font-weight="bold">{html.escape(title)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="{html.escape(title)}">{"".join(parts)}</svg>')


def diverged(curve: dict) -> bool:
    """The learner's series ends not finite, or far above where it started."""
    values = curve["series"].get("yours", [])
    if not values:
        return False
    return not math.isfinite(values[-1]) or (len(values) > 1 and values[-1] > 10 * abs(values[0]) + 1e-12)


DIVERGED = ("Your loss grew instead of shrinking. That usually means the learning rate is too large, "
            "or the gradients are not zeroed each step (they accumulate), or the update has the wrong sign.")


def check_table(result: dict, lang: str = "en") -> str:
    rows = "".join(
        f"<tr class='{c['outcome']}'><td>{MARKS[c['outcome']]}</td><td>{html.escape(translated(lang, c['title']))}</td>"
        f"<td>{html.escape(points_text(c, lang))}</td>"
        f"<td>{html.escape(translated(lang, c['message']))}</td></tr>"
        for c in result["checks"])
    head = "".join(f"<th>{say(lang, word)}</th>" for word in ("check", "points", "feedback"))
    return f"<table><tr><th></th>{head}</tr>{rows}</table>"


def heading(result: dict) -> str:
    return f"{result['exercise']} · {result.get('title', result.get('name', ''))}"


def message_html(message: str) -> str:
    """A result's message: inline, or preformatted when it has several lines (a load error's line and caret)."""
    if "\n" in message:
        return f"<pre>{html.escape(message)}</pre>"
    return html.escape(message)


def result_section(result: dict, lang: str = "en", show_heading: bool = True) -> str:
    parts = [f"<h2 id='{html.escape(result['exercise'])}'>{html.escape(heading(result))}</h2>"] if show_heading else []
    if result.get("grader_failure"):
        parts.append(f"<p class='note'>{say(lang, GRADER_FAILED)}</p>")
    else:
        score = say(lang, "Score: {score}/{max_score}", score=f"{result['score']:g}", max_score=f"{result['max_score']:g}")
        parts.append(f"<p><b>{html.escape(score)}</b> ({html.escape(say(lang, result['status']))})</p>")
        if result.get("message"):
            parts.append(message_html(translated(lang, result["message"])))
    parts.append(check_table(result, lang))
    for curve in result.get("curves", []):
        if diverged(curve):
            parts.append(f"<p class='note'>{html.escape(say(lang, DIVERGED))}</p>")
        parts.append(svg_chart(curve, lang))
    if result.get("output"):
        parts.append(f"<p>{html.escape(say(lang, 'Your code printed:'))}</p><pre>{html.escape(result['output'])}</pre>")
    return "\n".join(parts)


GRADER_FAILED = "The grader failed on this exercise (not your code): it will be regraded."


def page(title: str, body: str, script: str = "", lang: str = "en") -> str:
    return (f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>\n{body}\n"
            + (f"<script>{script}</script>" if script else "") + "</body></html>\n")


def write_report(results: list[dict], path: Path, title: str, notes: list[str] | None = None, lang: str = "en") -> Path:
    """One page for one learner, in `lang`: every result's checks and charts, then notes (missing files,
    problems). A section's heading is left out when it would repeat the page's title (a one-exercise report)."""
    body = [result_section(r, lang, show_heading=heading(r) != title) for r in results]
    if notes:
        body.append(f"<h2>{say(lang, 'Notes on your submission')}</h2><ul>"
                    + "".join(f"<li>{html.escape(translated(lang, n))}</li>" for n in notes) + "</ul>")
    path.write_text(page(title, "\n".join(body), lang=lang), encoding="utf-8")
    return path


# -- the class page --

CELL_TEXT = {"missing": "missing", "error": "error", "grader error": "grader error: regrade"}
STATE_TITLE = {
    "missing": "no file submitted", "error": "the file could not be graded (see the feedback)",
    "timeout": "ran past its time limit", "crashed": "crashed the sandbox", "tampered": "tampered with the grader: 0",
    "grader error": "the grader failed, not the student: run grade batch again to regrade",
}
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


def _cell(student: str, ex_id: str, cell: dict) -> str:
    state, score = cell["state"], cell["score"]
    if state == "graded":
        kind = "full" if score >= cell["max_score"] else "partial" if score > 0 else "zero"
        text = f"{score:g}"
    else:
        kind = state.replace(" ", "_")
        text = CELL_TEXT[state] if state in CELL_TEXT else f"{state} {score:g}"
    value = {"missing": -1, "grader error": -2}[state] if score is None else score
    title = STATE_TITLE[state] if state in STATE_TITLE else f"{score:g}/{cell['max_score']:g}"
    return (f"<td class='{kind} num' data-v='{value:g}' title='{html.escape(title)}'>"
            f"<a href='{feedback_link(student, ex_id)}'>{html.escape(text)}</a></td>")


def _gradebook_table(book: dict) -> str:
    exercises = book["exercises"]
    named = any(row.get("name") for row in book["rows"])
    head = "<th>student</th>" + ("<th>name</th>" if named else "") + "".join(
        f"<th title='{html.escape(ex['title'])}'>{ex['id']}</th>" for ex in exercises)
    head += f"<th>total /{book['max_total']:g}</th><th>problems</th>"
    rows = []
    for row in book["rows"]:
        student = row["student"]
        cells = [f"<td><a href='{feedback_link(student)}'>{html.escape(student)}</a></td>"]
        if named:
            cells.append(f"<td>{html.escape(row.get('name', ''))}</td>")
        cells += [_cell(student, ex["id"], row["cells"][ex["id"]]) for ex in exercises]
        cells.append(f"<td class='num' data-v='{row['total']:g}'>{row['total']:g}</td>")
        notes = row["problems"]
        cells.append(f"<td class='num{' look' if notes else ''}' data-v='{len(notes)}' "
                     f"title='{html.escape(' | '.join(notes))}'>{len(notes) or ''}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ("<input id='filter' hidden placeholder='filter: a name, an id, missing, error...' size='40'>"
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


def _misconceptions(book: dict) -> str:
    entries = by_mistake(book["misconceptions"])
    if not entries:
        return "<h2>What the class got wrong</h2><p>No failed checks.</p>"
    parts = ["<h2>What the class got wrong</h2>", "<ul>"]
    for m in entries[:5]:
        parts.append(f"<li><b>{m['count']} of {m['submitted']} students</b> in {m['exercise']}: "
                     f"<code>{html.escape(m['label'])}</code> ({html.escape(m['title'])})</li>")
    parts.append("</ul>")
    for ex in book["exercises"]:
        mine = [m for m in entries if m["exercise"] == ex["id"]]
        if not mine:
            continue
        rows = "".join(
            f"<tr><td class='num'>{m['count']}</td><td><code>{html.escape(m['label'])}</code></td>"
            f"<td>{html.escape(m['title'])}</td><td>{html.escape(m['example'])}</td></tr>" for m in mine)
        parts.append(f"<h3>{ex['id']} · {html.escape(ex['title'])}</h3><table><tr><th>students</th><th>mistake</th>"
                     f"<th>failed check</th><th>an example of the message they got</th></tr>{rows}</table>")
    return "\n".join(parts)


def histogram_svg(totals: list[float], max_total: float, bins: int = 20) -> str:
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
        parts.append(f'<rect x="{x:.1f}" y="{height - bottom - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
                     f'fill="#1f77b4"><title>{n} students: {top_value * i / bins:g} to {top_value * (i + 1) / bins:g}'
                     f'</title></rect>')
        if n:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{height - bottom - h - 2:.1f}" text-anchor="middle">{n}</text>')
    for t in nice_ticks(0, top_value):
        parts.append(f'<text x="{left + (width - left - 10) * t / top_value:.1f}" y="{height - 12}" '
                     f'text-anchor="middle">{t:g}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="score distribution">{"".join(parts)}</svg>')


def _pass_rates(book: dict) -> str:
    rows = []
    for c in book["checks"]:
        flag = "<span class='look'>a check or a statement to look at</span>" if c["look"] else ""
        rows.append(f"<tr><td>{c['exercise']}</td><td>{html.escape(c['title'])}</td><td class='num'>{c['passed']}/"
                    f"{c['attempted']}</td><td class='num'>{100 * c['rate']:.0f}%</td><td>{flag}</td></tr>")
    return ("<h2 id='checks'>Checks, most failed first</h2><p>Students who reached the check (not started and skipped left out). "
            "A check that (nearly) every student fails may be wrong, or its statement unclear.</p><table><tr>"
            f"<th>exercise</th><th>check</th><th>passed</th><th>rate</th><th></th></tr>{''.join(rows)}</table>")


def _problems(book: dict) -> str:
    items = [f"<li><a href='{feedback_link(row['student'])}'>{html.escape(row['student'])}</a>: "
             f"{html.escape(message)}</li>" for row in book["rows"] for message in row["problems"]]
    items += [f"<li>{html.escape(p['message'])}</li>" for p in book.get("stray", [])]
    if not items:
        return ""
    return f"<h2>Problems ({len(items)})</h2><ul>{''.join(items)}</ul>"


def _similar(book: dict) -> str:
    pairs = book.get("similar")
    if pairs is None:
        return ""
    if not pairs:
        return "<h2>Similar submissions</h2><p>No pair above the threshold.</p>"
    rows = "".join(f"<tr><td>{p['exercise']}</td><td>{html.escape(' · '.join(p['students']))}</td>"
                   f"<td class='num'>{100 * p['similarity']:.0f}%</td></tr>" for p in pairs[:20])
    return (f"<h2>Similar submissions ({len(pairs)})</h2><p>For a person to look at, side by side in "
            "<a href='similarity.html'>similarity.html</a>; scores are unchanged.</p><table><tr><th>exercise</th>"
            f"<th>students</th><th>shared</th></tr>{rows}</table>")


def _isolation(book: dict) -> str:
    groups = book.get("isolation") or []
    items = "".join(f"<li>{html.escape(', '.join(g['layers']) or 'none reported')}: {g['count']} submissions"
                    f"<details><summary>which</summary>{html.escape(' · '.join(g['submissions']))}</details></li>"
                    for g in groups)
    return f"<h2>Isolation</h2><p>The layers of the sandbox that graded each submission.</p><ul>{items}</ul>" \
        if groups else ""


def write_index(book: dict, path: Path) -> Path:
    """The teacher's page: what the class got wrong first, then the gradebook, the distribution of totals,
    the pass rate of each check, the problems and which isolation layers graded which submissions."""
    rows = book["rows"]
    submitted = [row for row in rows if any(c["state"] != "missing" for c in row["cells"].values())]
    states: dict[str, int] = {}
    for row in rows:
        for cell in row["cells"].values():
            states[cell["state"]] = states.get(cell["state"], 0) + 1
    summary = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
    body = [f"<p>{len(rows)} students, {len(book['exercises'])} exercises ({summary}).</p>",
            _misconceptions(book), "<h2 id='gradebook'>Gradebook</h2>", _gradebook_table(book),
            "<h2 id='totals'>Totals</h2>", histogram_svg([row["total"] for row in submitted], book["max_total"]),
            f"<p>{len(rows) - len(submitted)} students submitted nothing (not in the histogram).</p>"
            if len(rows) > len(submitted) else "",
            _pass_rates(book), _problems(book), _similar(book), _isolation(book)]
    path.write_text(page("Class report", "\n".join(body), SCRIPT), encoding="utf-8")
    return path
