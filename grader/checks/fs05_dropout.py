"""Hidden checks of fs05: inverted dropout from scratch, a function and a module.

Dropout is random, so it is judged by its effect, never by matching torch's random stream: on a [64, 128] input
of values far from 0, the fraction of entries zeroed is the drop probability (within 0.03: more than 6 standard
errors), every kept entry is exactly x / (1 - p), the mean is preserved, the mask is drawn entry by entry, and
the input is left as it was; in eval mode the output is x itself; p = 0 gives x and p = 1 zeros (no 0 / 0); a
generator seeded alike gives the same mask, another seed another, and torch's global generator is left alone when
one is given. The module follows .train() and .eval(). A wrong effect is named when it is what a known slip does:
the keep and drop probabilities swapped, no scaling, a scale of 1 - p (the old non-inverted dropout) or 1 / p,
one draw per row, scaling at eval time, a NaN at p = 1, a generator ignored.

The draws run in the sandbox (probes): a torch.Generator cannot travel, so the judge sends seeds and the probe
builds the generators.

Kata variants: `variant("prob")` is what the probability argument means: the probability of dropping an entry
(`p`, as torch's F.dropout), or of keeping it (`keep_prob`, as TensorFlow 1's tf.nn.dropout); the argument's
name, the expected fraction, scale and edges, and the messages follow it.
"""

import torch

from grader.checking import Text, check, expect_tensor, fail, probe, recording_calls, variant, verbatim
from grader.checking import forbidden_calls  # the built-ins a rule forbids, by meaning (checking/equivalents.py)

# -- probes (run in the sandbox) ----------------------------------------------------------------


def _recorded(call):
    """call() under a TorchFunctionMode: (its value, the names of the torch functions it called)."""
    names = set()

    with recording_calls(names):
        value = call()
    return value, sorted(names)


@probe
def run(module, x, value, training, seed, global_seed):
    """dropout(x, value, training=..., generator=...) with a generator seeded `seed` (None: no generator given),
    after torch.manual_seed(global_seed) when that is not None. Returns the output, x after the call, and whether
    torch's global generator moved."""
    if global_seed is not None:
        torch.manual_seed(global_seed)
    before = torch.get_rng_state()
    kwargs = {"training": training}
    if seed is not None:
        kwargs["generator"] = torch.Generator().manual_seed(seed)
    given = x.clone()
    out, calls = _recorded(lambda: module.dropout(given, value, **kwargs))
    return {"out": out.detach() if isinstance(out, torch.Tensor) else out, "x_after": given,
            "global_moved": not torch.equal(before, torch.get_rng_state()), "calls": calls}


@probe
def run_module(module, x, value, seed):
    """Dropout(value): its output in train mode (after torch.manual_seed(seed)), after .eval(), after .train()
    again; its parameters and whether it is an nn.Module."""
    layer = module.Dropout(value)
    info = {"is_module": isinstance(layer, torch.nn.Module), "type": type(layer).__name__}
    if not info["is_module"]:
        return info
    torch.manual_seed(seed)
    train, calls = _recorded(lambda: layer(x.clone()))
    layer.eval()
    evaluated = layer(x.clone())
    layer.train()
    again = layer(x.clone())
    info.update(train=train.detach(), eval=evaluated.detach(), again=again.detach(),
                params=[name for name, _ in layer.named_parameters()], calls=calls)
    return info


# -- judge-side helpers -------------------------------------------------------------------------

def prob() -> dict:
    """This draw's meaning of the probability argument: {"name": "drop" or "keep", "arg": "p" or "keep_prob"...}."""
    return variant("prob")


def value_of(p_drop: float) -> float:
    """The argument to pass for a drop probability p_drop, in this draw's meaning."""
    return p_drop if prob()["name"] == "drop" else 1 - p_drop


def call_text(value, training=True, generator=False) -> Text:
    args = f"{prob()['arg']}={value:.3g}" + ("" if training else ", training=False") + \
        (", generator=g" if generator else "")
    return Text("`dropout(x, {args})`", "`dropout(x, {args})`", args=verbatim(args))


def draw_x(rng, dtype=torch.float32):
    """[64, 128] values in [1, 5): far from 0, so a zero in the output is a dropped entry and nothing else, and of
    one sign, so their mean (about 3) says whether dropout preserves it."""
    return (1 + 4 * torch.rand(64, 128, generator=rng)).to(dtype)


def draw_p(rng) -> float:
    """A drop probability in [0.2, 0.35]: far from 1/2, so keeping with probability p shows."""
    return float(torch.empty(()).uniform_(0.2, 0.35, generator=rng))


