"""Hidden checks of fs01: a numerically stable softmax and log-softmax, written by hand.

The judge draws logits per seed (ordinary ones; rows around +1000 and -1000 that overflow or underflow a naive
exp; rows spread over thousands; masked `-inf` entries; size-1 and empty dimensions; float16 and bfloat16 inputs),
computes the expectations with torch's own `F.softmax` / `F.log_softmax` in float64, and names a classic mistake
only when the learner's value is what that mistake computes (a naive exp, the max of the whole tensor, the log of
the softmax, another dim, a lost keepdim), each computed here in the judge.

The built-ins are forbidden: a probe records the torch functions each function calls (a TorchFunctionMode, which
sees `F.softmax`, `torch.softmax`, `x.softmax`, `torch.special.softmax`, `nn.Softmax`, the log_softmax family and
`logsumexp` alike); a function that calls one earns nothing for its values (the ex05 rule) and the by-hand check
names it.

Kata variants: `variant("dim")` is the default `dim` of both functions: the last dimension (-1) or the first (0);
the default-dim check and its messages follow it.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import (LearnerError, Text, check, expect_close, expect_tensor, explain, fail, probe,
                             recording_calls, variant, verbatim)
from grader.checking import base_name, forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)

FUNCTIONS = ("softmax", "log_softmax")

# -- probes (run in the sandbox) ----------------------------------------------------------------


@probe
def torch_calls(module, x, dim):
    """For softmax(x, dim) and log_softmax(x, dim), the names of the torch functions each called (through a
    TorchFunctionMode: every spelling of a torch function or Tensor method goes through it). An error is the
    value checks' lesson: the names seen until then are kept."""

    found = {}
    for name in ("softmax", "log_softmax"):
        names = set()

        try:
            with recording_calls(names):
                getattr(module, name)(x, dim)
        except Exception:  # a missing or failing function is judged by the value checks
            pass
        found[name] = sorted(names)
    return found


# -- judge-side helpers -------------------------------------------------------------------------

def default_dim() -> int:
    """The default `dim` of both functions in this draw: -1 (the last dimension) or 0 (the first)."""
    return int(variant("dim")["value"])


def builtins_used(submission, rng, fn: str) -> list[str]:
    """The forbidden torch functions `fn` called, probed once per grading."""
    calls = submission.once("calls", lambda: submission.probe(
        torch_calls, torch.randn(3, 5, generator=rng), -1,
        what=Text("`softmax` and `log_softmax`", "`softmax` 和 `log_softmax`")))
    return forbidden_calls(fn, calls.get(fn, []))


def by_hand_only(submission, rng, fn: str) -> None:
    """A value torch's own softmax computed is not earned here (the ex05 rule): fail when `fn` called one."""
    used = builtins_used(submission, rng, fn)
    if used:
        fail("`{fn}` calls torch's own `{name}` ({spellings}): its values are torch's, not yours. Write it with "
             "max, exp, sum and log.",
             "`{fn}` 调用了 torch 自带的 `{name}`（{spellings}）：这些值是 torch 算的，不是你写的。"
             "请用 max、exp、sum 和 log 自己实现。",
             fn=verbatim(fn), name=verbatim(used[0]), spellings=spellings(used[0]), key="builtin-softmax")


def spellings(name: str) -> Text:
    """The ways a learner writes the torch function the probe saw as `name`."""
    ways = {"softmax": "F.softmax, torch.softmax, x.softmax, nn.Softmax",
            "log_softmax": "F.log_softmax, torch.log_softmax, x.log_softmax, nn.LogSoftmax",
            "logsumexp": "torch.logsumexp, x.logsumexp",
            "softmin": "F.softmin, nn.Softmin: the softmax of the negation, so F.softmin(-x) is a softmax",
            "special_softmax": "torch.special.softmax", "special_log_softmax": "torch.special.log_softmax",
            "special_logsumexp": "torch.special.logsumexp", "_softmax": "torch._softmax",
            "_log_softmax": "torch._log_softmax"}
    return verbatim(ways.get(base_name(name), f"torch.{name}"))


def same_values(a: torch.Tensor, b: torch.Tensor, rtol=1e-4, atol=1e-6) -> bool:
    """Equal shapes and close values, where the same NaN and infinities count as equal."""
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol, equal_nan=True))


