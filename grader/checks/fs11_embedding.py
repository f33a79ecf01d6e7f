"""Hidden checks of fs11: an embedding from scratch, and a language model whose output head is tied to it.

Probes build the learner's Embedding and TiedLM in the sandbox, report their parameters (and the embedding's
initial weight, drawn there), load the judge's weights in place, run the lookups or the model on drawn ids under a
TorchFunctionMode that records the torch functions called (F.embedding and nn.Embedding are forbidden), and
backpropagate sum(out * g). The judge compares with F.embedding and F.linear in float64: the values, and the
gradient of the weight, which for the tied model must be the sum of the lookup's part (none for padding_idx) and the
head's part (also for padding_idx). Tying is judged by its effect only: one parameter, which the head follows when it
changes, and whose gradient holds both parts.

The drawn ids repeat (their gradients must add up) and hold padding_idx; the padding row of the loaded weight is not
zero (nn.Embedding returns it as it is: only its gradient is held back); padding_idx is sometimes negative (-1 is the
last row) or None; ids come as [B, T], [T], a single 0-dim id, and an empty [B, 0].

Kata variants: `variant("scale")` is whether TiedLM scales the embeddings by sqrt(dim) before the projection, as
the Transformer does, or not (the exercise as written).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.checking import (Text, check, expect_tensor, fail, fail_raised, learner_call, matches, probe, recording_calls, relation,
                             relation_key, relation_text, variant, verbatim, where)
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)
from grader.devices import expect_cpu_module


# -- probes (run in the sandbox) ---------------------------------------------------------------


def _recorder(into):

    return recording_calls(into)


def _backward(out, g):
    """sum(out * g) backward, where out is a tensor of g's shape with a graph; whether it ran."""
    if isinstance(out, torch.Tensor) and out.shape == g.shape and out.requires_grad:
        (out * g.to(out.dtype)).sum().backward()
        return True
    return False


@probe
def embedding_init(module, num, dim, padding_idx):
    """Embedding(num, dim, padding_idx) as built: its parameters and its weight."""
    m = module.Embedding(num, dim, padding_idx)
    weight = getattr(m, "weight", None)
    return {"module": isinstance(m, nn.Module),
            "params": {n: list(p.shape) for n, p in m.named_parameters()} if isinstance(m, nn.Module) else {},
            "weight": weight.detach().clone() if isinstance(weight, torch.Tensor) else None,
            "weight_kind": type(weight).__name__}


@probe
def embedding_run(module, num, dim, padding_idx, weight, cases):
    """Embedding(num, dim, padding_idx) with `weight` loaded, on each [ids, g]: the output and weight.grad (reset
    between cases), or the error; and the torch functions called."""
    called = set()
    m = module.Embedding(num, dim, padding_idx).double()
    with torch.no_grad():
        m.weight.copy_(weight)
    records = []
    for ids, g in cases:
        m.weight.grad = None
        with _recorder(called):
            out, error = learner_call(module, m, ids)
        if error and error["not_started"]:
            raise NotImplementedError
        if error:  # the judge explains it, and the other cases still run
            records.append({"error": error})
            continue
        graph = _backward(out, g)
        records.append({"out": out.detach() if isinstance(out, torch.Tensor) else out, "graph": graph,
                        "grad": None if m.weight.grad is None else m.weight.grad.clone()})
    return {"records": records, "calls": sorted(called)}


@probe
def lm_run(module, vocab, dim, padding_idx, weight, proj_weight, proj_bias, ids, g):
    """TiedLM(vocab, dim, padding_idx): its parameters and initial embedding weight; then, with the judge's weights
    loaded in place, the logits on ids and every parameter's gradient of sum(logits * g)."""
    called = set()
    m = module.TiedLM(vocab, dim, padding_idx)
    params = [(n, list(p.shape), p.numel()) for n, p in m.named_parameters()]
    first = m.embedding.weight.detach().clone()
    m = m.double()
    with torch.no_grad():
        m.embedding.weight.copy_(weight)
        m.proj.weight.copy_(proj_weight)
        m.proj.bias.copy_(proj_bias)
    with _recorder(called):
        out = m(ids)
    graph = _backward(out, g)
    grads = {n: None if p.grad is None else p.grad.detach().clone() for n, p in m.named_parameters()}
    return {"params": params, "first": first, "out": out.detach() if isinstance(out, torch.Tensor) else out,
            "graph": graph, "grads": grads, "calls": sorted(called)}


