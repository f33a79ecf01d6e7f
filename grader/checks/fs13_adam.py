"""Hidden checks of fs13: Adam and AdamW by hand, step by step against torch.optim.Adam and torch.optim.AdamW.

A probe builds the learner's optimizer over float64 parameters the judge drew, sets each step's gradients (some of
them None), calls step(), and records the parameters after every step; it also records whether torch.optim was
used (an Optimizer built, torch.optim's functional adam called, its fused kernels) and what zero_grad() left. The
judge runs torch.optim.Adam / AdamW on the same parameters and gradients (in float64: the comparison is tight), and
names a known slip only when the learner's parameters equal that slip's, computed here by an Adam written out with the
slip: bias correction missing (or on one moment only), eps inside the square root or before the bias correction, the
betas swapped, the first moment not averaged, the decay coupled where it is decoupled and the reverse, the decay not
scaled by lr or applied after the update, one step count for all parameters, a None gradient taken as zeros, the
moments kept in float32.

Gradients are drawn so that each of those slips shows: some entries tiny (below eps), some exactly zero, and large
ones followed by small ones (v then falls, which AMSGrad's running maximum keeps).

Kata variants: `variant("amsgrad")` is whether the optimizers are plain Adam (the exercise as written) or AMSGrad
(amsgrad=True: the running maximum of v in the denominator).
"""

import torch

from grader.checking import (Text, check, expect_tensor, fail, learner_call, patched, probe, recording_calls, relation,
                             relation_key, relation_text, variant, verbatim, where)

# -- probes (run in the sandbox) ---------------------------------------------------------------


@probe
def optimizer_run(module, kind, params, grads, kwargs, zero_after):
    """The learner's `kind` ("Adam" or "AdamW") over copies of `params` with `kwargs`: for each step, the gradients set
    (a None stays None), step(), the parameters recorded; with zero_after, zero_grad() then one more step. Whether
    torch.optim did the work is recorded too."""
    called, built, functional = set(), [], []

    def counting(into, original):
        def counted(*args, **kw):
            into.append(1)
            return original(*args, **kw)
        return counted

    import torch.optim.adam as adam_module
    import torch.optim.adamw as adamw_module
    tensors = [p.clone().requires_grad_(True) for p in params]

    def steps():
        """The optimizer, the tensors after each step, and what zero_grad left (or None)."""
        opt = getattr(module, kind)(tensors, **kwargs)
        records = []
        for step_grads in grads:
            for t, g in zip(tensors, step_grads):
                t.grad = None if g is None else g.clone()
            with recording_calls(called):
                opt.step()
            records.append([t.detach().clone() for t in tensors])
        zeroed = None
        if zero_after:
            opt.zero_grad()
            zeroed = ["none" if t.grad is None else "zeros" if not t.grad.any() else "values" for t in tensors]
            with recording_calls(called):
                opt.step()
            records.append([t.detach().clone() for t in tensors])
        return opt, records, zeroed

    with patched(module, torch.optim.Optimizer, "__init__", counting(built, torch.optim.Optimizer.__init__)), \
            patched(module, adam_module, "adam", counting(functional, adam_module.adam)), \
            patched(module, adamw_module, "adamw", counting(functional, adamw_module.adamw)):
        ran, error = learner_call(module, steps)
    if error and error["not_started"]:
        raise NotImplementedError
    if error:  # the judge quotes it
        return {"error": error}
    opt, records, zeroed = ran
    return {"records": records, "zeroed": zeroed, "torch_optim": bool(built) or bool(functional)
            or isinstance(opt, torch.optim.Optimizer), "calls": sorted(called)}


# -- draws and references (the judge) -------------------------------------------------------------

def uniform(rng, low: float, high: float) -> float:
    return float(low + (high - low) * torch.rand((), generator=rng, dtype=torch.float64))


def amsgrad() -> bool:
    return variant("amsgrad")["name"] == "amsgrad"


SHAPES = ((3, 4), (4,), (1,))


def draw_params(rng) -> list:
    return [torch.randn(*shape, generator=rng, dtype=torch.float64) for shape in SHAPES]


