"""Hidden checks of ex17: mixed precision with torch.autocast and torch.amp.GradScaler.

The learner's train_step runs in the sandbox with everything around it instrumented: forward hooks on the
Linear layers (the dtype they produced, autocast on or off), the scaler's and the optimizer's methods wrapped
on their instances, torch.autograd.backward and clip_grad_norm_ wrapped for the call. The judge reads the log
of one step (what ran, in which order, on which tensor) and the loss curve of a short training.
Runs on "cpu" (bfloat16) by default and on "cuda" (float16) with --device cuda.
"""

import traceback
import warnings

import torch
from torch import nn

from grader.checking import check, fail, probe, record_curve

EXPECTED = {"cpu": "bfloat16", "cuda": "float16"}


# -- sandbox side ------------------------------------------------------------------------

def _learner_frames(exc, filename):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    return [f"line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-2:]]


def _error(exc, module):
    if isinstance(exc, NotImplementedError):
        raise exc  # a TODO left in place: "not started"
    return {"type": type(exc).__name__, "message": str(exc)[:300],
            "frames": _learner_frames(exc, getattr(module, "__file__", ""))}


@probe
def run_dtype(module, device_type):
    value = module.autocast_dtype(device_type)
    return str(value).removeprefix("torch.") if isinstance(value, torch.dtype) else f"a {type(value).__name__}"


@probe
def run_make_scaler(module, device_type):
    """Build the learner's scaler with CUDA availability faked on (GradScaler creates nothing on the GPU
    until it scales a loss), so that a scaler for "cuda" can be inspected on any machine."""
    common = torch.cuda.amp.common
    original = common.amp_definitely_not_available
    common.amp_definitely_not_available = lambda: False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = module.make_scaler(device_type)
    finally:
        common.amp_definitely_not_available = original
    return {
        "type": f"{type(scaler).__module__}.{type(scaler).__qualname__}",
        "is_scaler": isinstance(scaler, torch.amp.GradScaler),
        "device": getattr(scaler, "_device", None),
        "enabled": bool(getattr(scaler, "_enabled", False)),
        "deprecated": any("deprecated" in str(w.message) for w in caught),
    }


def _make_model(seed, d, hidden, device):
    gen = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * (1.0 / p.shape[-1]) ** 0.5)
    return model.to(device)


