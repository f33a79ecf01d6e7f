"""Learner-facing text in the learner's language: one mechanism for check messages and the CLI.

A `Text` holds one template per language, filled from the same values when it is rendered:

    Text("{name} should have shape {want}, got {got}.",
         "{name} 的形状应为 {want}，实际为 {got}。", name=what, want=[8, 1], got=[1, 8])

A language without a template of its own is looked up in that language's catalogue,
`grader/locale/<lang>.toml`, which maps English templates to translations (the CLI's lines live
there), so a new language is a file. Values may be Texts themselves (rendered in the same
language) or `verbatim(...)` text quoted as is: the learner's own error message, a file name.
`say` renders a CLI line through the catalogue; an error raised with a Text keeps it (`message_of`), so it is
rendered in the reader's language where it is shown. `english_prose` finds English prose left in a rendered
non-English text, outside code and quotes; `stray_english` a function word left alone in it ("in float16"), and
`spliced` a sentence set into the middle of another's clause by a template.
"""

from __future__ import annotations

import functools
import locale
import os
import re
import string
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LANGUAGES = ("en", "zh")
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
QUOTE = "\u27e6\u27e7"  # a masked verbatim value, when rendering for the language check


@functools.cache
def catalogue(lang: str) -> dict[str, str]:
    """English template -> translation, from grader/locale/<lang>.toml (empty for English)."""
    path = LOCALE_DIR / f"{lang}.toml"
    if lang == "en" or not path.is_file():
        return {}
    return tomllib.loads(path.read_text(encoding="utf-8"))


class Verbatim(str):
    """Text quoted as it is in every language (a learner's error message, a file name, code)."""


def verbatim(text) -> Verbatim:
    return Verbatim(str(text))


class Quotation(Verbatim):
    """Another program's words quoted in a sentence (a framework's error message): marked as a quotation where
    a language needs it, 「...」 in Chinese, so it does not run into the sentence around it."""


def quoted(text) -> Quotation:
    return Quotation(str(text))


QUOTES = {"zh": "「{}」"}


class Text:
    """A message with one template per language, rendered with the same values in each."""

    __slots__ = ("templates", "values")

    def __init__(self, en: str, zh: str | None = None, /, **values):
        self.templates = {"en": en}
        if zh is not None:
            self.templates["zh"] = zh
        self.values = values

    @classmethod
    def of(cls, value) -> Text:
        """A Text from a Text, an (English, Chinese) pair, or one string for every language."""
        if isinstance(value, Text):
            return value
        if isinstance(value, tuple) and len(value) == 2:
            return cls(*value)
        return cls(str(value), str(value))

    def template(self, lang: str) -> str:
        own = self.templates.get(lang)
        if own is not None:
            return own
        english = self.templates["en"]
        return catalogue(lang).get(english, english)

    def render(self, lang: str = "en", *, mask: bool = False, escape=None) -> str:
        """The text in `lang`; with `mask`, verbatim values are replaced by a marker (for `english_prose`); with
        `escape`, every value (not the templates: ours) goes through it (a page's markup around escaped values)."""
        template = self.template(lang)
        if not self.values:
            return template
        values = {k: _value(v, lang, mask, escape) for k, v in self.values.items()}
        if lang not in CJK_LANGUAGES:
            return template.format_map(values)
        return _cjk_format(template, values)

    def __add__(self, other) -> Text:
        """Two texts one after the other (a sentence, then the likely cause)."""
        other = Text.of(other) if not isinstance(other, Text) else other
        return Text("{a}{b}", "{a}{b}", a=self, b=other)

    def __str__(self) -> str:
        return self.render("en")

    def __repr__(self) -> str:
        return f"Text({self.render('en')!r})"


CJK_LANGUAGES = frozenset({"zh"})
CJK = "\u3400-\u4dbf\u4e00-\u9fff"
_FORMATTER = string.Formatter()


