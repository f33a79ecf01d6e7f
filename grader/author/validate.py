"""`grade validate`: prove an exercise's checks are not vacuous.

The reference solution and every correct variant in tests/variants/<exercise>/ must score full,
the untouched stub less than full (and still load), an empty file and a file that defines nothing 0, and
every known mistake in
tests/mistakes/<exercise>/ less than full, with a failure message that contains the text its
`# Expect:` line names. Each file is also graded as a notebook (written as `grade notebook` writes
one) with the same seed, and must score the same there.

The stub in each language of the course (grader/course/stub_text.py) must have every comment and docstring
translated, on every draw, and the same code as the English stub; so must the explained solution
(grader/course/explained.py), which also needs its idea and the mistakes it avoids in each language, each by a
registered key (and must exist, where course.toml's [validate] says `explained = true`).

An exercise with variants (grader/course/variants.py) is proved on every draw: its templates rendered with the default
draw must be its files, and on each other draw the rendered solution and variants score full and the rendered
stub and mistakes less. A mistake or variant file with a `# Variant: reduction=mean` line counts on the draws
that match it only.
"""

from __future__ import annotations

import ast
import random
import re
import tempfile
from pathlib import Path

from grader.course import check_imports, explained, stub_text
from grader.course import variants as draws
from grader.course.exercises import Exercise
from grader.judge.grading import grade, prewarm
from grader.course.mistake_keys import describe, registered, registry_file, registry_problems
from grader.course.notebook_writer import write_notebook
from grader.report.terminal import pad
from grader.judge.result import CheckResult, Result
from grader.sandbox.source import load_source
from grader.text import LANGUAGES, QUOTE, Text, english_prose, joined, quoted, stray_english, verbatim
from grader.course.statement_rules import trace_problems


def expected_text(path: Path) -> str | None:
    """The `# Expect: ...` line of a mistake file: text the feedback must contain."""
    match = re.search(r"^# Expect: (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return match.group(1).strip() if match else None


def applies(path: Path, draw: dict) -> bool:
    """Whether a mistake or variant file counts on `draw`: it has no `# Variant:` line, or the draw matches it."""
    match = re.search(r"^# Variant: (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    if not match:
        return True
    wanted = dict(pair.strip().split("=", 1) for pair in match.group(1).split(",") if "=" in pair)
    return all(draws.label({k: draw.get(k)}).split("=", 1)[1] == v.strip() for k, v in wanted.items())


def drawn(path: Path, draw: dict, folder: Path) -> Path:
    """The file to grade for `draw`: `path` itself, or its template rendered into `folder`."""
    if not draws.template_of(path).is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / path.name
    out.write_text(draws.rendered(path, draw), encoding="utf-8")
    return out


def mistakes(exercise: Exercise) -> list[Path]:
    return sorted((exercise.home.mistakes_dir / exercise.name).glob("*.py"))


def variants(exercise: Exercise) -> list[Path]:
    return sorted((exercise.home.variants_dir / exercise.name).glob("*.py"))


NOTHING = {"empty.py": "", "defines_nothing.py": "import torch\n"}  # must score 0


def _message(check: CheckResult) -> Text:
    """A check's message: in English as it came, in Chinese as graded with `languages=` (where the judge leaves out
    the values it quotes, the learner's words: shown as …)."""
    chinese = (check.messages or {}).get("zh")
    english = check.message.render("en")
    return Text(english, chinese.replace(QUOTE, "…") if chinese is not None else english)


def _messages(result: Result) -> Text:
    """The failed checks' messages, in each language."""
    return joined([_message(c) for c in result.checks if not c.passed], " | ")


def _cut(text: Text, limit: int = 300) -> Text:
    """`text` cut to `limit` characters in each language (a report's line, not a whole grading)."""
    return Text(text.render("en")[:limit], text.render("zh")[:limit])


def _score(result: Result) -> Text:
    return Text("{score}/{max} ({status})", "{score}/{max}（{status}）", score=f"{result.score:g}",
                max=f"{result.max_score:g}", status=Text(result.status))


def _in_languages(row: dict) -> dict:
    """A row as the report keeps it: its `why` in English, and in every other language beside (`why_zh`)."""
    why = row["why"] if isinstance(row["why"], Text) else Text.of(row["why"])
    return {**row, "why": why.render("en"), **{f"why_{lang}": why.render(lang) for lang in LANGUAGES if lang != "en"}}


def validate(exercise: Exercise, seed: int | None = None, device: str = "cpu") -> dict:
    """Grade solution, variants, stub and mistakes, each as a .py and as a notebook; return
    {exercise, seed, ok, rows: [{kind, file, ok, why}]}."""
    if not exercise.solution.is_file():
        return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": False, "rows": [
            _in_languages({"kind": "solution", "file": str(exercise.solution), "ok": False, "why": Text(
                "no reference solution here: validate from the course's own folder (or a clone of torch-katas)",
                "这里没有参考答案：请在课程自己的文件夹（或 torch-katas 的克隆）中验证")})]}
    prewarm([exercise])
    every = draws.all_draws(exercise)
    with tempfile.TemporaryDirectory() as tmp:
        report = _validate(exercise, seed, device, Path(tmp), every[0])
        problems = draws.template_problems(exercise)
        report["rows"] += [{"kind": "metadata", "file": "variants", "ok": False, "why": p} for p in problems]
        if not problems:
            for i, draw in enumerate(every[1:], 1):
                other = _validate(exercise, seed, device, Path(tmp) / f"draw{i}", draw)
                report["rows"] += [{**row, "kind": row["kind"], "file": f"{row['file']} [{draws.label(draw)}]"}
                                   for row in other["rows"]]
                report["verdicts"].update(other["verdicts"])
        report["draws"] = len(every)
        report["ok"] = all(r["ok"] for r in report["rows"])
        report["rows"] = [_in_languages(row) for row in report["rows"]]
        return report


