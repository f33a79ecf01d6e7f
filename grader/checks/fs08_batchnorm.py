"""Hidden checks of fs08: BatchNorm1d from scratch, step by step against nn.BatchNorm1d.

Probes build the learner's BatchNorm1d in the sandbox, turn it to float64 (`.double()`), load the judge's weight and
bias, and run a sequence of batches (train, train, train, then eval), recording after each: the output, the
gradients of sum(out * g) for x, weight and bias (train steps), the running statistics (and whether they hold a
graph), the count of batches, and the names of the torch functions forward called (F.batch_norm is forbidden). The
judge replays the same sequence with nn.BatchNorm1d in float64, and names a known mistake only when the wrong value
equals that mistake's formula, computed here.

Every drawn batch has one channel with a tiny spread (std 1e-3, below sqrt(eps)): there the place of eps (inside or
outside the square root, or missing) changes the output by far. Sizes are drawn so that N, C and L differ, and the
size-1 edges are there: N = 1 with L > 1 (allowed in training), L = 1, and N = 1 in eval.

Kata variants: `variant("average")` is how the running statistics average the batches: an exponential moving
average with `momentum` (the exercise as written), or the cumulative average of momentum=None.
"""

import torch
from torch import nn
import torch.nn.functional as F

from grader.checking import (Text, check, describe, expect_close, expect_tensor, fail, fail_raised, learner_call,
                             matches, probe, recording_calls, relation, relation_key, relation_text, variant, verbatim, where)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.devices import expect_cpu_module

STATS = ("running_mean", "running_var")


# -- probes (run in the sandbox) ---------------------------------------------------------------

def _tensor_state(value):
    """A buffer as plain data: its value, and whether it requires grad or holds a graph."""
    if not isinstance(value, torch.Tensor):
        return None
    return {"value": value.detach().clone(), "requires_grad": bool(value.requires_grad),
            "graph": value.grad_fn is not None}


@probe
def bn_run(module, channels, eps, momentum, weight, bias, steps):
    """BatchNorm1d(channels, eps=eps, momentum=momentum) in float64 with the judge's weight and bias, run over
    `steps` ([train, x, g] each): per step the output, the gradients of sum(out * g) (train steps), the running
    statistics and the count after it; and the torch functions the forward passes called."""
    called = set()

    m = module.BatchNorm1d(channels, eps=eps, momentum=momentum).double()
    with torch.no_grad():
        m.weight.copy_(weight)
        m.bias.copy_(bias)
    records = []
    for train, x, g in steps:
        m.train(train)
        leaf = x.clone().requires_grad_(True)
        with recording_calls(called):
            out, error = learner_call(module, m, leaf)
        if error and error["not_started"]:
            raise NotImplementedError
        # an error: the judge says which step raised, and the later steps still run
        record = {"error": error} if error else {"out": out.detach() if isinstance(out, torch.Tensor) else out}
        if train and isinstance(out, torch.Tensor) and out.shape == g.shape and out.requires_grad:
            (out * g).sum().backward()
            record["grads"] = [leaf.grad, m.weight.grad, m.bias.grad]
            m.weight.grad = m.bias.grad = None
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            record[name] = _tensor_state(getattr(m, name, None))
        records.append(record)
    return {"records": records, "calls": sorted(called)}


@probe
def bn_structure(module, channels):
    """BatchNorm1d(channels) as nn.Module sees it: its parameters, its buffers, and what each attribute is."""
    m = module.BatchNorm1d(channels)
    if not isinstance(m, nn.Module):
        return {"module": type(m).__name__}
    kinds = {}
    for name in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
        value = getattr(m, name, None)
        kinds[name] = "missing" if value is None else "Parameter" if isinstance(value, nn.Parameter) else \
            "tensor" if isinstance(value, torch.Tensor) else type(value).__name__
    return {"module": "nn.Module", "kinds": kinds,
            "params": {n: p.detach().clone() for n, p in m.named_parameters()},
            "buffers": {n: b.detach().clone() for n, b in m.named_buffers()}}


@probe
def bn_single(module, channels, x):
    """A fresh BatchNorm1d(channels) in float64: x (one value per channel) in eval mode, then in training."""
    m = module.BatchNorm1d(channels).double()
    m.eval()
    evaluated = m(x)
    m.train()
    try:
        out = m(x)
    except Exception as exc:  # what the learner's forward raised is the answer here
        return {"eval": evaluated.detach() if isinstance(evaluated, torch.Tensor) else evaluated,
                "raised": type(exc).__name__, "message": str(exc)[:200]}
    return {"eval": evaluated.detach() if isinstance(evaluated, torch.Tensor) else evaluated, "raised": None,
            "out": out.detach() if isinstance(out, torch.Tensor) else out,
            "running_var": _tensor_state(getattr(m, "running_var", None))}


# -- draws and references (the judge) -------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high]."""
    return int(torch.randint(low, high + 1, (), generator=rng))


def uniform(rng, low: float, high: float) -> float:
    return float(low + (high - low) * torch.rand((), generator=rng, dtype=torch.float64))


