"""Hidden checks of fs12: an LSTM cell from scratch, against nn.LSTMCell with its weights loaded.

Probes build the learner's LSTMCell in the sandbox, report its parameters as built, turn it to float64 and load the
judge's state dict into it (nn.LSTMCell's names: weight_ih, weight_hh, bias_ih, bias_hh), then run it on drawn inputs
under a TorchFunctionMode that records the torch functions called (nn.LSTMCell, nn.LSTM and torch.lstm_cell are
forbidden), with the gradients of sum(h * gh + c * gc) where a check needs them; `lstm` runs the cell over a sequence.
The judge compares with nn.LSTMCell and nn.LSTM holding the same weights, in float64, and names a known slip only
when the wrong value equals it, computed here by the cell's formula with that slip: the gates in another order (every
order is tried), tanh and sigmoid swapped on g, h from the cell state without tanh or from the old cell state, one
bias left out, the state's two tensors swapped, the state not carried along a sequence.

Sizes are drawn so that nothing lines up by chance (input size, hidden size, batch and sequence length differ), and the
edges are there: a batch of 1, an unbatched input [I], zero states (None) and given ones, a sequence of one step.

Kata variants: `variant("layout")` is the layout of the sequence `lstm` gets: time first, [T, B, I] as nn.LSTM's
default (the exercise as written), or batch first, [B, T, I] as nn.LSTM(batch_first=True).
"""

import itertools
import math

import torch
from torch import nn

from grader.checking import (Text, check, error_text, expect_tensor, fail, fail_raised, learner_call, matches, probe,
                             recording_calls, relation, relation_key, relation_text, variant, verbatim)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.devices import expect_cpu_module

NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")

# -- probes (run in the sandbox) ---------------------------------------------------------------


def _recorder(into):

    return recording_calls(into)


def _loaded(module, input_size, hidden_size, weights):
    cell = module.LSTMCell(input_size, hidden_size).double()
    cell.load_state_dict(weights)
    return cell


def _pair(value):
    """(h, c) as plain data, or what came instead."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return [v.detach() if isinstance(v, torch.Tensor) else v for v in value]
    return value.detach() if isinstance(value, torch.Tensor) else value


@probe
def cell_init(module, input_size, hidden_size):
    """LSTMCell(input_size, hidden_size) as built: its parameters' names and values."""
    cell = module.LSTMCell(input_size, hidden_size)
    if not isinstance(cell, nn.Module):
        return {"module": False}
    return {"module": True, "params": {n: p.detach().clone() for n, p in cell.named_parameters()}}


@probe
def cell_run(module, input_size, hidden_size, weights, cases):
    """The cell with `weights` loaded, on each [x, state, gh, gc]: (h, c), and with gh, the gradients of
    sum(h * gh + c * gc) for x, h0, c0 and each parameter; or the error."""
    called = set()
    cell = _loaded(module, input_size, hidden_size, weights)
    params = dict(cell.named_parameters())
    records = []
    for x, state, gh, gc in cases:
        x = x.clone().requires_grad_(gh is not None)
        if state is not None:
            state = tuple(s.clone().requires_grad_(gh is not None) for s in state)
        for p in params.values():
            p.grad = None
        with _recorder(called):
            out, error = learner_call(module, cell, x, state)
        if error and error["not_started"]:
            raise NotImplementedError
        if error:  # the judge explains it, and the other cases still run
            records.append({"error": error})
            continue
        record = {"out": _pair(out)}
        if gh is not None and isinstance(out, (tuple, list)) and len(out) == 2 and all(
                isinstance(t, torch.Tensor) and t.requires_grad for t in out) and out[0].shape == gh.shape:
            ((out[0] * gh).sum() + (out[1] * gc).sum()).backward()
            record["grads"] = {"x": x.grad, "h0": state[0].grad if state else None,
                               "c0": state[1].grad if state else None,
                               **{n: p.grad for n, p in params.items()}}
        records.append(record)
    return {"records": records, "calls": sorted(called)}


@probe
def sequence_run(module, input_size, hidden_size, weights, xs, state):
    """lstm(cell, xs, state) with the loaded cell: the outputs and the final state, or the error."""
    called = set()
    cell = _loaded(module, input_size, hidden_size, weights)
    with _recorder(called):
        result, error = learner_call(module, module.lstm, cell, xs, state)
    if error and error["not_started"]:
        raise NotImplementedError
    if error:  # explained by the judge
        return {"error": error, "calls": sorted(called)}
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        return {"returned": _pair(result), "calls": sorted(called)}
    return {"outputs": _pair(result[0]), "final": _pair(result[1]), "calls": sorted(called)}