def draw_grads(rng, steps: int = 4, skip=()) -> list:
    """Per step, a gradient per parameter: large on the first step, mostly much smaller after (v falls), some entries
    tiny (below eps), some exactly zero; a (step, parameter) in `skip` has None."""
    scales = [1.0] + [uniform(rng, 0.005, 0.05) for _ in range(steps - 2)] + [uniform(rng, 0.3, 1.0)]
    grads = []
    for k in range(steps):
        row = []
        for i, shape in enumerate(SHAPES):
            g = scales[k] * torch.randn(*shape, generator=rng, dtype=torch.float64)
            flat = g.view(-1)
            if flat.numel() > 2:
                flat[int(torch.randint(0, flat.numel(), (), generator=rng))] = 0.0
                flat[int(torch.randint(0, flat.numel(), (), generator=rng))] *= 1e-4  # below eps
            row.append(None if (k, i) in skip else g)
        grads.append(row)
    return grads


def draw_settings(rng, weight_decay: float | None = None) -> dict:
    settings = {"lr": uniform(rng, 0.01, 0.1), "betas": (uniform(rng, 0.7, 0.9), uniform(rng, 0.95, 0.99)),
                "eps": 10 ** uniform(rng, -4, -3)}
    if weight_decay is not None:
        settings["weight_decay"] = weight_decay
    return settings


def reference(kind: str, params, grads, kwargs, zero_after=False) -> list:
    """torch.optim's own optimizer over the same steps: the parameters after each."""
    tensors = [p.clone().requires_grad_(True) for p in params]
    opt = getattr(torch.optim, kind)(tensors, amsgrad=amsgrad(), **kwargs)
    records = []
    for step_grads in grads:
        for t, g in zip(tensors, step_grads):
            t.grad = None if g is None else g.clone()
        opt.step()
        records.append([t.detach().clone() for t in tensors])
    if zero_after:
        opt.zero_grad()
        opt.step()
        records.append([t.detach().clone() for t in tensors])
    return records


def written_out(params, grads, lr, betas, eps, weight_decay=0.0, *, decoupled=False, correct1=True, correct2=True,
                eps_at="outside", swap_betas=False, average_m=True, decay_lr=True, decay_after=False,
                global_step=False, none_as_zero=False, max_v=None, dtype=torch.float64) -> list:
    """Adam written out here, with a known slip as keywords: the parameters after each step."""
    beta1, beta2 = betas[::-1] if swap_betas else betas
    max_v = amsgrad() if max_v is None else max_v
    ps = [p.clone() for p in params]
    state = [{"t": 0, "m": torch.zeros_like(p, dtype=dtype), "v": torch.zeros_like(p, dtype=dtype),
              "vmax": torch.zeros_like(p, dtype=dtype)} for p in params]
    clock, records = 0, []
    for step_grads in grads:
        clock += 1
        for p, g, s in zip(ps, step_grads, state):
            if g is None and not none_as_zero:
                continue
            g = torch.zeros_like(p) if g is None else g
            if decoupled and not decay_after:
                p.mul_(1 - (lr if decay_lr else 1.0) * weight_decay)
            if not decoupled:
                g = g + weight_decay * p
            s["t"] += 1
            t = clock if global_step else s["t"]
            s["m"] = beta1 * s["m"] + (1 - beta1 if average_m else 1.0) * g.to(dtype)
            s["v"] = beta2 * s["v"] + (1 - beta2) * g.to(dtype) ** 2
            s["vmax"] = torch.maximum(s["vmax"], s["v"])
            v = s["vmax"] if max_v else s["v"]
            m_hat = s["m"] / (1 - beta1 ** t) if correct1 else s["m"]
            c2 = (1 - beta2 ** t) if correct2 else 1.0
            denom = {"outside": (v / c2).sqrt() + eps, "inside": (v / c2 + eps).sqrt(),
                     "before": (v.sqrt() + eps) / c2 ** 0.5}[eps_at]
            p.sub_((lr * m_hat / denom).to(p.dtype))
            if decoupled and decay_after:
                p.mul_(1 - (lr if decay_lr else 1.0) * weight_decay)
        records.append([p.clone() for p in ps])
    return records


def close_records(got: list, want: list, rtol=1e-9, atol=1e-12) -> bool:
    return len(got) == len(want) and all(
        isinstance(a, torch.Tensor) and a.shape == b.shape and bool(torch.allclose(a.double(), b, rtol=rtol, atol=atol))
        for ga, wa in zip(got, want) for a, b in zip(ga, wa))


