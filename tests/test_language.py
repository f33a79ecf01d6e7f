"""Every line in the learner's language: under --lang zh, what each learner command prints (its own lines, the
report, errors, --help, the HTML report) holds no English prose outside code and quoted error text."""

import html.parser
import json
import os
import re

import pytest

from conftest import ROOT, grade_here, runs_here, run_grade
from grader.text import Text, catalogue, cjk_typography, english_prose, localized, message_of, stray_english, verbatim

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"
MISTAKE = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "sign_flipped.py"
LEARNER_COMMANDS = ["check", "list", "show", "next", "hint", "watch", "reset", "solution", "init", "lang", "notebook"]


def zh(*args, cwd, input=None):
    """`grade ARGS --lang zh`: its stdout and stderr together (in a fork of this process where it may)."""
    proc = (grade_here if runs_here(args) else run_grade)(*args, "--lang", "zh", cwd=cwd, input=input)
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zh") / "ws"
    init = zh("init", folder, cwd=folder.parent)
    assert "已在" in init and not english_prose(init)
    return folder


def stub(ws):
    return ws / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py"


def test_the_catalogue_writes_chinese_typography():
    """No space before Chinese punctuation, no ASCII comma or colon after a Chinese character, no space between two
    Chinese characters, in any line of the CLI (a value's own spacing is Text.render's: see the next test)."""
    assert {en: cjk_typography(zh) for en, zh in catalogue("zh").items() if cjk_typography(zh)} == {}
    assert cjk_typography("项检查通过, 1 项") and cjk_typography("得分 ：7") and cjk_typography("返回的损失 应该")
    assert not cjk_typography("第 3 行，`x` 中：ok") and not cjk_typography("  已通过 新的分类头")  # a table's columns


def test_a_space_beside_a_value_goes_when_the_value_is_chinese():
    template = Text("{what} should be {n}", "{what} 应该是 {n} 个", n=3, what=("the loss", "返回的损失"))
    assert template.render("zh") == "返回的损失应该是 3 个" and template.render("en") == "the loss should be 3"
    assert Text("x", "{what} 应该", what=verbatim("loss")).render("zh") == "loss 应该"


def test_the_catalogue_keeps_every_field_of_its_templates():
    import string

    fields = lambda text: sorted(f for _, f, _, _ in string.Formatter().parse(text) if f)  # noqa: E731
    assert all(fields(en) == fields(zh) for en, zh in catalogue("zh").items())


def test_an_error_raised_with_a_text_is_shown_in_the_readers_language():
    from grader.course.exercises import UnknownExercise, find_exercise

    with pytest.raises(UnknownExercise) as info:
        find_exercise("ex99")
    assert message_of(info.value).render("zh") == "未知的练习 'ex99'（见 `grade list`）"
    assert str(info.value) == "unknown exercise 'ex99' (see `grade list`)"
    assert message_of(ValueError("something the catalogue lacks")).render("zh") == "something the catalogue lacks"
    assert localized("loss per epoch", "zh") == "每个 epoch 的 loss"
    assert localized(("loss", "损失"), "zh") == "损失"
    assert localized(Text("loss per epoch, {label}", label="Adam"), "zh") == "每个 epoch 的 loss，Adam"


def test_learner_commands_speak_chinese(workspace):
    outputs = {
        "list": zh("list", cwd=workspace),
        "show": zh("show", "ex05", cwd=workspace),
        "next": zh("next", cwd=workspace),
        "hint": zh("hint", cwd=workspace) + zh("hint", "ex05", cwd=workspace),
        "notebook": zh("notebook", "ex05", "--out", workspace / "ex05.ipynb", cwd=workspace),
        "check (stub)": zh("ex05", cwd=workspace),
        "solution (locked)": zh("solution", "ex05", cwd=workspace),
        "solution --force (its warning)":
            grade_here("solution", "ex05", "--force", "--lang", "zh", cwd=workspace).stderr,
        "errors": zh("ex99", cwd=workspace) + zh("ex05", "--file", workspace / "nope.py", cwd=workspace)
        + zh("hint", "--bogus", cwd=workspace).split("\n")[0],  # click's usage line (its own words follow)
    }
    stub(workspace).write_text(MISTAKE.read_text())
    outputs["check (a mistake)"] = zh("ex05", cwd=workspace)
    outputs["check (a file from elsewhere)"] = zh("ex05", "--file", SOLUTION, cwd=workspace)
    outputs["check (the notebook, recorded)"] = zh("ex05", "--file", workspace / "ex05.ipynb", cwd=workspace)
    outputs["watch"] = zh("watch", "ex05", "--runs", "1", cwd=workspace)
    outputs["reset (asked, kept)"] = zh("reset", "ex05", cwd=workspace, input="n\n")
    outputs["reset --yes"] = zh("reset", "ex05", "--yes", cwd=workspace)
    for command in LEARNER_COMMANDS:
        outputs[f"{command} --help"] = zh(command, "--help", cwd=workspace)
    outputs["--help"] = zh("--help", cwd=workspace)
    assert "未开始" in outputs["list"] and "提示 1/3" in outputs["hint"]
    assert "已记入你的进度" in outputs["check (the notebook, recorded)"]
    assert "← 先修这一项" in outputs["watch"] and "学习者" in outputs["--help"] and "用法" in outputs["hint --help"]
    assert {name: english_prose(text) for name, text in outputs.items() if english_prose(text)} == {}
    assert {name: cjk_typography(text) for name, text in outputs.items() if cjk_typography(text)} == {}


