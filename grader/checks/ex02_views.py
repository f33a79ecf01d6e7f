"""Hidden checks of ex02: view vs reshape, contiguous(), and writing through a view.

Sharing is observed, not guessed: probes write through the tensor the learner returned and look
at the original, or build a non-contiguous input (a transpose) inside the sandbox, where the
learner's function has to write into it.
"""

import torch

from grader.checking import check, expect_close, expect_tensor, fail, probe

VIEW_ERROR = "view size is not compatible"


def missing(result, name: str) -> None:
    if isinstance(result, dict) and result.get("missing"):
        fail(f"Your file does not define `{name}`: was it renamed or deleted?",
             f"你的文件里没有定义 `{name}`：是不是被改名或删除了？")


def view_error(result, what: str, what_zh: str | None = None, writing: bool = False) -> None:
    """Explain the RuntimeError of view() on a non-contiguous tensor (the probes catch only that one)."""
    if not (isinstance(result, dict) and "view_error" in result):
        return
    if writing:  # contiguous() or reshape() would copy: the write would be lost
        advice = ("Careful: .contiguous() and .reshape() would make a copy here, and a write into a copy never reaches "
                  "x. Write into x itself, by indexing it.")
        advice_zh = "注意：这里 .contiguous() 和 .reshape() 会生成副本，而写入副本永远到不了 x。请通过索引直接写入 x 本身。"
    else:
        advice = "Make a contiguous copy first with .contiguous(), or use .reshape()."
        advice_zh = "先用 .contiguous() 得到连续的副本，或者改用 .reshape()。"
    fail(f"{what} raised \"{VIEW_ERROR} with input tensor's size and stride\": the tensor you called .view() on "
         "is not contiguous (a transpose only swaps the strides, the memory stays in the old order), so view() "
         f"cannot flatten it. {advice}",
         f"{what_zh or what} 抛出了 \"{VIEW_ERROR} with input tensor's size and stride\"：你调用 .view() 的 tensor "
         f"不是连续的（contiguous）（转置只交换了 stride，内存仍是原来的顺序），所以 view() 无法把它展平。{advice_zh}")


def call_catching_view_error(fn, *args):
    try:
        return {"out": fn(*args)}
    except RuntimeError as exc:
        if VIEW_ERROR in str(exc):
            return {"view_error": str(exc)}
        raise


def draw_shape(rng, square: bool = False):
    rows = int(torch.randint(2, 6, (1,), generator=rng))
    if square:
        return rows, rows
    cols = int(torch.randint(2, 6, (1,), generator=rng))
    while cols == rows:
        cols = int(torch.randint(2, 7, (1,), generator=rng))
    return rows, cols


# -- to_matrix --------------------------------------------------------------------------------

def check_matrix_shape(out, x, rows, cols):
    what = f"to_matrix(x, {rows})"
    out = expect_tensor(out, what)
    if list(out.shape) == [cols, rows]:
        fail(f"{what} has shape [{cols}, {rows}], expected [{rows}, {cols}]: `rows` is the size of the first "
             f"dimension; the other one is x.numel() // rows (or -1, to let PyTorch work it out).",
             f"{what} 的形状是 [{cols}, {rows}]，应为 [{rows}, {cols}]：`rows` 是第一个维度的大小；"
             "另一个维度是 x.numel() // rows（也可以写 -1，让 PyTorch 自己算）。")
    out = expect_tensor(out, what, shape=[rows, cols])
    if out.dtype != x.dtype:
        fail(f"{what} has dtype {out.dtype}, but x is {x.dtype}: a view keeps the dtype (a conversion copies).",
             f"{what} 的 dtype 是 {out.dtype}，但 x 是 {x.dtype}：视图保持 dtype 不变（转换 dtype 会复制数据）。")
    if torch.equal(out, x.reshape(rows, cols)):
        return out
    if torch.equal(out, x.reshape(cols, rows).t()):
        fail(f"{what} is filled column by column; the matrix must be filled row by row, in x's order "
             "(the first row holds the first entries of x).",
             f"{what} 是按列填充的；矩阵必须按行、按 x 的顺序填充（第一行是 x 的前几个元素）。")
    expect_close(out, x.reshape(rows, cols), what, rtol=0, atol=0)
    return out