# -- draws and references (the judge) -------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high]."""
    return int(torch.randint(low, high + 1, (), generator=rng))


def batch_first() -> bool:
    return variant("layout")["name"] == "batch_first"


def draw_sizes(rng):
    """input size, hidden size: different, and neither a multiple of the other's four gates."""
    input_size = randint(rng, 3, 5)
    return input_size, input_size + randint(rng, 2, 3)


def draw_weights(rng, input_size, hidden_size) -> dict:
    """nn.LSTMCell's state dict, drawn a little wider than its init so that every gate matters."""
    shapes = {"weight_ih": (4 * hidden_size, input_size), "weight_hh": (4 * hidden_size, hidden_size),
              "bias_ih": (4 * hidden_size,), "bias_hh": (4 * hidden_size,)}
    return {n: 0.6 * torch.randn(*s, generator=rng, dtype=torch.float64) for n, s in shapes.items()}


def reference_cell(input_size, hidden_size, weights) -> nn.LSTMCell:
    cell = nn.LSTMCell(input_size, hidden_size, dtype=torch.float64)
    cell.load_state_dict(weights)
    return cell


def formula(x, state, weights, *, order="ifgo", g_act=torch.tanh, h_from="new", biases=("bias_ih", "bias_hh"),
            state_swapped=False):
    """The LSTM cell written here, with a known slip as keywords: (h, c) for x [B, I] and state (h, c) or None."""
    hidden = weights["weight_hh"].shape[1]
    h, c = (torch.zeros(x.shape[0], hidden, dtype=x.dtype),) * 2 if state is None else state
    if state_swapped:
        h, c = c, h
    gates = x @ weights["weight_ih"].t() + h @ weights["weight_hh"].t() + sum(weights[b] for b in biases)
    chunk = dict(zip(order, gates.chunk(4, dim=1)))
    c_new = torch.sigmoid(chunk["f"]) * c + torch.sigmoid(chunk["i"]) * g_act(chunk["g"])
    squashed = {"new": torch.tanh(c_new), "raw": c_new, "old": torch.tanh(c)}[h_from]
    return torch.sigmoid(chunk["o"]) * squashed, c_new


def slips(x, state, weights) -> list:
    """(h, c, why, key) of the known slips of one step."""
    found = []
    for order in ("".join(p) for p in itertools.permutations("ifgo")):
        if order != "ifgo":
            found.append((*formula(x, state, weights, order=order), Text(
                "the gates are taken in the order {order} from the stacked 4 * H rows: PyTorch stacks them as i, f, "
                "g, o (input, forget, cell candidate, output), and weights loaded from nn.LSTMCell follow that order.",
                "从 4 * H 行中取门的顺序是 {order}：PyTorch 按 i、f、g、o（输入门、遗忘门、候选值、输出门）的顺序堆叠，"
                "从 nn.LSTMCell 载入的权重也按这个顺序排列。", order=verbatim(", ".join(order))), "gate-order"))
    found += [
        (*formula(x, state, weights, g_act=torch.sigmoid), Text(
            "the cell candidate g goes through sigmoid: g takes tanh (values in (-1, 1)), only the gates i, f and o "
            "take sigmoid.", "候选值 g 用了 sigmoid：g 应用 tanh（取值在 (-1, 1)），只有门 i、f、o 才用 sigmoid。"),
         "g-sigmoid"),
        (*formula(x, state, weights, h_from="raw"), Text(
            "h is o * c: the new cell state goes through tanh first, h = o * tanh(c).",
            "h 算成了 o * c：新的细胞状态要先经过 tanh，h = o * tanh(c)。"), "h-without-tanh"),
        (*formula(x, state, weights, h_from="old"), Text(
            "h is computed from the old cell state: first c = f * c + i * g, then h = o * tanh(c) with that new c.",
            "h 是用旧的细胞状态算的：先算 c = f * c + i * g，再用这个新的 c 算 h = o * tanh(c)。"), "h-from-old-cell"),
        (*formula(x, state, weights, biases=("bias_ih",)), Text(
            "bias_hh is left out: nn.LSTMCell adds both biases, bias_ih and bias_hh.",
            "漏掉了 bias_hh：nn.LSTMCell 会把两个 bias（bias_ih 和 bias_hh）都加上。"), "one-bias"),
        (*formula(x, state, weights, biases=("bias_hh",)), Text(
            "bias_ih is left out: nn.LSTMCell adds both biases, bias_ih and bias_hh.",
            "漏掉了 bias_ih：nn.LSTMCell 会把两个 bias（bias_ih 和 bias_hh）都加上。"), "one-bias"),
    ]
    if state is not None:
        found.append((*formula(x, state, weights, state_swapped=True), Text(
            "the state is read as (c, h): nn.LSTMCell takes and returns it as (h, c), the hidden state first.",
            "状态被当成了 (c, h)：nn.LSTMCell 接收和返回的顺序是 (h, c)，隐藏状态在前。"), "state-order"))
    return found