def moment_slips(params, grads, s: dict, decoupled: bool) -> list:
    """(records, why, key) of the slips of Adam's own formula."""
    common = dict(lr=s["lr"], betas=s["betas"], eps=s["eps"], weight_decay=s.get("weight_decay", 0.01 if decoupled
                                                                                   else 0.0), decoupled=decoupled)
    run = lambda **slip: written_out(params, grads, **common, **slip)  # noqa: E731
    found = [
        (run(correct1=False, correct2=False), Text(
            "there is no bias correction: m and v start at zero, so for the first steps they are too small by the "
            "factors 1 - beta1^t and 1 - beta2^t. Divide m by (1 - beta1^t) and v by (1 - beta2^t), t the step count.",
            "没有偏差修正：m 和 v 从 0 开始，所以前几步它们分别小了 1 - beta1^t 和 1 - beta2^t 倍。请把 m 除以 "
            "(1 - beta1^t)、把 v 除以 (1 - beta2^t)，t 是步数。"), "bias-correction-missing"),
        (run(correct2=False), Text(
            "m is bias-corrected but v is not: both moments start at zero, divide v by (1 - beta2^t) too.",
            "m 做了偏差修正，v 却没有：两个矩都从 0 开始，v 也要除以 (1 - beta2^t)。"), "bias-correction-half"),
        (run(correct1=False), Text(
            "v is bias-corrected but m is not: both moments start at zero, divide m by (1 - beta1^t) too.",
            "v 做了偏差修正，m 却没有：两个矩都从 0 开始，m 也要除以 (1 - beta1^t)。"), "bias-correction-half"),
        (run(eps_at="inside"), Text(
            "eps is inside the square root, sqrt(v_hat + eps): torch.optim adds it outside, sqrt(v_hat) + eps. Where the "
            "gradients are small the two differ by far.",
            "eps 放在了平方根里面，即 sqrt(v_hat + eps)：torch.optim 把它加在外面，sqrt(v_hat) + eps。梯度很小的地方两者相差很大。"),
         "eps-inside-sqrt"),
        (run(eps_at="before"), Text(
            "eps is added before the bias correction of the denominator, (sqrt(v) + eps) / sqrt(1 - beta2^t): "
            "torch.optim corrects first, sqrt(v / (1 - beta2^t)) + eps.",
            "eps 在分母做偏差修正之前就加上了，即 (sqrt(v) + eps) / sqrt(1 - beta2^t)：torch.optim 先修正，"
            "sqrt(v / (1 - beta2^t)) + eps。"), "eps-before-correction"),
        (run(swap_betas=True), Text(
            "the betas are swapped: betas = (beta1, beta2), beta1 for the mean of the gradients m, beta2 for the mean of "
            "their squares v.",
            "betas 用反了：betas = (beta1, beta2)，beta1 用于梯度的均值 m，beta2 用于梯度平方的均值 v。"), "betas-swapped"),
        (run(average_m=False), Text(
            "m = beta1 * m + g is a sum, not an average: m = beta1 * m + (1 - beta1) * g.",
            "m = beta1 * m + g 是求和而不是平均：m = beta1 * m + (1 - beta1) * g。"), "m-not-averaged"),
        (run(dtype=torch.float32), Text(
            "the results are Adam's computed in float32: the moments were made in the default dtype for float64 "
            "parameters (torch.zeros(p.shape)). Make them with torch.zeros_like(p), which keeps p's dtype.",
            "结果相当于在 float32 下计算的 Adam：对 float64 参数，矩却用默认 dtype 创建（`torch.zeros(p.shape)`）。"
            "请用 `torch.zeros_like(p)` 创建，它会保持 p 的 dtype。"), "state-dtype"),
        (run(max_v=not amsgrad()), Text(
            "the denominator uses the running maximum of v (AMSGrad): plain Adam uses v itself.",
            "分母用的是 v 的历史最大值（AMSGrad）：普通的 Adam 直接用 v。") if not amsgrad() else Text(
            "the denominator uses v itself: this optimizer is AMSGrad, which keeps the largest v seen so far "
            "(torch.maximum(v_max, v)) and divides by its square root.",
            "分母直接用了 v：这个优化器是 AMSGrad，它保存到目前为止最大的 v（`torch.maximum(v_max, v)`），并除以它的平方根。"),
         "amsgrad-denominator"),
    ]
    return found


