"""Hidden checks of ex17: mixed precision with torch.autocast and torch.amp.GradScaler.

The learner's train_step runs in the sandbox on a fresh model, optimizer and scaler, with what happens around
it observed: forward hooks on the Linear layers (the dtype they produced, the autocast state), backward
replaced for the call (inside autocast or not, on the scaled loss or not, stale gradients before it), the
gradients' norm when the optimizer steps and after train_step returns, and the scale. Effects are judged, not
calls: clipping by the norm the optimizer sees (any public API that clips is fine), stepping through the
scaler by an overflowed step (an inf in x) that must leave the parameters alone and halve the scale.

On a CPU, "cpu" runs for real in bfloat16 and the GPU branch runs too: train_step(..., "cuda") with CUDA
pretended (`pretend_cuda`), on CPU tensors, where the autocast state (on for "cuda", float16) is what tells.
With --device cuda the same checks run on a GPU with float16.
"""

import contextlib
import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import (Text, check, fail, fail_raised, is_number, learner_call, matches, patched, pretend_cuda,
                             probe, record_curve, verbatim)
from grader.devices import fail_if_gpu

EXPECTED = {"cpu": "bfloat16", "cuda": "float16"}
HIDDEN = 16
CALLS = 5  # logged train_step calls (float16 may skip the first few)
LOG_LR, TRAIN_LR, TRAIN_STEPS = 0.05, 0.1, 40
NO_CLIP = 1e9  # the training check clips nothing, so that a clipping mistake costs only the clipping check


# -- sandbox side ------------------------------------------------------------------------

def _dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


@probe
def run_dtype(module, device_type):
    value = module.autocast_dtype(device_type)
    return {"dtype": _dtype_name(value) if isinstance(value, torch.dtype) else None,
            "type": type(value).__name__, "value": repr(value)[:40]}


@probe
def run_make_scaler(module, device_type):
    """Build the learner's scaler with CUDA pretended available (GradScaler creates nothing on the GPU until
    it scales a loss), so that a scaler for "cuda" can be inspected on any machine."""
    with pretend_cuda(module), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = module.make_scaler(device_type)
    return {
        "type": f"{type(scaler).__module__}.{type(scaler).__qualname__}",
        "is_scaler": isinstance(scaler, torch.amp.GradScaler),
        "device": getattr(scaler, "_device", None),
        "enabled": bool(getattr(scaler, "_enabled", False)),
        "deprecated": any("deprecated" in str(w.message) for w in caught),
    }


def _make_model(seed, d, device):
    gen = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(d, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * (1.0 / p.shape[-1]) ** 0.5)
    return model.to(device)


def _grad_norm(model):
    grads = [p.grad.detach().float() for p in model.parameters() if p.grad is not None]
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))) if grads else None


class _Watch:
    """Observes train_step on one model, optimizer and scaler: each call's events go to `self.log`."""

    def __init__(self, model, optimizer, scaler, device_type):
        self.device_type = device_type
        self.other = "cpu" if device_type == "cuda" else "cuda"
        self.log = []
        self.scaled = []  # what scaler.scale returned (kept alive, compared by identity)
        self.in_step = 0
        original_backward = torch.autograd.backward

        def backward(tensors, *args, **kwargs):
            root = tensors[0] if isinstance(tensors, (list, tuple)) and tensors else tensors
            stale = any(p.grad is not None and bool(p.grad.detach().abs().sum() > 0) for p in model.parameters())
            self.log.append({"what": "backward", "scaled": any(root is s for s in self.scaled), "stale": stale,
                             "autocast": self.autocast_on()})
            return original_backward(tensors, *args, **kwargs)
        self.backward = backward

        def scale(outputs):
            out = type(scaler).scale(scaler, outputs)
            self.scaled.append(out)
            return out

        def step(opt, *args, **kwargs):
            self.log.append({"what": "scaler.step"})
            self.in_step += 1
            try:
                return type(scaler).step(scaler, opt, *args, **kwargs)
            finally:
                self.in_step -= 1
        def update(*args, **kwargs):
            self.log.append({"what": "scaler.update"})
            return type(scaler).update(scaler, *args, **kwargs)
        scaler.scale, scaler.step, scaler.update = scale, step, update
        optimizer.register_step_pre_hook(lambda *_: self.log.append(
            {"what": "optimizer.step", "direct": not self.in_step, "norm": _grad_norm(model)}))
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                layer.register_forward_hook(self.on_forward)

    def autocast_on(self):
        return torch.is_autocast_enabled(self.device_type) or torch.is_autocast_enabled(self.other)

    def on_forward(self, layer, inputs, output):
        cast = {t: _dtype_name(torch.get_autocast_dtype(t)) if torch.is_autocast_enabled(t) else None
                for t in ("cpu", "cuda")}
        self.log.append({"what": "forward", "dtype": _dtype_name(output.dtype), "cast": cast})


