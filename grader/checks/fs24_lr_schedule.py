"""Hidden checks of fs24: a learning-rate schedule, linear warm-up then cosine decay to a minimum, as a LambdaLR.

A probe calls the learner's warmup_cosine(step, warmup_steps, total_steps, min_ratio) for a run of steps in the
sandbox and returns the values (and their Python types); another builds an SGD optimizer with two param groups of
different learning rates, the learner's make_scheduler on it, and records each group's lr before each
optimizer.step() / scheduler.step(). The judge draws warmup_steps in 3..6, total_steps 6 to 12 steps later, a
min_ratio in [0.05, 0.3], and compares with the schedule computed here (the formula of Hugging Face's
get_cosine_with_min_lr_schedule_with_warmup, the ramp as the draw says). A classic mistake is named only when the
whole run of values is what that mistake computes: the other warm-up ramp, the decay spread over all total_steps,
a full cosine period, no clamp after total_steps, min_ratio ignored or not scaled, a lambda one step ahead, an
absolute lr where LambdaLR wants a multiplier, every group given the first group's lr.

Kata variants: `variant("warmup")` is the ramp, "hf" step / warmup_steps or "nanogpt" (step + 1) / (warmup_steps + 1).
"""

import math

import torch

from grader.checking import Text, check, fail, fail_raised, is_number, learner_call, matches, probe, variant, verbatim

# -- probes (run in the sandbox) ----------------------------------------------------------------


@probe
def multipliers(module, steps, warmup_steps, total_steps, min_ratio):
    """warmup_cosine at each step: the values as floats, their type names, or the first error."""
    values, types = [], []
    for step in steps:
        value, error = learner_call(module, module.warmup_cosine, step, warmup_steps, total_steps, min_ratio)
        if error is not None:
            return {"error": error, "step": step}
        types.append(type(value).__name__ if not isinstance(value, float) else "float")
        values.append(float(value) if isinstance(value, (int, float, torch.Tensor)) else None)
    return {"values": values, "types": types}


@probe
def scheduled(module, lrs, warmup_steps, total_steps, min_ratio, steps):
    """Each param group's lr before each of `steps` optimizer.step() / scheduler.step(), with the learner's
    make_scheduler on an SGD optimizer of one group per lr in `lrs`."""
    params = [torch.nn.Parameter(torch.zeros(1)) for _ in lrs]
    optimizer = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, lrs)], lr=lrs[0])
    scheduler, error = learner_call(module, module.make_scheduler, optimizer, warmup_steps, total_steps, min_ratio)
    if error is not None:
        return {"error": error}
    seen = []
    for _ in range(steps):
        seen.append([float(g["lr"]) for g in optimizer.param_groups])
        optimizer.step()
        _, error = learner_call(module, scheduler.step)
        if error is not None:
            return {"error": error}
    return {"lrs": seen}


# -- judge-side helpers -------------------------------------------------------------------------

def ramp() -> str:
    return variant("warmup")["name"]


