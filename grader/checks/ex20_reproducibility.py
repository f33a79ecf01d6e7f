"""Hidden checks of ex20: reproducibility.

The sandbox seeds the global generators itself when it starts, so "two calls agree" proves nothing
unless the state is disturbed in between. Every probe here scrambles the generators (random, NumPy,
torch) to different states drawn in the judge, and consumes a different amount of randomness, between
two runs with the same seed: only a learner's own seeding can make them agree. A third run with
another seed must differ, so a seed hard-coded inside the function is caught too. set_seed, enable_determinism
and make_loader run on both paths a machine may take: with no GPU, and with one pretended (`pretend_cuda`: the
CUDA seed set_seed gives, the settings made only when CUDA is available, train_run's CUDA branch), so a setting
made on one path only is seen. And they run once more with the hash of every string changed, as it is in every
new Python process (PYTHONHASHSEED): a seed derived from hash() agrees within one process and nowhere else.
"""

import contextlib
import functools
import math

import pytest
import torch

from grader.checking import Text, check, describe, fail, is_number, pretend_cuda, probe, salted_hash

GENERATORS = {
    "torch": (Text("torch's generator (torch.rand, initial weights, dropout)",
                   "torch 的随机数生成器（torch.rand、初始权重、dropout）"), "torch.manual_seed(seed)"),
    "random": (Text("Python's random module", "Python 的 random 模块"), "random.seed(seed)"),
    "numpy": (Text("NumPy's global generator (np.random.rand...)", "NumPy 的全局随机数生成器（np.random.rand……）"),
              "np.random.seed(seed)"),
}


NUMPY_SEED_RANGE = "Seed must be between 0 and 2**32 - 1"

# -- probes (run in the sandbox) --------------------------------------------------------------


def numpy_seed_range_told(fn):
    """A probe that returns {"numpy_seed_range": in_worker} when NumPy refuses a seed, since that error's text
    (after a DataLoader worker's traceback) is cut off before it reaches the judge."""
    @functools.wraps(fn)
    def wrapper(module, *args):
        try:
            return fn(module, *args)
        except Exception as exc:  # any other error goes on to the judge as it is
            if NUMPY_SEED_RANGE not in str(exc):
                raise
            return {"numpy_seed_range": "DataLoader worker" in str(exc)}
    return wrapper


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


@contextlib.contextmanager
def another_process(module, salted: bool):
    """With `salted`, the strings' hash() as in another process, while the block runs."""
    with salted_hash(module) if salted else contextlib.nullcontext():
        yield


PATHS = {"cpu": False, "gpu": True}  # the path a machine takes: torch.cuda.is_available() pretended False, True


@probe
@numpy_seed_range_told
def seeded_draws(module, seeds, scrambles, path, salted=False):
    """For each (seed, scramble): disturb every generator, set_seed(seed) on `path` (no GPU, or a CUDA device
    pretended: its branch runs, and the CUDA seed is seen), then draw from each generator."""
    import random

    import numpy as np

    runs = []
    with determinism_restored():
        for seed, state in zip(seeds, scrambles):
            _scramble(state)
            with pretend_cuda(module, available=PATHS[path]) as seen, another_process(module, salted):
                module.set_seed(seed)
            runs.append({"torch": torch.rand(4).tolist(), "random": [random.random() for _ in range(4)],
                         "numpy": [float(v) for v in np.random.rand(4)], "cuda_seeds": seen.seeds})
    return runs


@probe
def determinism_flags(module):
    """Start from the non-deterministic settings, call enable_determinism on each path (no GPU, a CUDA device
    pretended: a branch for it runs), read the settings back."""
    import os

    found = {}
    with determinism_restored():
        for path, gpu in PATHS.items():
            torch.use_deterministic_algorithms(False)
            torch.backends.cudnn.deterministic = False
            torch.backends.cudnn.benchmark = True
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
            with pretend_cuda(module, available=gpu):
                module.enable_determinism()
            found[path] = {
                "algorithms": torch.are_deterministic_algorithms_enabled(),
                "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
                "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
                "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
                "cublas": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
            }
    return found


