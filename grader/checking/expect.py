"""The toolkit of the hidden checks: declare a check, fail with a message that teaches,
and compare the learner's values with expectations structure first (type, shape, dtype,
requires_grad), then values (max error, first bad index, a guess at the mistake).

Every learner-facing message is a `Text` (grader/text.py): one template per language, filled from
the same values. A failure can name the mistake it diagnosed with a short stable `key` ("sign",
"factor-2", "zero-grad-missing"): the class view counts how many students made each one.
"""

from __future__ import annotations

import contextlib
from typing import NoReturn

import pytest
import torch

from grader.checking.probe_kit import (  # noqa: F401 - re-exported for check modules
    is_number, learner_call, learner_error, patched, pretend_cuda, recording_calls, salted_hash, watching_autograd)
from grader.sandbox.frames import where
from grader.sandbox.problems import LearnerError, does_not_define  # noqa: F401 - re-exported for check modules
from grader.sandbox.probes import probe  # noqa: F401 - re-exported for check modules
from grader.checking.routes import engine_ran, machine_derivatives  # noqa: F401 - re-exported: a probe's witnesses ("by hand")
from grader.text import Text, joined, localized, verbatim  # noqa: F401 - Text, joined, verbatim: re-exported for checks
from grader.sandbox.wire import Opaque, tensor_info  # re-exported for check modules


from grader.checking import __all__  # noqa: F401 - the names grader.checking offers, defined or imported here


class CheckFailed(AssertionError):
    """A check's verdict: the learner's code is wrong, `text` says how, `key` names the mistake."""

    def __init__(self, text: Text, key: str | None = None):
        super().__init__(text.render("en"))
        self.text = text
        self.key = key

    @property
    def message(self) -> str:
        return self.text.render("en")

    @property
    def zh(self) -> str:
        return self.text.render("zh")


def fail(message, zh: str | None = None, /, *, key: str | None = None, **values) -> NoReturn:
    """Fail the current check with a learner-facing message.

    `fail(Text(...))`, or the templates directly: `fail("{name} is None.", "{name} 是 None。", name=what)`.
    Without values the templates are shown as they are (no `{}` formatting). `key` names the mistake.
    """
    text = message if isinstance(message, Text) else Text(message, zh, **values)
    raise CheckFailed(text, key)


@contextlib.contextmanager
def explain(causes: dict, *, key: str | None = None):
    """Turn a known learner exception into a teaching message.

    `with explain({"view size is not compatible": (en, zh)}): submission.fn(x)` fails the check
    with that explanation (and the original error) when the learner's code raised an error whose
    text contains the key; any other error passes through unchanged. A cause is a Text or an
    (English, Chinese) pair.
    """
    try:
        yield
    except LearnerError as exc:
        for needle, cause in causes.items():
            if needle in exc.message:
                fail("{cause} ({error})", "{cause}（{error}）", cause=Text.of(cause), error=exc.text, key=key)
        raise


def error_text(error: dict) -> Text:
    """A learner's error that a probe captured (`learner_call`) as the learner reads it: its type, the first line of
    its message, and where in their code it was raised (" (line 12, in fit: ...)")."""
    message = (error.get("message") or "").strip()
    first = message.splitlines()[0][:200].rstrip(".") if message else ""
    return Text("{error}{where}", "{error}{where}", error=verbatim(f"{error['type']}: {first}" if first else
                                                                   error["type"]), where=where(error))


def fail_raised(error: dict, call, lesson=None, *, key: str | None = None) -> NoReturn:
    """Fail with a learner's error that a probe captured (`learner_call`): "{call} raised TypeError: ... (line 12,
    in fit: ...)." and the `lesson` (a Text or an (English, Chinese) pair) the check draws from it; `key` names the
    mistake (by default `raised-TypeError`). A TODO left (NotImplementedError) is reported as not started."""
    call = names(call)
    if error.get("not_started"):
        raise LearnerError(Text("Not started: {call} still raises NotImplementedError (fill in its TODO).",
                                "尚未开始：{call} 仍然抛出 NotImplementedError（请完成其中的 TODO）。", call=call),
                           exc_type="NotImplementedError", not_started=True)
    fail("{call} raised {error}.{lesson}", "{call} 抛出了 {error}。{lesson}", call=call, error=error_text(error),
         lesson=Text(" {l}", "{l}", l=Text.of(lesson)) if lesson else "", key=key or f"raised-{error['type']}")


DRAW: dict = {}  # the parameters this grading's variant drew (exercise.toml's [variants]), set by the judge


def use_variant(draw: dict) -> None:
    DRAW.clear()
    DRAW.update(draw)