@probe
def run_steps(module, seed, x, y, device, steps, lr, max_norm):
    """Run train_step `steps` times on a fresh model, optimizer and scaler; log what happened in the first step."""
    model = _make_model(seed, x.shape[1], 16, device)
    x, y = x.to(device), y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler(device)
    log = []
    state = {"scaled": None, "in_step": 0, "unscaled": False, "recording": True}

    def note(event):
        if state["recording"]:
            log.append(event)

    def wrap(obj, name, before=None, after=None):
        original = getattr(obj, name)

        def wrapper(*args, **kwargs):
            if before:
                before(*args, **kwargs)
            out = original(*args, **kwargs)
            if after:
                after(out, *args, **kwargs)
            return out
        setattr(obj, name, wrapper)

    def on_scale(out, *args, **kwargs):
        state["scaled"] = out
        note({"what": "scale"})

    def on_unscale(*args, **kwargs):
        if not state["in_step"]:  # scaler.step unscales by itself when the learner did not
            state["unscaled"] = True
            note({"what": "unscale_"})

    def before_step(*args, **kwargs):
        state["in_step"] += 1
        note({"what": "scaler.step"})

    def after_step(*args, **kwargs):
        state["in_step"] -= 1

    wrap(scaler, "scale", after=on_scale)
    wrap(scaler, "unscale_", before=on_unscale)
    wrap(scaler, "step", before=before_step, after=after_step)
    wrap(scaler, "update", before=lambda *a, **k: note({"what": "update"}))
    wrap(optimizer, "step", before=lambda *a, **k: None if state["in_step"] else note({"what": "optimizer.step"}))
    wrap(optimizer, "zero_grad", before=lambda *a, **k: note({"what": "zero_grad"}))
    wrap(model, "zero_grad", before=lambda *a, **k: note({"what": "zero_grad"}))

    def on_forward(layer, inputs, output):
        note({"what": "forward", "dtype": str(output.dtype).removeprefix("torch."),
              "autocast": torch.is_autocast_enabled(device)})
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            layer.register_forward_hook(on_forward)

    backward = torch.autograd.backward

    def backward_wrapper(tensors, *args, **kwargs):
        root = tensors[0] if isinstance(tensors, (list, tuple)) and tensors else tensors
        note({"what": "backward", "scaled": root is state["scaled"] and state["scaled"] is not None,
              "autocast": torch.is_autocast_enabled(device)})
        return backward(tensors, *args, **kwargs)

    clip = torch.nn.utils.clip_grad_norm_

    def clip_wrapper(parameters, max_norm=None, *args, **kwargs):
        parameters = list(parameters) if not isinstance(parameters, torch.Tensor) else [parameters]
        total = clip(parameters, max_norm, *args, **kwargs)
        note({"what": "clip", "max_norm": float(max_norm) if max_norm is not None else None,
              "unscaled": state["unscaled"], "norm": float(total), "scale": float(scaler.get_scale())})
        return total

    aliases = {k for k, v in vars(module).items() if v is clip}  # `from torch.nn.utils import clip_grad_norm_`
    patches = [(torch.autograd, "backward", backward_wrapper), (torch.nn.utils, "clip_grad_norm_", clip_wrapper),
               (torch.nn.utils.clip_grad, "clip_grad_norm_", clip_wrapper)]
    patches += [(module, k, clip_wrapper) for k in aliases]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    result = {"log": log, "losses": [], "error": None, "warnings": []}
    with torch.no_grad():
        result["loss_before"] = float(((model(x).float() - y) ** 2).mean())
    del log[:]
    try:
        for obj, name, value in patches:
            setattr(obj, name, value)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(steps):
                state["recording"] = i == 0
                state["unscaled"] = False
                state["scaled"] = None
                loss = module.train_step(model, optimizer, scaler, x, y, device, max_norm)
                if isinstance(loss, torch.Tensor) and loss.numel() == 1:
                    loss = float(loss.detach().float().reshape(()).cpu())
                result["losses"].append(loss if isinstance(loss, (int, float)) and not isinstance(loss, bool)
                                        else f"a {type(loss).__name__}")
    except Exception as exc:  # noqa: BLE001 - the log says what went wrong before the error
        result["error"] = _error(exc, module)
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)
        result["warnings"] = [str(w.message)[:200] for w in caught] if "caught" in locals() else []
    state["recording"] = False
    with torch.no_grad():
        result["loss_after"] = float(((model(x).float() - y) ** 2).mean())
    result["param_dtypes"] = sorted({str(p.dtype).removeprefix("torch.") for p in model.parameters()})
    return result


# -- judge side ----------------------------------------------------------------------------

def draw(rng, n=64):
    d = 4 + int(torch.randint(0, 4, (1,), generator=rng))
    x = torch.randn(n, d, generator=rng)
    w = torch.randn(d, 1, generator=rng)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(n, 1, generator=rng)
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=rng))
    max_norm = round(float(0.5 + 1.5 * torch.rand((), generator=rng)), 3)
    return seed, x, y, max_norm


def step_log(submission, rng, device, steps=1, lr=0.05):
    seed, x, y, max_norm = draw(rng)
    result = submission.probe(run_steps, seed, x, y, device, steps, lr, max_norm,
                              what=f"`train_step(model, optimizer, scaler, x, y, {device!r}, max_norm={max_norm})`")
    result["max_norm"] = max_norm
    return result


