"""Hidden checks of ex06: a gradient-descent training loop by hand (no optimizer).

The probes run the learner's `train_step` on leaf tensors they create and watch the loop itself:
the gradients before every backward (are they zeroed?), whether w and b are changed in place and
stay leaves that require grad, whether `.data` is used. `training_trace` records the learner's
`train` (loss, w and b per step) on judge-drawn data, for the checks and for plots.
"""

from __future__ import annotations

import linecache
import math

import torch
from torch.overrides import TorchFunctionMode

from grader.checking import check, describe, fail, probe, record_curve, relation, relation_text, tensor_info

EPOCHS = 300  # what the README promises the checks pass to train()
W_TOL, B_TOL = 0.05, 0.1  # how close train() must land to the least-squares fit


# -- data (judge side) --------------------------------------------------------------------

def draw_data(rng: torch.Generator):
    """x spread like randn * 5 (as in the lesson), y = 2.5 x + 1.3 + noise, N in [64, 128]."""
    n = int(torch.randint(64, 129, (1,), generator=rng))
    x = torch.randn(n, 1, generator=rng) * 5
    y = 2.5 * x + 1.3 + 0.5 * torch.randn(n, 1, generator=rng)
    return x, y


def draw_step(rng: torch.Generator):
    x, y = draw_data(rng)
    w0 = torch.randn(1, generator=rng)
    b0 = torch.randn(1, generator=rng)
    lr = float(0.002 + 0.018 * torch.rand(1, generator=rng))
    return x, y, w0, b0, lr


def mse64(x, y):
    return lambda w, b: ((w * x.double() + b - y.double()) ** 2).mean()


def gd_grads(x, y, w, b):
    """dL/dw and dL/db of the MSE at (w, b), by autograd in float64."""
    w = w.detach().double().clone().requires_grad_(True)
    b = b.detach().double().clone().requires_grad_(True)
    return torch.autograd.grad(mse64(x, y)(w, b), [w, b])


def least_squares(x, y) -> tuple[float, float]:
    a = torch.cat([x, torch.ones_like(x)], dim=1).double()
    sol = torch.linalg.lstsq(a, y.double()).solution.reshape(-1)
    return float(sol[0]), float(sol[1])


# -- observing the learner (sandbox side) --------------------------------------------------

def _is_data_descriptor(func) -> bool:
    owner = getattr(func, "__self__", None)
    return getattr(func, "__name__", "") in ("__get__", "__set__") and getattr(owner, "__name__", "") == "data"


class Watch(TorchFunctionMode):
    """While active: record the gradients of `params` before each backward, and any `.data` use on them."""

    def __init__(self, params: dict):
        super().__init__()
        self.params = params
        self.grads_before: list[dict] = []
        self.data_used: set[str] = set()
        self._real_backward = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if _is_data_descriptor(func) and args:
            for name, p in self.params.items():
                if args[0] is p:
                    self.data_used.add(name)
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        real = self._real_backward = torch.autograd.backward

        def backward(*args, **kwargs):
            self.grads_before.append({name: _grad_size(p) for name, p in self.params.items()})
            return real(*args, **kwargs)

        torch.autograd.backward = backward
        return super().__enter__()

    def __exit__(self, *exc):
        torch.autograd.backward = self._real_backward
        return super().__exit__(*exc)


def _grad_size(t: torch.Tensor) -> float | None:
    """None if t.grad is None, else the largest |t.grad| (0.0 when zeroed)."""
    with torch._C.DisableTorchFunction():
        g = t.grad
        return None if g is None else float(g.detach().abs().max()) if g.numel() else 0.0


def _error_info(exc: BaseException, module) -> dict:
    """The learner's exception as plain data, with the line it came from and the state of w and b there."""
    info = {"type": type(exc).__name__, "message": str(exc)[:400], "where": "", "locals": {}}
    tb, frame = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_globals is module.__dict__:  # the learner's code (a file, or notebook cells)
            frame = tb
        tb = tb.tb_next
    if frame is not None:
        code = frame.tb_frame.f_code
        line = linecache.getline(code.co_filename, frame.tb_lineno).strip()
        cell = "" if code.co_filename == getattr(module, "__file__", None) else f"{code.co_filename}, "
        info["where"] = f"{cell}line {frame.tb_lineno}, in {code.co_name}: {line}"
        for name in ("w", "b"):
            value = frame.tb_frame.f_locals.get(name)
            if isinstance(value, torch.Tensor):
                with torch._C.DisableTorchFunction():
                    info["locals"][name] = {"is_leaf": bool(value.is_leaf),
                                            "requires_grad": bool(value.requires_grad),
                                            "grad_is_none": value.grad is None if value.is_leaf else True}
    return info


