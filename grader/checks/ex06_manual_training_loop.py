"""Hidden checks of ex06: a gradient-descent training loop by hand (no optimizer).

The probes run the learner's `train_step` on leaf tensors they create and watch the step itself: the
gradients before every backward (are they zeroed?), whether the caller's w and b change in place and stay
leaves that require grad, whether `.data` is used, and the values the step computed for w and b (its
local `w` and `b` when it returns, so that a step that rebinds `w = w - lr * w.grad` is still judged on
its arithmetic, once, by the in-place check alone). `training_trace` records the learner's `train` (loss,
w and b per step) on judge-drawn data, for the checks and for plots.
"""

from __future__ import annotations

import collections
import contextlib
import math
import sys
import types

import torch
from torch.overrides import TorchFunctionMode

from grader.checking import (Text, check, describe, fail, fail_raised, is_number, learner_call, matches, patched,
                             probe, record_curve, relation, relation_cause,
                             relation_key, relation_text, tensor_info, verbatim)
from grader.devices import expect_cpu_only

EPOCHS = 300  # what the README promises the checks pass to train()
W_TOL, B_TOL = 0.05, 0.1  # how close train() must land to the least-squares fit
PARAMS = ("w", "b")


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
    w = torch.as_tensor(w).detach().double().clone().reshape(1).requires_grad_(True)
    b = torch.as_tensor(b).detach().double().clone().reshape(1).requires_grad_(True)
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
        g = t.grad if t.is_leaf else None
        return None if g is None else float(g.detach().abs().max()) if g.numel() else 0.0


def _error_info(error: dict, backwards: int) -> dict:
    """The learner's error (learner_call's), with how many backward passes had run in that call."""
    return {**error, "backwards": backwards}


def _value(t) -> torch.Tensor | None:
    if not isinstance(t, torch.Tensor):
        return None
    with torch._C.DisableTorchFunction():
        return t.detach().clone().reshape(-1)[:1].double() if t.numel() else None


def _state(t: torch.Tensor) -> dict:
    with torch._C.DisableTorchFunction():
        return {"value": t.detach().clone(), "is_leaf": bool(t.is_leaf), "requires_grad": bool(t.requires_grad),
                "version": int(t._version), "grad": _grad_size(t)}


def _call_keeping_locals(fn, args):
    """fn(*args), and fn's own local variables as they were when it returned."""
    code, seen = getattr(fn, "__code__", None), {}

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is code:
            seen.update(frame.f_locals)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        return fn(*args), seen
    finally:
        sys.setprofile(previous)


@probe
def run_steps(module, x, y, w0, b0, lr, steps):
    """Call train_step `steps` times on the same leaves w, b (as a loop would); record each call: the
    returned loss, the caller's w and b after it, and the values the step computed (its local w and b)."""
    w = w0.detach().clone().requires_grad_(True)
    b = b0.detach().clone().requires_grad_(True)
    watch = Watch({"w": w, "b": b})
    log = {"steps": [], "error": None, "LR": getattr(module, "LR", None)}
    made = []  # the torch.optim optimizers train_step creates (the statement rules them out)
    original_init = torch.optim.Optimizer.__init__

    def recording_init(self, *args, **kwargs):
        made.append(type(self).__name__)
        original_init(self, *args, **kwargs)

    torch.optim.Optimizer.__init__ = recording_init
    try:
        with contextlib.ExitStack() as stack:
            for owner, name in _functional_optim():  # torch.optim's update functions, e.g. torch.optim.sgd.sgd
                stack.enter_context(patched(module, owner, name, _recording(getattr(owner, name), made)))
            _run_steps(module, x, y, w, b, lr, steps, watch, log)
    finally:
        torch.optim.Optimizer.__init__ = original_init
    log["optimizers"] = made
    return log


def _functional_optim() -> list:
    """(module, name) of each update function torch.optim's modules define (sgd, adam, _multi_tensor_sgd...): the
    optimizer's work without an optimizer object."""
    found = []
    for module_name, owner in list(sys.modules.items()):
        if module_name.startswith("torch.optim.") and owner is not None:
            found += [(owner, name) for name, value in vars(owner).items()
                      if isinstance(value, types.FunctionType) and value.__module__ == module_name
                      and name.lstrip("_")[:1].islower() and "lr_scheduler" not in module_name]
    return found


def _recording(function, made):
    def recorded(*args, **kwargs):
        made.append(f"{function.__module__}.{function.__name__}")
        return function(*args, **kwargs)
    return recorded