def by_hand(calls, what) -> None:
    """An effect torch's own dropout produced is not earned here (the ex05 rule)."""
    used = forbidden_calls("dropout", calls)
    if used:
        fail("{what} calls torch's own `{name}` (F.dropout, torch.dropout or nn.Dropout): the point is to draw the "
             "mask and scale yourself.",
             "{what} 调用了 torch 自带的 `{name}`（F.dropout、torch.dropout 或 nn.Dropout）：本题要你自己抽取掩码并缩放。",
             what=what, name=verbatim(used[0]), key="builtin-dropout")


def judge_train(out, x, p_drop, what) -> None:
    """The effect of inverted dropout in train mode on `x` with drop probability p_drop, slips named."""
    out = expect_tensor(out, what, shape=list(x.shape), floating=True)
    if out.dtype != x.dtype:
        fail("{what} returned {got} for a {want} input: keep the input's dtype.",
             "{what} 对 {want} 的输入返回了 {got}：请保持输入的 dtype。", what=what,
             got=str(out.dtype).removeprefix("torch."), want=str(x.dtype).removeprefix("torch."), key="wrong-dtype")
    o, v = out.double(), x.double()
    if not torch.isfinite(o).all():
        fail("{what} has NaN or inf values.", "{what} 含有 NaN 或 inf。", what=what, key="nan")
    zeroed = o == 0
    fraction = float(zeroed.double().mean())
    arg, p_value = verbatim(prob()["arg"]), value_of(p_drop)
    values = dict(what=what, fraction=fraction, p=p_drop, arg=arg, value=p_value, keep=1 - p_drop)
    if fraction == 0:
        fail("{what} zeroed no entry (expected about {p:.0%} of them): in training mode, dropout zeroes each entry "
             "with probability {p:.3g}.",
             "{what} 没有把任何元素置零（应约有 {p:.0%}）：训练模式下，dropout 以 {p:.3g} 的概率把每个元素置零。",
             **values, key="no-drop")
    if abs(fraction - (1 - p_drop)) < 0.03:
        fail("{what} zeroed {fraction:.1%} of the entries, expected about {p:.0%}: the mask keeps where it should drop. "
             "{meaning}",
             "{what} 把 {fraction:.1%} 的元素置零了，应约为 {p:.0%}：掩码在该丢弃的地方保留了。{meaning}",
             **values, meaning=Text(prob()["meaning"], prob()["meaning_zh"]), key="keep-drop-swapped")
    kept = ~zeroed
    ratios = o[kept] / v[kept]
    scale = float(ratios.median()) if ratios.numel() else 0.0
    scales = [(1.0, "no-scaling", "the kept entries are not scaled: the output's mean shrinks to {keep:.3g} times "
                                  "the input's. Inverted dropout divides the kept entries by the keep probability, "
                                  "{keep:.3g}, so the mean stays and eval needs no change.",
               "保留的元素没有缩放：输出的均值缩小为输入的 {keep:.3g} 倍。inverted dropout 要把保留的元素除以"
               "保留概率 {keep:.3g}，这样均值不变，eval 时也无需任何改动。"),
              (1 - p_drop, "scaled-by-keep", "the kept entries are multiplied by the keep probability {keep:.3g} (the "
                                             "old dropout scaled at test time); inverted dropout divides by it.",
               "保留的元素乘以了保留概率 {keep:.3g}（旧式 dropout 在测试时才缩放）；inverted dropout 要除以它。"),
              (1 / p_drop, "scaled-by-drop", "the kept entries are divided by the drop probability {p:.3g}; divide by "
                                             "the keep probability, {keep:.3g}.",
               "保留的元素除以了丢弃概率 {p:.3g}；应除以保留概率 {keep:.3g}。")]
    if ratios.numel() and torch.allclose(ratios, torch.full_like(ratios, scale), rtol=1e-3):
        for factor, key, en, zh in scales:
            if abs(scale / factor - 1) < 1e-3 and abs(factor * (1 - p_drop) - 1) > 1e-3:
                fail("{what} is wrong: " + en, "{what} 不对：" + zh, **values, key=key)
    rows = zeroed.all(dim=1) | kept.all(dim=1)
    # one draw per row shows rows of both kinds: all zeroed and all kept (every entry zeroed, or none, is no row draw)
    if float(rows.double().mean()) > 0.5 and bool(zeroed.all(dim=1).any()) and bool(kept.all(dim=1).any()):
        fail("{what} drops whole rows ({k} of {n} rows all zeroed or all kept): one draw per row, not per entry. "
             "Draw a mask of x's full shape.",
             "{what} 整行整行地丢弃（{n} 行中有 {k} 行全为 0 或全被保留）：每行只抽了一次，而不是每个元素抽一次。"
             "请抽取与 x 形状相同的掩码。", what=what, k=int(rows.sum()), n=len(rows), key="mask-per-row")
    if abs(fraction - p_drop) > 0.03:
        fail("{what} zeroed {fraction:.1%} of the entries, expected {p:.1%} (within 3 points over {n} entries).",
             "{what} 把 {fraction:.1%} 的元素置零了，应为 {p:.1%}（{n} 个元素，误差 3 个百分点以内）。",
             **values, n=x.numel(), key="wrong-fraction")
    rtol = 1e-2 if x.dtype in (torch.float16, torch.bfloat16) else 1e-5
    want = v[kept] / (1 - p_drop)
    wrong = ~torch.isclose(o[kept], want, rtol=rtol, atol=0)
    if wrong.any():
        fail("{what}: {bad} kept entries are not x / {keep:.3g} (x divided by the keep probability); the first one is "
             "{got:.6g} where x / {keep:.3g} is {want:.6g}.",
             "{what}：有 {bad} 个保留的元素不等于 x / {keep:.3g}（x 除以保留概率）；第一个是 {got:.6g}，"
             "而 x / {keep:.3g} 是 {want:.6g}。", **values, bad=int(wrong.sum()), got=float(o[kept][wrong][0]),
             want=float(want[wrong][0]), key="wrong-scale")
    if abs(float(o.mean()) / float(v.mean()) - 1) > 0.1:
        fail("{what} has mean {got:.4g} where x has {want:.4g}: inverted dropout keeps the mean.",
             "{what} 的均值为 {got:.4g}，而 x 的均值为 {want:.4g}：inverted dropout 保持均值不变。", what=what,
             got=float(o.mean()), want=float(v.mean()), key="mean-changed")


