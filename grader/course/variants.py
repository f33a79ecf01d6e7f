"""Fresh variants of an exercise: parameters drawn per kata attempt, the files rendered from them.

An exercise declares its parameters in exercise.toml, each with the values it can take; the first value of
each is the default draw, which is the exercise as it stands (its stub, statement and solution files):

    [variants]
    reduction = ["mean", "sum"]
    loss = [{name = "mse", formula = "(y_pred - y) ** 2"}, {name = "mae", formula = "|y_pred - y|"}]

Beside a file that changes with the draw lies its template, the same file with `{{reduction}}` or
`{{loss.name}}` where a drawn value goes: `<name>.py.tmpl` (the stub), `README.md.tmpl`, `README.zh.md.tmpl`,
`solutions/<name>.py.tmpl`, and a mistake or variant `tests/.../<file>.py.tmpl`. `grade validate` proves that
each template rendered with the default draw is its file byte for byte, and grades every draw. The checks read
the draw with `variant("reduction")` (grader.checking). Never imports torch.
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

from grader.course.exercises import Exercise
from grader.text import Text, english_prose, message_of, verbatim

FIELD = re.compile(r"\{\{\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\s*\}\}")
SUFFIX = ".tmpl"


class VariantError(ValueError):
    """A template that names a parameter the draw does not have."""


def parameters(exercise: Exercise) -> dict[str, list]:
    """Parameter -> its values, as exercise.toml declares them ({} for an exercise without variants)."""
    return {name: list(values) if isinstance(values, list) else [values]
            for name, values in exercise.variants.items()}


def default_draw(exercise: Exercise) -> dict:
    """The first value of each parameter: the exercise as its files stand."""
    return {name: values[0] for name, values in parameters(exercise).items()}


def all_draws(exercise: Exercise) -> list[dict]:
    """Every combination of values, the default draw first."""
    params = parameters(exercise)
    return [dict(zip(params, combo)) for combo in itertools.product(*params.values())]


def draw(exercise: Exercise, rng: random.Random, avoid: dict | None = None) -> dict:
    """A random draw, other than `avoid` (the last attempt's, by its values' names: their words may have changed since)
    where the exercise has more than one."""
    choices = all_draws(exercise)
    if avoid is not None and len(choices) > 1:
        choices = [c for c in choices if label(c) != label(avoid)] or choices
    return rng.choice(choices)


def label(draw: dict) -> str:
    """A draw in one line, for an author: `reduction=sum, loss=mae`."""
    return ", ".join(f"{k}={v.get('name', v) if isinstance(v, dict) else v}" for k, v in draw.items())


def describe(draw: dict, lang: str = "en") -> str:
    """A draw in the learner's words: each value's `label` (`label_zh` in Chinese), else its name."""
    key = "label_zh" if lang == "zh" else "label"
    words = [str(v.get(key) or v.get("label") or v.get("name", v)) if isinstance(v, dict) else str(v)
             for v in draw.values()]
    return ("；" if lang == "zh" else "; ").join(words)


def same_draw(exercise: Exercise, draw: dict) -> dict | None:
    """The exercise's draw with the same values as `draw` by name (a kata attempt's, stored when it began: the
    values' words may have changed since), None when it has none."""
    return next((d for d in all_draws(exercise) if label(d) == label(draw)), None)


def render(text: str, draw: dict, where: str = "template") -> str:
    """`text` with each `{{name}}` or `{{name.field}}` replaced by the drawn value."""
    def value(match: re.Match) -> str:
        name, _, field = match.group(1).partition(".")
        quoted = verbatim(match.group(0))
        if name not in draw:
            raise VariantError(Text("{where}: {field} names no parameter of [variants]",
                                    "{where}：{field} 不是 [variants] 的参数", where=where, field=quoted))
        found = draw[name]
        if field:
            if not isinstance(found, dict) or field not in found:
                raise VariantError(Text("{where}: {field}: the value {value} has no field {name}",
                                        "{where}：{field}：取值 {value} 没有字段 {name}", where=where, field=quoted,
                                        value=verbatim(repr(found)), name=verbatim(repr(field))))
            found = found[field]
        return str(found)

    return FIELD.sub(value, text)


