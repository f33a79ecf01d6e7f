"""Hidden checks of ex28: early stopping with patience and min_delta, the best weights kept and restored,
one CSV log row per epoch.

The validation losses are scripted: each script is a list of moves from the best loss so far (a clear
improvement, one smaller than min_delta, a loss equal to the best, a worse one, a first epoch at inf that
improves on nothing) with magnitudes drawn from the rng, so that the classic slips (ignoring min_delta, not
resetting the count, stopping one epoch late, counting an equal loss as better, starting the count at 1)
each stop at another epoch. The probes set the model's weights
to the epoch's number before each step (in place, as training does), so the weights a stopper keeps or
restores say which epoch they come from.
"""

import csv
import io
import os

import torch
from torch import nn

from grader.checking import Text, check, fail, fail_raised, is_number, learner_call, matches, probe, verbatim

STOPPER_CASES = [  # (patience, min_delta, moves): a diverged first epoch (inf) with and without min_delta
    (3, 0.05, ["inf", "big", "big", "small", "worse", "big", "small", "worse", "worse", "worse", "worse"]),
    (2, 0.0, ["inf", "big", "equal", "big", "worse", "equal", "worse", "worse"]),
    (1, 0.0, ["inf", "big", "worse"]),  # patience 1: the diverged first epoch is already one without improvement
]
FIT_CASES = [  # (patience, min_delta, max_epochs, moves)
    (2, 0.01, 8, ["inf", "big", "worse", "small", "worse", "big", "big", "big"]),
    (5, 0.01, 5, ["big", "worse", "big", "worse", "worse"]),
]


def script(rng, min_delta, moves):
    best, out = 1.0 + float(torch.rand(1, generator=rng)), []
    for move in moves:
        r = float(torch.rand(1, generator=rng))
        if move == "big":
            value = best - min_delta - 0.05 - 0.1 * r
            best = value
        elif move == "small":
            value = best - min_delta * (0.2 + 0.6 * r)
        elif move == "equal":
            value = best
        elif move == "inf":  # a diverged first epoch: not below the starting best_loss, inf
            value = float("inf")
        else:
            value = best + 0.01 + 0.1 * r
        out.append(value)
    return out


def simulate(losses, patience, min_delta, slip=None):
    """The epoch index at which a stopper says stop (None: never), and the index of its best epoch."""
    best, best_at, bad = float("inf"), None, 1 if slip == "count-from-one" else 0
    for k, v in enumerate(losses):
        if slip == "first-improves" and k == 0:
            better = True
        elif slip == "no-min-delta":
            better = v < best
        elif slip == "equal-counts":
            better = v <= best - min_delta
        else:
            better = v < best - min_delta
        if better:
            best, best_at = v, k
            if slip != "no-reset":
                bad = 0
        else:
            bad += 1
        if (bad > patience if slip == "one-late" else bad >= patience):
            return k, best_at
    return None, best_at


SLIPS = {
    "no-min-delta": Text("an improvement must beat the best by more than min_delta: yours counts any lower loss",
                         "改进必须比最好值低出 min_delta 以上：你的代码把任何更低的损失都算作改进"),
    "no-reset": Text("the count of epochs without improvement must go back to 0 at every improvement",
                     "每次有改进时，未改进 epoch 的计数都必须归零"),
    "one-late": Text("stop when the count reaches patience (>=), not when it exceeds it",
                     "计数达到 patience 时（>=）就要停止，而不是超过它时"),
    "equal-counts": Text("a loss equal to the best is no improvement: compare with <, not <=",
                         "与最好值相等的损失不算改进：请用 < 比较，而不是 <="),
    "count-from-one": Text("the count of epochs without improvement starts at 0",
                           "未改进 epoch 的计数应从 0 开始"),
    "first-improves": Text("the first epoch improves only if its loss is below the starting best_loss, inf: a "
                           "diverged first epoch (inf) is an epoch without improvement",
                           "第一个 epoch 只有在损失低于初始的 best_loss（inf）时才算改进：发散的第一个 epoch（inf）"
                           "是一个没有改进的 epoch"),
}