def _validate(exercise: Exercise, seed: int | None, device: str, tmp: Path, draw: dict) -> dict:
    """Validate one draw of the exercise's variants (the default draw: the exercise as its files stand)."""
    rows: list[dict] = []
    results: dict[str, Result] = {}  # file name -> its result, with every message in each language
    default = draw == draws.default_draw(exercise)
    rendered = tmp / "rendered"

    def run(path: Path):
        """The .py's result and score; a row for the notebook when it scores otherwise."""
        run_seed = random.randrange(2**31) if seed is None else seed
        path = path if default else drawn(path, draw, rendered)
        result = results[path.name] = grade(exercise, load_source(path), seed=run_seed, device=device,
                                            languages=("en", "zh"), variant=draw)
        tmp.mkdir(parents=True, exist_ok=True)
        notebook = write_notebook(exercise, path.read_text(encoding="utf-8"), tmp / f"{path.stem}.ipynb")
        as_notebook = grade(exercise, load_source(notebook), seed=run_seed, device=device, variant=draw,
                            languages=("en", "zh"))
        if [str(_score(as_notebook)), as_notebook.message.render("en")] != [str(_score(result)),
                                                                             result.message.render("en")]:
            said = as_notebook.message if str(as_notebook.message) else _messages(as_notebook)
            rows.append({"kind": "notebook", "file": notebook.name, "ok": False,
                         "why": Text("{nb} where the .py scores {py}: {said}", "{nb}，而 .py 得 {py}：{said}",
                                     nb=_score(as_notebook), py=_score(result),
                                     said=_cut(said))})
        return result, _score(result)

    for kind, path in [("solution", exercise.solution)] + [("variant", p) for p in variants(exercise)
                                                           if applies(p, draw)]:
        result, score = run(path)
        declared = sum(c.max_points for c in result.checks if c.id != "unreported")
        if kind == "solution" and declared != exercise.points:
            rows.append({"kind": "metadata", "file": "exercise.toml", "ok": False,
                         "why": Text("the checks declare {declared} points, exercise.toml says {points}",
                                     "检查声明了 {declared} 分，而 exercise.toml 写的是 {points} 分",
                                     declared=f"{declared:g}", points=f"{exercise.points:g}")})
        unknown = sorted(set(exercise.overrides) - {c.id for c in result.checks}) if kind == "solution" else []
        if unknown:
            rows.append({"kind": "metadata", "file": "course.toml", "ok": False,
                         "why": Text("points are given to {checks}, which {id} does not have",
                                     "给 {checks} 设了分数，但 {id} 没有这些检查",
                                     checks=", ".join(unknown), id=exercise.id)})
        unknown = sorted(set(exercise.visibility) - {c.id.split("[")[0] for c in result.checks}) \
            if kind == "solution" else []
        if unknown:
            rows.append({"kind": "metadata", "file": "exercise.toml", "ok": False,
                         "why": Text("public names {checks}, which {id} does not have",
                                     "public 列出了 {checks}，但 {id} 没有这些检查",
                                     checks=", ".join(unknown), id=exercise.id)})
        failed = Text("{score}: {messages}", "{score}：{messages}", score=score, messages=_cut(_messages(result)))
        rows.append({"kind": kind, "file": path.name, "ok": result.full,
                     "why": score if result.full else failed + untemplated(path, default)})
    result, score = run(exercise.stub)
    ok = result.score < result.max_score and result.status != "error"
    rows.append({"kind": "stub", "file": exercise.stub.name, "ok": ok,
                 "why": score if ok else Text("{score}: the stub must load and score less than full",
                                              "{score}：初始代码必须能加载，并且得分低于满分", score=score)})
    for name, text in NOTHING.items() if default else ():  # work that does nothing earns nothing, whatever `depends=`
        empty = tmp / name
        tmp.mkdir(parents=True, exist_ok=True)
        empty.write_text(text, encoding="utf-8")
        result = grade(exercise, load_source(empty), seed=random.randrange(2**31) if seed is None else seed,
                       device=device)
        titles = {c["id"]: Text(c["title"], c["zh"] or c["title"]) for c in exercise.declared_checks()}
        earned = joined([titles.get(c.id.split("[")[0], c.title) for c in result.checks if c.points > 0], ", ", "、")
        rows.append({"kind": "nothing", "file": name, "ok": result.score == 0,
                     "why": _score(result) if result.score == 0 else
                     Text("{score}: {name} earns points from {earned}; make those checks depend on one that needs the "
                          "work (`depends=`)", "{score}：{name} 从 {earned} 得了分；让这些检查依赖一个需要真正完成"
                          "练习才能通过的检查（`depends=`）", score=_score(result), name=name, earned=earned)})
    for path in (p for p in mistakes(exercise) if applies(p, draw)):
        want = expected_text(path if default else drawn(path, draw, rendered))
        result, score = run(path)
        messages = _messages(result)
        expected = quoted(want) if want else ""
        if want is None:
            ok, why = False, Text("no `# Expect:` line names the message this mistake must get",
                                  "没有 `# Expect:` 行指出这个错误示例必须得到的消息")
        elif result.score >= result.max_score:
            ok, why = False, Text("{score}: this mistake scores full: the checks miss it",
                                  "{score}：这个错误示例得了满分：检查漏掉了它", score=score) \
                + untemplated(path, default)
        elif want.lower() not in messages.render("en").lower():
            ok, why = False, Text("{score}: no message says '{want}'; got: {messages}",
                                  "{score}：没有消息包含 {want}；实际得到：{messages}", score=score, want=expected,
                                  messages=_cut(messages))
        else:  # in Chinese, the message that says it, as a Chinese reader gets it
            said = next((_message(c) for c in result.checks
                         if not c.passed and want.lower() in str(_message(c)).lower()), messages)
            ok, why = True, Text("{score}: '{want}'", "{score}：{said}", score=score, want=expected,
                                 said=_cut(said, 100))
        rows.append({"kind": "mistake", "file": path.name, "ok": ok, "why": why})
    if "zh" in exercise.course.languages:
        rows += [{"kind": "language", "file": name, "ok": False, "why": why}
                 for name, why in english_in_chinese(results)]
    rows += [{"kind": "key", "file": name, "ok": False, "why": why} for name, why in unknown_keys(exercise, results)]
    if not default:
        if not any(r["kind"] == "mistake" for r in rows):
            rows.append({"kind": "metadata", "file": "mistakes", "ok": False,
                         "why": Text("no known mistake counts on this draw: add one (a `# Variant:` line or a "
                                     "template)", "这次抽取中没有任何已知错误示例：加一个（用 `# Variant:` 行"
                                     "或模板）")})
        return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": all(r["ok"] for r in rows),
                "rows": rows, "verdicts": verdicts(results, draw)}
    course = exercise.course
    problems = []
    languages = [lang for lang in course.languages if lang in ("en", "zh")]
    hints = {"en": exercise.hints, "zh": exercise.zh.get("hints", [])}
    if "zh" in languages:
        problems += [Text("the Chinese {what} has English prose: {prose}", "中文{what}含有英文：{prose}", what=what,
                          prose=verbatim("; ".join(english_prose(text))[:160]))
                     for what, text in [(Text("title", "标题"), exercise.zh.get("title", "")),
                                        *((Text("hint {i}", "提示 {i}", i=i), h) for i, h in enumerate(hints["zh"], 1))]
                     if english_prose(text)]
    for lang in languages:
        if len(hints[lang]) < course.min_hints:
            where = "hints" if lang == "en" else f"[{lang}] hints"
            problems.append(Text("needs at least {n} {lang} hint(s) in exercise.toml's {where} (it has {has})",
                                 "exercise.toml 的 {where} 中至少需要 {n} 条 {lang} 提示（现在有 {has} 条）",
                                 n=course.min_hints, lang=lang, where=where, has=len(hints[lang])))
    problems += rule_problems(exercise)
    if sum(r["kind"] == "mistake" for r in rows) < course.min_mistakes:
        folder = exercise.home.mistakes_dir / exercise.name
        problems.append(Text("needs at least {n} known mistake(s) in {folder}/",
                             "{folder}/ 中至少需要 {n} 个已知错误示例", n=course.min_mistakes, folder=verbatim(folder)))
    rows += [{"kind": "metadata", "file": "exercise.toml", "ok": False, "why": p} for p in problems]
    rows += [{"kind": "trace", "file": "README", "ok": False, "why": p} for p in trace_problems(exercise)]
    rows += [{"kind": "imports", "file": exercise.checks.name, "ok": False, "why": p}
             for p in check_imports.problems(exercise)]
    rows += [{"kind": "key", "file": registry_file(exercise).name, "ok": False, "why": p}
             for p in registry_problems(exercise)]
    rows += [{"kind": "language", "file": stub_text.catalogue_file(exercise, lang).name, "ok": False, "why": p}
             for lang in languages for p in stub_text.problems(exercise, lang)]
    rows += [{"kind": "explain", "file": explained.explain_file(exercise).name, "ok": False, "why": p}
             for p in explained.problems(exercise)]
    return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": all(r["ok"] for r in rows),
            "rows": rows, "verdicts": verdicts(results, draw)}