def _run_steps(module, x, y, w, b, lr, steps, watch, log):
    for _ in range(steps):
        before = {"w": _value(w), "b": _value(b)}
        done = len(watch.grads_before)
        with watch:
            returned, error = learner_call(module, _call_keeping_locals, module.train_step, (x, y, w, b, lr))
        if error:  # explained by the judge
            log["error"] = _error_info(error, len(watch.grads_before) - done)
            break
        loss, local = returned
        computed = {n: _value(local.get(n)) for n in PARAMS}
        log["steps"].append({"loss": loss, "before": before, "w": _state(w), "b": _state(b),
                             "computed": {n: v if v is not None else _value(p) for (n, v), p in
                                          zip(computed.items(), (w, b))},
                             "rebound": [n for n, p in zip(PARAMS, (w, b)) if local.get(n) is not p]})
    log["grads_before"] = watch.grads_before
    log["data_used"] = [n for n in PARAMS if n in watch.data_used]
    if not is_number(log["LR"], (int, float)):
        log["LR"] = None


def _graph_leaves(t: torch.Tensor) -> list[torch.Tensor]:
    """The leaf tensors (requiring grad) that `t`'s graph accumulates gradients into, in graph order."""
    leaves, seen, todo = [], set(), collections.deque([t.grad_fn])
    while todo:
        node = todo.popleft()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.append(variable)
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
        with torch._C.DisableTorchFunction():  # one .item() per value: this runs at each of 300 epochs
            leaves = _graph_leaves(t)
            seen["losses"].append(t.detach().item() if t.numel() == 1 else math.nan)
            seen["params"].append([(id(p), p.detach().item()) for p in leaves if p.numel() == 1])
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
        out["result"], error = learner_call(module, module.train, x, y, epochs)
    finally:
        torch.autograd.backward, torch.autograd.grad = real_backward, real_grad
    if error:  # explained by the judge
        out["error"] = _error_info(error, len(seen["losses"]))
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
    """_observe_train's record, with the module's LR (a number, else None): the learning rate the learner chose."""
    lr = getattr(module, "LR", None)
    return {**_observe_train(module, x, y, epochs), "LR": float(lr) if is_number(lr, (int, float)) else None}


@probe
def training_trace(module, x, y, epochs=EPOCHS):
    """The learner's train(x, y, epochs) on these data: {"losses", "w", "b"}, one value per step
    (loss of the step's forward; w and b after the step's update). For the report's plots."""
    seen = _observe_train(module, x, y, epochs)
    losses = seen["losses"]
    result = seen["result"]
    if not losses and isinstance(result, (tuple, list)) and len(result) == 3 and isinstance(result[2], list):
        losses = [float(v) for v in result[2] if is_number(v, (int, float), tensor=True)]
    return {"losses": losses, "w": seen["w"], "b": seen["b"]}


# -- messages --------------------------------------------------------------------------------

ERRORS = [  # (text in the error, key, the likely cause)
    ("leaf Variable that requires grad is being used in an in-place operation", "no-grad-missing",
     Text("Autograd refuses to record a change of w itself: do the update inside `with torch.no_grad():`.",
          "autograd 不允许记录对 w 本身的原地修改：请把参数更新放进 `with torch.no_grad():` 里。")),
    ("does not require grad and does not have a grad_fn", "no-requires-grad",
     Text("The loss depends on no tensor that requires grad: create w and b with requires_grad=True, and update "
          "them in place (a new tensor made under torch.no_grad() does not require grad).",
          "损失不依赖任何 requires_grad 的 tensor：创建 w 和 b 时要设 requires_grad=True，并原地更新它们"
          "（在 torch.no_grad() 下新建的 tensor 不需要梯度）。")),
    ("backward through the graph a second time", "graph-reused",
     Text("A graph from an earlier step was used again: compute y_pred and the loss anew in every step, from "
          "leaves w and b.",
          "重复使用了之前某一步的计算图：每一步都要从叶子张量 w、b 重新计算 y_pred 和 loss。")),
]
NOT_A_LEAF = Text("w is no longer a leaf: `w = w - lr * w.grad` outside torch.no_grad() makes a new tensor that "
                  "autograd tracks, and its .grad stays None. Update w in place under torch.no_grad().",
                  "w 已经不是叶子张量了：在 torch.no_grad() 之外写 `w = w - lr * w.grad` 会生成一个被 autograd "
                  "追踪的新 tensor，它的 .grad 一直是 None。请在 torch.no_grad() 下原地更新 w。")