def expect_near(got, want, what, *, theirs=("nn.LSTMCell", "nn.LSTMCell"), rtol=1e-7, atol=1e-9):
    """Fail unless `got` has `want`'s values: the first wrong entry, and how the whole relates to the right value."""
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol)
    if not bad.any():
        return
    idx = tuple(int(i) for i in bad.nonzero()[0])
    rel = relation(got, want)
    how = Text("; the whole {relation}", "；整体上{relation}", relation=relation_text(rel)) if rel else ""
    fail("{what} is wrong at {idx}: {got:.6g} where {theirs} gives {want:.6g} ({bad} of {total} entries differ{how}).",
         "{what} 在 {idx} 处不对：{theirs} 给出 {want:.6g}，你的是 {got:.6g}（{total} 个元素中有 {bad} 个不同{how}）。",
         what=what, idx=list(idx), got=float(got[idx]), want=float(want[idx]), bad=int(bad.sum()), total=got.numel(),
         how=how, theirs=Text(*theirs), key=relation_key(rel) if rel else "wrong-values")


def no_builtin(calls: list[str]) -> None:
    used = forbidden_calls("lstm_cell", calls)
    if used:
        fail("Your code calls torch's own {names}: the values are torch's, not yours. Compute the four gates from the "
             "weights yourself.",
             "你的代码调用了 torch 自带的 {names}：这些值是 torch 算的，不是你算的。请自己用权重算出四个门。",
             names=verbatim(", ".join(f"`{n}`" for n in used)), key="builtin-lstm")


def fail_cell_error(what, err: dict):
    """Fail with the learner's error, and the parameters' names where nn.LSTMCell's state dict did not load."""
    if "state_dict" in err["message"] or "Missing key" in err["message"] or "Unexpected key" in err["message"]:
        fail("{what}: loading nn.LSTMCell's weights raised {error}. Name the parameters as nn.LSTMCell does "
             "(weight_ih [4H, I], weight_hh [4H, H], bias_ih [4H], bias_hh [4H]), so that its state dict loads into "
             "yours.",
             "{what}：载入 nn.LSTMCell 的权重时抛出了 {error}。请按 nn.LSTMCell 的方式给参数命名"
             "（weight_ih [4H, I]、weight_hh [4H, H]、bias_ih [4H]、bias_hh [4H]），这样它的 state dict 才能载入你的模型。",
             what=what, error=error_text(err), key="state-dict-keys")
    fail_raised(err, what)


def cell_text(x, state) -> str:
    given = "None" if state is None else f"(h{list(state[0].shape)}, c{list(state[1].shape)})"
    return f"`cell(x{list(x.shape)}, {given})`"