def run_learner(submission, kind, params, grads, kwargs, zero_after=False) -> dict:
    result = submission.probe(optimizer_run, kind, params, grads, kwargs, zero_after,
                              what=Text("your `{kind}` over {n} steps", "你的 `{kind}` 运行 {n} 步", kind=kind, n=len(grads)))
    if "error" in result:
        err = result["error"]
        fail("Your {kind} raised {type}: {message}{where}.", "你的 {kind} 抛出了 {type}：{message}{where}。", kind=kind,
             type=verbatim(err["type"]), message=verbatim(err["message"].splitlines()[0][:200] if err["message"] else ""),
             where=where(err), key=f"raised-{err['type']}")
    return result


def no_torch_optim(result: dict, kind: str) -> None:
    used = [n for n in result["calls"] if "adam" in n.lower()]
    if result["torch_optim"] or used:
        fail("Your {kind} lets torch.optim do the work (an Optimizer built inside it, or torch.optim's adam function or "
             "kernels called): its values are torch's, not yours. Write the update with tensor operations.",
             "你的 {kind} 让 torch.optim 做了这些工作（在内部创建了 Optimizer，或调用了 torch.optim 的 adam 函数或内核）："
             "这些值是 torch 算的，不是你算的。请用张量运算写出更新。", kind=kind, key="torch-optim-used")


def step_text(kind: str, kwargs: dict) -> Text:
    shown = ", ".join(f"{k}={tuple(round(b, 4) for b in v) if k == 'betas' else f'{v:.4g}'}" for k, v in kwargs.items())
    return Text("{kind}(params, {shown})", "{kind}(params, {shown})", kind=verbatim(kind), shown=verbatim(shown))


def expect_run(result: dict, want: list, what: Text, slips) -> None:
    """The learner's parameters after each step against torch.optim's, the first wrong step named with the slip
    (`slips()` makes them: only when a step is wrong)."""
    got = result["records"]
    for k, (got_step, want_step) in enumerate(zip(got, want)):
        for i, (a, b) in enumerate(zip(got_step, want_step)):
            a = expect_tensor(a, Text("parameter {i} after step {k} of {what}", "{what} 第 {k} 步之后的参数 {i}", i=i,
                                      k=k + 1, what=what), shape=list(b.shape))
            if torch.allclose(a.double(), b, rtol=1e-9, atol=1e-12):
                continue
            for records, why, key in slips():
                if close_records(got[:k + 1], records[:k + 1], rtol=1e-6 if key == "state-dtype" else 1e-9,
                                 atol=1e-9 if key == "state-dtype" else 1e-12):
                    fail("{what}: the parameters after step {k} differ from torch.optim's: {why}",
                         "{what}：第 {k} 步之后的参数与 torch.optim 不同：{why}", what=what, k=k + 1, why=why, key=key)
            bad = ~torch.isclose(a.double(), b, rtol=1e-9, atol=1e-12)
            idx = [int(j) for j in bad.nonzero()[0]]
            before = (want[k - 1][i] if k else None)
            rel = relation(a.double() - before, b - before) if before is not None else None
            how = Text("; its change {relation}", "；它的变化量{relation}", relation=relation_text(rel)) if rel else ""
            fail("{what}: parameter {i} after step {k} is {got:.10g} at {idx} where torch.optim gives {want:.10g} "
                 "({bad} of {total} entries differ{how}).",
                 "{what}：第 {k} 步之后参数 {i} 在 {idx} 处为 {got:.10g}，torch.optim 给出 {want:.10g}"
                 "（{total} 个元素中有 {bad} 个不同{how}）。", what=what, i=i, k=k + 1, got=float(a.double()[tuple(idx)]),
                 want=float(b[tuple(idx)]), idx=idx, bad=int(bad.sum()), total=a.numel(), how=how,
                 key=relation_key(rel) if rel else "wrong-values")


def adam_run(submission, rng):
    def make():
        params, grads, settings = draw_params(rng), draw_grads(rng), draw_settings(rng)
        return params, grads, settings, run_learner(submission, "Adam", params, grads, settings)
    return submission.once("adam", make)


# -- checks -----------------------------------------------------------------------------------------

@check("Adam's steps match torch.optim.Adam's: moments, bias correction, eps", points=3,
       zh="Adam 的每一步与 torch.optim.Adam 一致：矩、偏差修正、eps")