def like(value: torch.Tensor, candidate: torch.Tensor) -> bool:
    """Whether `value` breaks where `candidate` (a known wrong formula) breaks: NaN and infinities (with their sign)
    at the same entries, close values elsewhere but for log-probabilities below -80, where a float32 denormal's log
    depends on how the formula rounds."""
    v, c = value.double(), candidate.double()
    if v.shape != c.shape or not torch.equal(torch.isnan(v), torch.isnan(c)) or \
            not torch.equal(torch.isinf(v), torch.isinf(c)) or not torch.equal(v[torch.isinf(v)], c[torch.isinf(c)]):
        return False
    finite = torch.isfinite(v)
    return bool((torch.isclose(v, c, rtol=1e-3, atol=1e-5) | (c < -80))[finite].all())


def call(submission, fn: str, x: torch.Tensor, dim=None):
    """The learner's fn(x, dim) (fn(x) when dim is None), the two classic slips of the max explained; returns
    (what, value)."""
    args = (x,) if dim is None else (x, dim)
    what = f"{fn}(x{list(x.shape)}" + ("" if dim is None else f", dim={dim}") + ")"
    with explain({"return_types": MAX_PAIR}, key="max-returns-pair"):
        try:
            return what, getattr(submission, fn)(*args)
        except LearnerError as exc:
            if "must match the size" in exc.message and reduced_dim_lost(submission, fn, x, dim):
                fail("{cause} ({error})", "{cause}（{error}）", cause=KEEPDIM, error=exc.text, key="max-without-keepdim")
            raise


def reduced_dim_lost(submission, fn: str, x: torch.Tensor, dim) -> bool:
    """Whether a size mismatch is the max's lost dimension: the same call on x without size-1 dimensions (each made 2)
    mismatches too. A mismatch only size-1 dimensions bring (x squeezed first) is not keepdim's."""
    if 1 not in x.shape:
        return True
    wide = torch.randn([2 if n == 1 else n for n in x.shape], dtype=x.dtype)
    try:
        getattr(submission, fn)(*((wide,) if dim is None else (wide, dim)))
    except LearnerError as exc:
        return "must match the size" in exc.message
    return False


KEEPDIM = Text("x - max does not line up with x: the max (or the sum) lost the reduced dimension. Keep it with "
               "keepdim=True.",
               "x - max 与 x 对不齐：最大值（或求和）丢掉了被归约的维度。请用 keepdim=True 保留它。")
MAX_PAIR = Text("x.max(dim) returns a pair (values, indices): take .values, or use x.amax(dim).",
                "x.max(dim) 返回 (values, indices) 二元组：取 .values，或使用 x.amax(dim)。")


def naive(x, dim, log=False) -> list:
    """The textbook formulas in x's dtype, no max subtracted (what overflows): exp(x) / sum(exp(x)); for the log,
    x - log(sum(exp(x))) and the log of that quotient."""
    e = torch.exp(x)
    p = e / e.sum(dim, keepdim=True)
    return [x - torch.log(e.sum(dim, keepdim=True)), torch.log(p)] if log else [p]


def global_max(x, dim, log=False):
    """The max of the whole tensor subtracted instead of the max along dim, in x's dtype."""
    shifted = x - x.amax()
    if log:
        return shifted - torch.log(torch.exp(shifted).sum(dim, keepdim=True))
    e = torch.exp(shifted)
    return e / e.sum(dim, keepdim=True)


def no_keepdim(x, dim, log=False):
    """The max and the sum taken without keepdim, broadcast as they happen to (None where they do not)."""
    try:
        shifted = x.double() - x.double().amax(dim)
        if log:
            return shifted - torch.log(torch.exp(shifted).sum(dim))
        e = torch.exp(shifted)
        return e / e.sum(dim)
    except RuntimeError:
        return None


def reference(x, dim, log=False):
    return (F.log_softmax if log else F.softmax)(x.double(), dim)


