"""Hidden checks of ex01: tensor creation, dtypes, copies and shared memory.

Memory sharing is observed, not guessed: probes call the learner's function inside the sandbox,
then write into the original (the NumPy array, or the tensor given to `snapshot`) and report
whether the returned tensor changed.
"""

import torch

from grader.checking import Text, check, expect_close, expect_tensor, explain, fail, probe, tensor_info
from grader.devices import expect_cpu_only


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


# -- make_weights ----------------------------------------------------------------------------

INT_REQUIRES_GRAD = {"can require gradients": (
    "Only floating-point tensors can require grad, and a list of Python ints becomes an int64 tensor: make the "
    "tensor float32 when you create it.",
    "只有浮点类型的 tensor 才能 requires_grad，而由 Python 整数组成的 list 会变成 int64 tensor：创建时就把它设为 float32。")}


@probe
def weights_probe(module, values, coef):
    """Call make_weights(values); when it is a leaf that requires grad, backpropagate sum(out * coef) (whatever
    its shape: a wrong shape costs the values check, not this one)."""
    out = module.make_weights(values)
    grad = None
    if isinstance(out, torch.Tensor) and out.requires_grad and out.is_leaf and out.numel() == coef.numel():
        (out.reshape(-1) * coef.to(out.dtype)).sum().backward()
        grad = out.grad
    return {"out": out, "grad": grad}


def draw_values(rng, kind: str) -> list:
    """A list for make_weights: ints only (torch.tensor makes it int64), ints and halves, or one int."""
    n = 1 if kind == "one" else int(torch.randint(3, 8, (1,), generator=rng))
    ints = torch.randint(-9, 10, (n,), generator=rng).tolist()
    if kind != "mixed":
        return ints
    halves = (torch.randint(-19, 20, (n,), generator=rng) / 2).tolist()
    return [h if k % 2 else i for k, (i, h) in enumerate(zip(ints, halves))]


def call_weights(submission, rng, values):
    coef = torch.randn(len(values), generator=rng)
    what = f"`make_weights({values})`"
    with explain(INT_REQUIRES_GRAD, key="int-requires-grad"):
        result = submission.probe(weights_probe, values, coef, what=what)
    return what, result, coef


@check("make_weights gives a float32 tensor with the values", points=1,
       zh="make_weights 返回包含这些数值的 float32 tensor")
def test_weights_values(submission, rng):
    for kind in ("ints", "mixed", "one"):  # one value: a squeeze() would drop the only axis
        values = draw_values(rng, kind)
        what, result, _ = call_weights(submission, rng, values)
        out = expect_tensor(result["out"], what, shape=[len(values)])
        if out.dtype == torch.int64:
            fail("{what} has dtype int64, expected float32: a list of Python ints becomes an int64 tensor by default; "
                 "weights must be float32 (say so with dtype=...).",
                 "{what} 的 dtype 是 int64，应为 float32：由 Python 整数组成的 list 默认会变成 int64 tensor；"
                 "权重必须是 float32（用 dtype=... 指定）。", what=what, key="int64-default")
        if out.dtype == torch.float64:
            fail("{what} has dtype float64, expected float32: float64 is NumPy's default, not PyTorch's; model "
                 "weights are float32.",
                 "{what} 的 dtype 是 float64，应为 float32：float64 是 NumPy 的默认类型，不是 PyTorch 的；模型权重用 float32。",
                 what=what, key="float64-weights")
        expect_tensor(out, what, dtype=torch.float32)
        expect_close(out, torch.tensor(values, dtype=torch.float32), what, rtol=0, atol=0)
    expect_cpu_only(submission, [("make_weights", [values])])  # a GPU at hand changes nothing


@check("make_weights gives a leaf that requires grad and receives .grad", points=2,
       zh="make_weights 返回 requires_grad 的叶子张量，并能得到 .grad", depends="weights_values")