def reference(step, warmup_steps, total_steps, min_ratio, how=None):
    """The multiplier at `step`, as the statement defines it (the ramp as `how`, else the draw, says)."""
    if step < warmup_steps:
        return step / warmup_steps if (how or ramp()) == "hf" else (step + 1) / (warmup_steps + 1)
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def decay(progress, min_ratio):
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def candidates(steps, w, total, m) -> list:
    """(values, key, English, Chinese) for each known mistake, over the same steps."""
    other = "nanogpt" if ramp() == "hf" else "hf"

    def run(f):
        return [reference(s, w, total, m) if s < w else f(s) for s in steps]

    return [
        ([reference(s, w, total, m, other) for s in steps], "warmup-off-by-one",
         "the warm-up ramp is {other_ramp}; this schedule's is {ramp}.", "预热的斜坡写成了 {other_ramp}；本题的是 {ramp}。"),
        (run(lambda s: decay(min(1.0, s / total), m)), "decay-over-total",
         "the cosine's progress counts from step 0 (step / total_steps); it starts after the warm-up: (step - "
         "warmup_steps) / (total_steps - warmup_steps).",
         "余弦的进度从第 0 步算起（step / total_steps）；它应从预热结束后开始：(step - warmup_steps) / "
         "(total_steps - warmup_steps)。"),
        (run(lambda s: decay(min(1.0, (s - w) / total), m)), "decay-over-total",
         "the cosine's progress divides by total_steps; the decay spans the steps after the warm-up: divide by "
         "total_steps - warmup_steps.",
         "余弦的进度除以了 total_steps；衰减覆盖的是预热之后的步：应除以 total_steps - warmup_steps。"),
        (run(lambda s: m + (1 - m) * 0.5 * (1 + math.cos(2 * math.pi * min(1.0, (s - w) / max(1, total - w))))),
         "full-period",
         "that is a full cosine period: it comes back up to 1 at total_steps; half a period, cos(pi * progress), "
         "falls from 1 to min_ratio.",
         "这是一个完整的余弦周期：到 total_steps 时又升回 1；半个周期 cos(pi * progress) 才是从 1 降到 min_ratio。"),
        (run(lambda s: decay((s - w) / max(1, total - w), m)), "not-clamped",
         "after total_steps the cosine goes on and rises again; clamp the progress to 1 so it stays at min_ratio.",
         "total_steps 之后余弦继续走，又升了回去；要把进度截断到 1，让它停在 min_ratio。"),
        (run(lambda s: decay(min(1.0, (s - w) / max(1, total - w)), 0.0)), "min-ignored",
         "min_ratio was ignored: the decay ends at 0, not at min_ratio.", "忽略了 min_ratio：衰减停在 0，而不是 min_ratio。"),
        (run(lambda s: (1 - m) * decay(min(1.0, (s - w) / max(1, total - w)), 0.0)), "min-ignored",
         "the decay ends at 0, not at min_ratio: add min_ratio to (1 - min_ratio) * the cosine.",
         "衰减停在 0，而不是 min_ratio：要在 (1 - min_ratio) * 余弦上再加 min_ratio。"),
        (run(lambda s: m + decay(min(1.0, (s - w) / max(1, total - w)), 0.0)), "min-unscaled",
         "min_ratio was added to the whole cosine, so the peak is 1 + min_ratio; scale the cosine by (1 - min_ratio).",
         "min_ratio 加在了整个余弦上，峰值变成 1 + min_ratio；余弦要乘以 (1 - min_ratio)。"),
    ]


def agrees(a, b) -> bool:
    return a is not None and matches(a, b, rtol=1e-5, atol=1e-6)  # float32 arithmetic is right too


def expect_schedule(submission, steps, w, total, m) -> None:
    """warmup_cosine over `steps` matches the reference; a known mistake is named, else the first wrong step."""
    call = f"warmup_cosine(step, warmup_steps={w}, total_steps={total}, min_ratio={m:g})"
    got = submission.probe(multipliers, steps, w, total, m, what=f"`{call}`")
    if "error" in got:
        fail_raised(got["error"], f"`warmup_cosine({got['step']}, {w}, {total}, {m:g})`",
                    ("warmup_steps may be 0: no warm-up, and no division by it.",
                     "warmup_steps 可以是 0：没有预热，也不能除以它。") if w == 0 else None)
    values = got["values"]
    want = [reference(s, w, total, m) for s in steps]
    if all(agrees(v, e) for v, e in zip(values, want)):
        return
    draw = variant("warmup")
    for wrong, key, en, zh in candidates(steps, w, total, m):
        if all(agrees(v, e) for v, e in zip(values, wrong)):
            fail("{call} over steps {first}..{last} gives {got}, expected {want}: " + en,
                 "{call} 在第 {first}..{last} 步给出 {got}，应为 {want}：" + zh, call=verbatim(call), first=steps[0],
                 last=steps[-1], got=rounded(values), want=rounded(want), ramp=verbatim(draw["ramp"]),
                 other_ramp=verbatim(draw["other_ramp"]), key=key)
    i = next(i for i, (v, e) in enumerate(zip(values, want)) if not agrees(v, e))
    fail("warmup_cosine({step}, {w}, {total}, {m}) is {got}, expected {want:.6g} (the run over steps {first}..{last}: "
         "{gots}, expected {wants}).",
         "warmup_cosine({step}, {w}, {total}, {m}) 为 {got}，应为 {want:.6g}（第 {first}..{last} 步：{gots}，应为 "
         "{wants}）。", step=steps[i], w=w, total=total, m=verbatim(f"{m:g}"), got=values[i], want=want[i],
         first=steps[0], last=steps[-1], gots=rounded(values), wants=rounded(want), key="wrong-values")