def expect_result(value, x, what):
    """A floating tensor of x's shape, the lost or kept dimensions named."""
    value = expect_tensor(value, what, floating=True)
    if value.shape == x.shape:
        return value
    got, want = list(value.shape), list(x.shape)
    reduced = [want[:d] + want[d + 1:] for d in range(len(want)) if want[d] > 1]  # a dimension reduced away
    if got in reduced:
        fail("{what} should have the shape of x, {want}, got {got}: softmax normalises along dim, it does not "
             "reduce it (keep it with keepdim=True in the max and the sum).",
             "{what} 的形状应与 x 相同，即 {want}，实际为 {got}：softmax 沿 dim 归一化，并不会把这一维归约掉"
             "（max 和 sum 都用 keepdim=True 保留它）。", what=what, want=want, got=got, key="wrong-shape")
    if got == [n for n in want if n != 1]:
        fail("{what} should have the shape of x, {want}, got {got}: the size-1 dimensions of x are gone (a squeeze()). "
             "Keep x's shape: the result has one value per entry of x.",
             "{what} 的形状应与 x 相同，即 {want}，实际为 {got}：x 中大小为 1 的维度不见了（squeeze()）。"
             "请保持 x 的形状：x 的每个元素对应结果中的一个值。", what=what, want=want, got=got,
             key="squeeze-without-dim")
    expect_tensor(value, what, shape=want)
    return value