def run_cells(submission, rng, key: str, draw, sizes=None):
    """The learner's cell, loaded, on the cases `draw(input_size, hidden_size)` makes: once per grading for `key`;
    `sizes` (input size, hidden size) instead of drawn ones."""
    def make():
        input_size, hidden_size = sizes or draw_sizes(rng)
        weights = draw_weights(rng, input_size, hidden_size)
        cases = draw(input_size, hidden_size)
        try:
            result = submission.probe(cell_run, input_size, hidden_size, weights, cases, what=Text(
                "your `LSTMCell({i}, {h})`", "你的 `LSTMCell({i}, {h})`", i=input_size, h=hidden_size))
        except Exception as exc:  # a LearnerError: loading raised, or the class is missing
            result = {"failed": exc}
        return input_size, hidden_size, weights, cases, result
    input_size, hidden_size, weights, cases, result = submission.once(key, make)
    if "failed" in result:
        exc = result["failed"]
        if "Missing key" in str(exc) or "Unexpected key" in str(exc) or "size mismatch" in str(exc):
            fail("Loading nn.LSTMCell's weights into your LSTMCell({i}, {h}) failed: {error}. Name and shape the "
                 "parameters as nn.LSTMCell does (weight_ih [4H, I], weight_hh [4H, H], bias_ih [4H], bias_hh [4H]).",
                 "把 nn.LSTMCell 的权重载入你的 LSTMCell({i}, {h}) 失败了：{error}。请按 nn.LSTMCell 的方式给参数命名并"
                 "确定形状（weight_ih [4H, I]、weight_hh [4H, H]、bias_ih [4H]、bias_hh [4H]）。", i=input_size,
                 h=hidden_size, error=verbatim(str(exc).splitlines()[0][:240]), key="state-dict-keys")
        raise exc
    return input_size, hidden_size, weights, cases, result


def step_output(record, x, state, hidden_size):
    what = cell_text(x, state)
    if "error" in record:
        fail_cell_error(what, record["error"])
    out = record["out"]
    if not (isinstance(out, (list, tuple)) and len(out) == 2):
        fail("{what} should return the pair (h, c), got {got}.", "{what} 应返回二元组 (h, c)，实际得到 {got}。",
             what=what, got=verbatim(type(out).__name__), key="not-a-pair")
    shape = [*x.shape[:-1], hidden_size]
    h = expect_tensor(out[0], Text("h of {what}", "{what} 的 h", what=what), floating=True)
    c = expect_tensor(out[1], Text("c of {what}", "{what} 的 c", what=what), floating=True)
    if x.dim() == 1 and list(h.shape) == [1, hidden_size]:
        fail("{what} returned h of shape {got} for an unbatched x [I]: nn.LSTMCell returns an unbatched input's h and c "
             "unbatched, [H]. Remove the batch axis you added (squeeze(0)).",
             "对不带 batch 的 x [I]，{what} 返回的 h 形状为 {got}：nn.LSTMCell 对不带 batch 的输入返回不带 batch 的 h 和 c，"
             "即 [H]。请去掉你加上的 batch 维度（squeeze(0)）。", what=what, got=list(h.shape), key="unbatched-shape")
    if x.dim() == 1 and hidden_size == 1 and (h.dim() == 0 or c.dim() == 0):
        fail("{what} returned a 0-d h or c for an unbatched x [I] with hidden_size 1, expected shape [1]: squeeze() "
             "removes every axis of size 1, the hidden one too. Remove only the batch axis: squeeze(0).",
             "对 hidden_size 为 1 的不带 batch 的 x [I]，{what} 返回了 0 维的 h 或 c，应为形状 [1]：squeeze() "
             "会去掉所有大小为 1 的维度，包括隐藏维度。请只去掉 batch 维度：squeeze(0)。", what=what, key="squeeze-all")
    expect_tensor(h, Text("h of {what}", "{what} 的 h", what=what), shape=shape)
    expect_tensor(c, Text("c of {what}", "{what} 的 c", what=what), shape=shape)
    return h, c


def expect_step(record, x, state, weights, hidden_size) -> None:
    """One step against nn.LSTMCell's, with the known slips named."""
    h, c = step_output(record, x, state, hidden_size)
    cell = reference_cell(weights["weight_ih"].shape[1], hidden_size, weights)
    want_h, want_c = (t.detach() for t in cell(x, state))
    if matches(h, want_h, rtol=1e-7, atol=1e-9) and matches(c, want_c, rtol=1e-7, atol=1e-9):
        return
    what = cell_text(x, state)
    if matches(h, want_c, rtol=1e-7, atol=1e-9) and matches(c, want_h, rtol=1e-7, atol=1e-9):
        fail("{what} returns (c, h): return (h, c), the hidden state first, as nn.LSTMCell does.",
             "{what} 返回的是 (c, h)：请像 nn.LSTMCell 那样返回 (h, c)，隐藏状态在前。", what=what, key="returns-c-h")
    batched_x = x if x.dim() == 2 else x.unsqueeze(0)
    batched_state = state if state is None or x.dim() == 2 else tuple(s.unsqueeze(0) for s in state)
    for slip_h, slip_c, why, key in slips(batched_x, batched_state, weights):
        if x.dim() == 1:
            slip_h, slip_c = slip_h.squeeze(0), slip_c.squeeze(0)
        if matches(h, slip_h, rtol=1e-7, atol=1e-9) and matches(c, slip_c, rtol=1e-7, atol=1e-9):
            fail("{what} is wrong: {why}", "{what} 不对：{why}", what=what, why=why, key=key)
    expect_near(c, want_c, Text("c of {what}", "{what} 的 c", what=what))
    expect_near(h, want_h, Text("h of {what}", "{what} 的 h", what=what))