def hints(exercise: Exercise, draw: dict, lang: str = "en") -> list[str]:
    """The hints for this draw: those of the first drawn value that carries its own (`hints`, `hints_zh`: a value
    whose lesson differs from the exercise as written), else the exercise's."""
    key = "hints_zh" if lang == "zh" else "hints"
    for value in draw.values():
        if isinstance(value, dict) and value.get(key):
            return list(value[key])
    return exercise.text("hints", lang)


def template_of(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


def rendered(path: Path, draw: dict) -> str:
    """The file at `path` for this draw: its template rendered, or the file itself when it has none."""
    template = template_of(path)
    if template.is_file():
        return render(template.read_text(encoding="utf-8"), draw, str(template))
    return path.read_text(encoding="utf-8")


def stub_text(exercise: Exercise, draw: dict) -> str:
    return rendered(exercise.stub, draw)


def statement(exercise: Exercise, draw: dict, lang: str = "en") -> str:
    path = exercise.folder / ("README.zh.md" if lang == "zh" else "README.md")
    if not path.exists() and not template_of(path).exists():
        path = exercise.folder / "README.md"
    return rendered(path, draw)


def templates(exercise: Exercise) -> list[Path]:
    """Every template of the exercise: stub, statements, solution, mistakes and variants."""
    course = exercise.home
    found = [p for p in (template_of(exercise.stub), template_of(exercise.folder / "README.md"),
                         template_of(exercise.folder / "README.zh.md"), template_of(exercise.solution)) if p.is_file()]
    for folder in (course.mistakes_dir / exercise.name, course.variants_dir / exercise.name):
        found += sorted(folder.glob(f"*.py{SUFFIX}"))
    return found


def template_problems(exercise: Exercise) -> list[Text]:
    """What `grade validate` refuses: a template that renders otherwise than its file with the default draw,
    or that names an unknown parameter; a parameter without values."""
    problems = [Text("[variants] {name} has no values", "[variants] {name} 没有任何取值", name=name)
                for name, values in parameters(exercise).items() if not values]
    if len(all_draws(exercise)) > 1:  # a kata shows the learner its draw
        problems += [Text("[variants] {name} = {label}: no `{key}` (the words a learner sees for it)",
                          "[variants] {name} = {label}：没有 `{key}`（学习者看到的说明）", name=name,
                          label=label({name: value}), key=key)
                     for name, values in parameters(exercise).items() for value in values
                     for key, lang in (("label", "en"), ("label_zh", "zh")) if lang in exercise.course.languages
                     and not (isinstance(value, dict) and isinstance(value.get(key), str) and value[key].strip())]
    for name, values in parameters(exercise).items():
        for value in values:
            if isinstance(value, dict) and ("hints" in value or "hints_zh" in value):
                for key, want in (("hints", exercise.hints), ("hints_zh", exercise.zh.get("hints", []))):
                    if want and len(value.get(key, [])) != len(want):
                        problems.append(Text("[variants] {name} = {label}: its {key} must have {n} hints, as the "
                                             "exercise's", "[variants] {name} = {label}：它的 {key} 必须与练习一样有 "
                                             "{n} 条提示", name=name, label=label({name: value}), key=key, n=len(want)))
                problems += [Text("[variants] {name} = {label}: a Chinese hint has English prose: {prose}",
                                  "[variants] {name} = {label}：一条中文提示含有英文：{prose}", name=name,
                                  label=label({name: value}), prose=verbatim("; ".join(english_prose(hint))[:160]))
                             for hint in value.get("hints_zh", []) if english_prose(hint)]
    default = default_draw(exercise)
    for template in templates(exercise):
        target = template.with_name(template.name.removesuffix(SUFFIX))
        try:
            text = render(template.read_text(encoding="utf-8"), default, template.name)
        except VariantError as exc:
            problems.append(message_of(exc))
            continue
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            problems.append(Text("{template} rendered with the default draw ({label}) is not {target}",
                                 "{template} 用默认抽取（{label}）渲染后不是 {target}", template=template.name,
                                 label=label(default), target=target.name))
    return problems