def diagnose(value, x, dim, what, log: bool) -> None:
    """Name the classic mistake `value` is, on any input; fall back to the first wrong entry."""
    expected = reference(x, dim, log)
    if same_values(value, expected):
        return
    fn = "log_softmax" if log else "softmax"
    bad = ~torch.isfinite(value.double()) & torch.isfinite(expected)
    if bad.any():
        where = [int(i) for i in bad.nonzero()[0]]
        values = dict(what=what, where=where, got=float(value.double()[tuple(where)]),
                      want=float(expected[tuple(where)]), fn=verbatim(fn))
        if any(like(value, c) for c in naive(x, dim, log)):
            then = Text("log(sum(exp(x))) is inf or -inf", "log(sum(exp(x))) 就是 inf 或 -inf") if log else \
                Text("inf / inf or 0 / 0 is NaN", "inf / inf 或 0 / 0 就得到 NaN")
            fail("{what} is {got} at {where}, expected {want:.6g}: exp(x) overflowed or underflowed (no max "
                 "subtracted). In float32 exp(x) is inf once x > 88 and 0 once x < -104, so {then}. "
                 "Subtract the max along dim before exp: softmax(x) = softmax(x - max).",
                 "{what} 在 {where} 处为 {got}，应为 {want:.6g}：exp(x) 上溢或下溢了（没有减去最大值）。"
                 "在 float32 中 x > 88 时 exp(x) 为 inf，x < -104 时为 0，于是 {then}。"
                 "请在 exp 之前减去沿 dim 的最大值：softmax(x) = softmax(x - max)。", **values, then=then,
                 key="no-max-subtracted")
        if like(value, global_max(x, dim, log)):
            fail("{what} is {got} at {where}, expected {want:.6g}: the max of the whole tensor was subtracted, so a "
                 "row far below it still underflows (exp is 0 for every entry, and 0 / 0 is NaN). Subtract each "
                 "row's own max: the max along dim, with keepdim=True.",
                 "{what} 在 {where} 处为 {got}，应为 {want:.6g}：减去的是整个 tensor 的最大值，远低于它的行仍然下溢"
                 "（每个元素的 exp 都是 0，0 / 0 就是 NaN）。请减去每一行自己的最大值：沿 dim 的最大值，并用 "
                 "keepdim=True。", **values, key="global-max")
        if log and like(value, torch.log(F.softmax(x, dim))):
            fail("{what} is {got} at {where}, expected {want:.6g}: that is the log of the softmax. A probability "
                 "that underflows to 0 in float32 (an entry more than about 104 below its row's max) has log -inf, "
                 "while log_softmax there is a finite number. Compute it directly: (x - max) - log(sum(exp(x - "
                 "max))).",
                 "{what} 在 {where} 处为 {got}，应为 {want:.6g}：这是对 softmax 取的 log。在 float32 中下溢成 0 的概率"
                 "（比本行最大值小约 104 以上的元素）取 log 得 -inf，而 log_softmax 在那里是一个有限的数。请直接计算："
                 "(x - max) - log(sum(exp(x - max)))。", **values, key="log-of-softmax")
        fail("{what} is {got} at {where}, expected {want:.6g}: an overflow or underflow. exp(x) is inf in float32 once "
             "x > 88 and 0 once x < -104. Subtract the max along dim (keepdim=True) before exp.",
             "{what} 在 {where} 处为 {got}，应为 {want:.6g}：上溢或下溢。在 float32 中 x > 88 时 exp(x) 为 inf，"
             "x < -104 时为 0。请在 exp 之前减去沿 dim 的最大值（keepdim=True）。", **values, key="overflow")
    for other in range(x.dim()):
        if other != dim % x.dim() and x.shape[other] > 1 and same_values(value, reference(x, other, log)):
            fail("{what} normalises along dim {other} instead of dim {dim}: use the dim argument in the max and the "
                 "sum (and in no other place a fixed dimension).",
                 "{what} 沿 dim {other} 归一化，而不是 dim {dim}：max 和 sum 都要用参数 dim（不要在任何地方写死维度）。",
                 what=what, other=other - x.dim() if dim < 0 else other, dim=dim, key="wrong-dim")
    if x.numel() > 1 and same_values(value, reference(x.reshape(-1), 0, log).reshape(x.shape)):
        fail("{what} normalises over the whole tensor (the sum of every entry), not along dim {dim}: each slice along "
             "dim must sum to 1 on its own. Use sum(dim=dim, keepdim=True).",
             "{what} 对整个 tensor 归一化（所有元素求和），而不是沿 dim {dim}：沿 dim 的每一组都要各自和为 1。"
             "请用 sum(dim=dim, keepdim=True)。", what=what, dim=dim, key="global-sum")
    broadcast = no_keepdim(x, dim, log)
    if broadcast is not None and same_values(value, broadcast):
        fail("{what} has wrong values: the max and the sum lost the reduced dimension and broadcast against the wrong "
             "one (a square input raises no error). Keep it with keepdim=True.",
             "{what} 的数值不对：max 和 sum 丢掉了被归约的维度，于是沿错误的维度广播（方阵输入不会报错）。请用 "
             "keepdim=True 保留它。", what=what, key="max-without-keepdim")
    if log:
        m = x.double().amax(dim, keepdim=True)
        if same_values(value, expected + m):
            fail("{what} is off by exactly the max along dim: (x - max) - log(sum(exp(x - max))) subtracts the max "
                 "once, and x - log(sum(exp(x - max))) forgets it.",
                 "{what} 正好差了沿 dim 的最大值：(x - max) - log(sum(exp(x - max))) 会减去一次最大值，"
                 "而 x - log(sum(exp(x - max))) 忘了减。", what=what, key="max-not-subtracted")
        if same_values(value, reference(x, dim)):
            fail("{what} returned the probabilities: log_softmax is their log, (x - max) - log(sum(exp(x - max))).",
                 "{what} 返回的是概率：log_softmax 是概率的 log，即 (x - max) - log(sum(exp(x - max)))。",
                 what=what, key="probabilities-for-log")
    else:
        sums = value.double().sum(dim)
        if sums.numel() and not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            if same_values(value, torch.exp(x.double() - x.double().amax(dim, keepdim=True))):
                fail("{what} is exp(x - max) without the division: softmax divides by the sum along dim, so that "
                     "each slice sums to 1.",
                     "{what} 是 exp(x - max)，但没有做除法：softmax 要除以沿 dim 的和，使每一组和为 1。",
                     what=what, key="not-normalised")
    expect_close(value, expected, what, rtol=1e-4, atol=1e-6)


def ordinary_cases(rng):
    """(x, dim): rows and columns of ordinary logits, a 3-D tensor, one row, a size-1 dim, an empty batch and a
    square matrix (where a lost keepdim broadcasts without an error)."""
    n = int(torch.randint(2, 5, (), generator=rng))
    c = n + int(torch.randint(2, 5, (), generator=rng))  # c != n: a shape slip fails loudly
    return [(3 * torch.randn(n, c, generator=rng), -1), (3 * torch.randn(c, n, generator=rng), 0),
            (3 * torch.randn(2, c, 3, generator=rng), 1), (3 * torch.randn(n, c, generator=rng), 1),
            (3 * torch.randn(1, c, generator=rng), -1), (3 * torch.randn(n, 1, generator=rng), -1),
            (torch.empty(0, c), -1), (3 * torch.randn(4, 4, generator=rng), -1)]


