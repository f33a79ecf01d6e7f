"""Hidden checks of ex03: broadcasting on purpose ([N] vs [N, 1], keepdim, [N, 1, D] - [1, M, D])
and vectorizing a per-row loop (observed by counting torch calls and executed lines in the sandbox).

Inputs include size-1 axes (N = 1) where a squeeze() without a dim would drop one, and square
inputs where a wrongly aligned broadcast raises no error.

Kata variants: `variant("statistic")` is what center_rows subtracts from each row, its mean or its maximum
(x.max(dim=1) returns values and indices: a trap of its own); the expected values and the diagnoses follow it."""

import sys

import torch
from torch.overrides import TorchFunctionMode

from grader.checking import Text, check, expect_close, expect_tensor, explain, fail, matches, probe, variant, verbatim

# -- sandbox side ----------------------------------------------------------------------------


@probe
def run(module, name, *args):
    """module.<name>(*args), so that the call is named with the statement's argument names."""
    return getattr(module, name)(*args)


class _CallCounter(TorchFunctionMode):
    """Counts every torch function and Tensor method called while it is active."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


@probe
def count_work(module, name, *arg_sets):
    """Run module.<name> on each argument set; per run, the value, the number of torch calls made and
    the number of lines run in the learner's own file. A loop over rows makes both grow with N."""
    fn = getattr(module, name)
    runs = []
    for args in arg_sets:
        lines = [0]

        def local(frame, event, arg):
            if event == "line":
                lines[0] += 1
            return local

        def tracer(frame, event, arg):
            return local if frame.f_globals is vars(module) else None  # a .py and notebook cells alike

        counter = _CallCounter()
        previous = sys.gettrace()
        sys.settrace(tracer)
        try:
            with counter:
                value = fn(*args)
        finally:
            sys.settrace(previous)
        runs.append({"value": value, "torch_calls": counter.calls, "lines": lines[0]})
    return runs


# -- judge side ------------------------------------------------------------------------------

def call(submission, name, named: dict, causes: dict | None = None, key: str | None = None):
    """Call the learner's `name` with the named tensors; an error whose text holds a key of `causes` fails
    with that cause (a broadcasting explanation). Returns (what, value)."""
    what = f"`{name}({', '.join(f'{k}{list(v.shape)}' for k, v in named.items())})`"
    with explain(causes or {}, key=key):
        return what, submission.probe(run, name, *named.values(), what=what)


# -- mse: [N] against [N, 1] -----------------------------------------------------------------

def expect_mse(value, yp: torch.Tensor, y: torch.Tensor, what: str) -> None:
    n = yp.numel()
    value = expect_tensor(value, what, floating=True)
    if value.numel() != 1:
        if list(value.shape) == [n, n] and yp.shape != y.shape:
            fail("{what} returned shape [{n}, {n}] instead of one number: a [{n}] and a [{n}, 1] broadcast to "
                 "[{n}, {n}] (every prediction against every target); and the mean is missing.",
                 "{what} 返回了形状 [{n}, {n}] 而不是一个数：[{n}] 和 [{n}, 1] 会被广播成 [{n}, {n}]"
                 "（每个预测都和每个目标相减）；而且少了求平均。", what=what, n=n, key="broadcast-n-by-n")
        fail("{what} should return one number (a scalar tensor), got shape {shape}: did you forget the .mean()?",
             "{what} 应返回一个数（标量 tensor），实际形状为 {shape}：是不是忘了 .mean()？",
             what=what, shape=list(value.shape), key="not-reduced")
    if value.dim() != 0:
        fail("{what} should return a scalar tensor (shape []), got shape {shape}: a mean over one dim of a column "
             "(or keepdim=True) keeps a dimension; .mean() over every element gives the scalar.",
             "{what} 应返回标量 tensor（形状 []），实际形状为 {shape}：对一列沿某个 dim 做 mean（或用了 keepdim=True）"
             "会留下一个维度；对所有元素 .mean() 才得到标量。", what=what, shape=list(value.shape), key="not-scalar")
    got = value.reshape(()).double()
    expected = ((yp.double().reshape(-1) - y.double().reshape(-1)) ** 2).mean()
    if matches(got, expected):
        return
    blown = ((yp.double() - y.double()) ** 2).mean()  # what the unreshaped subtraction gives
    if yp.shape != y.shape and matches(got, blown):
        fail("{what} should be {want:.4g}, got {got:.4g}: that is the mean over a [{n}, {n}] matrix. "
             "y_pred{yp} - y{y} silently broadcasts to [{n}, {n}] (every prediction against every target): give "
             "both the same shape before subtracting.",
             "{what} 应为 {want:.4g}，实际为 {got:.4g}：这是对一个 [{n}, {n}] 矩阵求的平均。y_pred{yp} - y{y} 会悄悄"
             "广播成 [{n}, {n}]（每个预测都和每个目标相减），不会报错：相减之前先让两者形状相同。",
             what=what, want=float(expected), got=float(got), n=n, yp=list(yp.shape), y=list(y.shape),
             key="broadcast-n-by-n")
    if n > 2 and matches(got, n * expected):
        fail("{what} should be {want:.4g}, got {got:.4g} ({n} times too big): a sum where the mean belongs?",
             "{what} 应为 {want:.4g}，实际为 {got:.4g}（大了 {n} 倍）：是不是把 mean 写成了 sum？",
             what=what, want=float(expected), got=float(got), n=n, key="sum-not-mean")
    expect_close(got, expected, what, n=n)


