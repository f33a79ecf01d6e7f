"""Hidden checks of ex27: dtype hygiene between NumPy data, a float32 model and the losses' targets.

The converters get what real data look like: float64 NumPy features (NumPy's default), integer arrays,
lists, class labels read as whole floats (2.0), int32 labels, bool 0/1 labels. train_step is run by a
probe twice in a row on a float32 model and a torch SGD the probe makes, with NumPy float64 features;
the judge takes the same steps itself and compares the losses and the weights (a second call that
still holds the first call's gradients is named), and the probe reports the dtypes the model's forward ran in
(a model converted to float64 and back computes nearly the same numbers) and of its parameters after each call.
Then the same two calls run with a GPU pretended, the model and the data on the CPU: nothing may go to the GPU;
the converters too.
"""

import numpy as np
import torch
from torch import nn

from grader.checking import (Text, check, expect_tensor, fail, fail_raised, is_number, learner_call, matches,
                             pretend_cuda, probe, verbatim)
from grader.devices import expect_cpu_only, fail_if_gpu, imported_anew

N, D, C, LR = 12, 4, 3, 0.1

WHY = {
    "inputs": Text("NumPy makes float64 (torch's Double) by default, and a float32 model refuses it: `mat1 and mat2 "
                   "must have the same dtype` / `Found dtype Double but expected Float`. Convert the data to "
                   "float32.", "NumPy 默认生成 float64（torch 中的 Double），而 float32 模型不接受它：`mat1 and mat2 must "
                   "have the same dtype` / `Found dtype Double but expected Float`。请把数据转换为 float32。"),
    "classes": Text("nn.CrossEntropyLoss takes class indices as int64 (torch.long): a float target is read as class "
                    "probabilities, and int32 is refused.", "nn.CrossEntropyLoss 要求类别索引为 int64（torch.long）："
                    "浮点目标会被当作类别概率，int32 会被拒绝。"),
    "binary": Text("nn.BCEWithLogitsLoss takes float targets (probabilities between 0 and 1), of the logits' shape.",
                   "nn.BCEWithLogitsLoss 要求浮点目标（0 到 1 之间的概率），形状与 logits 相同。"),
}


def expect_converted(value, what, dtype, shape, want, why):
    t = expect_tensor(value, what)
    if t.dtype != dtype:
        fail("{what} has dtype {got}, expected {want}. {why}", "{what} 的 dtype 为 {got}，应为 {want}。{why}", what=what,
             got=verbatim(str(t.dtype)), want=verbatim(str(dtype)), why=why, key=f"wrong-dtype-{str(dtype)[6:]}")
    if list(t.shape) != list(shape):
        fail("{what} has shape {got}, expected {want}. {why}", "{what} 的形状为 {got}，应为 {want}。{why}", what=what,
             got=list(t.shape), want=list(shape), why=why, key="wrong-shape")
    if not torch.equal(t, want) and not matches(t, want):
        fail("{what} does not hold the values it was given.", "{what} 的值与传入的不同。", what=what, key="wrong-values")


@check("as_inputs gives float32 features from float64 arrays, integer arrays and lists", points=2,
       zh="as_inputs 把 float64 数组、整数数组和列表转换为 float32 特征")
def test_inputs(submission, rng):
    x = torch.randn(N, D, generator=rng, dtype=torch.float64)
    ints = torch.randint(-5, 5, (N, D), generator=rng)
    for given, what, want in ((x.numpy(), "as_inputs(float64 array)", x.float()),
                              (ints.numpy(), "as_inputs(int64 array)", ints.float()),
                              (x.tolist(), "as_inputs(list of lists)", x.float())):
        expect_converted(submission.as_inputs(given), f"`{what}`", torch.float32, [N, D], want, WHY["inputs"])
    expect_cpu_only(submission, [("as_inputs", [x.numpy()])])


@check("as_class_targets gives int64 class indices [N], from whole floats and int32 too", points=2,
       zh="as_class_targets 给出 int64 类别索引 [N]，输入为整数值浮点数或 int32 时也一样")
def test_classes(submission, rng):
    labels = torch.randint(0, C, (N,), generator=rng)
    for given, what in ((labels.double().numpy(), "as_class_targets(float64 array such as [2.0, 0.0, ...])"),
                        (labels.int().numpy(), "as_class_targets(int32 array)"),
                        (labels.tolist(), "as_class_targets(list of ints)")):
        expect_converted(submission.as_class_targets(given), f"`{what}`", torch.int64, [N], labels, WHY["classes"])
    expect_cpu_only(submission, [("as_class_targets", [labels.double().numpy()])])


