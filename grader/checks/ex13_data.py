"""Hidden checks of ex13: a custom Dataset (length, items, transform) and a DataLoader configured
from its arguments (batching, drop_last, seeded shuffling, workers with a worker_init_fn, pin_memory).

The loader checks run the learner's `make_loader` over a trusted dataset (defined here), so a
broken `ArrayDataset` does not fail them too; the workers check runs it with a trusted `seed_worker`
in place of the learner's, so a bug inside seed_worker costs only seed_worker's check. pin_memory is
asked for with CUDA pretended present and absent, so a flag that follows torch.cuda.is_available()
instead of the `device` argument is seen on a machine without a GPU. seed_worker and the seeded shuffle run as on
a machine without a GPU, as on one with a GPU (pretended) and as in another process (the hash of strings changes):
what is seeded on one path only, or from hash() of a string, shows.
"""

import contextlib
import random

import torch

from grader.checking import (Text, check, describe, expect_close, explain, fail, is_number, patched, pretend_cuda, probe,
                             salted_hash, verbatim)
from grader.devices import imported_anew

# -- trusted helpers (they run inside the sandbox, through the probes) -----------------------


class IndexDataset(torch.utils.data.Dataset):
    """Sample i is (tensor([i, -i]), i): a batch tells which samples it holds, in which order."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.tensor([float(idx), -float(idx)]), idx


class WorkerDataset(torch.utils.data.Dataset):
    """Sample i says which worker loaded it and what `random`/NumPy drew there."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        import numpy as np

        info = torch.utils.data.get_worker_info()
        return torch.tensor([float(info.id if info else -1), random.random(), float(np.random.rand())],
                            dtype=torch.float64)


def trusted_seed_worker(worker_id):
    import numpy as np

    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


def _epoch(loader):
    """One pass over a loader of IndexDataset: the list of batches, each a list of sample indices."""
    return [[int(i) for i in yb] for _, yb in loader]


def _loader_config(loader):
    return {
        "type": type(loader).__name__,
        "is_loader": isinstance(loader, torch.utils.data.DataLoader),
        "batch_size": getattr(loader, "batch_size", None),
        "drop_last": getattr(loader, "drop_last", None),
        "num_workers": getattr(loader, "num_workers", None),
        "pin_memory": getattr(loader, "pin_memory", None),
        "has_worker_init_fn": getattr(loader, "worker_init_fn", None) is not None,
    }


def _item(item):
    return tuple(item) if isinstance(item, (tuple, list)) else item


# -- probes ----------------------------------------------------------------------------------

@probe
def dataset_items(module, x, y, indices):
    ds = module.ArrayDataset(x, y)
    return {"len": len(ds), "items": [_item(ds[i]) for i in indices]}


@probe
def transform_calls(module, x, y, indices, scale, shift):
    calls = []
    phase = ["init"]

    def transform(v):
        calls.append({"phase": phase[0], "is_label": isinstance(v, torch.Tensor) and v.dim() == 0,
                      "shape": list(v.shape) if isinstance(v, torch.Tensor) else None})
        return v * scale + shift

    ds = module.ArrayDataset(x, y, transform=transform)
    phase[0] = "getitem"
    return {"calls": calls, "items": [_item(ds[i]) for i in indices]}


@probe
def batching(module, n, batch_size, drop_last):
    loader = module.make_loader(IndexDataset(n), batch_size, shuffle=False, drop_last=drop_last)
    if not isinstance(loader, torch.utils.data.DataLoader):
        return {"config": _loader_config(loader)}
    return {"config": _loader_config(loader), "batches": _epoch(loader),
            "x_shapes": [list(xb.shape) for xb, _ in loader]}


SETTINGS = ("cpu", "gpu", "salted")  # as run without a GPU, with one (pretended), in another process


@contextlib.contextmanager
def run_as(module, setting):
    """Run the block as `setting` says: CUDA pretended absent or present; "salted": strings hash otherwise."""
    with pretend_cuda(module, available=setting == "gpu"), \
            salted_hash(module) if setting == "salted" else contextlib.nullcontext():
        yield


