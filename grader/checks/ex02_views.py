"""Hidden checks of ex02: view vs reshape, contiguous(), and writing through a view.

Sharing is observed, not guessed: probes write through the tensor the learner returned and look
at the original, or build a non-contiguous input (a transpose) inside the sandbox, where the
learner's function has to write into it.
"""

import torch

from grader.checking import Text, check, expect_close, expect_tensor, explain, fail, probe

NOT_CONTIGUOUS = Text("The tensor you called .view() on is not contiguous (a transpose only swaps the strides, the "
                      "memory stays in the old order), so view() cannot flatten it.",
                      "你调用 .view() 的 tensor 不是连续的（contiguous）：转置只交换了 stride，内存仍是原来的顺序，"
                      "所以 view() 无法把它展平。")
VIEW_ERROR_READING = {"view size is not compatible": NOT_CONTIGUOUS + Text(
    " Make a contiguous copy first with .contiguous(), or use .reshape().",
    "先用 .contiguous() 得到连续的副本，或者改用 .reshape()。")}
VIEW_ERROR_WRITING = {"view size is not compatible": NOT_CONTIGUOUS + Text(
    " Careful: .contiguous() and .reshape() would make a copy here, and a write into a copy never reaches x. "
    "Write into x itself, by indexing it.",
    "注意：这里 .contiguous() 和 .reshape() 会生成副本，而写入副本永远到不了 x。请通过索引直接写入 x 本身。")}


def draw_shape(rng, square: bool = False):
    rows = int(torch.randint(2, 6, (1,), generator=rng))
    if square:
        return rows, rows
    cols = int(torch.randint(2, 6, (1,), generator=rng))
    while cols == rows:
        cols = int(torch.randint(2, 7, (1,), generator=rng))
    return rows, cols


# -- to_matrix --------------------------------------------------------------------------------

def check_matrix(out, x, rows, cols):
    """Fail unless `out` is x as a [rows, cols] matrix, row by row, in x's dtype."""
    what = f"`to_matrix(x, {rows})`"
    out = expect_tensor(out, what)
    if list(out.shape) == [cols, rows] and rows != cols:
        fail("{what} has shape [{cols}, {rows}], expected [{rows}, {cols}]: `rows` is the size of the first "
             "dimension; the other one is x.numel() // rows (or -1, to let PyTorch work it out).",
             "{what} 的形状是 [{cols}, {rows}]，应为 [{rows}, {cols}]：`rows` 是第一个维度的大小；"
             "另一个维度是 x.numel() // rows（也可以写 -1，让 PyTorch 自己算）。",
             what=what, rows=rows, cols=cols, key="rows-cols-swapped")
    out = expect_tensor(out, what, shape=[rows, cols])
    if out.dtype != x.dtype:
        fail("{what} has dtype {got}, but x is {want}: a view keeps the dtype (a conversion copies).",
             "{what} 的 dtype 是 {got}，但 x 是 {want}：视图保持 dtype 不变（转换 dtype 会复制数据）。",
             what=what, got=out.dtype, want=x.dtype, key="dtype-changed")
    if torch.equal(out, x.reshape(rows, cols)):
        return
    if torch.equal(out, x.reshape(cols, rows).t()):
        fail("{what} is filled column by column; the matrix must be filled row by row, in x's order (the first row "
             "holds the first entries of x).",
             "{what} 是按列填充的；矩阵必须按行、按 x 的顺序填充（第一行是 x 的前几个元素）。",
             what=what, key="column-major")
    expect_close(out, x.reshape(rows, cols), what, rtol=0, atol=0)


@check("to_matrix gives a [rows, numel // rows] matrix, row by row", points=1,
       zh="to_matrix 返回按行排列的 [rows, numel // rows] 矩阵")
def test_matrix_values(submission, rng):
    shapes = [draw_shape(rng), draw_shape(rng), (1, int(torch.randint(2, 6, (1,), generator=rng)))]
    for rows, cols in shapes:  # one row too: a size-1 axis must stay
        x = torch.randn(rows * cols, generator=rng)
        check_matrix(submission.to_matrix(x, rows), x, rows, cols)


@probe
def matrix_probe(module, x, rows, sentinel):
    """Call to_matrix(x, rows); if it returns x's numbers as a 2-D tensor, write sentinel into its last entry
    (wherever that lies in memory) and report whether x followed."""
    x_before = x.clone()
    out = module.to_matrix(x, rows)
    if not isinstance(out, torch.Tensor) or out.dim() != 2 or out.numel() != x.numel():
        return {"out": out}
    changed_by_call = not torch.equal(x_before, x)
    with torch.no_grad():
        out[-1, -1] = sentinel
    return {"out": out, "x_changed_by_call": changed_by_call, "x_follows": bool((x == sentinel).any())}