def _state(t: torch.Tensor) -> dict:
    with torch._C.DisableTorchFunction():
        return {"value": t.detach().clone(), "is_leaf": bool(t.is_leaf), "requires_grad": bool(t.requires_grad),
                "version": int(t._version), "grad": _grad_size(t)}


@probe
def run_steps(module, x, y, w0, b0, lr, steps):
    """Call train_step `steps` times on fresh leaves w, b; record what each call did."""
    w = w0.detach().clone().requires_grad_(True)
    b = b0.detach().clone().requires_grad_(True)
    watch = Watch({"w": w, "b": b})
    log = {"steps": [], "error": None}
    for _ in range(steps):
        try:
            with watch:
                loss = module.train_step(x, y, w, b, lr)
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - explained by the judge
            log["error"] = _error_info(exc, module)
            break
        log["steps"].append({"loss": loss, "w": _state(w), "b": _state(b)})
    log["grads_before"] = watch.grads_before
    log["data_used"] = [n for n in ("w", "b") if n in watch.data_used]
    return log


def _graph_leaves(t: torch.Tensor) -> list[torch.Tensor]:
    """The leaf tensors (requiring grad) that `t`'s graph accumulates gradients into, in graph order."""
    leaves, seen, todo = [], set(), [t.grad_fn]
    while todo:
        node = todo.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        todo.extend(n for n, _ in node.next_functions)
    return leaves


def _observe_train(module, x, y, epochs):
    """Run train(x, y, epochs), watching every backward (or autograd.grad): the loss, the parameters
    and their old gradients at that moment."""
    seen = {"losses": [], "params": [], "grads_before": []}
    real_backward, real_grad = torch.autograd.backward, torch.autograd.grad

    def record(tensors):
        t = tensors if isinstance(tensors, torch.Tensor) else next(iter(tensors), None)
        if not isinstance(t, torch.Tensor):
            return
        with torch._C.DisableTorchFunction():
            leaves = _graph_leaves(t)
            seen["losses"].append(float(t.detach().reshape(-1)[0]) if t.numel() == 1 else math.nan)
            seen["params"].append([(id(p), float(p.detach().reshape(-1)[0])) for p in leaves if p.numel() == 1])
            sizes = [_grad_size(p) for p in leaves]
            seen["grads_before"].append(max((s for s in sizes if s is not None), default=None))

    def backward(tensors, *args, **kwargs):
        record(tensors)
        return real_backward(tensors, *args, **kwargs)

    def grad(outputs, *args, **kwargs):
        record(outputs)
        return real_grad(outputs, *args, **kwargs)

    torch.autograd.backward, torch.autograd.grad = backward, grad
    out = {"result": None, "error": None}
    try:
        out["result"] = module.train(x, y, epochs)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - explained by the judge
        out["error"] = _error_info(exc, module)
    finally:
        torch.autograd.backward, torch.autograd.grad = real_backward, real_grad
    out.update(seen)
    out["w"], out["b"] = _param_history(seen["params"], out["result"])
    return out


def _param_history(params: list, result) -> tuple[list, list]:
    """w and b after each step: the values the next step's forward used, then the values train returned."""
    if not (isinstance(result, (tuple, list)) and len(result) >= 2 and params
            and all(isinstance(t, torch.Tensor) and t.numel() == 1 for t in result[:2])):
        return [], []
    later = params[1:]
    history = []
    for t in result[:2]:
        final = float(t.detach().reshape(-1)[0])
        if all(any(i == id(t) for i, _ in step) for step in later):
            values = [next(v for i, v in step if i == id(t)) for step in later]
        elif params[-1] and all(len(step) == len(params[-1]) for step in params):
            # a new leaf every step ((w - lr * g).detach().requires_grad_()): follow its place in the graph
            pos = min(range(len(params[-1])), key=lambda i: abs(params[-1][i][1] - final))
            values = [step[pos][1] for step in later]
        else:
            return [], []
        history.append(values + [final])
    return history[0], history[1]


