"""Hidden checks of fs09: Conv2d from scratch through F.unfold, against F.conv2d.

A probe runs the learner's conv2d on the cases a check drew (float64 unless the check is about dtypes), each under a
TorchFunctionMode that records the torch functions called (F.conv2d and every other convolution are forbidden), and
backpropagates sum(out * g) for the gradients; an error is recorded per case, with the learner's line. The judge
compares with F.conv2d in float64 and names a known slip only when the wrong output equals that slip, computed here:
the kernel flipped (a true convolution), the bias left out, the groups taken as interleaved channels, height and width
swapped, the dilation or the stride left out of the output size.

Shapes are drawn so that nothing lines up by chance: H != W, kH != kW, C_in != C_out, strides, paddings and dilations
that differ between height and width, and the edges: N = 1 and N = 0, one input channel, H = 1, a 1x1 kernel with a
stride larger than it, a 1x1 output, depthwise groups, x and weight in channels_last memory layout (where `.view` of
the kernels fails).

Kata variants: `variant("padding")` is how the border is padded: with zeros as F.conv2d does (the exercise as
written), or circularly (the far side wraps around), as nn.Conv2d(padding_mode="circular") does.
"""

import re

import torch
import torch.nn.functional as F

from grader.checking import (Text, check, expect_tensor, fail, learner_call, matches, probe, recording_calls, relation,
                             relation_key, relation_text, variant, verbatim, where)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)

# -- probes (run in the sandbox) ---------------------------------------------------------------


@probe
def conv_run(module, cases):
    """conv2d on each case ({x, weight, bias, stride, padding, dilation, groups, g}): its output and the gradients of
    sum(out * g) for x, weight and bias, or its error; and the names of the torch functions it called."""

    called = set()

    records = []
    for case in cases:
        layout = torch.channels_last if case.get("channels_last") else torch.contiguous_format
        x = case["x"].clone(memory_format=layout).requires_grad_(case["x"].is_floating_point())
        weight = case["weight"].clone(memory_format=layout).requires_grad_(True)
        bias = None if case["bias"] is None else case["bias"].clone().requires_grad_(True)
        with recording_calls(called):
            out, error = learner_call(module, module.conv2d, x, weight, bias, stride=case["stride"],
                                      padding=case["padding"], dilation=case["dilation"], groups=case["groups"])
        if error and error["not_started"]:
            raise NotImplementedError
        if error:  # the judge explains it, and the other cases still run
            records.append({"error": error})
            continue
        record = {"out": out.detach() if isinstance(out, torch.Tensor) else out}
        g = case.get("g")
        if g is not None and isinstance(out, torch.Tensor) and out.shape == g.shape and out.requires_grad:
            (out * g.to(out.dtype)).sum().backward()
            record["grads"] = [x.grad, weight.grad, None if bias is None else bias.grad]
        elif g is not None and isinstance(out, torch.Tensor) and out.shape == g.shape:
            record["grads"] = "no graph"
        records.append(record)
    return {"records": records, "calls": sorted(called)}


# -- draws and references (the judge) -------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high]."""
    return int(torch.randint(low, high + 1, (), generator=rng))


def two_different(rng, low: int, high: int) -> tuple[int, int]:
    """Two different ints in [low, high], in a drawn order."""
    a = randint(rng, low, high)
    b = randint(rng, low, high - 1)
    return a, b + (b >= a)


def circular() -> bool:
    return variant("padding")["name"] == "circular"


