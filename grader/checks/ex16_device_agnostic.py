"""Hidden checks of ex16: a training loop that runs on whatever device it is given.

Three ways to see where things end up, none of which needs a GPU in the judge:
- pick_device runs with CUDA pretended available and unavailable, and an Apple MPS device pretended beside
  (`pretend_cuda`, no CUDA tensor is made);
- the source of train is read for `.cuda()` calls: one behind a check of the device's type never runs on the
  meta device, yet the statement says it is named;
- train runs on PyTorch's "meta" device (shapes, no data) with CUDA pretended available, so the GPU branch
  of the learner's code runs too: a `.cuda()` or a "cuda" string is recorded (and run on the CPU), anything
  left on the CPU collides with the meta tensors, and a TorchFunctionMode names the tensors involved (x, y,
  a model parameter, a tensor made inside train). Each placement check places everything else on the device
  already, so that one mistake costs the check of what it breaks;
- train runs on the `device` fixture ("cpu", or "cuda" with --device cuda) for real and must learn what plain
  SGD learns.
"""

import ast
import contextlib
import inspect
import re
import textwrap
import warnings

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from grader.checking import (Text, check, error_text, expect_close, fail, fail_raised, learner_call, matches, patched,
                             pretend_cuda, probe, verbatim, where)
from grader.devices import imported_anew

STEPS, LR = 12, 0.1
PLACED_STEPS = 3  # the runs on the meta device: where a step's tensors go shows in the first ones


# -- sandbox side ------------------------------------------------------------------------

class _Blame(TorchFunctionMode):
    """Name the tensors of the first torch call that raised; remember which inputs got `.to()`, which of x, y
    (or their moved copies) took part in a call that worked, and what was sent to CUDA (`seen`, the record of
    `pretend_cuda`, grows during such a call)."""

    def __init__(self, x, y, model, seen):
        super().__init__()
        self.model = model
        self.seen = seen
        self.family = {id(x): "x", id(y): "y"}  # the inputs and the tensors .to()/.cuda() made of them
        self.keep = [x, y]  # keep them alive so that their ids stay theirs
        self.originals = {id(x), id(y)}
        self.failure = None
        self.moved = set()  # "x", "y": the original tensor was passed to .to()/.cuda()
        self.used = {}  # "x", "y" -> devices of the successful calls they took part in
        self.to_cuda = set()  # "model", "x", "y", "other": what the learner's code sent to CUDA

    def role(self, t):
        if id(t) in self.family:
            return self.family[id(t)]
        if any(t is p for p in self.model.parameters()):
            return "model"
        return "other"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        tensors = [t for a in list(args) + list(kwargs.values())
                   for t in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(t, torch.Tensor)]
        moving = name in ("to", "cuda", "cpu") and args and isinstance(args[0], torch.Tensor)
        if moving and id(args[0]) in self.originals:
            self.moved.add(self.family[id(args[0])])
        cuda_calls = len(self.seen.calls) if self.seen is not None else 0
        try:
            out = func(*args, **kwargs)
        except Exception:
            if self.failure is None:
                target = None
                if name in ("cpu", "cuda"):
                    target = name
                elif name == "to" or "device" in kwargs:
                    for a in list(args[1:]) + [kwargs.get("device")]:
                        if isinstance(a, (str, torch.device)):
                            target = torch.device(a).type
                            break
                self.failure = {"func": name, "tensors": [[self.role(t), t.device.type] for t in tensors],
                                "target": target}
            raise
        if self.seen is not None and len(self.seen.calls) > cuda_calls:
            self.to_cuda.add(self.role(args[0]) if moving else "other")
        if moving and id(args[0]) in self.family and isinstance(out, torch.Tensor):
            self.family[id(out)] = self.family[id(args[0])]
            self.keep.append(out)
        elif not moving and name != "__get__":
            for t in tensors:
                if id(t) in self.family:
                    self.used.setdefault(self.family[id(t)], set()).add(t.device.type)
        return out