def _cjk_format(template: str, values: dict) -> str:
    """`template` filled from `values`, where a space the template puts beside a field (for a name or a number)
    goes when the value on that side is Chinese: "{what} 应该" reads "返回的损失应该", not "返回的损失 应该"."""
    out, value_ends_cjk = "", False
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        if value_ends_cjk and re.match(rf" [{CJK}]", literal):
            literal = literal[1:]
        out += literal
        if field is None:
            value_ends_cjk = False
            continue
        value, _ = _FORMATTER.get_field(field, (), values)
        text = _FORMATTER.format_field(_FORMATTER.convert_field(value, conversion), spec or "")
        if re.match(rf"[{CJK}]", text) and re.search(rf"[{CJK}] $", literal):
            out = out[:-1]
        out += text
        value_ends_cjk = bool(re.search(rf"[{CJK}]$", text))
    return out


def joined(items, en_sep: str, zh_sep: str | None = None) -> Text:
    """Several texts (or plain values) as one, with a separator per language."""
    slots = "{sep}".join(f"{{item{i}}}" for i in range(len(items)))
    values = {f"item{i}": item for i, item in enumerate(items)}
    return Text(slots, slots, sep=Text(en_sep, en_sep if zh_sep is None else zh_sep), **values)


def _value(value, lang: str, mask: bool, escape=None):
    if isinstance(value, Text):
        return value.render(lang, mask=mask, escape=escape)
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return Text(*value).render(lang, mask=mask, escape=escape)
    if isinstance(value, Verbatim):
        if mask:
            return QUOTE
        value = QUOTES.get(lang, "{}").format(value) if isinstance(value, Quotation) else str(value)
    return escape(value) if escape is not None and isinstance(value, str) else value


def message_of(exc: BaseException) -> Text:
    """An exception's message as a Text: the Text it was raised with, else its words as they are."""
    return exc.args[0] if exc.args and isinstance(exc.args[0], Text) else Text.of(str(exc))


def say(lang: str, english: str, /, **values) -> str:
    """A line of the CLI in `lang`: its English template, translated by the catalogue."""
    return Text(english, **values).render(lang)


# -- the language check -----------------------------------------------------------------

_CODE = re.compile(r"`[^`]*`|\u27e6\u27e7|https?://\S+")
_WORD = re.compile(r"[A-Za-z]{2,}(?:-[A-Za-z]+)*(?:'[a-z]{1,2})?|[aA]")
STOPWORDS = frozenset(
    "a an the your you yours is are was were be been of to in on at by for from with into and or not no it its "
    "this that these those did does do has have had should would could can cannot got get than then there here "
    "what which when where why how if else but so only once each every all any".split())


def english_prose(text: str) -> list[str]:
    """Runs of English words in `text` outside `code`, URLs and masked quotes: three or more words in a
    row, or two where one is a common function word ("the", "your", "of"). Empty when there is none."""
    found = []
    breaks = r"[\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]+|[:;!?()\[\]\"“”，。：；（）]"
    for segment in re.split(breaks, _CODE.sub(" ", text)):
        run: list[str] = []
        for token in segment.split() + [""]:
            token = token.strip(",.'‘’")
            if token and _WORD.fullmatch(token):
                run.append(token)
                continue
            if len(run) >= 3 or (len(run) == 2 and any(w.lower() in STOPWORDS for w in run)):
                found.append(" ".join(run))
            run = []
    return found


def stray_english(text: str) -> list[str]:
    """English function words standing alone in Chinese prose, which `english_prose` lets by: "q[4, 8] in float16",
    "做了 in-place 修改". Not in `code`, URLs, masked quotes, [a shape or list] or {a dict}, nor a word called or
    assigned as code (`.to(`, `in=`); a single letter is a variable ("a 的每一行"). Empty when there is none."""
    masked = _CODE.sub(" ", text)
    while re.search(r"\[[^\[\]]*\]|\{[^{}]*\}", masked):
        masked = re.sub(r"\[[^\[\]]*\]|\{[^{}]*\}", " ", masked)
    return [m.group() for m in re.finditer(r"(?<![\w.])[A-Za-z]+(?:-[A-Za-z]+)*(?![\w(=])", masked)
            if any(len(w) > 1 and w.lower() in STOPWORDS for w in m.group().split("-"))]