@probe
def observe_train(module, x, y, epochs):
    return _observe_train(module, x, y, epochs)


@probe
def training_trace(module, x, y, epochs=EPOCHS):
    """The learner's train(x, y, epochs) on these data: {"losses", "w", "b"}, one value per step
    (loss of the step's forward; w and b after the step's update). For the report's plots."""
    seen = _observe_train(module, x, y, epochs)
    losses = seen["losses"]
    result = seen["result"]
    if not losses and isinstance(result, (tuple, list)) and len(result) == 3 and isinstance(result[2], list):
        losses = [float(v) for v in result[2] if isinstance(v, (int, float, torch.Tensor))]
    return {"losses": losses, "w": seen["w"], "b": seen["b"]}


# -- messages --------------------------------------------------------------------------------

def explain_error(err: dict, fn: str):
    """Fail with the learner's exception turned into its likely cause."""
    msg, where = err["message"], f" ({err['where']})" if err["where"] else ""
    w = err["locals"].get("w") or err["locals"].get("b") or {}
    said = f"{fn} raised {err['type']}: {msg.splitlines()[0][:200].rstrip('.')}{where}."
    said_zh = f"{fn} 抛出了 {err['type']}：{msg.splitlines()[0][:200].rstrip('.')}{where}。"
    if "leaf Variable that requires grad is being used in an in-place operation" in msg:
        fail(f"{said} Autograd refuses to record a change of w itself: do the update inside "
             "`with torch.no_grad():`.",
             f"{said_zh}autograd 不允许记录对 w 本身的原地修改：请把参数更新放进 `with torch.no_grad():` 里。")
    if "NoneType" in msg:
        if w and not w.get("is_leaf", True):
            fail(f"{said} w is no longer a leaf: `w = w - lr * w.grad` outside torch.no_grad() makes a new tensor "
                 "that autograd tracks, and its .grad stays None. Update w in place under torch.no_grad().",
                 f"{said_zh}w 已经不是叶子节点了：在 torch.no_grad() 之外写 `w = w - lr * w.grad` 会生成一个被 autograd "
                 "追踪的新 tensor，它的 .grad 一直是 None。请在 torch.no_grad() 下原地更新 w。")
        fail(f"{said} w.grad is None before the first backward: zero the gradients after the update, "
             "or check `if w.grad is not None` first.",
             f"{said_zh}第一次 backward 之前 w.grad 是 None：请在参数更新之后再清零梯度，或者先判断 `if w.grad is not None`。")
    if "does not require grad and does not have a grad_fn" in msg:
        fail(f"{said} The loss depends on no tensor that requires grad: create w and b with requires_grad=True, "
             "and update them in place (a new tensor made under torch.no_grad() does not require grad).",
             f"{said_zh}损失不依赖任何 requires_grad 的 tensor：创建 w 和 b 时要设 requires_grad=True，并原地更新它们"
             "（在 torch.no_grad() 下新建的 tensor 不需要梯度）。")
    if "backward through the graph a second time" in msg:
        fail(f"{said} A graph from an earlier step was used again: compute y_pred and the loss anew in every step, "
             "from leaves w and b.",
             f"{said_zh}重复使用了之前某一步的计算图：每一步都要从叶子节点 w、b 重新计算 y_pred 和 loss。")
    fail(said, said_zh)


def steps_of(submission, rng, steps: int):
    """Run train_step `steps` times on drawn data; fail on an exception. Return (inputs, log)."""
    x, y, w0, b0, lr = draw_step(rng)
    log = submission.probe(run_steps, x, y, w0, b0, lr, steps, what=f"`train_step(x[{len(x)}, 1], y, w, b, lr)`")
    if log["error"]:
        explain_error(log["error"], "train_step")
    return (x, y, w0, b0, lr), log


def fmt(v: float) -> str:
    return f"{v:.4g}"


