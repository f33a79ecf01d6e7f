"""Hidden checks of ex15: checkpoints. save_checkpoint/load_checkpoint must carry the model, the
optimizer, the scheduler and the epoch through a file, so that a run stopped and resumed ends with
the same weights as a run that never stopped; the file must load with torch.load(weights_only=True),
and load_checkpoint must hand map_location to torch.load.

A probe trains run A (trusted loop: Adam and StepLR over fixed batches the judge drew), saves it with
the learner's save_checkpoint in the sandbox's working directory, keeps training to the end; run B
starts from other weights, loads the file with the learner's load_checkpoint and trains to the end.
The judge compares what it gets back.
"""

import torch
from torch import nn

from grader.checking import check, fail, probe

EPOCHS, STEP_SIZE, GAMMA, LR = 6, 4, 0.5, 0.05


def new_model():
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))


# -- sandbox side ---------------------------------------------------------------------------

def _setup(state):
    model = new_model()
    model.load_state_dict(state)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=STEP_SIZE, gamma=GAMMA)
    return model, optimizer, scheduler


def _train_epoch(model, optimizer, scheduler, batches):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    scheduler.step()


def _snapshot(model, optimizer, scheduler):
    opt = optimizer.state_dict()
    return {
        "weights": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "opt_state": [{name: (v.detach().clone().double() if isinstance(v, torch.Tensor) else float(v))
                       for name, v in opt["state"].get(i, {}).items()}
                      for i in range(len(list(model.parameters())))],
        "lr": [float(g["lr"]) for g in optimizer.param_groups],
        "last_epoch": int(scheduler.last_epoch),
    }