# -- checks -----------------------------------------------------------------------------------------

@check("LSTMCell has nn.LSTMCell's four parameters, shaped and initialised as nn.LSTMCell's", points=1,
       zh="LSTMCell 有 nn.LSTMCell 的四个参数，形状和初始化与 nn.LSTMCell 相同")
def test_params(submission, rng):
    input_size, hidden_size = randint(rng, 30, 40), randint(rng, 60, 70)  # sqrt(I) and sqrt(H) differ by a quarter
    info = submission.probe(cell_init, input_size, hidden_size, what=f"`LSTMCell({input_size}, {hidden_size})`")
    call = f"LSTMCell({input_size}, {hidden_size})"
    if not info["module"]:
        fail("{call} is not an nn.Module: subclass nn.Module and register the weights as nn.Parameter.",
             "{call} 不是 nn.Module：请继承 nn.Module，并把权重注册为 nn.Parameter。", call=call, key="not-a-module")
    params = info["params"]
    shapes = {"weight_ih": [4 * hidden_size, input_size], "weight_hh": [4 * hidden_size, hidden_size],
              "bias_ih": [4 * hidden_size], "bias_hh": [4 * hidden_size]}
    if sorted(params) != sorted(shapes):
        fail("{call} has the parameters {got}; nn.LSTMCell has {want}: name them the same, so that its state dict "
             "loads into yours (a single bias, or the gates as separate parameters, do not load).",
             "{call} 的参数是 {got}；nn.LSTMCell 的是 {want}：请用相同的名字，这样它的 state dict 才能载入你的模型"
             "（只有一个 bias，或者把各个门拆成单独的参数，都无法载入）。", call=call,
             got=verbatim(", ".join(f"{n} {list(p.shape)}" for n, p in params.items()) or "none"),
             want=verbatim(", ".join(f"{n} {s}" for n, s in shapes.items())), key="parameter-names")
    for name, shape in shapes.items():
        value = params[name]
        if len(shape) == 2 and list(value.shape) == shape[::-1]:
            fail("{call}.{name} has shape {got}, the transpose of nn.LSTMCell's {want}: the four gates are stacked "
                 "along the first axis, [4H, ...], and the cell computes x @ weight_ih.T.",
                 "{call}.{name} 的形状为 {got}，是 nn.LSTMCell 的 {want} 的转置：四个门沿第一维堆叠成 [4H, ...]，"
                 "计算时用 x @ weight_ih.T。", call=call, name=name, got=list(value.shape), want=shape,
                 key="weight-transposed")
        expect_tensor(value, f"{call}.{name}", shape=shape, floating=True)
    values = torch.cat([p.reshape(-1).double() for p in params.values()])
    bound = 1 / math.sqrt(hidden_size)
    top = float(values.abs().max())
    # each parameter spreads over the whole range, both signs (a bias of 4H values reaches 0.9 of the bound surely)
    spread = all(float(p.max()) > 0.9 * bound and float(p.min()) < -0.9 * bound for p in params.values())
    if top <= bound * 1.0001 and spread and abs(float(values.mean())) < 0.05 * bound:
        return
    spread = Text("the values lie within ±{top:.4f} (mean {mean:.4f})", "数值在 ±{top:.4f} 之内（均值 {mean:.4f}）",
                  top=top, mean=float(values.mean()))
    if abs(top - 1 / math.sqrt(input_size)) < 0.03 / math.sqrt(input_size):
        fail("{call}: {spread}, the bound 1/sqrt(input_size). nn.LSTMCell draws every parameter from U(-1/sqrt(H), "
             "1/sqrt(H)) with H = hidden_size = {h}: ±{bound:.4f}.",
             "{call}：{spread}，即 1/sqrt(input_size) 的范围。nn.LSTMCell 从 U(-1/sqrt(H), 1/sqrt(H)) 抽取每个参数，"
             "H = hidden_size = {h}：±{bound:.4f}。", call=call, spread=spread, h=hidden_size, bound=bound,
             key="init-fan-in")
    fail("{call}: {spread}. nn.LSTMCell draws every parameter, biases included, from the uniform U(-1/sqrt(H), "
         "1/sqrt(H)) with H = hidden_size = {h}: ±{bound:.4f}.",
         "{call}：{spread}。nn.LSTMCell 从均匀分布 U(-1/sqrt(H), 1/sqrt(H)) 抽取每个参数（包括 bias），"
         "H = hidden_size = {h}：±{bound:.4f}。", call=call, spread=spread, h=hidden_size, bound=bound,
         key="init-distribution")


