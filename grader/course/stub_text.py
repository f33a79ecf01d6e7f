"""A stub in the learner's language, from one source: the English stub and a catalogue of its words.

`exercises/<name>/<name>.zh.toml` lists each comment and docstring of the stub, as it stands in the stub, with its
translation:

    [[text]]
    en = '''TODO: one line of tensor arithmetic; broadcasting does the rest.'''
    zh = '''TODO：一行张量运算即可，广播会完成其余的事。'''

Only COMMENT tokens, docstrings (a string that is the first statement of the module, a class or a function) and
the strings a demo prints (a one-line literal given to `print()`, an f-string too: its text between the quotes is
the entry's `en`) are replaced, found with `tokenize` and `ast`: the code stays as it is, an f-string's fields
too. A comment block (full-line comments at one column on consecutive lines) is one text, its lines joined by
newlines without the `# `; a docstring is its text as `inspect.cleandoc` gives it. A translation may have more or
fewer lines; they are indented as the original.

An exercise with variants (grader/course/variants.py) is translated after its template is rendered for the draw, and its
entries are rendered with the same draw first, so `{{reduction.returns}}` in `en` and `{{reduction.returns_zh}}`
in `zh` cover every draw, and a comment a drawn value brings in has its own entry. `problems` is what `grade
validate` refuses: a text left in English in the stub of a language (`words`: TODO, `code`, shapes and names may
stay), a translation with English prose (`english_prose`), one that changes a code token, an entry no draw uses.
Never imports torch.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

from grader.course import variants
from grader.course.exercises import Exercise
from grader.text import Text, cjk_typography, english_prose, message_of, verbatim

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MARKERS = frozenset({"TODO", "FIXME", "NOTE", "XXX", "noqa"})
TEXT_TOKENS = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENCODING, tokenize.ENDMARKER)


@dataclass
class Span:
    """A comment block or a docstring of a source: where it is, its text, and how to write a text back."""

    start: int  # offsets in the source
    end: int
    text: str
    kind: str  # "comment", "docstring" or "string" (one that `print()` shows)
    indent: str
    lead: str = ""  # a docstring's quotes and the blank space before and after its text
    tail: str = ""
    own_line: bool = True  # a comment alone on its line (a block may go on below it), not after code

    def written(self, text: str) -> str:
        """`text` in this span's place, indented and marked as the original."""
        if self.kind == "comment":
            return f"\n{self.indent}".join(f"# {line}".rstrip() for line in text.split("\n"))
        if self.kind == "string":
            return self.lead + text + self.tail
        lines = text.split("\n")
        body = "\n".join([lines[0]] + [f"{self.indent}{line}" if line else "" for line in lines[1:]])
        return self.lead + body + self.tail


KINDS = {"comment": Text("comment", "注释"), "docstring": Text("docstring", "文档字符串"),
         "string": Text("printed string", "打印的字符串")}


def catalogue_file(exercise: Exercise, lang: str) -> Path:
    return exercise.folder / f"{exercise.name}.{lang}.toml"


def entries(exercise: Exercise, lang: str) -> list[dict]:
    """The exercise's [[text]] entries for `lang` (none for English, or without a catalogue)."""
    path = catalogue_file(exercise, lang)
    if lang == "en" or not path.is_file():
        return []
    return [e for e in tomllib.loads(path.read_text(encoding="utf-8")).get("text", [])
            if isinstance(e.get("en"), str) and isinstance(e.get(lang), str)]


def spans(source: str) -> list[Span]:
    """The comment blocks, docstrings and printed strings of `source`, in order."""
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))

    def at(pos: tuple[int, int]) -> int:
        return offsets[pos[0] - 1] + pos[1]

    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    found: list[Span] = []
    last_line_start = ""  # the first token of the logical line that ended last
    line_start = ""
    prev: tokenize.TokenInfo | None = None  # the last token that is neither a comment nor a blank line
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            text = tok.string[1:].removeprefix(" ")
            own_line = not tok.line[:tok.start[1]].strip()
            last = found[-1] if found else None
            if (own_line and last and last.kind == "comment" and last.own_line and last.indent == " " * tok.start[1]
                    and source.count("\n", last.end, at(tok.start)) == 1):
                last.text += "\n" + text
                last.end = at(tok.end)
            else:
                found.append(Span(at(tok.start), at(tok.end), text, "comment", " " * tok.start[1], own_line=own_line))
            continue
        if tok.type in (tokenize.NL, tokenize.ENCODING):
            continue
        if tok.type == tokenize.STRING and _is_docstring(tok, prev, last_line_start, tokens[i + 1:]):
            found.append(_docstring(tok, at(tok.start), at(tok.end)))
        if tok.type == tokenize.NEWLINE:
            last_line_start, line_start = line_start, ""
        elif not line_start and tok.type not in (tokenize.INDENT, tokenize.DEDENT):
            line_start = tok.string
        prev = tok
    return sorted(found + _printed(source, offsets), key=lambda span: span.start)