@check("to_matrix gives a [rows, numel // rows] matrix, row by row", points=1,
       zh="to_matrix 返回按行排列的 [rows, numel // rows] 矩阵")
def test_matrix_values(submission, rng):
    for _ in range(2):
        rows, cols = draw_shape(rng)
        x = torch.randn(rows * cols, generator=rng)
        check_matrix_shape(submission.to_matrix(x, rows), x, rows, cols)


@probe
def matrix_probe(module, x, rows, r, c, sentinel):
    """Call to_matrix(x, rows), then write sentinel into out[r, c] and report x."""
    fn = getattr(module, "to_matrix", None)
    if fn is None:
        return {"missing": True}
    x_before = x.clone()
    out = fn(x, rows)
    if not isinstance(out, torch.Tensor) or out.dim() != 2 or r >= out.shape[0] or c >= out.shape[1]:
        return {"out": out}
    before = out.detach().clone()
    changed_by_call = not torch.equal(x_before, x)
    with torch.no_grad():
        out[r, c] = sentinel
    return {"out": before, "x_changed_by_call": changed_by_call, "x_after": x}


@check("to_matrix returns a view: writing into it changes x", points=2,
       zh="to_matrix 返回视图：写入它会改变 x")
def test_matrix_view(submission, rng):
    rows, cols = draw_shape(rng)
    x = torch.randn(rows * cols, generator=rng)
    r, c = int(torch.randint(rows, (1,), generator=rng)), int(torch.randint(cols, (1,), generator=rng))
    sentinel = float(1000 + torch.randint(1000, (1,), generator=rng))
    result = submission.probe(matrix_probe, x, rows, r, c, sentinel, what=f"`to_matrix(x, {rows})`")
    missing(result, "to_matrix")
    check_matrix_shape(result["out"], x, rows, cols)
    what = f"to_matrix(x, {rows})"
    if result["x_changed_by_call"]:
        fail(f"{what} changed x itself: it should only give another view of the same numbers.",
             f"{what} 修改了 x 本身：它只应给出同一组数的另一个视图。")
    if float(result["x_after"][r * cols + c]) != sentinel:
        fail(f"{what} returned a copy: after writing into m[{r}, {c}] of the returned matrix m, x[{r * cols + c}] "
             "did not change. view() and reshape() of a contiguous tensor share its memory; building a new tensor "
             "(torch.tensor, torch.stack, torch.cat, clone()) copies it.",
             f"{what} 返回的是副本：往返回的矩阵 m 的 m[{r}, {c}] 写入后，x[{r * cols + c}] 没有变化。"
             "对连续 tensor 调用 view() 和 reshape() 会共享它的内存；构造新 tensor（torch.tensor、torch.stack、"
             "torch.cat、clone()）会复制数据。")


# -- columns_flat ------------------------------------------------------------------------------

@probe
def columns_probe(module, x):
    fn = getattr(module, "columns_flat", None)
    if fn is None:
        return {"missing": True}
    x_before = x.clone()
    result = call_catching_view_error(fn, x)
    result["x_changed"] = not torch.equal(x_before, x)
    return result