def test_weights_grad(submission, rng):
    values = draw_values(rng, "ints")
    what, result, coef = call_weights(submission, rng, values)
    out = expect_tensor(result["out"], what)
    if out.numel() != len(values):
        expect_tensor(out, what, shape=[len(values)])
    info = tensor_info(out)
    if not info.get("requires_grad"):
        fail("{what} does not require grad (requires_grad=False): autograd will not compute a gradient for it. "
             "Ask for requires_grad=True.",
             "{what} 没有 requires_grad（requires_grad=False）：autograd 不会为它计算梯度。请设置 requires_grad=True。",
             what=what, key="no-requires-grad")
    if not info.get("is_leaf"):
        fail("{what} requires grad but is not a leaf (grad_fn={grad_fn}): it was computed from another tensor (a "
             ".float() or .to() after requires_grad=True?), so backward() leaves its .grad None and an optimizer "
             "cannot update it. Create it with the right dtype and requires_grad in one step.",
             "{what} 虽然 requires_grad，但不是叶子张量（grad_fn={grad_fn}）：它是由另一个 tensor 算出来的"
             "（是不是在 requires_grad=True 之后又调用了 .float() 或 .to()？），所以 backward() 之后它的 .grad 仍是 None，"
             "优化器也无法更新它。请一步到位地用正确的 dtype 和 requires_grad 创建它。",
             what=what, grad_fn=info.get("grad_fn"), key="not-a-leaf")
    if result["grad"] is None:
        fail("After backward() of sum(w * c) with w = {what}, w.grad is still None, though w is a leaf that requires "
             "grad.", "对 w = {what} 做 sum(w * c) 的 backward() 之后，w.grad 仍是 None，尽管 w 是 requires_grad 的叶子张量。",
             what=what, key="grad-none")
    expect_close(result["grad"].reshape(-1), coef, Text("the .grad of {what} after backward() of sum(w * c)",
                                            "对 sum(w * c) 做 backward() 之后 {what} 的 .grad", what=what))


# -- copy_from_numpy / share_from_numpy -------------------------------------------------------

@probe
def numpy_probe(module, name, values, new_values, layout="contiguous"):
    """Call name(arr) on a fresh NumPy array laid out as `layout` says (C-contiguous, or "transposed": Fortran order,
    not contiguous), then overwrite the array and see whether the tensor follows."""
    import numpy as np

    fn = getattr(module, name)
    arr = values.numpy().copy()
    if layout == "transposed":
        arr = np.ascontiguousarray(arr.T).T
    out = fn(arr)
    if not isinstance(out, torch.Tensor):
        return {"out": out}
    before = out.detach().clone()
    arr[...] = new_values.numpy()
    return {"out": out, "before": before, "after": out.detach().clone()}


def draw_array(rng, dtype, shape):
    if dtype.is_floating_point:
        values = torch.randn(shape, generator=rng, dtype=torch.float64).to(dtype)
        new_values = values + 10 + torch.rand(shape, generator=rng, dtype=torch.float64).to(dtype)
    else:
        values = torch.randint(-50, 50, shape, generator=rng, dtype=dtype)
        new_values = values + torch.randint(1, 50, shape, generator=rng, dtype=dtype)
    return values, new_values


LAYOUTS = {"contiguous": ("", ""), "transposed": (" (not contiguous: Fortran order)", "（不连续：Fortran 顺序）")}