@probe
@numpy_seed_range_told
def loader_orders(module, n, batch_size, seeds, scrambles, draws, salted=(), gpu=()):
    """For each run: disturb torch's generator, build the loader (with the hash of strings another process's where
    `salted` says so, with a GPU pretended where `gpu` says so, none otherwise), draw some more numbers (as model
    init or dropout would), then read two epochs of sample ids."""
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
        for k, (seed, state, extra) in enumerate(zip(seeds, scrambles, draws)):
            torch.manual_seed(state)
            with another_process(module, k in salted), pretend_cuda(module, available=k in gpu):
                loader = module.make_loader(x, y, batch_size, seed)
            torch.rand(extra)
            runs.append({"first": epoch(loader), "second": epoch(loader)})
        torch.manual_seed(scrambles[0])  # the first run's loader again, then another made before it is read
        kept = module.make_loader(x, y, batch_size, seeds[0])
        module.make_loader(x, y, batch_size, seeds[2])
        runs.append({"first": epoch(kept), "second": epoch(kept)})
    return runs


@probe
@numpy_seed_range_told
def training_runs(module, x, y, seeds, scrambles, epochs, device, path):
    """Run train_run once per (seed, scramble) on `path` ("cpu": no GPU, "gpu": one pretended); record its losses (as
    returned: a float, or the type of what is not), the initial weights of its model and, with a GPU, what it put
    on the pretended CUDA device."""
    pretend = PATHS[path]
    inits = []
    original = getattr(module, "make_model", None)

    def recording_make_model(*args, **kwargs):
        model = original(*args, **kwargs)
        inits.append([p.detach().to("cpu").clone() for p in model.parameters()])
        return model

    runs = []
    placed = []
    if original is not None:
        module.make_model = recording_make_model
    try:
        with determinism_restored(), pretend_cuda(module, available=pretend) as seen:
            for seed, state in zip(seeds, scrambles):
                _scramble(state)
                count = len(inits)
                losses = module.train_run(x, y, seed, epochs, device)
                if isinstance(losses, (list, tuple)):
                    losses = [v if is_number(v, float) else f"a {type(v).__name__}" for v in losses]
                runs.append({"losses": losses, "init": inits[count] if len(inits) > count else None,
                             "deterministic": torch.are_deterministic_algorithms_enabled()})
            if pretend:
                placed = [call for call in seen.calls if not call.startswith("torch.cuda.")]
    finally:
        if original is not None:
            module.make_model = original
    return {"runs": runs, "placed": placed}


# -- helpers ----------------------------------------------------------------------------------

def run(submission, probe_fn, *args, what):
    """Run a probe; NumPy refusing a seed (the classic np.random.seed(torch.initial_seed()) in a DataLoader
    worker) is told as a lesson instead of a traceback."""
    result = submission.probe(probe_fn, *args, what=what)
    if isinstance(result, dict) and "numpy_seed_range" in result:
        if result["numpy_seed_range"]:
            fail("{what} failed in a DataLoader worker: np.random.seed refused its seed (\"Seed must be between 0 and "
                 "2**32 - 1\"). In a worker, torch.initial_seed() is a 64-bit number (the loader's base seed plus the "
                 "worker id): reduce it with `% 2**32` before giving it to NumPy in your worker_init_fn.",
                 "{what} 在 DataLoader 的 worker 进程里出错：np.random.seed 拒绝了它的种子（`Seed must be between 0 and "
                 "2**32 - 1`）。在 worker 中，`torch.initial_seed()` 是一个 64 位的数（loader 的基础种子加上 worker 编号）："
                 "在 worker_init_fn 里交给 NumPy 之前，先用 `% 2**32` 把它缩小。", what=what, key="numpy-seed-range")
        fail("{what} failed: np.random.seed refused its seed (\"Seed must be between 0 and 2**32 - 1\"). NumPy's global "
             "generator takes seeds from 0 to 2**32 - 1 only, torch's take 64-bit ones: reduce a seed with `% 2**32` "
             "before giving it to NumPy.",
             "{what} 出错：np.random.seed 拒绝了它的种子（`Seed must be between 0 and 2**32 - 1`）。NumPy 的全局生成器"
             "只接受 0 到 2**32 - 1 的种子，而 torch 的种子是 64 位的：交给 NumPy 之前先用 `% 2**32` 把它缩小。",
             what=what, key="numpy-seed-range")
    return result


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