def rounded(values):
    return verbatim(str([None if v is None else round(v, 4) for v in values]))


def sizes(rng):
    w = int(torch.randint(3, 7, (), generator=rng))
    return w, w + int(torch.randint(6, 13, (), generator=rng))


def min_ratio_of(rng) -> float:
    return round(float(torch.empty(()).uniform_(0.05, 0.3, generator=rng)), 3)


# -- the checks ---------------------------------------------------------------------------------

@check("warmup_cosine ramps up linearly during the warm-up, as this draw's ramp", points=2,
       zh="warmup_cosine 在预热期间按本题的斜坡线性上升")
def test_warmup(submission, rng):
    w, total = sizes(rng)
    expect_schedule(submission, list(range(w)), w, total, 0.0)


@check("after the warm-up, warmup_cosine falls from 1 to 0 along half a cosine, reached at total_steps", points=2,
       zh="预热之后，warmup_cosine 沿半个余弦从 1 降到 0，在 total_steps 时到达", depends="warmup")
def test_cosine(submission, rng):
    w, total = sizes(rng)
    expect_schedule(submission, list(range(total + 1)), w, total, 0.0)


@check("after total_steps, warmup_cosine stays at min_ratio", points=1,
       zh="total_steps 之后，warmup_cosine 保持在 min_ratio", depends="cosine")
def test_after_total(submission, rng):
    w, total = sizes(rng)
    m = min_ratio_of(rng)
    expect_schedule(submission, list(range(total - 2, 2 * total)), w, total, m)


@check("min_ratio is where the cosine ends: min_ratio + (1 - min_ratio) * the cosine", points=1,
       zh="min_ratio 是余弦的终点：min_ratio + (1 - min_ratio) * 余弦", depends="cosine")
def test_min_ratio(submission, rng):
    w, total = sizes(rng)
    expect_schedule(submission, list(range(total + 2)), w, total, min_ratio_of(rng))


@check("with warmup_steps = 0 there is no warm-up: the cosine starts at step 0", points=1,
       zh="warmup_steps = 0 时没有预热：余弦从第 0 步开始", depends="cosine")
def test_no_warmup(submission, rng):
    _, total = sizes(rng)
    expect_schedule(submission, list(range(total + 2)), 0, total, min_ratio_of(rng))


@check("warmup_cosine returns a Python float", points=1, zh="warmup_cosine 返回 Python float", depends="warmup")
def test_float(submission, rng):
    w, total = sizes(rng)
    steps = [0, w - 1, w, total, total + 1]
    got = submission.probe(multipliers, steps, w, total, 0.1, what="`warmup_cosine(step, ...)`")
    if "error" in got:
        return  # the value checks name it
    for step, name in zip(steps, got["types"]):
        if name != "float":
            fail("warmup_cosine({step}, ...) returned a {name}, not a Python float: LambdaLR multiplies each group's lr "
                 "by it, and a tensor lr is then stored in the optimizer. Compute it with math (math.cos, math.pi).",
                 "warmup_cosine({step}, ...) 返回的是 {name}，不是 Python float：LambdaLR 用它乘以每组的 lr，返回 tensor "
                 "的话优化器里存的 lr 也会变成 tensor。请用 math 计算（math.cos、math.pi）。", step=step,
                 name=verbatim(name), key="not-a-float")
    if not all(is_number(v, float) for v in got["values"]):
        fail("warmup_cosine returned something that is not a number.", "warmup_cosine 返回的不是数。",
             key="not-a-float")