@probe
def shuffle_orders(module, n, batch_size, seed, other_seed, disturb):
    data = IndexDataset(n)
    elsewhere = {}  # the first epoch of a loader with `seed` made with a GPU there, or in another process
    for setting in SETTINGS[1:]:
        with run_as(module, setting):
            loader = module.make_loader(data, batch_size, shuffle=True, seed=seed)
        elsewhere[setting] = _epoch(loader)
    first = module.make_loader(data, batch_size, shuffle=True, seed=seed)
    torch.manual_seed(disturb[0])  # other code draws random numbers in between
    epochs = [_epoch(first)]
    torch.rand(7)
    epochs.append(_epoch(first))
    again = module.make_loader(data, batch_size, shuffle=True, seed=seed)
    torch.manual_seed(disturb[1])
    repeat = [_epoch(again)]
    torch.rand(3)
    repeat.append(_epoch(again))
    other = _epoch(module.make_loader(data, batch_size, shuffle=True, seed=other_seed))
    return {"epochs": epochs, "repeat": repeat, "other": other, "elsewhere": elsewhere,
            "own_generator": getattr(first, "generator", None) is not None}  # the evidence for the cause below


@probe
def worker_seeding(module, seeds, worker_ids):
    """Call seed_worker as a worker would, after torch seeded itself; record what random/NumPy draw."""
    import numpy as np

    found = {}
    for setting in SETTINGS:
        draws = found[setting] = []
        for seed, wid in zip(seeds, worker_ids):
            torch.manual_seed(seed)
            random.seed(12345)  # what the worker had before: the same everywhere
            np.random.seed(12345)
            with run_as(module, setting):
                module.seed_worker(wid)
            draws.append([random.random(), float(np.random.rand())])
    return found


@probe
def worker_loader(module, n, num_workers, seed, torch_seed, iterate):
    """make_loader with workers, the learner's seed_worker replaced by a trusted one (it has its own check); with
    `iterate`, an epoch through it: which worker loaded each sample."""
    import numpy as np

    with contextlib.ExitStack() as stack:
        if hasattr(module, "seed_worker"):
            stack.enter_context(patched(module, module, "seed_worker", trusted_seed_worker))
        loader = module.make_loader(WorkerDataset(n), 1, shuffle=False, num_workers=num_workers, seed=seed)
        config = _loader_config(loader)
        init_fn = getattr(loader, "worker_init_fn", None)
        init_draws = None
        if init_fn is not None and num_workers > 0:
            torch.manual_seed(torch_seed)
            np.random.seed(12345)
            init_fn(0)
            first = float(np.random.rand())
            torch.manual_seed(torch_seed + 1)
            np.random.seed(12345)
            init_fn(0)
            init_draws = [first, float(np.random.rand())]
        rows = None
        if iterate and isinstance(loader, torch.utils.data.DataLoader) and config["num_workers"] == num_workers:
            rows = [[float(v) for v in batch.reshape(-1)] for batch in loader]
    return {"config": config, "init_draws": init_draws, "rows": rows}


@probe
def pin_memory_flags(module, devices):
    """pin_memory of make_loader(device=d) for "cpu", "cuda", "cuda:0", with CUDA pretended present and absent, the
    file imported anew in each case (what it decides at import, such as whether a GPU is there, is decided there)."""
    flags = {}
    for available in (True, False):
        with pretend_cuda(module, available=available) as seen:
            anew = imported_anew(module, seen) or module
            flags[str(available)] = [getattr(anew.make_loader(IndexDataset(8), 4, device=d), "pin_memory", None)
                                     for d in devices]
    return flags


# -- checks ----------------------------------------------------------------------------------

def _draw_data(rng, n, f=3):
    x = torch.randn(n, f, generator=rng)
    y = torch.randint(0, 5, (n,), generator=rng)
    return x, y


def _item_pair(item, i):
    if not isinstance(item, tuple) or len(item) != 2:
        fail("dataset[{i}] should be a pair (x, y), got {got}.", "dataset[{i}] 应返回一对 (x, y)，实际得到{got}。",
             i=i, got=describe(item), key="item-not-a-pair")
    return item