def test_adam_steps(submission, rng):
    params, grads, settings, result = adam_run(submission, rng)
    no_torch_optim(result, "Adam")
    want = reference("Adam", params, grads, settings)
    expect_run(result, want, step_text("Adam", settings), lambda: moment_slips(params, grads, settings, decoupled=False))


@check("Adam's weight decay is an L2 term added to the gradient (coupled), as torch.optim.Adam's", points=2,
       zh="Adam 的 weight decay 是加到梯度上的 L2 项（耦合），与 torch.optim.Adam 相同", depends="adam_steps")
def test_weight_decay(submission, rng):
    params, grads = draw_params(rng), draw_grads(rng)
    settings = draw_settings(rng, weight_decay=uniform(rng, 0.1, 0.3))
    result = run_learner(submission, "Adam", params, grads, settings)
    no_torch_optim(result, "Adam")
    want = reference("Adam", params, grads, settings)
    run = lambda **slip: written_out(params, grads, settings["lr"], settings["betas"], settings["eps"],  # noqa: E731
                                     **{"weight_decay": settings["weight_decay"], **slip})
    slips = lambda: [(run(weight_decay=0.0), Text(  # noqa: E731
        "weight_decay is ignored: Adam adds weight_decay * p to the gradient before the moments.",
        "忽略了 weight_decay：Adam 在计算矩之前把 weight_decay * p 加到梯度上。"), "decay-ignored"),
             (run(decoupled=True), Text(
        "the decay is decoupled, p *= 1 - lr * weight_decay, as AdamW does. Adam's weight decay is L2: it joins the "
        "gradient, g + weight_decay * p, and goes through the moments.",
        "weight decay 被解耦了（p *= 1 - lr * weight_decay），这是 AdamW 的做法。Adam 的 weight decay 是 L2："
        "它加到梯度上（g + weight_decay * p），并参与矩的计算。"), "decay-decoupled-in-adam")] \
        + moment_slips(params, grads, settings, decoupled=False)
    expect_run(result, want, step_text("Adam", settings), slips)


@check("AdamW decouples its weight decay, p *= 1 - lr * weight_decay before the update, as torch.optim.AdamW", points=2,
       zh="AdamW 的 weight decay 是解耦的：在更新之前 p *= 1 - lr * weight_decay，与 torch.optim.AdamW 相同",
       depends="adam_steps")
def test_adamw(submission, rng):
    for decay in (uniform(rng, 0.1, 0.3), None):  # None: AdamW's default weight_decay, 1e-2
        params, grads = draw_params(rng), draw_grads(rng)
        settings = draw_settings(rng, weight_decay=decay)
        result = run_learner(submission, "AdamW", params, grads, settings)
        no_torch_optim(result, "AdamW")
        want = reference("AdamW", params, grads, settings)
        wd = 0.01 if decay is None else decay
        run = lambda **slip: written_out(params, grads, settings["lr"], settings["betas"], settings["eps"],  # noqa: E731
                                         **{"weight_decay": wd, "decoupled": True, **slip})
        slips = lambda: [(run(decoupled=False), Text(  # noqa: E731
            "the decay is coupled, added to the gradient as Adam's L2 term: AdamW decouples it, p *= 1 - lr * "
            "weight_decay, so the moments never see it.",
            "weight decay 是耦合的，像 Adam 的 L2 项那样加到了梯度上：AdamW 把它解耦，p *= 1 - lr * weight_decay，"
            "矩永远看不到它。"), "decay-coupled"),
                 (run(decay_lr=False), Text(
            "the decay is not scaled by lr, p *= 1 - weight_decay: torch.optim.AdamW shrinks by lr * weight_decay.",
            "weight decay 没有乘 lr，即 p *= 1 - weight_decay：torch.optim.AdamW 按 lr * weight_decay 收缩。"),
                  "decay-without-lr"),
                 (run(decay_after=True), Text(
            "the decay is applied after the update: torch.optim.AdamW shrinks p first, then subtracts the update.",
            "weight decay 在更新之后才做：torch.optim.AdamW 先收缩 p，再减去更新量。"), "decay-after-update"),
                 (run(weight_decay=0.0), Text(
            "no decay at all: AdamW's default weight_decay is 1e-2, not 0." if decay is None else
            "weight_decay is ignored: AdamW shrinks p by lr * weight_decay at every step.",
            "完全没有 weight decay：AdamW 的 weight_decay 默认是 1e-2，不是 0。" if decay is None else
            "忽略了 weight_decay：AdamW 每一步都按 lr * weight_decay 收缩 p。"), "adamw-default-decay" if decay is None
                  else "decay-ignored")] + moment_slips(params, grads, settings, decoupled=True)
        expect_run(result, want, step_text("AdamW", settings), slips)


