"""Hidden checks of ex15: checkpoints. save_checkpoint/load_checkpoint must carry the model, the
optimizer, the scheduler and the epoch through a file, so that a run stopped and resumed ends with
the same weights as a run that never stopped; the file must load with torch.load(weights_only=True),
map_location must decide where the loaded tensors go, and a file holding pickled objects must be refused.

A probe trains run A (trusted loop: Adam and StepLR over fixed batches the judge drew), saves it with
the learner's save_checkpoint in the sandbox's working directory, keeps training to the end; run B
starts from other weights, loads the file with the learner's load_checkpoint and trains to the end.
Errors of the learner's functions come back as data, so each check judges its own part: a load that
fails on pickled objects is retried with pickles allowed, to judge what it restores (the file check
and the resume check carry that mistake). A second probe observes the effects of loading: map_location
(a function, and "cpu" while a GPU is pretended present) and weights_only (a harmless pickled object
slipped into the file must not be unpickled).
"""

import os
import pickle
import sys

import torch
from torch import nn

from grader.checking import (Text, check, describe, expect_number, fail, fail_raised, is_number, learner_call, matches,
                             patched, pretend_cuda, probe, verbatim)
from grader.devices import imported_anew

EPOCHS, STEP_SIZE, GAMMA, LR = 6, 4, 0.5, 0.05

ROUND_TRIP = Text("`save_checkpoint(path, model, optimizer, scheduler, epoch)` then "
                  "`load_checkpoint(path, model, optimizer, scheduler, map_location)`",
                  "先 `save_checkpoint(path, model, optimizer, scheduler, epoch)` 再 "
                  "`load_checkpoint(path, model, optimizer, scheduler, map_location)`")


def new_model():
    """A model with buffers as well as parameters (the BatchNorm's running statistics): a checkpoint of the
    parameters alone loses them."""
    return nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 1))


def buffers_only(keys) -> bool:
    """Whether the keys of a state_dict are all BatchNorm buffers (what named_parameters() leaves out)."""
    return bool(keys) and all(k.endswith(("running_mean", "running_var", "num_batches_tracked")) for k in keys)


def buffers_lesson(keys) -> Text:
    return Text("{keys} are buffers, not parameters: model.state_dict() holds them, model.named_parameters() and "
                "model.parameters() do not. Save and load model.state_dict().",
                "{keys} 是 buffer，不是参数：model.state_dict() 包含它们，model.named_parameters() 和 model.parameters() "
                "不包含。请保存并加载 model.state_dict()。", keys=verbatim(", ".join(f"`{k}`" for k in sorted(keys)[:3])))


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


def _pickle_protocol(path) -> int | None:
    """The pickle protocol of a torch.save file's data.pkl (2 unless pickle_protocol= said otherwise)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            name = next(n for n in archive.namelist() if n.endswith("/data.pkl") or n == "data.pkl")
            head = archive.open(name).read(2)
    except Exception:  # not a zip file torch.save writes
        return None
    return head[1] if len(head) == 2 and head[0] == 0x80 else None


def _inspect_file(path, weights):
    """What torch.load(path, weights_only=True) makes of the learner's file."""
    file = {"exists": os.path.isfile(path), "unsafe": None, "unreadable": None, "has_weights": False}
    if not file["exists"]:
        return file
    try:
        content = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # the learner's file may hold anything
        file["protocol"] = _pickle_protocol(path)
        try:
            file["unsafe"] = torch.serialization.get_unsafe_globals_in_checkpoint(path)
        except Exception:  # not a torch.save file at all
            file["unreadable"] = type(exc).__name__
        return file
    tensors = []
    _find_tensors(content, tensors)
    file["missing"] = [k for k, w in weights.items() if not any(t.shape == w.shape and torch.equal(t.cpu(), w)
                                                                  for t in tensors)]
    file["has_weights"] = not file["missing"]
    return file