def _find_tensors(obj, found, depth=0):
    if depth > 6:
        return
    if isinstance(obj, torch.Tensor):
        found.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _find_tensors(v, found, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _find_tensors(v, found, depth + 1)


@probe
def resume_run(module, state_a, state_b, batches, stop, path):
    model, optimizer, scheduler = _setup(state_a)
    for _ in range(stop + 1):
        _train_epoch(model, optimizer, scheduler, batches)
    saved = _snapshot(model, optimizer, scheduler)
    module.save_checkpoint(path, model, optimizer, scheduler, stop)

    import os

    file = {"exists": os.path.isfile(path), "error": None, "has_weights": False, "size": 0}
    if file["exists"]:
        file["size"] = os.path.getsize(path)
        try:
            content = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - the learner's file may hold anything
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            file["error"] = f"{type(exc).__name__}: {first.split('. ')[0][:160]}"
        else:
            tensors = []
            _find_tensors(content, tensors)
            file["has_weights"] = all(any(t.shape == w.shape and torch.equal(t.cpu(), w) for t in tensors)
                                      for w in saved["weights"].values())

    for _ in range(stop + 1, EPOCHS):  # run A never stops
        _train_epoch(model, optimizer, scheduler, batches)
    final_a = {k: v.detach().clone() for k, v in model.state_dict().items()}

    model_b, optimizer_b, scheduler_b = _setup(state_b)
    start = module.load_checkpoint(path, model_b, optimizer_b, scheduler_b, map_location="cpu")
    loaded = _snapshot(model_b, optimizer_b, scheduler_b)
    resumed_from = start if isinstance(start, int) and not isinstance(start, bool) else None
    if isinstance(start, torch.Tensor) and start.numel() == 1 and not start.is_floating_point():
        resumed_from = int(start)
    for _ in range(resumed_from if resumed_from is not None else EPOCHS, EPOCHS):
        _train_epoch(model_b, optimizer_b, scheduler_b, batches)
    final_b = {k: v.detach().clone() for k, v in model_b.state_dict().items()}
    return {"saved": saved, "loaded": loaded, "file": file, "start": start if resumed_from is None else resumed_from,
            "start_type": type(start).__name__, "final_a": final_a, "final_b": final_b}


@probe
def torch_load_calls(module, state, path):
    """Save a checkpoint, then load it with a map_location object only torch.load should see."""
    model, optimizer, scheduler = _setup(state)
    module.save_checkpoint(path, model, optimizer, scheduler, 0)

    def map_location(storage, location):
        return storage

    calls = []
    original = torch.load

    def recording_load(*args, **kwargs):
        where = kwargs.get("map_location", args[1] if len(args) > 1 else None)
        calls.append({"map_location": "ours" if where is map_location else repr(where)[:60],
                      "weights_only": repr(kwargs.get("weights_only", "default"))})
        return original(*args, **kwargs)

    torch.load = recording_load
    try:
        module.load_checkpoint(path, *_setup(state), map_location=map_location)
    finally:
        torch.load = original
    return calls


# -- judge side ---------------------------------------------------------------------------

_RUNS = {}


def run_case(submission, rng):
    """One resume experiment per grading: every check judges the same run (drawn by the first check's rng)."""
    if id(submission) not in _RUNS:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
            state_a, state_b = new_model().state_dict(), new_model().state_dict()
        teacher = torch.randn(3, 1, generator=rng)
        batches = []
        for _ in range(4):
            x = torch.randn(8, 3, generator=rng)
            batches.append((x, torch.sin(x @ teacher) + 0.1 * torch.randn(8, 1, generator=rng)))
        stop = int(torch.randint(1, 3, (1,), generator=rng))  # (stop + 1) % STEP_SIZE != 0
        path = f"ckpt_{int(torch.randint(0, 10**6, (1,), generator=rng))}.pt"
        out = submission.probe(resume_run, state_a, state_b, batches, stop, path,
                               what=f"`save_checkpoint('{path}', model, optimizer, scheduler, epoch={stop})` then "
                                    f"`load_checkpoint('{path}', model, optimizer, scheduler, map_location='cpu')`")
        _RUNS[id(submission)] = (out, stop, state_b)
    return _RUNS[id(submission)]


def max_diff(a: dict, b: dict) -> float:
    return max(float((a[k].double() - b[k].double()).abs().max()) for k in b)


def same_weights(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(a[k].shape == b[k].shape for k in b) and max_diff(a, b) <= 1e-6


def opt_state_matches(loaded, saved) -> bool:
    if len(loaded) != len(saved):
        return False
    for got, want in zip(loaded, saved):
        if set(got) != set(want):
            return False
        for name, value in want.items():
            other = got[name]
            if isinstance(value, torch.Tensor):
                if not isinstance(other, torch.Tensor) or other.shape != value.shape or \
                        not torch.allclose(other, value, rtol=0, atol=1e-7):
                    return False
            elif other != value:
                return False
    return True


@check("save_checkpoint writes a file that torch.load(weights_only=True) reads, holding the weights", points=1,
       zh="save_checkpoint 写出的文件能用 torch.load(weights_only=True) 读取，且包含权重")
def test_file(submission, rng):
    out, stop, _ = run_case(submission, rng)
    file = out["file"]
    if not file["exists"]:
        fail("save_checkpoint wrote no file at the path it was given: call torch.save(checkpoint, path) with that path.",
             "save_checkpoint 没有在给定的路径上写出文件：请用这个 path 调用 torch.save(checkpoint, path)。")
    if file["error"]:
        fail("the checkpoint cannot be read with torch.load(path, weights_only=True) "
             f"({file['error']}): save state_dicts (tensors, numbers, dicts), not the model, optimizer or "
             "scheduler objects themselves. Loading pickled objects runs arbitrary code; weights_only=True refuses it.",
             "该检查点无法用 torch.load(path, weights_only=True) 读取"
             f"（{file['error']}）：请保存 state_dict（tensor、数字、字典），而不是模型、优化器或调度器对象本身。"
             "加载 pickle 对象可能执行任意代码，weights_only=True 会拒绝它。")
    if not file["has_weights"]:
        fail("the checkpoint file does not hold the model's weights as they were when it was saved: "
             "put model.state_dict() in it.",
             "检查点文件里没有保存时刻的模型权重：请把 model.state_dict() 放进去。")


@check("load_checkpoint restores the weights into the model it is given", points=2,
       zh="load_checkpoint 把权重恢复到传入的模型中")
def test_model_restored(submission, rng):
    out, stop, state_b = run_case(submission, rng)
    loaded, saved = out["loaded"]["weights"], out["saved"]["weights"]
    if same_weights(loaded, saved):
        return
    if same_weights(loaded, state_b):
        fail("after load_checkpoint the model still has its own initial weights: load the saved ones into the model "
             "you were given, with model.load_state_dict(checkpoint[...]) (assigning a new object to the name "
             "`model` inside the function changes nothing outside).",
             "调用 load_checkpoint 之后模型仍是它自己的初始权重：请用 model.load_state_dict(checkpoint[...]) 把保存的权重加载进"
             "传入的模型（在函数里把新对象赋给变量 `model` 不会影响外面的模型）。")
    fail(f"after load_checkpoint the model's weights differ from those saved (max abs difference "
         f"{max_diff(loaded, saved):.2e}): save model.state_dict() and load it with model.load_state_dict().",
         f"调用 load_checkpoint 之后模型权重与保存时不同（最大绝对差 {max_diff(loaded, saved):.2e}）："
         "请保存 model.state_dict()，并用 model.load_state_dict() 加载。")


@check("load_checkpoint restores the optimizer state (Adam's moments, step, learning rate)", points=2,
       zh="load_checkpoint 恢复优化器状态（Adam 的动量、步数、学习率）")
def test_optimizer_restored(submission, rng):
    out, *_ = run_case(submission, rng)
    loaded, saved = out["loaded"], out["saved"]
    if not any(loaded["opt_state"]):
        fail("after load_checkpoint the optimizer state is empty: Adam's running averages and step count were not "
             "restored, so the resumed run takes different steps. Save optimizer.state_dict() and load it with "
             "optimizer.load_state_dict().",
             "调用 load_checkpoint 之后优化器状态是空的：Adam 的滑动平均和步数没有恢复，续训的每一步都会不同。"
             "请保存 optimizer.state_dict()，并用 optimizer.load_state_dict() 加载。")
    if not opt_state_matches(loaded["opt_state"], saved["opt_state"]):
        fail("after load_checkpoint the optimizer state (Adam's exp_avg, exp_avg_sq, step) differs from the one "
             "saved: save optimizer.state_dict() at the same moment as the model and load it with "
             "optimizer.load_state_dict().",
             "调用 load_checkpoint 之后优化器状态（Adam 的 exp_avg、exp_avg_sq、step）与保存时不同："
             "请在保存模型的同时保存 optimizer.state_dict()，并用 optimizer.load_state_dict() 加载。")
    if any(abs(a - b) > 1e-12 for a, b in zip(loaded["lr"], saved["lr"])):
        fail(f"after load_checkpoint the optimizer's learning rate is {loaded['lr'][0]:.4g}, but it was "
             f"{saved['lr'][0]:.4g} when saved: load the optimizer's state_dict (it holds the current lr).",
             f"调用 load_checkpoint 之后优化器的学习率为 {loaded['lr'][0]:.4g}，保存时为 {saved['lr'][0]:.4g}："
             "请加载优化器的 state_dict（其中包含当前的 lr）。")


@check("load_checkpoint restores the scheduler", points=1, zh="load_checkpoint 恢复学习率调度器")
def test_scheduler_restored(submission, rng):
    out, *_ = run_case(submission, rng)
    got, want = out["loaded"]["last_epoch"], out["saved"]["last_epoch"]
    if got != want:
        fail(f"after load_checkpoint the scheduler is at epoch {got}, but it was at epoch {want} when saved: "
             "its next learning-rate drops would come at the wrong epochs. Save scheduler.state_dict() and "
             "load it with scheduler.load_state_dict().",
             f"调用 load_checkpoint 之后调度器处在第 {got} 个 epoch，而保存时是第 {want} 个：之后的学习率衰减会发生在错误的 "
             "epoch。请保存 scheduler.state_dict()，并用 scheduler.load_state_dict() 加载。")


@check("load_checkpoint returns the epoch to resume from: the saved epoch + 1", points=1,
       zh="load_checkpoint 返回续训的起始 epoch：保存的 epoch + 1")
def test_epoch(submission, rng):
    out, stop, _ = run_case(submission, rng)
    start = out["start"]
    if start is None or out["start_type"] == "NoneType":
        fail(f"load_checkpoint returned nothing: return the epoch to resume from (the saved epoch + 1, here {stop + 1}).",
             f"load_checkpoint 没有返回值：请返回续训的起始 epoch（保存的 epoch + 1，这里是 {stop + 1}）。")
    if not isinstance(start, int):
        fail(f"load_checkpoint should return an int (the epoch to resume from), got a {out['start_type']}.",
             f"load_checkpoint 应返回一个 int（续训的起始 epoch），实际得到 {out['start_type']}。")
    if start == stop:
        fail(f"load_checkpoint returned {start}, the epoch that was saved: that epoch is already done, so resuming "
             f"there trains it twice. Return the saved epoch + 1 ({stop + 1}).",
             f"load_checkpoint 返回了 {start}，也就是保存时的 epoch：这个 epoch 已经训练完了，从这里续训会把它训练两次。"
             f"请返回保存的 epoch + 1（{stop + 1}）。")
    if start != stop + 1:
        fail(f"after save_checkpoint(..., epoch={stop}) load_checkpoint should return {stop + 1}, got {start}: "
             "save the epoch in the checkpoint and return it + 1.",
             f"save_checkpoint(..., epoch={stop}) 之后 load_checkpoint 应返回 {stop + 1}，实际为 {start}："
             "请把 epoch 存进检查点，并返回它 + 1。")


@check("resuming from the checkpoint ends with the same weights as never stopping", points=2,
       zh="从检查点续训与从不中断得到相同的最终权重")
def test_resume(submission, rng):
    out, stop, _ = run_case(submission, rng)
    final_a, final_b = out["final_a"], out["final_b"]
    if same_weights(final_b, final_a):
        return
    missing = []
    if not same_weights(out["loaded"]["weights"], out["saved"]["weights"]):
        missing.append(("the model weights", "模型权重"))
    if not opt_state_matches(out["loaded"]["opt_state"], out["saved"]["opt_state"]):
        missing.append(("the optimizer state", "优化器状态"))
    if out["loaded"]["last_epoch"] != out["saved"]["last_epoch"]:
        missing.append(("the scheduler", "调度器"))
    if out["start"] != stop + 1:
        missing.append(("the epoch to resume from", "续训的起始 epoch"))
    diff = max_diff(final_b, final_a) if set(final_b) == set(final_a) else float("inf")
    why_en = f" Not restored: {', '.join(m[0] for m in missing)}." if missing else ""
    why_zh = f"没有恢复的是：{'、'.join(m[1] for m in missing)}。" if missing else ""
    fail(f"a run saved after epoch {stop}, resumed with load_checkpoint and trained to epoch {EPOCHS - 1} ends with "
         f"other weights than the same run never stopped (max abs difference {diff:.2e}).{why_en}",
         f"在第 {stop} 个 epoch 后保存、用 load_checkpoint 恢复并训练到第 {EPOCHS - 1} 个 epoch 的运行，其最终权重与从不中断的"
         f"同一运行不同（最大绝对差 {diff:.2e}）。{why_zh}")


@check("load_checkpoint passes map_location to torch.load, with weights_only", points=1,
       zh="load_checkpoint 把 map_location 传给 torch.load，并使用 weights_only")
def test_torch_load_args(submission, rng):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
        state = new_model().state_dict()
    path = f"ckpt_map_{int(torch.randint(0, 10**6, (1,), generator=rng))}.pt"
    calls = submission.probe(torch_load_calls, state, path,
                             what=f"`load_checkpoint('{path}', model, optimizer, scheduler, map_location=<a function>)`")
    if not calls:
        fail("load_checkpoint never called torch.load: read the checkpoint file with torch.load(path, ...).",
             "load_checkpoint 没有调用 torch.load：请用 torch.load(path, ...) 读取检查点文件。")
    call = calls[0]
    if call["map_location"] != "ours":
        fail(f"load_checkpoint(..., map_location=<a function>) called torch.load with map_location={call['map_location']}: "
             "pass the map_location argument on to torch.load unchanged (a checkpoint saved on a GPU needs "
             "map_location='cpu' to load on a machine without one).",
             f"load_checkpoint(..., map_location=<一个函数>) 调用 torch.load 时用的是 map_location={call['map_location']}："
             "请把 map_location 参数原样传给 torch.load（在 GPU 上保存的检查点，要在没有 GPU 的机器上加载就需要 map_location='cpu'）。")
    if call["weights_only"] not in ("True", "'default'"):
        fail(f"load_checkpoint called torch.load with weights_only={call['weights_only']}: loading a pickle can run "
             "arbitrary code. Save only state_dicts, tensors and numbers, and load with weights_only=True.",
             f"load_checkpoint 调用 torch.load 时用了 weights_only={call['weights_only']}：加载 pickle 可能执行任意代码。"
             "请只保存 state_dict、tensor 和数字，并用 weights_only=True 加载。")