# -- train_step ------------------------------------------------------------------------------

@check("train_step returns the loss of the step as a number", points=1, zh="train_step 以数字形式返回这一步的损失")
def test_step_returns_loss(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 1)
    loss = log["steps"][0]["loss"]
    if loss is None:
        fail("train_step returned None: did you forget `return loss.item()`?",
             "train_step 返回了 None：是不是忘了 `return loss.item()`？")
    if isinstance(loss, torch.Tensor):
        if loss.numel() != 1:
            fail(f"train_step should return one number, the loss, got a tensor of shape {list(loss.shape)}: "
                 "is the mean missing?",
                 f"train_step 应返回一个数（损失），实际返回了形状为 {list(loss.shape)} 的 tensor：是不是少了 mean？")
        if tensor_info(loss).get("requires_grad"):
            fail("train_step returned the loss tensor, which still holds the whole graph: return loss.item(), "
                 "a plain Python float.",
                 "train_step 返回了仍然挂着整个计算图的 loss tensor：请返回 loss.item()，一个普通的 Python float。")
        loss = float(loss.reshape(()))
    if isinstance(loss, bool) or not isinstance(loss, (int, float)):
        fail(f"train_step should return the loss as a Python float (loss.item()), got {describe(loss)}.",
             f"train_step 应以 Python float 返回损失（loss.item()），实际得到 {describe(loss)}。")
    want = float(mse64(x, y)(w0.double(), b0.double()))
    if abs(loss - want) <= 1e-4 * abs(want) + 1e-6:
        return
    st = log["steps"][0]
    after = float(mse64(x, y)(st["w"]["value"].double(), st["b"]["value"].double()))
    if abs(loss - after) <= 1e-4 * abs(after) + 1e-6:
        fail(f"train_step returned {fmt(loss)}, the loss after the update; expected {fmt(want)}, the loss of "
             "this step's forward pass (before the update).",
             f"train_step 返回了 {fmt(loss)}，这是更新之后的损失；应返回 {fmt(want)}，即本步前向传播（更新之前）的损失。")
    ratio = loss / want if want else math.nan
    hint = (" A sum where the mean belongs?" if abs(ratio - len(x)) < 1e-3 * len(x) else
            " The loss is the mean of (w * x + b - y) ** 2.")
    fail(f"train_step returned the loss {fmt(loss)}, expected the mean squared error {fmt(want)}.{hint}",
         f"train_step 返回的损失是 {fmt(loss)}，应为均方误差 {fmt(want)}。"
         + ("是不是把 mean 写成了 sum？" if "sum" in hint else "损失是 (w * x + b - y) ** 2 的均值。"))


def _expect_changed_in_place(log, w0, b0):
    st = log["steps"][0]
    for name, before in (("w", w0), ("b", b0)):
        s = st[name]
        if not s["is_leaf"] or not s["requires_grad"]:
            fail(f"After train_step, {name} is no longer a leaf that requires grad: change it only in place "
                 "(under torch.no_grad()), never detach it or switch off requires_grad.",
                 f"train_step 之后 {name} 不再是 requires_grad 的叶子节点：只能原地修改它（在 torch.no_grad() 下），"
                 "不要 detach 或关闭 requires_grad。")
        if torch.equal(s["value"], before):
            if s["version"] == 0:
                fail(f"train_step did not change the {name} it was given ({name} stayed {fmt(float(before))}): "
                     f"`{name} = {name} - lr * {name}.grad` only makes a new local tensor. Update it in place: "
                     f"`{name} -= lr * {name}.grad` under torch.no_grad().",
                     f"train_step 没有改变传入的 {name}（{name} 仍是 {fmt(float(before))}）：`{name} = {name} - lr * "
                     f"{name}.grad` 只是新建了一个局部 tensor。请原地更新：在 torch.no_grad() 下写 `{name} -= lr * {name}.grad`。")
            fail(f"train_step updated {name} in place but its value did not move: were the gradients zeroed "
                 "before the update used them? Zero them after the update.",
                 f"train_step 原地更新了 {name}，但数值没有变化：是不是在更新之前就把梯度清零了？请在更新之后再清零。")