def cumulative() -> bool:
    """Whether this draw averages the running statistics cumulatively (momentum=None)."""
    return variant("average")["name"] == "cumulative"


def draw_batch(rng, n: int, c: int, length: int | None = None) -> torch.Tensor:
    """x [n, c] or [n, c, length] in float64: each channel with its own mean and spread, one of them tiny."""
    shape = (n, c) if length is None else (n, c, length)
    view = [1, c] + [1] * (len(shape) - 2)
    mean = 6 * torch.rand(c, generator=rng, dtype=torch.float64) - 3
    std = torch.exp(2 * torch.rand(c, generator=rng, dtype=torch.float64) - 1)
    std[randint(rng, 0, c - 1)] = 1e-3  # below sqrt(eps): where eps goes decides the output
    return mean.reshape(view) + std.reshape(view) * torch.randn(shape, generator=rng, dtype=torch.float64)


def draw_setup(rng) -> dict:
    c = randint(rng, 3, 5)
    return {"channels": c, "eps": 10 ** uniform(rng, -5, -3.5),
            "momentum": None if cumulative() else uniform(rng, 0.05, 0.4),
            "weight": 1 + 0.5 * torch.randn(c, generator=rng, dtype=torch.float64),
            "bias": torch.randn(c, generator=rng, dtype=torch.float64)}


def draw_steps(rng, c: int, seq: bool) -> list:
    """[train, x, g] per step: three training batches (N = 2 among those of [N, C]; N = 1 with L > 1, and L = 1, among
    those of [N, C, L]), then evaluation (N = 1 among those of [N, C])."""
    n = [randint(rng, 8, 10) for _ in range(3)]
    length = randint(rng, 6, 7)
    shapes = [(n[0], length), (1, length), (n[1], 1), (n[2], length)] if seq else \
        [(n[0], None), (2, None), (n[2], None), (randint(rng, 8, 10), None), (1, None)]  # N = 2: the least allowed
    steps = []
    for i, (rows, positions) in enumerate(shapes):
        x = draw_batch(rng, rows, c, positions)
        steps.append([i < 3, x, torch.randn(x.shape, generator=rng, dtype=torch.float64)])
    return steps


def reference(setup: dict, steps: list) -> list[dict]:
    """nn.BatchNorm1d over the same steps, in float64: per step the output, gradients and running statistics."""
    bn = nn.BatchNorm1d(setup["channels"], eps=setup["eps"], momentum=setup["momentum"], dtype=torch.float64)
    with torch.no_grad():
        bn.weight.copy_(setup["weight"])
        bn.bias.copy_(setup["bias"])
    records = []
    for train, x, g in steps:
        bn.train(train)
        leaf = x.clone().requires_grad_(True)
        out = bn(leaf)
        record = {"out": out.detach(), "running_mean": bn.running_mean.clone(), "running_var": bn.running_var.clone(),
                  "num_batches_tracked": int(bn.num_batches_tracked)}
        if train:
            record["grads"] = list(torch.autograd.grad((out * g).sum(), [leaf, bn.weight, bn.bias]))
        records.append(record)
    return records


def axes(x: torch.Tensor) -> list[int]:
    return [0] if x.dim() == 2 else [0, 2]


def line_up(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return v.reshape([1, -1] + [1] * (x.dim() - 2))


def normalised(x, weight, bias, eps, *, dims=None, correction=0, eps_at="inside", affine=True, detach=False):
    """The batch norm of x with batch statistics over `dims`, written here: the right formula, or a known slip."""
    dims = axes(x) if dims is None else dims
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, correction=correction, keepdim=True)
    if detach:
        mean, var = mean.detach(), var.detach()
    scale = {"inside": torch.sqrt(var + eps), "outside": torch.sqrt(var) + eps, "missing": torch.sqrt(var)}[eps_at]
    x_hat = (x - mean) / scale
    return x_hat * line_up(weight, x) + line_up(bias, x) if affine else x_hat


def expect_near(got, want, what, *, rtol=1e-6, atol=1e-8, theirs=("nn.BatchNorm1d", "nn.BatchNorm1d")):
    """Fail unless `got` has `want`'s shape and values: the first wrong entry named after the thing, and how the whole
    relates to the right value where it does (sign, factor, zeros)."""
    got = expect_tensor(got, what, shape=list(want.shape), floating=True)
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
    if not bad.any():
        return got
    idx = tuple(int(i) for i in bad.nonzero()[0])
    rel = relation(got, want)
    how = Text("; the whole {relation}", "；整体上{relation}", relation=relation_text(rel)) if rel else ""
    fail("{what} is wrong at {idx}: {got:.6g} where {theirs} gives {want:.6g} ({bad} of {total} entries differ{how}).",
         "{what}在 {idx} 处不对：{theirs} 给出 {want:.6g}，你的是 {got:.6g}（{total} 个元素中有 {bad} 个不同{how}）。",
         what=what, idx=list(idx), got=float(got[idx]), want=float(want[idx]), bad=int(bad.sum()), total=got.numel(),
         how=how, theirs=Text(*theirs), key=relation_key(rel) if rel else "wrong-values")


