"""Stubs in the learner's language (grader/course/stub_text.py): comments and docstrings translated from one catalogue,
the code token for token the English stub's, on every draw; and every place that writes a stub for a learner
writes it in the learner's language."""

import ast
import json

import pytest

from conftest import grade_here
from grader.course import stub_text, variants
from grader.course.exercises import builtin_course, load_course
from grader.text import english_prose

STUB = '''"""hw1 - A softmax. Fill in the TODO,
then run `grade hw1`.
"""

import torch


def softmax(logits):
    """Softmax over the last dimension.

    Finite for any finite logits.
    """
    # TODO: subtract each row's max
    # before exp, then normalise
    x = logits  # the raw scores
    raise NotImplementedError  # TODO
'''

CATALOGUE = """
[[text]]
en = '''
hw1 - A softmax. Fill in the TODO,
then run `grade hw1`.'''
zh = '''hw1 - 一个 softmax。完成 TODO，然后运行 `grade hw1`。'''

[[text]]
en = '''
Softmax over the last dimension.

Finite for any finite logits.'''
zh = '''
对最后一个维度做 softmax。

对任何有限的 logits 都是有限值。
第三行。'''

[[text]]
en = '''
TODO: subtract each row's max
before exp, then normalise'''
zh = '''TODO：在 exp 之前减去每一行的最大值，再归一化'''

[[text]]
en = '''the raw scores'''
zh = '''原始分数'''
"""


def a_course(tmp_path, stub=STUB, catalogue=CATALOGUE):
    folder = tmp_path / "exercises" / "hw1"
    folder.mkdir(parents=True)
    (tmp_path / "course.toml").write_text('name = "c"\nlanguages = ["en", "zh"]\nexercises = ["hw1"]\n')
    (folder / "exercise.toml").write_text('title = "softmax"\npoints = 1\n')
    (folder / "hw1.py").write_text(stub)
    (folder / "hw1.zh.toml").write_text(catalogue)
    return load_course(tmp_path).find("hw1")


def test_comments_and_docstrings_are_translated_and_the_code_is_not(tmp_path):
    ex = a_course(tmp_path)
    zh = stub_text.stub(ex, "zh")
    assert zh.startswith('"""hw1 - 一个 softmax。完成 TODO，然后运行 `grade hw1`。\n"""\n')
    assert '    """对最后一个维度做 softmax。\n\n    对任何有限的 logits 都是有限值。\n    第三行。\n    """' in zh
    assert "    # TODO：在 exp 之前减去每一行的最大值，再归一化\n    x = logits  # 原始分数\n" in zh
    assert "raise NotImplementedError  # TODO\n" in zh  # no English prose: it may stay
    assert stub_text.code_tokens(zh) == stub_text.code_tokens(STUB)
    ast.parse(zh)
    assert stub_text.stub(ex, "en") == STUB and stub_text.problems(ex, "zh") == []


def test_every_text_read_back_as_it_is_gives_the_stub_byte_for_byte():
    """The spans' texts are what an author writes as `en`: written back unchanged, every stub is itself."""
    for ex in builtin_course().exercises():
        for draw in variants.all_draws(ex):
            source = variants.stub_text(ex, draw)
            assert stub_text.translate(source, {s.text: s.text for s in stub_text.spans(source)}) == source


DEMO = """

if __name__ == "__main__":
    loss = softmax(torch.zeros(2, 3))
    print("loss:", loss, "(rows sum to 1)", f"max {loss.max():.2f} at {loss.argmax()}", "shape:")
"""

PRINTED = """
[[text]]
en = '''loss:'''
zh = '''损失：'''

[[text]]
en = '''(rows sum to 1)'''
zh = '''（每行之和为 1）'''

[[text]]
en = '''max {loss.max():.2f} at {loss.argmax()}'''
zh = '''最大值 {loss.max():.2f}，位置 {loss.argmax()}'''
"""


def test_the_strings_a_demo_prints_are_translated_their_fields_kept(tmp_path):
    ex = a_course(tmp_path, STUB + DEMO, CATALOGUE + PRINTED)
    zh = stub_text.stub(ex, "zh")
    assert 'print("损失：", loss, "（每行之和为 1）", f"最大值 {loss.max():.2f}，位置 {loss.argmax()}", "shape:")' in zh
    assert stub_text.code_tokens(zh) == stub_text.code_tokens(STUB + DEMO)
    found = "\n".join(map(str, stub_text.problems(ex, "zh")))
    assert "no translation for the printed string 'shape:'" in found and found.count("\n") == 0
    slipped = a_course(tmp_path / "3", STUB + DEMO, (CATALOGUE + PRINTED).replace("损失：", "损失, 值 ："))
    found = "\n".join(map(str, stub_text.problems(slipped, "zh")))
    assert "the printed string '损失, 值 ：' breaks Chinese typography" in found
    changed = (CATALOGUE + PRINTED).replace("位置 {loss.argmax()}", "位置 {loss.argmin()}")
    found = stub_text.problems(a_course(tmp_path / "2", STUB + DEMO, changed), "zh")
    assert any("changes the code of the stub" in str(p) for p in found)


