"""Show a grading result: a table of checks for the terminal, or one JSON object.

Whatever learner code printed, raised or named reaches the terminal with its control characters made visible
(`text.visible`): an escape sequence in a submission's output or exception message never sets a window title,
writes the clipboard, clears the screen or draws a fake score. The only escape sequences written are our colours.

Runs in: the `grade` process or a fork of the front, watch, a notebook's text display. No torch.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata

import click

from grader.judge.result import CheckResult, Result
from grader.text import say, visible

SYMBOLS = {"passed": ("✓", "green"), "failed": ("✗", "red"), "not_started": ("·", "yellow"),
           "skipped": ("–", "blue"), "not_run": ("○", "red")}
PLAIN = {"passed": "ok", "failed": "FAIL", "not_started": "todo", "skipped": "skip", "not_run": "not run"}
STATUS_TEXT = {
    "error": "Your file could not be loaded:",
    "timeout": "Your code ran past its time limit.",
    "crashed": "Your code crashed the sandbox process.",
    "tampered": "Your code tampered with the grader: the score is 0.",
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


def points_text(check: CheckResult, lang: str) -> str:
    """A check's points as shown: "2/3", or "skipped" for a check not verified here (left out of the total)."""
    if check.outcome == "skipped":
        return say(lang, "skipped")
    return f"{_points(check.points)}/{_points(check.max_points)}"


def score_text(result: Result, lang: str) -> str:
    """"Score: 7/10", with the points skipped here when there are any; in a release, the public checks' score and
    the points the teacher's grading holds."""
    if result.hidden_points and not result.checks and result.status == "graded":
        return say(lang, "No public check: nothing is checked here; the hidden checks (points: {hidden}) are graded "
                         "by your teacher.", hidden=_points(result.hidden_points))
    if result.hidden_points:
        return say(lang, "Public checks: {score}/{max_score}; the hidden checks (points: {hidden}) are graded by your "
                         "teacher.", score=_points(result.score), max_score=_points(result.max_score),
                   hidden=_points(result.hidden_points))
    total = say(lang, "Score: {score}/{max_score}", score=_points(result.score), max_score=_points(result.max_score))
    if result.skipped_points:
        total += say(lang, " ({points} points skipped: not verified here)", points=_points(result.skipped_points))
    return total


def render(result: Result, lang: str = "en", color: bool | None = None, *, notebook: bool = False,
           mark_first: bool = False, watch: bool = False, kata: bool = False) -> str:
    """The terminal report of one result, in `lang`; with `mark_first`, the first failing check is marked
    (watch mode); a `notebook` result ends with the next step in a notebook's words, a `kata` attempt's in a
    kata's."""
    color = use_color() if color is None else color
    style = click.style if color else (lambda text, **_: text)
    heading = f"{result.exercise} · {result.title.render(lang)}" if result.title.render(lang) else result.name
    lines = [style(visible(heading), bold=True)]
    titles = {c.id: visible(c.title.render(lang)) for c in result.checks}
    width = max(map(display_width, titles.values()), default=10)
    plain = {outcome: say(lang, word) for outcome, word in PLAIN.items()}
    plain_width = max(map(display_width, plain.values()))
    first = result.first_to_fix() if mark_first else None
    for c in result.checks:
        symbol, colour = SYMBOLS[c.outcome]
        mark = style(symbol, fg=colour) if color else pad(plain[c.outcome], plain_width)
        pts = points_text(c, lang)
        line = f"  {mark} {pad(titles[c.id], width)}  {' ' * max(0, 7 - display_width(pts))}{pts}"
        if c is first:
            line += style(say(lang, "  ← first to fix"), fg="red", bold=True)
        lines.append(line)
        message = visible(c.message.render(lang))
        if message:
            lines.append(f"      {message}")
    message = visible(result.message.render(lang))
    if result.status in STATUS_TEXT:
        status = say(lang, STATUS_TEXT[result.status])
        lines.append(style(status + ("" if status.endswith(("：", "。")) else " ") + message, fg="red"))
    elif message:  # graded, with something to say (notebook cells that raised)
        lines.append(style(message, fg="yellow"))
    if result.output:
        shown = "\n".join("      " + line for line in visible(result.output).rstrip().splitlines()[-8:])
        lines += ["  " + say(lang, "Your code printed:"), shown]
    for note in result.notes:
        lines.append("  " + visible(say(lang, "note: {note}", note=note)))
    total = score_text(result, lang)
    lines.append(style(total, fg="green" if result.score >= result.max_score else "yellow", bold=True)
                 + say(lang, "  ({duration:.1f} s, seed {seed})", duration=result.duration_s, seed=result.seed))
    lines.append(visible(next_step(result, lang, notebook=notebook, watch=watch, kata=kata)))
    return "\n".join(lines)