PATH_TEXT = {"cpu": Text(" on a machine without a GPU", "在没有 GPU 的机器上"),
             "gpu": Text(" on a machine with a GPU (pretended)", "在有 GPU（模拟）的机器上")}


def seed_runs(submission, rng):
    """The seeds and, per path, the draws after set_seed; "salted": the first run again, with every string's hash
    another process's. Made once per grading."""
    def made():
        seeds, scrambles = draw_runs(rng)
        runs = {path: run(submission, seeded_draws, seeds, scrambles, path, what="`set_seed`") for path in PATHS}
        runs["salted"] = run(submission, seeded_draws, seeds[:1], scrambles[:1], "cpu", True, what="`set_seed`")
        return seeds, runs
    return submission.once("set_seed", made)


@pytest.mark.parametrize("name", [
    pytest.param("torch", marks=check("set_seed makes torch's random numbers repeat (CPU and GPU)", points=1,
                                      zh="set_seed 让 torch 的随机数可以重现（CPU 和 GPU）")),
    pytest.param("random", marks=check("set_seed makes Python's random numbers repeat", points=1,
                                       zh="set_seed 让 Python random 的随机数可以重现")),
    pytest.param("numpy", marks=check("set_seed makes NumPy's random numbers repeat", points=1,
                                      zh="set_seed 让 NumPy 的随机数可以重现")),
])
def test_seed_repeats(submission, rng, name):
    seeds, paths = seed_runs(submission, rng)
    generator, call = GENERATORS[name]
    for path in PATHS:
        runs = paths[path]
        if runs[0][name] == runs[1][name]:
            continue
        extra = Text(" A generator made with np.random.default_rng(seed) is a separate object: the global one needs "
                     "np.random.seed(seed).",
                     "用 `np.random.default_rng(seed)` 创建的生成器是另一个独立对象：全局生成器需要 `np.random.seed(seed)`。")
        other = paths["gpu" if path == "cpu" else "cpu"]
        only = Text(" It is seeded on the other path only: seed it whether or not there is a GPU.",
                    "它只在另一种情况下被设了种子：不管有没有 GPU 都要给它设种子。") if other[0][name] == other[1][name] else ""
        fail("After set_seed({seed}) twice{path} (with other random numbers drawn in between), {generator} gave "
             "different numbers: set_seed does not seed it. Call {call}.{extra}{only}",
             "{path}两次调用 set_seed({seed})（中间抽取过别的随机数）之后，{generator}给出了不同的数：set_seed 没有给它设种子。"
             "请调用 `{call}`。{extra}{only}", seed=seeds[0], path=PATH_TEXT[path], generator=generator, call=call,
             extra=extra if name == "numpy" else "", only=only, key=f"{name}-not-seeded")
    runs = paths["gpu"]
    if name == "torch" and not runs[0]["cuda_seeds"]:
        fail("set_seed seeds torch's CPU generator only: on a machine with a GPU (the checks pretend there is "
             "one), each GPU has a generator of its own, and it was not seeded. torch.manual_seed(seed) seeds "
             "every device; so does torch.cuda.manual_seed_all(seed).",
             "set_seed 只给 torch 的 CPU 生成器设了种子：在有 GPU 的机器上（检查时假装有一块），每块 GPU 都有自己的"
             "生成器，它没有被设种子。`torch.manual_seed(seed)` 会给所有设备设种子，`torch.cuda.manual_seed_all(seed)` "
             "也可以。", key="cuda-not-seeded")