def run(submission, rng, seq: bool):
    """The learner's run and the reference's over one drawn sequence ([N, C] batches, or [N, C, L] ones), made once
    per grading."""
    def make():
        setup = draw_setup(rng)
        steps = draw_steps(rng, setup["channels"], seq)
        result = submission.probe(bn_run, setup["channels"], setup["eps"], setup["momentum"], setup["weight"],
                                  setup["bias"], steps, what=Text("your `BatchNorm1d` over {n} batches",
                                                                  "你的 `BatchNorm1d` 处理 {n} 个 batch", n=len(steps)))
        return setup, steps, result, reference(setup, steps)
    return submission.once("seq" if seq else "flat", make)


def by_hand_only(result: dict) -> None:
    """A value computed by F.batch_norm (or nn.BatchNorm1d, or another built-in normalisation) is not earned."""
    used = forbidden_calls("batch_norm", result["calls"])
    if used:
        fail("Your BatchNorm1d calls torch's own {names}: the values are torch's, not yours. Compute the mean and the "
             "variance per channel yourself, without nn.BatchNorm1d, F.batch_norm or another built-in normalisation.",
             "你的 BatchNorm1d 调用了 torch 自带的 {names}：这些值是 torch 算的，不是你算的。请自己按通道计算均值和方差，"
             "不要用 nn.BatchNorm1d、`F.batch_norm` 或其他内置的归一化函数。",
             names=verbatim(", ".join(f"`{n}`" for n in used)), key="builtin-batch-norm")


def output(record: dict, x, train: bool, key: str | None = None) -> torch.Tensor:
    """The output a step recorded, as a tensor of x's shape; fail with the learner's error where the step raised."""
    what = call_text(x, train)
    if "error" in record:
        err = record["error"]
        fail("{what}: your BatchNorm1d raised {type}: {message}{where}.", "{what}：你的 BatchNorm1d 抛出了 {type}：{message}{where}。",
             what=what, type=verbatim(err["type"]), message=verbatim(err["message"].splitlines()[0][:200] if err["message"]
                                                                       else ""),
             where=where(err), key=key or f"raised-{err['type']}")
    return expect_tensor(record["out"], what, shape=list(x.shape), floating=True)


def shape_of(x) -> str:
    return str(list(x.shape))


def call_text(x, train: bool) -> Text:
    mode = ("train", "训练") if train else ("eval", "评估")
    return Text("the output on x {shape} in {mode} mode", "{mode}模式下 x {shape} 的输出", shape=shape_of(x),
                mode=Text(*mode))


# -- structure --------------------------------------------------------------------------------------

@check("BatchNorm1d has weight and bias parameters and three buffers", points=1,
       zh="BatchNorm1d 有参数 weight、bias 和三个 buffer")
def test_structure(submission, rng):
    c = randint(rng, 3, 6)
    info = submission.probe(bn_structure, c, what=f"`BatchNorm1d({c})`")
    if info["module"] != "nn.Module":
        fail("BatchNorm1d({c}) is {got}, not an nn.Module: subclass nn.Module and call super().__init__() first.",
             "BatchNorm1d({c}) 是 {got}，不是 nn.Module：请继承 nn.Module，并先调用 super().__init__()。",
             c=c, got=verbatim(info["module"]), key="not-a-module")
    kinds, params, buffers = info["kinds"], info["params"], info["buffers"]
    for name, value in (("weight", torch.ones(c)), ("bias", torch.zeros(c))):
        if kinds[name] != "Parameter" or name not in params:
            fail("BatchNorm1d({c}).{name} is {kind}, not a registered nn.Parameter: an optimizer would never train it. "
                 "Wrap it: self.{name} = nn.Parameter(...).",
                 "BatchNorm1d({c}).{name} 是 {kind}，不是注册过的 nn.Parameter：优化器永远不会训练它。"
                 "请把它包起来：`self.{name} = nn.Parameter(...)`。", c=c, name=name, kind=verbatim(kinds[name]),
                 key="affine-not-parameters")
        expect_close(params[name], value, f"BatchNorm1d({c}).{name}", rtol=0, atol=0)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        if name in params:
            fail("BatchNorm1d({c}).{name} is an nn.Parameter: model.parameters() hands it to the optimizer, which would "
                 "change it by gradient steps. Running statistics are buffers: self.register_buffer(\"{name}\", ...).",
                 "BatchNorm1d({c}).{name} 是 nn.Parameter：model.parameters() 会把它交给优化器，优化器会按梯度改动它。"
                 "滑动统计量应该是 buffer：`self.register_buffer(\"{name}\", ...)`。", c=c, name=name,
                 key="running-stats-as-parameters")
        if name not in buffers:
            fail("BatchNorm1d({c}).{name} is {kind}, not a registered buffer: state_dict(), .to(device) and .double() "
                 "do not see it. Create it with self.register_buffer(\"{name}\", ...).",
                 "BatchNorm1d({c}).{name} 是 {kind}，不是注册过的 buffer：state_dict()、.to(device) 和 .double() "
                 "都看不到它。请用 `self.register_buffer(\"{name}\", ...)` 创建它。", c=c, name=name,
                 kind=verbatim(kinds[name]), key="running-stats-not-buffers")
    expect_close(buffers["running_mean"], torch.zeros(c), f"BatchNorm1d({c}).running_mean", rtol=0, atol=0)
    expect_close(buffers["running_var"], torch.ones(c), f"BatchNorm1d({c}).running_var", rtol=0, atol=0)
    count = expect_tensor(buffers["num_batches_tracked"], f"BatchNorm1d({c}).num_batches_tracked", shape=[],
                          dtype=torch.int64)
    if int(count) != 0:
        fail("BatchNorm1d({c}).num_batches_tracked starts at {got}: no batch has been seen yet, it starts at 0.",
             "BatchNorm1d({c}).num_batches_tracked 的初值是 {got}：还没有见过任何 batch，它应从 0 开始。",
             c=c, got=int(count), key="wrong-init")


