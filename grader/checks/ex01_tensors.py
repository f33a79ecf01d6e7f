"""Hidden checks of ex01: tensor creation, dtypes, copies and shared memory.

Memory sharing is observed, not guessed: probes call the learner's function inside the sandbox,
then write into the original (the NumPy array, or the tensor given to `snapshot`) and report
whether the returned tensor changed.
"""

import torch

from grader.checking import check, expect_close, expect_tensor, fail, probe, tensor_info

SHORT = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64", torch.int32: "int32"}


def dtype_name(dtype) -> str:
    return SHORT.get(dtype, str(dtype).removeprefix("torch."))


def missing(result, name: str) -> None:
    if isinstance(result, dict) and result.get("missing"):
        fail(f"Your file does not define `{name}`: was it renamed or deleted?",
             f"你的文件里没有定义 `{name}`：是不是被改名或删除了？")


# -- make_weights ----------------------------------------------------------------------------

@probe
def weights_probe(module, values, coef):
    """Call make_weights(values); if it gives a float leaf that requires grad, backpropagate sum(out * coef)."""
    fn = getattr(module, "make_weights", None)
    if fn is None:
        return {"missing": True}
    try:
        out = fn(values)
    except RuntimeError as exc:
        if "can require gradients" in str(exc):
            return {"error": str(exc)}
        raise
    grad = None
    if (isinstance(out, torch.Tensor) and out.is_floating_point() and out.requires_grad and out.is_leaf
            and out.shape == coef.shape):
        (out * coef.to(out.dtype)).sum().backward()
        grad = out.grad
    return {"out": out, "grad": grad}


def draw_values(rng, mixed: bool) -> list:
    n = int(torch.randint(3, 8, (1,), generator=rng))
    ints = torch.randint(-9, 10, (n,), generator=rng).tolist()
    if not mixed:
        return ints  # ints only: torch.tensor(ints) is int64
    halves = (torch.randint(-19, 20, (n,), generator=rng) / 2).tolist()
    return [h if k % 2 else i for k, (i, h) in enumerate(zip(ints, halves))]


def call_weights(submission, rng, values):
    coef = torch.randn(len(values), generator=rng)
    result = submission.probe(weights_probe, values, coef, what=f"`make_weights({values})`")
    missing(result, "make_weights")
    if "error" in result:
        fail(f"make_weights({values}) raised \"{result['error']}\": only floating-point tensors can require grad, "
             "and a list of Python ints becomes an int64 tensor. Make the tensor float32 when you create it.",
             f"make_weights({values}) 抛出了 \"{result['error']}\"：只有浮点类型的 tensor 才能 requires_grad，"
             "而由 Python 整数组成的 list 会变成 int64 tensor。创建时就把它设为 float32。")
    return result, coef


@check("make_weights gives a float32 tensor with the values", points=1,
       zh="make_weights 返回包含这些数值的 float32 tensor")
def test_weights_values(submission, rng):
    for mixed in (False, True):
        values = draw_values(rng, mixed)
        result, _ = call_weights(submission, rng, values)
        what = f"make_weights({values})"
        out = expect_tensor(result["out"], what, shape=[len(values)])
        if out.dtype != torch.float32:
            if out.dtype == torch.int64:
                en = ("a list of Python ints becomes an int64 tensor by default; weights must be float32 "
                      "(say so with dtype=...)")
                zh = "由 Python 整数组成的 list 默认会变成 int64 tensor；权重必须是 float32（用 dtype=... 指定）"
            elif out.dtype == torch.float64:
                en, zh = ("float64 is NumPy's default, not PyTorch's: model weights are float32",
                          "float64 是 NumPy 的默认类型，不是 PyTorch 的：模型权重用 float32")
            else:
                en, zh = "weights must be float32", "权重必须是 float32"
            fail(f"{what} has dtype {dtype_name(out.dtype)}, expected float32: {en}.",
                 f"{what} 的 dtype 是 {dtype_name(out.dtype)}，应为 float32：{zh}。")
        expect_close(out, torch.tensor(values, dtype=torch.float32), what, rtol=0, atol=0)


@check("make_weights gives a leaf that requires grad and receives .grad", points=2,
       zh="make_weights 返回 requires_grad 的叶子 tensor，并能得到 .grad")