def pair(value) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def case(rng, n, c_in, c_out, hw, khw, *, stride=1, padding=0, dilation=1, groups=1, bias=True,
         dtype=torch.float64, grad=False, channels_last=False) -> dict:
    """A drawn case; with `channels_last`, the probe hands x and weight over in that memory layout (not contiguous:
    `.view` on them fails where `.reshape` copies)."""
    x = torch.randn(n, c_in, *hw, generator=rng, dtype=torch.float64)
    weight = torch.randn(c_out, c_in // groups, *khw, generator=rng, dtype=torch.float64)
    drawn = {"x": x.to(dtype), "weight": weight.to(dtype),
             "bias": torch.randn(c_out, generator=rng, dtype=torch.float64).to(dtype) if bias else None,
             "stride": stride, "padding": padding, "dilation": dilation, "groups": groups, "g": None,
             "channels_last": channels_last}
    if grad:
        drawn["g"] = torch.randn(reference(drawn).shape, generator=rng, dtype=torch.float64)
    return drawn


def reference(c: dict, *, weight=None, bias="given", x=None, pad_mode=None, padding=None, dilation=None,
              stride=None) -> torch.Tensor:
    """F.conv2d in float64 on a case, with the padding of this draw; the keywords replace a part of it (a slip)."""
    x = (c["x"] if x is None else x).double()
    weight = (c["weight"] if weight is None else weight).double()
    bias = c["bias"] if isinstance(bias, str) else bias
    bias = None if bias is None else bias.double()
    p = pair(c["padding"] if padding is None else padding)
    mode = pad_mode or ("circular" if circular() else "zeros")
    if mode == "circular":
        x = F.pad(x, (p[1], p[1], p[0], p[0]), mode="circular")
        p = (0, 0)
    return F.conv2d(x, weight, bias, c["stride"] if stride is None else stride, p,
                    c["dilation"] if dilation is None else dilation, c["groups"])


def call_text(c: dict) -> str:
    """`conv2d(x[2, 3, 5, 7], weight[4, 3, 2, 3], bias, stride=(1, 2), ...)` for messages, the defaults left out."""
    parts = [f"x{list(c['x'].shape)}", f"weight{list(c['weight'].shape)}", "bias" if c["bias"] is not None else "None"]
    for name, default in (("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1)):
        if c[name] != default:
            parts.append(f"{name}={c[name]}")
    notes = [] if c["x"].dtype == torch.float64 else [str(c["x"].dtype).removeprefix("torch.")]
    notes += ["channels_last"] if c.get("channels_last") else []
    return f"`conv2d({', '.join(parts)})`" + (f" ({', '.join(notes)})" if notes else "")


def run(submission, key: str, draw) -> tuple[list, dict]:
    """The cases `draw()` makes and the learner's conv2d on them, once per grading for `key`."""
    def make():
        cases = draw()
        return cases, submission.probe(conv_run, cases, what=Text("your `conv2d` on {n} inputs",
                                                                  "你的 `conv2d` 处理 {n} 组输入", n=len(cases)))
    return submission.once(key, make)


def plain_runs(submission, rng) -> bool:
    """Whether conv2d ran on every case without groups (the basic check's): then an error only groups bring is theirs."""
    _, result = run(submission, "basic", lambda: draw_plain(rng))
    return not any("error" in record for record in result["records"])


def conv_builtins(calls: list[str]) -> list[str]:
    """The convolutions of torch among the functions called (unfold and fold are not)."""
    return forbidden_calls("conv2d", calls)


def by_hand_only(result: dict) -> None:
    """A value computed by F.conv2d (or nn.Conv2d, torch.convolution...) is not earned."""
    used = conv_builtins(result["calls"])
    if used:
        fail("Your conv2d calls torch's own {names}: the values are torch's, not yours. Build the output from the "
             "windows F.unfold cuts out, with a matrix product.",
             "你的 conv2d 调用了 torch 自带的 {names}：这些值是 torch 算的，不是你算的。请用 F.unfold 切出的窗口和矩阵乘法"
             "得到输出。", names=verbatim(", ".join(f"`{n}`" for n in used)), key="builtin-conv")


ERRORS = [  # (text in the learner's error, the lesson)
    ("is invalid for input of size", Text(
        "the output size does not match the number of windows F.unfold made: H_out = (H + 2 * padding[0] - dilation[0] "
        "* (kH - 1) - 1) // stride[0] + 1, and W_out alike with the second value of each pair.",
        "输出尺寸与 F.unfold 切出的窗口数对不上：H_out = (H + 2 * padding[0] - dilation[0] * (kH - 1) - 1) // stride[0] + 1，"
        "W_out 同理，用每个二元组的第二个值。"), "output-size"),
    ("cannot be multiplied", Text(
        "the kernels and the columns do not fit in a matrix product: flatten weight to [C_out, C_in / groups * kH * kW] "
        "and, with groups, split the columns into groups of C_in / groups * kH * kW rows.",
        "kernel 和列无法做矩阵乘法：把 weight 展平成 [C_out, C_in / groups * kH * kW]；有 groups 时，"
        "把列分成每组 C_in / groups * kH * kW 行。"), "shapes-do-not-multiply"),
    ("view size is not compatible", Text(
        "`.view` needs strides that allow the new shape, and x and weight may come in any memory layout (here "
        "channels_last, as a model converted with .to(memory_format=torch.channels_last) passes them): use `.reshape`, "
        "which copies only when it must.",
        "`.view` 要求步长允许新的形状，而 x 和 weight 可能是任何内存布局（这里是 channels_last，"
        "用 .to(memory_format=torch.channels_last) 转换过的模型就这样传入）：请用 `.reshape`，它只在必要时复制。"),
     "view-not-contiguous"),
    ("must match the size of tensor", Text(
        "two tensors do not line up: with groups, both the columns and the kernels need a group axis "
        "([N, G, C_in / G * kH * kW, L] and [G, C_out / G, C_in / G * kH * kW]).",
        "两个 tensor 对不齐：有 groups 时，列和 kernel 都需要一个组的维度（[N, G, C_in / G * kH * kW, L] 和 "
        "[G, C_out / G, C_in / G * kH * kW]）。"), "shapes-do-not-multiply"),
]


def output(record: dict, c: dict) -> torch.Tensor:
    """The output of one case, or a failure that explains the learner's error."""
    what = call_text(c)
    if "error" in record:
        err = record["error"]
        message = err["message"].splitlines()[0][:200] if err["message"] else ""
        for needle, lesson, key in ERRORS:
            if needle in err["message"]:
                fail("{what} raised {type}: {message}{where}. Likely: {lesson}",
                     "{what} 抛出了 {type}：{message}{where}。可能的原因：{lesson}", what=what,
                     type=verbatim(err["type"]), message=verbatim(message), where=where(err), lesson=lesson, key=key)
        fail("{what} raised {type}: {message}{where}.", "{what} 抛出了 {type}：{message}{where}。", what=what,
             type=verbatim(err["type"]), message=verbatim(message), where=where(err), key=f"raised-{err['type']}")
    return expect_tensor(record["out"], what, floating=True)


def scaled(want: torch.Tensor) -> float:
    """The absolute tolerance of a float64 case: 1e-6 of its largest value. A result rounded to float32 on the way
    (about 6e-8 of that) is always within it and a wrong one never, whatever the draw: values near 0 do not decide."""
    return 1e-6 * float(want.abs().max()) if want.numel() else 0.0


def expect_near(got, want, what, *, rtol=1e-6, atol=None):
    """Fail unless `got` has `want`'s values: the first wrong entry, and how the whole relates to the right value."""
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=scaled(want) if atol is None else atol)
    if not bad.any():
        return
    idx = tuple(int(i) for i in bad.nonzero()[0])
    rel = relation(got, want)
    how = Text("; the whole {relation}", "；整体上{relation}", relation=relation_text(rel)) if rel else ""
    fail("{what} is wrong at {idx}: {got:.6g} where F.conv2d gives {want:.6g} ({bad} of {total} entries differ{how}).",
         "{what} 在 {idx} 处不对：F.conv2d 给出 {want:.6g}，你的是 {got:.6g}（{total} 个元素中有 {bad} 个不同{how}）。",
         what=what, idx=list(idx), got=float(got[idx]), want=float(want[idx]), bad=int(bad.sum()), total=got.numel(),
         how=how, key=relation_key(rel) if rel else "wrong-values")


def permuted_channels(c: dict) -> torch.Tensor:
    """x with its channels reordered so that the contiguous blocks hold channels g, g + G, g + 2G...: what a split
    with a stride (x[:, g::G]) sends to group g."""
    groups, channels = c["groups"], c["x"].shape[1]
    order = torch.cat([torch.arange(g, channels, groups) for g in range(groups)])
    return c["x"][:, order]


def expect_shape(out, want, c: dict) -> None:
    """The output's shape, with the slips of the output size named."""
    if list(out.shape) == list(want.shape):
        return
    what = call_text(c)
    n, o, h, w = want.shape
    if list(out.shape) == [n, o, w, h]:
        fail("{what} has shape {got}, expected {want}: height and width are swapped. The output is [N, C_out, H_out, "
             "W_out]: reshape the L = H_out * W_out windows as (H_out, W_out), rows first, as F.unfold lists them.",
             "{what} 的形状为 {got}，应为 {want}：高和宽对调了。输出是 [N, C_out, H_out, W_out]：把 L = H_out * W_out "
             "个窗口按 (H_out, W_out) reshape，先行后列，这正是 F.unfold 排列它们的顺序。", what=what,
             got=list(out.shape), want=list(want.shape), key="height-width-swapped")
    slips = [("dilation", {"dilation": 1}, Text("the dilation is left out: a window with dilation d spans d * (k - 1) + 1 "
                                                 "pixels.", "忽略了 dilation：dilation 为 d 的窗口跨越 d * (k - 1) + 1 个像素。"),
              "dilation-ignored"),
             ("stride", {"stride": 1}, Text("the stride is left out: a window starts every stride pixels.",
                                             "忽略了 stride：每隔 stride 个像素才开始一个窗口。"), "stride-ignored"),
             ("padding", {"padding": 0}, Text("the padding is left out: it adds `padding` pixels on each side.",
                                               "忽略了 padding：它在每一边加上 `padding` 个像素。"), "padding-ignored")]
    for name, change, why, key in slips:
        if c[name] != list(change.values())[0] and list(reference(c, **change).shape) == list(out.shape):
            fail("{what} has shape {got}, expected {want}: {why}", "{what} 的形状为 {got}，应为 {want}：{why}", what=what,
                 got=list(out.shape), want=list(want.shape), why=why, key=key)
    fail("{what} has shape {got}, expected {want}: H_out = (H + 2 * padding[0] - dilation[0] * (kH - 1) - 1) // stride[0] "
         "+ 1, and W_out alike.", "{what} 的形状为 {got}，应为 {want}：H_out = (H + 2 * padding[0] - dilation[0] * "
         "(kH - 1) - 1) // stride[0] + 1，W_out 同理。", what=what, got=list(out.shape), want=list(want.shape),
         key="output-size")


def expect_case(record: dict, c: dict) -> None:
    """One case's output against F.conv2d's; a wrong one that equals a known slip is named."""
    out = output(record, c)
    want = reference(c)
    expect_shape(out, want, c)
    if out.dtype != c["x"].dtype:
        return  # the dtype check's lesson; the values are judged here at the precision they came back in
    if matches(out, want, rtol=1e-6, atol=scaled(want)):
        return
    what = call_text(c)
    p = pair(c["padding"])
    slips = [(reference(c, weight=c["weight"].flip(-2, -1)),
              Text("the kernel is flipped: F.conv2d (like every conv layer of deep learning) is a cross-correlation, "
                   "sum(window * kernel) with the kernel as it is, not the flipped kernel of a textbook convolution.",
                   "kernel 被翻转了：F.conv2d（和深度学习中所有的卷积层一样）是互相关，即 sum(window * kernel)，kernel 保持原样，"
                   "而不是教科书卷积中翻转过的 kernel。"), "kernel-flipped")]
    if c["bias"] is not None:
        slips.append((reference(c, bias=None), Text("the bias is not added: add bias[o] to every position of output "
                                                    "channel o.", "没有加 bias：要把 bias[o] 加到输出通道 o 的每个位置上。"),
                      "bias-missing"))
    if c["groups"] > 1:
        slips.append((reference(c, x=permuted_channels(c)),
                      Text("the groups are interleaved: group g got the channels g, g + G, g + 2G... Group g holds a "
                           "contiguous block, the channels g * C_in / G to (g + 1) * C_in / G - 1, as the rows of "
                           "F.unfold's columns (channels outermost) and of weight's output channels are ordered.",
                           "分组交错了：第 g 组拿到的是通道 g、g + G、g + 2G……第 g 组应是一段连续的通道，从 g * C_in / G 到 "
                           "(g + 1) * C_in / G - 1，这与 F.unfold 的列（通道在最外层）和 weight 的输出通道的排列顺序一致。"),
                      "groups-interleaved"))
    if p != (0, 0) and circular():
        slips.append((reference(c, pad_mode="zeros"),
                      Text("the border is padded with zeros: this convolution pads circularly, the far side of the image "
                           "wrapping around (F.pad(x, ..., mode=\"circular\") before F.unfold).",
                           "边界补的是 0：这个卷积要循环填充，图像的另一侧绕回来补上（在 F.unfold 之前用 "
                           "`F.pad(x, ..., mode=\"circular\")`）。"), "zero-padding"))
    for slip, why, key in slips:
        if matches(out, slip, rtol=1e-6, atol=scaled(slip)):
            fail("{what} is wrong: {why}", "{what} 不对：{why}", what=what, why=why, key=key)
    expect_near(out, want, what)


def expect_cases(submission, key: str, draw) -> None:
    cases, result = run(submission, key, draw)
    by_hand_only(result)
    for record, c in zip(result["records"], cases):
        expect_case(record, c)


def padded_shape_slip(result: dict, cases: list) -> None:
    """With circular padding: F.pad's pairs given in the order (top, bottom, left, right) pad the wrong axes."""
    if not circular():
        return
    for record, c in zip(result["records"], cases):
        p = pair(c["padding"])
        if p[0] == p[1]:
            continue
        swapped = F.pad(c["x"].double(), (p[0], p[0], p[1], p[1]), mode="circular")
        slip = F.conv2d(swapped, c["weight"].double(), None if c["bias"] is None else c["bias"].double(), c["stride"], 0,
                        c["dilation"], c["groups"])
        # unfold on the wrongly padded x makes another number of windows: a reshape to the right size then fails.
        # Where both paddings make as many windows (H - dilation[0] * (kH - 1) = W - dilation[1] * (kW - 1) with
        # stride 1, say), the reshape succeeds and lays the slip's windows out in the right shape; a failed reshape
        # then says nothing about the padding: its target size is what is wrong.
        size = re.search(r"invalid for input of size (\d+)", record["error"]["message"]) if "error" in record else None
        columns = c["x"].shape[0] * c["weight"].shape[1] * c["groups"] * c["weight"].shape[2] * c["weight"].shape[3]
        wrong, right = (columns * out.shape[2] * out.shape[3] for out in (slip, reference(c)))
        got = record.get("out")
        if isinstance(got, torch.Tensor) and got.numel() == slip.numel():
            got = got.reshape(slip.shape)
        if matches(got, slip, rtol=1e-6, atol=scaled(slip)) \
                or size and wrong != right and int(size.group(1)) == wrong:
            fail("{what} pads the wrong axes: F.pad takes its pairs from the last dimension back, (left, right, top, "
                 "bottom), so padding[1] (width) comes first: F.pad(x, (pw, pw, ph, ph), mode=\"circular\").",
                 "{what} 填充的维度不对：F.pad 的参数从最后一维往前排，即 (左, 右, 上, 下)，所以 padding[1]（宽）在前："
                 "`F.pad(x, (pw, pw, ph, ph), mode=\"circular\")`。", what=call_text(c), key="pad-order")


# -- checks -----------------------------------------------------------------------------------------

def draw_plain(rng, grad=False) -> list:
    """Stride 1, no padding: a non-square kernel on a non-square input, with and without bias."""
    c_in, c_out = two_different(rng, 2, 4)
    h = randint(rng, 5, 7)
    kh, kw = two_different(rng, 1, 3)
    wider = randint(rng, 1, 2)  # W - H, never kW - kH: the output is not square, so swapping H_out and W_out shows
    wider += 0 < kw - kh <= wider
    return [case(rng, randint(rng, 2, 3), c_in, c_out, (h, h + wider), (kh, kw), grad=grad),
            case(rng, 2, c_out, c_in, (h + 1, h), (kw, kh), bias=False, grad=grad)]


@check("conv2d matches F.conv2d: non-square kernels and inputs, with and without bias", points=2,
       zh="conv2d 与 F.conv2d 一致：非方形的 kernel 和输入，有无 bias 都对")
def test_basic(submission, rng):
    expect_cases(submission, "basic", lambda: draw_plain(rng))


def draw_strided(rng, grad=False) -> list:
    sh, sw = two_different(rng, 1, 3)
    ph, pw = two_different(rng, 0, 2)
    c_in, c_out = two_different(rng, 2, 4)
    return [case(rng, 2, c_in, c_out, (randint(rng, 6, 8), randint(rng, 9, 10)), (3, 2), stride=(sh, sw),
                 padding=(ph, pw), grad=grad),
            case(rng, 1, c_out, c_in, (7, 6), (2, 3), stride=2, padding=1, grad=grad)]


@check("conv2d matches F.conv2d with strides and paddings (ints, and pairs that differ for H and W)", points=2,
       zh="有 stride 和 padding 时（整数，或对 H 和 W 不同的二元组），conv2d 与 F.conv2d 一致", depends="basic")
def test_stride_padding(submission, rng):
    cases, result = run(submission, "stride_padding", lambda: draw_strided(rng))
    by_hand_only(result)
    padded_shape_slip(result, cases)
    for record, c in zip(result["records"], cases):
        expect_case(record, c)


@check("conv2d matches F.conv2d with dilations", points=1, zh="有 dilation 时 conv2d 与 F.conv2d 一致",
       depends=("basic", "stride_padding"))
def test_dilation(submission, rng):
    def draw():
        dh, dw = two_different(rng, 1, 3)
        return [case(rng, 2, 3, 2, (randint(rng, 8, 9), randint(rng, 10, 11)), (2, 3), dilation=(dh, dw),
                     padding=(1, 2)),
                case(rng, 1, 2, 3, (9, 8), (3, 2), dilation=2, stride=(2, 1))]
    cases, result = run(submission, "dilation", draw)
    by_hand_only(result)
    padded_shape_slip(result, cases)
    for record, c in zip(result["records"], cases):
        expect_case(record, c)


def draw_grouped(rng, grad=False) -> list:
    groups = randint(rng, 2, 3)
    per_in = randint(rng, 2, 3)  # two channels a group at least: contiguous and interleaved blocks differ
    per_out = randint(rng, 1, 3)
    c_in = randint(rng, 2, 3)
    return [case(rng, 2, groups * per_in, groups * per_out, (5, 6), (2, 3), groups=groups, padding=(1, 0), grad=grad),
            case(rng, 2, c_in, 2 * c_in, (6, 5), (3, 3), groups=c_in, padding=1, grad=grad)]  # depthwise


@check("conv2d matches F.conv2d with groups (depthwise among them)", points=2,
       zh="有 groups 时（包括 depthwise）conv2d 与 F.conv2d 一致", depends="basic")
def test_groups(submission, rng):
    cases, result = run(submission, "groups", lambda: draw_grouped(rng))
    by_hand_only(result)
    for record, c in zip(result["records"], cases):
        if "error" in record and "cannot be multiplied" in record["error"]["message"] and c["groups"] > 1 \
                and plain_runs(submission, rng):
            fail("{what} raised {type}: {message}{where}. With groups=G, output channel block g sees only input channel "
                 "block g: split F.unfold's columns into G blocks of C_in / G * kH * kW rows, the kernels into G blocks "
                 "of C_out / G, and multiply block by block (a batched matmul over a group axis).",
                 "{what} 抛出了 {type}：{message}{where}。groups=G 时，第 g 块输出通道只看第 g 块输入通道："
                 "把 F.unfold 的列分成 G 块、每块 C_in / G * kH * kW 行，把 kernel 分成 G 块、每块 C_out / G 个，"
                 "再逐块相乘（在组的维度上做批量矩阵乘法）。", what=call_text(c), type=verbatim(record["error"]["type"]),
                 message=verbatim(record["error"]["message"].splitlines()[0][:160]), where=where(record["error"]),
                 key="groups-ignored")
        expect_case(record, c)


@check("conv2d handles the edges: N = 1 and N = 0, one channel, H = 1, a 1x1 kernel wider-strided, a 1x1 output, "
       "channels_last tensors", points=1,
       zh="conv2d 能处理边界情况：N = 1 和 N = 0、单通道、H = 1、stride 大于 1x1 kernel、1x1 的输出、channels_last 的 tensor",
       depends=("basic", "stride_padding"))
def test_edges(submission, rng):
    def draw():
        w = randint(rng, 4, 6)
        return [case(rng, 1, 1, 1, (1, w), (1, 3)),
                case(rng, 2, 3, 2, (randint(rng, 4, 5), w), (1, 1), stride=2),
                case(rng, 1, 2, 3, (3, 2), (3, 2)),
                case(rng, 0, 2, 3, (4, w), (2, 2), padding=1),
                case(rng, 2, 3, 2, (5, w), (2, 3), padding=(1, 0), channels_last=True)]
    expect_cases(submission, "edges", draw)


@check("conv2d returns the dtype of its input (float32, bfloat16) with F.conv2d's values", points=1,
       zh="conv2d 返回与输入相同的 dtype（float32、bfloat16），数值与 F.conv2d 一致",
       depends=("basic", "stride_padding", "groups"))
def test_dtype(submission, rng):
    cases, result = run(submission, "dtype", lambda: [
        case(rng, 2, 2, 3, (5, 6), (3, 2), padding=1, dtype=torch.float32),
        case(rng, 2, 4, 2, (6, 5), (2, 2), groups=2, dtype=torch.bfloat16)])
    by_hand_only(result)
    for record, c in zip(result["records"], cases):
        out = output(record, c)
        want = reference(c)
        expect_shape(out, want, c)
        if out.dtype != c["x"].dtype:
            fail("{what} returned {got}, expected {want}: a convolution keeps the dtype of its input. Something made a "
                 "tensor of the default dtype (torch.zeros(...) without dtype=x.dtype, or a .float()): build the result "
                 "from x's own operations, or allocate with x.new_zeros(...).",
                 "{what} 返回的是 {got}，应为 {want}：卷积保持输入的 dtype。有地方创建了默认 dtype 的 tensor（没有 "
                 "`dtype=x.dtype` 的 `torch.zeros(...)`，或者 `.float()`）：请用 x 自身的运算得到结果，或用 "
                 "`x.new_zeros(...)` 分配。", what=call_text(c), got=str(out.dtype).removeprefix("torch."),
                 want=str(c["x"].dtype).removeprefix("torch."), key="dtype-lost")
        scale = float(want.abs().max())
        loose = {torch.float32: (1e-4, 1e-5 * scale), torch.bfloat16: (3e-2, 3e-2 * scale)}[c["x"].dtype]
        expect_near(out, want, call_text(c), rtol=loose[0], atol=loose[1])


@check("the gradients of conv2d for x, weight and bias match F.conv2d's", points=1,
       zh="conv2d 对 x、weight 和 bias 的梯度与 F.conv2d 一致",
       depends=("basic", "stride_padding", "groups"))
def test_gradient(submission, rng):
    cases, result = run(submission, "gradient", lambda: draw_plain(rng, grad=True)[:1] + draw_strided(rng, grad=True)[:1]
                        + draw_grouped(rng, grad=True)[:1])
    by_hand_only(result)
    for record, c in zip(result["records"], cases):
        out = output(record, c)
        expect_shape(out, reference(c), c)
        if record.get("grads") == "no graph":
            fail("{what} does not require grad: the graph from x and weight to the output was cut (.detach(), .data, "
                 ".item(), NumPy, or torch.no_grad()).",
                 "{what} 不需要梯度：从 x 和 weight 到输出的计算图被切断了（`.detach()`、`.data`、`.item()`、NumPy，"
                 "或 `torch.no_grad()`）。", what=call_text(c), key="graph-cut")
        leaves = [None if t is None else t.clone().requires_grad_(True) for t in (c["x"], c["weight"], c["bias"])]
        want = torch.autograd.grad((reference({**c, "x": leaves[0], "weight": leaves[1], "bias": leaves[2]})
                                    * c["g"]).sum(), [t for t in leaves if t is not None])
        for name, got, expected in zip(("x", "weight", "bias"), record["grads"], want):
            label = Text("d(sum(out * g))/d {name} of {what}", "{what} 的 `d(sum(out * g))/d {name}`", name=name,
                         what=call_text(c))
            if got is None and name == "bias" and matches(out, reference(c, bias=None), rtol=1e-6, atol=1e-8):
                fail("{label} is None: the output is the convolution without the bias, so the bias never takes part. "
                     "Add bias[o] to every position of output channel o.",
                     "{label} 是 None：输出是没有 bias 的卷积，bias 根本没有参与计算。请把 bias[o] 加到输出通道 o 的每个位置上。",
                     label=label, key="bias-missing")
            if got is None:
                fail("{label} is None: {name} got no gradient; compute the output from {name} with tensor operations.",
                     "{label} 是 None：{name} 没有得到梯度；请用张量运算从 {name} 算出输出。", label=label, name=name,
                     key="graph-cut")
            expect_tensor(got, label, shape=list(expected.shape))
            expect_near(got, expected, label)


@check("conv2d computes the convolution itself (no F.conv2d, nn.Conv2d or other convolution of torch)", points=1,
       zh="conv2d 自己计算卷积（不用 F.conv2d、nn.Conv2d 或 torch 的其他卷积）")
def test_by_hand(submission, rng):
    cases, result = run(submission, "basic", lambda: draw_plain(rng))
    by_hand_only(result)
    if not all(matches(r.get("out"), ref, rtol=1e-6, atol=scaled(ref))
               for r, ref in zip(result["records"], map(reference, cases))):
        fail("conv2d is not right yet, so there is no convolution of your own to credit: this point comes with outputs "
             "that match F.conv2d's.",
             "conv2d 还不正确，所以还没有可以计分的你自己写的卷积：输出与 F.conv2d 一致之后才能得到这一分。",
             key="by-hand-not-right")