# -- training outputs ----------------------------------------------------------------------------

def expect_train_output(record, want, setup, x, before) -> None:
    """The output of one training step against nn.BatchNorm1d's; a wrong one that equals a known slip is named."""
    what = call_text(x, True)
    out = output(record, x, True)
    if matches(out, want, rtol=1e-6, atol=1e-8):
        return
    w, b, eps = setup["weight"], setup["bias"], setup["eps"]
    n = x.numel() // x.shape[1]
    slips = [
        (normalised(x, w, b, eps, correction=1),
         Text("it normalises with the unbiased variance (divided by n - 1 = {m}). Batch norm normalises with the "
              "batch's biased variance, divided by n = {n} (`correction=0`, or `unbiased=False`); only running_var "
              "takes the unbiased one.",
              "它用无偏方差（除以 n - 1 = {m}）做归一化。batch norm 用的是这个 batch 的有偏方差，除以 n = {n}"
              "（`correction=0` 或 `unbiased=False`）；只有 running_var 才用无偏方差。", n=n, m=n - 1),
         "unbiased-variance"),
        (normalised(x, w, b, eps, eps_at="outside"),
         Text("eps is added outside the square root, sqrt(var) + eps. It goes inside: (x - mean) / sqrt(var + eps); "
              "the two differ by far on a channel whose variance is below eps, as one channel here.",
              "eps 加在了平方根外面：sqrt(var) + eps。它应在根号里面：(x - mean) / sqrt(var + eps)；"
              "对方差小于 eps 的通道（这里就有一个），两者相差很大。"), "eps-outside-sqrt"),
        (normalised(x, w, b, eps, eps_at="missing"),
         Text("eps is missing: (x - mean) / sqrt(var) blows up on a channel whose variance is tiny, as one channel here. "
              "Divide by sqrt(var + eps).",
              "少了 eps：对方差极小的通道（这里就有一个），(x - mean) / sqrt(var) 会变得极大。请除以 sqrt(var + eps)。"),
         "eps-missing"),
        (normalised(x, w, b, eps, affine=False),
         Text("weight and bias are not applied: after normalising, multiply by weight and add bias, per channel.",
              "没有用上 weight 和 bias：归一化之后，要按通道乘以 weight 再加上 bias。"), "affine-missing"),
        (F.batch_norm(x, before["running_mean"], before["running_var"], w, b, False, 0.0, eps)
         if before is not None else None,
         Text("in training it normalises with the running statistics: training uses the statistics of the batch "
              "itself (its mean and variance per channel), eval mode the running ones.",
              "训练时它用滑动统计量做归一化：训练模式用这个 batch 自己的统计量（按通道的均值和方差），评估模式才用滑动统计量。"),
         "running-stats-in-training"),
    ]
    wrong_axes = [([1], Text("over the channels of each sample (as LayerNorm does)", "对每个样本的各个通道（LayerNorm 的做法）"))]
    if x.dim() == 3:
        wrong_axes = [([0], Text("over N alone, one mean per channel and position", "只对 N，每个通道、每个位置各一个均值")),
                      ([2], Text("over L alone, one mean per sample and channel (as InstanceNorm does)",
                                 "只对 L，每个样本、每个通道各一个均值（InstanceNorm 的做法）")),
                      ([1], Text("over the channels", "对通道"))]
        mixed = x.reshape(-1, x.shape[1])  # the rows of a reshape without moving the channels last
        mixed_mean, mixed_var = mixed.mean(0), mixed.var(0, correction=0)
        slips.append((((mixed - mixed_mean) / torch.sqrt(mixed_var + eps) * w + b).reshape(x.shape),
                      Text("the statistics were taken from x.reshape(-1, C): on [N, C, L] that mixes the channels, "
                           "since each row of the reshape runs along L. Move the channels last first "
                           "(x.transpose(1, 2).reshape(-1, C)), or reduce over the axes 0 and 2.",
                           "统计量是从 x.reshape(-1, C) 算的：对 [N, C, L] 这会把通道混在一起，因为 reshape 后的每一行是沿 L "
                           "排列的。请先把通道移到最后（`x.transpose(1, 2).reshape(-1, C)`），或者在第 0 和第 2 维上归约。"),
                      "reshape-mixes-channels"))
    for dims, over in wrong_axes:
        slips.append((normalised(x, w, b, eps, dims=dims),
                      Text("the statistics are taken {where}. Batch norm takes one mean and one variance per channel, "
                           "over {axes}.", "统计量是{where}算的。batch norm 每个通道只有一个均值和一个方差，在 {axes} 上计算。",
                           where=over, axes=verbatim("N" if x.dim() == 2 else "N, L")), "wrong-axes"))
    for slip, why, key in slips:
        if slip is not None and matches(out, slip, rtol=1e-6, atol=1e-8):
            fail("{what} is wrong: {why}", "{what}不对：{why}", what=what, why=why, key=key)
    expect_near(out, want, what)