# -- sandbox side ---------------------------------------------------------------------------

def _model():
    """A Linear with a buffer beside its parameters (as a BatchNorm's statistics are): a state that leaves the
    buffers out is not the model's state."""
    model = nn.Linear(2, 1)
    model.register_buffer("seen", torch.zeros(()))
    return model


def _set_epoch(model, k):
    with torch.no_grad():
        model.weight.fill_(float(k))
        model.bias.fill_(-float(k))
        model.seen.fill_(float(k))


def _state(value):
    if isinstance(value, dict) and all(isinstance(v, torch.Tensor) for v in value.values()):
        return {str(k): v.detach().clone() for k, v in value.items()}
    return None if value is None else {"type": type(value).__name__}


@probe
def stopper_probe(module, losses, patience, min_delta):
    model = _model()
    signals = []

    def run():
        stopper = module.EarlyStopping(patience, min_delta)
        for k, loss in enumerate(losses):
            _set_epoch(model, k)
            stop = stopper.step(loss, model)
            signals.append(stop if isinstance(stop, bool) else type(stop).__name__)
            if stop is True:
                break
        return stopper

    stopper, error = learner_call(module, run)
    if error:
        return {"error": error}
    _set_epoch(model, -1)  # training goes on: a kept reference to the live weights changes now
    best_loss = getattr(stopper, "best_loss", None)
    return {"error": None, "signals": signals, "best_state": _state(getattr(stopper, "best_state", None)),
            "best_loss": best_loss if is_number(best_loss, float) else None}


def _rows_on_disk(path):
    if not os.path.isfile(path):
        return 0
    with open(path, encoding="utf-8", errors="replace") as f:
        return max(0, sum(1 for line in f if line.strip()) - 1)


