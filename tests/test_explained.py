"""Explained solutions: `grade solution` shows the idea, the code with its comments in the learner's language and the
mistakes it avoids, from solutions/<name>.explain.toml; `grade validate` holds each file as it holds the stubs'
translations."""

from conftest import ROOT, grade_here
from grader.course import explained, variants
from grader.course.exercises import all_exercises, find_exercise
from grader.text import cjk_typography, english_prose

EX05 = ROOT / "solutions" / "ex05_manual_backward.explain.toml"


def test_every_explanation_holds_on_every_draw():
    """Each explanation there is (all 29 once written): its idea and mistakes in both languages, registered keys,
    every comment and docstring of the solution translated without changing its code."""
    written = [ex for ex in all_exercises() if explained.explain_file(ex).is_file()]
    assert "ex05" in [ex.id for ex in written]
    for ex in written:
        assert explained.problems(ex) == [], ex.id
        for draw in variants.all_draws(ex):
            shown = explained.explanation(ex, "zh", draw)
            assert shown["idea"] and shown["avoids"] and "{{" not in shown["idea"] + shown["code"], ex.id
            assert not english_prose(shown["idea"]) and not cjk_typography(shown["idea"]), ex.id
            assert all(item["meaning"] and not english_prose(item["text"]) for item in shown["avoids"]), ex.id


def test_validate_refuses_english_an_unknown_key_a_missing_idea_and_a_comment_left_untranslated(tmp_path, monkeypatch):
    text = EX05.read_text(encoding="utf-8")
    broken = (text.replace('key = "sign"', 'key = "sgin"')
              .replace("保留平方带出的因子 2：d(e ** 2)/de = 2 * e。", "It keeps the 2 of the square.")
              .replace("idea_zh = ", "idea_in_chinese = ")
              .replace("ex05 的参考答案（手工推导 y = w*x + b 的 MSE 的梯度）。", "Reference solution of ex05.")
              .replace("而不是每个样本一个", "而不是 每个样本一个"))
    entry = "[[text]]\nen = '''dL/dy_pred = {{reduction.per_sample}}'''"
    assert entry in broken
    broken = broken.replace(entry, "[[text]]\nen = '''a comment the solution does not have'''")  # its entry gone
    path = tmp_path / "ex05_manual_backward.explain.toml"
    path.write_text(broken, encoding="utf-8")
    monkeypatch.setattr(explained, "explain_file", lambda exercise: path)
    found = "\n".join(str(p) for p in explained.problems(find_exercise("ex05")))
    assert "no `idea_zh`" in found
    assert "the mistake key 'sgin' is registered nowhere" in found
    assert "the Chinese avoids factor-0.5 has English prose" in found
    assert "no translation for the comment 'dL/dy_pred = 2 * error / N'" in found
    assert "no translation for the comment 'dL/dy_pred = 2 * error'" in found  # the other draw's comment too
    assert "the translation keeps English in the docstring 'Reference solution of ex05.'" in found
    assert "the Chinese avoids per-sample-grads breaks Chinese typography" in found
    path.write_text("idea = \n", encoding="utf-8")
    assert "ex05_manual_backward.explain.toml:" in str(explained.problems(find_exercise("ex05"))[0])


def test_a_course_that_asks_for_explanations_refuses_an_exercise_without_one(monkeypatch):
    ex01 = find_exercise("ex01")
    if explained.explain_file(ex01).is_file():
        monkeypatch.setattr(explained, "explain_file", lambda exercise: ROOT / "solutions" / "nothing.explain.toml")
    monkeypatch.setattr(ex01.course, "explained", False)
    assert explained.problems(ex01) == []  # not asked for: a course's own choice
    monkeypatch.setattr(ex01.course, "explained", True)
    assert "no explanation of the solution" in str(explained.problems(ex01)[0])


def test_grade_solution_explains_in_the_learners_language(tmp_path):
    ws = tmp_path / "ws"
    assert grade_here("init", ws, cwd=tmp_path).returncode == 0
    (ws / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py").write_text(
        (ROOT / "solutions" / "ex05_manual_backward.py").read_text())
    assert grade_here("ex05", cwd=ws).returncode == 0
    en = grade_here("solution", "ex05", cwd=ws)
    assert en.returncode == 0, en.stderr
    assert "The idea:" in en.stdout and "by the chain rule, one step at a time" in en.stdout
    assert "def linear_grads" in en.stdout and "# dL/dy_pred = 2 * error / N" in en.stdout
    assert "The mistakes it avoids:" in en.stdout
    assert "(mistake `sign`: the right size with the opposite sign)" in en.stdout
    zh = grade_here("solution", "ex05", "--lang", "zh", cwd=ws)
    assert "思路：" in zh.stdout and "用链式法则一步一步对损失求导" in zh.stdout
    assert '"""ex05 的参考答案（手工推导 y = w*x + b 的 MSE 的梯度）。"""' in zh.stdout
    assert "（错误 `sign`：大小对但符号相反）" in zh.stdout and "它避开的错误：" in zh.stdout
    prose = [line for line in zh.stdout.splitlines() if not line.startswith(("    ", "def ", "import ", '"""'))]
    assert not english_prose("\n".join(prose)) and not cjk_typography("\n".join(prose)), prose