@check("train_step updates w and b in place; they stay leaves that require grad", points=2,
       zh="train_step 原地更新 w 和 b，它们仍是 requires_grad 的叶子节点")
def test_step_in_place(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 1)
    _expect_changed_in_place(log, w0, b0)


GD_CAUSES = {
    "sign": ("Gradient descent goes downhill: subtract, w -= lr * w.grad.",
             "梯度下降是往下坡走：应该减去，w -= lr * w.grad。"),
    "factor": ("Is lr applied once, and is the loss the mean (not the sum) of the squared errors?",
               "lr 是否只乘了一次？损失是否是平方误差的均值（而不是求和）？"),
}


def expect_step(change: torch.Tensor, expected: torch.Tensor, name: str, where: tuple[str, str]) -> None:
    """Fail unless the change of `name` in one step is `expected` (= -lr * gradient); name the likely cause."""
    change, expected = change.double().reshape(-1), expected.double().reshape(-1)
    if torch.allclose(change, expected, rtol=1e-3, atol=1e-5):
        return
    got, want = fmt(float(change[0])), fmt(float(expected[0]))
    en = f"{where[0]} changed {name} by {got}, expected -lr * d loss/d {name} = {want}."
    zh = f"{where[1]}让 {name} 变化了 {got}，应为 -lr * d loss/d {name} = {want}。"
    rel = relation(change, expected)
    if rel is not None and rel != "zero":
        rel_en, rel_zh = relation_text(rel).render("en"), relation_text(rel).render("zh")
        cause = GD_CAUSES.get(rel.split()[0], ("", ""))
        en, zh = f"{en} The change {rel_en}. {cause[0]}", f"{zh}这个变化{rel_zh}。{cause[1]}"
    fail(en.strip(), zh.strip())


@check("one train_step is one gradient-descent step: w - lr * dL/dw", points=2,
       zh="一次 train_step 就是一步梯度下降：w - lr * dL/dw")
def test_step_is_gradient_descent(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 1)
    _expect_changed_in_place(log, w0, b0)
    gw, gb = gd_grads(x, y, w0, b0)
    st = log["steps"][0]
    for name, before, g in (("w", w0, gw), ("b", b0, gb)):
        expect_step(st[name]["value"].double() - before.double(), -lr * g, name, ("One train_step", "一次 train_step "))


@check("the gradients are zeroed every step (they do not accumulate)", points=2,
       zh="每一步都清零梯度（梯度不会累积）")
def test_grads_zeroed(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 3)
    _expect_changed_in_place(log, w0, b0)
    for k, sizes in enumerate(log["grads_before"][1:], start=2):
        stale = {n: s for n, s in sizes.items() if s}
        if stale:
            name, size = next(iter(stale.items()))
            fail(f"The gradients accumulate: before the backward of step {k}, {name}.grad still held the last "
                 f"step's gradient (|{name}.grad| = {fmt(size)}), and backward adds to .grad, it does not replace it. "
                 "Zero w.grad and b.grad every step.",
                 f"梯度在累积：第 {k} 步 backward 之前，{name}.grad 仍保留着上一步的梯度（|{name}.grad| = {fmt(size)}），"
                 "而 backward 是往 .grad 上累加，不是替换。请每一步都把 w.grad 和 b.grad 清零。")
    # Each later step must use the fresh gradient at its own starting point, scaled as step 1 was
    # (step 1 itself is judged by the gradient-descent check): accumulated gradients break the proportion.
    values = [(w0, b0)] + [(s["w"]["value"], s["b"]["value"]) for s in log["steps"]]
    scale = {}
    for k in range(1, len(values)):
        (w, b), (w1, b1) = values[k - 1], values[k]
        gw, gb = gd_grads(x, y, w, b)
        for name, before, after, g in (("w", w, w1, gw), ("b", b, b1, gb)):
            change, fresh = after.double() - before.double(), (-lr * g).reshape(after.shape)
            if k == 1:
                scale[name] = float(change[0] / fresh[0]) if float(fresh[0]) else 1.0
                continue
            if not torch.allclose(change, scale[name] * fresh, rtol=1e-3, atol=1e-5):
                fail(f"Step {k} moved {name} by {fmt(float(change[0]))}, but the gradient at the start of that step "
                     f"gives {fmt(float(scale[name] * fresh[0]))} (as step 1 did): is the update using stale or "
                     "accumulated gradients? Zero w.grad and b.grad every step.",
                     f"第 {k} 步让 {name} 变化了 {fmt(float(change[0]))}，但按这一步起点的梯度应为 "
                     f"{fmt(float(scale[name] * fresh[0]))}（与第 1 步同样的规则）：更新用的是不是旧的或累积的梯度？"
                     "请每一步都清零 w.grad 和 b.grad。")