def _loss_value(loss):
    if isinstance(loss, torch.Tensor) and loss.numel() == 1:
        return float(loss.detach().float().reshape(()).cpu())
    if is_number(loss, (int, float)):
        return float(loss)
    return f"a {type(loss).__name__}"


@probe
def run_steps(module, seed, inputs, y, device_type, max_norm, lr, pretend, repeat=1):
    """Call train_step once per x in `inputs` (`repeat` times over) on a fresh model, optimizer and scaler;
    report each call.

    With `pretend`, device_type is "cuda" and CUDA is pretended on the CPU (the tensors stay there)."""
    place = "cpu" if pretend else device_type
    model = _make_model(seed, inputs[0].shape[1], place)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    result = {"calls": [], "error": None, "own_dtype": None}
    with contextlib.ExitStack() as stack:
        seen = stack.enter_context(pretend_cuda(module)) if pretend else None
        scaler = torch.amp.GradScaler(device_type)
        watch = _Watch(model, optimizer, scaler, device_type)
        with contextlib.suppress(Exception):
            result["own_dtype"] = _dtype_name(module.autocast_dtype(device_type))
        stack.enter_context(patched(module, torch.autograd, "backward", watch.backward))
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        warnings.simplefilter("always")
        y = y.to(place)
        for x in inputs * repeat:
            x = x.to(place)
            watch.log = []  # the probe's own forward below is not the learner's
            with torch.no_grad():
                before = [p.detach().clone() for p in model.parameters()]
                mse = float(((model(x).float() - y) ** 2).mean())
            call = {"log": [], "mse_before": mse, "scale_before": scaler.get_scale()}
            result["calls"].append(call)
            watch.log = call["log"]
            loss, result["error"] = learner_call(module, module.train_step, model, optimizer, scaler, x, y,
                                                 device_type, max_norm)
            if result["error"]:  # the log says what went wrong before the error
                break
            call["loss"] = _loss_value(loss)
            call["end_norm"] = _grad_norm(model)
            call["scale_after"] = scaler.get_scale()
            call["changed"] = any(not torch.equal(a, p) for a, p in zip(before, model.parameters()))
            call["finite"] = all(bool(torch.isfinite(p).all()) for p in model.parameters())
        result["warnings"] = [str(w.message)[:200] for w in caught]
    result["param_dtypes"] = sorted({_dtype_name(p.dtype) for p in model.parameters()})
    result["cuda"] = [c for c in seen.calls if not c.startswith("torch.cuda.")] if seen else []
    return result


# -- judge side ----------------------------------------------------------------------------

def draw(rng, n=64):
    """Inputs, a model seed, and a max_norm half the gradient's norm (clipping must act), away from 1.0.

    The target is the model's own first prediction plus a smaller learnable part, so that a loss which
    broadcasts the prediction [N] against y [N, 1] differs from the mean squared error by construction
    (by twice the prediction's variance), not by luck."""
    d = 4 + int(torch.randint(0, 4, (1,), generator=rng))
    x = torch.randn(n, d, generator=rng)
    w = torch.randn(d, 1, generator=rng)
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=rng))
    model = _make_model(seed, d, "cpu")
    with torch.no_grad():
        y = model(x) + 0.3 * torch.tanh(x @ w) + 0.05 * torch.randn(n, 1, generator=rng)
    F.mse_loss(model(x), y).backward()
    norm = _grad_norm(model)
    max_norm = round(0.5 * norm, 4)
    if 0.8 < max_norm < 1.25:  # a hard-coded max_norm=1.0 must show
        max_norm = round(0.3 * norm, 4)
    return seed, x, y, max_norm, norm


def call_text(device_type, max_norm, pretend=False):
    call = Text("`train_step(model, optimizer, scaler, x, y, {device!r}, max_norm={max_norm:g})`",
                "`train_step(model, optimizer, scaler, x, y, {device!r}, max_norm={max_norm:g})`",
                device=device_type, max_norm=max_norm)
    return call + (Text(" (CUDA simulated on the CPU)", "（在 CPU 上模拟 CUDA）") if pretend else "")