@check("to_matrix returns a view: writing into it changes x", points=2,
       zh="to_matrix 返回视图：写入它会改变 x", depends="matrix_values")
def test_matrix_view(submission, rng):
    """Sharing only: a wrong shape or order costs the values check, not this one."""
    rows, cols = draw_shape(rng)
    x = torch.randn(rows * cols, generator=rng)
    sentinel = float(1000 + torch.randint(1000, (1,), generator=rng))
    what = f"`to_matrix(x, {rows})`"
    result = submission.probe(matrix_probe, x, rows, sentinel, what=what)
    if "x_follows" not in result:
        check_matrix(result["out"], x, rows, cols)  # not a matrix of x's numbers: say why
    if result["x_changed_by_call"]:
        fail("{what} changed x itself: it should only give another view of the same numbers.",
             "{what} 修改了 x 本身：它只应给出同一组数的另一个视图。", what=what, key="input-changed")
    if not result["x_follows"]:
        fail("{what} returned a copy: after writing into the returned matrix m, x did not change. view() and "
             "reshape() of a contiguous tensor share its memory; building a new tensor (torch.tensor, torch.stack, "
             "torch.cat, clone()) copies it.",
             "{what} 返回的是副本：往返回的矩阵 m 里写入后，x 没有变化。对连续 tensor 调用 view() 和 reshape() "
             "会共享它的内存；构造新 tensor（torch.tensor、torch.stack、torch.cat、clone()）会复制数据。",
             what=what, key="copy-not-view")


# -- columns_flat ------------------------------------------------------------------------------

@probe
def columns_probe(module, x):
    x_before = x.clone()
    out = module.columns_flat(x)
    return {"out": out, "x_changed": not torch.equal(x_before, x)}


@check("columns_flat lists the entries column by column", points=3, zh="columns_flat 按列列出所有元素")
def test_columns(submission, rng):
    one = int(torch.randint(2, 6, (1,), generator=rng))
    shapes = [draw_shape(rng), draw_shape(rng), draw_shape(rng, square=True), (one, 1), (1, one)]
    for k, (m, n) in enumerate(shapes):
        x = torch.randint(-99, 100, (m, n), generator=rng) if k == 1 else torch.randn(m, n, generator=rng)
        what = f"`columns_flat(x)` (x: tensor[{m}, {n}])"
        with explain(VIEW_ERROR_READING, key="view-not-contiguous"):
            result = submission.probe(columns_probe, x, what=what)
        out = expect_tensor(result["out"], what)
        if list(out.shape) == [n, m] and m > 1 and n > 1:
            fail("{what} has shape [{n}, {m}]: that is the transpose, still 2-D. Flatten it to one dimension of "
                 "{numel} entries.", "{what} 的形状是 [{n}, {m}]：这只是转置，仍是二维的。需要把它展平成 {numel} 个元素的一维 tensor。",
                 what=what, m=m, n=n, numel=m * n, key="not-flattened")
        out = expect_tensor(out, what, shape=[m * n])
        if out.dtype != x.dtype:
            fail("{what} has dtype {got}, but x is {want}: keep x's dtype.",
                 "{what} 的 dtype 是 {got}，但 x 是 {want}：保持 x 的 dtype。",
                 what=what, got=out.dtype, want=x.dtype, key="dtype-changed")
        if result["x_changed"]:
            fail("{what} changed x: an in-place operation on x, or on a view of it? x must stay as it was.",
                 "{what} 修改了 x：是不是对 x（或它的视图）做了原地操作？x 必须保持不变。", what=what, key="input-changed")
        if torch.equal(out, x.t().reshape(-1)):
            continue
        if torch.equal(out, x.reshape(-1)):
            fail("{what} returned the entries row by row, in the order they sit in memory: x.view(-1), or "
                 "x.view({n}, {m}) followed by a flatten, reinterpret the memory as it is, they do not transpose. "
                 "Column by column of x is row by row of x.t().",
                 "{what} 按行返回了元素（即它们在内存中的顺序）：x.view(-1)，或者先 x.view({n}, {m}) 再展平，"
                 "都只是按原样重新解读内存，并不会转置。x 的按列顺序就是 x.t() 的按行顺序。",
                 what=what, m=m, n=n, key="memory-order")
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
        call = f"`scale_row_(x, {i}, {factor})` (x: tensor[{m}, {n}])"
        what = Text("x after {call}", "{call} 之后的 x", call=call)
        x_after = expect_tensor(x_after, what, shape=[m, n])
        if torch.allclose(x_after, expected):
            continue
        if torch.equal(x_after, x):
            copy = isinstance(returned, torch.Tensor) and returned.shape in (expected.shape, expected[i].shape) and \
                torch.allclose(returned, expected if returned.dim() == 2 else expected[i])
            lead = Text("You returned the scaled values, but x itself did not change",
                        "你返回了缩放后的值，但 x 本身没有变") if copy else Text("x did not change", "x 没有变化")
            fail("{lead}: scale_row_ must change x in place. `row = row * factor` makes a new tensor and clone() "
                 "makes a copy: neither writes back into x. Use an in-place operation (*=, mul_) on the view x[i].",
                 "{lead}：scale_row_ 必须原地修改 x。`row = row * factor` 会生成新的 tensor，clone() 会复制一份："
                 "两者都不会写回 x。请对视图 x[i] 使用原地操作（*=、mul_）。", lead=lead, key="not-in-place")
        if i < n:
            column = x.clone()
            column[:, i] *= factor
            if torch.allclose(x_after, column):
                fail("In {what}, column {i} was scaled instead of row {i}: x[:, {i}] is a column, x[{i}] is a row.",
                     "在 {what} 中，被缩放的是第 {i} 列而不是第 {i} 行：x[:, {i}] 是一列，x[{i}] 是一行。",
                     what=what, i=i, key="column-not-row")
        others = torch.ones(m, dtype=torch.bool)
        others[i] = False
        if not torch.equal(x_after[others], x[others]):
            fail("In {what}, rows other than row {i} changed: only row {i} may be scaled.",
                 "在 {what} 中，第 {i} 行以外的行也变了：只能缩放第 {i} 行。", what=what, i=i, key="other-rows-changed")
        expect_close(x_after, expected, what)