@check("the update goes through torch.no_grad(), not .data", points=1, zh="参数更新用 torch.no_grad()，而不是 .data")
def test_no_data(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 2)
    if log["data_used"]:
        name = log["data_used"][0]
        fail(f"train_step uses {name}.data: it works here, but .data hides the change from autograd's checks, "
             f"so a wrong gradient can pass silently. Update under `with torch.no_grad():` ({name} -= lr * {name}.grad).",
             f"train_step 使用了 {name}.data：这里能跑，但 .data 会绕过 autograd 的检查，出错的梯度可能悄悄通过。"
             f"请在 `with torch.no_grad():` 下更新（{name} -= lr * {name}.grad）。")
    _expect_changed_in_place(log, w0, b0)


# -- train -------------------------------------------------------------------------------------

def train_of(submission, rng):
    x, y = draw_data(rng)
    seen = submission.probe(observe_train, x, y, EPOCHS, what=f"`train(x[{len(x)}, 1], y, epochs={EPOCHS})`")
    if seen["error"]:
        explain_error(seen["error"], "train")
    result = seen["result"]
    if result is None:
        fail("train returned None: did you forget `return w, b, losses`?",
             "train 返回了 None：是不是忘了 `return w, b, losses`？")
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        fail("train should return three things, (w, b, losses).", "train 应返回三个值：(w, b, losses)。")
    for name, t in zip("wb", result[:2]):
        if not isinstance(t, torch.Tensor) or t.numel() != 1 or not t.is_floating_point():
            fail(f"train should return {name} as a float tensor of shape [1].",
                 f"train 返回的 {name} 应是形状为 [1] 的浮点 tensor。")
    return x, y, seen


def reference_training(x, y, epochs: int, lr: float = 0.01) -> dict:
    """Plain gradient descent on the same data, in the judge: the curve the report compares with."""
    w, b = torch.zeros(1, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)
    trace = {"losses": [], "w": [], "b": []}
    for _ in range(epochs):
        trace["losses"].append(float(mse64(x, y)(w, b)))
        dw, db = gd_grads(x, y, w, b)
        w, b = w - lr * dw, b - lr * db
        trace["w"].append(float(w))
        trace["b"].append(float(b))
    return trace


def keep_curves(x, y, seen) -> None:
    """The learner's loss, w and b per epoch beside the reference training's, for the HTML report."""
    losses = seen["losses"] or [float(v) for v in seen["result"][2]]
    ref = reference_training(x, y, len(losses) or EPOCHS)
    record_curve("loss per epoch", {"yours": losses, "reference": ref["losses"]}, log=True, xlabel="epoch")
    record_curve("w and b per epoch", {"w (yours)": seen["w"], "b (yours)": seen["b"],
                                       "w (reference)": ref["w"], "b (reference)": ref["b"]},
                 truth={"w": 2.5, "b": 1.3}, xlabel="epoch")


@check("train returns (w, b, losses): leaves that require grad, and one float loss per epoch", points=1,
       zh="train 返回 (w, b, losses)：requires_grad 的叶子节点，以及每个 epoch 一个 float 损失")
