"""The toolkit of the hidden checks: declare a check, fail with a message that teaches,
and compare the learner's values with expectations structure first (type, shape, dtype,
requires_grad), then values (max error, first bad index, a guess at the mistake).

Every learner-facing text comes in English and, where given, Simplified Chinese.
"""

from __future__ import annotations

import contextlib

import pytest
import torch

from grader.sandbox import LearnerError, probe  # noqa: F401 - probe is re-exported for check modules
from grader.wire import Opaque, tensor_info  # noqa: F401 - re-exported for check modules


class CheckFailed(AssertionError):
    """A check's verdict: the learner's code is wrong, and `message` says how."""

    def __init__(self, message: str, zh: str | None = None):
        super().__init__(message)
        self.message = message
        self.zh = zh or message


def fail(message: str, zh: str | None = None):
    """Fail the current check with a learner-facing message (English, and Chinese if given)."""
    raise CheckFailed(message, zh)


@contextlib.contextmanager
def explain(causes: dict[str, tuple[str, str]]):
    """Turn a known learner exception into a teaching message.

    `with explain({"view size is not compatible": (en, zh)}): submission.fn(x)` fails the check
    with that explanation (and the original error) when the learner's code raised an error whose
    text contains the key; any other error passes through unchanged.
    """
    try:
        yield
    except LearnerError as exc:
        for needle, (en, zh) in causes.items():
            if needle in exc.message:
                fail(f"{en} ({exc.message})", f"{zh}（{exc.zh}）")
        raise


CURVES: list[dict] = []  # what the checks recorded for the HTML report, emitted by the judge at the end


def record_curve(title: str, series: dict[str, list[float]], *, truth: dict[str, float] | None = None,
                 log: bool = False, xlabel: str = "step") -> None:
    """Keep a curve for the report: e.g. the learner's loss per step beside the reference training's,
    or w and b per step with their true values in `truth`. Checks record; they never plot."""
    CURVES.append({"title": title, "series": {k: [float(v) for v in vs] for k, vs in series.items()},
                   "truth": truth or {}, "log": log, "xlabel": xlabel})


def first_sentences(text: str, most: int = 300) -> str:
    """The error text, cut at a sentence end when it is long."""
    if len(text) <= most:
        return text
    cut = text.rfind(". ", 0, most)
    return text[:cut + 1] if cut > 0 else text[:most] + "..."


def check(title: str, points: float, zh: str | None = None):
    """Declare a check: `@check("dw matches autograd", points=3)` above a `test_...` function."""
    return pytest.mark.check(title=title, points=float(points), zh=zh or title)


def describe(value) -> str:
    """A value as a beginner would name it: 'a tensor of shape [8, 1] (float32)', 'None'."""
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {list(value.shape)} ({str(value.dtype).removeprefix('torch.')})"
    if isinstance(value, Opaque):
        return f"a {value.type_name} ({value.text[:60]})"
    if isinstance(value, bool):
        return f"the bool {value}"
    if isinstance(value, (int, float)):
        return f"the {type(value).__name__} {value:g}" if isinstance(value, float) else f"the int {value}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


# -- structure --------------------------------------------------------------------------

def names(what: str | tuple[str, str]) -> tuple[str, str]:
    """A thing's name for messages: one string for both languages, or an (English, Chinese) pair."""
    return (what, what) if isinstance(what, str) else what


def expect_tensor(value, what: str | tuple[str, str], *, shape=None, dtype=None, floating: bool = False,
                  requires_grad: bool | None = None) -> torch.Tensor:
    """Fail unless `value` is a tensor with the given structure; return it."""
    what, what_zh = names(what)
    if value is None:
        fail(f"{what} is None: did you forget a `return`?", f"{what_zh} 是 None：是不是忘了 `return`？")
    if not isinstance(value, torch.Tensor):
        fail(f"{what} should be a tensor, got {describe(value)}.",
             f"{what_zh} 应该是一个 tensor，实际得到 {describe(value)}。")
    if shape is not None and list(value.shape) != list(shape):
        hint = ""
        if value.numel() == _numel(shape):
            hint = " Same number of elements: a missing reshape, or a transpose?"
        elif value.dim() != len(shape):
            hint = " Did a sum/mean drop a dimension, or did broadcasting add one?"
        fail(f"{what} should have shape {list(shape)}, got {list(value.shape)}.{hint}",
             f"{what_zh} 的形状应为 {list(shape)}，实际为 {list(value.shape)}。{hint}")
    if floating and not value.is_floating_point():
        fail(f"{what} should be a floating-point tensor, got dtype {value.dtype}.",
             f"{what_zh} 应该是浮点类型的 tensor，实际 dtype 为 {value.dtype}。")
    if dtype is not None and value.dtype != dtype:
        fail(f"{what} should have dtype {dtype}, got {value.dtype}.",
             f"{what_zh} 的 dtype 应为 {dtype}，实际为 {value.dtype}。")
    if requires_grad is not None and tensor_info(value).get("requires_grad", value.requires_grad) != requires_grad:
        if requires_grad:
            fail(f"{what} should require grad (requires_grad=True), but it does not.",
                 f"{what_zh} 应该 requires_grad=True，但实际没有。")
        fail(f"{what} should not require grad: detach it or compute it under torch.no_grad().",
             f"{what_zh} 不应该 requires_grad：请 detach，或在 torch.no_grad() 下计算。")
    return value


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# -- values -----------------------------------------------------------------------------