def _load(module, path, objects, map_location, retry_pickles):
    """Call the learner's load_checkpoint; its error as data. With `retry_pickles`, a load refused by the
    weights-only unpickler is tried again with pickles allowed, to judge what it restores."""
    start, error = learner_call(module, module.load_checkpoint, path, *objects, map_location=map_location)
    if error is None:
        return {"start": start, "error": None, "retried": False}
    if retry_pickles and error["type"] == "UnpicklingError":
        load = torch.load
        with patched(module, torch, "load", lambda *args, **kwargs: load(*args, **{**kwargs, "weights_only": False})):
            start, again = learner_call(module, module.load_checkpoint, path, *objects, map_location=map_location)
        if again is None:  # judged with the first error otherwise
            return {"start": start, "error": error, "retried": True}
    return {"start": None, "error": error, "retried": False}


def _unless_retried(load):
    """The learner's error, unless the load worked once pickles were allowed (the file check judges that)."""
    return None if load["retried"] else load["error"]


def _save(module, path, objects, epoch):
    return learner_call(module, module.save_checkpoint, path, *objects, epoch)[1]


def _as_epoch(start):
    """The epoch a training loop would resume from with the returned value (range() takes an int or an
    integer tensor of one element), or None."""
    if is_number(start, int):
        return start
    if isinstance(start, torch.Tensor) and start.numel() == 1 and not start.is_floating_point():
        return int(start)
    return None


@probe
def resume_run(module, state_a, state_b, batches, stop, path):
    objects = _setup(state_a)
    for _ in range(stop + 1):
        _train_epoch(*objects, batches)
    saved = _snapshot(*objects)
    os.makedirs(os.path.dirname(path), exist_ok=True)  # a folder relative to the current one, as a run keeps them
    save_error = _save(module, path, objects, stop)
    if save_error:
        return {"save_error": save_error}
    file = _inspect_file(path, saved["weights"])
    for _ in range(stop + 1, EPOCHS):  # run A never stops
        _train_epoch(*objects, batches)
    final_a = {k: v.detach().clone() for k, v in objects[0].state_dict().items()}

    resumed = _setup(state_b)
    load = _load(module, path, resumed, "cpu", retry_pickles=True)
    loaded = _snapshot(*resumed)
    start = _as_epoch(load["start"])
    final_b = None
    if start is not None and load["error"] is None:
        for _ in range(start, EPOCHS):
            _train_epoch(*resumed, batches)
        final_b = {k: v.detach().clone() for k, v in resumed[0].state_dict().items()}
    return {"save_error": None, "saved": saved, "loaded": loaded, "file": file, "start": load["start"],
            "load_error": load["error"], "retried": load["retried"], "final_a": final_a,
            "final_b": final_b}


class Canary:
    """A harmless pickled object: unpickling it (weights_only=False) leaves a mark in OPENED."""

    def __reduce__(self):
        return (_canary_opened, ())


OPENED = []


def _canary_opened():
    OPENED.append(True)
    return "canary"


def _slip_canary(path) -> bool:
    """Add a Canary to the learner's checkpoint dict, written back the way it was written (torch.save, or
    plain pickle); False when the file holds no dict."""
    try:
        content, write = torch.load(path, map_location="cpu", weights_only=False), torch.save
    except Exception:  # not a torch.save file: perhaps plain pickle
        try:
            with open(path, "rb") as f:
                content = pickle.load(f)
        except Exception:  # the file check says what is wrong with the file
            return False

        def write(obj, target):
            with open(target, "wb") as f:
                pickle.dump(obj, f)
    if not isinstance(content, dict):
        return False
    content["canary"] = Canary()
    write(content, path)
    return True