GRAD_NONE_FIRST = Text("w.grad is None until the first backward: zero the gradients after the update, or check "
                       "`if w.grad is not None` first.",
                       "第一次 backward 之前 w.grad 是 None：请在参数更新之后再清零梯度，或者先判断 `if w.grad is not None`。")


def explain_error(err: dict, fn: str):
    """Fail with the learner's exception turned into its likely cause (only a cause the evidence supports)."""
    msg = err["message"]
    state = err["locals"].get("w") or err["locals"].get("b") or {}
    for needle, key, cause in ERRORS:
        if needle in msg:
            fail_raised(err, fn, cause, key=key)
    if "NoneType" in msg and state:
        if not state["is_leaf"]:
            fail_raised(err, fn, NOT_A_LEAF, key="not-a-leaf")
        if err["backwards"] == 0:
            fail_raised(err, fn, GRAD_NONE_FIRST, key="zero-grad-before-first-backward")
    fail_raised(err, fn)


def steps_of(submission, rng, steps: int):
    """Run train_step `steps` times on drawn data; fail on an exception. Return (inputs, log)."""
    x, y, w0, b0, lr = draw_step(rng)
    log = submission.probe(run_steps, x, y, w0, b0, lr, steps,
                           what=f"`train_step(x[{len(x)}, 1], y, w, b, lr={lr:.4g})`")
    if log["error"]:
        explain_error(log["error"], "train_step")
    return (x, y, w0, b0, lr), log


def fmt(v: float) -> str:
    return f"{v:.4g}"


def expect_an_update(log) -> None:
    """Fail when the first train_step changed neither w nor b in any way: a check about how the update is
    done has nothing to judge then (and must not score on code that does not update yet)."""
    st = log["steps"][0]
    if all(st[n]["version"] == 0 and torch.equal(st["computed"][n], st["before"][n]) for n in PARAMS):
        fail("train_step does not update w or b yet, so there is no update to judge.",
             "train_step 还没有更新 w 或 b，因此无从判断更新的写法。", key="parameter-not-updated")


# -- train_step ------------------------------------------------------------------------------

@check("train_step returns the loss of the step as a float", points=1, zh="train_step 以 float 返回这一步的损失")
def test_step_returns_loss(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 1)
    loss = log["steps"][0]["loss"]
    if loss is None:
        fail("train_step returned None: did you forget `return loss.item()`?",
             "train_step 返回了 None：是不是忘了 `return loss.item()`？", key="returned-none")
    if isinstance(loss, torch.Tensor):
        if loss.numel() != 1:
            fail("train_step should return one number, the loss, got a tensor of shape {shape}: is the mean missing?",
                 "train_step 应返回一个数（损失），实际返回了形状为 {shape} 的 tensor：是不是少了 mean？",
                 shape=list(loss.shape), key="loss-not-reduced")
        if tensor_info(loss).get("requires_grad"):
            fail("train_step returned the loss tensor, which still holds the whole graph: return loss.item(), "
                 "a plain Python float.",
                 "train_step 返回了仍然挂着整个计算图的 loss tensor：请返回 loss.item()，一个普通的 Python float。",
                 key="loss-tensor-returned")
        fail("train_step returned {got}, not a Python float: return loss.item().",
             "train_step 返回的是{got}，而不是 Python float：请返回 loss.item()。", got=describe(loss),
             key="not-a-float")
    if not is_number(loss, (int, float)):
        fail("train_step should return the loss as a Python float (loss.item()), got {got}.",
             "train_step 应以 Python float 返回损失（loss.item()），实际得到 {got}。", got=describe(loss),
             key="not-a-float")
    want = float(mse64(x, y)(w0.double(), b0.double()))
    if matches(loss, want):
        return
    computed = log["steps"][0]["computed"]
    after = float(mse64(x, y)(computed["w"], computed["b"])) if None not in computed.values() else math.nan
    if matches(loss, after):
        fail("train_step returned {got}, the loss after the update; expected {want}, the loss of this step's "
             "forward pass (before the update).",
             "train_step 返回了 {got}，这是更新之后的损失；应返回 {want}，即本步前向传播（更新之前）的损失。",
             got=fmt(loss), want=fmt(want), key="loss-after-update")
    if matches(loss, len(x) * want, atol=0):
        fail("train_step returned the loss {got}, expected the mean squared error {want}: {n} times larger, "
             "a sum where the mean belongs?",
             "train_step 返回的损失是 {got}，应为均方误差 {want}：大了 {n} 倍，是不是把 mean 写成了 sum？",
             got=fmt(loss), want=fmt(want), n=len(x), key="factor-N")
    if matches(loss, want / 2, atol=0):
        fail("train_step returned the loss {got}, half the mean squared error {want}: is there a 1/2 in the loss? "
             "The loss is mean((w * x + b - y) ** 2), with no 1/2.",
             "train_step 返回的损失是 {got}，只有均方误差 {want} 的一半：损失里是不是多了 1/2？"
             "损失是 mean((w * x + b - y) ** 2)，没有 1/2。", got=fmt(loss), want=fmt(want), key="factor-0.5")
    flat = w0 * x.reshape(1, -1) + b0  # y_pred of shape [N] against y of shape [N, 1]
    if matches(loss, float(((flat.double() - y.double()) ** 2).mean()), atol=0):
        fail("train_step returned the loss {got}, expected {want}: y_pred has shape [N] while y has shape [N, 1], so "
             "y_pred - y broadcasts to [N, N]. `x @ w` with w of shape [1], or a squeeze(), drops the column; "
             "w * x + b keeps [N, 1].",
             "train_step 返回的损失是 {got}，应为 {want}：y_pred 的形状是 [N]，而 y 是 [N, 1]，y_pred - y 会广播成 "
             "[N, N]。w 形状为 [1] 时 `x @ w`，或者 squeeze()，都会去掉列这一维；w * x + b 保持 [N, 1]。",
             got=fmt(loss), want=fmt(want), key="broadcast-to-n-by-n")
    fail("train_step returned the loss {got}, expected the mean squared error {want}: the loss is the mean of "
         "(w * x + b - y) ** 2.",
         "train_step 返回的损失是 {got}，应为均方误差 {want}：损失是 (w * x + b - y) ** 2 的均值。",
         got=fmt(loss), want=fmt(want), key="wrong-loss")