# -- the function -------------------------------------------------------------------------------

@check("in training mode, dropout zeroes the right fraction, scales the kept entries by 1 / keep probability, "
       "leaves x alone", points=3,
       zh="训练模式下，dropout 置零的比例正确，保留的元素乘以 1 / 保留概率，不改动 x")
def test_train_effect(submission, rng):
    for dtype in (torch.float32, torch.float16):
        x, p_drop = draw_x(rng, dtype), draw_p(rng)
        seed = int(torch.randint(0, 2 ** 31, (), generator=rng))
        what = call_text(value_of(p_drop), generator=True)
        result = submission.probe(run, x, value_of(p_drop), True, seed, None, what=what)
        if isinstance(result["x_after"], torch.Tensor) and not torch.equal(result["x_after"], x):
            fail("{what} changed its input x in place (mul_, masked_fill_ or an assignment into x): the caller's "
                 "activations are gone, and autograd may need them. Compute into a new tensor.",
                 "{what} 原地修改了输入 x（mul_、masked_fill_ 或对 x 赋值）：调用者的激活值没了，而 autograd 可能还需要它们。"
                 "请把结果算到新的 tensor 里。", what=what, key="input-modified")
        by_hand(result["calls"], what)
        judge_train(result["out"], x, p_drop, what)


@check("in eval mode (training=False), dropout returns x unchanged", points=1,
       zh="评估模式下（training=False），dropout 原样返回 x", depends="train_effect")
def test_eval_identity(submission, rng):
    x, p_drop = draw_x(rng), draw_p(rng)
    what = call_text(value_of(p_drop), training=False)
    out = expect_tensor(submission.probe(run, x, value_of(p_drop), False, 0, None, what=what)["out"], what,
                        shape=list(x.shape), floating=True)
    if torch.equal(out, x):
        return
    if torch.allclose(out.double(), x.double() * (1 - p_drop), rtol=1e-5):
        fail("{what} returns x * {keep:.3g}: that is the old dropout, which scales at test time. Inverted dropout "
             "already scaled in training, so eval returns x as it is.",
             "{what} 返回的是 x * {keep:.3g}：这是旧式 dropout，在测试时才缩放。inverted dropout 在训练时已经缩放过了，"
             "所以 eval 时原样返回 x。", what=what, keep=1 - p_drop, key="scaled-at-eval")
    if bool((out == 0).any()):
        fail("{what} still drops entries ({n} zeros): with training=False, dropout is the identity.",
             "{what} 仍然在丢弃元素（有 {n} 个 0）：training=False 时 dropout 是恒等映射。", what=what,
             n=int((out == 0).sum()), key="drops-in-eval")
    fail("{what} changes x: with training=False, dropout returns x unchanged.",
         "{what} 改变了 x：training=False 时 dropout 原样返回 x。", what=what, key="eval-not-identity")


