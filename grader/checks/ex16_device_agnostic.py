"""Hidden checks of ex16: a training loop that runs on whatever device it is given.

Three ways to see where things end up, none of which needs a GPU in the judge:
- pick_device is called with CUDA availability faked on and off (no CUDA tensor is ever made);
- train runs on PyTorch's "meta" device (shapes, no data): anything left on the CPU, a hard-coded "cpu" or a
  tensor moved without reassigning collides with it, and a TorchFunctionMode names the tensors of the op
  that failed (x, y, a model parameter, a tensor made inside train);
- train runs on the `device` fixture ("cpu", or "cuda" with --device cuda) and must learn what plain SGD learns.
"""

import re
import traceback

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from grader.checking import check, expect_close, fail, probe

STEPS, LR = 12, 0.1


# -- sandbox side ------------------------------------------------------------------------

def _learner_frames(exc, filename):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    return [f"line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-2:]]


class _Blame(TorchFunctionMode):
    """Name the tensors of the first torch call that raised; remember which inputs got `.to()`, and which of
    x, y (or their moved copies) took part in a call that worked."""

    def __init__(self, x, y, model):
        super().__init__()
        self.model = model
        self.family = {id(x): "x", id(y): "y"}  # the inputs and the tensors .to()/.cuda() made of them
        self.keep = [x, y]  # keep them alive so that their ids stay theirs
        self.originals = {id(x), id(y)}
        self.failure = None
        self.moved = set()  # "x", "y": the original tensor was passed to .to()/.cuda()
        self.used = {}  # "x", "y" -> devices of the successful calls they took part in

    def role(self, t):
        if id(t) in self.family:
            return self.family[id(t)]
        if any(t is p for p in self.model.parameters()):
            return "model"
        return "other"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        tensors = []
        for a in list(args) + list(kwargs.values()):
            for t in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(t, torch.Tensor):
                    tensors.append(t)
        moving = name in ("to", "cuda", "cpu") and args and id(args[0]) in self.family
        if moving and id(args[0]) in self.originals:
            self.moved.add(self.family[id(args[0])])
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
        if moving and isinstance(out, torch.Tensor):
            self.family[id(out)] = self.family[id(args[0])]
            self.keep.append(out)
        elif not moving and name != "__get__":
            for t in tensors:
                if id(t) in self.family:
                    self.used.setdefault(self.family[id(t)], set()).add(t.device.type)
        return out


@probe
def run_train(module, weight, bias, x, y, model_on, data_on, device, steps, lr):
    """Run the learner's train with the model and data placed as asked; report where everything went."""
    model = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        model.weight.copy_(weight)
        model.bias.copy_(bias)
    model.to(model_on)
    x, y = x.to(data_on), y.to(data_on)
    blame = _Blame(x, y, model)
    result = {"error": None, "moved": [], "model_devices": [], "losses": None}
    try:
        with blame:
            losses = module.train(model, x, y, torch.device(device), steps, lr)
    except Exception as exc:  # noqa: BLE001 - the probe explains device errors itself
        if isinstance(exc, NotImplementedError) and "meta" not in str(exc) and blame.failure is None:
            raise  # a TODO left in place: "not started"
        result["error"] = {"type": type(exc).__name__, "message": str(exc)[:300],
                           "frames": _learner_frames(exc, getattr(module, "__file__", "")),
                           **(blame.failure or {"func": None, "tensors": [], "target": None})}
        losses = None
    result["moved"] = sorted(blame.moved)
    result["used"] = {k: sorted(v) for k, v in blame.used.items()}
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


@probe
def run_pick_device(module, cuda_available):
    """Call pick_device with CUDA availability faked (nothing touches a real GPU)."""
    fakes = [
        (torch.cuda, "is_available", lambda: cuda_available),
        (torch.cuda, "device_count", lambda: 1 if cuda_available else 0),
        (torch.accelerator, "is_available", lambda: cuda_available),
        (torch.accelerator, "current_accelerator",
         lambda check_available=False: torch.device("cuda") if cuda_available else None),
        (torch.accelerator, "device_count", lambda: 1 if cuda_available else 0),
        (torch.backends.mps, "is_available", lambda: False),
    ]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in fakes]
    aliases = {}  # `from torch.cuda import is_available` in the learner's module
    for obj, name, fake in fakes:
        for key, value in vars(module).items():
            if value is getattr(obj, name):
                aliases[key] = (value, fake)
        setattr(obj, name, fake)
    for key, (_, fake) in aliases.items():
        setattr(module, key, fake)
    try:
        device = module.pick_device()
    except Exception as exc:  # noqa: BLE001
        if isinstance(exc, NotImplementedError):
            raise
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        for obj, name, original in saved:
            setattr(obj, name, original)
        for key, (original, _) in aliases.items():
            setattr(module, key, original)
    if isinstance(device, torch.device):
        return {"type": "device", "device": device.type}
    if isinstance(device, str):
        try:
            return {"type": "str", "device": torch.device(device).type}
        except RuntimeError:
            return {"type": "bad str", "device": device}
    return {"type": type(device).__name__, "device": None}


