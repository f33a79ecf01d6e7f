"""Hidden checks of ex13: a custom Dataset (length, items, transform) and a DataLoader configured
from its arguments (batching, drop_last, seeded shuffling, workers with a worker_init_fn, pin_memory).

The loader checks run the learner's `make_loader` over a trusted dataset (defined here), so a
broken `ArrayDataset` does not fail them too.
"""

import random

import torch

from grader.checking import check, expect_close, fail, probe

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


def _epoch(loader):
    """One pass over a loader of IndexDataset: the list of batches, each a list of sample indices."""
    batches = []
    for xb, yb in loader:
        batches.append([int(i) for i in yb])
    return batches


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


# -- probes ----------------------------------------------------------------------------------

@probe
def dataset_items(module, x, y, indices):
    ds = module.ArrayDataset(x, y)
    items = []
    for i in indices:
        item = ds[i]
        items.append(tuple(item) if isinstance(item, (tuple, list)) else item)
    return {"len": len(ds), "items": items}


@probe
def transform_calls(module, x, y, indices, scale, shift):
    calls = []
    phase = ["init"]

    def transform(v):
        calls.append({"phase": phase[0], "shape": list(v.shape) if isinstance(v, torch.Tensor) else None,
                      "is_label": isinstance(v, torch.Tensor) and v.dim() == 0})
        return v * scale + shift

    ds = module.ArrayDataset(x, y, transform=transform)
    phase[0] = "getitem"
    items = []
    for i in indices:
        item = ds[i]
        items.append(tuple(item) if isinstance(item, (tuple, list)) else item)
    return {"calls": calls, "items": items}


@probe
def batching(module, n, batch_size, drop_last):
    loader = module.make_loader(IndexDataset(n), batch_size, shuffle=False, drop_last=drop_last)
    if not isinstance(loader, torch.utils.data.DataLoader):
        return {"config": _loader_config(loader)}
    xb, _ = next(iter(loader))
    return {"config": _loader_config(loader), "batches": _epoch(loader), "x_shape": list(xb.shape)}


@probe
def shuffle_orders(module, n, batch_size, seed, other_seed, disturb):
    data = IndexDataset(n)
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
    return {"epochs": epochs, "repeat": repeat, "other": other}


@probe
def worker_seeding(module, seeds, worker_ids):
    """Call seed_worker as a worker would, after torch seeded itself; record what random/NumPy draw."""
    import numpy as np

    draws = []
    for seed, wid in zip(seeds, worker_ids):
        torch.manual_seed(seed)
        random.seed(12345)  # what the worker had before: the same everywhere
        np.random.seed(12345)
        module.seed_worker(wid)
        draws.append([random.random(), float(np.random.rand())])
    return draws


@probe
def worker_loader(module, n, num_workers, seed, torch_seed):
    import numpy as np

    loader = module.make_loader(WorkerDataset(n), 1, shuffle=False, num_workers=num_workers, seed=seed)
    config = _loader_config(loader)
    init_draws = None
    init_fn = getattr(loader, "worker_init_fn", None)
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
    if isinstance(loader, torch.utils.data.DataLoader) and config["num_workers"] == num_workers:
        rows = [[float(v) for v in batch.reshape(-1)] for batch in loader]
    return {"config": config, "init_draws": init_draws, "rows": rows}


@probe
def pin_memory_flags(module, devices):
    return [getattr(module.make_loader(IndexDataset(8), 4, device=d), "pin_memory", None) for d in devices]


# -- checks ----------------------------------------------------------------------------------

def _draw_data(rng, n, f=3):
    x = torch.randn(n, f, generator=rng)
    y = torch.randint(0, 5, (n,), generator=rng)
    return x, y


def _item_pair(item, i):
    if not isinstance(item, tuple) or len(item) != 2:
        fail(f"dataset[{i}] should be a pair (x, y), got {type(item).__name__}"
             + (f" of {len(item)} items" if isinstance(item, tuple) else "") + ".",
             f"dataset[{i}] 应返回一对 (x, y)，实际得到 {type(item).__name__}"
             + (f"（{len(item)} 个元素）" if isinstance(item, tuple) else "") + "。")
    return item


def _expect_label(value, expected, i):
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.reshape(()).item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if value != int(expected):
        fail(f"the label of dataset[{i}] should be {int(expected)} (labels[{i}]), got {value}: "
             "return the label of the same index, unchanged.",
             f"dataset[{i}] 的标签应为 {int(expected)}（labels[{i}]），实际为 {value}：请返回同一索引的标签，不要改动它。")