@check("the edges: nothing dropped returns x exactly, everything dropped returns zeros (no 0 / 0)", points=2,
       zh="边界情况：什么都不丢弃时正好返回 x，全部丢弃时返回 0（没有 0 / 0）", depends="train_effect")
def test_edges(submission, rng):
    x = draw_x(rng)
    for p_drop in (0.0, 1.0):
        what = call_text(value_of(p_drop), generator=True)
        out = expect_tensor(submission.probe(run, x, value_of(p_drop), True, 1, None, what=what)["out"], what,
                            shape=list(x.shape), floating=True)
        if p_drop == 0.0 and not torch.equal(out, x):
            fail("{what} should return x exactly (nothing is dropped, and the scale is 1), got {n} entries changed.",
                 "{what} 应正好返回 x（什么都不丢弃，缩放为 1），实际有 {n} 个元素变了。", what=what,
                 n=int((out != x).sum()), key="not-identity-when-nothing-dropped")
        if p_drop == 1.0:
            if not torch.isfinite(out).all():
                fail("{what} gives NaN: with every entry dropped, x * 0 / 0 is 0 / 0. Return zeros in this case before "
                     "dividing (torch.zeros_like(x)).",
                     "{what} 得到 NaN：所有元素都被丢弃时，x * 0 / 0 就是 0 / 0。这种情况下在做除法之前直接返回 0"
                     "（torch.zeros_like(x)）。", what=what, key="nan-when-all-dropped")
            if bool((out != 0).any()):
                fail("{what} should be all zeros (every entry dropped), got {n} nonzero entries.",
                     "{what} 应全为 0（所有元素都被丢弃），实际有 {n} 个非零元素。", what=what,
                     n=int((out != 0).sum()), key="not-zero-when-all-dropped")


@check("a generator seeded alike gives the same mask, another seed another; given one, torch's global generator is "
       "left alone; without one, torch.manual_seed reproduces the draw", points=2,
       zh="以相同种子初始化的生成器给出相同的掩码，不同种子给出不同的掩码；传入生成器时不动 torch 的全局生成器；"
          "不传时 torch.manual_seed 能复现抽取结果", depends="train_effect")
def test_generator(submission, rng):
    x, p_drop = draw_x(rng)[:16], draw_p(rng)
    value = value_of(p_drop)
    seed = int(torch.randint(0, 2 ** 30, (), generator=rng))
    what = call_text(value, generator=True)
    first, again, other = (submission.probe(run, x, value, True, s, 7, what=what) for s in (seed, seed, seed + 1))
    drawn = first["out"] != 0
    if torch.equal(first["out"], other["out"]) and bool(drawn.any()) and not bool(drawn.all()):  # a mask to compare
        if first["global_moved"]:
            fail("{what} gives the same mask for generators seeded {a} and {b}, and draws from torch's global generator "
                 "instead: the generator passed in is not used. Pass it to the draw: torch.rand(x.shape, "
                 "generator=generator) or torch.bernoulli(..., generator=generator).",
                 "对种子为 {a} 和 {b} 的生成器，{what} 给出了相同的掩码，而且是从 torch 的全局生成器抽取的：传入的生成器"
                 "没有被使用。请把它传给抽取函数：torch.rand(x.shape, generator=generator) 或 "
                 "torch.bernoulli(..., generator=generator)。", what=what, a=seed, b=seed + 1, key="generator-ignored")
        fail("{what} gives the same mask for generators seeded {a} and {b}: the draw does not depend on the generator "
             "(a fixed seed inside?).",
             "对种子为 {a} 和 {b} 的生成器，{what} 给出了相同的掩码：抽取结果与生成器无关（内部固定了种子？）。",
             what=what, a=seed, b=seed + 1, key="fixed-mask")
    if not torch.equal(first["out"], again["out"]):
        fail("Two calls {what} with generators seeded alike ({seed}) gave different masks: the generator passed in is "
             "not what the mask is drawn from (random, NumPy?). Pass it to the draw: torch.rand(x.shape, "
             "generator=generator) or torch.bernoulli(..., generator=generator).",
             "两次调用 {what}，生成器的种子相同（{seed}），得到的掩码却不同：掩码不是从传入的生成器抽取的（用了 random 或 "
             "NumPy？）。请把它传给抽取函数：torch.rand(x.shape, generator=generator) 或 "
             "torch.bernoulli(..., generator=generator)。", what=what, seed=seed, key="generator-ignored")
    if first["global_moved"]:
        fail("{what} drew from torch's global generator although a generator was given: other code's random numbers "
             "change with it. Draw from the generator given, and from the global one only when it is None.",
             "传入了生成器，{what} 却从 torch 的全局生成器抽取：其他代码的随机数会因此改变。请从传入的生成器抽取，"
             "只有它为 None 时才用全局生成器。", what=what, key="global-generator-used")
    plain = call_text(value)
    first, again = (submission.probe(run, x, value, True, None, seed, what=plain) for _ in range(2))
    if not torch.equal(first["out"], again["out"]):
        fail("Without a generator, {what} after torch.manual_seed({seed}) gives a different mask each time: without "
             "one, draw from torch's global generator (generator=None does), so that torch.manual_seed reproduces it.",
             "不传生成器时，在 torch.manual_seed({seed}) 之后 {what} 每次给出的掩码都不同：不传生成器时请从 torch 的"
             "全局生成器抽取（generator=None 就是这样），这样 torch.manual_seed 才能复现。",
             what=plain, seed=seed, key="not-reproducible")