def runs(submission, rng, device, *, overflow=False):
    """Logged train_step calls per device type: the `device` fixture's for real and, on a CPU, the GPU branch
    with CUDA pretended. A few calls, since a float16 scaler may skip the first steps (their scaled gradients
    overflow until the scale has come down), then a call whose x holds an inf (its step must be skipped): made
    once per grading, drawn by the first check that asks; without `overflow`, the runs as they stood before
    that last call."""
    found = submission.once("runs", lambda: logged_runs(submission, rng, device))
    return found if overflow else [before_overflow(result) for result in found]


def logged_runs(submission, rng, device):
    seed, x, y, max_norm, norm = draw(rng)
    bad = x.clone()
    bad[0, 0] = float("inf")
    inputs = [x] * CALLS + [bad]
    found = []
    # on a CPU machine a GPU is pretended in both runs: the "cpu" run must still put nothing on it
    for device_type, pretend in [(device, device == "cpu")] + ([("cuda", True)] if device == "cpu" else []):
        call = call_text(device_type, max_norm, pretend and device_type == "cuda")
        result = submission.probe(run_steps, seed, inputs, y, device_type, max_norm, LOG_LR, pretend,
                                  what=call)
        result.update(call=call, device_type=device_type, pretend=pretend, max_norm=max_norm, norm=norm)
        found.append(result)
    return found


def before_overflow(result):
    """A run without its overflowing last call: an error that call raised is dropped with it."""
    calls = result["calls"][:CALLS]
    return {**result, "calls": calls, "error": result["error"] if len(result["calls"]) <= CALLS else None}


# What GradScaler's own errors mean, in the learner's words.
SCALER_ERRORS = {
    "is being called after step()": (
        "`scaler.update()` must end every step: without it the scaler still thinks the last step is running.",
        "每一步都要以 `scaler.update()` 结束：没有它，scaler 会以为上一步还没结束。", "update-missing"),
    "_scale is None": (
        "`scaler.scale(loss)` was never called, so there is nothing to unscale: backward `scaler.scale(loss)`.",
        "从未调用 `scaler.scale(loss)`，所以没有可以 unscale 的东西：请对 `scaler.scale(loss)` 做 backward。",
        "unscaled-backward"),
    "No inf checks were recorded prior to update": (
        "`scaler.update()` needs `scaler.step(optimizer)` first: step through the scaler, then update.",
        "`scaler.update()` 之前需要先调用 `scaler.step(optimizer)`：请先通过 scaler 更新参数，再 update。",
        "update-before-step"),
    "No inf checks were recorded for this optimizer": (  # step found no gradient to unscale: say so, no more
        "When `scaler.step(optimizer)` ran, none of the optimizer's parameters had a gradient, so there was nothing "
        "to unscale and check: the gradients were cleared between `backward()` and the step, or never computed.",
        "`scaler.step(optimizer)` 运行时，优化器的参数都没有梯度，所以没有东西可以 unscale 和检查："
        "梯度在 `backward()` 和 step 之间被清空了，或者根本没有算出来。", "no-grad-at-step"),
    "has already been called since the last update()": (
        "Call `scaler.unscale_(optimizer)` and `scaler.step(optimizer)` once per step, then `scaler.update()`: "
        "without `update()` the next step cannot unscale again.",
        "每步只调用一次 `scaler.unscale_(optimizer)` 和 `scaler.step(optimizer)`，然后调用 `scaler.update()`："
        "没有 `update()`，下一步就无法再次 unscale。", "update-missing"),
}


def fail_error(result):
    """Fail with the learner's error, explained when GradScaler raised it."""
    err = result["error"]
    for needle, (en, zh, scaler_key) in SCALER_ERRORS.items():
        if needle in err["message"]:
            fail_raised(err, result["call"], Text(en, zh), key=scaler_key)
    fail_raised(err, result["call"])


def events(call, what):
    return [e for e in call["log"] if e["what"] == what]


def call_with(result, what):
    """The first train_step call whose log has `what` (None if none did), failing with the learner's error
    if the calls stopped before any did."""
    call = next((c for c in result["calls"] if events(c, what)), None)
    if call is None and result["error"]:
        fail_error(result)
    return call


DEPRECATED = Text("`torch.cuda.amp` is deprecated, and its autocast only covers CUDA: use "
                  "`torch.autocast(device_type, dtype=...)` and `torch.amp.GradScaler(device_type)`.",
                  "`torch.cuda.amp` 已被弃用，而且它的 autocast 只作用于 CUDA：请使用 "
                  "`torch.autocast(device_type, dtype=...)` 和 `torch.amp.GradScaler(device_type)`。")