# -- judge side ----------------------------------------------------------------------------

def draw(rng):
    d, o, n = 3 + int(torch.randint(0, 3, (1,), generator=rng)), 1 + int(torch.randint(0, 2, (1,), generator=rng)), 16
    true_w = torch.randn(o, d, generator=rng)
    x = torch.randn(n, d, generator=rng)
    y = x @ true_w.T + 0.1 * torch.randn(n, o, generator=rng)
    weight = 0.3 * torch.randn(o, d, generator=rng)
    bias = 0.1 * torch.randn(o, generator=rng)
    return weight, bias, x, y


def sgd_reference(weight, bias, x, y, steps, lr):
    """Plain full-batch SGD on the MSE, in float64: the losses before each update and the final weights."""
    w = weight.double().clone().requires_grad_(True)
    b = bias.double().clone().requires_grad_(True)
    xd, yd = x.double(), y.double()
    losses = []
    for _ in range(steps):
        loss = ((xd @ w.T + b - yd) ** 2).mean()
        gw, gb = torch.autograd.grad(loss, [w, b])
        losses.append(loss.detach())
        with torch.no_grad():
            w -= lr * gw
            b -= lr * gb
    return torch.stack(losses), w.detach(), b.detach()


def call_text(device):
    return f"`train(model, x, y, device={device!r})`"


def explain_error(err, device):
    """(kind, en, zh) for an error train raised while running on `device`: kind names the likely mistake
    ("cuda", "cpu", "item", "x", "y", "model", "other" or "error") so that each check judges only its own."""
    msg, target = err["message"], err.get("target")
    where = f" ({'; '.join(err['frames'])})" if err.get("frames") else ""
    wrong = [(role, dev) for role, dev in err.get("tensors", []) if dev != device]
    if device != "cuda" and (re.search(r"cuda|nvidia", msg, re.IGNORECASE) or target == "cuda"):
        return ("cuda",
                f"{call_text(device)} tried to use CUDA although the device asked for was {device}{where} "
                f"({msg[:80]}). A `.cuda()` or a hard-coded \"cuda\" ignores the `device` argument and fails on "
                "any machine with no CUDA: use `.to(device)` and `device=device` everywhere.",
                f"{call_text(device)} 试图使用 CUDA，但要求的设备是 {device}{where}（{msg[:80]}）。"
                "`.cuda()` 或写死的 \"cuda\" 忽略了 `device` 参数，在没有 CUDA 的机器上都会出错："
                "请处处使用 `.to(device)` 和 `device=device`。")
    if target == "cpu" and device != "cpu":
        return ("cpu",
                f"{call_text(device)} moved a tensor to cpu although the device asked for was {device}{where}: "
                "a hard-coded cpu device (\"cpu\" or .cpu()) ignores the `device` argument; use `.to(device)`.",
                f"{call_text(device)} 把 tensor 移到了 cpu，但要求的设备是 {device}{where}：写死的 cpu 设备"
                "（\"cpu\" 或 .cpu()）忽略了 `device` 参数；请使用 `.to(device)`。")
    if "item() cannot be called on meta" in msg or (
            "Cannot copy out of meta" in msg and err.get("func") in ("item", "tolist", "__float__", "__format__", "numpy")):
        return ("item",
                f"{call_text(device)} read a tensor's value back to Python (.item(), float(), .tolist()){where}. "
                "Keep the losses as tensors on the device: the checks also run train on the \"meta\" device, "
                "which has shapes but no values, and on a GPU each .item() waits for the GPU.",
                f"{call_text(device)} 把 tensor 的值读回了 Python（.item()、float()、.tolist()）{where}。"
                "请把 loss 作为 tensor 留在设备上：检查也会在 \"meta\" 设备（只有形状，没有数值）上运行 train，"
                "而在 GPU 上每次 .item() 都要等待 GPU。")
    roles = dict(wrong)
    for name in ("x", "y"):
        if name in roles:
            if name in err.get("moved", []):
                return (name,
                        f"{call_text(device)}: {name} was still on {roles[name]} when it was used{where}. "
                        f"`{name}.to(device)` returns a new tensor and leaves {name} where it was: reassign it, "
                        f"`{name} = {name}.to(device)`.",
                        f"{call_text(device)}：{name} 在使用时仍在 {roles[name]} 上{where}。`{name}.to(device)` "
                        f"返回一个新 tensor，原来的 {name} 不动：请重新赋值，`{name} = {name}.to(device)`。")
            return (name,
                    f"{call_text(device)}: {name} was still on {roles[name]} when it was used{where}: move the data to "
                    f"the device too, `{name} = {name}.to(device)`.",
                    f"{call_text(device)}：{name} 在使用时仍在 {roles[name]} 上{where}：数据也要移到设备上，"
                    f"`{name} = {name}.to(device)`。")
    if "model" in roles:
        return ("model",
                f"{call_text(device)}: the model's parameters were still on {roles['model']} when it ran{where}: "
                "move the model with `model.to(device)` before the loop.",
                f"{call_text(device)}：模型参数在运行时仍在 {roles['model']} 上{where}：请在循环前用 "
                "`model.to(device)` 移动模型。")
    if "other" in roles:
        return ("other",
                f"{call_text(device)}: a tensor made inside train is on {roles['other']} while the rest is on "
                f"{device}{where}. A new tensor (torch.zeros, torch.ones, torch.tensor...) lands on the CPU unless "
                "you create it with `device=device`.",
                f"{call_text(device)}：train 内部新建的一个 tensor 在 {roles['other']} 上，而其余都在 {device} 上"
                f"{where}。新建的 tensor（torch.zeros、torch.ones、torch.tensor……）默认在 CPU 上，"
                "除非创建时写 `device=device`。")
    return ("error", f"{call_text(device)} raised {err['type']}: {msg}{where}",
            f"{call_text(device)} 抛出了异常 {err['type']}：{msg}{where}")