@check("columns_flat lists the entries column by column", points=3, zh="columns_flat 按列列出所有元素")
def test_columns(submission, rng):
    shapes = [draw_shape(rng), draw_shape(rng), draw_shape(rng, square=True)]
    for k, (m, n) in enumerate(shapes):
        x = torch.randint(-99, 100, (m, n), generator=rng) if k == 1 else torch.randn(m, n, generator=rng)
        what = f"columns_flat(x) (x: tensor[{m}, {n}])"
        result = submission.probe(columns_probe, x, what=f"`columns_flat(x)` (x: tensor[{m}, {n}])")
        missing(result, "columns_flat")
        view_error(result, what)
        out = expect_tensor(result["out"], what)
        if list(out.shape) == [n, m]:
            fail(f"{what} has shape [{n}, {m}]: that is the transpose, still 2-D. Flatten it to one dimension of "
                 f"{m * n} entries.",
                 f"{what} 的形状是 [{n}, {m}]：这只是转置，仍是二维的。需要把它展平成 {m * n} 个元素的一维 tensor。")
        out = expect_tensor(out, what, shape=[m * n])
        if out.dtype != x.dtype:
            fail(f"{what} has dtype {out.dtype}, but x is {x.dtype}: keep x's dtype.",
                 f"{what} 的 dtype 是 {out.dtype}，但 x 是 {x.dtype}：保持 x 的 dtype。")
        if result["x_changed"]:
            fail(f"{what} changed x: an in-place operation on x, or on a view of it? x must stay as it was.",
                 f"{what} 修改了 x：是不是对 x（或它的视图）做了原地操作？x 必须保持不变。")
        if torch.equal(out, x.t().reshape(-1)):
            continue
        if torch.equal(out, x.reshape(-1)):
            fail(f"{what} returned the entries row by row, in the order they sit in memory: x.view(-1), or "
                 f"x.view({n}, {m}) followed by a flatten, reinterpret the memory as it is, they do not transpose. "
                 "Column by column of x is row by row of x.t().",
                 f"{what} 按行返回了元素（即它们在内存中的顺序）：x.view(-1)，或者先 x.view({n}, {m}) 再展平，"
                 "都只是按原样重新解读内存，并不会转置。x 的按列顺序就是 x.t() 的按行顺序。")
        expect_close(out, x.t().reshape(-1), what, rtol=0, atol=0)


# -- scale_row_ --------------------------------------------------------------------------------

@check("scale_row_ scales row i of x in place, and only that row", points=2,
       zh="scale_row_ 原地缩放 x 的第 i 行，且只缩放这一行")
def test_scale_row(submission, rng):
    for square in (True, False):  # square first: a column mistake shows as a column, not an IndexError
        m, n = draw_shape(rng, square)
        x = torch.randn(m, n, generator=rng)
        i = int(torch.randint(m, (1,), generator=rng))
        factor = round(float(torch.empty(1).uniform_(2.0, 4.0, generator=rng)), 2)
        returned, (x_after, _, _) = submission.call_with_args("scale_row_", x, i, factor)
        expected = x.clone()
        expected[i] *= factor
        what = f"x after scale_row_(x, {i}, {factor}) (x: tensor[{m}, {n}])"
        x_after = expect_tensor(x_after, what, shape=[m, n])
        if torch.allclose(x_after, expected):
            continue
        if torch.equal(x_after, x):
            copy = isinstance(returned, torch.Tensor) and returned.shape in (expected.shape, expected[i].shape) and \
                torch.allclose(returned, expected if returned.dim() == 2 else expected[i])
            lead = ("You returned the scaled values, but x itself did not change" if copy
                    else "x did not change")
            lead_zh = "你返回了缩放后的值，但 x 本身没有变" if copy else "x 没有变化"
            fail(f"{lead}: scale_row_ must change x in place. `row = row * factor` makes a new tensor and clone() "
                 "makes a copy: neither writes back into x. Use an in-place operation (*=, mul_) on the view x[i].",
                 f"{lead_zh}：scale_row_ 必须原地修改 x。`row = row * factor` 会生成新的 tensor，clone() 会复制一份："
                 "两者都不会写回 x。请对视图 x[i] 使用原地操作（*=、mul_）。")
        if i < n:
            column = x.clone()
            column[:, i] *= factor
            if torch.allclose(x_after, column):
                fail(f"In {what}, column {i} was scaled instead of row {i}: x[:, {i}] is a column, x[{i}] is a row.",
                     f"在 {what} 中，被缩放的是第 {i} 列而不是第 {i} 行：x[:, {i}] 是一列，x[{i}] 是一行。")
        others = torch.ones(m, dtype=torch.bool)
        others[i] = False
        if not torch.equal(x_after[others], x[others]):
            fail(f"In {what}, rows other than row {i} changed: only row {i} may be scaled.",
                 f"在 {what} 中，第 {i} 行以外的行也变了：只能缩放第 {i} 行。")
        expect_close(x_after, expected, what)