@check("autocast_dtype: bfloat16 on the CPU, float16 on CUDA", points=1,
       zh="autocast_dtype：CPU 上用 bfloat16，CUDA 上用 float16")
def test_autocast_dtype(submission):
    for device_type, want in EXPECTED.items():
        got = submission.probe(run_dtype, device_type, what=f"`autocast_dtype({device_type!r})`")
        if got["dtype"] != want:
            seen = Text("`torch.{d}`", "`torch.{d}`", d=got["dtype"]) if got["dtype"] else \
                Text("the {type} {value}", "{type} {value}", type=verbatim(got["type"]), value=verbatim(got["value"]))
            fail("`autocast_dtype({device!r})` should be `torch.{want}`, got {seen}: CPUs compute in bfloat16 "
                 "(float32's range, fewer digits), CUDA GPUs classically in float16.",
                 "`autocast_dtype({device!r})` 应为 `torch.{want}`，实际为 {seen}：CPU 上用 bfloat16"
                 "（与 float32 范围相同、精度更低），CUDA GPU 上传统上用 float16。",
                 device=device_type, want=want, seen=seen, key="wrong-autocast-dtype")


@check("make_scaler builds a torch.amp.GradScaler for the device type", points=1,
       zh="make_scaler 为该设备类型创建 torch.amp.GradScaler")
def test_make_scaler(submission):
    for device_type in ("cpu", "cuda"):
        got = submission.probe(run_make_scaler, device_type, what=f"`make_scaler({device_type!r})`")
        call = f"`make_scaler({device_type!r})`"
        if not got["is_scaler"]:
            fail("{call} should return a `torch.amp.GradScaler`, got a {type}.",
                 "{call} 应返回 `torch.amp.GradScaler`，实际得到 {type}。",
                 call=call, type=verbatim(got["type"]), key="not-a-scaler")
        if got["deprecated"] or got["type"].startswith(("torch.cuda.amp", "torch.cpu.amp")):
            old = ".".join(got["type"].split(".")[:2]) + ".amp.GradScaler"
            fail("{call} used the deprecated `{old}`: use `torch.amp.GradScaler({device!r})`, the same class for "
                 "every device.",
                 "{call} 使用了已弃用的 `{old}`：请使用 `torch.amp.GradScaler({device!r})`，所有设备共用这一个类。",
                 call=call, old=old, device=device_type, key="deprecated-amp")
        if got["device"] != device_type:
            fail("{call} returned a scaler for {got!r}: pass the device type, `torch.amp.GradScaler({device!r})`.",
                 "{call} 返回的 scaler 属于 {got!r}：请传入设备类型，`torch.amp.GradScaler({device!r})`。",
                 call=call, got=got["device"], device=device_type, key="scaler-wrong-device")
        if device_type == "cuda" and not got["enabled"]:
            fail("`make_scaler('cuda')` returned a disabled scaler: float16 gradients underflow without loss "
                 "scaling, so keep it enabled on CUDA.",
                 "`make_scaler('cuda')` 返回的 scaler 被禁用了：不做 loss scaling 时 float16 梯度会下溢为 0，"
                 "所以在 CUDA 上要保持启用。", key="scaler-disabled")