@check("ArrayDataset: len() and dataset[i] return the samples", points=1,
       zh="ArrayDataset：len() 与 dataset[i] 返回对应样本")
def test_dataset_items(submission, rng):
    n = int(torch.randint(7, 20, (1,), generator=rng))
    x, y = _draw_data(rng, n)
    indices = [0, n - 1] + torch.randint(0, n, (3,), generator=rng).tolist()
    out = submission.probe(dataset_items, x, y, indices, what="`ArrayDataset(features, labels)`")
    if out["len"] != n:
        more = " That is the number of features per sample: count the rows (samples)." if out["len"] == x.shape[1] else ""
        fail(f"len(dataset) should be {n}, the number of samples (rows of features), got {out['len']}.{more}",
             f"len(dataset) 应为样本数 {n}（features 的行数），实际为 {out['len']}。"
             + (" 这是每个样本的特征数：应该数行（样本）。" if more else ""))
    for i, item in zip(indices, out["items"]):
        xi, yi = _item_pair(item, i)
        expect_close(xi, x[i], f"x of dataset[{i}]", rtol=0, atol=0)
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
        fail("the transform ran in __init__, on the whole data at once: apply it in __getitem__ to one sample, "
             "so that a random transform (data augmentation) gives a new result each time a sample is read.",
             "transform 在 __init__ 里对整个数据一次性执行了：应在 __getitem__ 中对单个样本执行，"
             "这样随机变换（数据增强）每次读取样本都会得到新的结果。")
    if any(c["is_label"] for c in calls):
        fail("the transform was applied to the label too: it transforms the features x only; return the label unchanged.",
             "transform 也作用在了标签上：它只变换特征 x，标签要原样返回。")
    if not calls:
        fail("the transform given to ArrayDataset was never called: in __getitem__, apply self.transform to x "
             "when a transform was given.",
             "传给 ArrayDataset 的 transform 从未被调用：在 __getitem__ 中，如果给了 transform，就对 x 调用 self.transform。")
    if len(calls) != len(indices):
        fail(f"reading {len(indices)} samples called the transform {len(calls)} times: call it once per "
             "__getitem__, on that sample's features.",
             f"读取 {len(indices)} 个样本调用了 transform {len(calls)} 次：每次 __getitem__ 应对该样本的特征调用一次。")
    for i, item in zip(indices, out["items"]):
        xi, yi = _item_pair(item, i)
        expect_close(xi, x[i] * scale + shift, f"x of dataset[{i}] (with the transform)", hints={
            "factor": ("Is the transform applied twice, or not at all?", "transform 是否执行了两次，或者根本没执行？")})
        _expect_label(yi, y[i], i)


def _check_loader_type(config):
    if not config["is_loader"]:
        fail(f"make_loader should return a torch.utils.data.DataLoader, got a {config['type']}.",
             f"make_loader 应返回 torch.utils.data.DataLoader，实际得到 {config['type']}。")