def _expect_features(value, expected, i, what):
    """x of dataset[i]: the sample's features, shape [F] kept even when F is 1."""
    if isinstance(value, torch.Tensor) and value.shape != expected.shape and \
            list(value.shape) == [s for s in expected.shape if s != 1]:
        fail("{what} should have shape {want}, got {got}: a .squeeze() without a dim drops every size-1 "
             "dimension, here the single feature. Return features[{i}] as it is (or squeeze only the dim you mean).",
             "{what} 的形状应为 {want}，实际为 {got}：不带 dim 的 .squeeze() 会去掉所有大小为 1 的维度，这里把唯一的特征维度也去掉了。"
             "请原样返回 features[{i}]（或者只 squeeze 你想去掉的那个维度）。",
             what=what, want=list(expected.shape), got=list(value.shape), i=i, key="squeeze-drops-dim")
    expect_close(value, expected, what, rtol=0, atol=0)


def _expect_label(value, expected, i, shape=True):
    """The label of dataset[i]: labels[i] unchanged; with `shape`, also one number (not a [1] slice)."""
    if shape and isinstance(value, torch.Tensor) and value.dim() > 0:
        fail("The label of dataset[{i}] should be one number (labels[{i}], a 0-d tensor), got shape {got}: the "
             "DataLoader would stack such labels into [B, 1] instead of [B].",
             "dataset[{i}] 的标签应是一个数（labels[{i}]，0 维 tensor），实际形状为 {got}：DataLoader 会把这样的标签堆叠成 "
             "[B, 1] 而不是 [B]。", i=i, got=list(value.shape), key="label-shape")
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if is_number(value, float) and value.is_integer():
        value = int(value)
    if value != int(expected):
        fail("The label of dataset[{i}] should be {want} (labels[{i}]), got {got}: return the label of the same "
             "index, unchanged.",
             "dataset[{i}] 的标签应为 {want}（labels[{i}]），实际为 {got}：请返回同一索引的标签，不要改动它。",
             i=i, want=int(expected), got=value, key="wrong-label")


@check("ArrayDataset: len() and dataset[i] return the samples", points=1,
       zh="ArrayDataset：len() 与 dataset[i] 返回对应样本")
def test_dataset_items(submission, rng):
    n = int(torch.randint(7, 20, (1,), generator=rng))
    for x, y in (_draw_data(rng, n), _draw_data(rng, 1, f=1)):  # and one sample of one feature
        n = len(x)
        indices = list(dict.fromkeys([0, n - 1] + torch.randint(0, n, (3,), generator=rng).tolist()))
        out = submission.probe(dataset_items, x, y, indices, what=f"`ArrayDataset(features[{n}, {x.shape[1]}], "
                                                                  f"labels[{n}])`")
        if out["len"] != n:
            why = Text("", "")
            if out["len"] == x.shape[1] != n:
                why = Text(" That is the number of features per sample: count the rows (samples).",
                           "这是每个样本的特征数：应该数行（样本）。")
            fail("len(dataset) should be {n}, the number of samples (rows of features), got {got}.{why}",
                 "len(dataset) 应为样本数 {n}（features 的行数），实际为 {got}。{why}",
                 n=n, got=out["len"], why=why, key="wrong-length")
        for i, item in zip(indices, out["items"]):
            xi, yi = _item_pair(item, i)
            _expect_features(xi, x[i], i, (f"x of dataset[{i}]", f"dataset[{i}] 的 x"))
            _expect_label(yi, y[i], i)


@check("the transform is applied to each sample's features when it is read", points=2,
       zh="transform 在读取样本时作用于该样本的特征")