@check("make_scheduler sets each param group's lr to its own base lr times warmup_cosine(step), step by step",
       points=2, zh="make_scheduler 逐步把每个参数组的 lr 设为它自己的基础 lr 乘以 warmup_cosine(step)", depends="cosine")
def test_scheduler(submission, rng):
    w, total = sizes(rng)
    m = min_ratio_of(rng)
    lrs = [0.1, round(float(torch.empty(()).uniform_(0.01, 0.05, generator=rng)), 4)]
    steps = total + 3
    got = submission.probe(scheduled, lrs, w, total, m, steps,
                           what=Text("`make_scheduler(optimizer, {w}, {total}, {m})` and {steps} steps",
                                     "`make_scheduler(optimizer, {w}, {total}, {m})` 再走 {steps} 步", w=w, total=total,
                                     m=f"{m:g}", steps=steps))
    if "error" in got:
        fail_raised(got["error"], f"`make_scheduler(optimizer, {w}, {total}, {m:g})`, `scheduler.step()`")
    seen = got["lrs"]
    want = [[lr * reference(s, w, total, m) for lr in lrs] for s in range(steps)]

    def matches(rows):
        return all(agrees(v, e) for row, exp in zip(seen, rows) for v, e in zip(row, exp))

    if matches(want):
        return
    known = [
        ([[lr * reference(s + 1, w, total, m) for lr in lrs] for s in range(steps)], "lambda-ahead",
         "the schedule runs one step ahead (warmup_cosine(step + 1)); LambdaLR already counts from 0, and the lr "
         "before the first optimizer.step() is base_lr * warmup_cosine(0).",
         "调度提前了一步（warmup_cosine(step + 1)）；LambdaLR 本身就从 0 开始计数，第一次 optimizer.step() 之前的 lr "
         "是 base_lr * warmup_cosine(0)。"),
        ([[lr * lrs[0] * reference(s, w, total, m) for lr in lrs] for s in range(steps)], "absolute-lr",
         "the lambda returned an lr (the first group's base lr times the multiplier); LambdaLR multiplies what it "
         "returns by each group's base lr itself: return the multiplier only.",
         "lambda 返回的是 lr（第一组的基础 lr 乘以倍数）；LambdaLR 自己会把返回值乘以每组的基础 lr：只返回倍数。"),
        ([[lr * lr * reference(s, w, total, m) for lr in lrs] for s in range(steps)], "absolute-lr",
         "the lambda returned an lr (base_lr * multiplier); LambdaLR multiplies what it returns by the base lr "
         "itself: return the multiplier only.",
         "lambda 返回的是 lr（base_lr * 倍数）；LambdaLR 自己会把返回值乘以基础 lr：只返回倍数。"),
        ([[lrs[0] * reference(s, w, total, m) for _ in lrs] for s in range(steps)], "one-lr-for-all",
         "every param group got the first group's lr; each group keeps its own base lr, times the multiplier.",
         "每个参数组都用了第一组的 lr；每组应保留自己的基础 lr，再乘以倍数。"),
    ]
    for rows, key, en, zh in known:
        if matches(rows):
            fail("The lrs seen by the optimizer: " + en, "优化器看到的 lr：" + zh, key=key)
    i = next(i for i, (row, exp) in enumerate(zip(seen, want)) if not all(agrees(v, e) for v, e in zip(row, exp)))
    fail("Before optimizer.step() number {i} the param groups' lrs are {got}, expected {want} (base lrs {lrs} times "
         "warmup_cosine({i}, {w}, {total}, {m})).",
         "第 {i} 次 optimizer.step() 之前，各参数组的 lr 为 {got}，应为 {want}（基础 lr {lrs} 乘以 "
         "warmup_cosine({i}, {w}, {total}, {m})）。", i=i, got=rounded(seen[i]), want=rounded(want[i]),
         lrs=verbatim(str(lrs)), w=w, total=total, m=verbatim(f"{m:g}"), key="wrong-values")