@probe
def load_effects(module, state, path):
    """Where map_location sends the loaded tensors, and whether a pickled object in the file is refused."""
    objects = _setup(state)
    gen = torch.Generator().manual_seed(0)
    _train_epoch(*objects, [(torch.randn(8, 3, generator=gen), torch.randn(8, 1, generator=gen))])  # Adam has state
    save_error = _save(module, path, objects, 0)
    if save_error:
        return {"save_error": save_error}
    placed, weights_only = [], []

    def map_location(storage, location):
        placed.append(location)
        return storage

    load = torch.load

    def recording_load(*args, **kwargs):
        if sys._getframe(1).f_globals is module.__dict__:  # the learner's own call, not one inside pickle
            weights_only.append(repr(kwargs.get("weights_only", "default")))
        return load(*args, **kwargs)

    with patched(module, torch, "load", recording_load):
        as_function = _load(module, path, _setup(state), map_location, retry_pickles=True)
    with pretend_cuda(module) as seen:
        anew = imported_anew(module, seen) or module  # the file imported with the GPU there: a device chosen then too
        at_import = len(seen.calls)
        on_cpu = _load(anew, path, _setup(state), "cpu", retry_pickles=True)
    opened = None
    if _slip_canary(path):
        OPENED.clear()
        _load(module, path, _setup(state), "cpu", retry_pickles=False)
        opened = bool(OPENED)
    return {"save_error": None, "placed": len(placed), "function_error": _unless_retried(as_function),
            "cuda_calls": seen.calls[at_import:], "cpu_error": _unless_retried(on_cpu), "opened": opened,
            "weights_only": weights_only[0] if weights_only else None}


# -- judge side ---------------------------------------------------------------------------

def run_case(submission, rng):
    """One resume experiment per grading: every check judges the same run (drawn by the first check's rng)."""
    def resumed():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
            state_a, state_b = new_model().state_dict(), new_model().state_dict()
        teacher = torch.randn(3, 1, generator=rng)
        batches = []
        for _ in range(4):
            x = torch.randn(8, 3, generator=rng)
            batches.append((x, torch.sin(x @ teacher) + 0.1 * torch.randn(8, 1, generator=rng)))
        stop = int(torch.randint(1, 3, (1,), generator=rng))  # (stop + 1) % STEP_SIZE != 0
        run = int(torch.randint(0, 10**6, (1,), generator=rng))
        path = f"run_{run}/ckpt_{run}.tar"  # relative to the current directory, in a folder of its own; not .pt
        out = submission.probe(resume_run, state_a, state_b, batches, stop, path, what=ROUND_TRIP)
        return out, stop, state_b
    return submission.once("resume", resumed)


def require_saved(out):
    if out["save_error"]:
        fail_raised(out["save_error"], "`save_checkpoint(path, model, optimizer, scheduler, epoch)`")


LOAD_CALL = "`load_checkpoint(path, model, optimizer, scheduler, map_location)`"


def load_error_before(out, done: bool, then: Text):
    """A load that raised before it did what a check judges fails with its error."""
    if out["load_error"] and not out["retried"] and not done:
        fail_raised(out["load_error"], LOAD_CALL, then)


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
                if not matches(other, value, rtol=0, atol=1e-7):
                    return False
            elif other != value:
                return False
    return True


def pickled_objects(unsafe: list[str]) -> str:
    """The classes a checkpoint pickled, as a learner named them: `Sequential`, `Adam`, `StepLR`."""
    names = [n.rsplit(".", 1)[-1] for n in unsafe if not n.startswith(("builtins.", "collections."))]
    names = sorted(set(names or [n.rsplit(".", 1)[-1] for n in unsafe]))
    return ", ".join(f"`{n}`" for n in names[:4])


@check("save_checkpoint writes a file that torch.load(weights_only=True) reads, holding the weights", points=1,
       zh="save_checkpoint 写出的文件能用 torch.load(weights_only=True) 读取，且包含权重")