def run(submission, rng, model_on, data_on, device):
    weight, bias, x, y = draw(rng)
    result = submission.probe(run_train, weight, bias, x, y, model_on, data_on, device, STEPS, LR,
                              what=call_text(device))
    if result["error"] is not None:
        result["error"]["moved"] = result["moved"]
    return result, (weight, bias, x, y)


def fail_on_error(result, device, *, unless=()):
    """Fail with the explanation of train's error, unless the error is one of the kinds another check owns."""
    if result["error"] is not None:
        kind, en, zh = explain_error(result["error"], device)
        if kind not in unless:
            fail(en, zh)


@check("pick_device prefers CUDA and falls back to the CPU", points=2, zh="pick_device 优先使用 CUDA，没有时退回 CPU")
def test_pick_device(submission):
    for available, want in ((False, "cpu"), (True, "cuda")):
        got = submission.probe(run_pick_device, available, what="`pick_device()`")
        if "error" in got:
            if re.search(r"cuda|nvidia", got["error"], re.IGNORECASE) and not available:
                fail(f"pick_device() failed on a machine without CUDA ({got['error'][:100]}): check "
                     "torch.cuda.is_available() before touching the GPU.",
                     f"pick_device() 在没有 CUDA 的机器上出错（{got['error'][:100]}）：使用 GPU 前先检查 "
                     "torch.cuda.is_available()。")
            fail(f"pick_device() raised {got['error']}", f"pick_device() 抛出了异常 {got['error']}")
        if got["device"] is None or got["type"] == "bad str":
            fail(f"pick_device() should return a torch.device, got a {got['type']}"
                 + (f" {got['device']!r}" if got["device"] else "") + ".",
                 f"pick_device() 应返回 torch.device，实际得到 {got['type']}"
                 + (f" {got['device']!r}" if got["device"] else "") + "。")
        if got["device"] != want:
            if available:
                fail(f"pick_device() returned {got['device']} although CUDA was available: prefer the GPU when "
                     "torch.cuda.is_available() is True.",
                     f"CUDA 可用时 pick_device() 却返回了 {got['device']}：torch.cuda.is_available() 为 True 时应选 GPU。")
            fail(f"pick_device() returned {got['device']} on a machine without CUDA: a hard-coded \"cuda\" breaks "
                 "there; choose \"cuda\" only if torch.cuda.is_available(), else \"cpu\".",
                 f"在没有 CUDA 的机器上 pick_device() 返回了 {got['device']}：写死 \"cuda\" 在这里会出错；"
                 "只有 torch.cuda.is_available() 时才选 \"cuda\"，否则选 \"cpu\"。")


@check("train moves the model to the device it is given", points=2, zh="train 把模型移到传入的设备上")
def test_model_moved(submission, rng):
    # The data already sits on the target device: only the model's placement is tested here.
    result, _ = run(submission, rng, "cpu", "meta", "meta")
    fail_on_error(result, "meta", unless=("x", "y", "other", "item"))  # judged by the checks below
    if result["model_devices"] != ["meta"]:
        devices = ", ".join(result["model_devices"])
        hint_en = (" A hard-coded cpu device, or the `device` argument ignored?" if devices == "cpu" else "")
        hint_zh = (" 是写死了 cpu 设备，还是忽略了 `device` 参数？" if devices == "cpu" else "")
        fail(f"After {call_text('meta')} the model's parameters are on {devices}, not on meta: move the model with "
             f"`model.to(device)`.{hint_en}",
             f"{call_text('meta')} 之后模型参数在 {devices} 上，而不是 meta：请用 `model.to(device)` 移动模型。{hint_zh}")