@check("as_binary_targets gives float32 targets [N, 1], from ints, floats and bools", points=2,
       zh="as_binary_targets 给出 float32 目标 [N, 1]，输入为整数、浮点数或布尔值时都一样")
def test_binary(submission, rng):
    labels = torch.randint(0, 2, (N,), generator=rng)
    for given, what in ((labels.numpy(), "as_binary_targets(int64 array [N])"),
                        (labels.bool().numpy(), "as_binary_targets(bool array [N])"),
                        (labels.double().tolist(), "as_binary_targets(list of floats)")):
        expect_converted(submission.as_binary_targets(given), f"`{what}`", torch.float32, [N, 1],
                         labels.float().reshape(N, 1), WHY["binary"])
    expect_cpu_only(submission, [("as_binary_targets", [labels.numpy()])])


# -- train_step -----------------------------------------------------------------------------

def make_model(task):
    return nn.Linear(D, C if task == "multiclass" else 1)


def _steps(module, task, state, batches):
    """train_step once per batch on one model and optimizer, as a training loop calls it: per call, the loss, the
    dtypes the model's forward ran in (its input's and its parameters') and its parameters afterwards."""
    model = make_model(task)
    model.load_state_dict(state)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    calls, forwards = [], []
    hook = model.register_forward_pre_hook(lambda mod, args: forwards.append(sorted(
        {str(t.dtype) for t in [*args, *mod.parameters()] if isinstance(t, torch.Tensor)})))
    try:
        for features, labels in batches:
            forwards.clear()
            loss, error = learner_call(module, module.train_step, model, optimizer, features, labels, task)
            if error:
                return {"error": error, "calls": calls}
            calls.append({"loss": loss if is_number(loss, float) else type(loss).__name__,
                          "forward": sorted({d for f in forwards for d in f}),
                          "dtypes": sorted({str(p.dtype) for p in model.parameters()}),
                          "state": {k: v.detach().float().clone() for k, v in model.state_dict().items()}})
    finally:
        hook.remove()
    return {"error": None, "calls": calls}


@probe
def step_probe(module, task, state, batches):
    """The two calls on the CPU, then again with a GPU pretended (the model and the data on the CPU): what named
    CUDA there."""
    out = _steps(module, task, state, batches)
    with pretend_cuda(module) as seen:
        anew = imported_anew(module, seen) or module  # the file imported with the GPU there: a device chosen then too
        at_import = len(seen.calls)
        out["gpu"] = _steps(anew, task, state, batches)["error"]
    out["cuda"] = seen.calls[at_import:]
    return out


def loss_and_grads(task, state, features, labels):
    """The loss of the model holding `state` on the float32 features, and its gradient per parameter."""
    model = make_model(task)
    model.load_state_dict(state)
    x = torch.as_tensor(features, dtype=torch.float32)
    if task == "multiclass":
        loss = nn.functional.cross_entropy(model(x), labels)
    else:
        loss = nn.functional.binary_cross_entropy_with_logits(model(x), labels.float().reshape(N, 1))
    names, params = zip(*model.named_parameters())
    return loss.item(), dict(zip(names, torch.autograd.grad(loss, params)))


def same_state(got, want) -> bool:
    return all(matches(got[k], v) for k, v in want.items())