def check_forward(result):
    call = call_with(result, "forward")
    if call is None:
        fail("{call} never ran the model on x.", "{call} 没有用模型处理 x。", call=result["call"], key="no-forward")
    if result["param_dtypes"] != ["float32"]:
        fail("The model's parameters became {dtypes}: do not convert the model (`.half()`, `.to(dtype)`); autocast "
             "keeps the weights in float32 and picks a dtype per operation.",
             "模型参数变成了 {dtypes}：不要转换模型（`.half()`、`.to(dtype)`）；autocast 让权重保持 float32，"
             "并为每个运算选择 dtype。", dtypes=", ".join(result["param_dtypes"]), key="model-converted")
    device_type, want = result["device_type"], EXPECTED[result["device_type"]]
    allowed = {want, result["own_dtype"]}  # the learner's own dtype, for the moment: see the end
    other = "cpu" if device_type == "cuda" else "cuda"
    forwards = events(call, "forward")
    if result["pretend"]:  # CPU tensors: autocast for "cpu" with CUDA's dtype is the device type read off x
        for e in forwards:
            if e["cast"]["cuda"] is None and e["cast"]["cpu"] in allowed:
                e["cast"]["cuda"] = e["cast"]["cpu"]
    if not all(e["cast"][device_type] for e in forwards):
        if any("torch.cuda.amp" in w and "deprecated" in w for w in result["warnings"]):
            fail(DEPRECATED, key="deprecated-amp")
        if any(e["cast"][other] for e in forwards) or any("CUDA is not available" in w for w in result["warnings"]):
            fail("{call}: the forward pass ran under autocast opened for {other!r}, not for {device!r}, so it is not "
                 "mixed precision on this device. Pass the device type: `torch.autocast(device_type, dtype=...)`.",
                 "{call}：前向传播所在的 autocast 是为 {other!r} 打开的，而不是 {device!r}，所以在这个设备上"
                 "没有混合精度。请传入设备类型：`torch.autocast(device_type, dtype=...)`。",
                 call=result["call"], other=other, device=device_type, key="autocast-device-hard-coded")
        fail("{call}: the model's Linear layers ran outside autocast. Run the forward and the loss inside "
             "`with torch.autocast(device_type, dtype=...)`.",
             "{call}：模型的 Linear 层在 autocast 之外运行。请把前向传播和 loss 放进 "
             "`with torch.autocast(device_type, dtype=...)` 中。", call=result["call"], key="no-autocast")
    # for real the Linear layers' outputs tell; on a pretended GPU (CPU tensors) the autocast dtype does
    used = sorted({e["cast"][device_type] if result["pretend"] else e["dtype"] for e in forwards})
    if used == [result["own_dtype"]] != [want]:  # a wrong dtype from autocast_dtype: that function's own check's
        fail("{call}: under autocast the Linear layers ran in {used}, the dtype your `autocast_dtype({device!r})` "
             "gives; on {device} it is {want}. Fix `autocast_dtype` (its check above says so), and this check follows.",
             "{call}：在 autocast 下 Linear 层以 {used} 运行，这是你的 `autocast_dtype({device!r})` 给出的 dtype；在 "
             "{device} 上应为 {want}。请修正 `autocast_dtype`（上面它的检查说明了这一点），这个检查也会随之通过。",
             call=result["call"], used=used[0], device=device_type, want=want, key="wrong-autocast-dtype")
    if used != [want]:
        fail("{call}: under autocast the Linear layers ran in {used}, but on {device} the dtype is {want} "
             "(use `autocast_dtype(device_type)`).",
             "{call}：在 autocast 下 Linear 层以 {used} 运行，但在 {device} 上应为 {want}"
             "（使用 `autocast_dtype(device_type)`）。", call=result["call"], used=", ".join(used), device=device_type,
             want=want, key="wrong-autocast-dtype")


@check("the forward pass runs under autocast, in the device's low-precision dtype", points=2,
       zh="前向传播在 autocast 下运行，使用该设备的低精度 dtype")
def test_forward_autocast(submission, rng, device):
    for result in runs(submission, rng, device):
        if result["device_type"] == "cpu":
            fail_if_gpu(result["cuda"], result["call"])
        check_forward(result)


def backwards(result):
    """The backward events of the first train_step call that ran backward."""
    call = call_with(result, "backward")
    if call is None:
        fail("{call} never called backward.", "{call} 没有调用 backward。", call=result["call"], key="no-backward")
    return events(call, "backward")


@check("backward runs outside the autocast block", points=1, zh="backward 在 autocast 代码块之外运行")
def test_backward_outside(submission, rng, device):
    for result in runs(submission, rng, device):
        if any(e["autocast"] for e in backwards(result)):
            fail("{call}: backward ran inside the `with torch.autocast(...)` block. Leave the block after the loss "
                 "and call backward outside it (backward ops already reuse the forward's dtypes).",
                 "{call}：backward 在 `with torch.autocast(...)` 代码块内运行。算完 loss 就退出代码块，在代码块之外调用 "
                 "backward（反向运算会自动沿用前向的 dtype）。", call=result["call"], key="backward-inside-autocast")


@check("backward runs on the scaled loss", points=1, zh="backward 作用在缩放后的 loss 上")
def test_scaled_backward(submission, rng, device):
    for result in runs(submission, rng, device):
        if not any(e["scaled"] for e in backwards(result)):
            fail("{call}: backward ran on the unscaled loss. Call `scaler.scale(loss).backward()` so that small "
                 "float16 gradients do not underflow to 0 (the scaler divides them back before the step).",
                 "{call}：backward 作用在未缩放的 loss 上。请调用 `scaler.scale(loss).backward()`，这样小的 float16 "
                 "梯度不会下溢为 0（scaler 会在 step 之前再把它们除回来）。", call=result["call"],
                 key="unscaled-backward")


@check("steps go through the scaler: a step whose gradients overflowed is skipped, and the scale adapts",
       points=1, zh="通过 scaler 更新：梯度溢出的那一步被跳过，缩放因子随之调整", depends="scaled_backward")