def test_weights_grad(submission, rng):
    values = draw_values(rng, False)
    result, coef = call_weights(submission, rng, values)
    what = f"make_weights({values})"
    out = expect_tensor(result["out"], what)
    info = tensor_info(out)
    if not info.get("requires_grad"):
        fail(f"{what} does not require grad (requires_grad=False): autograd will not compute a gradient for it. "
             "Ask for requires_grad=True.",
             f"{what} 没有 requires_grad（requires_grad=False）：autograd 不会为它计算梯度。请设置 requires_grad=True。")
    if not info.get("is_leaf"):
        fail(f"{what} requires grad but is not a leaf (grad_fn={info.get('grad_fn')}): it was computed from another "
             "tensor (a .float() or .to() after requires_grad=True?), so backward() leaves its .grad None and an "
             "optimizer cannot update it. Create it with the right dtype and requires_grad in one step.",
             f"{what} 虽然 requires_grad，但不是叶子 tensor（grad_fn={info.get('grad_fn')}）：它是由另一个 tensor 算出来的"
             "（是不是在 requires_grad=True 之后又调用了 .float() 或 .to()？），所以 backward() 之后它的 .grad 仍是 None，"
             "优化器也无法更新它。请一步到位地用正确的 dtype 和 requires_grad 创建它。")
    grad = result.get("grad")
    if grad is None:
        fail(f"After backward() through {what}, its .grad is still None: is it a float32 leaf with requires_grad=True?",
             f"对 {what} 做 backward() 之后，它的 .grad 仍是 None：它是 requires_grad=True 的 float32 叶子 tensor 吗？")
    expect_close(grad, coef, f"the .grad of {what} after backward() of sum(w * c)")


# -- copy_from_numpy / share_from_numpy -------------------------------------------------------

@probe
def numpy_probe(module, name, values, new_values):
    """Call name(arr) on a fresh NumPy array, then overwrite the array and see whether the tensor follows."""
    fn = getattr(module, name, None)
    if fn is None:
        return {"missing": True}
    arr = values.numpy().copy()
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


def call_numpy(submission, name, values, new_values, check_dtype=True):
    arr_text = f"an array of shape {list(values.shape)} ({dtype_name(values.dtype)})"
    result = submission.probe(numpy_probe, name, values, new_values, what=f"`{name}(arr)`")
    missing(result, name)
    what = f"{name}(arr)"
    out = expect_tensor(result["out"], what, shape=values.shape)
    if check_dtype and out.dtype != values.dtype:
        copy_note = (" Converting the dtype (.float(), .to(), dtype=...) always makes a copy, so the result cannot "
                     "share memory with arr." if name == "share_from_numpy" else "")
        copy_note_zh = ("转换 dtype（.float()、.to()、dtype=...）总会复制数据，结果就无法与 arr 共享内存了。"
                        if name == "share_from_numpy" else "")
        fail(f"{what} has dtype {dtype_name(out.dtype)}, but arr is {arr_text}: keep the array's dtype "
             f"(torch.Tensor(...) and .float() turn everything into float32).{copy_note}",
             f"{what} 的 dtype 是 {dtype_name(out.dtype)}，但 arr 是 {dtype_name(values.dtype)}："
             f"要保持数组的 dtype（torch.Tensor(...) 和 .float() 都会把数据变成 float32）。{copy_note_zh}")
    expect_close(result["before"], values.to(out.dtype) if out.dtype.is_floating_point else values, what,
                 rtol=0 if out.dtype == values.dtype else 1e-6, atol=0 if out.dtype == values.dtype else 1e-6)
    return result


@check("copy_from_numpy returns the array's values and dtype", points=1,
       zh="copy_from_numpy 返回与数组相同的数值和 dtype")
def test_copy_values(submission, rng):
    for dtype, shape in ((torch.float64, (3, 4)), (torch.int64, (5,))):
        call_numpy(submission, "copy_from_numpy", *draw_array(rng, dtype, shape))


@check("copy_from_numpy does not share the array's memory", points=2,
       zh="copy_from_numpy 不与数组共享内存")