# What GradScaler's own errors mean, in the learner's words.
SCALER_ERRORS = {
    "is being called after step()": (
        "scaler.update() must end every step: without it the scaler still thinks the last step is running.",
        "每一步都要以 scaler.update() 结束：没有它，scaler 会以为上一步还没结束。"),
    "_scale is None": (
        "scaler.scale(loss) was never called, so there is nothing to unscale: backward `scaler.scale(loss)`.",
        "从未调用 scaler.scale(loss)，所以没有可以 unscale 的东西：请对 `scaler.scale(loss)` 做 backward。"),
    "No inf checks were recorded": (
        "scaler.update() needs scaler.step(optimizer) first: step through the scaler.",
        "scaler.update() 之前需要先调用 scaler.step(optimizer)：请通过 scaler 更新参数。"),
    "has already been called since the last update()": (
        "call scaler.unscale_(optimizer) and scaler.step(optimizer) once per step, then scaler.update().",
        "每步只调用一次 scaler.unscale_(optimizer) 和 scaler.step(optimizer)，然后调用 scaler.update()。"),
}


def error_text(result, device):
    err = result["error"]
    where = f" ({'; '.join(err['frames'])})" if err["frames"] else ""
    en = f"train_step(..., {device!r}, ...) raised {err['type']}: {err['message']}{where}"
    zh = f"train_step(..., {device!r}, ...) 抛出了异常 {err['type']}：{err['message']}{where}"
    for key, (why_en, why_zh) in SCALER_ERRORS.items():
        if key in err["message"]:
            return f"{en}. {why_en}", f"{zh}。{why_zh}"
    return en, zh


def events(result, what):
    return [e for e in result["log"] if e["what"] == what]


def index(result, what):
    return next((i for i, e in enumerate(result["log"]) if e["what"] == what), None)


def deprecated_api(result):
    return any("torch.cuda.amp" in w and "deprecated" in w for w in result["warnings"])


DEPRECATED = ("torch.cuda.amp is deprecated, and its autocast only covers CUDA: use "
              "`torch.autocast(device_type, dtype=...)` and `torch.amp.GradScaler(device_type)`.",
              "torch.cuda.amp 已被弃用，而且它的 autocast 只作用于 CUDA：请使用 "
              "`torch.autocast(device_type, dtype=...)` 和 `torch.amp.GradScaler(device_type)`。")


@check("autocast_dtype: bfloat16 on the CPU, float16 on CUDA", points=1,
       zh="autocast_dtype：CPU 上用 bfloat16，CUDA 上用 float16")
def test_autocast_dtype(submission):
    for device_type, want in EXPECTED.items():
        got = submission.probe(run_dtype, device_type, what=f"`autocast_dtype({device_type!r})`")
        if got != want:
            fail(f"autocast_dtype({device_type!r}) should be torch.{want}, got {got}: CPUs compute in bfloat16 "
                 "(float32's range, fewer digits), CUDA GPUs classically in float16.",
                 f"autocast_dtype({device_type!r}) 应为 torch.{want}，实际为 {got}：CPU 上用 bfloat16"
                 "（与 float32 范围相同、精度更低），CUDA GPU 上传统上用 float16。")


@check("make_scaler builds a torch.amp.GradScaler for the device type", points=1,
       zh="make_scaler 为该设备类型创建 torch.amp.GradScaler")