def test_scaler_step(submission, rng, device):
    for result in runs(submission, rng, device, overflow=True):
        if result["error"]:
            fail_error(result)
        *normal, overflow = result["calls"]
        if not any(c["changed"] for c in normal):
            stepped = any(events(c, "scaler.step") for c in normal)
            skipped = stepped and not any(events(c, "optimizer.step") for c in normal)
            fail("{call} did not change the parameters in {n} calls{why}.", "{call} 在 {n} 次调用中都没有改变参数{why}。",
                 call=result["call"], n=len(normal), why=Text(
                     ": the scaler skipped every step (the scaled gradients overflowed to inf or NaN each time)",
                     "：scaler 跳过了每一步（缩放后的梯度每次都溢出为 inf 或 NaN）") if skipped else "" if stepped else
                 Text(": step through `scaler.step(optimizer)`", "：请通过 `scaler.step(optimizer)` 更新"),
                 key="gradients-overflow" if skipped else "no-update")
        direct = any(e["direct"] for e in events(overflow, "optimizer.step"))
        if overflow["changed"] or not overflow["finite"]:
            if direct:
                cause = Text(" `optimizer.step()` was called directly: step through `scaler.step(optimizer)`, which "
                             "skips the update when the gradients hold inf or NaN.",
                             "直接调用了 `optimizer.step()`：请通过 `scaler.step(optimizer)` 更新，它会在梯度含有 inf 或 "
                             "NaN 时跳过这次更新。")
            elif not events(overflow, "scaler.step"):
                cause = Text(" Step through `scaler.step(optimizer)`, which skips such a step.",
                             "请通过 `scaler.step(optimizer)` 更新，它会跳过这样的一步。")
            else:  # the scaler skipped its step: something else changed them
                cause = Text(" `scaler.step(optimizer)` skipped the step, so something else in train_step changed "
                             "them: update the parameters only through it.",
                             "`scaler.step(optimizer)` 跳过了这一步，所以是 train_step 中的其他代码改变了它们："
                             "只通过它来更新参数。")
            fail("{call} with an inf in x: the gradients overflowed, yet the parameters were updated{nan}.{cause}",
                 "{call} 的 x 中有一个 inf：梯度溢出了，参数却仍被更新{nan}。{cause}", call=result["call"],
                 nan=Text(" (they are NaN now)", "（现在变成了 NaN）") if not overflow["finite"] else "",
                 cause=cause, key="optimizer-step-direct" if direct else "overflow-not-skipped")
        if not overflow["scale_after"] < overflow["scale_before"]:
            fail("{call} with an inf in x: the gradients overflowed, but the scale stayed {scale:g}. "
                 "`scaler.update()` lowers it after an overflow (and raises it again later): call it once per step, "
                 "after `scaler.step(optimizer)`.",
                 "{call} 的 x 中有一个 inf：梯度溢出了，但缩放因子仍为 {scale:g}。溢出后 `scaler.update()` 会降低它"
                 "（之后再升高）：每步在 `scaler.step(optimizer)` 之后调用一次。", call=result["call"],
                 scale=overflow["scale_after"], key="update-missing")


@check("the gradients reach the step unscaled and clipped to max_norm", points=1,
       zh="梯度在 step 时已 unscale，并裁剪到 max_norm", depends="scaled_backward")