@check("train_step updates the caller's w and b in place; they stay leaves that require grad", points=2,
       zh="train_step 原地更新调用者的 w 和 b，它们仍是 requires_grad 的叶子张量")
def test_step_in_place(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 1)
    st = log["steps"][0]
    for name, before in zip(PARAMS, (w0, b0)):
        s = st[name]
        if not s["is_leaf"] or not s["requires_grad"]:
            fail("After train_step, {name} is no longer a leaf that requires grad: change it only in place "
                 "(under torch.no_grad()), never detach it or switch off requires_grad.",
                 "train_step 之后 {name} 不再是 requires_grad 的叶子张量：只能原地修改它（在 torch.no_grad() 下），"
                 "不要 detach 或关闭 requires_grad。", name=name, key="not-a-leaf")
        if s["version"] > 0 or not torch.equal(s["value"], before):
            continue  # changed in place (a step that moves it by a wrong amount is the next check's lesson)
        if name in st["rebound"] and not torch.equal(st["computed"][name], before.double()):
            fail("train_step computed a new {name} but the caller's {name} did not move (it stayed {value}): "
                 "`{name} = {name} - lr * {name}.grad` only makes a new local tensor. Update it in place: "
                 "`{name} -= lr * {name}.grad` under torch.no_grad().",
                 "train_step 算出了新的 {name}，但调用者的 {name} 没有变（仍是 {value}）：`{name} = {name} - lr * "
                 "{name}.grad` 只是新建了一个局部 tensor。请原地更新：在 torch.no_grad() 下写 `{name} -= lr * {name}.grad`。",
                 name=name, value=fmt(float(before)), key="rebinds-parameter")
        fail("train_step did not change the {name} it was given ({name} stayed {value}): update it in place, "
             "`{name} -= lr * {name}.grad` under torch.no_grad().",
             "train_step 没有改变传入的 {name}（{name} 仍是 {value}）：请原地更新它，在 torch.no_grad() 下写 "
             "`{name} -= lr * {name}.grad`。", name=name, value=fmt(float(before)), key="parameter-not-updated")


STEP_CAUSES = {
    "sign": ("Gradient descent goes downhill: subtract, w -= lr * w.grad.",
             "梯度下降是往下坡走：应该减去，w -= lr * w.grad。"),
    "factor N": ("A sum where the mean belongs? The loss is the mean of the squared errors.",
                 "是不是把 mean 写成了 sum？损失是平方误差的均值。"),
    "factor 2": ("Is the update applied twice?", "是不是把更新做了两次？"),
    "factor 0.5": ("Half the squared error? The loss is mean((w * x + b - y) ** 2), with no 1/2.",
                   "损失里是不是多了 1/2？损失是 mean((w * x + b - y) ** 2)，没有 1/2。"),
}