def previous_stats(result, i):
    """The learner's running statistics before step i (None when they are missing)."""
    if i == 0:
        return None
    before = result["records"][i - 1]
    if before["running_mean"] is None or before["running_var"] is None:
        return None
    return {name: before[name]["value"].double() for name in STATS}


def expect_train_outputs(submission, rng, seq: bool) -> None:
    setup, steps, result, ref = run(submission, rng, seq)
    by_hand_only(result)
    first = {"running_mean": torch.zeros(setup["channels"], dtype=torch.float64),
             "running_var": torch.ones(setup["channels"], dtype=torch.float64)}
    for i, ((train, x, _), record, want) in enumerate(zip(steps, result["records"], ref)):
        if train:
            expect_train_output(record, want["out"], setup, x, first if i == 0 else previous_stats(result, i))


@check("in training, the output matches nn.BatchNorm1d's on [N, C] batches", points=2,
       zh="训练模式下，[N, C] 的输出与 nn.BatchNorm1d 一致")
def test_train_values(submission, rng):
    expect_train_outputs(submission, rng, seq=False)
    c = randint(rng, 3, 6)
    expect_cpu_module(submission, "BatchNorm1d", [c], [torch.randn(4, c, generator=rng)])  # a GPU changes nothing


@check("in training, the output matches nn.BatchNorm1d's on [N, C, L] batches (N = 1 and L = 1 among them)", points=1,
       zh="训练模式下，[N, C, L] 的输出与 nn.BatchNorm1d 一致（包括 N = 1 和 L = 1）", depends="train_values")
def test_train_3d(submission, rng):
    expect_train_outputs(submission, rng, seq=True)


# -- running statistics -----------------------------------------------------------------------------

def simulate(steps, momentum, *, correction=1, reverse=False, count_n=True, cumulative_offset=0, twice=False):
    """Running mean and variance after each training step, as a known formula (right or a slip) computes them."""
    first = steps[0][1]
    mean, var = torch.zeros(first.shape[1], dtype=torch.float64), torch.ones(first.shape[1], dtype=torch.float64)
    seen, states = 0, []
    for train, x, _ in steps:
        if train:
            seen += 1
            n = x.numel() // x.shape[1] if count_n else x.shape[0]
            batch_var = x.var(axes(x), correction=0) * (n / (n - correction) if n > correction else float("nan"))
            if twice:
                batch_var = batch_var * n / (n - 1)
            factor = 1.0 / (seen + cumulative_offset) if momentum is None else momentum
            if reverse:
                factor = 1 - factor
            mean = (1 - factor) * mean + factor * x.mean(axes(x))
            var = (1 - factor) * var + factor * batch_var
        states.append((mean, var))
    return states