def test_clip_after_unscale(submission, rng, device):
    for result in runs(submission, rng, device):
        call = call_with(result, "optimizer.step")
        if call is None:
            skipped = all(c["scale_after"] < c["scale_before"] for c in result["calls"])
            fail("{call} never stepped the optimizer in {n} calls{why}, so no clipped gradient could be seen.",
                 "{call} 在 {n} 次调用中从未执行优化器的 step{why}，看不到裁剪后的梯度。", call=result["call"], n=CALLS,
                 why=Text(" (the scaler skipped every step: the scaled gradients overflowed to inf or NaN each time)",
                          "（scaler 跳过了每一步：缩放后的梯度每次都溢出为 inf 或 NaN）") if skipped else "",
                 key="gradients-overflow" if skipped else "no-update")
        seen, max_norm, norm = events(call, "optimizer.step")[0]["norm"], result["max_norm"], result["norm"]
        scale = call["scale_before"]
        values = dict(call=result["call"], seen=seen, max_norm=max_norm, norm=norm)
        if matches(seen, max_norm, rtol=0.02):
            continue
        order = [e["what"] for e in call["log"] if e["what"] in ("scaler.update", "optimizer.step")]
        if matches(seen * scale, max_norm, rtol=0.02) and order[:1] == ["scaler.update"]:
            fail("{call}: `scaler.update()` ran before `scaler.step(optimizer)`. The update ends the scaler's step, so "
                 "the step unscaled the gradients once more: they reached the optimizer with norm {seen:.3g}, {scale:g} "
                 "times smaller than max_norm={max_norm:g}. Call `scaler.update()` last, after the step.",
                 "{call}：`scaler.update()` 在 `scaler.step(optimizer)` 之前运行了。update 会结束 scaler 的这一步，所以 "
                 "step 又把梯度 unscale 了一次：梯度到达优化器时范数为 {seen:.3g}，比 max_norm={max_norm:g} 小了 "
                 "{scale:g} 倍。请最后调用 `scaler.update()`，放在 step 之后。", scale=scale, **values,
                 key="update-before-step")
        if matches(seen * scale, max_norm, rtol=0.02):
            fail("{call}: the gradients reached the step with norm {seen:.3g}, {scale:g} times smaller than "
                 "max_norm={max_norm:g}: they were clipped while still scaled. Call `scaler.unscale_(optimizer)` "
                 "before clipping, or max_norm means nothing and the update ends up far too small.",
                 "{call}：梯度到达 step 时范数为 {seen:.3g}，比 max_norm={max_norm:g} 小了 {scale:g} 倍：裁剪时梯度"
                 "还是缩放过的。请在裁剪前调用 `scaler.unscale_(optimizer)`，否则 max_norm 没有意义，更新也会小得多。",
                 scale=scale, **values, key="clip-before-unscale")
        if seen > 1.5 * max_norm:  # the norm before clipping is twice max_norm
            if matches(call.get("end_norm"), max_norm, rtol=0.02):
                fail("{call}: the gradients were clipped after the step: the optimizer used them unclipped "
                     "(norm {seen:.3g} > max_norm={max_norm:g}). Clip between `scaler.unscale_(optimizer)` and "
                     "`scaler.step(optimizer)`.",
                     "{call}：梯度是在 step 之后才裁剪的：优化器用的是未裁剪的梯度（范数 {seen:.3g} > max_norm="
                     "{max_norm:g}）。请在 `scaler.unscale_(optimizer)` 和 `scaler.step(optimizer)` 之间裁剪。",
                     **values, key="clip-after-step")
            fail("{call}: the gradients reached the step with norm {seen:.3g}, above max_norm={max_norm:g}: their "
                 "total norm was not clipped to it. After `scaler.unscale_(optimizer)`, clip it to the max_norm given "
                 "(`torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)`).",
                 "{call}：梯度到达 step 时范数为 {seen:.3g}，大于 max_norm={max_norm:g}：总范数没有被裁剪到它。请在 "
                 "`scaler.unscale_(optimizer)` 之后把总范数裁剪到传入的 max_norm"
                 "（`torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)`）。", **values, key="clip-missing")
        fail("{call}: the gradients reached the step with norm {seen:.3g}; clipped to max_norm={max_norm:g} their "
             "norm would be {max_norm:g} (it was {norm:.3g} before clipping). Clip with the max_norm given, and by "
             "the norm of all gradients together.",
             "{call}：梯度到达 step 时范数为 {seen:.3g}；若按 max_norm={max_norm:g} 裁剪，范数应为 {max_norm:g}"
             "（裁剪前为 {norm:.3g}）。请使用传入的 max_norm，并按全部梯度的总范数裁剪。", **values,
             key="clip-wrong-norm")


def reference_ratio(seed, x, y) -> float:
    """The last loss over the first of TRAIN_STEPS steps of SGD (lr TRAIN_LR) under bfloat16 autocast on the CPU,
    the training a correct train_step makes from the model `seed` draws: what the draw allows."""
    model = _make_model(seed, x.shape[1], "cpu")
    optimizer = torch.optim.SGD(model.parameters(), lr=TRAIN_LR)
    losses = []
    for _ in range(TRAIN_STEPS):
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses[-1] / losses[0]


def trainable_draw(rng):
    """A draw on which the reference training lowers the loss to half or less (a few draws in a thousand make it
    diverge at TRAIN_LR): a correct train_step then clears the bar of 0.7 with room to spare, on every seed."""
    for _ in range(20):
        found = draw(rng)
        if reference_ratio(found[0], found[1], found[2]) <= 0.5:
            return found
    raise AssertionError("no draw the reference training learns: the check's data are wrong")  # pragma: no cover


