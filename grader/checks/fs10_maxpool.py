"""Hidden checks of fs10: max pooling from scratch, forward against F.max_pool2d, its backward by hand.

A probe runs the learner's max_pool2d on the cases a check drew, under a TorchFunctionMode that records the torch
functions called (F.max_pool2d, its indices and max_unpool2d are forbidden), then calls the backward of the node that
made the output directly (`out.grad_fn.apply(g)`, as ex08 does): the raw gradient it returns, the functions it called,
and whether it reached autograd. An output made by autograd's own nodes (no autograd.Function) is run through the
engine instead, so its values are judged, and the check of the hand-written backward says what is missing.

The judge compares with F.max_pool2d in float64 (and its gradient by autograd) and names a known slip only when the
wrong value equals it, computed here: zeros instead of -inf in the padding, the gradient split between tied maxima,
given to each of them or to the last one, overlapping windows that overwrite each other's gradient instead of adding
it, the stride left to 1. Inputs are small integers, so ties are everywhere; windows overlap (stride < kernel), leave
gaps (stride > kernel), and the padded borders hold negative values only.

Kata variants: `variant("window")` is the window: plain (the exercise as written), or dilated (max_pool2d takes
`dilation`, and a window's cells are `dilation` apart).
"""

import torch
import torch.nn.functional as F

from grader.checking import (Text, check, expect_tensor, fail, fail_raised, learner_call, matches, probe,
                             recording_calls, relation, relation_key, relation_text, variant, verbatim,
                             watching_autograd)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.devices import expect_cpu_only


# -- probes (run in the sandbox) ---------------------------------------------------------------


@probe
def pool_run(module, cases):
    """max_pool2d on each case ({x, kwargs, g}): the output, the node that made it, the gradient for x its backward
    gives for g (called directly when it is an autograd.Function of the learner's, else through the engine), and
    the torch functions forward and backward called; or the error."""
    forward_calls, backward_calls, autograd = set(), set(), []

    engine = torch.autograd.grad

    def backward(node, out, leaf, g, record) -> None:
        """Into `record`: the gradient for x the node's backward gives for g (its count of returned values)."""
        if record["custom"]:
            with watching_autograd(module, autograd), recording_calls(backward_calls):
                raw = node.apply(g.to(out.dtype))
            raw = raw if isinstance(raw, (tuple, list)) else (raw,)
            record["returned"] = len(raw)
            record["grad"] = raw[0].detach() if isinstance(raw[0], torch.Tensor) else raw[0]
        else:
            # a scalar: grad_outputs would import torch.fx lazily (seconds)
            (grad,) = engine((out * g.to(out.dtype)).sum(), leaf, allow_unused=True)
            record["grad"] = grad

    records = []
    for case in cases:
        leaf = case["x"].clone().requires_grad_(True)
        with recording_calls(forward_calls):
            out, error = learner_call(module, module.max_pool2d, leaf, **case["kwargs"])
        if error and error["not_started"]:
            raise NotImplementedError
        if error:  # the judge explains it, and the other cases still run
            records.append({"error": error})
            continue
        node = out.grad_fn if isinstance(out, torch.Tensor) else None
        record = {"out": out.detach() if isinstance(out, torch.Tensor) else out,
                  "node": None if node is None else type(node).__name__,
                  "custom": node is not None and hasattr(node, "_forward_cls")}
        g = case["g"]
        if g is not None and node is not None and out.shape == g.shape:
            _, error = learner_call(module, backward, node, out, leaf, g, record)
            if error and error["not_started"]:
                raise NotImplementedError
            if error:  # the backward's own error, explained by the judge
                record["backward_error"] = error
        records.append(record)
    return {"records": records, "forward_calls": sorted(forward_calls), "backward_calls": sorted(backward_calls),
            "autograd": sorted(set(autograd))}


# -- draws and references (the judge) -------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high]."""
    return int(torch.randint(low, high + 1, (), generator=rng))


def dilated() -> bool:
    return variant("window")["name"] == "dilated"


def integers(rng, shape, low=-4, high=4) -> torch.Tensor:
    """Small integers as float64: ties in almost every window."""
    return torch.randint(low, high + 1, shape, generator=rng).double()