@check("DataLoader batches: batch_size and drop_last", points=2, zh="DataLoader 的分批：batch_size 与 drop_last")
def test_batching(submission, rng):
    batch_size = int(torch.randint(3, 7, (1,), generator=rng))
    n = batch_size * int(torch.randint(2, 5, (1,), generator=rng)) + int(torch.randint(1, batch_size, (1,), generator=rng))
    for drop_last in (False, True):
        out = submission.probe(batching, n, batch_size, drop_last,
                               what=f"`make_loader(dataset[{n}], {batch_size}, shuffle=False, drop_last={drop_last})`")
        _check_loader_type(out["config"])
        batches = out["batches"]
        full, rest = divmod(n, batch_size)
        expected = [list(range(k * batch_size, (k + 1) * batch_size)) for k in range(full)]
        if not drop_last:
            expected.append(list(range(full * batch_size, n)))
        sizes = [len(b) for b in batches]
        want = [len(b) for b in expected]
        if sizes != want:
            if drop_last and sizes == want + [rest]:
                fail(f"with drop_last=True, {n} samples in batches of {batch_size} should give {full} full batches, "
                     f"got {len(sizes)} (the last one of {rest}): pass drop_last to the DataLoader.",
                     f"drop_last=True 时，{n} 个样本按 {batch_size} 分批应得到 {full} 个完整 batch，实际得到 {len(sizes)} 个"
                     f"（最后一个只有 {rest} 个）：请把 drop_last 传给 DataLoader。")
            if not drop_last and sizes == want[:-1]:
                fail(f"with drop_last=False, the last {rest} samples must still come as a smaller batch, but they "
                     "were dropped: pass drop_last to the DataLoader instead of always dropping.",
                     f"drop_last=False 时，最后 {rest} 个样本仍应组成一个较小的 batch，但它们被丢掉了："
                     "请把 drop_last 参数传给 DataLoader，而不是总是丢弃。")
            fail(f"{n} samples with batch_size={batch_size}, drop_last={drop_last} should give batch sizes {want}, "
                 f"got {sizes}: pass batch_size to the DataLoader.",
                 f"{n} 个样本、batch_size={batch_size}、drop_last={drop_last} 时 batch 大小应为 {want}，实际为 {sizes}："
                 "请把 batch_size 传给 DataLoader。")
        if batches != expected:
            fail(f"with shuffle=False the samples should come in order 0, 1, 2, ..., got the batches {batches[:2]}...: "
                 "pass shuffle to the DataLoader (do not always shuffle).",
                 f"shuffle=False 时样本应按 0, 1, 2, ... 的顺序输出，实际 batch 为 {batches[:2]}...："
                 "请把 shuffle 参数传给 DataLoader（不要总是打乱）。")
        if out["x_shape"] != [batch_size, 2]:
            fail(f"a batch of x should be stacked into shape [{batch_size}, 2], got {out['x_shape']}: "
                 "keep the DataLoader's default collate.",
                 f"一个 batch 的 x 应堆叠为形状 [{batch_size}, 2]，实际为 {out['x_shape']}：请使用 DataLoader 默认的 collate。")


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
            fail(f"one epoch should give every sample exactly once, got {len(order)} samples "
                 f"({len(set(order))} different) out of {n}: use shuffle=True, not sampling with replacement.",
                 f"一个 epoch 应恰好给出每个样本一次，实际得到 {len(order)} 个样本（{len(set(order))} 个不同），共 {n} 个："
                 "请用 shuffle=True，而不是有放回的采样。")
    if flat[0] == list(range(n)):
        fail("with shuffle=True the first epoch came in order 0, 1, 2, ...: pass shuffle=True to the DataLoader.",
             "shuffle=True 时第一个 epoch 仍按 0, 1, 2, ... 的顺序：请把 shuffle=True 传给 DataLoader。")
    if flat[0] == flat[1]:
        fail("two epochs of the same loader came in the same order: the order must change every epoch. "
             "Give the DataLoader one generator and let it shuffle (do not re-seed it for each epoch).",
             "同一个 loader 的两个 epoch 顺序相同：每个 epoch 的顺序都应不同。给 DataLoader 一个 generator，"
             "由它来打乱（不要每个 epoch 重新设种子）。")
    repeat = [[i for b in epoch for i in b] for epoch in out["repeat"]]
    if repeat != flat:
        fail(f"two loaders made with the same seed={seed} gave different orders, because other code used the global "
             "random generator in between: create a torch.Generator, seed it with `seed` and pass it as "
             "generator= to the DataLoader (torch.manual_seed is global and not enough).",
             f"用相同 seed={seed} 创建的两个 loader 顺序不同，因为中间其他代码用了全局随机数生成器：请创建一个 "
             "torch.Generator，用 `seed` 设种子，并以 generator= 传给 DataLoader（torch.manual_seed 是全局的，不够）。")
    if [i for b in out["other"] for i in b] == flat[0]:
        fail(f"seed={seed} and seed={other_seed} gave the same order: seed the loader's generator with `seed`.",
             f"seed={seed} 与 seed={other_seed} 得到相同顺序：请用 `seed` 给 loader 的 generator 设种子。")


@check("seed_worker makes random and NumPy follow each worker's torch seed", points=1,
       zh="seed_worker 让 random 和 NumPy 跟随每个 worker 的 torch 种子")
def test_seed_worker(submission, rng):
    base = [int(v) for v in torch.randint(2**40, 2**62, (2,), generator=rng)]
    seeds = [base[0], base[0], base[1], base[1] + 1]
    worker_ids = [0, 0, 0, 1]
    draws = submission.probe(worker_seeding, seeds, worker_ids, what="`seed_worker(worker_id)`")
    for k, name in ((0, "random"), (1, "NumPy")):
        if draws[0][k] != draws[1][k]:
            fail(f"after the same torch seed, seed_worker left {name} in different states: seed it from "
                 "torch.initial_seed() (a worker's torch seed), not from the clock or the OS.",
                 f"torch 种子相同时，seed_worker 之后 {name} 的状态却不同：请用 torch.initial_seed()（worker 的 torch 种子）"
                 "来设种子，而不是时间或操作系统的随机源。")
        if draws[0][k] == draws[2][k] or draws[2][k] == draws[3][k]:
            fail(f"workers (or epochs) with different torch seeds got the same {name} numbers: the same random "
                 f"augmentation everywhere. Seed {name} from torch.initial_seed() (modulo 2**32), not from a constant "
                 "or the worker_id alone.",
                 f"不同 torch 种子的 worker（或 epoch）得到了相同的 {name} 随机数：处处是同样的随机增强。"
                 f"请用 torch.initial_seed()（对 2**32 取模）给 {name} 设种子，而不是常数或仅用 worker_id。")