@check("train_step zeroes the gradients and returns the loss, and training with it lowers the loss", points=2,
       zh="train_step 清零梯度并返回 loss，用它训练能让 loss 下降", depends=("scaled_backward", "scaler_step"))
def test_loss_decreases(submission, rng, device):
    seed, x, y, _, _ = trainable_draw(rng)
    call = call_text(device, NO_CLIP)
    result = submission.probe(run_steps, seed, [x], y, device, NO_CLIP, TRAIN_LR, False, TRAIN_STEPS, what=call)
    result["call"] = call
    calls = result["calls"]
    if any(e["stale"] for c in calls for e in events(c, "backward")):
        fail("{call}: the gradients were not zeroed: backward in a later step added to the last step's "
             "gradients. Zero them at each step (`optimizer.zero_grad()`).",
             "{call}：梯度没有清零：后面一步的 backward 叠加在上一步的梯度上。请每一步都清零梯度"
             "（`optimizer.zero_grad()`）。", call=call, key="zero-grad-missing")
    if result["error"]:
        fail_error(result)
    losses = [c["loss"] for c in calls]
    bad = next((v for v in losses if isinstance(v, str)), None)
    if bad is not None:
        fail("train_step should return the loss (a number or a one-element tensor), got {bad}.{hint}",
             "train_step 应返回 loss（一个数或只有一个元素的 tensor），实际得到 {bad}。{hint}",
             bad=verbatim(bad), hint=Text(" Did you forget `return loss`?", "是不是忘了 `return loss`？")
             if bad == "a NoneType" else "", key="returned-none" if bad == "a NoneType" else "not-a-number")
    record_curve(Text("loss per train_step under mixed precision ({device})", device=device), {"yours": losses},
                 log=True)
    if not all(math.isfinite(v) for v in losses):
        fail("{call} returned NaN or inf losses.", "{call} 返回的 loss 含有 NaN 或 inf。", call=call, key="nan")
    first, before = losses[0], calls[0]["mse_before"]
    if not matches(first, before, rtol=0.1, atol=1e-4):  # 16-bit forward passes round
        values = dict(call=call, got=first, want=before)
        if matches(first, before * calls[0]["scale_before"], rtol=0.1):
            fail("{call} returned {got:.4g} the first time, the scaled loss: the model's mean squared error was "
                 "{want:.4g}. Return the loss itself, not `scaler.scale(loss)`.",
                 "{call} 第一次返回 {got:.4g}，这是缩放后的 loss：模型的均方误差是 {want:.4g}。请返回 loss 本身，"
                 "而不是 `scaler.scale(loss)`。", **values, key="returned-scaled-loss")
        with torch.no_grad():
            prediction = _make_model(seed, x.shape[1], "cpu")(x).reshape(-1)
        broadcast = float(((prediction - y) ** 2).mean())  # [N] against [N, 1]: every prediction with every target
        if any("target size" in w for w in result["warnings"]) or matches(first, broadcast, rtol=0.1):
            fail("{call} returned {got:.4g} the first time, but the model's mean squared error was {want:.4g}, and "
                 "that is what comparing a prediction of shape [N] with y of shape [N, 1] gives (the two broadcast to "
                 "[N, N]). Did a `.squeeze()` drop the size-1 dimension of the prediction? Keep both at the shape of y.",
                 "{call} 第一次返回 {got:.4g}，但模型的均方误差是 {want:.4g}；形状为 [N] 的预测与形状为 [N, 1] 的 y 相比较"
                 "（两者广播成 [N, N]）正好得到这个值。是不是 `.squeeze()` 去掉了预测值中大小为 1 的维度？请让两者都保持 y 的形状。",
                 **values, key="broadcast-loss")
        fail("{call} returned {got:.4g} the first time, but the model's mean squared error on (x, y) was {want:.4g}: "
             "return the mean squared error of this step's forward pass.",
             "{call} 第一次返回 {got:.4g}，但模型在 (x, y) 上的均方误差是 {want:.4g}：请返回这一步前向传播的均方误差。",
             **values, key="wrong-loss")
    last = losses[-1]
    if not last < 0.7 * first:
        fail("After {steps} calls of train_step the loss went from {first:.4g} to {last:.4g}: it should drop "
             "clearly. Does each step update the parameters against the gradient?",
             "调用 train_step {steps} 次后，loss 从 {first:.4g} 变为 {last:.4g}：应该明显下降。每一步是否都沿梯度的"
             "反方向更新了参数？", steps=TRAIN_STEPS, first=first, last=last, key="loss-not-decreasing")
