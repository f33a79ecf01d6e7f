"""What click itself prints, in the CLI's language: its usage errors and help words, and help text wrapped by
the columns a terminal gives each character (a Chinese character takes two), not by their count.

click marks its own words for gettext (`_("Missing argument")`); `install` gives click's modules a gettext that
looks them up in the CLI's catalogue (grader/locale/<lang>.toml), under the language `lang_of()` says, and makes
the names of click's types ("integer range", shown as a metavar INTEGER RANGE and in "'x' is not a valid integer
range") go through it too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import click
import click.core
import click.decorators
import click.exceptions
import click.formatting
import click.parser
import click.termui
import click.types

from grader.report.terminal import display_width
from grader.text import catalogue

CLICK_MODULES = (click.core, click.decorators, click.exceptions, click.formatting, click.parser, click.termui,
                 click.types)

# a token a line may end after: a run of non-space, non-CJK text, a space, or one CJK character with the
# punctuation that must not start a line
_WIDE = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
_TOKENS = re.compile(rf"[（《「『]*[{_WIDE}][，。；：、）》」』！？…]*|[^\s{_WIDE}]+|\s+")


def install(lang_of: Callable[[], str]) -> None:
    """click's own words through the catalogue of the language `lang_of()` gives when they are shown."""

    def gettext(message: str) -> str:
        return catalogue(lang_of()).get(message, message)

    def ngettext(singular: str, plural: str, n: int) -> str:
        return gettext(singular if n == 1 else plural)

    for module in CLICK_MODULES:
        if hasattr(module, "_"):
            module._ = gettext  # type: ignore[attr-defined]  # each module binds `from gettext import gettext as _`
        if hasattr(module, "ngettext"):
            module.ngettext = ngettext  # type: ignore[attr-defined]
    for kind in vars(click.types).values():
        if isinstance(kind, type) and issubclass(kind, click.ParamType) and isinstance(kind.__dict__.get("name"), str):
            kind.name = _type_name(kind.__dict__["name"], gettext)  # type: ignore[assignment]
    click.Path.name = _type_name("path", gettext)  # type: ignore[assignment]  # set by each instance: file, path


def _type_name(default: str, gettext: Callable[[str], str]) -> property:
    """A click type's `name` in the language of the moment (an instance may set its own, as click.Path does)."""
    return property(lambda self: gettext(self.__dict__.get("_name", default)),
                    lambda self, value: self.__dict__.__setitem__("_name", value))


def wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """`text` as lines of at most `width` display columns (a word longer than that stays whole)."""
    lines: list[str] = []
    line, used = first, display_width(first)
    for token in _TOKENS.findall(" ".join(text.split())):
        size = display_width(token)
        if token.isspace():
            if used > display_width(first if not lines else rest):
                line, used = line + " ", used + 1
            continue
        if used + size > width and line.strip():
            lines.append(line.rstrip())
            line, used = rest, display_width(rest)
        line, used = line + token, used + size
    if line.strip():
        lines.append(line.rstrip())
    return lines


class DisplayWidthFormatter(click.HelpFormatter):
    """click's help formatter, wrapping by display width."""

    def write_heading(self, heading: str) -> None:
        colon = "：" if re.search(f"[{_WIDE}]", heading) else ":"
        self.write(f"{'':>{self.current_indent}}{heading}{colon}\n")

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
        for i, paragraph in enumerate(paragraphs):
            if i:
                self.write("\n")
            self.write("\n".join(wrap(paragraph, self.width, indent, indent)) + "\n")

    def write_dl(self, rows, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first_col = min(max((display_width(term) for term, _ in rows), default=0), col_max) + col_spacing
        for term, text in rows:
            self.write(f"{'':>{self.current_indent}}{term}")
            if not text:
                self.write("\n")
                continue
            if display_width(term) <= first_col - col_spacing:
                self.write(" " * (first_col - display_width(term)))
            else:
                self.write("\n" + " " * (first_col + self.current_indent))
            lines = wrap(text, max(self.width - first_col - 2, 10)) or [""]
            self.write(lines[0] + "\n")
            for line in lines[1:]:
                self.write(f"{'':>{first_col + self.current_indent}}{line}\n")


class LocalContext(click.Context):
    formatter_class = DisplayWidthFormatter