@probe
def run_train(module, weight, bias, x, y, model_on, data_on, device, steps, lr):
    """Run the learner's train with the model and data placed as asked; report where everything went.

    On the meta device CUDA is pretended available, so a GPU branch runs (on the CPU) and is recorded."""
    model = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    model.to(model_on)
    x_on, y_on = data_on.split(",") if "," in data_on else (data_on, data_on)  # "meta,cpu": x there, y here
    x, y = x.to(x_on), y.to(y_on)
    result = {"error": None, "losses": None}
    with contextlib.ExitStack() as stack:
        seen = stack.enter_context(pretend_cuda(module)) if device == "meta" else None
        if seen is not None:  # the file imported anew with the GPU there: a device it chose at import shows
            module = imported_anew(module, seen) or module
        blame = stack.enter_context(_Blame(x, y, model, seen))
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        warnings.simplefilter("always")
        losses, error = learner_call(module, module.train, model, x, y, torch.device(device), steps, lr)
        if error:  # the probe explains device errors itself; a TODO left in place is "not started"
            result["todo"] = error["not_started"] and "meta" not in error["message"] and blame.failure is None
            result["error"] = {**error, **(blame.failure or {"func": None, "tensors": [], "target": None})}
    result["moved"] = sorted(blame.moved)
    result["used"] = {k: sorted(v) for k, v in blame.used.items()}
    result["to_cuda"] = sorted(blame.to_cuda)
    result["broadcast"] = any("target size" in str(w.message) for w in caught)
    result["model_devices"] = sorted({p.device.type for p in model.parameters()})
    if result["error"] is None:
        if isinstance(losses, torch.Tensor):
            result["losses"] = {"device": losses.device.type, "shape": list(losses.shape),
                                "values": None if losses.device.type == "meta"
                                else losses.detach().to("cpu", torch.float64)}
        else:
            result["losses"] = {"type": type(losses).__name__}
        if model.weight.device.type != "meta":
            result["weight"] = model.weight.detach().to("cpu", torch.float64)
            result["bias"] = model.bias.detach().to("cpu", torch.float64)
    return result


class _Availability:
    """A stand-in for torch.cuda.is_available that notices being tested for truth without a call:
    `if torch.cuda.is_available:` is always true, a function object is."""

    def __init__(self, answer, record):
        self.answer = answer
        self.record = record

    def __call__(self):
        self.record.append("called")
        return self.answer

    def __bool__(self):
        self.record.append("not called")
        return True


@probe
def run_pick_device(module, cuda_available, mps_available):
    """Call pick_device with CUDA and MPS pretended available or not (nothing touches a real GPU)."""
    asked = []
    with pretend_cuda(module, available=cuda_available, mps=mps_available) as seen, \
            patched(module, torch.cuda, "is_available", _Availability(cuda_available, asked)):
        module = imported_anew(module, seen) or module  # what the file decides at import, it decides on this machine
        device, error = learner_call(module, module.pick_device)
    if error:
        return {"error": error}
    return {"asked": asked, "type": type(device).__name__, "value": repr(device)[:40],
            "device": device.type if isinstance(device, torch.device) else None,
            "index": device.index if isinstance(device, torch.device) else None}