def test_transform(submission, rng):
    n = int(torch.randint(7, 20, (1,), generator=rng))
    x, y = _draw_data(rng, n)
    scale = float(torch.empty(()).uniform_(1.5, 3.0, generator=rng))
    shift = float(torch.empty(()).uniform_(-1.0, 1.0, generator=rng))
    indices = [int(i) for i in torch.randint(0, n, (3,), generator=rng)]
    indices.append(indices[0])  # read one sample twice
    out = submission.probe(transform_calls, x, y, indices, scale, shift,
                           what="`ArrayDataset(features, labels, transform)`")
    calls = out["calls"]
    if any(c["phase"] == "init" for c in calls):
        fail("The transform ran in __init__, on the whole data at once: apply it in __getitem__ to one sample, "
             "so that a random transform (data augmentation) gives a new result each time a sample is read.",
             "transform 在 __init__ 里对整个数据一次性执行了：应在 __getitem__ 中对单个样本执行，"
             "这样随机变换（数据增强）每次读取样本都会得到新的结果。", key="transform-in-init")
    if any(c["is_label"] for c in calls):
        fail("The transform was applied to the label too: it transforms the features x only; return the label unchanged.",
             "transform 也作用在了标签上：它只变换特征 x，标签要原样返回。", key="transform-on-label")
    if not calls:
        fail("The transform given to ArrayDataset was never called: in __getitem__, apply self.transform to x "
             "when a transform was given.",
             "传给 ArrayDataset 的 transform 从未被调用：在 __getitem__ 中，如果给了 transform，就对 x 调用 self.transform。",
             key="transform-not-called")
    whole = next((c["shape"] for c in calls if c["shape"] and c["shape"][0] == n and c["shape"][1:] == list(x.shape[1:])),
                 None)
    if whole is not None:
        fail("__getitem__ gave the transform the whole feature matrix ({got}) and then picked one row: apply it to "
             "that sample's features only, x[i] ({want}), so each read transforms one sample.",
             "__getitem__ 把整个特征矩阵（{got}）交给了 transform，然后才取出一行：只对该样本的特征 x[i]（{want}）调用它，"
             "这样每次读取只变换一个样本。", got=verbatim(str(whole)), want=verbatim(str(list(x.shape[1:]))),
             key="transform-whole-data")
    if len(calls) != len(indices):
        fail("Reading {reads} samples called the transform {calls} times: call it once per __getitem__, on that "
             "sample's features.",
             "读取 {reads} 个样本调用了 transform {calls} 次：每次 __getitem__ 应对该样本的特征调用一次。",
             reads=len(indices), calls=len(calls), key="transform-call-count")
    for i, item in zip(indices, out["items"]):
        xi, yi = _item_pair(item, i)
        if isinstance(xi, torch.Tensor) and xi.shape == x[i].shape and torch.equal(xi, x[i]):
            fail("dataset[{i}] returned the features unchanged, though the transform was called: keep its result, "
                 "x = self.transform(x) (a transform returns a new tensor, it does not change x in place).",
                 "transform 被调用了，但 dataset[{i}] 返回的特征没有变化：请保留它的结果，x = self.transform(x)"
                 "（transform 返回一个新的 tensor，不会原地修改 x）。", i=i, key="transform-result-dropped")
        expect_close(xi, x[i] * scale + shift, (f"x of dataset[{i}] (with the transform)",
                                                f"dataset[{i}] 的 x（经过 transform）"))
        _expect_label(yi, y[i], i, shape=False)  # its shape is the first check's


def _check_loader_type(config):
    if not config["is_loader"]:
        fail("make_loader should return a torch.utils.data.DataLoader, got a {got}.",
             "make_loader 应返回 torch.utils.data.DataLoader，实际得到 {got}。", got=config["type"], key="not-a-loader")


@check("DataLoader batches: batch_size and drop_last, with a short last batch", points=2,
       zh="DataLoader 的分批：batch_size 与 drop_last，最后一个 batch 较小")