def extreme_rows(rng, b=5):
    """Rows [b, k] that break the naive formula: one around +1000, one around -1000 (all of it), one spread over
    thousands, one with masked -inf entries, one tame; in a random order."""
    k = b + int(torch.randint(2, 5, (), generator=rng))
    x = 2 * torch.randn(5, k, generator=rng)
    x[0] = 1000 + 20 * torch.randn(k, generator=rng)
    x[1] = -1000 + torch.randn(k, generator=rng)
    x[2] = 400 * torch.randn(k, generator=rng)
    x[2, :2] = torch.tensor([700.0, -700.0])  # exp overflows and underflows in that row, every draw
    x[2] = x[2, torch.randperm(k, generator=rng)]
    x[3, torch.randperm(k, generator=rng)[:2]] = -math.inf  # masked scores: probability 0, log-probability -inf
    return x[torch.randperm(5, generator=rng)][:b]


def extreme_cases(rng):
    """(x, dim): extreme rows along the last dim, the same along dim 0, and a 3-D tensor with a channel near 800."""
    x3 = torch.randn(2, 6, 3, generator=rng)
    x3[:, :, 1] += 800
    x3[1, :, 2] -= 900
    return [(extreme_rows(rng), -1), (extreme_rows(rng).t().contiguous(), 0), (x3, 1)]


def judge(submission, rng, fn, cases) -> None:
    by_hand_only(submission, rng, fn)
    for x, dim in cases:
        what, value = call(submission, fn, x, dim)
        diagnose(expect_result(value, x, what), x, dim, what, log=fn == "log_softmax")


# -- softmax ------------------------------------------------------------------------------------

@check("softmax matches F.softmax on ordinary logits, along any dim", points=2,
       zh="softmax 在普通 logits 上、沿任意 dim 都与 F.softmax 一致")
def test_softmax_values(submission, rng):
    by_hand_only(submission, rng, "softmax")
    for x, dim in ordinary_cases(rng):
        what, value = call(submission, "softmax", x, dim)
        diagnose(expect_result(value, x, what), x, dim, what, log=False)
    x = 3 * torch.randn(3, 6, generator=rng)
    _, (after, _) = submission.call_with_args("softmax", x, -1)
    if isinstance(after, torch.Tensor) and not torch.equal(after, x):
        fail("softmax(x, dim) changed its input x in place (an in-place sub_ or exp_ on x): the caller's logits are "
             "gone. Compute into new tensors.",
             "softmax(x, dim) 原地修改了输入 x（对 x 调用了原地的 sub_ 或 exp_）：调用者的 logits 没了。"
             "请把结果算到新的 tensor 里。", key="input-modified")


@check("softmax is finite and right on logits near +-1000, spread rows and masked -inf entries", points=2,
       zh="softmax 在 +-1000 附近的 logits、跨度很大的行和被 mask 成 -inf 的元素上有限且正确",
       depends="softmax_values")
def test_softmax_stable(submission, rng):
    judge(submission, rng, "softmax", extreme_cases(rng))


@check("softmax(x) without dim normalises along the statement's default dim", points=1,
       zh="不传 dim 时，softmax(x) 沿题目规定的默认 dim 归一化", depends="softmax_values")
def test_default_dim(submission, rng):
    n = int(torch.randint(2, 5, (), generator=rng))
    x = 3 * torch.randn(n, n + 3, generator=rng)
    want = default_dim()
    for fn in FUNCTIONS:
        what, value = call(submission, fn, x)
        value = expect_result(value, x, what)
        log = fn == "log_softmax"
        if same_values(value, reference(x, want, log)):
            continue
        other = 0 if want == -1 else -1
        if same_values(value, reference(x, other, log)):
            fail("{what} normalises along dim {got}: the default of dim is {want} here ({label}). Write it in the "
                 "signature, `dim: int = {want}`.",
                 "{what} 沿 dim {got} 归一化：本题 dim 的默认值是 {want}（{label}）。请写在函数签名里：`dim: int = {want}`。",
                 what=what, got=other, want=want,
                 label=Text(variant("dim")["label"], variant("dim")["label_zh"]), key="default-dim")
        if log:
            by_hand_only(submission, rng, fn)
        diagnose(value, x, want, what, log=log)