def mse_cases(rng, shapes):
    for n in (7, 3, 1):  # N = 1 too: a squeeze() leaves no axis at all
        for sp, sy in shapes:
            base_p, base_y = torch.randn(n, generator=rng), torch.randn(n, generator=rng)
            yield base_p.reshape(sp(n)), base_y.reshape(sy(n))


FLAT, COLUMN = (lambda n: [n]), (lambda n: [n, 1])


@check("mse of two tensors of the same shape", points=1, zh="mse：两个形状相同的 tensor")
def test_mse_same_shapes(submission, rng):
    for yp, y in mse_cases(rng, [(FLAT, FLAT), (COLUMN, COLUMN)]):
        what, value = call(submission, "mse", {"y_pred": yp, "y": y})
        expect_mse(value, yp, y, what)


@check("mse pairs [N] with [N, 1] sample by sample", points=2, zh="mse：[N] 与 [N, 1] 按样本一一配对",
       depends="mse_same_shapes")
def test_mse_mixed_shapes(submission, rng):
    for yp, y in mse_cases(rng, [(FLAT, COLUMN), (COLUMN, FLAT)]):
        what, value = call(submission, "mse", {"y_pred": yp, "y": y})
        expect_mse(value, yp, y, what)


# -- center_rows: keepdim --------------------------------------------------------------------

def statistic(x: torch.Tensor, **dims) -> torch.Tensor:
    """This draw's statistic of x (the row mean or the row maximum) over `dims` (all of x without)."""
    return x.amax(**dims) if variant("statistic")["name"] == "max" else x.mean(**dims)


def words() -> dict:
    """The statistic in the messages: its name, plural, and the reduction over all of x."""
    drawn = variant("statistic")
    plural = {"mean": ("means", "均值"), "max": ("maxima", "最大值")}[drawn["name"]]
    return {"stat": Text(drawn["word"], drawn["zh"]), "stats": Text(*plural), "whole": verbatim(drawn["whole"])}


def row_means_cause(x) -> dict:
    n, d = x.shape
    return {"must match the size": Text(
        "The {n} row {stats} form a tensor of shape [{n}], and broadcasting lines a [{n}] up with the LAST axis of x "
        "(size {d}), not with its rows. Keep the reduced axis (keepdim=True) so the {stats} form a column of shape "
        "[{n}, 1].",
        "{n} 个行{stats}组成形状为 [{n}] 的 tensor，而广播把 [{n}] 对齐到 x 的最后一维（大小 {d}），而不是对齐到行。"
        "保留被归约的维度（keepdim=True），让{stats}成为形状 [{n}, 1] 的一列。", n=n, d=d, stats=words()["stats"])}