# -- draws and references (the judge) -------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high]."""
    return int(torch.randint(low, high + 1, (), generator=rng))


def scale(dim: int) -> float:
    return math.sqrt(dim) if variant("scale")["name"] == "sqrt_dim" else 1.0


def draw_sizes(rng):
    return randint(rng, 11, 15), randint(rng, 5, 7)  # vocab != dim: a transposed head cannot line up


def draw_padding(rng, num: int, kind: str):
    """padding_idx of a kind: "none", "zero" (the usual one), "negative" (-1 or -2), or a row drawn inside."""
    return {"none": None, "zero": 0, "negative": -randint(rng, 1, 2), "row": randint(rng, 1, num - 1)}[kind]


def row(padding_idx, num: int):
    return None if padding_idx is None else padding_idx % num


def draw_ids(rng, num: int, shape, padding_idx) -> torch.Tensor:
    """ids of `shape` with repeats, and padding_idx among them where there is one (and room)."""
    ids = torch.randint(0, max(num // 3, 2), shape, generator=rng)  # a few ids only: repeats for sure
    if ids.numel() >= 2 and padding_idx is not None:
        ids.view(-1)[randint(rng, 0, ids.numel() - 1)] = padding_idx % num
    return ids


def draw_weight(rng, num, dim) -> torch.Tensor:
    return torch.randn(num, dim, generator=rng, dtype=torch.float64)  # the padding row too: it is returned as is


def lookup_cases(rng, num: int, dim: int, padding_idx) -> list:
    cases = []
    for shape in ((randint(rng, 2, 3), randint(rng, 4, 6)), (randint(rng, 5, 7),), (), (2, 0)):
        ids = draw_ids(rng, num, shape, padding_idx)
        cases.append([ids, torch.randn(*shape, dim, generator=rng, dtype=torch.float64)])
    if padding_idx is not None:
        cases[-2][0] = torch.tensor(padding_idx % num)  # the single id is the padding one
    return cases


def lm_reference(ids, weight, proj_weight, proj_bias, padding_idx, dim, *, head=None, lookup_detached=False,
                 head_detached=False):
    """The tied model in float64, written here: logits = tanh(proj(embedding(ids) * scale)) @ W.T; the keywords make
    a known slip (another head weight, one of the two uses detached)."""
    table = weight.detach() if lookup_detached else weight
    e = F.embedding(ids, table, padding_idx=padding_idx) * scale(dim)
    h = torch.tanh(F.linear(e, proj_weight, proj_bias))
    out_weight = weight if head is None else head
    return F.linear(h, out_weight.detach() if head_detached else out_weight)


def expect_near(got, want, what, *, theirs=("F.embedding", "F.embedding"), rtol=1e-7, atol=1e-9):
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
    used = forbidden_calls("embedding", calls)
    if used:
        fail("Your Embedding calls torch's own {names}: the lookup is torch's, not yours. Index the weight yourself "
             "(weight[ids]) and hold the padding row's gradient back yourself.",
             "你的 Embedding 调用了 torch 自带的 {names}：查表是 torch 做的，不是你做的。请自己索引 weight（`weight[ids]`），"
             "并自己挡住 padding 行的梯度。", names=verbatim(", ".join(f"`{n}`" for n in used)), key="builtin-embedding")


def padding_text(padding_idx, num) -> str:
    return "None" if padding_idx is None else f"{padding_idx}" + (f" (row {padding_idx % num})" if padding_idx < 0
                                                                   else "")


def lookup_run(submission, rng, kind: str):
    """A lookup run for a kind of padding_idx, once per grading."""
    def make():
        num, dim = draw_sizes(rng)
        padding_idx = draw_padding(rng, num, kind)
        weight = draw_weight(rng, num, dim)
        cases = lookup_cases(rng, num, dim, padding_idx)
        result = submission.probe(embedding_run, num, dim, padding_idx, weight, cases, what=Text(
            "your `Embedding({num}, {dim}, padding_idx={p})` on {n} inputs",
            "你的 `Embedding({num}, {dim}, padding_idx={p})` 处理 {n} 组输入", num=num, dim=dim, p=padding_idx,
            n=len(cases)))
        return num, dim, padding_idx, weight, cases, result
    return submission.once(f"lookup-{kind}", make)


LOOKUP_KINDS = ("row", "zero", "negative", "none")


def call_text(num, dim, padding_idx, ids) -> str:
    return f"`Embedding({num}, {dim}, padding_idx={padding_idx})(ids{list(ids.shape)})`"


def lookup_output(record, num, dim, padding_idx, ids):
    what = call_text(num, dim, padding_idx, ids)
    if "error" in record:
        err = record["error"]
        fail("{what} raised {type}: {message}{where}.", "{what} 抛出了 {type}：{message}{where}。", what=what,
             type=verbatim(err["type"]), message=verbatim(err["message"].splitlines()[0][:200] if err["message"] else ""),
             where=where(err), key=f"raised-{err['type']}")
    return expect_tensor(record["out"], what, shape=[*ids.shape, dim], floating=True)


# -- the embedding ----------------------------------------------------------------------------------

@check("Embedding's weight is an nn.Parameter [num, dim] drawn from N(0, 1), its padding row zeros", points=1,
       zh="Embedding 的 weight 是 [num, dim] 的 nn.Parameter，取自 N(0, 1)，padding 行为 0")
def test_init(submission, rng):
    num, dim = randint(rng, 180, 220), randint(rng, 10, 14)  # about 2400 values: their mean and spread are clear
    for kind in LOOKUP_KINDS:
        padding_idx = draw_padding(rng, num, kind)
        info = submission.probe(embedding_init, num, dim, padding_idx,
                                what=f"`Embedding({num}, {dim}, padding_idx={padding_idx})`")
        what = f"Embedding({num}, {dim}, padding_idx={padding_idx}).weight"
        if not info["module"] or info["weight_kind"] != "Parameter" or "weight" not in info["params"]:
            fail("{what} is {kind}, not an nn.Parameter registered on an nn.Module: an optimizer would never train it. "
                 "Subclass nn.Module and set self.weight = nn.Parameter(...).",
                 "{what} 是 {kind}，不是注册在 nn.Module 上的 nn.Parameter：优化器永远不会训练它。请继承 nn.Module，"
                 "并设置 `self.weight = nn.Parameter(...)`。", what=what, kind=verbatim(info["weight_kind"]),
                 key="weight-not-parameter")
        weight = expect_tensor(info["weight"], what, shape=[num, dim], floating=True)
        p = row(padding_idx, num)
        if p is not None and bool(weight[p].any()):
            hint = Text(" A negative padding_idx counts from the end: -1 is the last row.",
                        "负的 padding_idx 从末尾数起：-1 是最后一行。") if padding_idx < 0 else ""
            fail("Row {p} of {what} (padding_idx={idx}) is not zeros at initialisation: nn.Embedding starts the padding "
                 "row at zeros, so a padded position embeds to nothing.{hint}",
                 "{what} 的第 {p} 行（padding_idx={idx}）初始化后不是全 0：nn.Embedding 把 padding 行初始化为 0，"
                 "这样 padding 位置的嵌入就是空的。{hint}", p=p, what=what, idx=padding_idx, hint=hint,
                 key="padding-row-not-zero")
        rest = weight if p is None else torch.cat([weight[:p], weight[p + 1:]])
        mean, std = float(rest.mean()), float(rest.std())
        if abs(mean) > 0.15 or abs(std - 1) > 0.12:
            uniform = abs(mean - 0.5) < 0.1 and abs(std - 12 ** -0.5) < 0.05
            why = Text(" That is torch.rand, uniform on [0, 1): nn.Embedding draws from the normal N(0, 1), torch.randn.",
                       "这是 torch.rand，[0, 1) 上的均匀分布：nn.Embedding 从正态分布 N(0, 1) 抽取，即 torch.randn。") \
                if uniform else Text(" nn.Embedding draws every value from the normal N(0, 1) (torch.randn, or "
                                     "nn.init.normal_), with no scaling.",
                                     "nn.Embedding 的每个值都从正态分布 N(0, 1) 抽取（torch.randn，或 nn.init.normal_），"
                                     "不做缩放。")
            fail("The values of {what} have mean {mean:.3f} and standard deviation {std:.3f}; nn.Embedding's have mean 0 "
                 "and standard deviation 1.{why}",
                 "{what} 的值均值为 {mean:.3f}，标准差为 {std:.3f}；nn.Embedding 的均值为 0，标准差为 1。{why}",
                 what=what, mean=mean, std=std, why=why, key="uniform-init" if uniform else "init-distribution")


@check("Embedding looks rows up as F.embedding does: any shape of ids, empty and 0-dim ones too; the padding row as it "
       "is", points=2, zh="Embedding 像 F.embedding 那样查表：任意形状的 ids，包括空的和 0 维的；padding 行原样返回")
def test_lookup(submission, rng):
    for kind in LOOKUP_KINDS:
        num, dim, padding_idx, weight, cases, result = lookup_run(submission, rng, kind)
        no_builtin(result["calls"])
        for (ids, _), record in zip(cases, result["records"]):
            out = lookup_output(record, num, dim, padding_idx, ids)
            want = F.embedding(ids, weight, padding_idx=padding_idx)
            if matches(out, want, rtol=1e-7, atol=1e-9):
                continue
            what = call_text(num, dim, padding_idx, ids)
            p = row(padding_idx, num)
            if p is not None and matches(out, want * (ids != p).unsqueeze(-1), rtol=1e-7, atol=1e-9):
                fail("{what} returns zeros for the padding id {p}: nn.Embedding returns row {p} of weight as it is "
                     "(zeros only while it was never changed); padding_idx only holds its gradient back. Return the row, "
                     "and stop the gradient instead.",
                     "{what} 对 padding id {p} 返回了 0：nn.Embedding 原样返回 weight 的第 {p} 行（只有在它从未被改动时才是 0）；"
                     "padding_idx 只挡住它的梯度。请返回这一行，改为挡住梯度。", what=what, p=p, key="padding-output-zeroed")
            expect_near(out, want, what)
    num, dim = randint(rng, 5, 9), randint(rng, 2, 4)
    ids = torch.randint(0, num, (2, 3), generator=rng)
    expect_cpu_module(submission, "Embedding", [num, dim], [ids])  # a GPU at hand changes nothing


@check("the gradient of weight adds up repeated ids and leaves the padding row at zero, as F.embedding's", points=2,
       zh="weight 的梯度把重复的 id 累加起来，padding 行保持为 0，与 F.embedding 一致", depends="lookup")
def test_gradient(submission, rng):
    for kind in LOOKUP_KINDS:
        num, dim, padding_idx, weight, cases, result = lookup_run(submission, rng, kind)
        no_builtin(result["calls"])
        for (ids, g), record in zip(cases, result["records"]):
            what = call_text(num, dim, padding_idx, ids)
            label = Text("the gradient of weight after {what}", "{what} 之后 weight 的梯度", what=what)
            if "error" in record:  # the lookup raised: its error is the lesson (the lookup check names it too)
                fail_raised(record["error"], what)
            leaf = weight.clone().requires_grad_(True)
            out = F.embedding(ids, leaf, padding_idx=padding_idx)
            (want,) = torch.autograd.grad((out * g).sum(), leaf) if ids.numel() else (torch.zeros_like(weight),)
            if not record["graph"]:
                expect_tensor(record["out"], what, shape=list(g.shape), floating=True)  # no graph judged on a misfit
            if not record["graph"] and bool(want.any()):  # a gradient is due (not only padding ids): none came
                fail("The output of {what} does not require grad: the lookup was cut from weight (.data, .detach(), or "
                     "torch.no_grad() around it), so the embedding can never learn.",
                     "{what} 的输出不需要梯度：查表与 weight 断开了（`.data`、`.detach()`，或包在 `torch.no_grad()` 里），"
                     "嵌入永远学不到东西。", what=what, key="graph-cut")
            got = record["grad"] if record["grad"] is not None else torch.zeros_like(weight)
            got = expect_tensor(got, label, shape=list(weight.shape), floating=True)
            if matches(got, want, rtol=1e-7, atol=1e-9):
                continue
            p = row(padding_idx, num)
            if p is not None and bool(got[p].any()) and matches(torch.cat([got[:p], got[p + 1:]]),
                                                                torch.cat([want[:p], want[p + 1:]]), rtol=1e-7, atol=1e-9):
                fail("{label} is right but for the padding row {p}, which got {total:.4g}: with padding_idx, the lookups "
                     "of that id send no gradient back, so the padding vector never trains. Stop their gradient "
                     "(torch.where with a detached copy, or a mask on the rows' gradient).",
                     "{label}只在 padding 行 {p} 上不对，它得到了 {total:.4g}：有 padding_idx 时，这个 id 的查表不回传梯度，"
                     "padding 向量永远不会被训练。请挡住它们的梯度（用 torch.where 配合 detach 过的副本，或给这些行的梯度"
                     "乘上掩码）。", label=label, p=p, total=float(got[p].abs().sum()), key="padding-gets-gradient")
            repeated = torch.bincount(ids.reshape(-1), minlength=num) > 1
            if repeated.any() and matches(got[~repeated], want[~repeated], rtol=1e-7, atol=1e-9):
                fail("{label} is wrong for ids that appear more than once: each lookup of an id adds its gradient to "
                     "the id's row, so a row looked up k times gets the sum of k gradients (an assignment keeps one).",
                     "{label}在出现多次的 id 上不对：每次查表都要把梯度加到该 id 的行上，查了 k 次的行得到 k 个梯度之和"
                     "（赋值只会留下一个）。", label=label, key="repeats-not-summed")
            expect_near(got, want, label, theirs=("F.embedding's gradient", "F.embedding 的梯度"))


# -- the tied language model ------------------------------------------------------------------------

def lm_run_once(submission, rng):
    def make():
        vocab, dim = draw_sizes(rng)
        padding_idx = draw_padding(rng, vocab, "row")
        weight = draw_weight(rng, vocab, dim)
        proj_weight = torch.randn(dim, dim, generator=rng, dtype=torch.float64) / math.sqrt(dim)
        proj_bias = 0.1 * torch.randn(dim, generator=rng, dtype=torch.float64)
        ids = draw_ids(rng, vocab, (randint(rng, 2, 3), randint(rng, 4, 6)), padding_idx)
        g = torch.randn(*ids.shape, vocab, generator=rng, dtype=torch.float64)
        result = submission.probe(lm_run, vocab, dim, padding_idx, weight, proj_weight, proj_bias, ids, g,
                                  what=f"`TiedLM({vocab}, {dim}, padding_idx={padding_idx})`")
        return vocab, dim, padding_idx, weight, proj_weight, proj_bias, ids, g, result
    return submission.once("lm", make)


@check("TiedLM has one [vocab, dim] parameter, used by the lookup and the head", points=1,
       zh="TiedLM 只有一个 [vocab, dim] 的参数，查表和输出头共用它")
def test_tied_params(submission, rng):
    vocab, dim, padding_idx, *_, result = lm_run_once(submission, rng)
    params = result["params"]
    tables = [name for name, shape, _ in params if shape in ([vocab, dim], [dim, vocab])]
    want = vocab * dim + dim * dim + dim
    total = sum(n for *_, n in params)
    listed = verbatim(", ".join(f"{name} {shape}" for name, shape, _ in params))
    if len(tables) > 1:
        fail("TiedLM({vocab}, {dim}) has {n} parameters of the embedding's size ({names}): the head has a weight of "
             "its own, so the model has twice the parameters, and the two drift apart in training. Tie them: the head "
             "uses embedding.weight itself (the same nn.Parameter), not a copy of it. Its parameters: {listed}.",
             "TiedLM({vocab}, {dim}) 有 {n} 个与嵌入同样大小的参数（{names}）：输出头有自己的权重，模型参数翻了一倍，"
             "训练时两者会各自变化。请把它们绑定：输出头直接使用 embedding.weight（同一个 nn.Parameter），而不是它的副本。"
             "它的参数：{listed}。", vocab=vocab, dim=dim, n=len(tables),
             names=verbatim(", ".join(tables)), listed=listed, key="head-not-tied")
    if total != want:
        fail("TiedLM({vocab}, {dim}) has {total} parameter values, expected {want} (the embedding {vocab} x {dim}, "
             "proj {dim} x {dim} and its bias {dim}, a head with no weight of its own and no bias). Its parameters: "
             "{listed}.",
             "TiedLM({vocab}, {dim}) 有 {total} 个参数值，应为 {want}（嵌入 {vocab} x {dim}，proj {dim} x {dim} "
             "及其 bias {dim}，输出头没有自己的权重，也没有 bias）。它的参数：{listed}。", vocab=vocab, dim=dim,
             total=total, want=want, listed=listed, key="parameter-count")


@check("TiedLM's logits match the tied model's, and follow the embedding weight it holds", points=1,
       zh="TiedLM 的 logits 与绑定模型一致，并跟随它持有的嵌入权重")
def test_tied_forward(submission, rng):
    vocab, dim, padding_idx, weight, proj_weight, proj_bias, ids, g, result = lm_run_once(submission, rng)
    no_builtin(result["calls"])
    what = f"`TiedLM({vocab}, {dim}, padding_idx={padding_idx})(ids{list(ids.shape)})`"
    out = expect_tensor(result["out"], what, shape=[*ids.shape, vocab], floating=True)
    want = lm_reference(ids, weight, proj_weight, proj_bias, padding_idx, dim)
    if matches(out, want, rtol=1e-7, atol=1e-9):
        return
    first = result["first"].double()
    if matches(out, lm_reference(ids, weight, proj_weight, proj_bias, padding_idx, dim, head=first),
               rtol=1e-7, atol=1e-9):
        fail("{what}: the head still uses the embedding weight as it was when the model was built, not the one the "
             "model holds now: it is a copy (a clone, or .data in a new Parameter). Use embedding.weight itself in the "
             "head, so both follow every change.",
             "{what}：输出头用的仍是模型构建时的嵌入权重，而不是模型现在持有的那个：它是一个副本（clone，或把 .data "
             "放进了一个新的 Parameter）。请在输出头中直接使用 embedding.weight，这样两者都跟随每一次改动。",
             what=what, key="head-copy")
    if scale(dim) == 1.0:
        slip = (lm_reference(ids, weight * math.sqrt(dim), proj_weight, proj_bias, padding_idx, dim, head=weight), Text(
            "the embeddings are scaled by sqrt(dim) before proj: this model uses them as they are.",
            "嵌入在进入 proj 之前被乘了 sqrt(dim)：这个模型直接使用嵌入，不做缩放。"), "scaled-anyway")
    else:
        slip = (lm_reference(ids, weight / math.sqrt(dim), proj_weight, proj_bias, padding_idx, dim, head=weight), Text(
            "the embeddings are not scaled: multiply them by sqrt(dim) before proj, as the Transformer does.",
            "嵌入没有缩放：在进入 proj 之前把它们乘以 sqrt(dim)，就像 Transformer 那样。"), "not-scaled")
    if matches(out, slip[0], rtol=1e-7, atol=1e-9):
        fail("{what} is wrong: {why}", "{what} 不对：{why}", what=what, why=slip[1], key=slip[2])
    expect_near(out, want, what, theirs=("the tied model computed with F.embedding and F.linear",
                                         "用 F.embedding 和 F.linear 计算的绑定模型"))


@check("the shared weight's gradient is the sum of the lookup's part and the head's part", points=2,
       zh="共享权重的梯度是查表部分与输出头部分之和", depends=("tied_params", "tied_forward"))
def test_tied_gradient(submission, rng):
    vocab, dim, padding_idx, weight, proj_weight, proj_bias, ids, g, result = lm_run_once(submission, rng)
    no_builtin(result["calls"])
    label = Text("the gradient of embedding.weight", "embedding.weight 的梯度")
    if not result["graph"]:
        fail("The logits of TiedLM do not require grad: the graph was cut, nothing can train.",
             "TiedLM 的 logits 不需要梯度：计算图被切断了，什么都训练不了。", key="graph-cut")
    got = result["grads"].get("embedding.weight")
    if got is None:
        fail("{label} is None: neither the lookup nor the head reached it.", "{label} 是 None：查表和输出头都没有传到它。",
             label=label, key="graph-cut")

    def grad_of(**slip):
        leaf = weight.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad((lm_reference(ids, leaf, proj_weight, proj_bias, padding_idx, dim, **slip)
                                       * g).sum(), leaf)
        return grad

    want = grad_of()
    got = expect_tensor(got, label, shape=[vocab, dim], floating=True)
    if matches(got, want, rtol=1e-7, atol=1e-9):
        return
    if matches(got, grad_of(head_detached=True), rtol=1e-7, atol=1e-9):
        fail("{label} holds the lookup's part only: the head's use of the weight sent no gradient to it (a detached "
             "weight, or a separate Parameter sharing its values). Use embedding.weight itself in the head.",
             "{label}只包含查表的部分：输出头对权重的使用没有给它梯度（权重被 detach 了，或者是一个共享数值的另一个 Parameter）。"
             "请在输出头中直接使用 embedding.weight。", label=label, key="head-gradient-missing")
    if matches(got, grad_of(lookup_detached=True), rtol=1e-7, atol=1e-9):
        fail("{label} holds the head's part only: the lookup sent no gradient to the weight (detached, or computed "
             "under torch.no_grad()).",
             "{label}只包含输出头的部分：查表没有给权重梯度（被 detach 了，或在 `torch.no_grad()` 下计算）。",
             label=label, key="lookup-gradient-missing")
    p = row(padding_idx, vocab)
    if p is not None and not bool(got[p].any()) and matches(torch.cat([got[:p], got[p + 1:]]),
                                                            torch.cat([want[:p], want[p + 1:]]), rtol=1e-7, atol=1e-9):
        fail("{label} is right but for the padding row {p}, which got no gradient at all: padding_idx holds back the "
             "lookup's part only. The head uses row {p} like every other row (it scores the padding token), and its "
             "gradient must reach it: a hook that zeroes the row of weight's whole gradient also drops the head's part.",
             "{label}只在 padding 行 {p} 上不对，它完全没有得到梯度：padding_idx 只挡住查表的那一部分。输出头像使用其他行一样"
             "使用第 {p} 行（它给 padding 词打分），它的梯度必须能传到：把 weight 整个梯度中该行清零的 hook 也丢掉了输出头的部分。",
             label=label, p=p, key="padding-head-gradient-dropped")
    expect_near(got, want, label, theirs=("the tied model's gradient", "绑定模型的梯度"))


@check("Embedding does the lookup itself (no F.embedding, no nn.Embedding)", points=1,
       zh="Embedding 自己查表（不用 F.embedding，也不用 nn.Embedding）")
def test_no_builtin(submission, rng):
    num, dim, padding_idx, weight, cases, result = lookup_run(submission, rng, LOOKUP_KINDS[0])
    no_builtin(result["calls"])
    if not all(matches(r.get("out"), F.embedding(ids, weight, padding_idx=padding_idx), rtol=1e-7, atol=1e-9)
               for (ids, _), r in zip(cases, result["records"])):
        fail("Embedding is not right yet, so there is no lookup of your own to credit: this point comes with outputs that "
             "match F.embedding's.",
             "Embedding 还不正确，所以还没有可以计分的你自己写的查表：输出与 F.embedding 一致之后才能得到这一分。",
             key="by-hand-not-right")