def next_step(result: Result, lang: str, *, notebook: bool = False, watch: bool = False, kata: bool = False) -> str:
    """One next step: the next exercise (after a kata, the next kata), the error to fix, the TODOs to fill in, or the
    hint to ask for; in `grade watch`'s words with `watch` (save again; watch itself says where it goes next)."""
    ex = result.exercise
    if result.hidden_points and not result.checks and result.status == "graded":
        return say(lang, "Next: write {ex} as its statement asks; `grade next` shows the next exercise.", ex=ex)
    if watch:
        return _watch_step(result, lang)
    if result.full and result.hidden_points:
        return say(lang, "Next: public checks pass; the hidden checks (points: {points}) are graded by your teacher. "
                         "`grade next` shows the next exercise.", points=_points(result.hidden_points))
    if result.full and kata:
        if notebook:
            return say(lang, "Next: all checks pass! `grade today` in a terminal shows what else to practise today.")
        return say(lang, "Next: all checks pass! `grade today` shows what else to practise today.")
    if result.full:
        if notebook:
            return say(lang, "Next: all checks pass! `grade next` in a terminal shows the next exercise.")
        return say(lang, "Next: all checks pass! `grade next` shows the next exercise.")
    if result.status == "error":
        if notebook:
            return say(lang, 'Next: fix the error above, then run `check("{ex}")` again.', ex=ex)
        return say(lang, "Next: fix the error above, then `grade {ex} --kata` again." if kata else
                   "Next: fix the error above, then `grade {ex}` again.", ex=ex)
    if all(c.outcome in ("not_started", "skipped") for c in result.checks):
        if notebook:
            return say(lang, 'Next: fill in the TODOs in the cells above (the statement is at the top), then run '
                             '`check("{ex}")` again.', ex=ex)
        if kata:  # the statement of the attempt's draw lies beside its file
            return say(lang, "Next: open {file} and fill in the TODOs; this attempt's statement is beside it.",
                       file=result.submission)
        return say(lang, "Next: open {file} and fill in the TODOs; `grade show {ex}` for the statement.",
                   file=result.submission, ex=ex)
    if notebook:
        return say(lang, 'Next: fix the first failing check above; stuck? Run `hint("{ex}")`.', ex=ex)
    return say(lang, "Next: fix the first failing check above; stuck? `grade hint {ex}`.", ex=ex)


def _watch_step(result: Result, lang: str) -> str:
    if result.full and result.hidden_points:
        return say(lang, "Public checks pass; the hidden checks (points: {points}) are graded by your teacher.",
                   points=_points(result.hidden_points))
    if result.full:
        return say(lang, "All checks pass!")
    if result.status == "error":
        return say(lang, "Next: fix the error above, then save again.")
    if all(c.outcome in ("not_started", "skipped") for c in result.checks):
        return say(lang, "Next: fill in the TODOs of {file}, then save; `grade show {ex}` for the statement.",
                   file=result.submission, ex=result.exercise)
    return say(lang, "Next: fix the first failing check above, then save again.")


JSON_INVISIBLE = {c: f"\\u{c:04x}" for c in [0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                             *range(0x2066, 0x206A)]}


def to_json(result: Result, lang: str | None = None) -> str:
    """One JSON object; the control characters JSON leaves raw (DEL, C1, bidirectional overrides) escaped too."""
    return json.dumps(result.to_json(lang), ensure_ascii=False).translate(JSON_INVISIBLE)


def hint_lines(hints: list[str], shown: int, lang: str, again: str) -> list[str]:
    """The hints revealed so far, and how to get a stronger one (`again`: the command that does)."""
    if not hints:
        return [say(lang, "This exercise has no hints.")]
    lines = [say(lang, "Hint {i}/{n}: {hint}", i=i, n=len(hints), hint=hint) for i, hint in enumerate(hints[:shown], 1)]
    if shown < len(hints):
        lines.append(say(lang, "({again} again for a stronger hint)", again=again))
    return lines