MAX_PAIR = {"return_types.max": (
    "x.max(dim=1) returns a pair (values, indices), not a tensor: take its .values, or reduce with "
    "x.amax(dim=1, keepdim=True), which returns the values only.",
    "x.max(dim=1) 返回的是一对 (values, indices)，不是 tensor：取它的 .values，或者用只返回数值的 "
    "x.amax(dim=1, keepdim=True) 来归约。")}


def call_center(submission, x):
    with explain(MAX_PAIR, key="max-pair"):
        return call(submission, "center_rows", {"x": x}, row_means_cause(x), key="keepdim-missing")


def is_slip(value, slip) -> bool:
    """Whether `value` is what the wrong formula `slip()` gives; a slip that cannot broadcast on this x gives nothing
    (the judge's own error never reaches a message)."""
    try:
        wrong = slip()
    except RuntimeError:
        return False
    return matches(value, wrong)


def expect_centered(value, x, what):
    expected = x.double() - statistic(x.double(), dim=1, keepdim=True)
    value = expect_tensor(value, what, shape=x.shape, floating=True)
    if matches(value, expected):
        return
    if is_slip(value, lambda: x.double() - statistic(x.double(), dim=0)):
        fail("{what} subtracted each column's {stat} (over dim=0) from x; a row's {stat} is taken over the "
             "columns of that row (dim=1).",
             "{what} 减去的是每一列的{stat}（在 dim=0 上归约）；一行的{stat}是在该行的各列上取的（dim=1）。",
             what=what, key="column-means", **words())
    if is_slip(value, lambda: x.double() - statistic(x.double())):
        fail("{what} subtracted the {stat} of all of x, one number, from every entry: {whole} reduces every entry. "
             "Each row needs its own {stat}, over dim=1, kept as a column (keepdim=True).",
             "{what} 从每个元素中减去的是整个 x 的{stat}（一个数）：{whole} 会对所有元素归约。"
             "每一行需要自己的{stat}：在 dim=1 上归约，并保留为一列（keepdim=True）。", what=what, key="global-mean",
             **words())
    if is_slip(value, lambda: x.double() - statistic(x.double(), dim=1)):
        fail("{what} has wrong values, and no error was raised: on a square x the row {stats} of shape [{n}] "
             "broadcast along the LAST axis, so column j lost row j's {stat}. Keep the reduced axis (keepdim=True) "
             "so the {stats} form a column [{n}, 1].",
             "{what} 的数值不对，而且没有报错：x 是方阵时，形状为 [{n}] 的行{stats}沿着最后一维广播，"
             "于是第 j 列减去的是第 j 行的{stat}。保留被归约的维度（keepdim=True），让{stats}成为 [{n}, 1] 的一列。",
             what=what, n=x.shape[0], key="keepdim-missing", **words())
    expect_close(value, expected, what, atol=1e-5)


@check("center_rows subtracts each row's own statistic", points=1, zh="center_rows 每行减去该行自己的统计量")
def test_center_rows(submission, rng):
    for shape in ((3, 6), (7, 2)):
        x = torch.randn(*shape, generator=rng) + 3 * torch.randn(shape[0], 1, generator=rng)
        what, value = call_center(submission, x)
        expect_centered(value, x, what)


@check("center_rows is right on a square matrix too", points=1, zh="center_rows 在方阵上也正确",
       depends="center_rows")
def test_center_rows_square(submission, rng):
    x = torch.randn(5, 5, generator=rng) + 3 * torch.randn(5, 1, generator=rng)
    what, value = call_center(submission, x)
    expect_centered(value, x, what)


# -- pairwise_sq_dists: broadcasting to a bigger shape on purpose ----------------------------

def pairs_cause(a, b) -> dict:
    n, m, d = a.shape[0], b.shape[0], a.shape[1]
    return {"must match the size": Text(
        "a [{n}, {d}] and b [{m}, {d}] cannot broadcast against each other ({n} vs {m}). Give each one a size-1 "
        "axis, in different places, so that together they broadcast to [{n}, {m}, {d}].",
        "a [{n}, {d}] 和 b [{m}, {d}] 无法相互广播（{n} 对 {m}）。给两者各加一个大小为 1 的维度（位置不同），"
        "让它们一起广播成 [{n}, {m}, {d}]。", n=n, m=m, d=d)}