# -- fill_flat_ --------------------------------------------------------------------------------

@probe
def fill_probe(module, base, k, value):
    """Build x = base.t() (not contiguous) here, call fill_flat_(x, k, value), and return x."""
    fn = getattr(module, "fill_flat_", None)
    if fn is None:
        return {"missing": True}
    x = base.t()
    result = call_catching_view_error(fn, x, k, value)
    result.pop("out", None)
    result["x_after"] = x.clone()
    return result


def draw_fill(rng, m, n):
    """An entry k of an [m, n] x whose place in memory differs when x is the transpose of an [n, m] tensor."""
    while True:
        k = int(torch.randint(m * n, (1,), generator=rng))
        i, j = divmod(k, n)
        if j * m + i != k:
            break
    value = float(100 + torch.randint(900, (1,), generator=rng))
    return k, value


@check("fill_flat_ writes the k-th entry of a contiguous x in place", points=1,
       zh="fill_flat_ 原地写入连续 x 的第 k 个元素")
def test_fill_contiguous(submission, rng):
    m, n = draw_shape(rng)
    x = torch.randn(m, n, generator=rng)
    k, value = draw_fill(rng, m, n)
    _, (x_after, _, _) = submission.call_with_args("fill_flat_", x, k, value)
    expected = x.clone()
    expected.view(-1)[k] = value
    what = f"x after fill_flat_(x, {k}, {value:g}) (x: tensor[{m}, {n}])"
    x_after = expect_tensor(x_after, what, shape=[m, n])
    if torch.equal(x_after, x):
        fail(f"x did not change: fill_flat_ must write into x itself, in place (the return value is ignored).",
             f"x 没有变化：fill_flat_ 必须原地写入 x 本身（返回值会被忽略）。")
    expect_close(x_after, expected, what)


@check("fill_flat_ also writes into a non-contiguous x (a transpose)", points=1,
       zh="fill_flat_ 也能写入不连续的 x（转置）")
def test_fill_transposed(submission, rng):
    m, n = draw_shape(rng)
    base = torch.randn(n, m, generator=rng)
    x = base.t()  # [m, n], as the sandbox will build it
    k, value = draw_fill(rng, m, n)
    what = f"fill_flat_(x, {k}, {value:g}) (x = base.t(): tensor[{m}, {n}], not contiguous)"
    what_zh = f"fill_flat_(x, {k}, {value:g})（x = base.t()：tensor[{m}, {n}]，不连续）"
    result = submission.probe(fill_probe, base, k, value, what=f"`fill_flat_(x, {k}, {value:g})` (x: a transpose)")
    missing(result, "fill_flat_")
    view_error(result, what, what_zh, writing=True)
    expected = x.clone(memory_format=torch.contiguous_format)  # a plain clone() keeps the transposed strides
    expected.view(-1)[k] = value
    x_after = expect_tensor(result["x_after"], f"x after {what}", shape=[m, n])
    if torch.allclose(x_after, expected):
        return
    if torch.equal(x_after, x):
        fail(f"x did not change after {what}: reshape(), flatten() and contiguous() return a copy when x is not "
             "contiguous, so a write into their result went into that copy, not into x. Write into x itself "
             "(x[i, j] = ... is a write through x).",
             f"{what_zh} 之后 x 没有变化：当 x 不连续时，reshape()、flatten() 和 contiguous() 返回的是副本，"
             "写入它们的结果只会写进副本，而不是 x。请直接写入 x 本身（x[i, j] = ... 就是写入 x）。")
    storage_order = base.clone()
    storage_order.view(-1)[k] = value
    if torch.equal(x_after, storage_order.t()):
        fail(f"After {what}, the value landed at position {k} of the memory, not at entry {k} of x counted row by "
             "row: for a transpose the two orders differ. Count along x's rows.",
             f"{what_zh} 之后，数值被写到了内存中的第 {k} 个位置，而不是 x 按行计数的第 {k} 个元素：对转置而言这两种顺序不同。"
             "请按 x 的行来计数。")
    expect_close(x_after, expected, f"x after {what}")