def test_copy_independent(submission, rng):
    for dtype, shape in ((torch.float64, (3, 4)), (torch.float32, (6,))):
        values, new_values = draw_array(rng, dtype, shape)
        result = call_numpy(submission, "copy_from_numpy", values, new_values, check_dtype=False)
        if not torch.equal(result["after"], result["before"]):
            fail("copy_from_numpy(arr) shares memory with arr: after the call we wrote new numbers into arr, and "
                 "the returned tensor changed too. torch.from_numpy, torch.as_tensor (and even torch.Tensor(arr) "
                 "for a float32 array) share the array's memory; torch.tensor(...) copies it.",
                 "copy_from_numpy(arr) 与 arr 共享内存：调用之后我们往 arr 里写入新数值，返回的 tensor 也跟着变了。"
                 "torch.from_numpy、torch.as_tensor（对 float32 数组甚至 torch.Tensor(arr) 也是）与数组共享内存；"
                 "torch.tensor(...) 会复制数据。")


@check("share_from_numpy shares the array's memory (writes to arr show in the tensor)", points=2,
       zh="share_from_numpy 与数组共享内存（写入 arr 会反映到 tensor 上）")
def test_share(submission, rng):
    for dtype, shape in ((torch.float64, (3, 4)), (torch.float32, (6,))):
        values, new_values = draw_array(rng, dtype, shape)
        result = call_numpy(submission, "share_from_numpy", values, new_values)
        if torch.equal(result["after"], new_values):
            continue
        if torch.equal(result["after"], result["before"]):
            fail("share_from_numpy(arr) made a copy: after the call we wrote new numbers into arr, but the returned "
                 "tensor kept the old ones. torch.tensor(...) always copies; torch.from_numpy shares the array's memory.",
                 "share_from_numpy(arr) 复制了数据：调用之后我们往 arr 里写入新数值，返回的 tensor 却还是旧值。"
                 "torch.tensor(...) 总会复制；torch.from_numpy 与数组共享内存。")
        fail("share_from_numpy(arr) only partly follows arr: after writing new numbers into arr, some entries of the "
             "tensor changed and some did not. Return a tensor over the whole array, without slicing or copying.",
             "share_from_numpy(arr) 只部分跟随 arr：往 arr 写入新数值后，tensor 有的元素变了、有的没变。"
             "请返回覆盖整个数组的 tensor，不要切片或复制。")


# -- snapshot ---------------------------------------------------------------------------------

@probe
def snapshot_probe(module, t, delta):
    """Call snapshot(t), then change t in place and report whether the snapshot followed."""
    fn = getattr(module, "snapshot", None)
    if fn is None:
        return {"missing": True}
    out = fn(t)
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
    cases = (torch.randn(2, 3, generator=rng), torch.randint(-50, 50, (4,), generator=rng))
    for t in cases:
        delta = 5 if not t.is_floating_point() else 5.0
        result = submission.probe(snapshot_probe, t, delta, what=f"`snapshot(t)` (t: tensor{list(t.shape)})")
        missing(result, "snapshot")
        what = "snapshot(t)"
        out = expect_tensor(result["out"], what, shape=t.shape)
        if out.dtype != t.dtype:
            fail(f"{what} has dtype {dtype_name(out.dtype)}, but t is {dtype_name(t.dtype)}: a copy keeps the dtype.",
                 f"{what} 的 dtype 是 {dtype_name(out.dtype)}，但 t 是 {dtype_name(t.dtype)}：副本应保持 dtype 不变。")
        expect_close(result["before"], t, what, rtol=0, atol=0)
        if torch.equal(result["after"], result["before"]):
            continue
        if result["same_object"]:
            fail("snapshot(t) returned t itself: after t.add_(...) the \"snapshot\" changed too. `b = t` (or "
                 "`return t`) copies nothing, both names point to the same tensor: make a real copy with clone().",
                 "snapshot(t) 返回的就是 t 本身：执行 t.add_(...) 之后，“快照”也跟着变了。`b = t`（或 `return t`）"
                 "什么都没复制，两个名字指向同一个 tensor：请用 clone() 真正复制一份。")
        if result["shares"]:
            fail("snapshot(t) shares t's memory: after t.add_(...) the snapshot changed too. detach(), view(), "
                 "reshape() and slicing give a new tensor object over the same data; clone() copies the data.",
                 "snapshot(t) 与 t 共享内存：执行 t.add_(...) 之后，快照也跟着变了。detach()、view()、reshape() "
                 "和切片得到的是指向同一份数据的新 tensor 对象；clone() 才会复制数据。")
        fail("snapshot(t) changed when t was changed in place afterwards: it must be an independent copy (clone()).",
             "之后原地修改 t 时，snapshot(t) 也变了：它必须是独立的副本（clone()）。")