def draw_steps(rng, input_size, hidden_size, grad=False) -> list:
    """[x, state, gh, gc]: a batch with a given state, a batch of 1 with a given state."""
    cases = []
    for batch in (randint(rng, 2, 3) + hidden_size, 1):  # a batch larger than H: a transposed state cannot fit
        x = torch.randn(batch, input_size, generator=rng, dtype=torch.float64)
        state = tuple(torch.randn(batch, hidden_size, generator=rng, dtype=torch.float64) for _ in range(2))
        grads = [torch.randn(batch, hidden_size, generator=rng, dtype=torch.float64) for _ in range(2)] if grad \
            else [None, None]
        cases.append([x, state, *grads])
    return cases


@check("one step matches nn.LSTMCell with the same weights (a batch, and a batch of 1, with given states)", points=3,
       zh="一步的结果与权重相同的 nn.LSTMCell 一致（一个 batch 和 batch 为 1，都给定状态）")
def test_step(submission, rng):
    _, hidden_size, weights, cases, result = run_cells(submission, rng, "steps",
                                                      lambda i, h: draw_steps(rng, i, h))
    no_builtin(result["calls"])
    for (x, state, _, _), record in zip(cases, result["records"]):
        expect_step(record, x, state, weights, hidden_size)


@check("with no state (None) the cell starts from zeros, as nn.LSTMCell does", points=1,
       zh="不给状态（None）时，细胞从全 0 开始，与 nn.LSTMCell 相同", depends="step")
def test_zero_state(submission, rng):
    def draw(input_size, hidden_size):
        return [[torch.randn(batch, input_size, generator=rng, dtype=torch.float64), None, None, None]
                for batch in (randint(rng, 2, 3) + hidden_size, 1)]
    input_size, hidden_size, weights, cases, result = run_cells(submission, rng, "zero", draw)
    no_builtin(result["calls"])
    for (x, state, _, _), record in zip(cases, result["records"]):
        expect_step(record, x, state, weights, hidden_size)
    x = torch.randn(2, input_size, generator=rng)
    expect_cpu_module(submission, "LSTMCell", [input_size, hidden_size], [x])  # a GPU at hand changes nothing


@check("an unbatched input [I] gives an unbatched (h, c) [H], as nn.LSTMCell does (hidden_size 1 too)", points=1,
       zh="不带 batch 的输入 [I] 得到不带 batch 的 (h, c) [H]，与 nn.LSTMCell 相同（hidden_size 为 1 时也是）",
       depends="step")
def test_unbatched(submission, rng):
    def draw(input_size, hidden_size):
        x = torch.randn(input_size, generator=rng, dtype=torch.float64)
        state = tuple(torch.randn(hidden_size, generator=rng, dtype=torch.float64) for _ in range(2))
        return [[x, None, None, None], [x, state, None, None]]
    for key, sizes in (("unbatched", None), ("unbatched_hidden_1", (randint(rng, 3, 5), 1))):
        _, hidden_size, weights, cases, result = run_cells(submission, rng, key, draw, sizes)
        no_builtin(result["calls"])
        for (x, state, _, _), record in zip(cases, result["records"]):
            expect_step(record, x, state, weights, hidden_size)


@check("the gradients for x, the state and the four parameters match nn.LSTMCell's", points=1,
       zh="x、状态和四个参数的梯度与 nn.LSTMCell 一致", depends="step")