def variant(name: str):
    """The value drawn for parameter `name` of the exercise's [variants] (its first value outside a kata)."""
    if name not in DRAW:
        raise KeyError(f"the exercise's [variants] has no parameter {name!r} (it has: {', '.join(DRAW) or 'none'})")
    return DRAW[name]


CURVES: list[dict] = []  # what the checks recorded for the HTML report, emitted by the judge at the end


def record_curve(title, series: dict[str, list[float]], *, truth: dict[str, float] | None = None,
                 log: bool = False, xlabel="step") -> None:
    """Keep a curve for the report: e.g. the learner's loss per step beside the reference training's,
    or w and b per step with their true values in `truth`. Checks record; they never plot.

    `title` and `xlabel` are a `Text`, an (English, Chinese) pair or English text (translated by the
    catalogue where it has the text, or its template); the result has them in the learner's language."""
    CURVES.append({"title": title, "series": {k: [float(v) for v in vs] for k, vs in series.items()},
                   "truth": truth or {}, "log": log, "xlabel": xlabel})


def recorded_curves(lang: str) -> list[dict]:
    """The curves recorded so far, as plain data with their title and xlabel in `lang`."""
    return [{**c, "title": localized(c["title"], lang), "xlabel": localized(c["xlabel"], lang)} for c in CURVES]


VISIBILITIES = ("public", "hidden", "after_due_date")


def check(title: str, points: float, zh: str | None = None, *, depends: str | tuple[str, ...] = (),
          visibility: str = "hidden"):
    """Declare a check: `@check("dw matches autograd", points=3)` above a `test_...` function.

    `depends` names earlier checks (their function names without `test_`) that this one builds on: when
    one of them did not pass, this one earns no points, and its message says to fix that one first (one
    mistake, one lesson). `visibility`: "public" checks ship in `grade release` (students run them);
    "hidden" ones (the default) run only when the teacher grades; "after_due_date" is hidden in a release
    and shown after the due date on Gradescope.
    """
    if visibility not in VISIBILITIES:
        raise ValueError(f"@check({title!r}): visibility is one of {', '.join(VISIBILITIES)}, not {visibility!r}")
    depends = (depends,) if isinstance(depends, str) else tuple(depends)
    return pytest.mark.check(title=title, points=float(points), zh=zh or title, depends=depends, visibility=visibility)


def describe(value) -> Text:
    """A value as a beginner would name it: 'a tensor of shape [8, 1] (float32)', 'None'."""
    if value is None:
        return Text("None", "None")
    if isinstance(value, torch.Tensor):
        return Text("a tensor of shape {shape} ({dtype})", "形状为 {shape} 的 tensor（{dtype}）",
                    shape=list(value.shape), dtype=str(value.dtype).removeprefix("torch."))
    if isinstance(value, Opaque):
        return Text("a {type} ({text})", "一个 {type}（{text}）", type=verbatim(value.type_name),
                    text=verbatim(value.text[:60]))
    if isinstance(value, bool):
        return Text("the bool {value}", "布尔值 {value}", value=value)
    if isinstance(value, float):
        return Text("the float {value:g}", "浮点数 {value:g}", value=value)
    if isinstance(value, int):
        return Text("the int {value}", "整数 {value}", value=value)
    if isinstance(value, (list, tuple)):
        return Text("a {type} of {n} items", "含 {n} 个元素的 {type}", type=type(value).__name__, n=len(value))
    return Text("a {type}", "一个 {type}", type=verbatim(type(value).__name__))


# -- structure --------------------------------------------------------------------------

def names(what) -> Text:
    """A thing's name for messages: a Text, an (English, Chinese) pair, or one string for both languages."""
    return Text.of(what)