@check("train moves x and y to the device and uses the moved tensors", points=2,
       zh="train 把 x 和 y 移到设备上，并使用移动后的 tensor")
def test_data_moved(submission, rng):
    # The model already sits on the target device: only the data's placement is tested here.
    result, _ = run(submission, rng, "meta", "cpu", "meta")
    fail_on_error(result, "meta", unless=("model", "other", "item"))  # judged by the other checks
    if result["error"] is not None:  # stopped by another mistake: did x and y get used on the device first?
        for name in ("x", "y"):
            if "meta" not in result["used"].get(name, []):
                fail(f"{call_text('meta')} stopped before {name} was used on the device, so its move could not be "
                     f"checked: {explain_error(result['error'], 'meta')[1]}",
                     f"{call_text('meta')} 在 {name} 于设备上被使用之前就停止了，无法检查它是否被移动："
                     f"{explain_error(result['error'], 'meta')[2]}")


@check("train runs entirely on the device, the losses tensor too", points=1,
       zh="train 完全在设备上运行，losses tensor 也在设备上")
def test_losses_on_device(submission, rng):
    result, _ = run(submission, rng, "cpu", "cpu", "meta")
    fail_on_error(result, "meta")
    losses = result["losses"]
    if "device" not in losses:
        fail(f"train should return the losses as one tensor, got a {losses['type']}.",
             f"train 应以一个 tensor 返回各步的 loss，实际得到 {losses['type']}。")
    if losses["device"] != "meta" and result["model_devices"] == [losses["device"]]:
        fail(f"{call_text('meta')} left the model and the losses on {losses['device']}: it ignores its `device` "
             "argument (a hard-coded cpu device?). Move everything to `device`.",
             f"{call_text('meta')} 把模型和 losses 都留在了 {losses['device']} 上：它忽略了 `device` 参数"
             "（写死了 cpu 设备？）。请把所有东西都移到 `device` 上。")
    if losses["device"] != "meta":
        fail(f"{call_text('meta')} returned its losses on {losses['device']}: create the tensor that records them "
             "on the device (`torch.zeros(steps, device=device)`).",
             f"{call_text('meta')} 返回的 losses 在 {losses['device']} 上：记录 loss 的 tensor 要在设备上创建"
             "（`torch.zeros(steps, device=device)`）。")
    if losses["shape"] != [STEPS]:
        fail(f"train(..., steps={STEPS}) should return a 1-D tensor of {STEPS} losses, got shape {losses['shape']}.",
             f"train(..., steps={STEPS}) 应返回包含 {STEPS} 个 loss 的一维 tensor，实际形状为 {losses['shape']}。")


@check("train on the chosen device learns what plain SGD learns", points=3,
       zh="在所选设备上，train 的学习结果与普通 SGD 一致")
def test_training_values(submission, rng, device):
    result, (weight, bias, x, y) = run(submission, rng, "cpu", "cpu", device)
    fail_on_error(result, device)
    losses = result["losses"]
    if "device" not in losses:
        fail(f"train should return the losses as one tensor, got a {losses['type']}.",
             f"train 应以一个 tensor 返回各步的 loss，实际得到 {losses['type']}。")
    want_losses, want_w, want_b = sgd_reference(weight, bias, x, y, STEPS, LR)
    if result["model_devices"] != [device]:
        fail(f"After {call_text(device)} the model's parameters are on {', '.join(result['model_devices'])}, "
             f"not on {device}: move the model with `model.to(device)`.",
             f"{call_text(device)} 之后模型参数在 {', '.join(result['model_devices'])} 上，而不是 {device}："
             "请用 `model.to(device)` 移动模型。")
    if torch.allclose(result["weight"], weight.double()):
        fail(f"{call_text(device)} left the weights unchanged: does the loop call optimizer.step() on the model's "
             "parameters (create the optimizer from model.parameters())?",
             f"{call_text(device)} 没有改变权重：循环里调用 optimizer.step() 了吗？优化器是否用 model.parameters() 创建？")
    expect_close(losses["values"], want_losses, f"the losses of train(..., steps={STEPS}, lr={LR})",
                 rtol=1e-3, atol=1e-5, hints={
                     "factor": ("Each entry is the mean squared error of the whole batch before that step's update.",
                                "每一项都是该步更新前整个 batch 的均方误差。")})
    expect_close(result["weight"], want_w, "model.weight after train", rtol=1e-3, atol=1e-5)
    expect_close(result["bias"], want_b, "model.bias after train", rtol=1e-3, atol=1e-5)