def test_gradient(submission, rng):
    input_size, hidden_size, weights, cases, result = run_cells(submission, rng, "gradient",
                                                                lambda i, h: draw_steps(rng, i, h, grad=True))
    no_builtin(result["calls"])
    for (x, state, gh, gc), record in zip(cases, result["records"]):
        step_output(record, x, state, hidden_size)
        what = cell_text(x, state)
        if "grads" not in record:
            fail("h and c of {what} do not require grad: the graph from the weights and the inputs was cut (.detach(), "
                 ".data, or torch.no_grad()), so nothing could train.",
                 "{what} 的 h 和 c 不需要梯度：从权重和输入出发的计算图被切断了（`.detach()`、`.data` 或 "
                 "`torch.no_grad()`），什么都训练不了。", what=what, key="graph-cut")
        cell = reference_cell(input_size, hidden_size, weights)
        leaves = {"x": x.clone().requires_grad_(True), "h0": state[0].clone().requires_grad_(True),
                  "c0": state[1].clone().requires_grad_(True)}
        h, c = cell(leaves["x"], (leaves["h0"], leaves["c0"]))
        inputs = {**leaves, **dict(cell.named_parameters())}
        want = dict(zip(inputs, torch.autograd.grad((h * gh).sum() + (c * gc).sum(), list(inputs.values()))))
        for name, expected in want.items():
            got = record["grads"].get(name)
            label = Text("the gradient for {name} of {what}", "{what} 对 {name} 的梯度", name=name, what=what)
            if got is None:
                fail("{label} is None: {name} got no gradient (detached, or not used as given).",
                     "{label} 是 None：{name} 没有得到梯度（被 detach 了，或者没有按给定的方式使用）。", label=label,
                     name=name, key="graph-cut")
            expect_tensor(got, label, shape=list(expected.shape))
            expect_near(got, expected, label, theirs=("nn.LSTMCell's gradient", "nn.LSTMCell 的梯度"))


def layout_text() -> Text:
    return Text("[B, T, I], batch first", "[B, T, I]，batch 在前") if batch_first() else \
        Text("[T, B, I], time first", "[T, B, I]，时间在前")


@check("lstm runs the cell over a sequence as nn.LSTM does: every step's h, and the final (h, c)", points=2,
       zh="lstm 像 nn.LSTM 那样在序列上运行细胞：每一步的 h，以及最后的 (h, c)", depends="step")
