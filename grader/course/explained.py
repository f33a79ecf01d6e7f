"""An explained solution: the reference solution with the why of it, in the learner's language, from one source.

`solutions/<name>.explain.toml`, beside the reference solution:

    idea = '''Two or three sentences: the idea of the solution.'''
    idea_zh = '''同样的两三句话。'''
    [[avoids]]          # the mistakes the solution avoids, each by the mistake key the checks name
    key = "sign"
    en = "Computes y_pred - y, not y - y_pred: the gradient's sign follows the loss."
    zh = "……"
    [[text]]            # each comment block and docstring of the solution, in Chinese, as a stub's <name>.zh.toml
    en = '''the comment as it stands in the solution'''
    zh = '''它的中文'''

`explanation` is what `grade solution` shows: the idea, the solution rendered for a draw of the exercise's variants
and translated as a stub is (grader/course/stub_text.py: the same comment and docstring spans), and each mistake it
avoids with its key's meaning (grader/course/mistake_keys.py). An exercise with variants may use `{{reduction.name}}`
in any text, rendered with the same draw. `problems` is what `grade validate` refuses. Never imports torch.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.course import stub_text, variants
from grader.course.exercises import Exercise
from grader.course.mistake_keys import describe, registered, registry_file
from grader.text import Text, cjk_typography, english_prose, verbatim


class ExplainError(ValueError):
    """An explanation file that cannot be read (raised with a Text)."""


def explain_file(exercise: Exercise) -> Path:
    return exercise.solution.with_name(f"{exercise.name}.explain.toml")


def load(exercise: Exercise) -> dict | None:
    """The exercise's explanation file as data (None without one); ExplainError when it is not TOML."""
    path = explain_file(exercise)
    if not path.is_file():
        return None
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ExplainError(Text("{file}: {error}", "{file}：{error}", file=path.name, error=verbatim(exc))) from None


def _said(item: dict, key: str, lang: str) -> str:
    """An entry's text in `lang`: `key_zh` (`zh` for an [[avoids]] entry) in Chinese, else `key` (`en`)."""
    english = item.get(key, "")
    translated = item.get(f"{key}_{lang}" if key != "en" else lang)
    return str(translated if lang != "en" and translated else english).strip()


def explanation(exercise: Exercise, lang: str = "en", draw: dict | None = None) -> dict:
    """{"idea", "code", "avoids": [{"key", "text", "meaning"}]} for `draw` (default: the exercise as written), in
    `lang`; without an explanation file, the solution alone (idea "" and no avoids)."""
    draw = variants.default_draw(exercise) if draw is None else draw
    data = load(exercise) or {}
    where = explain_file(exercise).name
    code = variants.rendered(exercise.solution, draw)
    if lang != "en":
        code = stub_text.translate(code, stub_text.table_of(data.get("text", []), lang, draw, where))
    keys = registered(exercise)
    avoids = []
    for item in data.get("avoids", []):
        meaning = describe(str(item.get("key", "")), keys)
        avoids.append({"key": item.get("key", ""), "text": variants.render(_said(item, "en", lang), draw, where),
                       "meaning": meaning.render(lang) if meaning is not None else ""})
    return {"idea": variants.render(_said(data, "idea", lang), draw, where), "code": code, "avoids": avoids}


def problems(exercise: Exercise) -> list[Text]:
    """What `grade validate` refuses in the explanation: none where the course asks for one, an idea or a mistake
    left without its words in a language of the course (or with English prose in Chinese), a key no registry
    describes, a comment or docstring of the solution without its translation (on every draw), as a stub's."""
    path = explain_file(exercise)
    where = path.name
    try:
        data = load(exercise)
    except ExplainError as exc:
        return [exc.args[0]]
    if data is None:
        return [Text("no explanation of the solution: write {file} (docs/authoring.md, \"Explained solutions\")",
                     "没有参考答案的讲解：请写 {file}（见 docs/authoring.md 的“Explained solutions”）",
                     file=verbatim(path))] if exercise.course.explained else []
    chinese = "zh" in exercise.course.languages
    found = []
    for key, lang in (("idea", "en"), ("idea_zh", "zh")):
        if (lang == "en" or chinese) and not str(data.get(key, "")).strip():
            found.append(Text("{file}: no `{key}` (two or three sentences: the idea of the solution)",
                              "{file}：没有 `{key}`（两三句话：这个解法的思路）", file=where, key=key))
    avoids = data.get("avoids", [])
    if not avoids:
        found.append(Text("{file}: no [[avoids]]: name the mistakes the solution avoids, each by its key",
                          "{file}：没有 [[avoids]]：请写出这个解法避开的错误，每个用它的错误键", file=where))
    keys = registered(exercise)
    for item in avoids:
        key = str(item.get("key", ""))
        if describe(key, keys) is None:
            found.append(Text("{file}: the mistake key '{key}' is registered nowhere (the checks' keys: {registry})",
                              "{file}：错误键 '{key}' 没有登记（检查的错误键在 {registry} 中）", file=where,
                              key=verbatim(key), registry=registry_file(exercise).name))
        for lang in ("en", "zh") if chinese else ("en",):
            if not str(item.get(lang, "")).strip():
                found.append(Text("{file}: the mistake '{key}' has no `{lang}` text",
                                  "{file}：错误 '{key}' 没有 `{lang}` 文字", file=where, key=verbatim(key), lang=lang))
    if chinese:
        texts = [("idea_zh", str(data.get("idea_zh", "")))]
        texts += [(f"avoids {item.get('key', '')}", str(item.get("zh", ""))) for item in avoids]
        found += [Text("{file}: the Chinese {what} has English prose: {prose}",
                       "{file}：中文的 {what} 含有英文：{prose}", file=where, what=verbatim(what),
                       prose=verbatim("; ".join(english_prose(text))[:160]))
                  for what, text in texts if english_prose(text)]
        found += [Text("{file}: the Chinese {what} breaks Chinese typography: {slips}",
                       "{file}：中文的 {what} 不合中文排版：{slips}", file=where, what=verbatim(what),
                       slips=verbatim(" | ".join(cjk_typography(text))[:160]))
                  for what, text in texts if cjk_typography(text)]
        found += stub_text.translation_problems(exercise, "zh", lambda draw: variants.rendered(exercise.solution, draw),
                                                data.get("text", []), where, Text("the solution", "参考答案"))
    return found
