"""Show a grading result: a table of checks for the terminal, or one JSON object."""

from __future__ import annotations

import json
import os
import sys
import unicodedata

import click

SYMBOLS = {"passed": ("✓", "green"), "failed": ("✗", "red"), "not_started": ("·", "yellow"),
           "skipped": ("–", "blue"), "not_run": ("○", "red")}
PLAIN = {"passed": "ok", "failed": "FAIL", "not_started": "todo", "skipped": "skip", "not_run": "----"}
STATUS_TEXT = {
    "error": ("Your file could not be loaded:", "无法加载你的文件："),
    "timeout": ("Your code ran past its time limit.", "你的代码超过了时间限制。"),
    "crashed": ("Your code crashed the sandbox process.", "你的代码导致沙箱进程崩溃。"),
    "tampered": ("Your code tampered with the grader: the score is 0.", "你的代码篡改了评分器：得分为 0。"),
}


def use_color(stream=None) -> bool:
    stream = stream or sys.stdout
    return not os.environ.get("NO_COLOR") and hasattr(stream, "isatty") and stream.isatty()


def display_width(text: str) -> int:
    """Columns `text` takes in a terminal: Chinese characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _points(x: float) -> str:
    return f"{x:g}"


def render(result: dict, lang: str = "en", color: bool | None = None) -> str:
    """The terminal report of one result."""
    color = use_color() if color is None else color
    style = click.style if color else (lambda text, **_: text)
    lines = [style(f"{result['exercise']} · {result['title']}" if result.get("title") else result["name"], bold=True)]
    width = max((display_width(c["title"]) for c in result["checks"]), default=10)
    for c in result["checks"]:
        symbol, colour = SYMBOLS[c["outcome"]]
        mark = style(symbol, fg=colour) if color else PLAIN[c["outcome"]].ljust(4)
        pts = f"{_points(c['points'])}/{_points(c['max_points'])}"
        lines.append(f"  {mark} {pad(c['title'], width)}  {pts:>7}")
        if c["message"]:
            lines.append(f"      {c['message']}")
    if result["status"] in STATUS_TEXT:
        en, zh = STATUS_TEXT[result["status"]]
        lines.append(style(f"{zh if lang == 'zh' else en} {result.get('message', '')}".strip(), fg="red"))
    elif result.get("message"):  # graded, with something to say (notebook cells that raised)
        lines.append(style(result["message"], fg="yellow"))
    if result.get("output"):
        label = "你的代码输出：" if lang == "zh" else "Your code printed:"
        shown = "\n".join("      " + line for line in result["output"].rstrip().splitlines()[-8:])
        lines += [f"  {label}", shown]
    for note in result.get("notes", []):
        lines.append(f"  note: {note}")
    full = result["score"] >= result["max_score"]
    total = f"{_points(result['score'])}/{_points(result['max_score'])}"
    label = "得分" if lang == "zh" else "Score"
    lines.append(style(f"{label}: {total}", fg="green" if full else "yellow", bold=True)
                 + f"  ({result['duration_s']:.1f} s, seed {result['seed']})")
    lines.append(next_step(result, lang))
    return "\n".join(lines)


def next_step(result: dict, lang: str) -> str:
    ex = result["exercise"]
    if result["score"] >= result["max_score"]:
        return f"Next: {'全部通过！' if lang == 'zh' else 'all checks pass!'} `grade list` for the next exercise."
    if result["status"] == "error":
        return f"Next: fix the error above, then `grade {ex}` again."
    if all(c["outcome"] in ("not_started", "skipped") for c in result["checks"]):
        return f"Next: open {result['submission']} and fill in the TODOs; `grade show {ex}` for the statement."
    return f"Next: fix the first failing check above; stuck? `grade hint {ex}`."


def to_json(result: dict) -> str:
    return json.dumps(result, ensure_ascii=False)