@check("set_seed uses its seed: another seed, other numbers", points=1, zh="set_seed 使用传入的 seed：换一个 seed，随机数也不同",
       depends=("seed_repeats[torch]", "seed_repeats[random]", "seed_repeats[numpy]"))
def test_seed_used(submission, rng):
    seeds, paths = seed_runs(submission, rng)
    runs = paths["gpu"]
    repeatable = [name for name in GENERATORS if runs[0][name] == runs[1][name]]
    if not repeatable:
        fail("set_seed makes no generator repeatable yet, so there is no seed to see used: this point comes with "
             "seeding.",
             "set_seed 还没有让任何一个生成器可以重现，所以还看不出它是否使用了 seed：设好种子之后才能得到这一分。",
             key="nothing-seeded")
    for name in repeatable:
        if runs[2][name] == runs[0][name]:
            fail("set_seed({seed}) and set_seed({other}) give the same numbers from {generator}: the seed argument is "
                 "ignored (a hard-coded seed such as 42?). Pass `seed` on.",
                 "set_seed({seed}) 和 set_seed({other}) 让{generator}给出了相同的数：参数 seed 被忽略了"
                 "（是不是写死了 42 之类的种子？）。请把 `seed` 传下去。",
                 seed=seeds[0], other=seeds[2], generator=GENERATORS[name][0], key="seed-hardcoded")
    for name in repeatable:
        if paths["salted"][0][name] != paths["cpu"][0][name]:
            fail("set_seed({seed}) gives other numbers from {generator} when the hash of strings changes, as it does in "
                 "every new Python process (PYTHONHASHSEED): the seed is derived from hash() of a string, so a run "
                 "agrees with itself only within one process. Pass `seed` on as it is.",
                 "当字符串的 hash 改变时（每个新的 Python 进程都会这样，PYTHONHASHSEED），set_seed({seed}) 让{generator}给出了"
                 "不同的数：种子是由字符串的 hash() 得出的，所以只有在同一个进程里结果才一致。请把 `seed` 原样传下去。",
                 seed=seeds[0], generator=GENERATORS[name][0], key="hash-seed")
    cuda = runs[0]["cuda_seeds"]
    if cuda and cuda[-1] != seeds[0]:
        fail("set_seed({seed}) seeds the GPU's generator with {got}, not with the seed it was given (a hard-coded "
             "seed?): pass `seed` on.",
             "set_seed({seed}) 给 GPU 生成器设的种子是 {got}，而不是传入的 seed（是不是写死了种子？）：请把 `seed` 传下去。",
             seed=seeds[0], got=cuda[-1], key="seed-hardcoded")


# -- enable_determinism -----------------------------------------------------------------------

@check("enable_determinism turns on deterministic algorithms (and cuBLAS's workspace setting)", points=1,
       zh="enable_determinism 开启确定性算法（以及 cuBLAS 的 workspace 设置）")
def test_deterministic_algorithms(submission):
    found = submission.probe(determinism_flags, what="`enable_determinism()`")
    for path in PATHS:  # deterministic algorithms matter on a CPU too
        flags = found[path]
        if not flags["algorithms"]:
            fail("After enable_determinism(){path}, torch.are_deterministic_algorithms_enabled() is False: call "
                 "torch.use_deterministic_algorithms(True), whether or not there is a GPU.",
                 "{path}调用 enable_determinism() 之后 `torch.are_deterministic_algorithms_enabled()` 仍为 False："
                 "不管有没有 GPU，都请调用 `torch.use_deterministic_algorithms(True)`。", path=PATH_TEXT[path],
                 key="deterministic-off")
        if flags["warn_only"]:
            fail("Deterministic algorithms are on with warn_only=True{path}: a non-deterministic op then only warns and "
                 "the run still varies. Leave warn_only off, so such an op raises an error you cannot miss.",
                 "{path}确定性算法以 warn_only=True 开启：非确定性的算子只会发出警告，结果照样会变。请不要开 warn_only，"
                 "让这种算子直接报错，不会被忽略。", path=PATH_TEXT[path], key="warn-only")
    flags = found["gpu"]  # cuBLAS and cuDNN are the GPU's: their settings count where there is one
    if flags["cublas"] not in (":4096:8", ":16:8"):
        fail("CUBLAS_WORKSPACE_CONFIG is {got!r}: with deterministic algorithms on, matrix products on a GPU (cuBLAS, "
             "CUDA >= 10.2) raise an error unless this environment variable is ':4096:8' or ':16:8'. Set it in "
             "os.environ.",
             "CUBLAS_WORKSPACE_CONFIG 为 {got!r}：开启确定性算法后，GPU 上的矩阵乘法（cuBLAS，CUDA >= 10.2）会报错，"
             "除非这个环境变量是 ':4096:8' 或 ':16:8'。请在 `os.environ` 中设置它。", got=flags["cublas"],
             key="cublas-config")


