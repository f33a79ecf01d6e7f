"""Self-contained HTML reports: a learner's page (checks, loss curves, parameter traces) and, in batch
mode, the teacher's index (score histogram, per-check pass rates). Images are embedded PNGs drawn
with matplotlib, an optional extra; without it the pages keep their tables and say how to get plots.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections import defaultdict
from pathlib import Path

STYLE = """body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}.passed{color:#18794e}.failed{color:#c62828}.not_started{color:#8a6d00}.note{background:#fff5e6;
padding:8px;border-left:4px solid #f0a020}img{max-width:100%}"""
NO_PLOTS = "Plots need matplotlib: pip install 'torch-katas[plots]'."
MARKS = {"passed": "✓", "failed": "✗", "not_started": "·", "skipped": "–", "not_run": "○"}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode()


def _img(data: str, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _finite(values) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def plot_curve(curve: dict) -> str | None:
    """One recorded curve as an embedded PNG (None without matplotlib).

    The reference series and true values fix the visible range, so a diverging learner's curve
    leaves the chart (and the title says so) instead of flattening everything else.
    """
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    series = curve["series"]
    for name, values in series.items():
        ax.plot(range(len(values)), [v if math.isfinite(v) else float("nan") for v in values], label=name)
    for name, value in curve.get("truth", {}).items():
        ax.axhline(value, linestyle="--", linewidth=1, color="gray")
        ax.annotate(f"true {name} = {value:g}", (0, value), fontsize=8, color="gray")
    every = [v for values in series.values() for v in _finite(values)]
    anchor = [v for name, values in series.items() if "yours" not in name for v in _finite(values)]
    anchor += list(curve.get("truth", {}).values())
    title = curve["title"]
    if curve.get("log") and every and min(every) > 0:
        ax.set_yscale("log")
    elif anchor:
        lo, hi = min(anchor), max(anchor)
        pad = 0.5 * (hi - lo) or 1.0
        if any(v < lo - pad or v > hi + pad for v in every) or len(_finite(every)) < len(every):
            ax.set_ylim(lo - pad, hi + pad)
            title += " (your curve leaves the chart)"
    ax.set_title(title)
    ax.set_xlabel(curve.get("xlabel", "step"))
    ax.legend()
    data = _png(fig)
    plt.close(fig)
    return _img(data, curve["title"])


def diverged(curve: dict) -> bool:
    """The learner's series ends not finite, or far above where it started."""
    values = curve["series"].get("yours", [])
    if not values:
        return False
    return not math.isfinite(values[-1]) or (len(values) > 1 and values[-1] > 10 * abs(values[0]) + 1e-12)


DIVERGED = ("Your loss grew instead of shrinking. That usually means the learning rate is too large, "
            "or the gradients are not zeroed each step (they accumulate), or the update has the wrong sign.")


def check_table(result: dict) -> str:
    rows = "".join(
        f"<tr class='{c['outcome']}'><td>{MARKS[c['outcome']]}</td><td>{html.escape(c['title'])}</td>"
        f"<td>{c['points']:g}/{c['max_points']:g}</td><td>{html.escape(c['message'])}</td></tr>"
        for c in result["checks"])
    return f"<table><tr><th></th><th>check</th><th>points</th><th>feedback</th></tr>{rows}</table>"


def result_section(result: dict) -> str:
    parts = [f"<h2>{html.escape(result['exercise'])} · {html.escape(result.get('title', result.get('name', '')))}</h2>",
             f"<p><b>Score: {result['score']:g}/{result['max_score']:g}</b> ({html.escape(result['status'])})"
             + (f" {html.escape(result['message'])}" if result.get("message") else "") + "</p>",
             check_table(result)]
    curves = result.get("curves", [])
    if curves and _pyplot() is None:
        parts.append(f"<p class='note'>{NO_PLOTS}</p>")
    for curve in curves:
        if diverged(curve):
            parts.append(f"<p class='note'>{DIVERGED}</p>")
        image = plot_curve(curve)
        if image:
            parts.append(image)
        else:
            rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v[0]:.4g}</td><td>{v[-1]:.4g}</td></tr>"
                           for k, v in curve["series"].items() if v)
            parts.append(f"<p>{html.escape(curve['title'])}</p><table><tr><th>series</th><th>first</th>"
                         f"<th>last</th></tr>{rows}</table>")
    if result.get("output"):
        parts.append(f"<p>Your code printed:</p><pre>{html.escape(result['output'])}</pre>")
    return "\n".join(parts)


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def write_report(results: list[dict], path: Path, title: str) -> Path:
    """One page for one learner: every result's checks and plots."""
    path.write_text(page(title, "\n".join(result_section(r) for r in results)), encoding="utf-8")
    return path


def write_index(results: list[dict], path: Path, max_total: float) -> Path:
    """The teacher's page: the distribution of totals and the checks the class fails most."""
    totals: dict[str, float] = defaultdict(float)
    passes: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        totals[r["student"]] += r["score"]
        for c in r["checks"]:
            if c["outcome"] != "skipped":
                counts = passes[(r["exercise"], c["title"])]
                counts[0] += c["passed"]
                counts[1] += 1
    body = [f"<p>{len(totals)} students, {len(results)} graded submissions.</p>"]
    plt = _pyplot()
    if plt is not None and totals:
        fig, ax = plt.subplots(figsize=(6.4, 3))
        ax.hist(list(totals.values()), bins=min(20, max(5, len(totals))), range=(0, max_total or 1))
        ax.set_xlabel(f"total score (of {max_total:g})")
        ax.set_ylabel("students")
        body.append(_img(_png(fig), "score distribution"))
        plt.close(fig)
    elif plt is None:
        body.append(f"<p class='note'>{NO_PLOTS}</p>")
    rows = "".join(f"<tr><td>{html.escape(ex)}</td><td>{html.escape(title)}</td><td>{ok}/{n}</td>"
                   f"<td>{100 * ok / n:.0f}%</td></tr>"
                   for (ex, title), (ok, n) in sorted(passes.items(), key=lambda kv: kv[1][0] / kv[1][1]))
    body.append("<h2>Checks, most failed first</h2><table><tr><th>exercise</th><th>check</th><th>passed</th>"
                f"<th>rate</th></tr>{rows}</table>")
    links = "".join(f"<li><a href='feedback/{html.escape(s)}.html'>{html.escape(s)}</a>: {t:g}</li>"
                    for s, t in sorted(totals.items()))
    body.append(f"<h2>Students</h2><ul>{links}</ul>")
    path.write_text(page("Class report", "\n".join(body)), encoding="utf-8")
    return path