def test_batching(submission, rng):
    batch_size = int(torch.randint(3, 7, (1,), generator=rng))
    full = int(torch.randint(2, 5, (1,), generator=rng))
    n = batch_size * full + 1  # the last batch holds one sample
    for drop_last in (False, True):
        out = submission.probe(batching, n, batch_size, drop_last,
                               what=f"`make_loader(dataset[{n}], {batch_size}, shuffle=False, drop_last={drop_last})`")
        _check_loader_type(out["config"])
        batches = out["batches"]
        expected = [list(range(k * batch_size, (k + 1) * batch_size)) for k in range(full)]
        if not drop_last:
            expected.append([n - 1])
        sizes, want = [len(b) for b in batches], [len(b) for b in expected]
        values = dict(n=n, batch_size=batch_size, full=full, drop_last=drop_last, want=want, got=sizes)
        if sizes != want:
            if drop_last and sizes == want + [1]:
                fail("With drop_last=True, {n} samples in batches of {batch_size} should give {full} full batches, "
                     "got {count} (the last one of 1 sample): pass drop_last to the DataLoader.",
                     "drop_last=True 时，{n} 个样本按 {batch_size} 分批应得到 {full} 个完整 batch，实际得到 {count} 个"
                     "（最后一个只有 1 个样本）：请把 drop_last 传给 DataLoader。",
                     count=len(sizes), key="drop-last-ignored", **values)
            if not drop_last and sizes == want[:-1]:
                fail("With drop_last=False, the last sample must still come as a batch of its own, but it was "
                     "dropped: pass drop_last to the DataLoader instead of always dropping.",
                     "drop_last=False 时，最后 1 个样本仍应单独组成一个 batch，但它被丢掉了："
                     "请把 drop_last 参数传给 DataLoader，而不是总是丢弃。", key="drop-last-always", **values)
            fail("{n} samples with batch_size={batch_size}, drop_last={drop_last} should give batch sizes {want}, "
                 "got {got}: pass batch_size to the DataLoader.",
                 "{n} 个样本、batch_size={batch_size}、drop_last={drop_last} 时 batch 大小应为 {want}，实际为 {got}："
                 "请把 batch_size 传给 DataLoader。", key="wrong-batch-size", **values)
        if batches != expected:
            fail("With shuffle=False the samples should come in order 0, 1, 2, ..., got the batches {first}...: "
                 "pass shuffle to the DataLoader (do not always shuffle).",
                 "shuffle=False 时样本应按 0, 1, 2, ... 的顺序输出，实际 batch 为 {first}...："
                 "请把 shuffle 参数传给 DataLoader（不要总是打乱）。", first=batches[:2], key="shuffle-ignored")
        for shape, size in zip(out["x_shapes"], sizes):
            if shape != [size, 2]:
                fail("A batch of {size} samples of x should be stacked into shape {want}, got {got}: keep the "
                     "DataLoader's default collate.",
                     "{size} 个样本组成的 batch 的 x 应堆叠为形状 {want}，实际为 {got}：请使用 DataLoader 默认的 collate。",
                     size=size, want=[size, 2], got=shape, key="batch-shape")


@check("shuffle: a new order every epoch, reproducible from the seed alone", points=2,
       zh="shuffle：每个 epoch 顺序不同，且只由 seed 决定、可复现")
