"""CSV files a teacher opens in a spreadsheet: no cell is ever run as a formula (CSV injection).

Student names, folder and file names come from learners (an LMS builds them from the display name), so a
name like `=HYPERLINK("http://evil","x")` must reach Excel or LibreOffice as text. OWASP's rule: a text
cell that starts with `=`, `+`, `-`, `@` (after spaces) gets a leading `'` (its other two, a tab or a carriage
return first, cannot happen here: see below). A number stays a
number (`-1.5` is a score an LMS import must read as one), so only cells that are not a number change. And
no control character reaches a cell (an ESC sequence, a BEL, a bidirectional override): each is shown as an escape
(`\\x1b`, as in the feedback's file names), a tab or a line break becomes a space.
"""

from __future__ import annotations

import csv
import re

from grader.text import visible

FORMULA_START = ("=", "+", "-", "@")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


LINE_BREAKS = {0x09: " ", 0x0A: " ", 0x0D: " "}


def cell(value):
    """`value` as a spreadsheet reads it only as data: no control character, and text that would start a formula
    prefixed with `'`."""
    if not isinstance(value, str):
        return value
    value = visible(value.translate(LINE_BREAKS))
    if not value.lstrip(" ").startswith(FORMULA_START) or NUMBER.fullmatch(value):
        return value
    return "'" + value


class writer:
    """`csv.writer`, every cell passed through `cell`."""

    def __init__(self, f, **options):
        self._writer = csv.writer(f, **options)

    def writerow(self, row):
        return self._writer.writerow([cell(v) for v in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)