def expect_step(change: float, expected: float, name: str, *, n: int, lr: float, LR, grad_after, version: int):
    """Fail unless one step changed `name` by `expected` (= -lr * gradient); name the likely cause."""
    if matches(change, expected, rtol=1e-3, atol=1e-5):
        return
    said = Text("One train_step changed {name} by {got}, expected -lr * d loss/d {name} = {want}.",
                "一次 train_step 让 {name} 变化了 {got}，应为 -lr * d loss/d {name} = {want}。",
                name=name, got=fmt(change), want=fmt(expected))
    if change == 0.0:
        if version > 0 and grad_after == 0.0:
            fail(said + Text(" {name} was updated in place but did not move, and {name}.grad is zero afterwards: were "
                             "the gradients zeroed before the update used them? Zero them after the update.",
                             "{name} 被原地更新了，却没有移动，而且之后 {name}.grad 为 0：是不是在更新之前就把梯度清零了？"
                             "请在更新之后再清零。", name=name), key="zeroed-before-update")
        fail(said + Text(" The step did not update {name}.", "这一步没有更新 {name}。", name=name),
             key="parameter-not-updated")
    if LR is not None and LR != lr and matches(change, expected * LR / lr, rtol=1e-3):
        fail(said + Text(" That is a step with LR = {LR:g}, not with the lr = {lr:.4g} train_step was given: use "
                         "its `lr` argument (train passes LR to it).",
                         "这是用 LR = {LR:g} 走的一步，而不是传给 train_step 的 lr = {lr:.4g}：请使用参数 `lr`"
                         "（由 train 把 LR 传进来）。", LR=LR, lr=lr), key="ignores-lr-argument")
    rel = relation(torch.tensor([change]), torch.tensor([expected]), n)
    cause = relation_cause(rel, STEP_CAUSES) if rel else None
    if cause is not None:
        fail(said + Text(" The change {relation}. {cause}", "这个变化{relation}。{cause}",
                         relation=relation_text(rel), cause=cause), key=relation_key(rel))
    fail(said, key="wrong-step")


@check("one train_step is one gradient-descent step: w - lr * dL/dw", points=2,
       zh="一次 train_step 就是一步梯度下降：w - lr * dL/dw")
def test_step_is_gradient_descent(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 1)
    st = log["steps"][0]
    for name, before, g in zip(PARAMS, (w0, b0), gd_grads(x, y, w0, b0)):
        change = float(st["computed"][name] - before.double())
        expect_step(change, float(-lr * g), name, n=len(x), lr=lr, LR=log["LR"], grad_after=st[name]["grad"],
                    version=st[name]["version"])


@check("the gradients are zeroed every step (they do not accumulate)", points=2,
       zh="每一步都清零梯度（梯度不会累积）")
def test_grads_zeroed(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 3)
    if len(log["grads_before"]) < 2:  # zeroing shows only between two backward passes, or in the steps taken
        expect_an_update(log)
    for k, sizes in enumerate(log["grads_before"][1:], start=2):
        stale = {n: s for n, s in sizes.items() if s}
        if stale:
            name, size = next(iter(stale.items()))
            fail("The gradients accumulate: before the backward of step {k}, {name}.grad still held the last step's "
                 "gradient (|{name}.grad| = {size}), and backward adds to .grad, it does not replace it. "
                 "Zero w.grad and b.grad every step.",
                 "梯度在累积：第 {k} 步 backward 之前，{name}.grad 仍保留着上一步的梯度（|{name}.grad| = {size}），"
                 "而 backward 是往 .grad 上累加，不是替换。请每一步都把 w.grad 和 b.grad 清零。",
                 k=k, name=name, size=fmt(size), key="zero-grad-missing")
    # The gradients may also pile up where .grad does not show it (a sum kept by hand): a later step that
    # moves by the sum of all the fresh steps so far, scaled as step 1 was, accumulates.
    scale, total = {}, {n: 0.0 for n in PARAMS}
    for k, st in enumerate(log["steps"], start=1):
        grads = gd_grads(x, y, st["before"]["w"], st["before"]["b"])
        for name, g in zip(PARAMS, grads):
            change, fresh = float(st["computed"][name] - st["before"][name]), float(-lr * g)
            total[name] += fresh
            if k == 1:
                scale[name] = change / fresh if fresh else 1.0
            elif matches(change, scale[name] * total[name], rtol=1e-3, atol=1e-5) \
                    and not matches(change, scale[name] * fresh, rtol=1e-3, atol=1e-5):
                fail("Step {k} moved {name} by {got}, the sum of the steps of all {k} gradients so far, where the "
                     "gradient at the start of that step gives {want}: the gradients accumulate. Zero w.grad and "
                     "b.grad every step.",
                     "第 {k} 步让 {name} 变化了 {got}，等于到目前为止 {k} 个梯度的步长之和，而按这一步起点的梯度应为 "
                     "{want}：梯度在累积。请每一步都清零 w.grad 和 b.grad。",
                     k=k, name=name, got=fmt(change), want=fmt(scale[name] * fresh), key="zero-grad-missing")


