"""Hidden checks of ex20: reproducibility.

The sandbox seeds the global generators itself when it starts, so "two calls agree" proves nothing
unless the state is disturbed in between. Every probe here scrambles the generators (random, NumPy,
torch) to different states drawn in the judge, and consumes a different amount of randomness, between
two runs with the same seed: only a learner's own seeding can make them agree. A third run with
another seed must differ, so a seed hard-coded inside the function is caught too.
"""

import contextlib
import math

import torch

from grader.checking import check, describe, fail, probe

GENERATORS = {
    "torch": ("torch's generator (torch.rand, initial weights, dropout)", "torch 的随机数生成器（torch.rand、初始权重、dropout）",
              "torch.manual_seed(seed)"),
    "random": ("Python's random module", "Python 的 random 模块", "random.seed(seed)"),
    "numpy": ("NumPy's global generator (np.random.rand...)", "NumPy 的全局随机数生成器（np.random.rand……）",
              "np.random.seed(seed)"),
}


# -- probes (run in the sandbox) --------------------------------------------------------------

def _scramble(state: int) -> None:
    import random

    import numpy as np

    random.seed(state)
    np.random.seed(state)
    torch.manual_seed(state)


@contextlib.contextmanager
def determinism_restored():
    """Leave torch's global determinism settings as they were, whatever the learner's code sets."""
    import os

    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
             os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[2], saved[3]
        if saved[4] is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
        else:
            os.environ["CUBLAS_WORKSPACE_CONFIG"] = saved[4]


@probe
def seeded_draws(module, seeds, scrambles):
    """For each (seed, scramble): disturb every generator, set_seed(seed), draw from each generator."""
    import random

    import numpy as np

    runs = []
    with determinism_restored():
        for seed, state in zip(seeds, scrambles):
            _scramble(state)
            module.set_seed(seed)
            runs.append({"torch": torch.rand(4).tolist(), "random": [random.random() for _ in range(4)],
                         "numpy": [float(v) for v in np.random.rand(4)]})
    return runs