def test_sequence(submission, rng):
    input_size, hidden_size = draw_sizes(rng)
    weights = draw_weights(rng, input_size, hidden_size)
    reference = nn.LSTM(input_size, hidden_size, batch_first=batch_first(), dtype=torch.float64)
    reference.load_state_dict({f"{n}_l0": w for n, w in weights.items()})
    steps = randint(rng, 4, 6)
    for length, batch, given in ((steps, steps + randint(rng, 1, 2), True), (1, 2, False)):
        xs = torch.randn(*((batch, length) if batch_first() else (length, batch)), input_size, generator=rng,
                         dtype=torch.float64)
        state = tuple(torch.randn(batch, hidden_size, generator=rng, dtype=torch.float64) for _ in range(2)) \
            if given else None
        result = submission.probe(sequence_run, input_size, hidden_size, weights, xs, state,
                                  what=f"`lstm(cell, xs{list(xs.shape)}, {'(h, c)' if given else 'None'})`")
        no_builtin(result["calls"])
        what = f"`lstm(cell, xs{list(xs.shape)}, {'(h0, c0)' if given else 'None'})`"
        if "error" in result:
            message = result["error"]["message"]
            if "must match the size" in message and f"({length})" in message and f"({batch})" in message:
                fail_raised(result["error"], what, Text(
                    "The loop went over the wrong axis: xs is {layout}, so a step along the other axis has {length} "
                    "rows where the state has {batch}. Step along the time axis, and stack the outputs along it.",
                    "循环走错了维度：xs 是 {layout}，沿另一维取出的一步有 {length} 行，而状态有 {batch} 行。"
                    "请沿时间维逐步计算，并沿这一维把输出堆叠起来。", layout=layout_text(), length=length, batch=batch),
                    key="wrong-time-axis")
            fail_cell_error(what, result["error"])
        if "outputs" not in result:
            fail("{what} should return (outputs, (h, c)), got {got}.", "{what} 应返回 (outputs, (h, c))，实际得到 {got}。",
                 what=what, got=verbatim(type(result["returned"]).__name__), key="not-a-pair")
        with torch.no_grad():
            outputs, (h_n, c_n) = reference(xs, None if state is None else tuple(s.unsqueeze(0) for s in state))
        outs = expect_tensor(result["outputs"], Text("the outputs of {what}", "{what} 的 outputs", what=what),
                             floating=True)
        if list(outs.shape) == list(outputs.transpose(0, 1).shape) and list(outs.shape) != list(outputs.shape) \
                and matches(outs.transpose(0, 1), outputs, rtol=1e-6, atol=1e-8):  # each step right: the stacking
            fail("The outputs of {what} have shape {got}, expected {want}: every step's h is right, but they are "
                 "stacked along the wrong axis. xs is {layout}: stack the outputs along its time axis.",
                 "{what} 的 outputs 形状为 {got}，应为 {want}：每一步的 h 都对，但堆叠的维度错了。xs 是 {layout}："
                 "要沿它的时间维把输出堆叠起来。", what=what, got=list(outs.shape), want=list(outputs.shape),
                 layout=layout_text(), key="stacked-wrong-axis")
        outs = expect_tensor(outs, Text("the outputs of {what}", "{what} 的 outputs", what=what),
                             shape=list(outputs.shape))
        if length > 1 and not matches(outs, outputs, rtol=1e-7, atol=1e-9):
            cell = reference_cell(input_size, hidden_size, weights)
            time = 1 if batch_first() else 0
            fresh = torch.stack([cell(x, state)[0] for x in xs.unbind(time)], time).detach()
            if matches(outs, fresh, rtol=1e-7, atol=1e-9):
                fail("The outputs of {what} are each step computed from the initial state: the state is not carried. "
                     "Feed each step the (h, c) the previous step returned.",
                     "{what} 的每一步输出都是从初始状态算出来的：状态没有传下去。请把上一步返回的 (h, c) 交给下一步。",
                     what=what, key="state-not-carried")
        expect_near(outs, outputs, Text("the outputs of {what}", "{what} 的 outputs", what=what),
                    theirs=("nn.LSTM", "nn.LSTM"))
        final = result["final"]
        if not (isinstance(final, (list, tuple)) and len(final) == 2):
            fail("{what} should return the final state as a pair (h, c), got {got}.",
                 "{what} 应以二元组 (h, c) 返回最后的状态，实际得到 {got}。", what=what,
                 got=verbatim(type(final).__name__), key="not-a-pair")
        for name, got, want in (("h", final[0], h_n[0]), ("c", final[1], c_n[0])):
            label = Text("the final {name} of {what}", "{what} 最后的 {name}", name=name, what=what)
            got = expect_tensor(got, label, shape=list(want.shape), floating=True)
            if state is not None and length > 1 and matches(got, state["hc".index(name)], rtol=1e-7, atol=1e-9):
                fail("{label} is the initial state: return the state after the last step.",
                     "{label}是初始状态：请返回最后一步之后的状态。", label=label, key="final-state")
            expect_near(got, want, label, theirs=("nn.LSTM", "nn.LSTM"))


@check("the cell and the loop are your own (no nn.LSTMCell, nn.LSTM or torch.lstm_cell)", points=1,
       zh="细胞和循环都是你自己写的（不用 nn.LSTMCell、nn.LSTM 或 torch.lstm_cell）")
def test_no_builtin(submission, rng):
    _, hidden_size, weights, cases, result = run_cells(submission, rng, "steps", lambda i, h: draw_steps(rng, i, h))
    no_builtin(result["calls"])
    cell = reference_cell(weights["weight_ih"].shape[1], hidden_size, weights)
    for (x, state, _, _), record in zip(cases, result["records"]):
        want = cell(x, state)
        out = record.get("out")
        if not (isinstance(out, (list, tuple)) and len(out) == 2
                and matches(out[0], want[0].detach(), rtol=1e-7, atol=1e-9)):
            fail("LSTMCell is not right yet, so there is no cell of your own to credit: this point comes with steps that "
                 "match nn.LSTMCell's.",
                 "LSTMCell 还不正确，所以还没有可以计分的你自己写的细胞：每一步都与 nn.LSTMCell 一致之后才能得到这一分。",
                 key="by-hand-not-right")