def call_pairs(submission, a, b):
    return call(submission, "pairwise_sq_dists", {"a": a, "b": b}, pairs_cause(a, b), key="no-new-axes")


def expect_dists_shape(value, what, n, m, d):
    value = expect_tensor(value, what, floating=True)
    if list(value.shape) == [m, n] and n != m:
        fail("{what} has shape [{m}, {n}], the transpose of [{n}, {m}]: row i of the result belongs to a[i], "
             "column j to b[j].",
             "{what} 的形状是 [{m}, {n}]，是 [{n}, {m}] 的转置：结果的第 i 行对应 a[i]，第 j 列对应 b[j]。",
             what=what, n=n, m=m, key="transpose")
    if list(value.shape) == [n, m, d]:
        fail("{what} has shape [{n}, {m}, {d}]: the squared differences still have to be summed over the last "
             "axis (the D features).", "{what} 的形状是 [{n}, {m}, {d}]：还需要把差的平方在最后一维（D 个特征）上求和。",
             what=what, n=n, m=m, d=d, key="sum-missing")
    if n == m and list(value.shape) == [n]:
        fail("{what} has shape [{n}] instead of [{n}, {m}]: that pairs a[i] only with b[i]. Every row of a must "
             "meet every row of b: give a and b size-1 axes so they broadcast to [N, M, D].",
             "{what} 的形状是 [{n}] 而不是 [{n}, {m}]：这只把 a[i] 与 b[i] 配对。a 的每一行都要和 b 的每一行"
             "比较：给 a 和 b 加上大小为 1 的维度，让它们广播成 [N, M, D]。", what=what, n=n, m=m, key="no-new-axes")
    return expect_tensor(value, what, shape=[n, m])


@check("pairwise_sq_dists returns an [N, M] matrix", points=1, zh="pairwise_sq_dists 返回 [N, M] 矩阵")
def test_pairwise_shape(submission, rng):
    a, b = torch.randn(4, 3, generator=rng), torch.randn(6, 3, generator=rng)
    what, value = call_pairs(submission, a, b)
    expect_dists_shape(value, what, 4, 6, 3)


@check("pairwise_sq_dists values", points=1, zh="pairwise_sq_dists 的数值", depends="pairwise_shape")
def test_pairwise_values(submission, rng):
    for n, m, d in ((5, 3, 4), (4, 4, 2), (3, 5, 1), (1, 4, 3)):  # N = M, D = 1 and N = 1 too
        a, b = torch.randn(n, d, generator=rng), torch.randn(m, d, generator=rng)
        what, value = call_pairs(submission, a, b)
        expected = ((a.double()[:, None, :] - b.double()[None, :, :]) ** 2).sum(dim=-1)
        value = expect_dists_shape(value, what, n, m, d)
        if matches(value, expected.sqrt()):
            fail("{what} holds distances, not squared distances: leave out the square root.",
                 "{what} 里是距离而不是距离的平方：去掉开方。", what=what, key="not-squared")
        expect_close(value, expected, what, rtol=1e-4, atol=1e-4, hints={
            "transpose": ("Row i of the result belongs to a[i] and column j to b[j].",
                          "结果的第 i 行对应 a[i]，第 j 列对应 b[j]。")})


# -- rowwise_dot: vectorize a per-row loop ---------------------------------------------------

def expect_rowwise(value, a, b, what):
    n = a.shape[0]
    value = expect_tensor(value, what, floating=True)
    if list(value.shape) == [n, n] and n > 1:
        fail("{what} has shape [{n}, {n}]: that is every row of a against every row of b (as a @ b.T computes). "
             "Only matching rows are wanted: out[i] = dot(a[i], b[i]), shape [{n}].",
             "{what} 的形状是 [{n}, {n}]：这是 a 的每一行与 b 的每一行都做了点积（就像 a @ b.T）。"
             "只需要对应行：out[i] = dot(a[i], b[i])，形状 [{n}]。", what=what, n=n, key="all-pairs")
    if list(value.shape) == [n, 1] and n > 1:
        fail("{what} has shape [{n}, 1], a column; the statement asks for a flat [{n}] (was keepdim=True kept?).",
             "{what} 的形状是 [{n}, 1]（一列）；题目要求扁平的 [{n}]（是不是用了 keepdim=True？）。",
             what=what, n=n, key="keepdim-kept")
    expect_close(value, (a.double() * b.double()).sum(dim=1), what, atol=1e-5)