def test_file(submission, rng):
    out, stop, _ = run_case(submission, rng)
    require_saved(out)
    file = out["file"]
    if not file["exists"]:
        fail("save_checkpoint wrote no file at the path it was given: call torch.save(checkpoint, path) with that path.",
             "save_checkpoint 没有在给定的路径上写出文件：请用这个 path 调用 torch.save(checkpoint, path)。",
             key="no-file")
    if file.get("protocol") not in (None, 2):
        fail("torch.load(path, weights_only=True) cannot read the checkpoint: it was written with pickle protocol "
             "{p} (`pickle_protocol={p}`), and the safe loader reads only protocol 2, torch.save's default. Leave "
             "pickle_protocol out.",
             "torch.load(path, weights_only=True) 无法读取该检查点：它是用 pickle 协议 {p} 写的（`pickle_protocol={p}`），"
             "而安全加载只支持 torch.save 默认的协议 2。请不要指定 pickle_protocol。",
             p=file["protocol"], key="pickle-protocol")
    if file["unsafe"] is not None:
        fail("the checkpoint holds whole objects ({objects}), pickled, where state_dicts belong: "
             "torch.load(path, weights_only=True) refuses them, because unpickling an object can run any code. "
             "Save model.state_dict(), optimizer.state_dict() and scheduler.state_dict() (tensors, numbers and "
             "dicts), and load them into the objects with load_state_dict().",
             "检查点里保存的是被 pickle 的整个对象（{objects}），而这里应该是 state_dict："
             "torch.load(path, weights_only=True) 会拒绝加载它们，因为反序列化一个对象可能执行任意代码。"
             "请保存 model.state_dict()、optimizer.state_dict() 和 scheduler.state_dict()（tensor、数字和字典），"
             "再用 load_state_dict() 把它们加载进对象。",
             objects=verbatim(pickled_objects(file["unsafe"])), key="pickled-objects")
    if file["unreadable"]:
        fail("torch.load cannot read the checkpoint ({error}): write it with torch.save(checkpoint, path).",
             "torch.load 无法读取该检查点（{error}）：请用 torch.save(checkpoint, path) 写出它。",
             error=verbatim(file["unreadable"]), key="not-torch-save")
    if buffers_only(file["missing"]):
        fail("the checkpoint file holds the model's parameters but not its buffers. {lesson}",
             "检查点文件里有模型的参数，但没有它的 buffer。{lesson}", lesson=buffers_lesson(file["missing"]),
             key="buffers-missing")
    if not file["has_weights"]:
        fail("the checkpoint file does not hold the model's weights as they were when it was saved: "
             "put model.state_dict() in it.",
             "检查点文件里没有保存时刻的模型权重：请把 model.state_dict() 放进去。", key="weights-missing")


@check("load_checkpoint restores the weights into the model it is given", points=2,
       zh="load_checkpoint 把权重恢复到传入的模型中")
def test_model_restored(submission, rng):
    out, stop, state_b = run_case(submission, rng)
    require_saved(out)
    loaded, saved = out["loaded"]["weights"], out["saved"]["weights"]
    restored = same_weights(loaded, saved)
    load_error_before(out, restored, Text("It stopped before restoring the model.", "它在恢复模型之前就停下了。"))
    if restored:
        return
    if same_weights(loaded, state_b):
        fail("after load_checkpoint the model still has its own initial weights: load the saved ones into the model "
             "you were given, with model.load_state_dict(checkpoint[...]) (assigning a new object to the name "
             "`model` inside the function changes nothing outside).",
             "调用 load_checkpoint 之后模型仍是它自己的初始权重：请用 model.load_state_dict(checkpoint[...]) 把保存的权重加载进"
             "传入的模型（在函数里把新对象赋给变量 `model` 不会影响外面的模型）。", key="model-not-restored")
    differ = [k for k in saved if k not in loaded or not matches(loaded[k], saved[k], rtol=0, atol=1e-6)]
    if buffers_only(differ):
        fail("after load_checkpoint the model's parameters are those saved, but not its buffers. {lesson}",
             "调用 load_checkpoint 之后模型的参数与保存时相同，但 buffer 不同。{lesson}", lesson=buffers_lesson(differ),
             key="buffers-not-restored")
    fail("after load_checkpoint the model's weights differ from those saved (max abs difference {diff:.2e}): "
         "save model.state_dict() and load it with model.load_state_dict().",
         "调用 load_checkpoint 之后模型权重与保存时不同（最大绝对差 {diff:.2e}）："
         "请保存 model.state_dict()，并用 model.load_state_dict() 加载。",
         diff=max_diff(loaded, saved), key="model-differs")