def test_shuffle(submission, rng):
    n = int(torch.randint(16, 33, (1,), generator=rng))
    seed, other_seed = (int(v) for v in torch.randperm(10_000, generator=rng)[:2])
    disturb = [int(v) for v in torch.randperm(10_000, generator=rng)[:2]]
    out = submission.probe(shuffle_orders, n, 4, seed, other_seed, disturb,
                           what=f"`make_loader(dataset[{n}], 4, shuffle=True, seed={seed})`")
    flat = [[i for b in epoch for i in b] for epoch in out["epochs"]]
    for order in flat:
        if sorted(order) != list(range(n)):
            fail("One epoch should give every sample exactly once, got {count} samples ({distinct} different) out of "
                 "{n}: use shuffle=True, not sampling with replacement.",
                 "一个 epoch 应恰好给出每个样本一次，实际得到 {count} 个样本（{distinct} 个不同），共 {n} 个："
                 "请用 shuffle=True，而不是有放回的采样。",
                 count=len(order), distinct=len(set(order)), n=n, key="not-a-permutation")
    if flat[0] == list(range(n)):
        fail("With shuffle=True the first epoch came in order 0, 1, 2, ...: pass shuffle=True to the DataLoader.",
             "shuffle=True 时第一个 epoch 仍按 0, 1, 2, ... 的顺序：请把 shuffle=True 传给 DataLoader。",
             key="shuffle-ignored")
    if flat[0] == flat[1]:
        fail("Two epochs of the same loader came in the same order: the order must change every epoch. "
             "Give the DataLoader one generator and let it shuffle (do not re-seed it for each epoch).",
             "同一个 loader 的两个 epoch 顺序相同：每个 epoch 的顺序都应不同。给 DataLoader 一个 generator，"
             "由它来打乱（不要每个 epoch 重新设种子）。", key="same-order-every-epoch")
    repeat = [[i for b in epoch for i in b] for epoch in out["repeat"]]
    if repeat != flat and out.get("own_generator"):
        fail("Two loaders made with the same seed={seed} gave different orders, though each has a generator of its "
             "own: seed that generator with `seed` (generator.manual_seed(seed)) before handing it to the DataLoader.",
             "用相同 seed={seed} 创建的两个 loader 顺序不同，尽管它们各自有 generator：请在交给 DataLoader 之前用 `seed` "
             "给这个 generator 设种子（generator.manual_seed(seed)）。", seed=seed, key="generator-not-seeded")
    if repeat != flat:
        fail("Two loaders made with the same seed={seed} gave different orders, because other code used the global "
             "random generator in between: create a torch.Generator, seed it with `seed` and pass it as "
             "generator= to the DataLoader (torch.manual_seed is global and not enough).",
             "用相同 seed={seed} 创建的两个 loader 顺序不同，因为中间其他代码用了全局随机数生成器：请创建一个 "
             "torch.Generator，用 `seed` 设种子，并以 generator= 传给 DataLoader（torch.manual_seed 是全局的，不够）。",
             seed=seed, key="global-seed-shuffle")
    for setting, batches in out["elsewhere"].items():
        if [i for b in batches for i in b] != flat[0]:
            if setting == "gpu":
                fail("make_loader(..., seed={seed}) shuffles in another order when a GPU is there: its generator is "
                     "seeded on one of the two paths only. Seed it with `seed` whatever torch.cuda.is_available() says.",
                     "有 GPU 时，make_loader(..., seed={seed}) 打乱的顺序不同：它的 generator 只在两种情况中的一种下被设了"
                     "种子。不管 torch.cuda.is_available() 返回什么，都要用 `seed` 给它设种子。", seed=seed,
                     key="seeded-with-gpu-only")
            fail("make_loader(..., seed={seed}) shuffles in another order when the hash of strings changes, as it does "
                 "in every new Python process (PYTHONHASHSEED): its generator's seed is derived from hash() of a string. "
                 "Seed it with `seed` itself.",
                 "当字符串的 hash 改变时（每个新的 Python 进程都会这样，PYTHONHASHSEED），make_loader(..., seed={seed}) "
                 "打乱的顺序不同：它的 generator 的种子是由字符串的 hash() 得出的。请直接用 `seed` 设种子。", seed=seed,
                 key="hash-seed")
    if [i for b in out["other"] for i in b] == flat[0]:
        fail("seed={seed} and seed={other} gave the same order: seed the loader's generator with `seed`.",
             "seed={seed} 与 seed={other} 得到相同顺序：请用 `seed` 给 loader 的 generator 设种子。",
             seed=seed, other=other_seed, key="seed-ignored")


SEED_RANGE = {"Seed must be between 0 and 2**32 - 1": (
    "torch.initial_seed() is a 64-bit number, but NumPy's seeds stop at 2**32 - 1: "
    "seed with torch.initial_seed() % 2**32.",
    "torch.initial_seed() 是 64 位的数，而 NumPy 的种子最大只能到 2**32 - 1：请用 torch.initial_seed() % 2**32 设种子。")}


@check("seed_worker makes random and NumPy follow each worker's torch seed", points=1,
       zh="seed_worker 让 random 和 NumPy 跟随每个 worker 的 torch 种子")