def test_make_scaler(submission):
    for device_type in ("cpu", "cuda"):
        got = submission.probe(run_make_scaler, device_type, what=f"`make_scaler({device_type!r})`")
        if not got["is_scaler"]:
            fail(f"make_scaler({device_type!r}) should return a torch.amp.GradScaler, got a {got['type']}.",
                 f"make_scaler({device_type!r}) 应返回 torch.amp.GradScaler，实际得到 {got['type']}。")
        if got["deprecated"] or got["type"].startswith(("torch.cuda.amp", "torch.cpu.amp")):
            old = ".".join(got["type"].split(".")[:2]) + ".amp.GradScaler"
            fail(f"make_scaler({device_type!r}) used the deprecated {old}: use "
                 f"`torch.amp.GradScaler({device_type!r})`, the same class for every device.",
                 f"make_scaler({device_type!r}) 使用了已弃用的 {old}：请使用 "
                 f"`torch.amp.GradScaler({device_type!r})`，所有设备共用这一个类。")
        if got["device"] != device_type:
            fail(f"make_scaler({device_type!r}) returned a scaler for {got['device']!r}: pass the device type, "
                 f"`torch.amp.GradScaler({device_type!r})`.",
                 f"make_scaler({device_type!r}) 返回的 scaler 属于 {got['device']!r}：请传入设备类型，"
                 f"`torch.amp.GradScaler({device_type!r})`。")
        if device_type == "cuda" and not got["enabled"]:
            fail("make_scaler('cuda') returned a disabled scaler: float16 gradients underflow without loss scaling, "
                 "so keep it enabled on CUDA.",
                 "make_scaler('cuda') 返回的 scaler 被禁用了：不做 loss scaling 时 float16 梯度会下溢为 0，"
                 "所以在 CUDA 上要保持启用。")


@check("the forward pass runs under autocast, in the device's low-precision dtype", points=2,
       zh="前向传播在 autocast 下运行，使用该设备的低精度 dtype")
def test_forward_autocast(submission, rng, device):
    result = step_log(submission, rng, device)
    forwards = events(result, "forward")
    if not forwards:
        if result["error"]:
            fail(*error_text(result, device))
        fail("train_step never ran the model on x.", "train_step 没有用模型处理 x。")
    want = EXPECTED[device]
    dtypes = sorted({e["dtype"] for e in forwards})
    if result["param_dtypes"] != ["float32"]:
        fail(f"The model's parameters became {', '.join(result['param_dtypes'])}: do not convert the model "
             "(.half(), .to(dtype)); autocast keeps the weights in float32 and picks a dtype per operation.",
             f"模型参数变成了 {', '.join(result['param_dtypes'])}：不要转换模型（.half()、.to(dtype)）；"
             "autocast 让权重保持 float32，并为每个运算选择 dtype。")
    if dtypes == ["float32"] or not all(e["autocast"] for e in forwards):
        if deprecated_api(result):
            fail(*DEPRECATED)
        if device == "cpu" and any("CUDA is not available" in w for w in result["warnings"]):
            fail("The forward ran in float32: autocast was opened for \"cuda\", which is not this device, so "
                 "PyTorch disabled it. Pass the device type: `torch.autocast(device_type, dtype=...)`.",
                 "前向传播以 float32 运行：autocast 打开的是 \"cuda\"，而不是当前设备，所以 PyTorch 把它禁用了。"
                 "请传入设备类型：`torch.autocast(device_type, dtype=...)`。")
        fail(f"The model's Linear layers produced {', '.join(dtypes)}, not {want}: the forward pass is not under "
             f"autocast. Run the forward and the loss inside `with torch.autocast(device_type, dtype=...)`.",
             f"模型的 Linear 层输出为 {', '.join(dtypes)}，而不是 {want}：前向传播不在 autocast 之下。"
             "请把前向传播和 loss 放进 `with torch.autocast(device_type, dtype=...)` 中。")
    if dtypes != [want]:
        fail(f"Under autocast the Linear layers produced {', '.join(dtypes)}, but on {device} the dtype is {want} "
             "(use autocast_dtype(device_type)).",
             f"在 autocast 下 Linear 层输出为 {', '.join(dtypes)}，但在 {device} 上应为 {want}"
             "（使用 autocast_dtype(device_type)）。")