@check("load_checkpoint restores the optimizer state (Adam's moments, step, learning rate)", points=2,
       zh="load_checkpoint 恢复优化器状态（Adam 的动量、步数、学习率）")
def test_optimizer_restored(submission, rng):
    out, *_ = run_case(submission, rng)
    require_saved(out)
    loaded, saved = out["loaded"], out["saved"]
    restored = opt_state_matches(loaded["opt_state"], saved["opt_state"])
    load_error_before(out, restored, Text("It stopped before restoring the optimizer.", "它在恢复优化器之前就停下了。"))
    if not any(loaded["opt_state"]):
        fail("after load_checkpoint the optimizer you were given has an empty state: Adam's running averages and "
             "step count were not restored, so the resumed run takes different steps. Save optimizer.state_dict() "
             "and load it into that optimizer with optimizer.load_state_dict().",
             "调用 load_checkpoint 之后，传入的优化器状态是空的：Adam 的滑动平均和步数没有恢复，续训的每一步都会不同。"
             "请保存 optimizer.state_dict()，并用 optimizer.load_state_dict() 加载进这个优化器。",
             key="optimizer-not-restored")
    if not restored:
        fail("after load_checkpoint the optimizer state (Adam's exp_avg, exp_avg_sq, step) differs from the one "
             "saved: save optimizer.state_dict() at the same moment as the model and load it with "
             "optimizer.load_state_dict().",
             "调用 load_checkpoint 之后优化器状态（Adam 的 exp_avg、exp_avg_sq、step）与保存时不同："
             "请在保存模型的同时保存 optimizer.state_dict()，并用 optimizer.load_state_dict() 加载。",
             key="optimizer-differs")
    if not all(matches(a, b, rtol=0, atol=1e-12) for a, b in zip(loaded["lr"], saved["lr"])):
        fail("after load_checkpoint the optimizer's learning rate is {got:.4g}, but it was {want:.4g} when saved: "
             "load the optimizer's state_dict (it holds the current lr).",
             "调用 load_checkpoint 之后优化器的学习率为 {got:.4g}，保存时为 {want:.4g}："
             "请加载优化器的 state_dict（其中包含当前的 lr）。",
             got=loaded["lr"][0], want=saved["lr"][0], key="optimizer-lr-differs")


@check("load_checkpoint restores the scheduler", points=1, zh="load_checkpoint 恢复学习率调度器")
def test_scheduler_restored(submission, rng):
    out, *_ = run_case(submission, rng)
    require_saved(out)
    got, want = out["loaded"]["last_epoch"], out["saved"]["last_epoch"]
    load_error_before(out, got == want, Text("It stopped before restoring the scheduler.", "它在恢复调度器之前就停下了。"))
    if got != want:
        fail("after load_checkpoint the scheduler is at epoch {got}, but it was at epoch {want} when saved: "
             "its next learning-rate drops would come at the wrong epochs. Save scheduler.state_dict() and "
             "load it with scheduler.load_state_dict().",
             "调用 load_checkpoint 之后调度器处在第 {got} 个 epoch，而保存时是第 {want} 个：之后的学习率衰减会发生在错误的 "
             "epoch。请保存 scheduler.state_dict()，并用 scheduler.load_state_dict() 加载。",
             got=got, want=want, key="scheduler-not-restored")


@check("load_checkpoint returns the epoch to resume from: the saved epoch + 1, an int", points=1,
       zh="load_checkpoint 返回续训的起始 epoch：保存的 epoch + 1（int）")