def untemplated(path: Path, default: bool) -> Text:
    """On a draw other than the `default` one, for a file with no template: that it is graded as written (the template
    missing is the likely cause of what failed, when an exercise was copied without it)."""
    if default or draws.template_of(path).is_file():
        return Text("", "")
    return Text(" ({file} has no template {template}: it is graded as written on this draw)",
                "（{file} 没有模板 {template}：这次抽取按原样评分）", file=path.name,
                template=draws.template_of(path).name)


def verdicts(results: dict[str, Result], draw: dict) -> dict[str, dict[str, str]]:
    """Each file's outcome per check, on its own (not failed for a check it builds on); a draw other than the default
    one named beside the file."""
    where = f" [{draws.label(draw)}]" if draw else ""
    return {f"{name}{where}": {c.id: c.alone["outcome"] if c.alone else c.outcome for c in result.checks}
            for name, result in results.items()}


def seed_warnings(reports: list[dict]) -> list[Text]:
    """Each check whose verdict on a file changes with the seed, across the reports of several seeds: a detection
    (or a pass) that depends on the inputs drawn, which a class would see as equal code earning unequal scores."""
    seen: dict[tuple[str, str, str], dict[str, list]] = {}
    for report in reports:
        for name, outcomes in report.get("verdicts", {}).items():
            for check, outcome in outcomes.items():
                seen.setdefault((report["name"], name, check), {}).setdefault(outcome, []).append(report["seed"])
    return [Text("{exercise}: the check {check} on {file} changes its verdict with the seed ({outcomes}): make it "
                 "decide the same on every input it draws", "{exercise}：检查 {check} 对 {file} 的结果随种子变化"
                 "（{outcomes}）：让它对抽取的每个输入都给出同样的结论", exercise=exercise, check=check, file=name,
                 outcomes=joined([Text("{outcome} with seed {seeds}", "种子为 {seeds} 时{outcome}",
                                       outcome=Text(outcome), seeds=", ".join(map(str, used)))
                                  for outcome, used in sorted(by.items())], "; ", "；"))
            for (exercise, name, check), by in seen.items() if len(by) > 1]