@probe
def cuda_calls(module, name):
    """The `.cuda(...)` calls in the source of the learner's function `name`, as [line, code]: the statement says a
    `.cuda()` is named, also one behind a check of the device's type, which no run on the meta device reaches."""
    try:
        lines, first = inspect.getsourcelines(getattr(module, name))
    except (TypeError, OSError, AttributeError):
        return []
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return []
    return [[first + node.lineno - 1, lines[node.lineno - 1].strip()[:80]] for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda"]


# -- judge side ----------------------------------------------------------------------------

def draw(rng, out=2, n=16):
    d = 3 + int(torch.randint(0, 3, (1,), generator=rng))
    true_w = torch.randn(out, d, generator=rng)
    x = torch.randn(n, d, generator=rng)
    y = x @ true_w.T + 0.1 * torch.randn(n, out, generator=rng)
    weight = 0.3 * torch.randn(out, d, generator=rng)
    bias = 0.1 * torch.randn(out, generator=rng)
    return weight, bias, x, y


def sgd_reference(weight, bias, x, y, steps, lr, momentum: float = 0.0):
    """Full-batch SGD on the MSE (plain, or with `momentum` as torch.optim.SGD applies it), in float64: the
    losses before each update and the final weights."""
    w = weight.double().clone().requires_grad_(True)
    b = bias.double().clone().requires_grad_(True)
    xd, yd = x.double(), y.double()
    losses, velocity = [], None
    for _ in range(steps):
        loss = ((xd @ w.T + b - yd) ** 2).mean()
        gw, gb = torch.autograd.grad(loss, [w, b])
        losses.append(loss.detach())
        velocity = [gw, gb] if velocity is None else [momentum * v + g for v, g in zip(velocity, (gw, gb))]
        with torch.no_grad():
            w -= lr * (velocity[0] if momentum else gw)
            b -= lr * (velocity[1] if momentum else gb)
    return torch.stack(losses), w.detach(), b.detach()


def call_text(device):
    return f"`train(model, x, y, device={device!r})`"


THINGS = {"model": ("the model", "模型"), "x": ("x", " x "), "y": ("y", " y "),
          "other": ("a tensor made inside train", "train 内部新建的 tensor ")}


def sent_to_cuda(result, device, roles):
    """Fail if the learner's code sent one of `roles` to CUDA although it was asked for another device."""
    hit = [r for r in ("model", "x", "y", "other") if r in result["to_cuda"] and r in roles]
    if hit:
        fail("{call} sent {thing} to CUDA (`.cuda()`, `.to(\"cuda\")` or `device=\"cuda\"`) although the device asked "
             "for was {device}: a hard-coded CUDA device ignores the `device` argument and breaks on any machine "
             "without a GPU. Use `.to(device)` and `device=device`.",
             "{call} 把{thing}送到了 CUDA（`.cuda()`、`.to(\"cuda\")` 或 `device=\"cuda\"`），但要求的设备是 "
             "{device}：写死的 CUDA 设备忽略了 `device` 参数，在没有 GPU 的机器上都会出错。请使用 `.to(device)` 和 "
             "`device=device`。", call=call_text(device), thing=THINGS[hit[0]], device=device, key="cuda-hard-coded")


def diagnose(err, device):
    """(kind, key, Text) for an error train raised while running on `device`: kind names the likely mistake
    ("cuda", "item", "error") or what it put in the wrong place ("x", "y", "model", "other", a hard-coded cpu
    included) so that each check judges only its own."""
    msg, target, call, at = err["message"], err.get("target"), call_text(device), where(err)
    wrong = dict((role, dev) for role, dev in err.get("tensors", []) if dev != device)
    if device != "cuda" and (re.search(r"cuda|nvidia", msg, re.IGNORECASE) or target == "cuda"):
        return "cuda", "cuda-hard-coded", Text(
            "{call} tried to use CUDA although the device asked for was {device}{at} ({error}). A `.cuda()` or a "
            "hard-coded \"cuda\" ignores the `device` argument and fails on any machine with no CUDA: use "
            "`.to(device)` and `device=device` everywhere.",
            "{call} 试图使用 CUDA，但要求的设备是 {device}{at}（{error}）。`.cuda()` 或写死的 \"cuda\" 忽略了 "
            "`device` 参数，在没有 CUDA 的机器上都会出错：请处处使用 `.to(device)` 和 `device=device`。",
            call=call, device=device, at=at, error=verbatim(msg[:80]))
    if target == "cpu" and device != "cpu":  # judged by the check of what was moved: the model, x, y or the rest
        moved = err["tensors"][0][0] if err.get("tensors") else "other"
        return moved, "cpu-hard-coded", Text(
            "{call} moved a tensor to cpu although the device asked for was {device}{at}: a hard-coded cpu device "
            "(\"cpu\" or `.cpu()`) ignores the `device` argument; use `.to(device)`.",
            "{call} 把 tensor 移到了 cpu，但要求的设备是 {device}{at}：写死的 cpu 设备（\"cpu\" 或 `.cpu()`）"
            "忽略了 `device` 参数；请使用 `.to(device)`。", call=call, device=device, at=at)
    if "item() cannot be called on meta" in msg or (
            "Cannot copy out of meta" in msg and err.get("func") in ("item", "tolist", "__float__", "__format__", "numpy")):
        return "item", "item-in-loop", Text(
            "{call} read a tensor's value back to Python (`.item()`, `float()`, `.tolist()`){at}. Keep the losses as "
            "tensors on the device: the checks also run train on the \"meta\" device, which has shapes but no "
            "values, and on a GPU each `.item()` waits for the GPU.",
            "{call} 把 tensor 的值读回了 Python（`.item()`、`float()`、`.tolist()`）{at}。请把 loss 作为 tensor "
            "留在设备上：检查也会在 \"meta\" 设备（只有形状，没有数值）上运行 train，而在 GPU 上每次 `.item()` "
            "都要等待 GPU。", call=call, at=at)
    for name in ("x", "y"):
        if name in wrong:
            if name in err.get("moved", []):
                return name, "to-without-reassign", Text(
                    "{call}: {name} was still on {dev} when it was used{at}. `{name}.to(device)` returns a new tensor "
                    "and leaves {name} where it was: reassign it, `{name} = {name}.to(device)`.",
                    "{call}：{name} 在使用时仍在 {dev} 上{at}。`{name}.to(device)` 返回一个新 tensor，原来的 {name} "
                    "不动：请重新赋值，`{name} = {name}.to(device)`。", call=call, name=name, dev=wrong[name], at=at)
            return name, "data-not-moved", Text(
                "{call}: {name} was still on {dev} when it was used{at}: move the data to the device too, "
                "`{name} = {name}.to(device)`.",
                "{call}：{name} 在使用时仍在 {dev} 上{at}：数据也要移到设备上，`{name} = {name}.to(device)`。",
                call=call, name=name, dev=wrong[name], at=at)
    if "model" in wrong:
        return "model", "model-not-moved", Text(
            "{call}: the model's parameters were still on {dev} when it ran{at}: move the model with "
            "`model.to(device)` before the loop.",
            "{call}：模型参数在运行时仍在 {dev} 上{at}：请在循环前用 `model.to(device)` 移动模型。",
            call=call, dev=wrong["model"], at=at)
    if "other" in wrong:
        return "other", "tensor-created-on-cpu", Text(
            "{call}: a tensor made inside train is on {dev} while the rest is on {device}{at}. A new tensor "
            "(`torch.zeros`, `torch.ones`, `torch.tensor`...) lands on the CPU unless you create it with "
            "`device=device`.",
            "{call}：train 内部新建的一个 tensor 在 {dev} 上，而其余都在 {device} 上{at}。新建的 tensor"
            "（`torch.zeros`、`torch.ones`、`torch.tensor`……）默认在 CPU 上，除非创建时写 `device=device`。",
            call=call, dev=wrong["other"], device=device, at=at)
    return "error", f"raised-{err['type']}", Text("{call} raised {error}.", "{call} 抛出了 {error}。",
                                                   call=call, error=error_text(err))


def run(submission, rng, model_on, data_on, device, out=2):
    weight, bias, x, y = draw(rng, out)
    steps = PLACED_STEPS if device == "meta" else STEPS
    result = submission.probe(run_train, weight, bias, x, y, model_on, data_on, device, steps, LR,
                              what=call_text(device))
    if result["error"] is not None:
        if result.get("todo"):
            fail_raised(result["error"], call_text(device))  # not started
        result["error"]["moved"] = result["moved"]
    return result, (weight, bias, x, y)


def expect_no_cuda_call(submission, receivers):
    """Fail on a `.cuda()` in train's source on one of `receivers` ("model", "data", "other"): it may sit behind a
    check of the device's type, which runs only on a GPU, but `.to(device)` says the same for every device."""
    for line, code in submission.once("cuda calls", lambda: submission.probe(cuda_calls, "train", what="`train`")):
        target = code.split(".cuda(")[0].split("=")[-1].strip()
        kind = "model" if "model" in target else "data" if target in ("x", "y") or target.startswith(("x.", "y.")) \
            else "other"
        if kind in receivers:
            fail("train calls `.cuda()` (line {line}: `{code}`). Behind a check of the device's type it runs only on "
                 "a GPU, and it names CUDA where the `device` argument already says where to go: use `.to(device)`, "
                 "the same code for every device.",
                 "train 调用了 `.cuda()`（第 {line} 行：`{code}`）。放在设备类型的判断之后，它只会在 GPU 上运行，而且在 "
                 "`device` 参数已经指明去向的地方写死了 CUDA：请用 `.to(device)`，对每种设备都是同一段代码。",
                 line=line, code=verbatim(code), key="cuda-call")


def fail_on_error(result, device, *, unless=()):
    """Fail with the explanation of train's error, unless the error is one of the kinds another check owns."""
    if result["error"] is not None:
        kind, key, text = diagnose(result["error"], device)
        if kind not in unless:
            fail(text, key=key)


@check("pick_device prefers CUDA and falls back to the CPU", points=2, zh="pick_device 优先使用 CUDA，没有时退回 CPU")
def test_pick_device(submission):
    for available, mps, want in ((False, False, "cpu"), (True, False, "cuda"), (True, True, "cuda"),
                                 (False, True, "cpu")):
        got = submission.probe(run_pick_device, available, mps, what="`pick_device()`")
        if "error" in got:
            err = got["error"]
            if re.search(r"cuda|nvidia", err["message"], re.IGNORECASE) and not available:
                fail_raised(err, "`pick_device()` on a machine without CUDA", (
                    "Check `torch.cuda.is_available()` before touching the GPU.",
                    "使用 GPU 前先检查 `torch.cuda.is_available()`。"), key="cuda-hard-coded")
            fail_raised(err, "`pick_device()`")
        if got["type"] != "device":
            fail("`pick_device()` should return a `torch.device`, got the {type} {value}: wrap the name, "
                 "`torch.device(\"cuda\")` or `torch.device(\"cpu\")`.",
                 "`pick_device()` 应返回 `torch.device`，实际得到 {type} {value}：请把名字包起来，"
                 "`torch.device(\"cuda\")` 或 `torch.device(\"cpu\")`。",
                 type=got["type"], value=verbatim(got["value"]), key="not-a-device")
        if got["device"] == want == "cuda" and got.get("index") is not None:
            fail("`pick_device()` returned {got}: the statement asks for `torch.device(\"cuda\")`, the current CUDA "
                 "device. An index pins one GPU, even in a process given another (`torch.cuda.set_device`, one process "
                 "per GPU): leave it out.",
                 "`pick_device()` 返回了 {got}：题目要求的是 `torch.device(\"cuda\")`，即当前的 CUDA 设备。写上编号就"
                 "固定了某一块 GPU，即使这个进程被分配了另一块（`torch.cuda.set_device`，每块 GPU 一个进程）：请去掉编号。",
                 got=verbatim(f"`{got['value']}`"), key="cuda-index-pinned")
        if got["device"] == want:
            continue
        if got["device"] == "mps":
            fail("`pick_device()` returned mps on a machine that has {has}: the statement asks for CUDA when "
                 "`torch.cuda.is_available()`, else the CPU. Check CUDA, and nothing else.",
                 "在{has}的机器上 `pick_device()` 返回了 mps：题目要求 `torch.cuda.is_available()` 时用 CUDA，否则用 "
                 "CPU。只检查 CUDA，别的都不要检查。", has=Text("CUDA and an Apple MPS device", "有 CUDA 和 Apple MPS 设备")
                 if available else Text("an Apple MPS device and no CUDA", "有 Apple MPS 设备但没有 CUDA"), key="mps-picked")
        if available:
            fail("`pick_device()` returned {got} although CUDA was available: prefer the GPU when "
                 "`torch.cuda.is_available()` is True.",
                 "CUDA 可用时 `pick_device()` 却返回了 {got}：`torch.cuda.is_available()` 为 True 时应选 GPU。",
                 got=got["device"], key="cuda-not-preferred")
        if "not called" in got["asked"]:
            fail("`pick_device()` returned cuda on a machine without CUDA: it tests `torch.cuda.is_available` "
                 "without calling it, and a function is always true. Add the parentheses: "
                 "`torch.cuda.is_available()`.",
                 "在没有 CUDA 的机器上 `pick_device()` 返回了 cuda：它判断的是 `torch.cuda.is_available` 本身而没有"
                 "调用它，而函数对象永远为真。请加上括号：`torch.cuda.is_available()`。", key="is-available-not-called")
        if "called" in got["asked"]:
            fail("`pick_device()` returned {got} although `torch.cuda.is_available()` returned False: choose "
                 "\"cuda\" only when it returns True, else \"cpu\".",
                 "`torch.cuda.is_available()` 返回 False，`pick_device()` 却返回了 {got}：只有它返回 True 时才选 "
                 "\"cuda\"，否则选 \"cpu\"。", got=got["device"], key="availability-inverted")
        fail("`pick_device()` returned {got} on a machine without CUDA: a hard-coded \"cuda\" breaks there; choose "
             "\"cuda\" only if `torch.cuda.is_available()`, else \"cpu\".",
             "在没有 CUDA 的机器上 `pick_device()` 返回了 {got}：写死 \"cuda\" 在这里会出错；只有 "
             "`torch.cuda.is_available()` 时才选 \"cuda\"，否则选 \"cpu\"。", got=got["device"], key="cuda-hard-coded")


@check("train moves the model to the device it is given", points=2, zh="train 把模型移到传入的设备上")
def test_model_moved(submission, rng):
    # The data already sits on the target device: only the model's placement is tested here.
    result, _ = run(submission, rng, "cpu", "meta", "meta")
    sent_to_cuda(result, "meta", ("model",))
    expect_no_cuda_call(submission, ("model",))
    fail_on_error(result, "meta", unless=("x", "y", "other", "item"))  # judged by the checks below
    if result["model_devices"] != ["meta"] and result["error"] is not None:  # stopped by another mistake first
        _, key, why = diagnose(result["error"], "meta")
        fail("{call} stopped before the model was on the device, so its move could not be checked: {why}",
             "{call} 在模型移到设备上之前就停止了，无法检查模型是否被移动：{why}", call=call_text("meta"), why=why,
             key=key)
    if result["model_devices"] != ["meta"]:
        devices = ", ".join(result["model_devices"])
        hint = Text(" A hard-coded cpu device, or the `device` argument ignored?", "是写死了 cpu 设备，还是忽略了 "
                    "`device` 参数？") if devices == "cpu" else ""
        fail("After {call} the model's parameters are on {devices}, not on meta: move the model with "
             "`model.to(device)`.{hint}",
             "{call} 之后模型参数在 {devices} 上，而不是 meta：请用 `model.to(device)` 移动模型。{hint}",
             call=call_text("meta"), devices=devices, hint=hint, key="model-not-moved")


@check("train moves x and y to the device and uses the moved tensors", points=2,
       zh="train 把 x 和 y 移到设备上，并使用移动后的 tensor")
def test_data_moved(submission, rng):
    # The model already sits on the target device: only the data's placement is tested here, with x and y on the
    # CPU, then with one of them already on the device (each must be moved on its own).
    for data_on in ("cpu", "meta,cpu", "cpu,meta"):
        expect_data_moved(submission, rng, data_on)


def expect_data_moved(submission, rng, data_on):
    result, _ = run(submission, rng, "meta", data_on, "meta")
    sent_to_cuda(result, "meta", ("x", "y"))
    expect_no_cuda_call(submission, ("data",))
    fail_on_error(result, "meta", unless=("model", "other", "item"))  # judged by the other checks
    if result["error"] is not None:  # stopped by another mistake: did x and y get used on the device first?
        _, key, why = diagnose(result["error"], "meta")
        for name in ("x", "y"):
            if "meta" not in result["used"].get(name, []):
                fail("{call} stopped before {name} was used on the device, so its move could not be checked: {why}",
                     "{call} 在 {name} 于设备上被使用之前就停止了，无法检查它是否被移动：{why}",
                     call=call_text("meta"), name=name, why=why, key=key)


@check("train runs entirely on the device, the losses tensor too", points=1,
       zh="train 完全在设备上运行，losses tensor 也在设备上")
def test_losses_on_device(submission, rng):
    # The model and the data already sit on the target device: only what train makes itself is tested here.
    result, _ = run(submission, rng, "meta", "meta", "meta")
    sent_to_cuda(result, "meta", ("other",))
    expect_no_cuda_call(submission, ("other",))
    fail_on_error(result, "meta")
    losses = result["losses"]
    if "device" not in losses:
        fail("train should return the losses as one tensor, got a {type}.",
             "train 应以一个 tensor 返回各步的 loss，实际得到 {type}。", type=verbatim(losses["type"]),
             key="losses-not-a-tensor")
    if losses["device"] != "meta":
        fail("{call} returned its losses on {device}: create the tensor that records them on the device "
             "(`torch.zeros(steps, device=device)`).",
             "{call} 返回的 losses 在 {device} 上：记录 loss 的 tensor 要在设备上创建"
             "（`torch.zeros(steps, device=device)`）。", call=call_text("meta"), device=losses["device"],
             key="tensor-created-on-cpu")
    if losses["shape"] != [PLACED_STEPS]:
        fail("`train(..., steps={steps})` should return a 1-D tensor of {steps} losses, got shape {shape}.",
             "`train(..., steps={steps})` 应返回包含 {steps} 个 loss 的一维 tensor，实际形状为 {shape}。",
             steps=PLACED_STEPS, shape=losses["shape"], key="wrong-shape")


@check("train on the chosen device learns what plain SGD learns", points=3,
       zh="在所选设备上，train 的学习结果与普通 SGD 一致", depends=("model_moved", "data_moved", "losses_on_device"))
def test_training_values(submission, rng, device):
    for out in (1, 2):  # one output: y is [N, 1], where a .squeeze() shows
        result, (weight, bias, x, y) = run(submission, rng, "cpu", "cpu", device, out)
        fail_on_error(result, device)
        losses = result["losses"]
        if "device" not in losses:
            fail("train should return the losses as one tensor, got a {type}.",
                 "train 应以一个 tensor 返回各步的 loss，实际得到 {type}。", type=verbatim(losses["type"]),
                 key="losses-not-a-tensor")
        want_losses, want_w, want_b = sgd_reference(weight, bias, x, y, STEPS, LR)
        if result["model_devices"] != [device]:
            fail("After {call} the model's parameters are on {devices}, not on {device}: move the model with "
                 "`model.to(device)`.",
                 "{call} 之后模型参数在 {devices} 上，而不是 {device}：请用 `model.to(device)` 移动模型。",
                 call=call_text(device), devices=", ".join(result["model_devices"]), device=device,
                 key="model-not-moved")
        if matches(result["weight"], weight.double()):
            fail("{call} left the weights unchanged: does the loop call `optimizer.step()` on the model's "
                 "parameters (an optimizer made from `model.parameters()`)?",
                 "{call} 没有改变权重：循环里调用 `optimizer.step()` 了吗？优化器是否用 `model.parameters()` 创建？",
                 call=call_text(device), key="no-update")
        what = Text("the losses tensor of `train(..., steps={steps}, lr={lr})` (y of shape {shape})",
                    "`train(..., steps={steps}, lr={lr})` 返回的 losses（y 的形状为 {shape}）",
                    steps=STEPS, lr=LR, shape=list(y.shape))
        if result["broadcast"] and not matches(losses["values"], want_losses, rtol=1e-3, atol=1e-5):
            fail("PyTorch warned that the prediction and the target have different shapes, and {what} is wrong: the "
                 "loss broadcast them against each other. Did a `.squeeze()` drop the size-1 dimension of the "
                 "prediction [N, 1]? Keep both at the shape of y.",
                 "PyTorch 警告预测和目标的形状不同，而且{what}不对：loss 把它们互相广播了。是不是 `.squeeze()` 去掉了"
                 "预测值 [N, 1] 中大小为 1 的维度？请让两者都保持 y 的形状。", what=what, key="broadcast-loss")
        for momentum in (0.9, 0.5, 0.99):  # the usual values
            if not matches(losses["values"], want_losses, rtol=1e-3, atol=1e-5) and matches(
                    losses["values"], sgd_reference(weight, bias, x, y, STEPS, LR, momentum)[0], rtol=1e-3, atol=1e-5):
                fail("{what} follows SGD with momentum {m}; the statement asks for plain SGD: "
                     "`torch.optim.SGD(model.parameters(), lr=lr)`, without momentum.",
                     "{what} 对应的是带 momentum {m} 的 SGD；题目要求普通 SGD："
                     "`torch.optim.SGD(model.parameters(), lr=lr)`，不加 momentum。", what=what, m=momentum,
                     key="momentum-added")
        expect_close(losses["values"], want_losses, what, rtol=1e-3, atol=1e-5, n=x.shape[0], hints={
            "factor": ("Each entry is the mean squared error of the whole batch before that step's update.",
                       "每一项都是该步更新前整个 batch 的均方误差。")})
        expect_close(result["weight"], want_w, ("`model.weight` after train", "train 之后的 `model.weight`"),
                     rtol=1e-3, atol=1e-5)
        expect_close(result["bias"], want_b, ("`model.bias` after train", "train 之后的 `model.bias`"),
                     rtol=1e-3, atol=1e-5)
