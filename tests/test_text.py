"""Learner-facing text: one template per language filled from the same values, the catalogue for the
CLI's lines, and the check that finds English prose left in Chinese text."""

from grader.text import Text, catalogue, english_prose, joined, say, verbatim


def test_one_template_per_language_filled_from_the_same_values():
    text = Text("{what} should have shape {want}.", "{what} 的形状应为 {want}。",
                what=Text("the loss", "损失"), want=[8, 1])
    assert text.render("en") == "the loss should have shape [8, 1]."
    assert text.render("zh") == "损失的形状应为 [8, 1]。"  # no space beside a Chinese value


def test_a_text_without_values_is_shown_as_written():
    assert Text("{not a field}", "{也不是}").render("zh") == "{也不是}"


def test_a_missing_translation_comes_from_the_catalogue_else_english():
    english = "not verified here: this machine has no CUDA device"
    assert english in catalogue("zh")
    assert Text(english).render("zh") == catalogue("zh")[english]
    assert Text("no such line anywhere").render("zh") == "no such line anywhere"


def test_verbatim_values_are_quoted_as_is_and_masked_for_the_language_check():
    text = Text("{what} raised {error}", "{what} 抛出了异常 {error}", what="`f(x)`",
                error=verbatim("ValueError: the value is wrong"))
    assert text.render("zh") == "`f(x)` 抛出了异常 ValueError: the value is wrong"
    assert english_prose(text.render("zh", mask=True)) == []
    assert english_prose(text.render("zh")) == ["the value is wrong"]


def test_english_prose_is_found_outside_code():
    assert english_prose("实际为 [1, 8]。 Same number of elements: a missing reshape?") == \
        ["Same number of elements", "a missing reshape"]
    assert english_prose("你的代码crashed with a segmentation fault") == ["crashed with a segmentation fault"]
    for fine in ["是不是把 mean 写成了 sum？", "请 detach，或在 torch.no_grad() 下计算。", "用 Adam 或 SGD",
                 "用 `grade list` 查看 the next one"[:16], "d loss/d w 含有 NaN 或 inf。", "用 weights_only=True 加载"]:
        assert english_prose(fine) == [], fine


def test_joined_and_say():
    both = joined([Text("a {x}", "甲 {x}", x=1), Text("b", "乙")], "; ", "；")
    assert both.render("en") == "a 1; b" and both.render("zh") == "甲 1；乙"
    assert joined([], "; ").render("zh") == ""
    assert say("en", "{n} done", n=3) == "3 done"


def test_adding_texts_keeps_each_language():
    assert (Text("One.", "一。") + (" Two.", "二。")).render("zh") == "一。二。"


def test_a_quoted_framework_error_is_marked_as_a_quotation_in_chinese():
    from grader.text import quoted

    error = "RuntimeError: Tensor on device cpu is not on the expected device meta!"
    text = Text("{what} raised {error}", "{what} 抛出了异常 {error}", what="`f(x)`", error=quoted(error))
    assert text.render("en").endswith(f"raised {error}")
    assert text.render("zh").endswith(f"抛出了异常 「{error}」")
    assert english_prose(text.render("zh", mask=True)) == []