def running_slips(setup, steps) -> list:
    """(name of the stats, their values per step, why, key) for the known slips of the running update."""
    momentum = setup["momentum"]
    slips = [(simulate(steps, momentum, correction=0),
              Text("running_var is updated with the biased variance of the batch (divided by n). nn.BatchNorm1d keeps "
                   "an unbiased estimate: the batch variance times n / (n - 1).",
                   "running_var 用的是 batch 的有偏方差（除以 n）来更新。nn.BatchNorm1d 保存的是无偏估计："
                   "batch 方差乘以 n / (n - 1)。"), "running-var-biased"),
             (simulate(steps, momentum, twice=True),
              Text("running_var takes the batch variance times n / (n - 1) twice: the variance it starts from is already "
                   "the unbiased one (x.var() divides by n - 1 by default). Multiply the biased variance by n / (n - 1) "
                   "once.",
                   "running_var 把 batch 方差乘了两次 n / (n - 1)：它用的方差本来就是无偏的（`x.var()` 默认除以 n - 1）。"
                   "有偏方差只需乘一次 n / (n - 1)。"), "running-var-corrected-twice")]
    if steps[0][1].dim() == 3:
        slips.append((simulate(steps, momentum, count_n=False),
                      Text("running_var's unbiased correction counts N samples only: each channel has N * L values in a "
                           "batch [N, C, L], so the factor is n / (n - 1) with n = N * L.",
                           "running_var 的无偏修正只数了 N 个样本：在 [N, C, L] 的 batch 中每个通道有 N * L 个值，"
                           "所以因子是 n / (n - 1)，n = N * L。"), "running-var-count"))
    if momentum is None:
        slips += [(simulate(steps, None, cumulative_offset=1),
                   Text("the cumulative average divides by one batch too many: count the batch in "
                        "num_batches_tracked first, then running += (batch - running) / num_batches_tracked (the first "
                        "batch's statistics replace the initial ones).",
                        "累积平均多除了一个 batch：先把这个 batch 计入 num_batches_tracked，再 running += (batch - running) "
                        "/ num_batches_tracked（第一个 batch 的统计量会完全取代初始值）。"), "cumulative-count")]
    else:
        slips.append((simulate(steps, momentum, reverse=True),
                      Text("momentum weighs the old value: running = momentum * running + (1 - momentum) * batch is "
                           "Keras's convention. In PyTorch momentum is the weight of the new batch: running = "
                           "(1 - momentum) * running + momentum * batch.",
                           "momentum 成了旧值的权重：running = momentum * running + (1 - momentum) * batch 是 Keras 的约定。"
                           "在 PyTorch 中 momentum 是新 batch 的权重：running = (1 - momentum) * running + momentum * batch。"),
                      "momentum-reversed"))
    return slips


def expect_running(setup, steps, result, ref) -> None:
    records = result["records"]
    slips = running_slips(setup, steps)
    for i, ((train, x, _), record, want) in enumerate(zip(steps, records, ref)):
        if not train:
            continue
        step = Text("after training batch {i} (x {shape})", "在第 {i} 个训练 batch（x {shape}）之后", i=i + 1,
                    shape=shape_of(x))
        if "error" in record:  # a batch that raised updated nothing: its error, not "not updated", is the lesson
            fail_raised(record["error"], Text("the forward on x {shape} in training", "训练模式下 x {shape} 上的 "
                                              "forward", shape=shape_of(x)))
        for name in STATS:
            state = record[name]
            if state is None:
                fail("{name} is missing {step}: keep it as a buffer of the module.",
                     "{step}，{name} 不存在：请把它作为模块的 buffer 保存。", name=name, step=step,
                     key="running-stats-not-buffers")
            if state["requires_grad"] or state["graph"]:
                fail("{name} requires grad {step}: it was updated from the batch statistics with their graph, so every "
                     "step chains onto the last one's graph. Update the running statistics under torch.no_grad() (or "
                     "from detached values).",
                     "{step}，{name} 需要梯度：它是用带计算图的 batch 统计量更新的，于是每一步都接在上一步的计算图后面。"
                     "请在 `torch.no_grad()` 下（或用 detach 过的值）更新滑动统计量。", name=name, step=step,
                     key="running-stats-graph")
        got = {name: record[name]["value"].double() for name in STATS}
        if all(matches(got[name], want[name], rtol=1e-5, atol=1e-7) for name in STATS):
            continue
        before = previous_stats(result, i) if i else {"running_mean": torch.zeros_like(want["running_mean"]),
                                                      "running_var": torch.ones_like(want["running_var"])}
        if before is not None and all(torch.equal(got[name], before[name]) for name in STATS):
            fail("running_mean and running_var did not change {step}: in training, every batch updates them.",
                 "{step}，running_mean 和 running_var 没有变化：训练模式下每个 batch 都要更新它们。", step=step,
                 key="running-not-updated")
        for states, why, key in slips:
            if all(matches(got[name], states[i][k], rtol=1e-5, atol=1e-7) for k, name in enumerate(STATS)):
                fail("{step}: {why}", "{step}：{why}", step=step, why=why, key=key)
        for name in STATS:
            expect_near(got[name], want[name], Text("{name} {step}", "{step}的 {name}", name=name, step=step),
                        rtol=1e-5, atol=1e-7)
    for i, ((train, x, _), record, want) in enumerate(zip(steps, records, ref)):
        count = record["num_batches_tracked"]
        value = int(count["value"]) if count is not None and count["value"].numel() == 1 else None
        if value != want["num_batches_tracked"]:
            fail("num_batches_tracked is {got} after {i} batches ({n} of them in training): it counts the batches seen "
                 "in training, one more at each, none in eval.",
                 "处理了 {i} 个 batch（其中 {n} 个在训练模式下）之后，num_batches_tracked 为 {got}："
                 "它数的是训练模式下见过的 batch，每个加一，评估模式下不变。",
                 got=describe(count["value"]) if value is None and count is not None else value, i=i + 1,
                 n=want["num_batches_tracked"], key="batches-not-counted")


@check("running_mean, running_var and num_batches_tracked follow nn.BatchNorm1d's after each training batch", points=2,
       zh="每个训练 batch 之后，running_mean、running_var 和 num_batches_tracked 与 nn.BatchNorm1d 一致")