@probe
def fit_probe(module, train_losses, val_losses, patience, min_delta, max_epochs, path):
    model = _model()
    _set_epoch(model, 0)
    on_disk, validated = [], []

    def train_epoch():
        on_disk.append(_rows_on_disk(path))
        _set_epoch(model, len(on_disk))
        return train_losses[len(on_disk) - 1]

    def validate():
        validated.append(True)
        return val_losses[len(validated) - 1]

    loaded, load = [], model.load_state_dict

    def load_state_dict(state, *args, **kwargs):  # which epoch's weights fit loads back, as they were given
        weight = state.get("weight") if isinstance(state, dict) else None
        loaded.append(float(weight.reshape(-1)[0]) if isinstance(weight, torch.Tensor) and weight.numel() else None)
        return load(state, *args, **kwargs)

    model.load_state_dict = load_state_dict
    best, error = learner_call(module, module.fit, model, train_epoch, validate, max_epochs, patience, min_delta, path)
    if error:
        return {"error": error}
    text = None
    if os.path.isfile(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(20000)
    return {"error": None, "best": best if is_number(best, int) else repr(best)[:40],
            "epochs": len(on_disk), "validated": len(validated), "on_disk": on_disk, "loaded": loaded,
            "weight": float(model.weight.detach().reshape(-1)[0]), "log": text}


# -- judge side -----------------------------------------------------------------------------

def losses_text(losses):
    return verbatim(", ".join(f"{v:.4f}" for v in losses))


def stopper_runs(submission, rng):
    def stepped():
        runs = []
        for patience, min_delta, moves in STOPPER_CASES:
            losses = script(rng, min_delta, moves)
            out = submission.probe(stopper_probe, losses, patience, min_delta,
                                   what=f"`EarlyStopping({patience}, {min_delta}).step(...)`")
            runs.append((patience, min_delta, losses, out))
        return runs
    runs = submission.once("stopper", stepped)
    for patience, min_delta, _, out in runs:
        if out["error"]:
            fail_raised(out["error"], f"`EarlyStopping({patience}, {min_delta}).step(...)`")
    return runs


@check("EarlyStopping.step says stop after `patience` epochs in a row without an improvement of more than min_delta",
       points=2.5, zh="EarlyStopping.step 在连续 patience 个 epoch 没有超过 min_delta 的改进之后发出停止信号")
def test_stop_signal(submission, rng):
    runs = stopper_runs(submission, rng)
    for patience, min_delta, losses, out in runs:
        odd = [s for s in out["signals"] if not isinstance(s, bool)]
        if odd:
            fail("step should return True or False, got a {got}.", "step 应返回 True 或 False，实际得到一个 {got}。",
                 got=verbatim(f"`{odd[0]}`"), key="not-a-bool")
    got = [len(out["signals"]) - 1 if out["signals"] and out["signals"][-1] is True else None for *_, out in runs]
    want = [simulate(losses, p, d)[0] for p, d, losses, _ in runs]
    for (patience, min_delta, losses, _), g, w in zip(runs, got, want):
        if g == w:
            continue
        slip = next((name for name in SLIPS
                     if [simulate(losses, p, d, name)[0] for p, d, losses, _ in runs] == got), None)
        when = Text("never", "从未") if g is None else Text("at epoch {e}", "在第 {e} 个 epoch", e=g + 1)
        fail("with patience={patience}, min_delta={min_delta} and the validation losses {losses}, step said stop "
             "{when}; expected at epoch {w}.{slip}",
             "当 patience={patience}、min_delta={min_delta}、验证损失依次为 {losses} 时，step {when}发出停止信号；应在第 {w} 个 "
             "epoch。{slip}", patience=patience, min_delta=min_delta, losses=losses_text(losses), when=when, w=w + 1,
             slip=Text(" ", "") + SLIPS[slip] + Text(".", "。") if slip else Text("", ""),
             key=f"stop-{slip or 'wrong-epoch'}")


@check("EarlyStopping keeps the best loss and a copy of the weights at that epoch", points=1.5,
       zh="EarlyStopping 记住最好的损失，以及那个 epoch 的权重副本", depends="stop_signal")
def test_best_state(submission, rng):
    for patience, min_delta, losses, out in stopper_runs(submission, rng):
        best_at = simulate(losses, patience, min_delta)[1]
        if best_at is None:  # stopped before any improvement: nothing beat the starting inf
            continue
        if not matches(out["best_loss"], losses[best_at], rtol=0, atol=1e-12):
            fail("best_loss is {got}, expected {want}, the loss of epoch {e}.", "best_loss 为 {got}，应为第 {e} 个 epoch 的损失 {want}。",
                 got=verbatim(str(out["best_loss"])), want=f"{losses[best_at]:.4f}", e=best_at + 1, key="wrong-best-loss")
        state = out["best_state"]
        if state is None or "type" in state:
            fail("best_state should hold a copy of model.state_dict() from the best epoch, got {got}.",
                 "best_state 应保存最好那个 epoch 的 model.state_dict() 副本，实际为 {got}。",
                 got=verbatim("None" if state is None else f"`{state['type']}`"), key="no-best-state")
        if "weight" in state and "seen" not in state:
            fail("best_state holds the model's parameters but not its buffers (this model has one, `seen`, as a "
                 "BatchNorm has its running statistics): model.named_parameters() and model.parameters() leave them "
                 "out. Keep a copy of model.state_dict(), which has both.",
                 "best_state 保存了模型的参数，却没有它的 buffer（这个模型有一个 buffer `seen`，就像 BatchNorm 有 running "
                 "统计量）：model.named_parameters() 和 model.parameters() 都不包含它们。请保存 model.state_dict() 的副本，"
                 "它两者都有。", key="buffers-missing")
        weight = float(state["weight"].reshape(-1)[0]) if "weight" in state else None
        if weight == -1.0:
            fail("best_state changed after the best epoch, together with the model: model.state_dict() returns "
                 "references to the live tensors, which training keeps changing. Keep a copy: "
                 "copy.deepcopy(model.state_dict()) or {k: v.clone() for k, v in ...}.",
                 "best_state 在最好的 epoch 之后跟着模型一起变了：model.state_dict() 返回的是对实时 tensor 的引用，训练会不断修改它们。"
                 "请保存副本：copy.deepcopy(model.state_dict()) 或 {k: v.clone() for k, v in ...}。", key="state-not-copied")
        if weight != float(best_at):
            fail("best_state holds the weights of another epoch than the best one (epoch {e}).",
                 "best_state 保存的不是最好那个 epoch（第 {e} 个）的权重。", e=best_at + 1, key="wrong-best-state")


def fit_runs(submission, rng):
    def fitted():
        runs = []
        for patience, min_delta, max_epochs, moves in FIT_CASES:
            val = script(rng, min_delta, moves)
            train = [float(v) for v in (torch.rand(len(moves), generator=rng) + 0.2).tolist()]
            path = f"log_{int(torch.randint(0, 10**6, (1,), generator=rng))}.csv"
            call = f"`fit(model, train_epoch, validate, max_epochs={max_epochs}, patience={patience}, " \
                   f"min_delta={min_delta}, log_path)`"
            out = submission.probe(fit_probe, train, val, patience, min_delta, max_epochs, path, what=call)
            runs.append((patience, min_delta, max_epochs, train, val, call, out))
        return runs
    runs = submission.once("fit", fitted)
    for *_, call, out in runs:
        if out["error"]:
            fail_raised(out["error"], call)
    return runs


def expected_run(patience, min_delta, max_epochs, val):
    stop, best_at = simulate(val[:max_epochs], patience, min_delta)
    return (max_epochs if stop is None else stop + 1), best_at + 1


@check("fit stops at the epoch early stopping says, or after max_epochs", points=2,
       zh="fit 在早停指示的 epoch 停止，否则跑满 max_epochs")
def test_fit_stops(submission, rng):
    for patience, min_delta, max_epochs, train, val, call, out in fit_runs(submission, rng):
        epochs, _ = expected_run(patience, min_delta, max_epochs, val)
        if out["epochs"] != out["validated"]:
            fail("{call} called train_epoch {t} times and validate {v} times: one of each per epoch.",
                 "{call} 调用了 {t} 次 train_epoch 和 {v} 次 validate：每个 epoch 应各调用一次。", call=call,
                 t=out["epochs"], v=out["validated"], key="calls-mismatch")
        if out["epochs"] != epochs:
            fail("{call} ran {got} epochs with the validation losses {losses}; early stopping stops it after {want}.",
                 "{call} 在验证损失依次为 {losses} 时运行了 {got} 个 epoch；早停应在 {want} 个 epoch 后停止。", call=call,
                 got=out["epochs"], want=epochs, losses=losses_text(val[:max_epochs]), key="fit-wrong-stop")


@check("fit ends with the best epoch's weights in the model and returns that epoch's number", points=2,
       zh="fit 结束时模型是最好那个 epoch 的权重，并返回该 epoch 的编号", depends="fit_stops")
def test_fit_restores(submission, rng):
    for patience, min_delta, max_epochs, train, val, call, out in fit_runs(submission, rng):
        epochs, best = expected_run(patience, min_delta, max_epochs, val)
        if out["weight"] != float(best):
            last = out["weight"] == float(epochs)
            which = Text("the last epoch", "最后一个 epoch") if last else Text("another epoch", "另一个 epoch")
            if out["loaded"]:  # it did load a state back: the state kept was not the best epoch's
                fail("{call} loaded a state back into the model, but it held the weights of {which}, not those of the "
                     "best epoch, {best}: the best state kept was not a copy (model.state_dict() gives references to "
                     "the live tensors, which the next epochs change). Keep copy.deepcopy(model.state_dict()) at the "
                     "best epoch.",
                     "{call} 把一个状态加载回了模型，但它保存的是{which}的权重，而不是最好的第 {best} 个 epoch 的："
                     "保存的最好状态不是副本（model.state_dict() 返回的是对实时 tensor 的引用，之后的 epoch 会修改它们）。"
                     "请在最好的 epoch 保存 copy.deepcopy(model.state_dict())。", call=call, best=best, which=which,
                     key="best-state-not-copied")
            fail("after {call} the model holds the weights of {which}, not those of the best epoch, {best}: load the "
                 "best state back with model.load_state_dict(stopper.best_state) before returning.",
                 "{call} 之后模型保存的是{which}的权重，而不是最好的第 {best} 个 epoch 的：返回之前请用 "
                 "model.load_state_dict(stopper.best_state) 把最好的状态加载回来。", call=call, best=best,
                 which=which, key="best-not-restored")
        if out["best"] != best:
            fail("{call} returned {got}, expected the number of the best epoch, {best} (epochs count from 1).",
                 "{call} 返回了 {got}，应返回最好那个 epoch 的编号 {best}（epoch 从 1 开始计数）。", call=call,
                 got=verbatim(str(out["best"])), best=best, key="wrong-best-epoch")


def parse_log(text):
    try:
        return list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None


@check("fit logs one CSV row per epoch (epoch, train_loss, val_loss), on disk as soon as the epoch ends", points=2,
       zh="fit 每个 epoch 记录一行 CSV（epoch, train_loss, val_loss），该 epoch 一结束就写到磁盘上")
def test_fit_log(submission, rng):
    for patience, min_delta, max_epochs, train, val, call, out in fit_runs(submission, rng):
        if out["log"] is None:
            fail("{call} wrote no file at log_path.", "{call} 没有在 log_path 写出文件。", call=call, key="no-log")
        rows = [r for r in (parse_log(out["log"]) or []) if r]
        if not rows or [c.strip() for c in rows[0]] != ["epoch", "train_loss", "val_loss"]:
            fail("the log's first row should be the header `epoch,train_loss,val_loss`, got {got}.",
                 "日志的第一行应为表头 `epoch,train_loss,val_loss`，实际为 {got}。",
                 got=verbatim(f"`{','.join(rows[0])[:80]}`" if rows else "nothing"), key="log-header")
        body = rows[1:]
        if len(body) != out["epochs"]:
            fail("the log has {got} rows after the header for {n} epochs run: one row per epoch.",
                 "运行了 {n} 个 epoch，日志表头之后却有 {got} 行：每个 epoch 应有一行。", got=len(body), n=out["epochs"],
                 key="log-rows")
        for k, row in enumerate(body):
            try:
                epoch, t, v = int(row[0]), float(row[1]), float(row[2])
            except (ValueError, IndexError):
                fail("log row {k} is {row}: expected an epoch number and two losses.",
                     "日志第 {k} 行为 {row}：应为一个 epoch 编号和两个损失。", k=k + 1,
                     row=verbatim(f"`{','.join(row)[:80]}`"), key="log-row-format")
            if epoch != k + 1 or not matches(t, train[k], rtol=0) or not matches(v, val[k], rtol=0):
                fail("log row {k} is {row}, expected epoch {e} with train_loss {t:.6f} and val_loss {v:.6f}.",
                     "日志第 {k} 行为 {row}，应为第 {e} 个 epoch，train_loss 为 {t:.6f}，val_loss 为 {v:.6f}。", k=k + 1,
                     row=verbatim(f"`{','.join(row)[:80]}`"), e=k + 1, t=train[k], v=val[k], key="log-row-values")
        late = [k for k, n in enumerate(out["on_disk"]) if n < k]
        if late:
            fail("when epoch {e} started, the log on disk held {n} rows of the {m} epochs already done: write each "
                 "row as its epoch ends and flush the file (f.flush()), so the log survives a run that dies.",
                 "第 {e} 个 epoch 开始时，磁盘上的日志只有已完成的 {m} 个 epoch 中的 {n} 行：请在每个 epoch 结束时写入它的那一行，"
                 "并刷新文件（f.flush()），这样即使训练中途崩溃，日志也还在。", e=late[0] + 1, n=out["on_disk"][late[0]],
                 m=late[0], key="log-not-flushed")