@check("backward runs outside the autocast block", points=1, zh="backward 在 autocast 代码块之外运行")
def test_backward_outside(submission, rng, device):
    result = step_log(submission, rng, device)
    backwards = events(result, "backward")
    if not backwards:
        if result["error"]:
            fail(*error_text(result, device))
        fail("train_step never called backward.", "train_step 没有调用 backward。")
    if any(e["autocast"] for e in backwards):
        fail("backward ran inside the `with torch.autocast(...)` block: leave the block after the loss and call "
             "backward outside the autocast block (backward ops already reuse the forward's dtypes).",
             "backward 在 `with torch.autocast(...)` 代码块内运行：算完 loss 就退出代码块，在 autocast 代码块之外调用 "
             "backward（反向运算会自动沿用前向的 dtype）。")


@check("the scaler runs in order: scale, backward, step, update", points=2,
       zh="scaler 的调用顺序：scale、backward、step、update")
def test_scaler_order(submission, rng, device):
    result = step_log(submission, rng, device)
    log = result["log"]
    backwards = events(result, "backward")
    if backwards and not any(e["scaled"] for e in backwards):
        fail("backward ran on the unscaled loss: call `scaler.scale(loss).backward()` so that small float16 "
             "gradients do not underflow to 0 (scaler.step divides them back).",
             "backward 作用在未缩放的 loss 上：请调用 `scaler.scale(loss).backward()`，这样小的 float16 梯度不会下溢为 0"
             "（scaler.step 会再把它们除回来）。")
    if index(result, "optimizer.step") is not None:
        fail("optimizer.step() was called directly: step through `scaler.step(optimizer)`, which unscales the "
             "gradients and skips the update when they overflowed to inf/NaN.",
             "直接调用了 optimizer.step()：请通过 `scaler.step(optimizer)` 更新，它会把梯度除回原来的大小，"
             "并在梯度溢出为 inf/NaN 时跳过这次更新。")
    if result["error"] and not backwards:
        fail(*error_text(result, device))
    if not backwards:
        fail("train_step never called backward.", "train_step 没有调用 backward。")
    if index(result, "scaler.step") is None:
        fail("scaler.step(optimizer) was never called: the parameters are not updated.",
             "没有调用 scaler.step(optimizer)：参数没有被更新。")
    if index(result, "update") is None:
        fail("scaler.update() was never called: the scale factor never adapts (it must shrink after an overflow "
             "and grow back later). Call it once per step, after scaler.step(optimizer).",
             "没有调用 scaler.update()：缩放因子永远不会调整（溢出后要缩小，之后再变大）。"
             "每步在 scaler.step(optimizer) 之后调用一次。")
    order = [e["what"] for e in log if e["what"] in ("scale", "backward", "scaler.step", "update")]
    if index(result, "update") < index(result, "scaler.step"):
        fail(f"The calls ran in the order {' -> '.join(order)}: scaler.update() must come after "
             "scaler.step(optimizer), which reads the scale that update() would change.",
             f"调用顺序为 {' -> '.join(order)}：scaler.update() 必须在 scaler.step(optimizer) 之后，"
             "因为 step 要用到 update() 会修改的缩放因子。")
    first_backward = next(i for i, e in enumerate(log) if e["what"] == "backward")
    if index(result, "scaler.step") < first_backward:
        fail(f"The calls ran in the order {' -> '.join(order)}: step after backward, or the update uses stale "
             "gradients.",
             f"调用顺序为 {' -> '.join(order)}：step 要在 backward 之后，否则更新用的是旧梯度。")
    if result["error"]:
        fail(*error_text(result, device))


@check("gradients are unscaled before clipping their norm to max_norm", points=1,
       zh="先 unscale 梯度，再把梯度范数裁剪到 max_norm")