def test_seed_worker(submission, rng):
    base = [int(v) for v in torch.randint(2**40, 2**62, (2,), generator=rng)]
    # seeds 2**31 and 2**10 apart too: seeding from a smaller modulus than 2**32 makes them collide
    seeds = [base[0], base[0], base[1], base[1] + 1, base[1] + 2**31, base[1] + 2**10]
    worker_ids = [0, 0, 0, 1, 0, 0]
    with explain(SEED_RANGE, key="seed-not-modulo"):
        found = submission.probe(worker_seeding, seeds, worker_ids, what="`seed_worker(worker_id)`")
    draws = found["cpu"]
    for k, name in ((0, "random"), (1, "NumPy")):
        if draws[0][k] != draws[1][k]:
            fail("After the same torch seed, seed_worker left {name} in different states: seed it from "
                 "torch.initial_seed() (a worker's torch seed), not from the clock or the OS.",
                 "torch 种子相同时，seed_worker 之后 {name} 的状态却不同：请用 torch.initial_seed()（worker 的 torch 种子）"
                 "来设种子，而不是时间或操作系统的随机源。", name=name, key="seed-from-clock")
        if draws[0][k] != draws[2][k] and draws[2][k] != draws[3][k] and draws[2][k] in (draws[4][k], draws[5][k]):
            fail("Torch seeds {apart} apart gave the same {name} numbers: the seed you give {name} keeps too few of "
                 "torch.initial_seed()'s bits. Take it modulo 2**32, NumPy's whole range.",
                 "相差 {apart} 的两个 torch 种子得到了相同的 {name} 随机数：你给 {name} 的种子只保留了 torch.initial_seed() "
                 "的一小部分位。请对 2**32 取模（NumPy 的全部范围）。",
                 name=name, apart="2**31" if draws[2][k] == draws[4][k] else "2**10", key="seed-modulus-small")
        if draws[0][k] == draws[2][k] or draws[2][k] == draws[3][k]:
            fail("Workers (or epochs) with different torch seeds got the same {name} numbers: the same random "
                 "augmentation everywhere. Seed {name} from torch.initial_seed() (modulo 2**32), not from a constant "
                 "or the worker_id alone.",
                 "不同 torch 种子的 worker（或 epoch）得到了相同的 {name} 随机数：处处是同样的随机增强。"
                 "请用 torch.initial_seed()（对 2**32 取模）给 {name} 设种子，而不是常数或仅用 worker_id。",
                 name=name, key="seed-not-from-torch")
        elsewhere(found, k, name, Text("`seed_worker`", "`seed_worker`"))


def elsewhere(found, k, name, what):
    """Fail when `found` (draws per setting) differs with a GPU there, or in another process, from the plain run."""
    for setting, key, en, zh in (
            ("gpu", "seeded-with-gpu-only", "{what} leaves {name} in another state when a GPU is there: it is seeded on "
             "one of the two paths only. Seed it whatever torch.cuda.is_available() says.",
             "有 GPU 时，{what} 让 {name} 处于另一种状态：它只在两种情况中的一种下被设了种子。不管 "
             "torch.cuda.is_available() 返回什么，都要给它设种子。"),
            ("salted", "hash-seed", "{what} leaves {name} in another state when the hash of strings changes, as it does "
             "in every new Python process (PYTHONHASHSEED): its seed is derived from hash() of a string. Seed it from "
             "the number itself.",
             "当字符串的 hash 改变时（每个新的 Python 进程都会这样，PYTHONHASHSEED），{what} 让 {name} 处于另一种状态："
             "它的种子是由字符串的 hash() 得出的。请直接用这个数设种子。")):
        if [d[k] for d in found[setting]] != [d[k] for d in found["cpu"]]:
            fail(en, zh, what=what, name=name, key=key)


@check("workers: num_workers processes, each started with worker_init_fn", points=1,
       zh="worker：num_workers 个进程，每个都用 worker_init_fn 启动")