def case(rng, x, kernel_size, *, stride=None, padding=0, dilation=1, grad=True) -> dict:
    kwargs = {"kernel_size": kernel_size}
    if stride is not None:
        kwargs["stride"] = stride
    if padding != 0:
        kwargs["padding"] = padding
    if dilated():
        kwargs["dilation"] = dilation
    drawn = {"x": x, "kwargs": kwargs, "g": None}
    if grad:
        drawn["g"] = torch.randn(reference(drawn).shape, generator=rng, dtype=torch.float64)
    return drawn


def settings(c: dict) -> dict:
    k = c["kwargs"]
    return {"kernel_size": k["kernel_size"], "stride": k.get("stride"), "padding": k.get("padding", 0),
            "dilation": k.get("dilation", 1)}


def reference(c: dict, x=None, **change) -> torch.Tensor:
    """F.max_pool2d in float64 on a case; `change` replaces a setting (a slip)."""
    s = {**settings(c), **change}
    return F.max_pool2d((c["x"] if x is None else x).double(), s["kernel_size"], s["stride"], s["padding"],
                        s["dilation"])


def reference_grad(c: dict) -> torch.Tensor:
    leaf = c["x"].double().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad((reference(c, x=leaf) * c["g"]).sum(), leaf)  # grad_outputs would import torch.fx
    return grad


def windows(c: dict) -> tuple[torch.Tensor, tuple]:
    """Every window of the -inf-padded input, [N, C, kh * kw, L], and the padded shape."""
    s = settings(c)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    (kh, kw), (ph, pw) = pair(s["kernel_size"]), pair(s["padding"])
    stride = pair(s["kernel_size"] if s["stride"] is None else s["stride"])
    padded = F.pad(c["x"].double(), (pw, pw, ph, ph), value=float("-inf"))
    cols = F.unfold(padded, (kh, kw), dilation=pair(s["dilation"]), stride=stride)
    return cols.reshape(padded.shape[0], padded.shape[1], kh * kw, -1), (padded.shape, ph, pw, (kh, kw), stride,
                                                                        pair(s["dilation"]))