@check("workers: num_workers processes, each started with worker_init_fn", points=1,
       zh="worker：num_workers 个进程，每个都用 worker_init_fn 启动")
def test_workers(submission, rng):
    seed = int(torch.randint(0, 10_000, (1,), generator=rng))
    torch_seed = int(torch.randint(2**40, 2**62, (1,), generator=rng))
    for num_workers in (0, 2):
        out = submission.probe(worker_loader, 6, num_workers, seed, torch_seed,
                               what=f"`make_loader(dataset, 1, num_workers={num_workers})`")
        config = out["config"]
        _check_loader_type(config)
        if config["num_workers"] != num_workers:
            fail(f"make_loader(..., num_workers={num_workers}) gave a DataLoader with num_workers="
                 f"{config['num_workers']}: pass num_workers to the DataLoader.",
                 f"make_loader(..., num_workers={num_workers}) 得到的 DataLoader 的 num_workers 为 "
                 f"{config['num_workers']}：请把 num_workers 传给 DataLoader。")
        if num_workers and not config["has_worker_init_fn"]:
            fail("the DataLoader has no worker_init_fn: pass worker_init_fn=seed_worker so each worker seeds "
                 "random and NumPy.",
                 "DataLoader 没有 worker_init_fn：请传入 worker_init_fn=seed_worker，让每个 worker 为 random 和 NumPy 设种子。")
        if num_workers and out["init_draws"] and out["init_draws"][0] == out["init_draws"][1]:
            fail("the DataLoader's worker_init_fn does not make NumPy follow the worker's torch seed: "
                 "pass worker_init_fn=seed_worker.",
                 "DataLoader 的 worker_init_fn 没有让 NumPy 跟随 worker 的 torch 种子：请传入 worker_init_fn=seed_worker。")
        rows = out["rows"]
        if num_workers and rows is not None:
            workers = {int(r[0]) for r in rows}
            if workers != set(range(num_workers)):
                fail(f"with num_workers={num_workers} the samples should be loaded by workers "
                     f"{list(range(num_workers))}, got {sorted(workers)}.",
                     f"num_workers={num_workers} 时样本应由 worker {list(range(num_workers))} 加载，实际为 {sorted(workers)}。")
            by_worker = {w: [r[2] for r in rows if int(r[0]) == w] for w in workers}
            if len({tuple(v[:1]) for v in by_worker.values()}) < len(by_worker):
                fail("two workers drew the same NumPy random numbers: each worker must be seeded differently "
                     "(from torch.initial_seed(), which differs per worker).",
                     "两个 worker 抽到了相同的 NumPy 随机数：每个 worker 的种子必须不同"
                     "（用 torch.initial_seed()，它在每个 worker 中都不同）。")


@check("pin_memory only when the batches go to a CUDA device", points=1,
       zh="只有数据要送到 CUDA 设备时才使用 pin_memory")
def test_pin_memory(submission):
    devices = ["cpu", "cuda", "cuda:0"]
    flags = submission.probe(pin_memory_flags, devices, what="`make_loader(dataset, 4, device=...)`")
    for device, flag in zip(devices, flags):
        want = device != "cpu"
        if bool(flag) != want:
            if want:
                fail(f"make_loader(..., device={device!r}) should pin memory (pin_memory=True): "
                     f"{device!r} is a CUDA device, and pinned batches copy to the GPU faster. "
                     "Decide from torch.device(device).type.",
                     f"make_loader(..., device={device!r}) 应使用 pin_memory=True：{device!r} 是 CUDA 设备，"
                     "锁页内存能加快数据拷贝到 GPU。请根据 torch.device(device).type 判断。")
            fail(f"make_loader(..., device={device!r}) should not pin memory: pin_memory only helps copies to a GPU; "
                 "on the CPU it costs time and memory for nothing.",
                 f"make_loader(..., device={device!r}) 不应使用 pin_memory：锁页内存只对拷贝到 GPU 有帮助，"
                 "在 CPU 上只会白白浪费时间和内存。")