@check("a parameter whose .grad is None is skipped: it does not move, and its own step count does not advance",
       points=1, zh=".grad 为 None 的参数被跳过：它不动，它自己的步数也不增加", depends="adam_steps")
def test_skipped(submission, rng):
    params = draw_params(rng)
    grads = draw_grads(rng, steps=5, skip={(1, 1), (2, 1), (0, 2)})
    settings = draw_settings(rng)
    result = run_learner(submission, "Adam", params, grads, settings)
    no_torch_optim(result, "Adam")
    want = reference("Adam", params, grads, settings)
    run = lambda **slip: written_out(params, grads, settings["lr"], settings["betas"], settings["eps"], **slip)  # noqa
    slips = lambda: [(run(none_as_zero=True), Text(  # noqa: E731
        "a parameter whose gradient is None still moved: it was stepped as if its gradient were zeros (m keeps "
        "pushing it). torch.optim skips a parameter without a gradient: no update, no change to its state.",
        "梯度为 None 的参数仍然动了：它被当作梯度为 0 来更新（m 仍在推动它）。torch.optim 会跳过没有梯度的参数："
        "不更新，也不改变它的状态。"), "none-as-zero"),
             (run(global_step=True), Text(
        "the bias correction uses one step count for all parameters: a parameter that was skipped has taken fewer "
        "steps, and torch.optim keeps a count per parameter (state[p][\"step\"]).",
        "偏差修正对所有参数用了同一个步数：被跳过的参数走过的步数更少，torch.optim 为每个参数各自计数"
        "（`state[p][\"step\"]`）。"), "global-step")] + moment_slips(params, grads, settings, decoupled=False)
    expect_run(result, want, step_text("Adam", settings), slips)


@check("zero_grad sets every .grad to None, as torch.optim does by default, and a step after it changes nothing",
       points=1, zh="zero_grad 把每个 .grad 设为 None（torch.optim 的默认做法），之后的 step 不改变任何东西",
       depends="adam_steps")
def test_zero_grad(submission, rng):
    params, grads, settings = draw_params(rng), draw_grads(rng, steps=2), draw_settings(rng)
    result = run_learner(submission, "Adam", params, grads, settings, zero_after=True)
    no_torch_optim(result, "Adam")
    zeroed = result["zeroed"]
    if zeroed is not None and any(z == "values" for z in zeroed):
        fail("After zero_grad(), some .grad still holds values: clear every parameter's gradient.",
             "zero_grad() 之后，有的 .grad 仍然有值：请清除每个参数的梯度。", key="grad-not-cleared")
    if zeroed is not None and any(z == "zeros" for z in zeroed):
        fail("After zero_grad(), .grad holds zeros: torch.optim's default (set_to_none=True) sets it to None. It matters "
             "for Adam: a zero gradient is still a step (m keeps moving the parameter), while None skips it.",
             "zero_grad() 之后 .grad 是全 0：torch.optim 的默认做法（set_to_none=True）是把它设为 None。这对 Adam 很重要："
             "梯度为 0 仍然会走一步（m 还在推动参数），而 None 会跳过它。", key="zero-grad-zeros")
    want = reference("Adam", params, grads, settings, zero_after=True)
    expect_run(result, want, step_text("Adam", settings), lambda: moment_slips(params, grads, settings, False))


@check("Adam and AdamW are your own: torch.optim does none of the work", points=1,
       zh="Adam 和 AdamW 是你自己写的：torch.optim 没有做任何工作")
def test_no_torch_optim(submission, rng):
    params, grads, settings, result = adam_run(submission, rng)
    no_torch_optim(result, "Adam")
    if not close_records(result["records"], reference("Adam", params, grads, settings)):
        fail("Adam is not right yet, so there is no optimizer of your own to credit: this point comes with steps that "
             "match torch.optim.Adam's.",
             "Adam 还不正确，所以还没有可以计分的你自己写的优化器：每一步都与 torch.optim.Adam 一致之后才能得到这一分。",
             key="by-hand-not-right")