# -- log_softmax --------------------------------------------------------------------------------

@check("log_softmax matches F.log_softmax on ordinary logits, along any dim", points=1,
       zh="log_softmax 在普通 logits 上、沿任意 dim 都与 F.log_softmax 一致")
def test_log_softmax_values(submission, rng):
    judge(submission, rng, "log_softmax", ordinary_cases(rng))


@check("log_softmax is finite and right where probabilities underflow, near +-1000 and on masked entries", points=2,
       zh="log_softmax 在概率下溢的位置、+-1000 附近和被 mask 的元素上有限且正确", depends="log_softmax_values")
def test_log_softmax_stable(submission, rng):
    judge(submission, rng, "log_softmax", extreme_cases(rng))


# -- half precision -----------------------------------------------------------------------------

HALF = {torch.float16: (1e-2, 2e-3), torch.bfloat16: (4e-2, 1e-2)}  # (rtol, atol) a half-precision result meets


def half_cases(rng):
    """float16 logits with a row near +40 (exp overflows float16 past 11) and a masked entry; bfloat16 logits
    with a row near +-150."""
    h = 3 * torch.randn(4, 7, generator=rng)
    h[int(torch.randint(0, 4, (), generator=rng))] += 40
    h[0, int(torch.randint(0, 7, (), generator=rng))] = -math.inf
    b = 3 * torch.randn(3, 8, generator=rng)
    b[int(torch.randint(0, 3, (), generator=rng))] += 150 * (1 if bool(torch.rand((), generator=rng) < 0.5) else -1)
    return [(h.half(), -1), (b.bfloat16(), -1), (h.half().t().contiguous(), 0)]


@check("softmax and log_softmax keep float16 and bfloat16 inputs in their dtype, with right values", points=1,
       zh="softmax 和 log_softmax 对 float16 和 bfloat16 输入保持其 dtype，数值正确",
       depends=("softmax_stable", "log_softmax_stable"))
def test_half(submission, rng):
    for fn in FUNCTIONS:
        by_hand_only(submission, rng, fn)
        for x, dim in half_cases(rng):
            what, value = call(submission, fn, x, dim)
            value = expect_result(value, x, what)
            if value.dtype != x.dtype:
                fail("{what} returned {got} for a {want} input: keep the input's dtype (compute in float32 if you "
                     "like, then cast back with .to(x.dtype)).",
                     "{what} 对 {want} 的输入返回了 {got}：请保持输入的 dtype（可以用 float32 计算，再用 "
                     ".to(x.dtype) 转换回来）。", what=what, got=str(value.dtype).removeprefix("torch."),
                     want=str(x.dtype).removeprefix("torch."), key="wrong-dtype")
            rtol, atol = HALF[x.dtype]
            expected = reference(x, dim, fn == "log_softmax")
            if not torch.isfinite(value.double()).eq(torch.isfinite(expected)).all():
                fail("{what} has NaN or inf where F.{fn} is finite, on {dtype} logits (float16 rows near 40, bfloat16 "
                     "rows near +-150): exp overflows float16 much sooner than float32, already past x = 11. Subtract "
                     "the max along dim first.",
                     "在 {dtype} 的 logits 上（float16 的行在 40 附近，bfloat16 的行在 +-150 附近），{what} 在 F.{fn} "
                     "有限的位置出现了 NaN 或 inf：float16 下 exp 比 float32 早得多就会溢出，x 过了 11 就溢出。"
                     "请先减去沿 dim 的最大值。",
                     what=what, fn=verbatim(fn), dtype=str(x.dtype).removeprefix("torch."), key="overflow")
            expect_close(value.double(), expected, what, rtol=rtol, atol=atol)


# -- by hand ------------------------------------------------------------------------------------

@check("softmax and log_softmax are written by hand (no built-in softmax, log_softmax or logsumexp)", points=1,
       zh="softmax 和 log_softmax 是自己写的（不调用自带的 softmax、log_softmax 或 logsumexp）",
       depends=("softmax_values", "log_softmax_values"))
def test_by_hand(submission, rng):
    for fn in FUNCTIONS:
        by_hand_only(submission, rng, fn)