def test_workers(submission, rng):
    seed = int(torch.randint(0, 10_000, (1,), generator=rng))
    torch_seed = int(torch.randint(2**40, 2**62, (1,), generator=rng))
    for num_workers in (0, 1, 2):  # one worker too: `num_workers > 1` is a slip
        # an epoch (which starts the worker processes) with 2 only: the loader's settings tell the rest
        out = submission.probe(worker_loader, 6, num_workers, seed, torch_seed, num_workers == 2,
                               what=f"`make_loader(dataset, 1, num_workers={num_workers})`")
        config = out["config"]
        _check_loader_type(config)
        if config["num_workers"] != num_workers:
            fail("make_loader(..., num_workers={want}) gave a DataLoader with num_workers={got}: pass num_workers "
                 "to the DataLoader.",
                 "make_loader(..., num_workers={want}) 得到的 DataLoader 的 num_workers 为 {got}："
                 "请把 num_workers 传给 DataLoader。", want=num_workers, got=config["num_workers"],
                 key="num-workers-ignored")
        if not num_workers:
            continue
        if not config["has_worker_init_fn"]:
            fail("The DataLoader has no worker_init_fn: pass worker_init_fn=seed_worker so each worker seeds "
                 "random and NumPy.",
                 "DataLoader 没有 worker_init_fn：请传入 worker_init_fn=seed_worker，让每个 worker 为 random 和 NumPy 设种子。",
                 key="worker-init-fn-missing")
        if out["init_draws"] and out["init_draws"][0] == out["init_draws"][1]:
            fail("The DataLoader's worker_init_fn is not seed_worker, and it does not make NumPy follow the worker's "
                 "torch seed: pass worker_init_fn=seed_worker.",
                 "DataLoader 的 worker_init_fn 不是 seed_worker，也没有让 NumPy 跟随 worker 的 torch 种子："
                 "请传入 worker_init_fn=seed_worker。", key="worker-init-fn-not-seed-worker")
        rows = out["rows"]
        if rows is not None:
            workers = {int(r[0]) for r in rows}
            if workers != set(range(num_workers)):
                fail("With num_workers={n} the samples should be loaded by workers {want}, got {got}.",
                     "num_workers={n} 时样本应由 worker {want} 加载，实际为 {got}。",
                     n=num_workers, want=list(range(num_workers)), got=sorted(workers), key="workers-not-used")


@check("pin_memory only when the batches go to a CUDA device", points=1,
       zh="只有数据要送到 CUDA 设备时才使用 pin_memory")
def test_pin_memory(submission):
    devices = ["cpu", "cuda", "cuda:0"]
    flags = submission.probe(pin_memory_flags, devices, what="`make_loader(dataset, 4, device=...)`")
    with_gpu, without_gpu = ([bool(f) for f in flags[k]] for k in ("True", "False"))
    if with_gpu == [True] * 3 and without_gpu == [False] * 3:
        fail("pin_memory followed torch.cuda.is_available() instead of the device argument: on a machine with a GPU "
             "it pinned memory for device='cpu' too. Decide from torch.device(device).type == 'cuda'.",
             "pin_memory 跟随的是 torch.cuda.is_available()，而不是 device 参数：在有 GPU 的机器上，device='cpu' "
             "时也用了锁页内存。请根据 torch.device(device).type == 'cuda' 判断。", key="pin-memory-from-cuda-available")
    missing = [d for d, flag in zip(devices[1:], with_gpu[1:]) if not flag]
    if missing:
        fail("With a GPU present, make_loader(..., device={device!r}) should pin memory (pin_memory=True): "
             "{device!r} is a CUDA device, and pinned batches copy to the GPU faster. Decide from "
             "torch.device(device).type.",
             "有 GPU 时，make_loader(..., device={device!r}) 应使用 pin_memory=True：{device!r} 是 CUDA 设备，"
             "锁页内存能加快数据拷贝到 GPU。请根据 torch.device(device).type 判断。",
             device=missing[0], key="pin-memory-missing")
    if with_gpu[0] or without_gpu[0]:  # without a GPU, pinning for "cuda" or not are both fine
        fail("make_loader(..., device='cpu') should not pin memory: pin_memory only helps copies to a GPU; "
             "on the CPU it costs time and memory for nothing.",
             "make_loader(..., device='cpu') 不应使用 pin_memory：锁页内存只对拷贝到 GPU 有帮助，"
             "在 CPU 上只会白白浪费时间和内存。", key="pin-memory-always")