LITERAL = re.compile(r"([rRuUfF]{0,2})(['\"])(.*)\2", re.S)


def _printed(source: str, offsets: list[int]) -> list[Span]:
    """The strings `print()` is given in `source`: one-line literals, plain or f-strings, without an escape or a
    quote inside (none where the source does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.splitlines(keepends=True)

    def at(line: int, column: int) -> int:  # ast counts a column in UTF-8 bytes
        return offsets[line - 1] + len(lines[line - 1].encode()[:column].decode(errors="ignore"))

    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"):
            continue
        for arg in node.args:
            literal = isinstance(arg, ast.JoinedStr) or (isinstance(arg, ast.Constant) and isinstance(arg.value, str))
            if not literal or arg.lineno != arg.end_lineno or arg.end_col_offset is None:
                continue
            start, end = at(arg.lineno, arg.col_offset), at(arg.end_lineno, arg.end_col_offset)
            match = LITERAL.fullmatch(source[start:end])
            if match and match.group(2) not in match.group(3) and "\\" not in match.group(3):
                found.append(Span(start, end, match.group(3), "string", "", lead=match.group(1) + match.group(2),
                                  tail=match.group(2), own_line=False))
    return found


def _is_docstring(tok, prev, last_line_start: str, rest) -> bool:
    following = next((t for t in rest if t.type not in (tokenize.COMMENT, tokenize.NL)), None)
    if following is None or following.type not in (tokenize.NEWLINE, tokenize.ENDMARKER):
        return False
    if prev is None:
        return True  # the module's
    return prev.type == tokenize.INDENT and last_line_start in ("def", "class", "async")


def _docstring(tok, start: int, end: int) -> Span:
    literal = tok.string
    prefix = len(literal) - len(literal.lstrip("rRuUbB"))
    quote = literal[prefix:prefix + 3] if literal[prefix:prefix + 3] in ('"""', "'''") else literal[prefix]
    content = literal[prefix + len(quote):-len(quote)]
    stripped = content.strip()
    lead = literal[:prefix + len(quote)] + content[:len(content) - len(content.lstrip())]
    tail = content[len(content.rstrip()):] + quote
    lines = content.strip("\n").split("\n")
    rest = [line for line in lines[1:] if line.strip()]
    indent = min((line[:len(line) - len(line.lstrip())] for line in rest), key=len) if rest else " " * tok.start[1]
    return Span(start, end, inspect.cleandoc(stripped), "docstring", indent, lead, tail)


def words(text: str) -> list[str]:
    """The English words of a comment or docstring as written: plain words of two letters or more (not `code`,
    not names with a dot or an underscore, not TODO): what an English text left in another language's stub shows."""
    plain = re.sub(r"`[^`]*`", " ", text)
    found = [token.strip(",.;:!?()[]'\"") for token in plain.split()]
    return [w for w in found if len(w) > 1 and w.isascii() and w.isalpha() and w not in MARKERS]


def translate(source: str, translations: dict[str, str]) -> str:
    """`source` with each comment block and docstring that `translations` has replaced by its translation."""
    out = source
    for span in reversed(spans(source)):
        if span.text in translations:
            out = out[:span.start] + span.written(translations[span.text]) + out[span.end:]
    return out


def table(exercise: Exercise, lang: str, draw: dict) -> dict[str, str]:
    """English text -> translation for `draw`, each entry of the stub's catalogue rendered with the draw."""
    return table_of(entries(exercise, lang), lang, draw, catalogue_file(exercise, lang).name)


def table_of(items: list[dict], lang: str, draw: dict, where: str) -> dict[str, str]:
    """English text -> translation for `draw`, from [[text]] entries (`items`, read from `where`)."""
    return {variants.render(e["en"].strip("\n"), draw, where): variants.render(e[lang].strip("\n"), draw, where)
            for e in items if isinstance(e.get("en"), str) and isinstance(e.get(lang), str)}


def stub(exercise: Exercise, lang: str = "en", draw: dict | None = None) -> str:
    """The stub a learner gets: rendered for `draw` (the default draw: the stub file), in `lang`."""
    draw = variants.default_draw(exercise) if draw is None else draw
    source = variants.stub_text(exercise, draw)
    return source if lang == "en" else translate(source, table(exercise, lang, draw))