def relation(actual: torch.Tensor, expected: torch.Tensor) -> str | None:
    """Guess how a wrong value relates to the right one: sign, constant factor, transpose."""
    a, e = actual.double().reshape(-1), expected.double().reshape(-1)
    if not (torch.isfinite(a).all() and torch.isfinite(e).all()):
        return None
    scale = e.abs().max()
    if scale < 1e-12:
        return None
    if torch.allclose(a, -e, rtol=1e-4, atol=1e-6 * float(scale)):
        return "sign"
    if torch.allclose(a, torch.zeros_like(a)):
        return "zero"
    mask = e.abs() > 1e-6 * scale
    ratios = a[mask] / e[mask]
    if ratios.numel() and torch.allclose(ratios, ratios[0].expand_as(ratios), rtol=1e-4) \
            and torch.allclose(a, ratios[0] * e, rtol=1e-4, atol=1e-6 * float(scale)):
        return f"factor {float(ratios[0]):.4g}"
    if actual.dim() == 2 and actual.t().shape == expected.shape and torch.allclose(
            actual.double().t(), expected.double(), rtol=1e-4, atol=1e-6 * float(scale)):
        return "transpose"
    return None


RELATION_TEXT = {
    "sign": ("has the right size but the opposite sign", "大小对但符号相反"),
    "zero": ("is all zeros", "全是 0"),
    "transpose": ("is the transpose of the expected value", "是期望值的转置"),
}


def relation_text(rel: str) -> tuple[str, str]:
    if rel.startswith("factor"):
        f = rel.split()[1]
        return (f"is off by a constant factor of {f} (a missing or extra constant, such as 2 or 1/N?)",
                f"差了一个常数因子 {f}（是否多了或少了某个常数，比如 2 或 1/N？）")
    return RELATION_TEXT[rel]


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def value_mismatch(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float):
    """None if close; else (index, actual, expected, max_abs, n_bad) of the first bad entry."""
    a, e = actual.double(), expected.double()
    bad = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=False)
    if not bad.any():
        return None
    idx = tuple(int(i) for i in bad.nonzero()[0]) if a.dim() else ()
    diff = (a - e).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    return idx, float(a[idx]), float(e[idx]), float(diff.max()), int(bad.sum())


def expect_close(actual, expected: torch.Tensor, what: str | tuple[str, str], *, rtol: float = 1e-4,
                 atol: float = 1e-6, hints: dict[str, tuple[str, str]] | None = None) -> torch.Tensor:
    """Fail unless `actual` is a tensor of `expected`'s shape with close values (any float dtype).

    `hints` maps a relation ("sign", "factor 2", "transpose", "zero") to a likely cause to show.
    """
    actual = expect_tensor(actual, what, shape=expected.shape)
    what, what_zh = names(what)
    mismatch = value_mismatch(actual, expected, rtol, atol)
    if mismatch is None:
        return actual
    idx, got, want, max_abs, n_bad = mismatch
    if not torch.isfinite(actual.double()).all():
        fail(f"{what} contains NaN or inf (first at index {list(idx)}): look for a division by zero, log of 0 or an overflow.",
             f"{what_zh} 含有 NaN 或 inf（第一个在索引 {list(idx)}）：检查除以 0、log(0) 或溢出。")
    where = f"[{', '.join(map(str, idx))}]" if idx else ""
    rel = relation(actual, expected)
    en, zh = (f"{what} has wrong values: {what}{where} should be {_fmt(want)}, got {_fmt(got)} "
              f"({n_bad} of {actual.numel()} entries wrong, max abs error {max_abs:.2e}).",
              f"{what_zh} 的数值不对：{what_zh}{where} 应为 {_fmt(want)}，实际为 {_fmt(got)}"
              f"（{actual.numel()} 个元素中有 {n_bad} 个不对，最大绝对误差 {max_abs:.2e}）。")
    if rel is not None:
        rel_en, rel_zh = relation_text(rel)
        en, zh = f"{what} {rel_en}.", f"{what_zh} {rel_zh}。"
        cause = (hints or {}).get(rel) or (hints or {}).get(rel.split()[0])
        if cause:
            en, zh = f"{en} {cause[0]}", f"{zh}{cause[1]}"
    fail(en, zh)


def expect_number(actual, expected: float, what: str | tuple[str, str], *, rtol: float = 1e-4,
                  atol: float = 1e-6) -> float:
    """Fail unless `actual` is a Python number or a one-element tensor close to `expected`."""
    what, what_zh = names(what)
    if isinstance(actual, torch.Tensor) and actual.numel() == 1:
        actual = float(actual.reshape(()))
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        fail(f"{what} should be a number, got {describe(actual)}.", f"{what_zh} 应该是一个数，实际得到 {describe(actual)}。")
    if not abs(actual - expected) <= atol + rtol * abs(expected):
        fail(f"{what} should be {_fmt(expected)}, got {_fmt(actual)}.", f"{what_zh} 应为 {_fmt(expected)}，实际为 {_fmt(actual)}。")
    return float(actual)