def test_a_load_error_is_shown_once_with_its_line_in_chinese(workspace, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\ndef predict(x, w, b):\n    return w * x + b\n  y = 2\n")
    out = zh("ex05", "--file", bad, cwd=workspace)
    error = "第 5 行有 IndentationError：「unindent does not match any outer indentation level」"
    assert out.count(error) == 1 and out.count("无法加载你的文件") == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if error in line)
    assert lines[at + 1].strip() == "y = 2" and lines[at + 2].strip() == "^"
    assert "未运行" in out and "----" not in out  # the checks that could not run, named
    assert not english_prose(out.replace(error, "")) and not cjk_typography(out)  # Python's words quoted as they are
    english = grade_here("ex05", "--file", bad, "--lang", "en", cwd=workspace).stdout
    assert "IndentationError at line 5: unindent does not match any outer indentation level" in english
    assert "not run" in english and "----" not in english


def test_a_check_that_builds_on_a_failed_one_says_so_once_per_table(workspace):
    """Two checks of ex24 build on `fit`, which fails: the first says why in full, the second says it shortly."""
    mistake = ROOT / "tests" / "mistakes" / "ex24_standardize" / "global_stats.py"
    for lang, full, short in (("en", "and this check builds on it", "first (above)"),
                              ("zh", "而这个检查依赖它", "（见上）")):
        out = grade_here("ex24", "--file", mistake, "--seed", "1", "--lang", lang, cwd=workspace).stdout
        fit = "fit_standardizer returns each feature" if lang == "en" else "fit_standardizer 返回训练样本上每个特征"
        said = [line for line in out.splitlines() if fit in line and (full in line or short in line)]
        assert len(said) == 2 and full in said[0] and short in said[1], out
        if lang == "zh":
            assert not english_prose(out) and not cjk_typography(out), out


def test_where_a_learners_error_came_from_reads_in_chinese(workspace, tmp_path):
    raising = tmp_path / "raising.py"
    raising.write_text(SOLUTION.read_text() + "\n\ndef mse_loss(y_pred, y):\n    raise ValueError('boom')\n")
    line = next(n for n, text in enumerate(raising.read_text().splitlines(), 1) if "raise ValueError" in text)
    out = zh("ex05", "--file", raising, cwd=workspace)
    assert f"第 {line} 行，mse_loss 中：raise ValueError('boom')" in out and "line " not in out
    assert not english_prose(out)