def judge_step(submission, rng, task):
    """train_step twice on one model and optimizer (two batches of float64 NumPy features): each call must be
    one SGD step on the loss of its own batch."""
    state = {k: torch.randn(v.shape, generator=rng) for k, v in make_model(task).state_dict().items()}
    batches, targets = [], []
    for _ in range(2):
        features = 3 * np.asarray(torch.randn(N, D, generator=rng, dtype=torch.float64))
        labels = torch.randint(0, C if task == "multiclass" else 2, (N,), generator=rng)
        batches.append((features, labels.double().numpy() if task == "multiclass" else labels.bool().numpy()))
        targets.append(labels)
    first = f"`train_step(model, optimizer, features, labels, task={task!r})`"
    names = (first, Text("the second " + first + " on the same model and optimizer",
                         "在同一模型和优化器上第二次调用 " + first))
    out = submission.probe(step_probe, task, state, batches, what=first)
    if out["error"]:
        msg = out["error"]["message"] or ""
        lesson = None
        if "Double" in msg or "same dtype" in msg:
            lesson = WHY["inputs"]
        elif task == "multiclass" and any(w in msg for w in ("Long", "Int", "probabilities", "target")):
            lesson = WHY["classes"]
        elif task == "binary" and any(w in msg for w in ("size", "Long", "cast", "target")):
            lesson = WHY["binary"]
        fail_raised(out["error"], names[len(out["calls"])], lesson)
    previous = None  # the gradients of the step before
    for got, call, (features, _), labels in zip(out["calls"], names, batches, targets):
        if got["forward"] != ["torch.float32"]:
            fail("during {call} the model's forward ran in {dtypes}: the model was converted to fit the data (even if "
                 "it was converted back afterwards). Convert the data to float32 instead, and leave the model as it "
                 "is: model.double() doubles the memory and slows every step.",
                 "{call} 期间模型的前向传播是在 {dtypes} 下运行的：为了迁就数据而转换了模型（即使之后又转换了回来）。"
                 "请改为把数据转换为 float32，不要动模型：model.double() 会让内存翻倍、拖慢每一步。", call=call,
                 dtypes=verbatim(", ".join(got["forward"]) or "nothing"), key="model-converted")
        if got["dtypes"] != ["torch.float32"]:
            fail("after {call} the model's parameters are {dtypes}: the model was converted to fit the data. Convert "
                 "the data to float32 instead: model.double() doubles the memory and slows every step, and the next "
                 "float32 input fails.",
                 "{call} 之后模型参数的 dtype 为 {dtypes}：为了迁就数据而转换了模型。请改为把数据转换为 float32：model.double() "
                 "会让内存翻倍、拖慢每一步，而且下一个 float32 输入就会出错。", call=call,
                 dtypes=verbatim(", ".join(got["dtypes"])), key="model-converted")
        loss, grads = loss_and_grads(task, state, features, labels)
        if not is_number(got["loss"], float):
            fail("{call} should return the loss as a Python float (loss.item()), got a {got}.",
                 "{call} 应以 Python float 返回损失（loss.item()），实际得到一个 {got}。", call=call,
                 got=verbatim(f"`{got['loss']}`"), key="not-a-float")
        if not matches(got["loss"], loss):
            fail("{call} returned the loss {got:.5g}, expected {want:.5g} ({loss} on the float32 features).",
                 "{call} 返回的损失为 {got:.5g}，应为 {want:.5g}（在 float32 特征上的 {loss}）。", call=call,
                 got=got["loss"], want=loss,
                 loss=verbatim("CrossEntropyLoss" if task == "multiclass" else "BCEWithLogitsLoss"), key="wrong-loss")
        stepped = {k: state[k] - LR * grads[k] for k in state}
        if previous is not None and not same_state(got["state"], stepped) \
                and same_state(got["state"], {k: stepped[k] - LR * previous[k] for k in state}):
            fail("after {call}, the weights moved by the gradients of both batches: backward() adds to the .grad the "
                 "first call left. Clear the gradients in every step (optimizer.zero_grad() before loss.backward()).",
                 "{call} 之后权重按两个批次的梯度之和移动了：backward() 会累加到第一次调用留下的 .grad 上。请在每一步清空梯度"
                 "（在 loss.backward() 之前调用 optimizer.zero_grad()）。", call=call, key="grad-accumulated")
        for k, v in stepped.items():
            if not matches(got["state"][k], v):
                fail("after {call} the model's {k} differs from one SGD step (lr={lr}) on that loss.",
                     "{call} 之后模型的 {k} 与在该损失上做一步 SGD（lr={lr}）的结果不同。", call=call, k=verbatim(k), lr=LR,
                     key="wrong-step")
        state, previous = stepped, grads
    fail_if_gpu(out["cuda"], first)  # the CPU path is right: now the path a GPU takes
    if out["gpu"] is not None:
        fail_raised(out["gpu"], Text("with a GPU present, {call}", "有 GPU 时，{call}", call=first))


@check("train_step takes one step of a float32 classifier on NumPy data with CrossEntropyLoss", points=2,
       zh="train_step 用 CrossEntropyLoss 在 NumPy 数据上对 float32 分类器做一步训练")
def test_step_multiclass(submission, rng):
    judge_step(submission, rng, "multiclass")


@check("train_step takes one step of a float32 binary model on NumPy data with BCEWithLogitsLoss", points=2,
       zh="train_step 用 BCEWithLogitsLoss 在 NumPy 数据上对 float32 二分类模型做一步训练")
def test_step_binary(submission, rng):
    judge_step(submission, rng, "binary")