def test_clip_after_unscale(submission, rng, device):
    result = step_log(submission, rng, device)
    clips = events(result, "clip")
    if not clips:
        if result["error"]:
            fail(*error_text(result, device))
        fail("clip_grad_norm_ was never called: clip the gradients' norm to max_norm, after "
             "scaler.unscale_(optimizer) and before scaler.step(optimizer).",
             "没有调用 clip_grad_norm_：请在 scaler.unscale_(optimizer) 之后、scaler.step(optimizer) 之前，"
             "把梯度范数裁剪到 max_norm。")
    clip = clips[0]
    if not clip["unscaled"]:
        fail(f"clip_grad_norm_ ran on the scaled gradients (norm {clip['norm']:.3g}, {clip['scale']:g} times too "
             "large): call scaler.unscale_(optimizer) first, or max_norm means nothing and the update ends up "
             "far too small.",
             f"clip_grad_norm_ 裁剪的是缩放后的梯度（范数 {clip['norm']:.3g}，大了 {clip['scale']:g} 倍）："
             "请先调用 scaler.unscale_(optimizer)，否则 max_norm 没有意义，更新也会小得多。")
    if clip["max_norm"] is None or abs(clip["max_norm"] - result["max_norm"]) > 1e-6:
        fail(f"clip_grad_norm_ got max_norm={clip['max_norm']}, but train_step was given "
             f"max_norm={result['max_norm']}: pass the argument on.",
             f"clip_grad_norm_ 收到的 max_norm={clip['max_norm']}，但 train_step 收到的是 "
             f"max_norm={result['max_norm']}：请把参数传下去。")
    step_at = index(result, "scaler.step")
    if step_at is not None and step_at < result["log"].index(clip):
        fail("clip_grad_norm_ ran after scaler.step(optimizer): clipping after the update changes nothing; clip "
             "between unscale_ and step.",
             "clip_grad_norm_ 在 scaler.step(optimizer) 之后才运行：更新之后再裁剪没有任何作用；"
             "请在 unscale_ 和 step 之间裁剪。")


@check("train_step returns the loss, and training with it lowers the loss", points=2,
       zh="train_step 返回 loss，用它训练能让 loss 下降")
def test_loss_decreases(submission, rng, device):
    steps = 40
    result = step_log(submission, rng, device, steps=steps, lr=0.1)
    if result["error"]:
        fail(*error_text(result, device))
    losses = result["losses"]
    bad = next((v for v in losses if isinstance(v, str)), None)
    if bad is not None:
        fail(f"train_step should return the loss (a number or a one-element tensor), got {bad}"
             + (": did you forget `return loss`?" if bad == "a NoneType" else "."),
             f"train_step 应返回 loss（一个数或只有一个元素的 tensor），实际得到 {bad}"
             + ("：是不是忘了 `return loss`？" if bad == "a NoneType" else "。"))
    record_curve(f"loss per train_step under mixed precision ({device})", {"yours": losses}, log=True)
    if not all(v == v and abs(v) != float("inf") for v in losses):
        fail("train_step returned NaN or inf losses.", "train_step 返回的 loss 含有 NaN 或 inf。")
    before, after = result["loss_before"], result["loss_after"]
    if abs(losses[0] - before) > 0.05 * abs(before) + 1e-3:
        fail(f"The first loss train_step returned is {losses[0]:.4g}, but the model's mean squared error on (x, y) "
             f"was {before:.4g}: return the MSE loss of this step's forward pass (the unscaled loss, not "
             "scaler.scale(loss)).",
             f"train_step 返回的第一个 loss 为 {losses[0]:.4g}，但模型在 (x, y) 上的均方误差是 {before:.4g}："
             "请返回这一步前向传播的 MSE loss（未缩放的 loss，不是 scaler.scale(loss)）。")
    if not after < 0.7 * before:
        fail(f"After {steps} calls of train_step the loss went from {before:.4g} to {after:.4g}: it should drop "
             "clearly. Are the gradients zeroed each step, the loss scaled before backward and unscaled before "
             "clipping?",
             f"调用 train_step {steps} 次后，loss 从 {before:.4g} 变为 {after:.4g}：应该明显下降。"
             "每步是否清零了梯度？backward 前是否缩放了 loss，裁剪前是否 unscale 了梯度？")