def test_epoch(submission, rng):
    out, stop, _ = run_case(submission, rng)
    require_saved(out)
    load_error_before(out, False, Text("It stopped before returning the epoch.", "它在返回 epoch 之前就停下了。"))
    start, what = out["start"], ("the epoch load_checkpoint returned", "load_checkpoint 返回的 epoch")
    if start is None:
        fail("load_checkpoint returned None: return the epoch to resume from (the saved epoch + 1, here {want}).",
             "load_checkpoint 返回了 None：请返回续训的起始 epoch（保存的 epoch + 1，这里是 {want}）。",
             want=stop + 1, key="returned-none")
    value = start.reshape(()).item() if isinstance(start, torch.Tensor) and start.numel() == 1 else start
    if value == stop:
        fail("load_checkpoint returned {got}, the epoch that was saved: that epoch is already done, so resuming "
             "there trains it twice. Return the saved epoch + 1 ({want}).",
             "load_checkpoint 返回了 {got}，也就是保存时的 epoch：这个 epoch 已经训练完了，从这里续训会把它训练两次。"
             "请返回保存的 epoch + 1（{want}）。", got=stop, want=stop + 1, key="epoch-not-incremented")
    if value == stop + 2:
        fail("after save_checkpoint(..., epoch={saved}) load_checkpoint returned {got}, one epoch too far: is 1 added "
             "twice, once when saving and once when loading? Epoch {want} would be skipped.",
             "save_checkpoint(..., epoch={saved}) 之后 load_checkpoint 返回了 {got}，多了一个 epoch：是不是保存时和加载时"
             "各加了一次 1？这样会跳过第 {want} 个 epoch。", saved=stop, got=stop + 2, want=stop + 1,
             key="epoch-incremented-twice")
    if is_number(start, float) and start == stop + 1:
        fail("load_checkpoint returned the float {got}: an epoch is an int (range() refuses floats); return int(...).",
             "load_checkpoint 返回了浮点数 {got}：epoch 应是 int（range() 不接受浮点数）；请返回 int(...)。",
             got=start, key="not-an-int")
    expect_number(start, stop + 1, what, exact_type=True)
    if not is_number(start, int):
        fail("{what} should be an int, got {got}.", "{what} 应为 int，实际得到 {got}。", what=what,
             got=describe(start), key="not-an-int")


@check("resuming from the checkpoint ends with the same weights as never stopping", points=1,
       zh="从检查点续训与从不中断得到相同的最终权重",
       depends=("file", "model_restored", "optimizer_restored", "scheduler_restored", "epoch"))
def test_resume(submission, rng):
    out, stop, _ = run_case(submission, rng)
    require_saved(out)
    if out["load_error"]:
        if out["retried"]:
            fail("load_checkpoint cannot read the checkpoint that save_checkpoint wrote: torch.load refuses the "
                 "pickled objects in it (see the file check), so the run cannot resume.",
                 "load_checkpoint 读不了 save_checkpoint 写出的检查点：torch.load 拒绝加载其中被 pickle 的对象"
                 "（见文件那项检查），所以无法续训。", key="pickled-objects")
        fail_raised(out["load_error"], LOAD_CALL)
    final_a, final_b = out["final_a"], out["final_b"]
    if final_b is not None and same_weights(final_b, final_a):
        return
    missing = []
    if not same_weights(out["loaded"]["weights"], out["saved"]["weights"]):
        missing.append(("the model weights", "模型权重"))
    if not opt_state_matches(out["loaded"]["opt_state"], out["saved"]["opt_state"]):
        missing.append(("the optimizer state", "优化器状态"))
    if out["loaded"]["last_epoch"] != out["saved"]["last_epoch"]:
        missing.append(("the scheduler", "调度器"))
    if _as_epoch(out["start"]) != stop + 1:
        missing.append(("the epoch to resume from", "续训的起始 epoch"))
    why = Text("", "")
    if missing:
        why = Text(" Not restored as saved: {items}.", "没有按保存时恢复的是：{items}。",
                   items=Text(", ".join(m[0] for m in missing), "、".join(m[1] for m in missing)))
    diff = max_diff(final_b, final_a) if final_b is not None and set(final_b) == set(final_a) else float("inf")
    fail("a run saved after epoch {stop}, resumed with load_checkpoint and trained to epoch {last} ends with "
         "other weights than the same run never stopped (max abs difference {diff:.2e}).{why}",
         "在第 {stop} 个 epoch 后保存、用 load_checkpoint 恢复并训练到第 {last} 个 epoch 的运行，其最终权重与从不中断的"
         "同一运行不同（最大绝对差 {diff:.2e}）。{why}", stop=stop, last=EPOCHS - 1, diff=diff, why=why,
         key="resume-differs")