@check("the update goes through torch.no_grad(), not .data", points=1, zh="参数更新用 torch.no_grad()，而不是 .data")
def test_no_data(submission, rng):
    (x, y, w0, b0, lr), log = steps_of(submission, rng, 2)
    if log["data_used"]:
        fail("train_step uses {name}.data: it works here, but .data hides the change from autograd's checks, so a "
             "wrong gradient can pass silently. Update under `with torch.no_grad():` ({name} -= lr * {name}.grad).",
             "train_step 使用了 {name}.data：这里能跑，但 .data 会绕过 autograd 的检查，出错的梯度可能悄悄通过。"
             "请在 `with torch.no_grad():` 下更新（{name} -= lr * {name}.grad）。",
             name=log["data_used"][0], key="data-update")
    if log["optimizers"]:
        name = log["optimizers"][0]
        fail("train_step {uses}: this exercise writes the update by hand (under `with torch.no_grad():`, "
             "w -= lr * w.grad), without torch.optim.",
             "train_step {uses}：本题要求手写参数更新（在 `with torch.no_grad():` 下执行 w -= lr * w.grad），"
             "不使用 torch.optim。", uses=Text("calls torch.optim's update function `{name}`", "调用了 torch.optim 的更新函数 "
                                                "`{name}`", name=verbatim(name)) if "." in name else
             Text("creates a torch.optim.{name}", "创建了 torch.optim.{name}", name=verbatim(name)), key="optimizer-used")
    expect_an_update(log)


# -- train -------------------------------------------------------------------------------------

def train_of(submission, rng):
    """The learner's train(x, y, EPOCHS), observed once per grading (the first check that asks draws the data),
    failing unless it ran and returned (w, b, losses) with w and b float tensors of shape [1]."""
    def observed():
        x, y = draw_data(rng)
        return x, y, submission.probe(observe_train, x, y, EPOCHS, what=f"`train(x[{len(x)}, 1], y, epochs={EPOCHS})`")
    x, y, seen = submission.once("train", observed)
    if seen["error"]:
        explain_error(seen["error"], "train")
    result = seen["result"]
    if result is None:
        fail("train returned None: did you forget `return w, b, losses`?",
             "train 返回了 None：是不是忘了 `return w, b, losses`？", key="returned-none")
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        fail("train should return three things, (w, b, losses), got {got}.",
             "train 应返回三个值：(w, b, losses)，实际得到 {got}。", got=describe(result), key="wrong-return")
    for name, t in zip(PARAMS, result[:2]):
        if not isinstance(t, torch.Tensor) or list(t.shape) != [1] or not t.is_floating_point():
            fail("train should return {name} as a float tensor of shape [1], got {got}.",
                 "train 返回的 {name} 应是形状为 [1] 的浮点 tensor，实际得到 {got}。",
                 name=name, got=describe(t), key="wrong-return")
    return x, y, seen


def reference_training(x, y, epochs: int, lr: float = 0.01) -> dict:
    """Plain gradient descent from w = b = 0 on the same data, in the judge (float64). The MSE of w * x + b and its
    gradient depend on the data only through the means of x, y, x², xy and y², so each step costs a few
    multiplications, whatever N."""
    xd, yd = x.double().reshape(-1), y.double().reshape(-1)
    mx, my, mxx, mxy, myy = (float(v.mean()) for v in (xd, yd, xd * xd, xd * yd, yd * yd))
    w = b = 0.0
    trace: dict[str, list[float]] = {"losses": [], "w": [], "b": []}
    for _ in range(epochs):
        trace["losses"].append(w * w * mxx + 2 * w * b * mx + b * b - 2 * w * mxy - 2 * b * my + myy)
        dw, db = 2 * (w * mxx + b * mx - mxy), 2 * (w * mx + b - my)
        w, b = w - lr * dw, b - lr * db
        trace["w"].append(w)
        trace["b"].append(b)
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
       zh="train 返回 (w, b, losses)：requires_grad 的叶子张量，以及每个 epoch 一个 float 损失")