def tie_gradients(c: dict) -> dict[str, torch.Tensor]:
    """The gradient for x when each window gives its gradient to its tied maxima otherwise than F.max_pool2d does
    (to the first): split evenly between them, all of it to each, or all of it to the last one."""
    cols, (shape, ph, pw, (kh, kw), stride, dilation) = windows(c)
    n, ch, _, length = cols.shape
    w_out = (shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    top = cols.amax(dim=2, keepdim=True)
    tied = (cols == top).double()
    last = torch.zeros_like(tied).scatter_(2, (kh * kw - 1 - tied.flip(2).argmax(dim=2, keepdim=True)), 1.0)
    g = c["g"].reshape(n, ch, 1, length)
    offsets = torch.arange(kh * kw)
    i, j = offsets // kw * dilation[0], offsets % kw * dilation[1]
    starts = torch.arange(length)
    rows = (starts // w_out * stride[0]).reshape(1, -1) + i.reshape(-1, 1)
    columns = (starts % w_out * stride[1]).reshape(1, -1) + j.reshape(-1, 1)
    where = (rows * shape[3] + columns).reshape(1, 1, -1).expand(n, ch, -1)
    grads = {}
    for name, share in (("tie-split", tied / tied.sum(dim=2, keepdim=True)), ("tie-all", tied), ("tie-last", last)):
        flat = torch.zeros(n, ch, shape[2] * shape[3], dtype=torch.float64)
        flat.scatter_add_(2, where, (share * g).reshape(n, ch, -1))
        grads[name] = flat.reshape(shape)[:, :, ph:shape[2] - ph, pw:shape[3] - pw]
    return grads


def overlapped_cells(c: dict) -> torch.Tensor:
    """The cells of x that are the (first) maximum of more than one window."""
    s = settings(c)
    _, indices = F.max_pool2d(c["x"].double(), s["kernel_size"], s["stride"], s["padding"], s["dilation"],
                              return_indices=True)
    n, ch, h, w = c["x"].shape
    counts = torch.zeros(n, ch, h * w).scatter_add_(2, indices.reshape(n, ch, -1), torch.ones(indices.reshape(n, ch,
                                                                                                             -1).shape))
    return (counts > 1).reshape(n, ch, h, w)


def call_text(c: dict) -> str:
    k = c["kwargs"]
    parts = [f"x{list(c['x'].shape)}"] + [f"{name}={value}" for name, value in k.items()]
    dtype = "" if c["x"].dtype == torch.float64 else f" ({str(c['x'].dtype).removeprefix('torch.')})"
    return f"`max_pool2d({', '.join(parts)})`{dtype}"


def run(submission, key: str, draw) -> tuple[list, dict]:
    """The cases `draw()` makes and the learner's max_pool2d on them, once per grading for `key`."""
    def make():
        cases = draw()
        return cases, submission.probe(pool_run, cases, what=Text("your `max_pool2d` on {n} inputs",
                                                                  "你的 `max_pool2d` 处理 {n} 组输入", n=len(cases)))
    return submission.once(key, make)


def builtins_used(result: dict) -> list[str]:
    return forbidden_calls("max_pool2d", result["forward_calls"] + result["backward_calls"])


def no_builtin(result: dict) -> None:
    """A value computed by F.max_pool2d (or nn.MaxPool2d, max_unpool2d...) is not earned."""
    used = builtins_used(result)
    if used:
        fail("Your max pooling calls torch's own {names}: the values are torch's, not yours. Find each window's "
             "maximum yourself (F.unfold or Tensor.unfold, then max), and send the gradient back by hand.",
             "你的最大池化调用了 torch 自带的 {names}：这些值是 torch 算的，不是你算的。请自己找出每个窗口的最大值"
             "（F.unfold 或 Tensor.unfold，再取 max），并手动把梯度传回去。",
             names=verbatim(", ".join(f"`{n}`" for n in sorted(set(used)))), key="builtin-max-pool")


def expect_near(got, want, what, *, rtol=1e-7, atol=1e-9, theirs=("F.max_pool2d", "F.max_pool2d")):
    """Fail unless `got` has `want`'s values: the first wrong entry, and how the whole relates to the right value."""
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
    if not bad.any():
        return
    idx = tuple(int(i) for i in bad.nonzero()[0])
    rel = relation(got, want)
    how = Text("; the whole {relation}", "；整体上{relation}", relation=relation_text(rel)) if rel else ""
    fail("{what} is wrong at {idx}: {got:.6g} where {theirs} gives {want:.6g} ({bad} of {total} entries differ{how}).",
         "{what} 在 {idx} 处不对：{theirs} 给出 {want:.6g}，你的是 {got:.6g}（{total} 个元素中有 {bad} 个不同{how}）。",
         what=what, idx=list(idx), got=float(got[idx]), want=float(want[idx]), bad=int(bad.sum()), total=got.numel(),
         how=how, theirs=Text(*theirs), key=relation_key(rel) if rel else "wrong-values")


def output(record: dict, c: dict) -> torch.Tensor:
    """The output of one case, or a failure that quotes the learner's error."""
    what = call_text(c)
    if "error" in record:
        err = record["error"]
        if "is invalid for input of size" in err["message"]:
            fail_raised(err, what, Text(
                "Likely: the output size does not match the number of windows unfold made: "
                "H_out = (H + 2 * padding - {span} - 1) // stride + 1, with stride = kernel_size when it is None.",
                "可能的原因：输出尺寸与 unfold 切出的窗口数对不上："
                "H_out = (H + 2 * padding - {span} - 1) // stride + 1，stride 为 None 时等于 kernel_size。",
                span=verbatim("dilation * (kernel_size - 1)" if dilated() else "(kernel_size - 1)")), key="output-size")
        if "ambiguous" in err["message"] and c["x"].shape[0] == 0:
            fail_raised(err, what, ("With an empty batch (N = 0) a reshape cannot work out a -1: give every size, "
                                    "H_out * W_out windows computed from the formula.",
                                    "batch 为空（N = 0）时，reshape 无法推算出 -1：请给出每个维度的大小，"
                                    "窗口数 H_out * W_out 用公式算出来。"), key="reshape-empty-batch")
        fail_raised(err, what)
    return expect_tensor(record["out"], what, floating=True)


def expect_shape(out, want, c: dict) -> None:
    if list(out.shape) == list(want.shape):
        return
    what, s = call_text(c), settings(c)
    values = dict(what=what, got=list(out.shape), want=list(want.shape))
    if s["stride"] is None and list(reference(c, stride=1).shape) == list(out.shape):
        fail("{what} has shape {got}, expected {want}: with stride=None the windows step by kernel_size (they do not "
             "overlap), as F.max_pool2d's default; a stride of 1 slides them one pixel at a time.",
             "{what} 的形状为 {got}，应为 {want}：stride=None 时窗口每次移动 kernel_size（互不重叠），这是 F.max_pool2d "
             "的默认值；stride 为 1 时窗口每次只移动一个像素。", key="stride-default", **values)
    if list(F.max_pool2d(c["x"].double(), s["kernel_size"], s["stride"], s["padding"], s["dilation"],
                         ceil_mode=True).shape) == list(out.shape):
        fail("{what} has shape {got}, expected {want}: the output size was rounded up (ceil_mode=True). F.max_pool2d "
             "rounds down: a last window that would run past the padded input is dropped.",
             "{what} 的形状为 {got}，应为 {want}：输出尺寸被向上取整了（ceil_mode=True）。F.max_pool2d 向下取整："
             "超出填充后输入的最后一个窗口会被丢掉。", key="ceil-mode", **values)
    fail("{what} has shape {got}, expected {want}: H_out = (H + 2 * padding - {span} - 1) // stride + 1, and W_out alike.",
         "{what} 的形状为 {got}，应为 {want}：H_out = (H + 2 * padding - {span} - 1) // stride + 1，W_out 同理。",
         span=verbatim("dilation * (kernel_size - 1)" if dilated() else "(kernel_size - 1)"), key="output-size",
         **values)


def expect_forward(record: dict, c: dict) -> None:
    out = output(record, c)
    want = reference(c)
    expect_shape(out, want, c)
    if out.dtype != c["x"].dtype:
        return  # the dtype check's lesson
    if matches(out, want, rtol=1e-7, atol=1e-9):
        return
    what, s = call_text(c), settings(c)
    p = s["padding"]
    if p != 0:
        pads = (p, p, p, p) if isinstance(p, int) else (p[1], p[1], p[0], p[0])
        if matches(out, F.max_pool2d(F.pad(c["x"].double(), pads), s["kernel_size"], s["stride"], 0, s["dilation"]),
                   rtol=1e-7, atol=1e-9):
            fail("{what} is wrong at the border: the padding holds zeros, so a window over negative values there "
                 "returns 0. Max pooling pads with -inf, which never wins a max (F.pad(x, ..., value=float(\"-inf\")); "
                 "F.unfold's own padding is zeros).",
                 "{what} 在边界处不对：填充的是 0，所以落在负值上的窗口返回了 0。最大池化用 -inf 填充，它永远不会成为最大值"
                 "（`F.pad(x, ..., value=float(\"-inf\"))`；F.unfold 自带的填充是 0）。", what=what, key="zero-padding")
    if matches(out, F.avg_pool2d(c["x"].double(), s["kernel_size"], s["stride"], s["padding"]), rtol=1e-7, atol=1e-9):
        fail("{what} is the average of each window: max pooling keeps each window's largest value.",
             "{what} 是每个窗口的平均值：最大池化保留的是每个窗口的最大值。", what=what, key="average")
    expect_near(out, want, what)


def expect_backward(record: dict, c: dict) -> None:
    what = call_text(c)
    label = Text("the gradient for x of {what}", "{what} 对 x 的梯度", what=what)
    if "backward_error" in record:
        fail_raised(record["backward_error"], Text("{label}: backward", "{label}：backward", label=label))
    if "grad" not in record:
        fail("The output of {what} does not require grad: no gradient can reach x. Return the output of "
             "MaxPool2dFunction.apply, which autograd links to your backward.",
             "{what} 的输出不需要梯度：梯度无法传到 x。请返回 MaxPool2dFunction.apply 的输出，autograd 会把它与你的 "
             "backward 连起来。", what=what, key="graph-cut")
    n = 5 if dilated() else 4  # x and the settings
    if record.get("returned", n) != n:
        fail("MaxPool2dFunction.backward returned {got} values: it returns one per input of forward ({n}: x and the "
             "settings), the gradient for x first and None for each setting.",
             "MaxPool2dFunction.backward 返回了 {got} 个值：forward 有几个输入就返回几个（{n} 个：x 和各个设置），"
             "第一个是 x 的梯度，每个设置对应 None。", got=record["returned"], n=n, key="gradient-count")
    grad = record["grad"]
    if grad is None:
        fail("{label} is None: backward returned no gradient for x.", "{label} 是 None：backward 没有返回 x 的梯度。",
             label=label, key="returned-none")
    want = reference_grad(c)
    grad = expect_tensor(grad, label, floating=True)
    # a gradient in another dtype than x is the dtype check's lesson: its values are judged at its own precision
    tolerance = {"rtol": 1e-7, "atol": 1e-9} if grad.dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-6}
    if list(grad.shape) != list(want.shape):
        s = settings(c)
        p = s["padding"] if isinstance(s["padding"], tuple) else (s["padding"], s["padding"])
        if list(grad.shape[2:]) == [want.shape[2] + 2 * p[0], want.shape[3] + 2 * p[1]]:
            fail("{label} has shape {got}, the padded input's: crop the padding off ([:, :, ph:ph + H, pw:pw + W]), "
                 "x has shape {want}. The padding's cells are not part of x and take no gradient.",
                 "{label} 的形状为 {got}，是填充后输入的形状：请把填充部分裁掉（[:, :, ph:ph + H, pw:pw + W]），"
                 "x 的形状是 {want}。填充的格子不属于 x，不接收梯度。", label=label, got=list(grad.shape),
                 want=list(want.shape), key="padding-not-cropped")
        expect_tensor(grad, label, shape=list(want.shape))
    if matches(grad, want, **tolerance):
        return
    for key, slip in tie_gradients(c).items():
        if matches(grad, slip, **tolerance):
            why = {"tie-split": Text(
                "where a window has several equal maxima, its gradient is split between them (what amax's gradient "
                "does). F.max_pool2d gives the whole gradient to one of them, the first in the window (row by row): "
                "the index max(dim) returns.",
                "当一个窗口有多个相等的最大值时，它的梯度被平分给了它们（amax 的梯度就是这样）。F.max_pool2d 把全部梯度给其中"
                "一个，即窗口中（逐行）的第一个：也就是 max(dim) 返回的索引。"),
                "tie-all": Text(
                "where a window has several equal maxima, each of them got the whole gradient (a mask x == max). "
                "F.max_pool2d gives it to one of them only, the first in the window (row by row).",
                "当一个窗口有多个相等的最大值时，每一个都拿到了全部梯度（用了 x == max 的掩码）。F.max_pool2d 只把它给"
                "其中一个，即窗口中（逐行）的第一个。"),
                "tie-last": Text(
                "where a window has several equal maxima, the gradient went to the last of them. F.max_pool2d gives "
                "it to the first in the window (row by row), the index max(dim) returns.",
                "当一个窗口有多个相等的最大值时，梯度给了最后一个。F.max_pool2d 给的是窗口中（逐行）的第一个，"
                "也就是 max(dim) 返回的索引。")}[key]
            fail("{label} is wrong: {why}", "{label}不对：{why}", label=label, why=why, key=key)
    overlapped = overlapped_cells(c)
    if overlapped.any() and matches(grad[~overlapped], want[~overlapped], **tolerance):
        fail("{label} is wrong only at the cells that are the maximum of several overlapping windows: each window's "
             "gradient replaced the last one instead of adding to it. Accumulate: scatter_add_ or index_add_ (or "
             "`+=` through unique indices), not scatter_ or an assignment.",
             "{label}只在同时是多个重叠窗口最大值的格子上不对：每个窗口的梯度覆盖了上一个，而不是累加上去。请累加："
             "用 scatter_add_ 或 index_add_，而不是 scatter_ 或赋值。", label=label, key="overlap-overwrites")
    expect_near(grad, want, label, theirs=("the gradient of F.max_pool2d", "F.max_pool2d 的梯度"), **tolerance)


def judge(submission, key: str, draw, backward: bool = False) -> None:
    cases, result = run(submission, key, draw)
    no_builtin(result)
    for record, c in zip(result["records"], cases):
        expect_forward(record, c)
        if backward:
            expect_backward(record, c)


# -- checks -----------------------------------------------------------------------------------------

def draw_plain(rng, grad=True) -> list:
    """No padding: the default stride (= kernel_size, a non-square kernel), overlapping windows (stride < kernel),
    windows with gaps between them (stride > kernel), stride given as a pair."""
    c = randint(rng, 2, 3)
    return [case(rng, integers(rng, (2, c, randint(rng, 6, 7), randint(rng, 8, 9))), (2, 3), dilation=(2, 1),
                 grad=grad),
            case(rng, integers(rng, (1, c, 7, 6)), 3, stride=(1, 2), dilation=2, grad=grad),
            case(rng, integers(rng, (2, 1, 8, 9)), (2, 2), stride=3, dilation=(1, 2), grad=grad)]


def draw_padded(rng, grad=True) -> list:
    """Padding over negative values only (a zero there would win every border window), and positive ones inside."""
    def negative_border(shape, width):
        x = integers(rng, shape, 1, 5)
        x[..., :width + 2, :] = -integers(rng, x[..., :width + 2, :].shape, 1, 5)
        x[..., -(width + 2):, :] = -integers(rng, x[..., -(width + 2):, :].shape, 1, 5)
        x[..., :, :width + 2] = -integers(rng, x[..., :, :width + 2].shape, 1, 5)
        x[..., :, -(width + 2):] = -integers(rng, x[..., :, -(width + 2):].shape, 1, 5)
        return x
    return [case(rng, negative_border((2, 2, randint(rng, 7, 8), 9), 1), 3, stride=2, padding=1, dilation=(1, 2),
                 grad=grad),
            case(rng, negative_border((1, 3, 9, randint(rng, 7, 8)), 2), (4, 3), stride=(2, 1), padding=(2, 1),
                 dilation=1, grad=grad)]


def draw_edges(rng) -> list:
    w = randint(rng, 5, 7)
    return [case(rng, integers(rng, (0, 2, 4, w)), 2),
            case(rng, integers(rng, (1, 1, 1, w)), (1, 3), stride=1),
            case(rng, integers(rng, (2, 3, 5, w)), 1, stride=2),
            case(rng, integers(rng, (1, 2, 3, 2)), (3, 2))]


@check("max_pool2d matches F.max_pool2d: default and explicit strides, overlapping windows and gaps", points=2,
       zh="max_pool2d 与 F.max_pool2d 一致：默认和给定的 stride、重叠的窗口和有间隔的窗口")
def test_forward(submission, rng):
    judge(submission, "plain", lambda: draw_plain(rng))
    x = torch.randn(1, 2, 5, 6, generator=rng)
    expect_cpu_only(submission, [("max_pool2d", [x, 2])])  # a GPU at hand changes nothing


@check("max_pool2d pads with -inf: windows over negative borders match F.max_pool2d", points=1,
       zh="max_pool2d 用 -inf 填充：落在负值边界上的窗口与 F.max_pool2d 一致", depends="forward")
def test_padding(submission, rng):
    judge(submission, "padded", lambda: draw_padded(rng))


@check("max_pool2d handles the edges: N = 0, one channel, H = 1, a 1x1 kernel with stride 2, a 1x1 output", points=1,
       zh="max_pool2d 能处理边界情况：N = 0、单通道、H = 1、stride 为 2 的 1x1 kernel、1x1 的输出", depends="forward")
def test_edges(submission, rng):
    judge(submission, "edges", lambda: draw_edges(rng))


@check("max_pool2d keeps the input's dtype (float16, bfloat16), with F.max_pool2d's exact values", points=1,
       zh="max_pool2d 保持输入的 dtype（float16、bfloat16），数值与 F.max_pool2d 完全相同", depends="padding")
def test_dtype(submission, rng):
    def draw():
        return [case(rng, (draw_padded(rng, grad=False)[0]["x"] + 0.25 * torch.randn(1, generator=rng,
                                                                                    dtype=torch.float64)).half(),
                     3, stride=2, padding=1, grad=False),
                case(rng, torch.randn(2, 3, 6, 8, generator=rng, dtype=torch.float64).bfloat16(), (2, 3), padding=1,
                     grad=False)]  # W: (8 + 2 - 3) / 3 is not whole: an output size rounded up shows on every draw
    cases, result = run(submission, "dtype", draw)
    no_builtin(result)
    for record, c in zip(result["records"], cases):
        out = output(record, c)
        s = settings(c)
        want = F.max_pool2d(c["x"], s["kernel_size"], s["stride"], s["padding"], s["dilation"])
        expect_shape(out, want, c)
        if out.dtype != want.dtype:
            fail("{what} returned {got}, expected {want}: max pooling only picks values, so it keeps the dtype of its "
                 "input. A tensor of the default dtype crept in (torch.full(..., float(\"-inf\")) or torch.zeros without "
                 "dtype=x.dtype?): pad with F.pad(x, ..., value=float(\"-inf\")), which keeps x's dtype.",
                 "{what} 返回的是 {got}，应为 {want}：最大池化只是挑选数值，所以保持输入的 dtype。混进了一个默认 dtype 的 "
                 "tensor（没有 `dtype=x.dtype` 的 `torch.full(..., float(\"-inf\"))` 或 torch.zeros？）：请用 "
                 "`F.pad(x, ..., value=float(\"-inf\"))` 填充，它保持 x 的 dtype。", what=call_text(c),
                 got=str(out.dtype).removeprefix("torch."), want=str(want.dtype).removeprefix("torch."),
                 key="dtype-lost")
        expect_near(out, want, call_text(c), rtol=0, atol=0)


@check("backward sends each window's gradient to its maximum (the first among ties) and adds overlapping windows",
       points=3, zh="backward 把每个窗口的梯度传给它的最大值（并列时给第一个），重叠窗口的梯度相加", depends="forward")
def test_backward(submission, rng):
    judge(submission, "plain", lambda: draw_plain(rng), backward=True)
    judge(submission, "padded", lambda: draw_padded(rng), backward=True)
    judge(submission, "edges", lambda: draw_edges(rng), backward=True)


@check("the gradient comes from your MaxPool2dFunction.backward, which does not call autograd", points=1,
       zh="梯度来自你的 MaxPool2dFunction.backward，而且它不调用 autograd", depends="backward")
def test_own_backward(submission, rng):
    # one input whose output size is whole however it is rounded (8 x 6 by a 2 x 2 window, stride 2): a wrong output
    # size, the forward checks' lesson, does not hide whose backward this is
    cases, result = run(submission, "own", lambda: [case(rng, integers(rng, (2, 2, 8, 6)), 2)])
    record = result["records"][0]
    if "error" in record:
        fail("max_pool2d raised on x{shape} with a 2 x 2 window (see the forward check above), so there is no output "
             "whose backward could be looked at yet.",
             "max_pool2d 在 x{shape} 和 2 x 2 窗口上抛出了异常（见上面的前向检查），所以还没有可以查看其 backward 的输出。",
             shape=[2, 2, 8, 6], key="by-hand-not-right")
    if not record.get("custom"):
        fail("The output of max_pool2d was made by autograd's own {node}, not by an autograd.Function of yours: its "
             "gradient is autograd's. Compute the output in MaxPool2dFunction.forward, return "
             "MaxPool2dFunction.apply(...) from max_pool2d, and write the backward.",
             "max_pool2d 的输出是由 autograd 自己的 {node} 产生的，而不是你的 autograd.Function：它的梯度是 autograd 算的。"
             "请在 MaxPool2dFunction.forward 中计算输出，让 max_pool2d 返回 MaxPool2dFunction.apply(...)，并写好 backward。",
             node=verbatim(f"`{record.get('node')}`"), key="no-function")
    if result["autograd"]:
        fail("MaxPool2dFunction.backward calls autograd ({calls}): the gradient is autograd's, not yours. Send each "
             "window's gradient to the position forward saved (scatter_add_ into zeros).",
             "MaxPool2dFunction.backward 调用了 autograd（{calls}）：梯度是 autograd 算的，不是你算的。请把每个窗口的梯度"
             "送到 forward 保存的位置（对全 0 tensor 做 scatter_add_）。",
             calls=verbatim(", ".join(f"`{c}`" for c in result["autograd"])), key="autograd-in-backward")


@check("max pooling is your own (no F.max_pool2d, nn.MaxPool2d, max_unpool2d...)", points=1,
       zh="最大池化是你自己写的（不用 F.max_pool2d、nn.MaxPool2d、max_unpool2d……）")
def test_no_builtin(submission, rng):
    cases, result = run(submission, "plain", lambda: draw_plain(rng))
    no_builtin(result)
    if not all(matches(r.get("out"), reference(c), rtol=1e-7, atol=1e-9) for r, c in zip(result["records"], cases)):
        fail("max_pool2d is not right yet, so there is no max pooling of your own to credit: this point comes with "
             "outputs that match F.max_pool2d's.",
             "max_pool2d 还不正确，所以还没有可以计分的你自己写的最大池化：输出与 F.max_pool2d 一致之后才能得到这一分。",
             key="by-hand-not-right")