# -- fill_flat_ --------------------------------------------------------------------------------

@probe
def fill_probe(module, base, k, value):
    """Build x = base.t() (not contiguous) here, call fill_flat_(x, k, value), and return x."""
    x = base.t()
    module.fill_flat_(x, k, value)
    return x.clone()


def draw_fill(rng, m, n):
    """An entry k of an [m, n] x (m != n, both at least 2) where the usual mistakes land on three different
    entries: splitting k by the number of rows gives another valid entry, and in the transpose of an [n, m]
    tensor, position k of the memory is yet another one (there is such a k for every such m, n)."""
    ks = [k for k in range(m * n) if k // m < m and k % m < n and divmod(k, m) != divmod(k, n)
          and (k % n) * m + k // n != k and k // m != k % m]
    swapped = [k for k in ks if k % n < m and k // n < n and k % n != k // n]  # (j, i) = divmod(k, n) lands too
    ks = swapped or ks
    k = ks[int(torch.randint(len(ks), (1,), generator=rng))]
    value = float(100 + torch.randint(900, (1,), generator=rng))
    return k, value


def filled(x, index, value):
    out = x.clone(memory_format=torch.contiguous_format)  # a plain clone() keeps a transpose's strides
    out[index] = value
    return out


def wrong_divmod(x_after, x, k, value, what):
    """Fail when the value landed where splitting k by the number of rows puts it."""
    m, n = x.shape
    if torch.equal(x_after, filled(x, divmod(k, m), value)):
        fail("In {what}, the value landed at x[{wi}, {wj}], but entry {k} counted row by row is x[{i}, {j}]: k was "
             "split by the number of rows ({m}); a row holds {n} entries, the number of columns, x.shape[1].",
             "在 {what} 中，数值写到了 x[{wi}, {wj}]，但按行计数的第 {k} 个元素是 x[{i}, {j}]：k 是按行数（{m}）拆分的；"
             "而每行有 {n} 个元素，也就是列数 x.shape[1]。",
             what=what, k=k, m=m, n=n, wi=k // m, wj=k % m, i=k // n, j=k % n, key="divmod-wrong-dim")
    i, j = divmod(k, n)
    if (i, j) != (j, i) and j < m and i < n and torch.equal(x_after, filled(x, (j, i), value)):
        fail("In {what}, the value landed at x[{j}, {i}], but entry {k} counted row by row is x[{i}, {j}]: the row "
             "and the column are swapped. divmod(k, x.shape[1]) gives (row, column), in that order.",
             "在 {what} 中，数值写到了 x[{j}, {i}]，但按行计数的第 {k} 个元素是 x[{i}, {j}]：行和列颠倒了。"
             "divmod(k, x.shape[1]) 按顺序给出 (行, 列)。", what=what, k=k, i=i, j=j, key="divmod-swapped")


@check("fill_flat_ writes the k-th entry of a contiguous x in place", points=1,
       zh="fill_flat_ 原地写入连续 x 的第 k 个元素")
def test_fill_contiguous(submission, rng):
    m = int(torch.randint(3, 5, (1,), generator=rng))  # 3 <= m < n: an entry where rows and columns swapped lands
    n = int(torch.randint(m + 1, 7, (1,), generator=rng))
    x = torch.randn(m, n, generator=rng)
    k, value = draw_fill(rng, m, n)
    _, (x_after, _, _) = submission.call_with_args("fill_flat_", x, k, value)
    call = f"`fill_flat_(x, {k}, {value:g})` (x: tensor[{m}, {n}])"
    what = Text("x after {call}", "{call} 之后的 x", call=call)
    x_after = expect_tensor(x_after, what, shape=[m, n])
    if torch.equal(x_after, x):
        fail("x did not change after {call}: fill_flat_ must write into x itself, in place (the return value is "
             "ignored). A write into a copy never reaches x: clone() copies, and so does reshape() of a non-contiguous "
             "tensor such as x.t().",
             "{call} 之后 x 没有变化：fill_flat_ 必须原地写入 x 本身（返回值会被忽略）。写入副本永远到不了 x："
             "clone() 会复制，对 x.t() 这种不连续的 tensor 调用 reshape() 也会复制。", call=call, key="not-in-place")
    wrong_divmod(x_after, x, k, value, what)
    expect_close(x_after, filled(x, divmod(k, n), value), what)


@check("fill_flat_ also writes into a non-contiguous x (a transpose)", points=1,
       zh="fill_flat_ 也能写入不连续的 x（转置）")
def test_fill_transposed(submission, rng):
    m, n = draw_shape(rng)
    base = torch.randn(n, m, generator=rng)
    x = base.t()  # [m, n], as the sandbox will build it
    k, value = draw_fill(rng, m, n)
    call = f"`fill_flat_(x, {k}, {value:g})`"
    x_is = Text("x = base.t(): tensor[{m}, {n}], not contiguous", "x = base.t()：tensor[{m}, {n}]，不连续", m=m, n=n)
    what = Text("x after {call} ({x_is})", "{call}（{x_is}）之后的 x", call=call, x_is=x_is)
    with explain(VIEW_ERROR_WRITING, key="view-not-contiguous"):
        x_after = submission.probe(fill_probe, base, k, value, what=f"{call} (x = base.t())")
    x_after = expect_tensor(x_after, what, shape=[m, n])
    if torch.allclose(x_after, filled(x, divmod(k, n), value)):
        return
    if torch.equal(x_after, filled(x, divmod(k, m), value)):
        return  # the same wrong entry as on a contiguous x: that check above names the mistake, once
    if torch.equal(x_after, x):
        fail("x did not change after {call} ({x_is}): reshape(), flatten() and contiguous() return a copy when x is "
             "not contiguous, so a write into their result went into that copy, not into x. Write into x itself "
             "(x[i, j] = ... is a write through x).",
             "{call}（{x_is}）之后 x 没有变化：当 x 不连续时，reshape()、flatten() 和 contiguous() 返回的是副本，"
             "写入它们的结果只会写进副本，而不是 x。请直接写入 x 本身（x[i, j] = ... 就是写入 x）。",
             call=call, x_is=x_is, key="write-into-copy")
    storage_order = base.clone()
    storage_order.view(-1)[k] = value
    if torch.equal(x_after, storage_order.t()):
        fail("After {call} ({x_is}), the value landed at position {k} of the memory, not at entry {k} of x counted "
             "row by row: for a transpose the two orders differ. Count along x's rows.",
             "{call}（{x_is}）之后，数值被写到了内存中的第 {k} 个位置，而不是 x 按行计数的第 {k} 个元素："
             "对转置而言这两种顺序不同。请按 x 的行来计数。", call=call, x_is=x_is, k=k, key="memory-order")
    expect_close(x_after, filled(x, divmod(k, n), value), what)