def test_running_stats(submission, rng):
    for seq in (False, True):
        setup, steps, result, ref = run(submission, rng, seq)
        by_hand_only(result)
        expect_running(setup, steps, result, ref)


# -- eval mode ------------------------------------------------------------------------------------

@check("in eval mode, it normalises with the running statistics and leaves them unchanged", points=1,
       zh="评估模式下，用滑动统计量做归一化，并且不改变它们", depends="train_values")
def test_eval_mode(submission, rng):
    for seq in (False, True):
        setup, steps, result, _ = run(submission, rng, seq)
        by_hand_only(result)
        for i, ((train, x, _), record) in enumerate(zip(steps, result["records"])):
            if train:
                continue
            before = previous_stats(result, i)
            if before is None:
                fail("The running statistics are missing: keep running_mean and running_var as buffers.",
                     "滑动统计量不存在：请把 running_mean 和 running_var 保存为 buffer。", key="running-stats-not-buffers")
            what = call_text(x, False)
            if "error" in record and x.shape[0] == 1 and record["error"]["type"] == "ValueError":
                fail("{what}: your BatchNorm1d raised ValueError on one sample in eval mode. Only training needs more than "
                     "one value per channel (for the batch's variance); eval mode uses the running statistics, so one "
                     "sample is fine: raise only when self.training is True.",
                     "{what}：评估模式下对一个样本，你的 BatchNorm1d 抛出了 ValueError。只有训练才需要每个通道多于一个值"
                     "（用来算 batch 的方差）；评估模式用的是滑动统计量，一个样本完全可以：只在 self.training 为 True 时抛出。",
                     what=what, key="eval-single-refused")
            out = output(record, x, False)
            want = F.batch_norm(x, before["running_mean"], before["running_var"], setup["weight"], setup["bias"],
                                False, 0.0, setup["eps"])
            # running statistics kept in another dtype than x's (plain attributes that .double() left in float32: the
            # buffers check's lesson) are judged at float32's precision: near 0 their rounding decided by the draw
            kept = result["records"][i - 1]["running_mean"]["value"].dtype
            tol = {"rtol": 1e-5, "atol": 1e-6 * float(want.abs().max())} if kept != x.dtype and want.numel() else \
                {"rtol": 1e-6, "atol": 1e-8}
            if not matches(out, want, **tol):
                if x.shape[0] > 1 and matches(out, normalised(x, setup["weight"], setup["bias"], setup["eps"]),
                                              rtol=1e-6, atol=1e-8):
                    fail("{what} uses the batch's own statistics: in eval mode (self.training is False) batch norm "
                         "normalises with running_mean and running_var, so one sample's output does not depend on the "
                         "others in its batch.",
                         "{what}用的是这个 batch 自己的统计量：评估模式下（self.training 为 False），batch norm 用 "
                         "running_mean 和 running_var 归一化，这样一个样本的输出不依赖同一 batch 中的其他样本。",
                         what=what, key="batch-stats-in-eval")
                expect_near(out, want, Text("{what}, with your running statistics", "{what}（用你的滑动统计量）",
                                            what=what), theirs=("F.batch_norm", "`F.batch_norm`"), **tol)
            after = {name: record[name]["value"].double() for name in STATS}
            if not all(torch.equal(after[name], before[name]) for name in STATS):
                fail("The running statistics changed on an eval-mode batch (x {shape}): only training updates them; "
                     "evaluation must leave the model as it was.",
                     "评估模式下的一个 batch（x {shape}）改变了滑动统计量：只有训练才更新它们；评估必须让模型保持原样。",
                     shape=shape_of(x), key="eval-updates-running")


# -- gradients --------------------------------------------------------------------------------------

@check("in training, gradients flow through the batch statistics as nn.BatchNorm1d's do", points=1,
       zh="训练模式下，梯度像 nn.BatchNorm1d 那样流经 batch 统计量", depends="train_values")