def effects_case(submission, rng):
    """The loading-effects probe, once per grading (two checks judge it)."""
    def effects():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
            state = new_model().state_dict()
        path = f"ckpt_load_{int(torch.randint(0, 10**6, (1,), generator=rng))}"  # a name without a suffix
        return submission.probe(load_effects, state, path, what=ROUND_TRIP)
    return submission.once("effects", effects)


@check("map_location decides where load_checkpoint puts the loaded tensors", points=1,
       zh="由 map_location 决定 load_checkpoint 把加载的 tensor 放到哪里")
def test_map_location(submission, rng):
    out = effects_case(submission, rng)
    require_saved(out)
    if out["cuda_calls"]:
        fail("with a GPU present, load_checkpoint(..., map_location='cpu') still put things on the GPU ({calls}): "
             "map_location says where the loaded tensors go, so hand it to torch.load and do not pick a device "
             "yourself (a checkpoint is often loaded on the CPU of a machine that has a GPU).",
             "有 GPU 时，load_checkpoint(..., map_location='cpu') 仍然把东西放到了 GPU 上（{calls}）："
             "加载的 tensor 去哪里由 map_location 决定，请把它交给 torch.load，不要自己选设备"
             "（在有 GPU 的机器上也常常要把检查点加载到 CPU）。",
             calls=verbatim(", ".join(dict.fromkeys(out["cuda_calls"]))), key="device-hard-coded")
    if out["placed"]:
        if out["cpu_error"] and not out["function_error"]:  # only the GPU branch raised
            fail_raised(out["cpu_error"], Text("with a GPU present, {call}", "有 GPU 时，{call}", call=LOAD_CALL))
        return
    if out["function_error"]:
        fail_raised(out["function_error"], LOAD_CALL)
    fail("load_checkpoint(..., map_location=<a function>) loaded the tensors without that function: pass the "
         "map_location argument on to torch.load unchanged (a checkpoint saved on a GPU needs "
         "map_location='cpu' to load on a machine without one).",
         "load_checkpoint(..., map_location=<一个函数>) 加载 tensor 时没有用到这个函数：请把 map_location 参数原样传给 "
         "torch.load（在 GPU 上保存的检查点，要在没有 GPU 的机器上加载就需要 map_location='cpu'）。",
         key="map-location-ignored")


@check("load_checkpoint refuses a checkpoint holding pickled objects (weights_only)", points=1,
       zh="load_checkpoint 拒绝加载含有 pickle 对象的检查点（weights_only）")
def test_weights_only(submission, rng):
    out = effects_case(submission, rng)
    require_saved(out)
    explicit = out["weights_only"] == "False"
    if out["opened"] or explicit:
        how = Text(" (it calls torch.load with weights_only=False)", "（它调用 torch.load 时用了 weights_only=False）") \
            if explicit else Text("", "")
        what = Text("unpickled an object slipped into the checkpoint", "反序列化了混进检查点的一个对象") \
            if out["opened"] else Text("loads pickles", "会加载 pickle")
        fail("load_checkpoint {what}{how}: loading a pickle can run arbitrary code, and a checkpoint may come from "
             "anywhere. Save only state_dicts, tensors and numbers, and load with "
             "torch.load(path, map_location=..., weights_only=True) (the default since torch 2.6).",
             "load_checkpoint {what}{how}：加载 pickle 可能执行任意代码，而检查点可能来自任何地方。"
             "请只保存 state_dict、tensor 和数字，并用 torch.load(path, map_location=..., weights_only=True) 加载"
             "（torch 2.6 起这是默认值）。", what=what, how=how, key="weights-only-false")