def expect_tensor(value, what, *, shape=None, dtype=None, floating: bool = False,
                  requires_grad: bool | None = None) -> torch.Tensor:
    """Fail unless `value` is a tensor with the given structure; return it."""
    what = names(what)
    if value is None:
        fail("{what} is None: did you forget a `return`?", "{what} 是 None：是不是忘了 `return`？",
             what=what, key="returned-none")
    if not isinstance(value, torch.Tensor):
        fail("{what} should be a tensor, got {got}.", "{what} 应该是一个 tensor，实际得到{got}。",
             what=what, got=describe(value), key="not-a-tensor")
    if shape is not None and list(value.shape) != list(shape):
        hint, key = Text("", ""), "wrong-shape"
        if 1 in shape and list(value.shape) == [s for s in shape if s != 1]:
            hint = Text(" The size-1 axis is missing: did a squeeze() without a dim remove it? squeeze() removes "
                        "every axis of size 1; squeeze(dim) only the one named.",
                        "少了大小为 1 的那一维：是不是不带 dim 的 squeeze() 把它去掉了？"
                        "squeeze() 会去掉所有大小为 1 的维度；squeeze(dim) 只去掉指定的那一维。")
            key = "squeeze-without-dim"
        elif [s for s in value.shape if s != 1] == [s for s in shape if s != 1]:
            hint = Text(" Only size-1 dimensions differ: a keepdim=True too many or too few, or an unsqueeze?",
                        "只有大小为 1 的维度不同：是不是多了或少了 keepdim=True，或者多了 unsqueeze？")
            key = "size-1-dims"
        elif value.numel() == _numel(shape):
            hint = Text(" Same number of elements: a missing reshape, or a transpose?",
                        "元素个数相同：是不是少了 reshape，或者多了转置？")
        elif value.dim() != len(shape):
            hint = Text(" Did a sum/mean drop a dimension, or did broadcasting add one?",
                        "是不是 sum/mean 去掉了一个维度，或者广播多出了一个维度？")
        fail("{what} should have shape {want}, got {got}.{hint}", "{what} 的形状应为 {want}，实际为 {got}。{hint}",
             what=what, want=list(shape), got=list(value.shape), hint=hint, key=key)
    if floating and not value.is_floating_point():
        fail("{what} should be a floating-point tensor, got dtype {dtype}.",
             "{what} 应该是浮点类型的 tensor，实际 dtype 为 {dtype}。", what=what, dtype=value.dtype, key="wrong-dtype")
    if dtype is not None and value.dtype != dtype:
        fail("{what} should have dtype {want}, got {got}.", "{what} 的 dtype 应为 {want}，实际为 {got}。",
             what=what, want=dtype, got=value.dtype, key="wrong-dtype")
    if requires_grad is not None and tensor_info(value).get("requires_grad", value.requires_grad) != requires_grad:
        if requires_grad:
            fail("{what} should require grad (requires_grad=True), but it does not.",
                 "{what} 应该 requires_grad=True，但实际没有。", what=what, key="no-requires-grad")
        fail("{what} should not require grad: detach it or compute it under torch.no_grad().",
             "{what} 不应该 requires_grad：请 detach，或在 torch.no_grad() 下计算。", what=what, key="requires-grad")
    return value


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# -- values -----------------------------------------------------------------------------

def _recognisable(factor: float, n: int | None) -> str | None:
    """A name for a factor a learner plausibly introduced: 2, 1/2, N, 1/N."""
    named = {2.0: "2", 0.5: "0.5"}
    if n and n > 2:
        named.update({float(n): "N", 1.0 / n: "1/N"})
    for value, name in named.items():
        if abs(factor - value) <= 1e-4 * abs(value):
            return name
    return None


def relation(actual: torch.Tensor, expected: torch.Tensor, n: int | None = None) -> str | None:
    """Guess how a wrong value relates to the right one: "sign", "zero", "transpose", "factor 2".

    A constant factor is claimed only when it means something: a recognisable one (2, 1/2, and N, 1/N
    when the batch size `n` is given), or the same ratio over several entries. For one number any
    wrong value is "off by a factor", so only a recognisable factor is named there.
    """
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
        factor = float(ratios[0])
        name = _recognisable(factor, n)
        if name:
            return f"factor {name}"
        if ratios.numel() > 1:
            return f"factor {factor:.4g}"
    if actual.dim() == 2 and actual.t().shape == expected.shape and torch.allclose(
            actual.double().t(), expected.double(), rtol=1e-4, atol=1e-6 * float(scale)):
        return "transpose"
    return None


def relation_key(rel: str) -> str:
    """The stable key of a relation: "sign", "zero", "transpose", "factor-2", "factor-N", "factor"."""
    if rel.startswith("factor"):
        name = rel.split()[1]
        return f"factor-{name}" if name in ("2", "0.5", "N", "1/N") else "factor"
    return rel


RELATION_TEXT = {
    "sign": Text("has the right size but the opposite sign", "大小对但符号相反"),
    "zero": Text("is all zeros", "全是 0"),
    "transpose": Text("is the transpose of the expected value", "是期望值的转置"),
}


def relation_text(rel: str, explained: bool = False) -> Text:
    """How the value relates to the right one, in words; for a factor, with a generic guess at the cause
    unless the check `explained` it itself."""
    if rel.startswith("factor"):
        f = rel.split()[1]
        if explained or f not in ("2", "0.5", "N", "1/N"):  # a factor no slip explains: the symptom only
            return Text("is off by a constant factor of {f}", "差了一个常数因子 {f}", f=f)
        return Text("is off by a constant factor of {f} (a missing or extra {f}?)",
                    "差了一个常数因子 {f}（是否多了或少了一个 {f}？）", f=f)
    return RELATION_TEXT[rel]