@check("enable_determinism makes cuDNN deterministic and turns its benchmark off", points=1,
       zh="enable_determinism 让 cuDNN 确定，并关闭其 benchmark")
def test_cudnn_flags(submission):
    flags = submission.probe(determinism_flags, what="`enable_determinism()`")["gpu"]
    if flags["cudnn_benchmark"]:
        fail("torch.backends.cudnn.benchmark is still True: benchmark mode times several convolution algorithms and "
             "keeps the fastest, which can differ from run to run. It is a common speed tip, but it must be False for "
             "reproducible runs.",
             "`torch.backends.cudnn.benchmark` 仍为 True：benchmark 模式会对几种卷积算法计时并选最快的，每次运行的选择可能"
             "不同。它是常见的加速技巧，但要复现结果就必须设为 False。", key="cudnn-benchmark")
    if not flags["cudnn_deterministic"]:
        fail("torch.backends.cudnn.deterministic is False: set it to True so cuDNN only uses deterministic convolution "
             "algorithms.",
             "`torch.backends.cudnn.deterministic` 为 False：请设为 True，让 cuDNN 只使用确定性的卷积算法。",
             key="cudnn-nondeterministic")


# -- make_loader ------------------------------------------------------------------------------

@check("make_loader shuffles in an order fixed by its seed alone", points=2,
       zh="make_loader 打乱的顺序只由它的 seed 决定")