def call_numpy(submission, name, values, new_values, check_dtype=True, layout="contiguous"):
    """Run `name(arr)` in the sandbox on an array laid out as `layout`; fail unless it returns arr's values (and
    dtype); return the probe's result."""
    what = Text("`{name}(arr)` for an array of shape {shape}{layout}", "对形状为 {shape} 的数组{layout}调用 `{name}(arr)`",
                name=name, shape=list(values.shape), layout=LAYOUTS[layout]) if layout != "contiguous" else \
        f"`{name}(arr)`"
    result = submission.probe(numpy_probe, name, values, new_values, layout, what=what)
    out = expect_tensor(result["out"], what, shape=values.shape)
    if check_dtype and out.dtype != values.dtype:
        copies = Text(" Converting the dtype (.float(), .to(), dtype=...) always makes a copy, so the result cannot "
                      "share memory with arr.", "转换 dtype（.float()、.to()、dtype=...）总会复制数据，结果就无法与 arr 共享内存了。"
                      ) if name == "share_from_numpy" else ""
        float32 = Text(" (torch.Tensor(...) and .float() turn everything into float32)",
                       "（torch.Tensor(...) 和 .float() 都会把数据变成 float32）") if out.dtype == torch.float32 else ""
        fail("{what} has dtype {got}, but arr is an array of shape {shape} ({want}): keep the array's dtype{float32}."
             "{copies}", "{what} 的 dtype 是 {got}，但 arr 是形状为 {shape} 的 {want} 数组：要保持数组的 dtype{float32}。{copies}",
             what=what, got=dtype_name(out.dtype), want=dtype_name(values.dtype), shape=list(values.shape),
             float32=float32, copies=copies, key="dtype-changed")
    exact = out.dtype == values.dtype
    expect_close(result["before"], values.to(out.dtype) if out.dtype.is_floating_point else values, what,
                 rtol=0 if exact else 1e-6, atol=0 if exact else 1e-6)
    return result


# arrays with a size-1 axis too: whatever the shape, the tensor keeps it; and arrays that are not contiguous (torch
# takes no negative stride, arr[::-1]: neither torch.tensor nor torch.from_numpy)
COPY_CASES = ((torch.float64, (3, 4), "contiguous"), (torch.int64, (5,), "contiguous"),
              (torch.float32, (1, 6), "contiguous"), (torch.float64, (3, 2), "transposed"),
              (torch.int64, (2, 4), "transposed"))
SHARE_CASES = ((torch.float64, (3, 4), "contiguous"), (torch.float32, (6,), "contiguous"),
               (torch.int64, (4, 1), "contiguous"), (torch.float32, (2, 5), "transposed"))


@check("copy_from_numpy returns the array's values and dtype", points=1,
       zh="copy_from_numpy 返回与数组相同的数值和 dtype")
def test_copy_values(submission, rng):
    for dtype, shape, layout in COPY_CASES:
        call_numpy(submission, "copy_from_numpy", *draw_array(rng, dtype, shape), layout=layout)
    expect_cpu_only(submission, [("copy_from_numpy", [draw_array(rng, torch.float64, (3, 2))[0].numpy()])])


@check("copy_from_numpy does not share the array's memory", points=2,
       zh="copy_from_numpy 不与数组共享内存")
def test_copy_independent(submission, rng):
    for dtype, shape, layout in COPY_CASES + ((torch.float32, (6,), "contiguous"),):  # torch.Tensor(arr) shares a
        values, new_values = draw_array(rng, dtype, shape)  # float32 array
        result = call_numpy(submission, "copy_from_numpy", values, new_values, check_dtype=False, layout=layout)
        if not torch.equal(result["after"], result["before"]):
            fail("`copy_from_numpy(arr)` shares memory with arr: after the call we wrote new numbers into arr, and "
                 "the returned tensor changed too. torch.from_numpy, torch.as_tensor (and even torch.Tensor(arr) "
                 "for a float32 array) share the array's memory; torch.tensor(...) copies it.",
                 "`copy_from_numpy(arr)` 与 arr 共享内存：调用之后我们往 arr 里写入新数值，返回的 tensor 也跟着变了。"
                 "torch.from_numpy、torch.as_tensor（对 float32 数组甚至 torch.Tensor(arr) 也是）与数组共享内存；"
                 "torch.tensor(...) 会复制数据。", key="copy-shares-memory")


@check("share_from_numpy shares the array's memory (writes to arr show in the tensor)", points=2,
       zh="share_from_numpy 与数组共享内存（写入 arr 会反映到 tensor 上）")