class _Text(html.parser.HTMLParser):
    """The text a reader sees on a page (not its style or script)."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], False

    def handle_starttag(self, tag, attrs):
        self.skip = tag in ("style", "script")

    def handle_endtag(self, tag):
        self.skip = False

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def test_the_html_report_and_its_charts_speak_chinese(workspace, tmp_path):
    report = tmp_path / "r.html"
    out = zh("ex06", "--file", ROOT / "solutions" / "ex06_manual_training_loop.py", "--report", report, cwd=workspace)
    assert f"已写入 {report}" in out
    page = _Text()
    page.feed(report.read_text())
    text = "\n".join(page.parts)
    assert "每个 epoch 的 loss" in text and "w 的真实值" in text and "你的" in text and "得分：10/10" in text
    assert not english_prose(text)
    curves = json.loads(grade_here("ex06", "--file", ROOT / "solutions" / "ex06_manual_training_loop.py", "--json",
                                  "--lang", "zh", cwd=workspace).stdout)["curves"]
    assert [c["title"] for c in curves] == ["每个 epoch 的 loss", "每个 epoch 的 w 和 b"]


def page_text(path) -> str:
    page = _Text()
    page.feed(path.read_text(encoding="utf-8"))
    return "\n".join(page.parts)


def test_a_chinese_batch_writes_every_output_in_chinese(tmp_path):
    """Feedback pages (Markdown and HTML), the class page, the gradebook and the summary line of a `--lang zh`
    batch: no English prose outside code and quoted error text."""
    subs = tmp_path / "subs"
    for student, source in {"ann": SOLUTION.read_text(), "ben": (ROOT / "exercises" / "ex05_manual_backward" /
                                                                "ex05_manual_backward.py").read_text(),
                            "carl": "def predict(:\n"}.items():
        (subs / student).mkdir(parents=True)
        (subs / student / "ex05.py").write_text(source)
    (subs / "dan").mkdir()  # nothing handed in
    out = tmp_path / "grades"
    proc = run_grade("batch", subs, "-e", "ex05", "--out", out, "--lang", "zh")
    assert proc.returncode == 0, proc.stderr
    outputs = {"summary": proc.stdout, "stderr": proc.stderr, "index.html": page_text(out / "index.html")}
    for student in ("ann", "ben", "carl", "dan"):
        outputs[f"{student}.md"] = (out / "feedback" / f"{student}.md").read_text(encoding="utf-8")
        outputs[f"{student}.html"] = page_text(out / "feedback" / f"{student}.html")
    book = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
    outputs["gradebook titles"] = " ".join([ex["title"] for ex in book["exercises"]]
                                           + [m["title"] + " " + m["label"] for m in book["misconceptions"]])
    assert "学生代码的隔离" in outputs["stderr"] and "满分" in outputs["summary"]
    assert "的反馈" in outputs["ann.md"] and "| | 检查 | 分数 | 反馈 |" in outputs["ann.md"]
    assert "全班常见的错误" in outputs["index.html"] and "成绩册" in outputs["index.html"]
    carl = next(json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if "carl" in line)
    quoted = carl["message"].splitlines()[0]  # Python's own words about the learner's file, quoted as they are
    assert quoted.startswith("第 1 行有 SyntaxError：「") and quoted.endswith("」")
    assert {name: english_prose(text.replace(quoted, "")) for name, text in outputs.items()
            if english_prose(text.replace(quoted, ""))} == {}
    exported = grade_here("export", out, "--format", "csv", "--lang", "zh")  # its warnings: what it left blank
    assert exported.returncode == 0 and "留空：ex05：1 名学生什么也没交" in exported.stderr, exported.stderr
    assert not english_prose(exported.stdout + exported.stderr)


def test_the_workspace_remembers_its_language(tmp_path):
    english = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}
    init = grade_here("init", tmp_path / "ws", "--lang", "zh", cwd=tmp_path, env=english)
    assert "已在" in init.stdout
    ws = tmp_path / "ws"
    assert "已完成" in grade_here("list", cwd=ws, env=english).stdout
    assert "Stars" in grade_here("list", "--lang", "en", cwd=ws, env=english).stdout  # --lang overrides it
    assert "now speaks en" in grade_here("lang", "en", cwd=ws, env=english).stdout
    assert "Stars" in grade_here("list", cwd=ws, env=english).stdout
    assert grade_here("lang", "zh", cwd=tmp_path, env=english).returncode == 2  # no workspace there


def test_init_records_the_locales_language(tmp_path):
    """Without --lang, `grade init` records the locale's language, says so and how to change it, and asks nothing:
    the workspace then speaks it whatever the locale of later commands."""
    def under(locale):
        return {**os.environ, "LANG": locale, "LC_ALL": "", "LC_MESSAGES": ""}

    chinese = grade_here("init", tmp_path / "zh", cwd=tmp_path, env=under("zh_CN.UTF-8"))
    assert chinese.returncode == 0 and "工作区使用 zh（跟随 locale）：运行 `grade lang en` 可以更改" in chinese.stdout
    assert 'lang = "zh"' in (tmp_path / "zh" / "torch-katas.toml").read_text(encoding="utf-8")
    assert "已完成" in grade_here("list", cwd=tmp_path / "zh", env=under("en_US.UTF-8")).stdout
    stub = tmp_path / "zh" / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py"
    assert re.search(r"[\u4e00-\u9fff]", stub.read_text(encoding="utf-8"))  # its stubs in Chinese too
    english = grade_here("init", tmp_path / "en", cwd=tmp_path, env=under("en_US.UTF-8"))
    assert "It speaks en, from your locale: `grade lang zh` changes it." in english.stdout
    assert 'lang = "en"' in (tmp_path / "en" / "torch-katas.toml").read_text(encoding="utf-8")
    assert "Stars" in grade_here("list", cwd=tmp_path / "en", env=under("zh_CN.UTF-8")).stdout
    chosen = grade_here("init", tmp_path / "chosen", "--lang", "zh", cwd=tmp_path, env=under("en_US.UTF-8")).stdout
    assert "已在" in chosen and "跟随 locale" not in chosen  # chosen on the command line: nothing to explain
    assert grade_here("new", "hw1_double", "--course", tmp_path / "c", cwd=tmp_path).returncode == 0
    only_english = grade_here("--course", tmp_path / "c", "init", tmp_path / "c_ws", env=under("zh_CN.UTF-8")).stdout
    assert "Created a workspace" in only_english and "locale" not in only_english.replace(str(tmp_path), "")
    assert 'lang = "en"' in (tmp_path / "c_ws" / "torch-katas.toml").read_text(encoding="utf-8")  # all it speaks


def test_teacher_and_author_commands_speak_chinese(tmp_path):
    """`grade validate` and `grade doctor` reports, click's usage errors (its type names too) and `grade export`'s
    warnings under zh, by --lang or by the locale: no English prose outside code and quoted text."""
    chinese_locale = {**os.environ, "LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}
    outputs = {
        "validate": zh("validate", "ex01", cwd=tmp_path),
        "doctor": zh("doctor", cwd=tmp_path),
        "out of range": zh("validate", "ex05", "--seeds", "0", cwd=tmp_path),
        "not a number": zh("validate", "ex05", "--seeds", "x", cwd=tmp_path),
        "no format": zh("export", tmp_path, cwd=tmp_path),
        "no gradebook": zh("export", tmp_path, "--format", "csv", cwd=tmp_path),
        "help": zh("batch", "--help", cwd=tmp_path),
    }
    by_locale = run_grade("validate", "ex05", "--seeds", "x", cwd=tmp_path, env=chinese_locale)
    outputs["by the locale"] = by_locale.stdout + by_locale.stderr
    assert "初始代码 ex01_tensors.py" in outputs["validate"] and "1 次验证中 1 次已通过" in outputs["validate"]
    assert "测试沙箱刚刚尝试" in outputs["doctor"]
    assert "不是有效的整数范围" in outputs["not a number"] and outputs["by the locale"] == outputs["not a number"]
    assert "--workers 整数范围" in outputs["help"] and "INTEGER" not in outputs["help"]
    assert "可选" in outputs["no format"] and "没有成绩册" in outputs["no gradebook"]
    for choice in ("canvas", "moodle", "csv"):  # the values --format takes: typed as they are, code
        outputs["no format"] = outputs["no format"].replace(f"\t{choice}", "")
    assert {name: english_prose(text) for name, text in outputs.items() if english_prose(text)} == {}


SLIPPED_CHECKS = '''"""Hidden checks of hw1_double whose Chinese messages slip, one class each."""

import torch

from grader.checking import Text, check, fail


def wrong(submission, rng):
    x = torch.randn(4, 3, generator=rng)
    return not torch.allclose(submission.double(x), 2 * x)


@check("double(x) returns twice x", points=1, zh="double(x) 返回 x 的两倍")
def test_spliced(submission, rng):
    if wrong(submission, rng):
        why = Text("the result scaled by x: multiply by 2", "结果乘以了 x：要乘以 2")
        fail("{what} matches {why}.", "{what} 与{why}的结果一致。", what="double(x)", why=why)


@check("double(x) in float16", points=1, zh="float16 的 double(x)")
def test_stray(submission, rng):
    if wrong(submission, rng):
        fail("{what} is wrong.", "{what} 不对。", what=Text("double(x) in float16"))


@check("double(x) in words", points=1, zh="double(x) 的说明")
def test_untranslated(submission, rng):
    if wrong(submission, rng):
        fail("double(x) returned the wrong values.", "double(x) returned the wrong values.")


@check("double(x) in prose", points=1, zh="double(x) 的正文")
def test_prose(submission, rng):
    if wrong(submission, rng):
        fail("double(x) is wrong.", "double(x) 的数值 is not right at all。")
'''


def test_validate_names_each_class_of_slip_in_a_chinese_message(tmp_path):
    """A course's check messages with a sentence spliced into another's clause, an English word left in Chinese
    prose, an untranslated message and English prose: `grade validate` names each by its class and its text."""
    assert grade_here("new", "hw1_double", "--course", tmp_path / "c", cwd=tmp_path).returncode == 0
    course = tmp_path / "c"
    (course / "course.toml").write_text((course / "course.toml").read_text().replace('["en"]', '["en", "zh"]'))
    (course / "checks" / "hw1_double.py").write_text(SLIPPED_CHECKS)
    out = run_grade("validate", "hw1_double", "--lang", "en", cwd=course).stdout
    lines = [line for line in out.splitlines() if "squares_instead.py" in line and " language " in line]
    said = "\n".join(lines)
    assert ("spliced: the Chinese message splices a sentence into another's clause: "
            "与「结果乘以了 x：要乘以 2」的结果一致") in said, out
    assert "stray: the Chinese message has an English word in its prose: in (in: …double(x) in float16 不对。…)" in said
    assert ("untranslated: the Chinese message is the English one, untranslated: double(x) returned the wrong "
            "values.") in said
    assert "prose: the Chinese message has English prose: is not right at all" in said
    assert len(lines) == 4, said  # one class each: the untranslated one is not English prose as well


def test_the_language_check_finds_what_english_prose_lets_by():
    from grader.text import spliced, stray_english

    assert stray_english("输入为 float16 时的 attention(q[2, 5, 8] in float16, k, v)") == ["in"]
    assert stray_english("做了 in-place 修改") == ["in-place"]
    assert stray_english("x 为 [N, in] 时，`a in b` 与 {k: v for k in d}，a 的每一行，.to(q)") == []
    slip = Text("the update scaled by alpha alone: divide by r", "更新只乘以了 alpha：还要除以 r")
    assert spliced(Text("{what} matches {why}.", "{what} 与{why}的结果一致。", what="f(x)", why=slip)) == [
        "与「更新只乘以了 alpha：还要除以 r」的结果一致。"]
    label = Text("{where}: the key cache", "{where}：缓存的键", where=Text("call 1", "第 1 次调用"))
    assert spliced(Text("{what} is off", "{what} 差了一个常数因子", what=label)) == []  # a label before the sentence
    assert spliced(Text("{what} matches {why}", "{what} 与{why}的结果一致", what="f(x)",
                        why=Text("the update not scaled", "没有缩放的更新"))) == []  # a clause, no sentence in it
    assert spliced(Text("use {k: v}", "用 {k: v} 的结果")) == []  # no values: its braces are written as they are


NAMED = {"expect_close": 2, "expect_number": 2, "expect_tensor": 1}  # the argument each takes as the name it shows


def written_pair(node) -> tuple[str, str] | None:
    """The (English, Chinese) templates written in `node`: `Text(en, zh)`, `fail(en, zh)`, `@check(title, zh=)`, or a
    tuple whose second string is Chinese."""
    import ast

    def text(n):
        return n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else None

    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        strings = [text(e) for e in node.elts]
        return (strings[0], strings[1]) if None not in strings and re.search(r"[\u4e00-\u9fff]", strings[1]) else None
    if isinstance(node, ast.Call):
        strings = [text(a) for a in node.args[:2]] + [text(k.value) for k in node.keywords if k.arg == "zh"]
        strings = [s for s in strings if s is not None]
        return (strings[0], strings[1]) if len(strings) == 2 else None
    return None


def english_names(node, source: str) -> list[str]:
    """The names `node` gives in English alone, as written (`what=`, `label=`, the name `expect_close` and its kin
    show): a Chinese message shows them as they are."""
    import ast

    if not isinstance(node, ast.Call):
        return []
    function = getattr(node.func, "id", getattr(node.func, "attr", ""))
    names = [k.value for k in node.keywords if k.arg in ("what", "label")]
    names += node.args[NAMED[function]:NAMED[function] + 1] if function in NAMED else []
    return [ast.get_source_segment(source, n) or "" for n in names if isinstance(n, (ast.Constant, ast.JoinedStr))]


def test_the_check_modules_chinese_templates_are_chinese():
    """Every (English, Chinese) template pair written in the built-in check modules and the check API, read without
    grading: no English function word alone in the Chinese (the fields left out), none the English copied; and no
    name given in English alone with such a word."""
    import ast

    def fields_out(text):
        return re.sub(r"\{[^{}]*\}", " ", text)

    found = []
    for path in sorted((ROOT / "grader" / "checks").glob("*.py")) + sorted((ROOT / "grader" / "checking").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            pair = written_pair(node)
            if pair and stray_english(fields_out(pair[1])):
                found.append(f"{path.name}:{node.lineno}: {stray_english(fields_out(pair[1]))} in {pair[1]!r}")
            if pair and pair[0] == pair[1] and english_prose(fields_out(pair[0])):
                found.append(f"{path.name}:{node.lineno}: untranslated {pair[1]!r}")
            found += [f"{path.name}:{node.lineno}: {stray_english(fields_out(name))} in the name {name}, in English "
                      "alone" for name in english_names(node, source) if stray_english(fields_out(name))]
    assert found == []