@probe
def determinism_flags(module):
    """Start from the non-deterministic settings, call enable_determinism, read the settings back."""
    import os

    with determinism_restored():
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.deterministic = False
        torch.backends.cudnn.benchmark = True
        os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
        module.enable_determinism()
        return {
            "algorithms": torch.are_deterministic_algorithms_enabled(),
            "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
            "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "cublas": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        }


@probe
def loader_orders(module, n, batch_size, seeds, scrambles, draws):
    """For each run: disturb torch's generator, build the loader, draw some more numbers (as model init
    or dropout would), then read two epochs of sample ids."""
    x = torch.arange(n, dtype=torch.float32).unsqueeze(1)  # the sample id is the value
    y = torch.zeros(n, 1)

    def epoch(loader):
        ids, sizes = [], []
        for batch in loader:
            xb = batch[0]
            ids += [int(v) for v in xb.reshape(len(xb), -1)[:, 0].tolist()]
            sizes.append(len(xb))
        return {"ids": ids, "sizes": sizes}

    runs = []
    with determinism_restored():
        for seed, state, extra in zip(seeds, scrambles, draws):
            torch.manual_seed(state)
            loader = module.make_loader(x, y, batch_size, seed)
            torch.rand(extra)
            runs.append({"type": type(loader).__name__, "first": epoch(loader), "second": epoch(loader)})
    return runs


@probe
def training_runs(module, x, y, seeds, scrambles, epochs, device):
    """Run train_run once per (seed, scramble); record its losses and the initial weights of its model."""
    inits = []
    original = getattr(module, "make_model", None)

    def recording_make_model(*args, **kwargs):
        model = original(*args, **kwargs)
        inits.append([p.detach().to("cpu").clone() for p in model.parameters()])
        return model

    runs = []
    if original is not None:
        module.make_model = recording_make_model
    try:
        with determinism_restored():
            for seed, state in zip(seeds, scrambles):
                _scramble(state)
                count = len(inits)
                losses = module.train_run(x, y, seed, epochs, device)
                if isinstance(losses, (list, tuple)):
                    losses = [float(v) if isinstance(v, (int, float)) or (isinstance(v, torch.Tensor) and v.numel() == 1)
                              else describe_value(v) for v in losses]
                runs.append({"losses": losses, "init": inits[count] if len(inits) > count else None})
    finally:
        if original is not None:
            module.make_model = original
    return runs


def describe_value(v) -> str:
    return f"<{type(v).__name__}>"


# -- helpers ----------------------------------------------------------------------------------

def distinct_ints(rng, count, high=2**31 - 1):
    values = []
    while len(values) < count:
        v = int(torch.randint(0, high, (), generator=rng))
        if v not in values:
            values.append(v)
    return values


def draw_runs(rng):
    seed, other, s1, s2, s3 = distinct_ints(rng, 5)
    return [seed, seed, other], [s1, s2, s3]


# -- set_seed ---------------------------------------------------------------------------------

def seed_check(submission, rng, name):
    seeds, scrambles = draw_runs(rng)
    runs = submission.probe(seeded_draws, seeds, scrambles, what="`set_seed`")
    en, zh, call = GENERATORS[name]
    if runs[0][name] != runs[1][name]:
        extra = (" A generator made with np.random.default_rng(seed) is a separate object: the global one needs "
                 "np.random.seed(seed)." if name == "numpy" else "")
        extra_zh = ("用 np.random.default_rng(seed) 创建的生成器是另一个独立对象：全局生成器需要 np.random.seed(seed)。"
                    if name == "numpy" else "")
        fail(f"After set_seed({seeds[0]}) twice (with other random numbers drawn in between), {en} gave different "
             f"numbers: set_seed does not seed it. Call {call}.{extra}",
             f"两次调用 set_seed({seeds[0]})（中间抽取过别的随机数）之后，{zh}给出了不同的数：set_seed 没有给它设种子。"
             f"请调用 {call}。{extra_zh}")
    return seeds, runs


@check("set_seed makes torch's random numbers repeat", points=1, zh="set_seed 让 torch 的随机数可以重现")
def test_seed_torch(submission, rng):
    seed_check(submission, rng, "torch")


@check("set_seed makes Python's random numbers repeat", points=1, zh="set_seed 让 Python random 的随机数可以重现")
def test_seed_random(submission, rng):
    seed_check(submission, rng, "random")


@check("set_seed makes NumPy's random numbers repeat", points=1, zh="set_seed 让 NumPy 的随机数可以重现")
def test_seed_numpy(submission, rng):
    seed_check(submission, rng, "numpy")


@check("set_seed uses its seed: another seed, other numbers", points=1, zh="set_seed 使用传入的 seed：换一个 seed，随机数也不同")
def test_seed_used(submission, rng):
    seeds, scrambles = draw_runs(rng)
    runs = submission.probe(seeded_draws, seeds, scrambles, what="`set_seed`")
    repeatable = [name for name in GENERATORS if runs[0][name] == runs[1][name]]
    if not repeatable:
        fail("set_seed makes no generator repeatable yet (see the checks above).",
             "set_seed 还没有让任何一个生成器可以重现（见上面的检查）。")
    for name in repeatable:
        if runs[2][name] == runs[0][name]:
            en, zh, _ = GENERATORS[name]
            fail(f"set_seed({seeds[0]}) and set_seed({seeds[2]}) give the same numbers from {en}: the seed argument is "
                 "ignored (a hard-coded seed such as 42?). Pass `seed` on.",
                 f"set_seed({seeds[0]}) 和 set_seed({seeds[2]}) 让{zh}给出了相同的数：参数 seed 被忽略了"
                 "（是不是写死了 42 之类的种子？）。请把 `seed` 传下去。")


# -- enable_determinism -----------------------------------------------------------------------

@check("enable_determinism turns on deterministic algorithms (and cuBLAS's workspace setting)", points=1,
       zh="enable_determinism 开启确定性算法（以及 cuBLAS 的 workspace 设置）")
def test_deterministic_algorithms(submission):
    flags = submission.probe(determinism_flags, what="`enable_determinism()`")
    if not flags["algorithms"]:
        fail("After enable_determinism(), torch.are_deterministic_algorithms_enabled() is False: call "
             "torch.use_deterministic_algorithms(True).",
             "调用 enable_determinism() 之后 torch.are_deterministic_algorithms_enabled() 仍为 False："
             "请调用 torch.use_deterministic_algorithms(True)。")
    if flags["warn_only"]:
        fail("Deterministic algorithms are on with warn_only=True: a non-deterministic op then only warns and the run "
             "still varies. Leave warn_only off, so such an op raises an error you cannot miss.",
             "确定性算法以 warn_only=True 开启：非确定性的算子只会发出警告，结果照样会变。请不要开 warn_only，"
             "让这种算子直接报错，不会被忽略。")
    if flags["cublas"] not in (":4096:8", ":16:8"):
        fail(f"CUBLAS_WORKSPACE_CONFIG is {flags['cublas']!r}: with deterministic algorithms on, matrix products on a GPU "
             "(cuBLAS, CUDA >= 10.2) raise an error unless this environment variable is ':4096:8' or ':16:8'. Set it in "
             "os.environ.",
             f"CUBLAS_WORKSPACE_CONFIG 为 {flags['cublas']!r}：开启确定性算法后，GPU 上的矩阵乘法（cuBLAS，CUDA >= 10.2）"
             "会报错，除非这个环境变量是 ':4096:8' 或 ':16:8'。请在 os.environ 中设置它。")


@check("enable_determinism makes cuDNN deterministic and turns its benchmark off", points=1,
       zh="enable_determinism 让 cuDNN 确定，并关闭其 benchmark")
def test_cudnn_flags(submission):
    flags = submission.probe(determinism_flags, what="`enable_determinism()`")
    if flags["cudnn_benchmark"]:
        fail("torch.backends.cudnn.benchmark is still True: benchmark mode times several convolution algorithms and "
             "keeps the fastest, which can differ from run to run. It speeds training up (the seed tutorial's tip) but "
             "must be False for reproducible runs.",
             "torch.backends.cudnn.benchmark 仍为 True：benchmark 模式会对几种卷积算法计时并选最快的，每次运行的选择可能不同。"
             "它能加速训练（种子教程里的技巧），但要复现结果就必须设为 False。")
    if not flags["cudnn_deterministic"]:
        fail("torch.backends.cudnn.deterministic is False: set it to True so cuDNN only uses deterministic convolution "
             "algorithms.",
             "torch.backends.cudnn.deterministic 为 False：请设为 True，让 cuDNN 只使用确定性的卷积算法。")


# -- make_loader ------------------------------------------------------------------------------

@check("make_loader shuffles in an order fixed by its seed alone", points=2,
       zh="make_loader 打乱的顺序只由它的 seed 决定")
def test_loader(submission, rng):
    n = int(torch.randint(20, 33, (), generator=rng))
    batch_size = int(torch.randint(3, 7, (), generator=rng))
    seeds, scrambles = draw_runs(rng)
    first_draw = int(torch.randint(1, 6, (), generator=rng))
    draws = [first_draw, first_draw + int(torch.randint(1, 6, (), generator=rng)), first_draw]
    runs = submission.probe(loader_orders, n, batch_size, seeds, scrambles, draws,
                            what=f"`make_loader(x[{n}, 1], y[{n}, 1], {batch_size}, seed)`")
    a, b, c = runs
    ids = a["first"]["ids"]
    if sorted(ids) != list(range(n)):
        fail(f"One epoch of the loader should give each of the {n} samples exactly once, got {len(ids)} samples "
             f"({len(set(ids))} distinct): build it on TensorDataset(x, y).",
             f"loader 的一个 epoch 应该恰好给出 {n} 个样本各一次，实际得到 {len(ids)} 个（{len(set(ids))} 个不同）："
             "请基于 TensorDataset(x, y) 构建。")
    sizes = a["first"]["sizes"]
    if any(s != batch_size for s in sizes[:-1]):
        fail(f"Batches should hold batch_size={batch_size} samples, got sizes {sizes}.",
             f"每个 batch 应包含 batch_size={batch_size} 个样本，实际大小为 {sizes}。")
    if ids == list(range(n)):
        fail("The loader gives the samples in their original order: pass shuffle=True.",
             "loader 按原始顺序给出样本：请传入 shuffle=True。")
    if a["first"]["ids"] != b["first"]["ids"] or a["second"]["ids"] != b["second"]["ids"]:
        fail("Two loaders made with the same seed gave different orders, because other code drew random numbers "
             "between making the loader and iterating it (as model init and dropout do): the shuffle drew from the "
             "global generator. Give the DataLoader its own torch.Generator, seeded with `seed` (generator=...).",
             "用同一个 seed 创建的两个 loader 给出了不同的顺序，因为在创建 loader 和遍历它之间，别的代码抽取了随机数"
             "（就像模型初始化和 dropout 那样）：打乱用的是全局生成器。请给 DataLoader 一个独立的、用 `seed` 设好种子的 "
             "torch.Generator（generator=...）。")
    if c["first"]["ids"] == a["first"]["ids"]:
        fail(f"make_loader(..., seed={seeds[0]}) and make_loader(..., seed={seeds[2]}) give the same order: the seed is "
             "not used. Seed the generator with it (generator.manual_seed(seed)); an unseeded torch.Generator() always "
             "starts from the same default state.",
             f"make_loader(..., seed={seeds[0]}) 和 make_loader(..., seed={seeds[2]}) 给出了相同的顺序：seed 没有被使用。"
             "请用它给生成器设种子（generator.manual_seed(seed)）；没设种子的 torch.Generator() 总是从同一个默认状态开始。")
    if a["second"]["ids"] == a["first"]["ids"]:
        fail("The second epoch repeats the order of the first: a fixed permutation is not a shuffle. Let the DataLoader "
             "shuffle (shuffle=True with a seeded generator), so each epoch gets a new order that is still reproducible.",
             "第二个 epoch 重复了第一个 epoch 的顺序：固定的排列不等于打乱。请让 DataLoader 自己打乱（shuffle=True 加上"
             "设好种子的 generator），这样每个 epoch 顺序都不同，同时仍可复现。")


# -- train_run --------------------------------------------------------------------------------

def draw_data(rng):
    n = int(torch.randint(24, 41, (), generator=rng))
    x = torch.randn(n, 4, generator=rng)
    y = x @ torch.randn(4, 1, generator=rng) + 0.1 * torch.randn(n, 1, generator=rng)
    return x, y


@check("train_run gives the same losses for the same seed, and others for another", points=2,
       zh="train_run 同一个 seed 给出相同的损失，换一个 seed 则不同")
def test_train_run(submission, rng, device):
    x, y = draw_data(rng)
    epochs = 2
    seeds, scrambles = draw_runs(rng)
    runs = submission.probe(training_runs, x, y, seeds, scrambles, epochs, device,
                            what=f"`train_run(x[{len(x)}, 4], y[{len(x)}, 1], seed, {epochs}, {device!r})`")
    want = epochs * math.ceil(len(x) / 8)
    for run in runs:
        losses = run["losses"]
        if not isinstance(losses, list) or not all(isinstance(v, float) for v in losses):
            fail(f"train_run should return a list of Python floats (one loss per batch), got {describe(losses)}.",
                 f"train_run 应返回 Python float 的列表（每个 batch 一个损失），实际得到 {describe(losses)}。")
        if len(losses) != want:
            fail(f"train_run returned {len(losses)} losses; {epochs} epochs of {len(x)} samples in batches of 8 make "
                 f"{want}.",
                 f"train_run 返回了 {len(losses)} 个损失；{len(x)} 个样本、batch 大小 8、{epochs} 个 epoch 应有 {want} 个。")
        if not all(math.isfinite(v) for v in losses):
            fail("train_run returned a loss that is NaN or inf.", "train_run 返回的损失中有 NaN 或 inf。")
    a, b, c = runs
    if a["init"] is not None and b["init"] is not None and not all(
            torch.equal(p, q) for p, q in zip(a["init"], b["init"])):
        fail("Two runs with the same seed started from different initial weights: make_model() draws them from torch's "
             "generator, so seed it first. Call set_seed(seed) before make_model().",
             "同一个 seed 的两次运行从不同的初始权重开始：make_model() 从 torch 的生成器抽取初始权重，所以要先设种子。"
             "请在 make_model() 之前调用 set_seed(seed)。")
    if a["losses"] != b["losses"]:
        first = next(i for i, (p, q) in enumerate(zip(a["losses"], b["losses"])) if p != q)
        fail(f"Two runs with the same seed gave different losses from batch {first} on ({a['losses'][first]:.6g} vs "
             f"{b['losses'][first]:.6g}), though they started from the same weights: the batch order or dropout drew "
             "from an unseeded generator. Seed everything first, and build the loader with make_loader(x, y, 8, seed).",
             f"同一个 seed 的两次运行从第 {first} 个 batch 起损失不同（{a['losses'][first]:.6g} 对 {b['losses'][first]:.6g}），"
             "尽管初始权重相同：batch 顺序或 dropout 用了没设种子的生成器。请先给所有生成器设种子，"
             "并用 make_loader(x, y, 8, seed) 构建 loader。")
    if c["losses"] == a["losses"]:
        fail(f"train_run with seed {seeds[0]} and with seed {seeds[2]} gave exactly the same losses: the seed argument "
             "is ignored (a hard-coded seed?).",
             f"seed 为 {seeds[0]} 和 {seeds[2]} 时 train_run 给出了完全相同的损失：参数 seed 被忽略了（是不是写死了种子？）。")