def test_share(submission, rng):
    for dtype, shape, layout in SHARE_CASES:
        values, new_values = draw_array(rng, dtype, shape)
        result = call_numpy(submission, "share_from_numpy", values, new_values, layout=layout)
        if torch.equal(result["after"], new_values):
            continue
        if torch.equal(result["after"], result["before"]):
            fail("`share_from_numpy(arr)` made a copy: after the call we wrote new numbers into arr, but the "
                 "returned tensor kept the old ones. torch.tensor(...) always copies; torch.from_numpy shares the "
                 "array's memory.",
                 "`share_from_numpy(arr)` 复制了数据：调用之后我们往 arr 里写入新数值，返回的 tensor 却还是旧值。"
                 "torch.tensor(...) 总会复制；torch.from_numpy 与数组共享内存。", key="share-copies")
        fail("`share_from_numpy(arr)` only partly follows arr: after writing new numbers into arr, some entries of the "
             "tensor changed and some did not. Return a tensor over the whole array, without slicing or copying.",
             "`share_from_numpy(arr)` 只部分跟随 arr：往 arr 写入新数值后，tensor 有的元素变了、有的没变。"
             "请返回覆盖整个数组的 tensor，不要切片或复制。", key="share-partly")
    expect_cpu_only(submission, [("share_from_numpy", [draw_array(rng, torch.float64, (3, 2))[0].numpy()])])


# -- snapshot ---------------------------------------------------------------------------------

@probe
def snapshot_probe(module, t, delta):
    """Call snapshot(t), then change t in place and report whether the snapshot followed."""
    out = module.snapshot(t)
    if not isinstance(out, torch.Tensor):
        return {"out": out}
    before = out.detach().clone()
    same_object = out is t
    shares = out.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    with torch.no_grad():
        t.add_(delta)
    return {"out": out, "before": before, "after": out.detach().clone(), "same_object": same_object,
            "shares": shares}


@check("snapshot returns an independent copy (clone)", points=2, zh="snapshot 返回独立的副本（clone）")
def test_snapshot(submission, rng):
    cases = (torch.randn(2, 3, generator=rng), torch.randint(-50, 50, (4,), generator=rng),
             torch.randn(1, 3, generator=rng))
    for t in cases:
        delta = 5.0 if t.is_floating_point() else 5
        what = "`snapshot(t)`"
        result = submission.probe(snapshot_probe, t, delta, what=f"`snapshot(t)` (t: tensor{list(t.shape)})")
        out = expect_tensor(result["out"], what, shape=t.shape)
        if out.dtype != t.dtype:
            fail("{what} has dtype {got}, but t is {want}: a copy keeps the dtype.",
                 "{what} 的 dtype 是 {got}，但 t 是 {want}：副本应保持 dtype 不变。",
                 what=what, got=dtype_name(out.dtype), want=dtype_name(t.dtype), key="dtype-changed")
        expect_close(result["before"], t, what, rtol=0, atol=0)
        if torch.equal(result["after"], result["before"]):
            continue
        if result["same_object"]:
            fail("`snapshot(t)` returned t itself: after t.add_(...) the \"snapshot\" changed too. `b = t` (or "
                 "`return t`) copies nothing, both names point to the same tensor: make a real copy with clone().",
                 "`snapshot(t)` 返回的就是 t 本身：执行 t.add_(...) 之后，“快照”也跟着变了。`b = t`（或 `return t`）"
                 "什么都没复制，两个名字指向同一个 tensor：请用 clone() 真正复制一份。", key="same-object")
        if result["shares"]:
            fail("`snapshot(t)` shares t's memory: after t.add_(...) the snapshot changed too. detach(), view(), "
                 "reshape() and slicing give a new tensor object over the same data; clone() copies the data.",
                 "`snapshot(t)` 与 t 共享内存：执行 t.add_(...) 之后，快照也跟着变了。detach()、view()、reshape() "
                 "和切片得到的是指向同一份数据的新 tensor 对象；clone() 才会复制数据。", key="shares-memory")
        fail("`snapshot(t)` changed when t was changed in place afterwards: it must be an independent copy (clone()).",
             "之后原地修改 t 时，`snapshot(t)` 也变了：它必须是独立的副本（clone()）。", key="shares-memory")
    expect_cpu_only(submission, [("snapshot", [t])])