SENTENCE_BREAKS = "：；。！？"


def spliced(text: Text, lang: str = "zh") -> list[str]:
    """Sentences spliced into another's clause when `text` is rendered in `lang`: a value holding a sentence break
    (：；。！？, outside code and quotes) set between two Chinese characters of the template around it, as
    "与{why}的结果一致" given "更新只乘以了 alpha：还要除以 r". Each is shown in its place, the value in 「」. A text
    without values is shown as written, braces and all: it has none."""
    if not text.values:
        return []
    found = []
    parts = list(_FORMATTER.parse(text.template(lang)))
    for i, (literal, field, _, _) in enumerate(parts):
        if field is None:
            continue
        value, _ = _FORMATTER.get_field(field, (), text.values)
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
            value = Text(*value)
        if not isinstance(value, Text):
            continue
        found += spliced(value, lang)
        rendered, after = value.render(lang, mask=True), parts[i + 1][0] if i + 1 < len(parts) else ""
        if (re.search(rf"[{CJK}] ?$", literal) and re.match(rf" ?[{CJK}]", after)
                and re.search(f"[{SENTENCE_BREAKS}]", _CODE.sub(" ", rendered))):
            found.append(f"{literal[-6:].lstrip()}「{rendered}」{after[:6].rstrip()}")
    return found


CJK_PUNCTUATION = "，。：；！？、）」』》】"


def cjk_typography(text: str) -> list[str]:
    """Chinese typography slips in `text`, outside `code`, URLs and masked quotes, each with a few characters around
    it: a space before Chinese punctuation ("得分 ："), an ASCII comma, colon, semicolon, ! or ? after a Chinese
    character ("通过, 1 项"), a space between two Chinese characters ("损失 应该"). A line that begins with a
    space is a table's row, its columns spaced: only the first two are looked for there."""
    found = []
    for line in _CODE.sub(QUOTE, text).splitlines():
        patterns = [rf"(?<=\S) +[{CJK_PUNCTUATION}]", rf"[{CJK}][,:;!?]"] + ([] if line.startswith(" ") else
                                                                      [rf"[{CJK}] +[{CJK}]"])
        for pattern in patterns:
            found += [line[max(0, m.start() - 6):m.end() + 6] for m in re.finditer(pattern, line)]
    return found


def localized(value, lang: str) -> str:
    """A label given as a `Text`, an (English, Chinese) pair or English text, in `lang` (English text through
    the catalogue, by its exact template)."""
    return (Text(value) if isinstance(value, str) else Text.of(value)).render(lang)


def locale_lang() -> str:
    """The language of the user's locale (LC_ALL, LC_MESSAGES, LANG): zh for a Chinese one, else en."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(var):
            return "zh" if os.environ[var].lower().startswith("zh") else "en"
    return "zh" if (locale.getlocale()[0] or "").lower().startswith("zh") else "en"


_INVISIBLE = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0b, 0x20), 0x7f, *range(0x80, 0xa0)]}
_INVISIBLE |= {c: f"\\u{c:04x}" for c in (0x061c, 0x200e, 0x200f, *range(0x202a, 0x202f), *range(0x2066, 0x206a))}


def visible(text: str) -> str:
    """`text` with every control character shown as an escape (`\\x1b`), never acted on: what learner code printed,
    raised or named, on its way to a terminal. ESC, BEL, backspace, a carriage return, C1 codes and the
    bidirectional overrides that reorder a line are made visible; newlines and tabs stay."""
    return text.translate(_INVISIBLE)


def lang_in(args: list[str]) -> str | None:
    """The value of a --lang among `args` (read before click parses them, so that --help obeys it)."""
    for i, arg in enumerate(args):
        if arg.startswith("--lang="):
            value = arg.removeprefix("--lang=")
        elif arg == "--lang" and i + 1 < len(args):
            value = args[i + 1]
        else:
            continue
        if value in LANGUAGES:
            return value
    return None