@check("rowwise_dot gives one dot product per row", points=1, zh="rowwise_dot 每行给出一个点积")
def test_rowwise_dot(submission, rng):
    for n, d in ((6, 4), (1, 3)):  # one row: a squeeze() would leave a 0-d tensor
        a, b = torch.randn(n, d, generator=rng), torch.randn(n, d, generator=rng)
        what, value = call(submission, "rowwise_dot", {"a": a, "b": b})
        expect_rowwise(value, a, b, what)


def holds_row_dots(value, a, b) -> bool:
    """Whether `value` holds the N row dot products, whatever its shape ([N], [N, 1], or the diagonal of an
    [N, N] all-pairs matrix): the shape is the other check's lesson."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return False
    n = a.shape[0]
    expected = (a.double() * b.double()).sum(dim=1)
    if list(value.shape) == [n, n]:
        value = value.diagonal()
    return value.numel() == n and matches(value.reshape(-1), expected)


LOOPS = {  # what grows when a Python loop runs over it: the arguments' sizes (N rows, D features) per run
    "rows": ((4, 5), (40, 5)),
    "features": ((4, 5), (4, 50)),
}


@check("rowwise_dot is vectorized (no loop over rows or features)", points=2,
       zh="rowwise_dot 已向量化（不对行或特征做循环）", depends="rowwise_dot")
def test_rowwise_vectorized(submission, rng):
    shapes = [LOOPS["rows"][0], LOOPS["rows"][1], LOOPS["features"][1]]
    arg_sets = [(torch.randn(n, d, generator=rng), torch.randn(n, d, generator=rng)) for n, d in shapes]
    runs = submission.probe(count_work, "rowwise_dot", *arg_sets, what="`rowwise_dot(a, b)`")
    for (a, b), run in zip(arg_sets, runs):
        if not holds_row_dots(run["value"], a, b):
            expect_rowwise(run["value"], a, b, f"`rowwise_dot(a{list(a.shape)}, b{list(b.shape)})`")
    by_shape = dict(zip(shapes, runs))
    for over, (few, many) in LOOPS.items():
        small, big = by_shape[few], by_shape[many]
        axis = 0 if over == "rows" else 1
        if over == "rows":
            sizes = dict(few=Text("N={n} rows", "N={n} 行", n=few[0]), many=Text("N={n}", "N={n} 行", n=many[0]),
                         loop=Text("the rows", "行"))
        else:
            sizes = dict(few=Text("D={n} features", "D={n} 个特征", n=few[1]),
                         many=Text("D={n}", "D={n} 个特征", n=many[1]), loop=Text("the features (columns)", "特征（列）"))
        grow = (many[axis] - few[axis]) // 2
        for measure, en, zh in (
                ("torch_calls", "`rowwise_dot` made {small} torch calls for {few} and {big} for {many}",
                 "`rowwise_dot` 在 {few} 时调用了 {small} 次 torch 函数，{many} 时调用了 {big} 次"),
                ("lines", "`rowwise_dot` ran {small} lines of your file for {few} and {big} for {many}",
                 "`rowwise_dot` 在 {few} 时执行了你文件中的 {small} 行代码，{many} 时执行了 {big} 行")):
            if big[measure] - small[measure] >= grow:
                fail(en + ": the work grows with them, so a Python loop (or comprehension) runs over {loop}. "
                     "Replace it by a few operations on the whole [N, D] tensors: out[i] = the sum over j of "
                     "a[i, j] * b[i, j], for every i at once.",
                     zh + "：工作量随之增长，说明有一个对{loop}的 Python 循环（或推导式）。请改成对整个 [N, D] "
                     "tensor 的几次运算：一次算出所有 i 的 out[i] = 对 j 求和 a[i, j] * b[i, j]。",
                     small=small[measure], big=big[measure], **sizes,
                     key="loop" if over == "rows" else "loop-features")