def test_train_returns(submission, rng):
    x, y, seen = train_of(submission, rng)
    w, b, losses = seen["result"]
    for name, t in zip(PARAMS, (w, b)):
        info = tensor_info(t)
        if not info.get("is_leaf", True) or not info.get("requires_grad", False):
            fail("The {name} that train returns is not a leaf that requires grad: create it with requires_grad=True "
                 "and change it only in place under torch.no_grad().",
                 "train 返回的 {name} 不是 requires_grad 的叶子张量：创建时设 requires_grad=True，并且只在 "
                 "torch.no_grad() 下原地修改它。", name=name, key="not-a-leaf")
    if not isinstance(losses, (list, tuple)):
        fail("losses should be a list of floats, got {got}.", "losses 应是 float 组成的 list，实际是{got}。",
             got=describe(losses), key="wrong-return")
    if len(losses) != EPOCHS:
        fail("train(x, y, epochs={epochs}) should record one loss per epoch ({epochs}), got {got}.",
             "train(x, y, epochs={epochs}) 应每个 epoch 记录一个损失（共 {epochs} 个），实际有 {got} 个。",
             epochs=EPOCHS, got=len(losses), key="wrong-epochs")
    for v in losses:
        if isinstance(v, torch.Tensor) and tensor_info(v).get("requires_grad"):
            fail("losses holds loss tensors that keep every step's graph alive: record loss.item() instead.",
                 "losses 里存的是 loss tensor，会让每一步的计算图都留在内存里：请记录 loss.item()。",
                 key="loss-tensor-returned")
        if not is_number(v, (int, float)):
            fail("losses should hold Python floats (loss.item()), found {got}.",
                 "losses 里应该是 Python float（loss.item()），却发现了{got}。", got=describe(v), key="not-a-float")
    leaf = lambda: torch.zeros(1).requires_grad_(True)  # noqa: E731 - w, b as the caller holds them
    expect_cpu_only(submission, [("train_step", [x, y, leaf(), leaf(), 0.01]), ("train", [x, y, 3])])


def _effective_lr(x, y, seen) -> float | None:
    """The learning rate of the learner's train when its steps are gradient-descent steps (w and b moved by
    -lr * gradient with one lr), negative for steps uphill; None when the steps are not of that form."""
    ws, bs = seen["w"], seen["b"]
    if len(ws) < 3 or not all(math.isfinite(v) for v in ws[:2] + bs[:2]):
        return None
    gw, gb = (float(g) for g in gd_grads(x, y, ws[0], bs[0]))
    if abs(gw) < 1e-6 or abs(gb) < 1e-6:
        return None
    lr_w, lr_b = -(ws[1] - ws[0]) / gw, -(bs[1] - bs[0]) / gb
    return lr_w if matches(lr_w, lr_b, rtol=1e-2, atol=0) else None


def _converges(x, y, lr: float) -> bool:
    ref = reference_training(x, y, EPOCHS, lr)
    best_w, best_b = least_squares(x, y)
    return math.isfinite(ref["w"][-1]) and abs(ref["w"][-1] - best_w) <= W_TOL and abs(ref["b"][-1] - best_b) <= B_TOL


@check("train converges to the best fit: the loss goes down, w and b reach least squares", points=1,
       zh="train 收敛到最佳拟合：损失下降，w 和 b 达到最小二乘解", depends=("step_is_gradient_descent", "grads_zeroed"))