def test_validate_refuses_english_left_a_translation_in_english_and_an_entry_nothing_uses(tmp_path):
    catalogue = CATALOGUE.replace("zh = '''原始分数'''", "zh = '''the scores of the model'''") + \
        "\n[[text]]\nen = '''a comment that is gone'''\nzh = '''一条已删除的注释'''\n"
    stub = STUB.replace("    # TODO: subtract", "    # Keep the shapes as they are.\n\n    # TODO: subtract")
    found = "\n".join(map(str, stub_text.problems(a_course(tmp_path, stub, catalogue), "zh")))
    assert "no translation for the comment 'Keep the shapes as they are.'" in found
    assert "the translation keeps English in the comment 'the scores of the model'" in found
    assert "no comment or docstring of the stub is 'a comment that is gone'" in found


def test_a_translation_that_would_change_the_code_is_refused(tmp_path):
    catalogue = CATALOGUE.replace("zh = '''原始分数'''", "zh = '''原始分数\nx = 0'''")  # a line break in an inline
    catalogue = catalogue.replace("第三行。", '第三行。"""')  # a docstring's quotes closed early
    found = stub_text.problems(a_course(tmp_path, catalogue=catalogue), "zh")
    assert any("changes the code of the stub" in str(p) for p in found)


def test_every_stub_has_its_chinese_with_the_same_code_on_every_draw():
    """All 29: each draw's Chinese stub parses, has the English stub's code tokens, no English prose in a comment
    or docstring, and validate finds nothing (templates included: ex05, ex07, ex08, ex12, ex16, ex18)."""
    for ex in builtin_course().exercises():
        assert stub_text.problems(ex, "zh") == [], ex.name
        for draw in variants.all_draws(ex):
            english, chinese = variants.stub_text(ex, draw), stub_text.stub(ex, "zh", draw)
            ast.parse(chinese)
            assert chinese != english and stub_text.code_tokens(chinese) == stub_text.code_tokens(english), ex.name
            assert not [s.text for s in stub_text.spans(chinese) if english_prose(s.text)], ex.name


def test_a_drawn_value_brings_its_own_chinese():
    ex05 = builtin_course().find("ex05")
    summed = next(d for d in variants.all_draws(ex05) if d["reduction"]["name"] == "sum")
    assert "误差平方之和（reduction='sum'）" in stub_text.stub(ex05, "zh", summed)
    ex12 = builtin_course().find("ex12")
    assert {"FIXME" in stub_text.stub(ex12, "zh", d) and "FIXME：" in stub_text.stub(ex12, "zh", d)
            for d in variants.all_draws(ex12)} == {True}


@pytest.fixture(scope="module")
def zh_workspace(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stubs") / "ws"
    assert grade_here("init", folder, "--lang", "zh", cwd=folder.parent).returncode == 0
    return folder


def test_init_writes_the_stubs_in_the_workspaces_language_and_reset_restores_them(zh_workspace):
    ex05 = builtin_course().find("ex05")
    path = zh_workspace / "exercises" / ex05.name / f"{ex05.name}.py"
    assert path.read_text(encoding="utf-8") == stub_text.stub(ex05, "zh")
    path.write_text("my work\n")
    assert grade_here("reset", "ex05", "--yes", cwd=zh_workspace).returncode == 0
    assert path.read_text(encoding="utf-8") == stub_text.stub(ex05, "zh")
    proc = grade_here("notebook", "ex05", "--out", zh_workspace / "n.ipynb", cwd=zh_workspace)
    assert proc.returncode == 0, proc.stderr
    cells = json.loads((zh_workspace / "n.ipynb").read_text(encoding="utf-8"))["cells"]
    assert "手写反向传播" in "".join(cells[1]["source"])  # the stub's docstring, in a code cell


def test_changing_the_language_rewrites_the_stubs_not_started(tmp_path):
    ws = tmp_path / "ws"
    grade_here("init", ws, "--lang", "en", cwd=tmp_path)
    ex01, ex02 = builtin_course().find("ex01"), builtin_course().find("ex02")
    started = ws / "exercises" / ex02.name / f"{ex02.name}.py"
    started.write_text("def to_matrix(x, rows):\n    return x.view(rows, -1)\n")
    proc = grade_here("lang", "zh", cwd=ws)
    not_started = len(builtin_course().exercises()) - 1
    assert proc.returncode == 0 and f" {not_started} " in proc.stdout, proc.stdout + proc.stderr
    assert (ws / "exercises" / ex01.name / f"{ex01.name}.py").read_text(encoding="utf-8") == stub_text.stub(ex01, "zh")
    assert started.read_text() == "def to_matrix(x, rows):\n    return x.view(rows, -1)\n"  # the learner's work
    assert grade_here("reset", "ex01", cwd=ws).returncode == 0  # an untouched stub in any language: nothing to ask