def rule_problems(exercise: Exercise) -> list[Text]:
    """What is wrong with exercise.toml's [rules]: a rule the spec mutants do not know, a function the solution does
    not define (a typo would leave a rule of the statement without its mutants)."""
    from grader.author.families import RULES, SIBLINGS

    defined = {n.name for n in ast.walk(ast.parse(exercise.solution.read_text(encoding="utf-8")))
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = []
    for function, names in exercise.rules.items():
        if function.split(".")[-1] not in defined:
            found.append(Text("[rules] names {function}, which the solution does not define",
                              "[rules] 指出的 {function} 在参考答案中没有定义", function=verbatim(function)))
        found += [Text("[rules] {function}: no rule '{rule}' (the rules: {known})",
                       "[rules] {function}：没有规则 '{rule}'（已有的规则：{known}）", function=verbatim(function),
                       rule=verbatim(rule), known=verbatim(", ".join(RULES)))
                  for rule in names if rule not in RULES]
        if "builtin" in names and function.split(".")[-1] not in SIBLINGS:
            found.append(Text("[rules] {function}: 'builtin' knows the siblings of {known} only",
                              "[rules] {function}：'builtin' 只知道 {known} 的同类函数", function=verbatim(function),
                              known=verbatim(", ".join(SIBLINGS))))
    return found


def unknown_keys(exercise: Exercise, results: dict[str, Result]) -> list[tuple[str, Text]]:
    """(file, why) for each mistake key a check named that no registry describes (a typo makes a new category)."""
    keys = registered(exercise)
    return [(name, Text("{id}: the mistake key '{key}' is not registered: add it to {registry} "
                        "(python -m grader.course.mistake_keys drafts the line)",
                        "{id}：错误键 '{key}' 没有登记：把它加到 {registry} 中（`python -m grader.course.mistake_keys` "
                        "会起草这一行）", id=c.id, key=verbatim(c.key),
                        registry=registry_file(exercise).name))
            for name, result in results.items() for c in result.checks if c.key and describe(c.key, keys) is None]


def english_in_chinese(results: dict[str, Result]) -> list[tuple[str, Text]]:
    """(file, why) for each slip of a Chinese message, by its class: the English message left untranslated, English
    prose, an English function word alone in it (outside code and quotes), a sentence spliced into another's clause."""
    found = []
    for name, result in results.items():
        for c in result.checks:
            english, chinese = ((c.messages or {}).get(lang, "") for lang in ("en", "zh"))
            if chinese and chinese == english and (english_prose(english) or stray_english(english)):
                found.append((name, Text("{id}: the Chinese message is the English one, untranslated: {text}",
                                         "{id}：中文消息与英文消息相同，没有翻译：{text}", id=c.id,
                                         text=verbatim(chinese[:200]))))
                continue
            prose, words = english_prose(chinese), stray_english(chinese)
            if prose:
                found.append((name, Text("{id}: the Chinese message has English prose: {prose}",
                                         "{id}：中文消息含有英文：{prose}", id=c.id,
                                         prose=verbatim("; ".join(prose)[:200]))))
            elif words:
                at = re.search(rf"(?<![\w.]){re.escape(words[0])}(?![\w(=])", chinese)
                around = chinese[max(0, at.start() - 40):at.end() + 40] if at else chinese[:80]
                found.append((name, Text("{id}: the Chinese message has an English word in its prose: {words} "
                                         "(in: …{text}…)", "{id}：中文消息的正文里有英文单词：{words}（见：…{text}…）",
                                         id=c.id, words=verbatim(", ".join(words)), text=verbatim(around))))
            found += [(name, Text("{id}: the Chinese message splices a sentence into another's clause: {where}",
                                  "{id}：中文消息把一个句子嵌进了另一个句子的中间：{where}", id=c.id,
                                  where=verbatim(where[:200])))
                      for where in (c.spliced or {}).get("zh", [])]
    return found


# A row's kind, as the Chinese report names it (English: the kind itself, as the JSON has it).
KINDS_ZH = {"solution": "参考答案", "variant": "正确变体", "stub": "初始代码", "nothing": "空作业",
            "mistake": "错误示例", "notebook": "notebook", "metadata": "元数据", "language": "语言", "key": "错误键",
            "trace": "追踪", "explain": "讲解"}


def render_validation(reports: list[dict], lang: str = "en") -> str:
    """The reports as text, in `lang`: a line per exercise and seed, a line per row, the count of those ok."""
    def say(en: str, zh: str, **values) -> str:
        return Text(en, zh, **values).render(lang)

    lines = []
    for report in reports:
        seed = say(" (seed {seed})", "（种子 {seed}）", seed=report["seed"]) if report.get("seed") is not None else ""
        lines.append(f"{report['name']}{seed}: " + (say("ok", "已通过") if report["ok"] else say("FAILED", "失败")))
        for row in report["rows"]:
            mark = pad(say("ok", "已通过") if row["ok"] else say("FAIL", "失败"), 4 if lang == "en" else 6)
            kind = KINDS_ZH.get(row["kind"], row["kind"]) if lang == "zh" else row["kind"]
            lines.append(f"  {mark} {pad(kind, 8)} {pad(row['file'], 40)} {row.get(f'why_{lang}', row['why'])}")
    good = sum(r["ok"] for r in reports)
    lines.append(say("{good} of {n} validations ok", "{n} 次验证中 {good} 次已通过", good=good, n=len(reports)))
    return "\n".join(lines)


def check_release(exercises: list[Exercise]) -> list[Text]:
    """What stands in the way of releasing `exercises`: a solution that does not score full, a stub that does."""
    prewarm(exercises)
    refused = []
    for ex in exercises:
        if not ex.solution.is_file():
            refused.append(Text("{id}: no reference solution at {path}", "{id}：{path} 处没有参考答案", id=ex.id,
                                path=verbatim(ex.solution)))
            continue
        solution = grade(ex, load_source(ex.solution), languages=("en", "zh"))
        if not solution.full:
            refused.append(Text("{id}: the solution scores {score}: {messages}", "{id}：参考答案得 {score}：{messages}",
                                id=ex.id, score=_score(solution), messages=_cut(_messages(solution), 200)))
        stub = grade(ex, load_source(ex.stub))
        if stub.score >= stub.max_score:
            refused.append(Text("{id}: the untouched stub already scores full: its checks test nothing it must do",
                                "{id}：未改动的初始代码已经得了满分：它的检查没有测试任何必须完成的东西", id=ex.id))
    return refused