def relation_cause(rel: str, hints: dict | None) -> Text | None:
    """The likely cause a check gave for a relation: by its exact name ("factor 2"), else by its kind."""
    hints = hints or {}
    cause = hints.get(rel) or hints.get(rel.split()[0])
    return Text.of(cause) if cause is not None else None


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


def expect_close(actual, expected: torch.Tensor, what, *, rtol: float = 1e-4, atol: float = 1e-6,
                 hints: dict | None = None, n: int | None = None) -> torch.Tensor:
    """Fail unless `actual` is a tensor of `expected`'s shape with close values (any float dtype).

    `hints` maps a relation ("sign", "factor 2", "factor", "transpose", "zero") to a likely cause to
    show (a Text or an (English, Chinese) pair); `n` is the batch size, so factors N and 1/N are named.
    """
    actual = expect_tensor(actual, what, shape=expected.shape)
    what = names(what)
    mismatch = value_mismatch(actual, expected, rtol, atol)
    if mismatch is None:
        return actual
    idx, got, want, max_abs, n_bad = mismatch
    if not torch.isfinite(actual.double()).all():
        fail("{what} contains NaN or inf (first at index {idx}): look for a division by zero, log of 0 or an overflow.",
             "{what} 含有 NaN 或 inf（第一个在索引 {idx}）：检查除以 0、log(0) 或溢出。",
             what=what, idx=list(idx), key="nan")
    rel = relation(actual, expected, n)
    if rel is None:
        fail("{what} has wrong values: {what}{where} should be {want}, got {got} "
             "({bad} of {total} entries wrong, max abs error {err:.2e}).",
             "{what} 的数值不对：{what}{where} 应为 {want}，实际为 {got}"
             "（{total} 个元素中有 {bad} 个不对，最大绝对误差 {err:.2e}）。",
             what=what, where=f"[{', '.join(map(str, idx))}]" if idx else "", want=_fmt(want), got=_fmt(got),
             bad=n_bad, total=actual.numel(), err=max_abs, key="wrong-values")
    cause = relation_cause(rel, hints)
    fail("{what} {relation}.{cause}", "{what} {relation}。{cause}", what=what, relation=relation_text(rel, bool(cause)),
         cause=Text(" {c}", "{c}", c=cause) if cause else "", key=relation_key(rel))


def matches(actual, expected, *, rtol: float = 1e-4, atol: float = 1e-6, equal_nan: bool = False) -> bool:
    """Whether `actual` is what `expect_close` (a tensor `expected`) or `expect_number` (a number) accepts, with the
    same tolerances, without failing: a tensor of `expected`'s shape, or a Python number or one-element tensor for a
    number, whose values are close in float64. An inf matches the same inf; NaN matches NaN only with `equal_nan`."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor) or actual.shape != expected.shape:
            return False
        a, e = actual.double(), expected.double()
    else:
        if not is_number(actual, (int, float), tensor=True):
            return False
        a, e = torch.tensor(float(actual), dtype=torch.float64), torch.tensor(float(expected), dtype=torch.float64)
    if a.is_complex() or e.is_complex():
        return False
    return bool(torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan).all())


def expect_number(actual, expected: float, what, *, rtol: float = 1e-4, atol: float = 1e-6,
                  exact_type: bool = False) -> float:
    """Fail unless `actual` is close to `expected`: a Python number, or (unless `exact_type`, for a
    statement that names `int` or `float`) a one-element tensor."""
    what = names(what)
    if isinstance(actual, torch.Tensor) and actual.numel() == 1 and not exact_type:
        actual = float(actual.reshape(()))
    if not is_number(actual, (int, float)):
        extra = Text(" Use `.item()` to turn a one-element tensor into a Python number.",
                     "用 `.item()` 把只有一个元素的 tensor 变成 Python 数。") \
            if isinstance(actual, torch.Tensor) and actual.numel() == 1 else ""
        fail("{what} should be a Python number, got {got}.{extra}",
             "{what} 应该是一个 Python 数，实际得到{got}。{extra}",
             what=what, got=describe(actual), extra=extra, key="not-a-number")
    if not abs(actual - expected) <= atol + rtol * abs(expected):
        fail("{what} should be {want}, got {got}.", "{what} 应为 {want}，实际为 {got}。",
             what=what, want=_fmt(expected), got=_fmt(actual), key="wrong-values")
    return float(actual)