def test_loader(submission, rng):
    batch_size = int(torch.randint(3, 7, (), generator=rng))
    n = int(torch.randint(20, 33, (), generator=rng))
    if n % batch_size == 0:
        n += 1  # a short last batch, always
    seeds, scrambles = draw_runs(rng)
    first_draw = int(torch.randint(1, 6, (), generator=rng))
    draws = [first_draw, first_draw + int(torch.randint(1, 6, (), generator=rng)), first_draw]
    what = f"`make_loader(x[{n}, 1], y[{n}, 1], {batch_size}, seed)`"
    a, b, c, salted, gpu, kept = run(submission, loader_orders, n, batch_size, seeds + seeds[:1] * 2,
                               scrambles + scrambles[:1] * 2, draws + draws[:1] * 2, (3,), (4,), what=what)
    ids, sizes = a["first"]["ids"], a["first"]["sizes"]
    if len(ids) == n - n % batch_size and len(set(ids)) == len(ids) and sizes[-1] == batch_size:
        fail("One epoch of the loader gave {got} of the {n} samples: the short last batch of {short} was dropped "
             "(drop_last=True). Keep it: every sample counts once per epoch.",
             "loader 的一个 epoch 只给出了 {n} 个样本中的 {got} 个：最后那个只有 {short} 个样本的 batch 被丢掉了"
             "（drop_last=True）。请保留它：每个 epoch 每个样本都要出现一次。",
             got=len(ids), n=n, short=n % batch_size, key="drop-last")
    if sorted(ids) != list(range(n)):
        fail("One epoch of the loader should give each of the {n} samples exactly once, got {got} samples ({distinct} "
             "distinct): build it on TensorDataset(x, y).",
             "loader 的一个 epoch 应该恰好给出 {n} 个样本各一次，实际得到 {got} 个（{distinct} 个不同）："
             "请基于 TensorDataset(x, y) 构建。", n=n, got=len(ids), distinct=len(set(ids)), key="not-all-samples")
    want = [batch_size] * (n // batch_size) + [n % batch_size]
    if sizes != want:
        fail("Batches should hold batch_size={batch_size} samples (the last one the {short} left over), got sizes "
             "{sizes}.",
             "每个 batch 应包含 batch_size={batch_size} 个样本（最后一个是剩下的 {short} 个），实际大小为 {sizes}。",
             batch_size=batch_size, short=n % batch_size, sizes=sizes, key="wrong-batch-size")
    if ids == list(range(n)):
        fail("The loader gives the samples in their original order: pass shuffle=True.",
             "loader 按原始顺序给出样本：请传入 shuffle=True。", key="no-shuffle")
    if a["first"]["ids"] != b["first"]["ids"] or a["second"]["ids"] != b["second"]["ids"]:
        fail("Two loaders made with the same seed gave different orders, because other code drew random numbers "
             "between making the loader and iterating it (as model init and dropout do): the shuffle drew from the "
             "global generator. Give the DataLoader its own torch.Generator, seeded with `seed` (generator=...).",
             "用同一个 seed 创建的两个 loader 给出了不同的顺序，因为在创建 loader 和遍历它之间，别的代码抽取了随机数"
             "（就像模型初始化和 dropout 那样）：打乱用的是全局生成器。请给 DataLoader 一个独立的、用 `seed` 设好种子的 "
             "`torch.Generator`（`generator=...`）。", key="global-generator")
    if gpu["first"]["ids"] != a["first"]["ids"]:
        fail("make_loader(..., seed={seed}) gives another order when a GPU is there: its generator is seeded on one of "
             "the two paths only. Seed it with `seed` whatever torch.cuda.is_available() says.",
             "有 GPU 时，make_loader(..., seed={seed}) 给出了另一种顺序：它的生成器只在两种情况中的一种下被设了种子。"
             "不管 torch.cuda.is_available() 返回什么，都要用 `seed` 给它设种子。", seed=seeds[0],
             key="seeded-with-gpu-only")
    if salted["first"]["ids"] != a["first"]["ids"]:
        fail("make_loader(..., seed={seed}) gives another order when the hash of strings changes, as it does in every "
             "new Python process (PYTHONHASHSEED): its generator's seed is derived from hash() of a string, so the order "
             "repeats only within one process. Seed the generator with `seed` as it is.",
             "当字符串的 hash 改变时（每个新的 Python 进程都会这样，PYTHONHASHSEED），make_loader(..., seed={seed}) 给出了"
             "另一种顺序：它的生成器的种子是由字符串的 hash() 得出的，所以只有在同一个进程里顺序才会重复。"
             "请直接用 `seed` 给生成器设种子。", seed=seeds[0], key="hash-seed")
    if c["first"]["ids"] == a["first"]["ids"]:
        fail("make_loader(..., seed={seed}) and make_loader(..., seed={other}) give the same order: the seed is not "
             "used. Seed the generator with it (generator.manual_seed(seed)); an unseeded torch.Generator() always "
             "starts from the same default state.",
             "make_loader(..., seed={seed}) 和 make_loader(..., seed={other}) 给出了相同的顺序：seed 没有被使用。"
             "请用它给生成器设种子（`generator.manual_seed(seed)`）；没设种子的 `torch.Generator()` 总是从同一个默认状态开始。",
             seed=seeds[0], other=seeds[2], key="loader-seed-unused")
    if kept["first"]["ids"] != a["first"]["ids"]:
        fail("A loader made with seed={seed} gives another order once a second loader is made (seed={other}) before "
             "it is read: the loaders share one generator (made at import?), and the later seeding wins. Make a new "
             "torch.Generator in each make_loader call.",
             "用 seed={seed} 创建的 loader，在读取它之前又创建了第二个 loader（seed={other}）后，顺序就变了：这些 loader "
             "共用同一个生成器（是在 import 时创建的吗？），后设的种子覆盖了前一个。请在每次调用 make_loader 时新建一个 "
             "`torch.Generator`。", seed=seeds[0], other=seeds[2], key="shared-generator")
    if a["second"]["ids"] == a["first"]["ids"]:
        fail("The second epoch repeats the order of the first: a fixed permutation is not a shuffle. Let the DataLoader "
             "shuffle (shuffle=True with a seeded generator), so each epoch gets a new order that is still reproducible.",
             "第二个 epoch 重复了第一个 epoch 的顺序：固定的排列不等于打乱。请让 DataLoader 自己打乱（shuffle=True 加上"
             "设好种子的 generator），这样每个 epoch 顺序都不同，同时仍可复现。", key="fixed-permutation")


# -- train_run --------------------------------------------------------------------------------

def draw_data(rng):
    # a short last batch; batches of 7 would make more batches, batches of 9 fewer
    sizes = [n for n in range(24, 56) if n % 8 and math.ceil(n / 9) < math.ceil(n / 8) < math.ceil(n / 7)]
    n = sizes[int(torch.randint(len(sizes), (), generator=rng))]
    x = torch.randn(n, 4, generator=rng)
    y = x @ torch.randn(4, 1, generator=rng) + 0.1 * torch.randn(n, 1, generator=rng)
    return x, y


def expect_same_runs(runs, n, epochs, device, without_gpu=False):
    """The checks every pair of runs with the same seed must pass: floats, one per batch, the same start, the same
    losses (`device` names the device the runs used, in messages; `without_gpu`, that the machine had none)."""
    want = epochs * math.ceil(n / 8)
    on = Text(" (with device={device!r}{none})", "（device={device!r}{none}）", device=device,
              none=Text(", on a machine without a GPU", "，在没有 GPU 的机器上") if without_gpu else "")
    for run_ in runs:
        losses = run_["losses"]
        if not isinstance(losses, list):
            fail("train_run should return a list of Python floats (one loss per batch), got {got}.",
                 "train_run 应返回 Python float 的列表（每个 batch 一个损失），实际得到 {got}。",
                 got=describe(losses), key="not-a-list")
        bad = next((v for v in losses if isinstance(v, str)), None)
        if bad:
            fail("train_run should return a list of Python floats, but it holds {bad}: use loss.item().",
                 "train_run 应返回 Python float 的列表，但其中有 {bad}：请用 `loss.item()`。", bad=bad, key="not-a-float")
        if len(losses) != want:
            fail("train_run returned {got} losses; {epochs} epochs of {n} samples in batches of 8 make {want}.",
                 "train_run 返回了 {got} 个损失；{n} 个样本、batch 大小 8、{epochs} 个 epoch 应有 {want} 个。",
                 got=len(losses), epochs=epochs, n=n, want=want, key="wrong-count")
        if not all(math.isfinite(v) for v in losses):
            fail("train_run returned a loss that is NaN or inf.", "train_run 返回的损失中有 NaN 或 inf。", key="nan")
    a, b = runs[:2]
    if a["init"] is not None and b["init"] is not None and not all(
            torch.equal(p, q) for p, q in zip(a["init"], b["init"])):
        fail("Two runs with the same seed{on} started from different initial weights: make_model() draws them from "
             "torch's CPU generator, whatever the device the model moves to, so seed it first. Call set_seed(seed) "
             "before make_model().",
             "同一个 seed 的两次运行{on}从不同的初始权重开始：不管模型之后放到哪个设备上，make_model() 都从 torch 的 CPU "
             "生成器抽取初始权重，所以要先设种子。请在 make_model() 之前调用 set_seed(seed)。", on=on,
             key="init-not-seeded")
    if a["losses"] != b["losses"]:
        first = next(i for i, (p, q) in enumerate(zip(a["losses"], b["losses"])) if p != q)
        fail("Two runs with the same seed{on} gave different losses from batch {first} on ({p:.6g} vs {q:.6g}), though "
             "they started from the same weights: the batch order or dropout drew from an unseeded generator. Seed "
             "everything first, and build the loader with make_loader(x, y, 8, seed).",
             "同一个 seed 的两次运行{on}从第 {first} 个 batch 起损失不同（{p:.6g} 对 {q:.6g}），尽管初始权重相同："
             "batch 顺序或 dropout 用了没设种子的生成器。请先给所有生成器设种子，并用 `make_loader(x, y, 8, seed)` 构建 loader。",
             on=on, first=first, p=a["losses"][first], q=b["losses"][first], key="losses-differ")


@check("train_run gives the same losses for the same seed, and others for another", points=2,
       zh="train_run 同一个 seed 给出相同的损失，换一个 seed 则不同", depends=("seed_repeats[torch]", "loader"))
def test_train_run(submission, rng, device):
    x, y = draw_data(rng)
    epochs = 2
    seeds, scrambles = draw_runs(rng)

    def runs_on(on, seeds, path):
        what = f"`train_run(x[{len(x)}, 4], y[{len(x)}, 1], seed, {epochs}, {on!r})`"
        return run(submission, training_runs, x, y, seeds, scrambles, epochs, on, path, what=what)

    # On a CPU grader a GPU is pretended: train_run(..., "cpu") must not use it, and its CUDA branch
    # (train_run(..., "cuda"), run on the CPU) must be as reproducible as the CPU one; and without a GPU,
    # train_run(..., "cpu") must be just as reproducible (a seed or a setting made only with a GPU shows there).
    result = runs_on(device, seeds, "gpu" if device == "cpu" else "cpu")
    if result["placed"]:
        fail("train_run(..., device='cpu') still put something on the GPU ({calls}) when one was available: use the "
             "`device` argument it is given, not torch.cuda.is_available().",
             "train_run(..., device='cpu') 在有 GPU 时仍然把东西放到了 GPU 上（{calls}）：请使用传入的 `device` 参数，"
             "而不是 `torch.cuda.is_available()`。", calls=", ".join(dict.fromkeys(result["placed"])),
             key="hard-coded-cuda")
    runs = result["runs"]
    expect_same_runs(runs, len(x), epochs, device)
    if not all(r["deterministic"] for r in runs):
        fail("After train_run, deterministic algorithms are off: it never calls enable_determinism(). On a CPU the "
             "runs agree anyway, but on a GPU some operations pick nondeterministic kernels.",
             "train_run 之后确定性算法仍是关闭的：它没有调用 enable_determinism()。在 CPU 上两次运行结果仍会一致，"
             "但在 GPU 上某些运算会选用不确定的实现。", key="determinism-not-enabled")
    if device == "cpu":
        expect_same_runs(runs_on("cuda", seeds[:2], "gpu")["runs"], len(x), epochs, "cuda")
        without = runs_on("cpu", seeds[:2], "cpu")["runs"]
        expect_same_runs(without, len(x), epochs, "cpu", without_gpu=True)
        if not all(r["deterministic"] for r in without):
            fail("On a machine without a GPU, deterministic algorithms are off after train_run: enable_determinism() "
                 "runs only when a GPU is there. Call it whether or not there is one.",
                 "在没有 GPU 的机器上，train_run 之后确定性算法仍是关闭的：enable_determinism() 只在有 GPU 时才运行。"
                 "不管有没有 GPU 都要调用它。", key="determinism-not-enabled")
    if runs[2]["losses"] == runs[0]["losses"]:
        fail("train_run with seed {seed} and with seed {other} gave exactly the same losses: the seed argument is "
             "ignored (a hard-coded seed?).",
             "seed 为 {seed} 和 {other} 时 train_run 给出了完全相同的损失：参数 seed 被忽略了（是不是写死了种子？）。",
             seed=seeds[0], other=seeds[2], key="seed-hardcoded")