def test_train_converges(submission, rng):
    x, y, seen = train_of(submission, rng)
    keep_curves(x, y, seen)
    stale = [k for k, s in enumerate(seen["grads_before"][1:], start=2) if s]
    if stale:
        fail("The gradients accumulate in train: before the backward of step {k}, the parameters' .grad still held "
             "old gradients. Zero w.grad and b.grad every step.",
             "train 中梯度在累积：第 {k} 步 backward 之前，参数的 .grad 仍保留着旧梯度。请每一步都清零 w.grad 和 b.grad。",
             k=stale[0], key="zero-grad-missing")
    losses = seen["losses"] or [float(v) for v in seen["result"][2] if is_number(v, (int, float), tensor=True)]
    if not losses:
        fail("train returned no losses after {epochs} epochs: append each step's loss to the list it returns.",
             "train 在 {epochs} 个 epoch 之后没有返回任何损失：请把每一步的损失加到它返回的列表里。", epochs=EPOCHS,
             key="wrong-return")
    w, b = (float(t.reshape(-1)[0]) for t in seen["result"][:2])
    best_w, best_b = least_squares(x, y)
    first, last = losses[0], losses[-1]
    values = dict(first=fmt(first), last=fmt(last), w=fmt(w), b=fmt(b), epochs=EPOCHS)
    lr = _effective_lr(x, y, seen)
    if not all(math.isfinite(v) for v in losses + [w, b]) or last > first:
        grew = Text("The loss grew from {first} to {last} (w = {w}): ", "损失从 {first} 增大到 {last}（w = {w}）：",
                    **values)
        if lr is not None and lr < 0:
            fail(grew + Text("each step moves w and b along the gradient, uphill. Gradient descent subtracts: "
                             "w -= lr * w.grad.",
                             "每一步都让 w 和 b 沿梯度方向移动，也就是往上坡走。梯度下降要减去梯度：w -= lr * w.grad。"),
                 key="sign")
        chosen = seen.get("LR")  # the learner's LR: a step with it is no learning rate's fault
        if lr is not None and chosen and matches(lr, chosen * len(x), rtol=1e-2, atol=0):
            fail(grew + Text("your steps move w and b by lr = {asked:g} times the gradient of the loss summed over the "
                             "{n} samples, {n} times the gradient of their mean, which the statement's loss is: "
                             "each step is {n} times too big and training diverges. The learning rate is right; take "
                             "the mean squared error, .mean(), not .sum().",
                             "你的每一步让 w 和 b 移动 lr = {asked:g} 乘以 {n} 个样本上求和的损失的梯度，它是均值梯度的 "
                             "{n} 倍，而题目的损失是均值：每一步都大了 {n} 倍，训练发散。学习率没有问题；请用均方误差 "
                             ".mean()，而不是 .sum()。", asked=chosen, n=len(x)), key="factor-N")
        if lr is not None and not _converges(x, y, lr):
            fail(grew + Text("your steps are gradient-descent steps with lr = {lr:.3g}, and the learning rate is too "
                             "large for x spread like randn * 5: each step overshoots and training diverges. Try one "
                             "10 times smaller.",
                             "你的每一步都是 lr = {lr:.3g} 的梯度下降，对于 randn * 5 这样分布的 x，学习率太大了："
                             "每一步都冲过头，训练发散。试试小 10 倍的学习率。", lr=lr), key="lr-too-large")
        fail(grew + Text("the steps of train are not plain gradient-descent steps (-lr * gradient with one lr): is "
                         "the update the one train_step makes?",
                         "train 的每一步不是普通的梯度下降（-lr * 梯度，且 lr 不变）：更新方式和 train_step 一样吗？"),
             key="diverges")
    if len(set(losses)) == 1:
        fail("The loss stayed at {first} for all {epochs} epochs (w = {w}, b = {b}): the parameters never moved. "
             "Does each step apply -lr * grad, with the gradients backward just computed, in place to the w and b that "
             "train returns?",
             "损失在全部 {epochs} 个 epoch 中一直是 {first}（w = {w}，b = {b}）：参数根本没动。"
             "每一步是否用 backward 刚算出的梯度，把 -lr * grad 原地作用在 train 返回的 w 和 b 上？", key="parameters-never-move", **values)
    if abs(w - best_w) > W_TOL or abs(b - best_b) > B_TOL:
        far = Text("After {epochs} epochs w = {w}, b = {b}, but the best fit is w = {best_w}, b = {best_b} (the loss "
                   "went {first} -> {last}): ",
                   "{epochs} 个 epoch 之后 w = {w}，b = {b}，但最佳拟合是 w = {best_w}，b = {best_b}"
                   "（损失 {first} -> {last}）：", best_w=fmt(best_w), best_b=fmt(best_b), **values)
        if lr is not None and lr > 0 and not _converges(x, y, lr):
            fail(far + Text("your steps are gradient-descent steps with a learning rate of {lr:.3g}, too small to get "
                            "there in {epochs} epochs.",
                            "你的每一步都是学习率为 {lr:.3g} 的梯度下降，学习率太小，{epochs} 个 epoch 内到不了。",
                            lr=lr, epochs=EPOCHS), key="lr-too-small")
        fail(far + Text("the steps of train are not plain gradient-descent steps (-lr * gradient with one lr): is the "
                        "update right?",
                        "train 的每一步不是普通的梯度下降（-lr * 梯度，且 lr 不变）：更新写对了吗？"), key="not-converged")