# -- the module ---------------------------------------------------------------------------------

@check("the Dropout module drops as dropout does in train mode, is the identity after .eval(), drops again after "
       ".train(), and has no parameters", points=2,
       zh="Dropout 模块在训练模式下与 dropout 一样丢弃，.eval() 之后是恒等映射，.train() 之后又会丢弃，且没有参数",
       depends="train_effect")
def test_module(submission, rng):
    x, p_drop = draw_x(rng), draw_p(rng)
    value = value_of(p_drop)
    layer = Text("`Dropout({value:.3g})`", "`Dropout({value:.3g})`", value=value)
    info = submission.probe(run_module, x, value, int(torch.randint(0, 2 ** 30, (), generator=rng)), what=layer)
    if not info["is_module"]:
        fail("{layer} should be an nn.Module, got {got}: write `class Dropout(nn.Module)`, so .train() and .eval() "
             "switch it.",
             "{layer} 应该是 nn.Module，实际得到 {got}：请写 `class Dropout(nn.Module)`，这样 .train() 和 .eval() "
             "才能切换它。", layer=layer, got=verbatim(info["type"]), key="not-a-module")
    if info["params"]:
        fail("{layer} has parameters ({names}): dropout learns nothing; keep p as a plain attribute.",
             "{layer} 有参数（{names}）：dropout 不学习任何东西；把 p 存成普通属性即可。", layer=layer,
             names=verbatim(", ".join(info["params"])), key="dropout-parameters")
    by_hand(info["calls"], Text("{layer}(x)", "{layer}(x)", layer=layer))
    train = expect_tensor(info["train"], Text("{layer}(x) in train mode", "训练模式下的 {layer}(x)", layer=layer),
                          shape=list(x.shape), floating=True)
    if torch.equal(train, x):
        fail("{layer}(x) in train mode (the default of a new module) returned x unchanged: it must drop, as "
             "dropout(x, {arg}, training=self.training) does.",
             "训练模式下（新模块的默认模式）{layer}(x) 原样返回了 x：它必须像 dropout(x, {arg}, training=self.training) "
             "那样丢弃元素。", layer=layer, arg=verbatim(prob()["arg"]), key="module-never-drops")
    judge_train(train, x, p_drop, Text("{layer}(x) in train mode", "训练模式下的 {layer}(x)", layer=layer))
    if not torch.equal(info["eval"], x):
        fail("{layer}(x) after .eval() changed x: the module must follow self.training, which .eval() sets to False "
             "(pass training=self.training).",
             "调用 .eval() 之后，{layer}(x) 改变了 x：模块必须跟随 self.training，.eval() 会把它设为 False"
             "（传入 training=self.training）。", layer=layer, key="module-ignores-eval")
    if torch.equal(info["again"], x):
        fail("{layer}(x) after .eval() then .train() returned x unchanged: follow self.training on every call, not a "
             "flag fixed once.",
             "先 .eval() 再 .train() 之后，{layer}(x) 原样返回了 x：每次调用都要跟随 self.training，而不是只设一次的标志。",
             layer=layer, key="module-stuck-in-eval")
