"""The feedback toolkit of the checks: structure before values, named relations, gradient lines."""

import pytest
import torch

from grader.checking import CheckFailed, expect_close, expect_number, expect_tensor, relation
from grader.checking.gradients import autograd_gradient, expect_gradient, numerical_gradient, numerical_jacobian


def failure(fn, *args, **kwargs) -> str:
    with pytest.raises(CheckFailed) as info:
        fn(*args, **kwargs)
    return info.value.message


def test_relation_names_sign_factor_transpose_zero():
    e = torch.tensor([[1.0, -2.0], [3.0, 0.5]])
    assert relation(-e, e) == "sign"
    assert relation(2 * e, e) == "factor 2"
    assert relation(e.t(), e) == "transpose"
    assert relation(torch.zeros(2, 2), e) == "zero"
    assert relation(e + torch.tensor([[0.3, 0.0], [0.0, 0.0]]), e) is None


def test_structure_is_reported_before_values():
    assert "did you forget a `return`" in failure(expect_tensor, None, "dw")
    assert "should be a tensor, got the float 0.5" in failure(expect_tensor, 0.5, "dw")
    assert "should have shape [1], got [8, 1]" in failure(expect_close, torch.ones(8, 1), torch.ones(1), "dw")
    text = failure(expect_tensor, torch.ones(2, 3), "x", shape=[3, 2])
    assert "Same number of elements" in text
    for got, want in (((), [1]), ((5,), [5, 1]), ((4,), [1, 4])):  # only the size-1 axes lost
        assert "squeeze() without a dim" in failure(expect_tensor, torch.ones(got), "out", shape=want)
    assert "squeeze()" not in failure(expect_tensor, torch.ones(5), "out", shape=[5, 2])
    text = failure(expect_tensor, torch.ones(2), "w", requires_grad=True)
    assert "should require grad" in text


def test_value_mismatch_shows_first_bad_index_and_counts():
    expected = torch.arange(6.0).reshape(2, 3)
    actual = expected.clone()
    actual[1, 2] = 9.0
    text = failure(expect_close, actual, expected, "y")
    assert "y[1, 2] should be 5, got 9" in text and "1 of 6 entries wrong" in text


def test_relation_hint_is_shown():
    text = failure(expect_close, -torch.ones(3), torch.ones(3), "dw", hints={"sign": ("Check the order.", "")})
    assert "opposite sign" in text and "Check the order." in text


def test_any_float_dtype_is_accepted_when_close():
    expected = torch.tensor([1.0, 2.0])
    expect_close(expected.double(), expected, "v")
    expect_close(expected.half(), expected, "v", rtol=1e-3)
    assert expect_number(torch.tensor(2.0), 2.0, "n") == 2.0
    assert "NaN or inf" in failure(expect_close, torch.tensor([float("nan"), 2.0]), expected, "v")


def test_numerical_gradient_matches_autograd_in_float64():
    x = torch.randn(5, 1, dtype=torch.float64)
    f = lambda w, b: ((w * x + b) ** 2).mean()  # noqa: E731
    w, b = torch.randn(1), torch.randn(1)
    for num, auto in zip(numerical_gradient(f, [w, b]), autograd_gradient(f, [w, b])):
        assert torch.allclose(num, auto, rtol=1e-6, atol=1e-8)
    jac = numerical_jacobian(lambda a: a.sin(), [torch.tensor([0.1, 0.2])])[0]
    assert torch.allclose(jac, torch.diag(torch.tensor([0.1, 0.2]).double().cos()), atol=1e-8)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded"])
def test_numerical_gradient_of_a_non_contiguous_input(layout):
    """A strided input is perturbed where it lies (reshape(-1) of it is a copy: the Jacobian came out all zeros)."""
    base = torch.randn(3, 4, dtype=torch.float64)
    x = {"transposed": base.T, "sliced": base[:, ::2], "expanded": base[:1].expand(3, 4)}[layout]
    assert not x.is_contiguous()
    f = lambda a: (a ** 3).sum()  # noqa: E731
    numerical, = numerical_gradient(f, [x])
    assert numerical.shape == x.shape and torch.allclose(numerical, 3 * x ** 2, rtol=1e-6, atol=1e-6)
    assert torch.allclose(numerical, autograd_gradient(f, [x])[0], rtol=1e-6, atol=1e-6)


def test_gradient_messages_name_the_mistake():
    expected = torch.tensor([0.5, -1.5])
    assert "opposite sign" in failure(expect_gradient, -expected, expected, "w")
    assert "constant factor of 2" in failure(expect_gradient, 2 * expected, expected, "w")
    assert "is None" in failure(expect_gradient, None, expected, "w")
    text = failure(expect_gradient, torch.ones(8, 2), expected, "w")
    assert "Per-sample values" in text
    text = failure(expect_gradient, expected + torch.tensor([0.0, 1.0]), expected, "w", numerical=expected)
    assert "d loss/d w[1]: yours -0.5, expected -1.5, numerical -1.5" in text


def test_explain_turns_a_known_learner_error_into_a_lesson():
    from grader.checking import explain
    from grader.sandbox.problems import LearnerError
    from grader.text import Text

    with pytest.raises(CheckFailed) as info:
        with explain({"view size is not compatible": ("Call .contiguous() before .view().", "先调用 .contiguous()。")}):
            raise LearnerError(Text("`f(tensor[2, 3])` raised RuntimeError: view size is not compatible with ..."))
    assert info.value.message.startswith("Call .contiguous() before .view(). (`f(tensor[2, 3])` raised")
    assert info.value.zh.startswith("先调用 .contiguous()。（`f(tensor[2, 3])` raised")
    with pytest.raises(LearnerError):
        with explain({"view size": ("x", "y")}):
            raise LearnerError(Text("`f()` raised ValueError: other"))


def test_names_can_be_given_in_both_languages():
    with pytest.raises(CheckFailed) as info:
        expect_close(-torch.ones(2), torch.ones(2), ("the change of w", "w 的变化量"))
    assert info.value.message.startswith("the change of w has the right size but the opposite sign")
    assert info.value.zh.startswith("w 的变化量 大小对但符号相反")