def code_tokens(source: str) -> list[tuple[int, str]]:
    """The tokens of `source` that are code: neither comments, layout, docstrings nor printed strings; then the
    fields of each printed f-string (`{loss:.3f}`), which are code too."""
    found = spans(source)
    docstrings = {(s.start, s.end) for s in found if s.kind == "docstring"}
    printed = [s for s in found if s.kind == "string"]
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    tokens = [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in TEXT_TOKENS
              and (offsets[t.start[0] - 1] + t.start[1], offsets[t.end[0] - 1] + t.end[1]) not in docstrings
              and not any(s.start <= offsets[t.start[0] - 1] + t.start[1] < s.end for s in printed)]
    return tokens + [(-1, "".join(re.findall(r"\{[^{}]*\}", s.text))) for s in printed if "f" in s.lead.lower()]


def problems(exercise: Exercise, lang: str) -> list[Text]:
    """What `grade validate` refuses in the stub of `lang`, on every draw: a comment or docstring left in English,
    a translation with English prose, a code token changed, a catalogue entry no draw uses."""
    if lang == "en":
        return []
    where = catalogue_file(exercise, lang).name
    try:
        items = entries(exercise, lang)
    except tomllib.TOMLDecodeError as exc:
        return [Text("{where}: {error}", "{where}：{error}", where=where, error=verbatim(exc))]
    return translation_problems(exercise, lang, lambda draw: variants.stub_text(exercise, draw), items, where,
                                Text("the stub", "初始代码"))


def translation_problems(exercise: Exercise, lang: str, source_of, items: list[dict], where: str,
                         what: Text) -> list[Text]:
    """What `grade validate` refuses in a translated source of the exercise (`source_of(draw)`: its English text for
    a draw; `items`: its [[text]] entries, from the file `where`; `what`: its name), on every draw: a comment or
    docstring left in English, a translation with English prose, a code token changed, an entry no draw uses."""
    found: list[Text] = []
    used: set[str] = set()
    for draw in variants.all_draws(exercise):
        on = Text(" (draw {label})", "（抽取 {label}）", label=variants.label(draw)) if draw else ""
        try:
            english, words_of = source_of(draw), table_of(items, lang, draw, where)
        except variants.VariantError as exc:
            return [message_of(exc)]
        translated = translate(english, words_of)
        originals = {s.text for s in spans(english)}
        used |= set(words_of) & originals
        try:
            same = code_tokens(translated) == code_tokens(english)
        except (tokenize.TokenError, SyntaxError):
            same = False
        if not same:
            found.append(Text("{where}{on}: a translation changes the code of {what} (a quote or a line break where "
                              "it ends a docstring or a comment?)",
                              "{where}{on}：某条翻译改变了{what}的代码（引号或换行提前结束了文档字符串或注释？）",
                              where=where, on=on, what=what))
            continue
        for span in spans(translated):
            kind = KINDS[span.kind]
            text = verbatim(span.text[:80])
            if span.text in originals and words(span.text):
                found.append(Text("{where}{on}: no translation for the {kind} '{text}'", "{where}{on}：{kind} '{text}' "
                                  "没有翻译", where=where, on=on, kind=kind, text=text))
            elif span.text not in originals and english_prose(span.text):
                found.append(Text("{where}{on}: the translation keeps English in the {kind} '{text}' ({prose})",
                                  "{where}{on}：{kind} '{text}' 的翻译里还有英文（{prose}）", where=where, on=on,
                                  kind=kind, text=text, prose=verbatim("; ".join(english_prose(span.text))[:80])))
            elif span.text not in originals and lang == "zh" and cjk_typography(span.text):
                found.append(Text("{where}{on}: the {kind} '{text}' breaks Chinese typography ({slips})",
                                  "{where}{on}：{kind} '{text}' 不合中文排版（{slips}）", where=where, on=on,
                                  kind=kind, text=text, slips=verbatim(" | ".join(cjk_typography(span.text))[:80])))
    for entry in items:
        if not isinstance(entry.get("en"), str):
            continue
        drawn = {variants.render(entry["en"].strip("\n"), d, where) for d in variants.all_draws(exercise)}
        if not drawn & used:
            found.append(Text("{where}: no comment or docstring of {what} is '{text}' (on any draw)",
                              "{where}：{what}中没有哪条注释或文档字符串是 '{text}'（在任何抽取中都没有）",
                              where=where, what=what, text=verbatim(entry["en"].strip()[:80])))
    return list({str(p) + p.render("zh"): p for p in found}.values())