def test_train_returns(submission, rng):
    x, y, seen = train_of(submission, rng)
    w, b, losses = seen["result"]
    for name, t in (("w", w), ("b", b)):
        info = tensor_info(t)
        if not info.get("is_leaf", True) or not info.get("requires_grad", False):
            fail(f"The {name} that train returns is not a leaf that requires grad: create it with requires_grad=True "
                 "and change it only in place under torch.no_grad().",
                 f"train 返回的 {name} 不是 requires_grad 的叶子节点：创建时设 requires_grad=True，并且只在 torch.no_grad() "
                 "下原地修改它。")
    if not isinstance(losses, (list, tuple)):
        fail(f"losses should be a list of floats, got {type(losses).__name__}.",
             f"losses 应是 float 组成的 list，实际是 {type(losses).__name__}。")
    if len(losses) != EPOCHS:
        fail(f"train(x, y, epochs={EPOCHS}) should record one loss per epoch ({EPOCHS}), got {len(losses)}.",
             f"train(x, y, epochs={EPOCHS}) 应每个 epoch 记录一个损失（共 {EPOCHS} 个），实际有 {len(losses)} 个。")
    for v in losses:
        if isinstance(v, torch.Tensor) and tensor_info(v).get("requires_grad"):
            fail("losses holds loss tensors that keep every step's graph alive: record loss.item() instead.",
                 "losses 里存的是 loss tensor，会让每一步的计算图都留在内存里：请记录 loss.item()。")
        if not isinstance(v, (int, float, torch.Tensor)) or isinstance(v, bool) or (
                isinstance(v, torch.Tensor) and v.numel() != 1):
            fail(f"losses should hold numbers (loss.item()), found {type(v).__name__}.",
                 f"losses 里应该是数字（loss.item()），却发现了 {type(v).__name__}。")


@check("train converges to the best fit: the loss goes down, w and b reach least squares", points=1,
       zh="train 收敛到最佳拟合：损失下降，w 和 b 达到最小二乘解")
def test_train_converges(submission, rng):
    x, y, seen = train_of(submission, rng)
    keep_curves(x, y, seen)
    stale = [k for k, s in enumerate(seen["grads_before"][1:], start=2) if s]
    if stale:
        fail(f"The gradients accumulate in train: before the backward of step {stale[0]}, the parameters' .grad still "
             "held old gradients. Zero w.grad and b.grad every step.",
             f"train 中梯度在累积：第 {stale[0]} 步 backward 之前，参数的 .grad 仍保留着旧梯度。请每一步都清零 w.grad 和 b.grad。")
    losses = seen["losses"] or [float(v) for v in seen["result"][2]]
    w, b = (float(t.reshape(-1)[0]) for t in seen["result"][:2])
    best_w, best_b = least_squares(x, y)
    first, last = losses[0], losses[-1]
    if not all(math.isfinite(v) for v in losses + [w, b]) or last > first:
        fail(f"The loss grew from {fmt(first)} to {fmt(last)} (w = {fmt(w)}): the learning rate is too large for x "
             "spread like randn * 5, so each step overshoots and training diverges. Try one 10 times smaller.",
             f"损失从 {fmt(first)} 增大到 {fmt(last)}（w = {fmt(w)}）：对于 randn * 5 这样分布的 x，学习率太大了，"
             "每一步都冲过头，训练发散。试试小 10 倍的学习率。")
    if len(set(losses)) == 1:
        fail(f"The loss stayed at {fmt(first)} for all {EPOCHS} epochs (w = {fmt(w)}, b = {fmt(b)}): the parameters "
             "never moved. Is each update applied in place to the w and b that train returns?",
             f"损失在全部 {EPOCHS} 个 epoch 中一直是 {fmt(first)}（w = {fmt(w)}，b = {fmt(b)}）：参数根本没动。"
             "每次更新是否原地作用在 train 返回的 w 和 b 上？")
    if abs(w - best_w) > W_TOL or abs(b - best_b) > B_TOL:
        fail(f"After {EPOCHS} epochs w = {fmt(w)}, b = {fmt(b)}, but the best fit is w = {fmt(best_w)}, "
             f"b = {fmt(best_b)} (the loss went {fmt(first)} -> {fmt(last)}): the learning rate is too small "
             "to get there in time, or the update is wrong.",
             f"{EPOCHS} 个 epoch 之后 w = {fmt(w)}，b = {fmt(b)}，但最佳拟合是 w = {fmt(best_w)}，b = {fmt(best_b)}"
             f"（损失 {fmt(first)} -> {fmt(last)}）：学习率太小，来不及收敛，或者更新写错了。")