def test_gradient(submission, rng):
    for seq in (False, True):
        setup, steps, result, ref = run(submission, rng, seq)
        by_hand_only(result)
        for (train, x, g), record, want in zip(steps, result["records"], ref):
            if not train:
                continue
            if "error" in record:  # the forward raised: the train_values check names it; no graph to judge here
                fail_raised(record["error"], Text("the forward on x {shape} in training", "训练模式下 x {shape} 上的 "
                                                  "forward", shape=shape_of(x)))
            out = record.get("out")
            if not isinstance(out, torch.Tensor) or out.shape != g.shape:
                expect_tensor(out, Text("the output on x {shape} in training", "训练模式下 x {shape} 上的输出",
                                        shape=shape_of(x)), shape=list(g.shape))
            if "grads" not in record:
                fail("The output on x {shape} in training does not require grad: the graph from x to the output was cut "
                     "(.detach(), torch.no_grad() around the whole forward, or .data).",
                     "训练模式下 x {shape} 的输出不需要梯度：从 x 到输出的计算图被切断了（`.detach()`、"
                     "把整个 forward 放在 `torch.no_grad()` 里，或 `.data`）。", shape=shape_of(x), key="graph-cut")
            leaf = x.clone().requires_grad_(True)
            (slip,) = torch.autograd.grad((normalised(leaf, setup["weight"], setup["bias"], setup["eps"], detach=True)
                                           * g).sum(), [leaf])
            for name, got, expected in zip(("x", "weight", "bias"), record["grads"], want["grads"]):
                label = Text("d(sum(out * g))/d {name} on x {shape}", "x {shape} 上的 `d(sum(out * g))/d {name}`",
                             name=name, shape=shape_of(x))
                if got is None:
                    fail("{label} is None: {name} got no gradient. Compute the output from {name} with tensor "
                         "operations that keep the graph.",
                         "{label} 是 None：{name} 没有得到梯度。请用保留计算图的张量运算从 {name} 算出输出。",
                         label=label, name=name, key="graph-cut")
                if name == "x" and matches(got, slip, rtol=1e-6, atol=1e-8) \
                        and not matches(got, expected, rtol=1e-6, atol=1e-8):
                    fail("{label} is what it would be with the mean and variance detached (or computed under "
                         "torch.no_grad()): in training they are functions of x, and the gradient flows through them "
                         "too. Compute them from x with the graph.",
                         "{label} 相当于均值和方差被 detach（或在 `torch.no_grad()` 下计算）时的结果：训练模式下它们是 x 的"
                         "函数，梯度也要流经它们。请在保留计算图的情况下从 x 计算它们。", label=label, key="stats-detached")
                expect_near(got, expected, label)


# -- one value per channel --------------------------------------------------------------------------

@check("training on one value per channel raises ValueError, as nn.BatchNorm1d does; eval mode works", points=1,
       zh="训练模式下每个通道只有一个值时抛出 ValueError（与 nn.BatchNorm1d 相同）；评估模式照常工作", depends="train_values")
def test_single_value(submission, rng):
    c = randint(rng, 3, 5)
    for shape in ((1, c), (1, c, 1)):
        x = draw_batch(rng, shape[0], c, shape[2] if len(shape) == 3 else None)
        result = submission.probe(bn_single, c, x, what=Text("`BatchNorm1d({c})` on x {shape}",
                                                             "x {shape} 上的 `BatchNorm1d({c})`", c=c, shape=list(shape)))
        bn = nn.BatchNorm1d(c, dtype=torch.float64).eval()
        expect_near(result["eval"], bn(x).detach(), call_text(x, False))
        if result["raised"] == "ValueError":
            continue
        if result["raised"] is not None:
            fail("In training on x {shape}, your BatchNorm1d raised {type} ({message}); nn.BatchNorm1d raises "
                 "ValueError there: raise ValueError yourself when a channel has fewer than 2 values.",
                 "训练模式下对 x {shape}，你的 BatchNorm1d 抛出了 {type}（{message}）；nn.BatchNorm1d 在这里抛出 ValueError："
                 "当一个通道的值少于 2 个时，请自己抛出 ValueError。", shape=list(shape),
                 type=verbatim(result["raised"]), message=verbatim(result["message"]), key="single-value-other-error")
        fail("In training on x {shape} (one value per channel), your BatchNorm1d returned {got} instead of raising "
             "ValueError as nn.BatchNorm1d does: the variance of one value is 0 (every output is bias) and the "
             "unbiased running variance divides by n - 1 = 0. Raise ValueError when a channel has fewer than 2 values.",
             "训练模式下对 x {shape}（每个通道只有一个值），你的 BatchNorm1d 返回了{got}，而不是像 nn.BatchNorm1d 那样抛出 "
             "ValueError：一个值的方差是 0（每个输出都等于 bias），而无偏的滑动方差要除以 n - 1 = 0。"
             "当一个通道的值少于 2 个时，请抛出 ValueError。", shape=list(shape), got=describe(result["out"]),
             key="single-value-not-refused")


# -- by hand ---------------------------------------------------------------------------------------

@check("BatchNorm1d computes its statistics by hand (no nn.BatchNorm1d, no F.batch_norm)", points=1,
       zh="BatchNorm1d 自己计算统计量（不用 nn.BatchNorm1d，也不用 F.batch_norm）")
def test_by_hand(submission, rng):
    for seq in (False, True):
        _, steps, result, ref = run(submission, rng, seq)
        by_hand_only(result)
        if not all(matches(record.get("out"), want["out"], rtol=1e-6, atol=1e-8)  # a step that raised has no out
                   for (train, _, _), record, want in zip(steps, result["records"], ref)
                   if train):
            fail("BatchNorm1d's outputs are not right yet, so there is no hand-written batch norm to credit: this point "
                 "comes with outputs that match nn.BatchNorm1d's.",
                 "BatchNorm1d 的输出还不正确，所以还没有可以计分的手写 batch norm：输出与 nn.BatchNorm1d 一致之后才能得到这一分。",
                 key="by-hand-not-right")
