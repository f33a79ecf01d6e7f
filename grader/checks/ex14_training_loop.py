"""Hidden checks of ex14: the full training loop. Train and validation phases (train()/eval(),
no_grad), CrossEntropyLoss on raw logits, accuracy, ReduceLROnPlateau stepped with the validation
loss, and the best model kept as a copy.

The judge draws the data and the model's initial weights, and computes the expected losses,
accuracies and the test accuracy of the returned best weights with its own torch. Probes in the
sandbox observe the loop: forward hooks (training mode, grad mode), a recording criterion
(what the loss receives), an SGD that checks at each step that the gradients come from this batch
only, loaders that record the weights at the start of each validation pass, and a recording
ReduceLROnPlateau.step.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from grader.checking import check, fail, probe, record_curve, tensor_info

FEATURES, HIDDEN, CLASSES = 4, 32, 3


class MLP(nn.Module):
    """The model of every check (the same class in the judge and in the sandbox)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Dropout(0.5),
                                 nn.Linear(HIDDEN, CLASSES))

    def forward(self, x):
        return self.net(x)


def new_model(rng):
    """A model with initial weights drawn from the check's generator."""
    seed = int(torch.randint(0, 2**31, (1,), generator=rng))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MLP()


def draw_task(rng, n):
    """n samples of a 3-class problem a small MLP learns: labels from a random linear teacher."""
    teacher = torch.randn(FEATURES, CLASSES, generator=rng)
    bias = 0.3 * torch.randn(CLASSES, generator=rng)

    def sample(m):
        x = torch.randn(m, FEATURES, generator=rng)
        return x, (x @ teacher + bias).argmax(dim=1)

    return sample


def batches_of(n, batch_size):
    return [min(batch_size, n - k) for k in range(0, n, batch_size)]


# -- sandbox side ---------------------------------------------------------------------------

class Recorder:
    """Forward hooks on a model and a criterion that records what it is given."""

    def __init__(self, model):
        self.forwards, self.losses, self.pending = [], [], []
        model.register_forward_hook(self._forward_hook)

    def _forward_hook(self, module, inputs, output):
        self.forwards.append({"training": module.training, "grad_enabled": torch.is_grad_enabled()})
        self.pending.append(output.detach())

    def is_raw(self, x):
        """Is x the model's last output, or all its outputs since the last loss, concatenated?"""
        if not self.pending:
            return False
        candidates = [self.pending[-1], torch.cat(self.pending)] if len(self.pending) > 1 else self.pending
        return any(x.shape == c.shape and torch.equal(x, c) for c in candidates)

    def criterion(self):
        recorder = self

        class RecordingCrossEntropy(nn.CrossEntropyLoss):
            def forward(self, input, target):
                loss = super().forward(input, target)
                x = input.detach()
                raw = recorder.is_raw(x)
                recorder.pending.clear()
                recorder.losses.append({
                    "loss": float(loss.detach()),
                    "batch": int(x.shape[0]),
                    "raw": raw,
                    "probs": bool(x.dim() == 2 and (x >= 0).all() and (x <= 1).all()
                                  and torch.allclose(x.sum(dim=1), torch.ones(x.shape[0]), atol=1e-4)),
                    "log_probs": bool(x.dim() == 2 and (x <= 0).all()
                                      and torch.allclose(x.exp().sum(dim=1), torch.ones(x.shape[0]), atol=1e-4)),
                    "target_dtype": str(target.dtype).removeprefix("torch."),
                })
                return loss

        return RecordingCrossEntropy()


def _loader(x, y, batch_size):
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=False)


def _model_with(state):
    model = MLP()
    model.load_state_dict(state)
    return model


@probe
def run_evaluate(module, state, x, y, batch_size):
    model = _model_with(state)
    model.train()  # left in training mode, as after a training epoch
    rec = Recorder(model)
    value = module.evaluate(model, _loader(x, y, batch_size), rec.criterion())
    return {"value": tuple(value) if isinstance(value, (tuple, list)) else value,
            "forwards": rec.forwards, "losses": rec.losses}


@probe
def run_train_epoch(module, state, x, y, batch_size, lr):
    model = _model_with(state)
    model.eval()  # left in evaluation mode, as after a validation pass
    rec = Recorder(model)
    params = list(model.parameters())
    latest = {}
    for i, p in enumerate(params):
        p.register_hook(lambda g, i=i: latest.__setitem__(i, g.detach().clone()))
    steps = []

    class CheckedSGD(torch.optim.SGD):
        def step(self, closure=None):
            missing = all(p.grad is None or not p.grad.any() for p in params)
            fresh = not missing and all(p.grad is not None and i in latest for i, p in enumerate(params))
            if fresh:  # this batch's gradients, possibly scaled as a whole (gradient clipping), nothing else
                grad = torch.cat([p.grad.reshape(-1) for p in params]).double()
                new = torch.cat([latest[i].reshape(-1) for i in range(len(params))]).double()
                scale = float(grad @ new / (new @ new).clamp_min(1e-30))
                fresh = scale > 0 and torch.allclose(grad, scale * new, rtol=1e-4, atol=1e-8 * float(new.abs().max()))
            steps.append({"fresh": fresh, "missing": missing, "forwards": len(rec.forwards)})
            latest.clear()
            return super().step(closure)

    optimizer = CheckedSGD(model.parameters(), lr=lr)
    value = module.train_one_epoch(model, _loader(x, y, batch_size), rec.criterion(), optimizer)
    return {"value": value, "forwards": rec.forwards, "losses": rec.losses, "steps": steps,
            "state": {k: v.detach().clone() for k, v in model.state_dict().items()}}


class ValLoader(DataLoader):
    """A validation loader that records, when a pass starts, the model's weights and its true
    validation loss and accuracy (computed here, in eval mode, without grad)."""

    def __iter__(self):
        model = self.model_ref
        was_training = model.training
        model.eval()
        with torch.no_grad():
            x, y = self.dataset.tensors
            logits = model(x)
            self.records.append({
                "loss": float(nn.functional.cross_entropy(logits, y)),
                "acc": float((logits.argmax(dim=1) == y).float().mean()),
                "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
            })
        model.train(was_training)
        return super().__iter__()


class NoisyTailLoader(DataLoader):
    """A training loader whose last epochs come with wrong labels (as real data can drift), so
    that the best epoch is not the last one."""

    def __iter__(self):
        self.passes += 1
        batches = super().__iter__()
        if self.passes > self.clean_passes:
            return ((x, (y + 1) % CLASSES) for x, y in batches)
        return batches


@probe
def run_fit(module, state, train, val, epochs, noisy_epochs, lr):
    model = _model_with(state)
    train_loader = NoisyTailLoader(TensorDataset(*train), batch_size=32, shuffle=True)
    train_loader.passes, train_loader.clean_passes = 0, epochs - noisy_epochs
    val_loader = ValLoader(TensorDataset(*val), batch_size=50, shuffle=False)
    val_loader.model_ref, val_loader.records = model, []
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau
    original = plateau.step
    steps = []

    def recording_step(self, metrics, *args, **kwargs):
        value = float(metrics) if isinstance(metrics, (int, float, torch.Tensor)) else None
        steps.append({"metric": value, "mode": self.mode, "val_passes": len(val_loader.records),
                      "grad": isinstance(metrics, torch.Tensor) and metrics.requires_grad})
        return original(self, metrics, *args, **kwargs)

    plateau.step = recording_step
    try:
        value = module.fit(model, train_loader, val_loader, epochs, lr)
    finally:
        plateau.step = original
    best, history = value if isinstance(value, (tuple, list)) and len(value) == 2 else (value, None)
    shared = []
    if isinstance(best, dict):
        live = {t.untyped_storage().data_ptr() for t in model.state_dict().values()}
        shared = [k for k, v in best.items() if isinstance(v, torch.Tensor) and v.untyped_storage().data_ptr() in live]
        best = {k: (v.detach().clone() if isinstance(v, torch.Tensor) else v) for k, v in best.items()}
    return {"best": best, "history": history, "shared": shared, "val": val_loader.records, "steps": steps,
            "returned": type(value).__name__, "train_passes": train_loader.passes}


# -- judge side ---------------------------------------------------------------------------

def expected_eval(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
    return logits, float(nn.functional.cross_entropy(logits, y)), float((logits.argmax(1) == y).float().mean())


def check_criterion_inputs(losses, where):
    """Structure of what reached the loss: raw logits and integer class targets."""
    if not losses:
        fail(f"{where} never called the criterion it was given: compute each batch's loss with criterion(logits, y).",
             f"{where} 没有调用传入的 criterion：请用 criterion(logits, y) 计算每个 batch 的损失。")
    for rec in losses:
        if rec["probs"] and not rec["raw"]:
            fail(f"{where} passed probabilities (softmax outputs) to CrossEntropyLoss: it applies log_softmax "
                 "itself, so give it the model's raw outputs (logits). A softmax before it squashes the "
                 "gradients and slows learning.",
                 f"{where} 把概率（softmax 的输出）传给了 CrossEntropyLoss：它内部已经做了 log_softmax，"
                 "应直接传入模型的原始输出（logits）。提前 softmax 会压扁梯度、拖慢学习。")
        if rec["log_probs"] and not rec["raw"]:
            fail(f"{where} passed log_softmax outputs to CrossEntropyLoss, which applies log_softmax itself: "
                 "give it the model's raw outputs (logits).",
                 f"{where} 把 log_softmax 的输出传给了 CrossEntropyLoss，而它内部已经做了 log_softmax："
                 "请直接传入模型的原始输出（logits）。")
        if not rec["raw"]:
            fail(f"{where} did not pass the model's outputs unchanged to the criterion: "
                 "CrossEntropyLoss expects the raw logits of the batch.",
                 f"{where} 没有把模型输出原样传给 criterion：CrossEntropyLoss 需要该 batch 的原始 logits。")
        if rec["target_dtype"] not in ("int64", "long"):
            fail(f"{where} gave CrossEntropyLoss targets of dtype {rec['target_dtype']}: pass the integer "
                 "class indices y from the loader (int64), not one-hot or float targets.",
                 f"{where} 传给 CrossEntropyLoss 的目标 dtype 为 {rec['target_dtype']}：请直接传入 loader 给出的整数类别索引 y"
                 "（int64），不要用 one-hot 或浮点目标。")


def _names(what):
    """A name shown in a message, as (English, Chinese)."""
    return what if isinstance(what, tuple) else (what, what)


def check_number(value, what):
    what, what_zh = _names(what)
    if isinstance(value, torch.Tensor) and tensor_info(value).get("requires_grad"):
        fail(f"{what} is a tensor that still requires grad (it keeps the whole graph alive): "
             "accumulate loss.item() (a Python float) instead of the loss tensor.",
             f"{what_zh} 是一个仍然 requires_grad 的 tensor（会让整张计算图一直留在内存里）："
             "请累加 loss.item()（Python float），而不是 loss tensor。")
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = float(value.reshape(()))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"{what} should be a number, got {type(value).__name__}.", f"{what_zh} 应该是一个数，实际得到 {type(value).__name__}。")
    return float(value)


def expect_value(value, want, what, *, rtol=1e-4, atol=1e-6):
    """Like checking.expect_number, with the name in both languages."""
    what, what_zh = _names(what)
    if not abs(value - want) <= atol + rtol * abs(want):
        fail(f"{what} should be {want:.4g}, got {value:.4g}.", f"{what_zh} 应为 {want:.4g}，实际为 {value:.4g}。")


def mean_mistakes(value, batch_losses, sizes, what):
    """Explain a wrong mean loss: unweighted batch means, or a sum divided by the number of batches."""
    what, what_zh = _names(what)
    n = sum(sizes)
    weighted = sum(l * s for l, s in zip(batch_losses, sizes))
    if abs(value - sum(batch_losses) / len(sizes)) <= 1e-4 * (1 + abs(value)):
        fail(f"{what} is the plain average of the batch losses, but the last batch is smaller ({sizes[-1]} of "
             f"{sizes[0]} samples): weight each batch by its size, sum(loss * batch size) / number of samples.",
             f"{what_zh} 是各 batch 损失的简单平均，但最后一个 batch 更小（{sizes[-1]} 个样本，其他为 {sizes[0]} 个）："
             "请按 batch 大小加权：sum(loss * batch 大小) / 样本总数。")
    if abs(value - weighted / len(sizes)) <= 1e-4 * (1 + abs(value)):
        fail(f"{what} divides the sum by the number of batches ({len(sizes)}), not by the number of samples ({n}).",
             f"{what_zh} 除以的是 batch 的个数（{len(sizes)}），而不是样本数（{n}）。")
    if abs(value - sum(batch_losses)) <= 1e-4 * (1 + abs(value)):
        fail(f"{what} is the sum of the batch losses: average it over the samples (weight each batch by its size).",
             f"{what_zh} 是各 batch 损失之和：请对样本求平均（按 batch 大小加权）。")


@check("accuracy is the fraction of correct argmax predictions", points=1, zh="accuracy 是 argmax 预测正确的比例")
def test_accuracy(submission, rng):
    n = int(torch.randint(20, 40, (1,), generator=rng))
    logits = torch.randn(n, 5, generator=rng)
    targets = torch.randint(0, 5, (n,), generator=rng)
    targets[: n // 2] = logits[: n // 2].argmax(dim=1)  # about half right
    expected = float((logits.argmax(dim=1) == targets).float().mean())
    value = check_number(submission.accuracy(logits, targets), "accuracy(logits, targets)")
    if abs(value - 100 * expected) < 1e-3 and expected > 0:
        fail(f"accuracy should be a fraction between 0 and 1 ({expected:.4g}), got a percentage ({value:.4g}).",
             f"accuracy 应该是 0 到 1 之间的比例（{expected:.4g}），实际得到的是百分数（{value:.4g}）。")
    expect_value(value, expected, (f"accuracy(logits[{n}, 5], targets[{n}]) (the predicted class is the argmax over dim 1)",
                                   f"accuracy(logits[{n}, 5], targets[{n}])（预测类别是沿 dim 1 的 argmax）"))


@check("evaluate: eval mode, no_grad, mean loss and accuracy over the samples", points=2,
       zh="evaluate：eval 模式、no_grad、按样本平均的损失和准确率")
def test_evaluate(submission, rng):
    sample = draw_task(rng, 50)
    x, y = sample(50)
    model = new_model(rng)
    batch_size = 16
    out = submission.probe(run_evaluate, model.state_dict(), x, y, batch_size,
                           what="`evaluate(model, val_loader, criterion)`")
    forwards = out["forwards"]
    if not forwards:
        fail("evaluate never called the model.", "evaluate 没有调用模型。")
    if any(f["training"] for f in forwards):
        fail("evaluate ran the model in training mode: call model.eval() first, or Dropout keeps dropping units "
             "and the validation loss is noisy and too high.",
             "evaluate 在训练模式下运行了模型：请先调用 model.eval()，否则 Dropout 仍会随机丢弃神经元，验证损失偏高且抖动。")
    if any(f["grad_enabled"] for f in forwards):
        fail("evaluate ran the model with gradient tracking on: wrap the validation loop in torch.no_grad() "
             "(no graph is built, which saves memory and time).",
             "evaluate 运行模型时仍在记录梯度：请把验证循环放在 torch.no_grad() 中（不建计算图，省内存也省时间）。")
    check_criterion_inputs(out["losses"], "evaluate")
    value = out["value"]
    if not isinstance(value, tuple) or len(value) != 2:
        fail("evaluate should return two numbers, (mean loss, accuracy).", "evaluate 应返回两个数：(平均损失, 准确率)。")
    loss, acc = (check_number(v, names) for v, names in
                 zip(value, (("evaluate's loss", "evaluate 返回的损失"), ("evaluate's accuracy", "evaluate 返回的准确率"))))
    logits, want_loss, want_acc = expected_eval(model, x, y)
    sizes = batches_of(50, batch_size)
    if abs(loss - want_loss) > 1e-4 * (1 + abs(want_loss)):
        if abs(acc - want_loss) <= 1e-4 * (1 + want_loss) and abs(loss - want_acc) <= 1e-4:
            fail("evaluate returned (accuracy, loss): return (loss, accuracy).", "evaluate 返回了 (准确率, 损失)：应返回 (损失, 准确率)。")
        mean_mistakes(loss, [r["loss"] for r in out["losses"]], sizes, ("the loss evaluate returned", "evaluate 返回的损失"))
        expect_value(loss, want_loss, ("evaluate's mean cross-entropy loss over the samples", "evaluate 按样本平均的交叉熵损失"))
    if abs(acc - want_acc) > 1e-6:
        if abs(acc - 100 * want_acc) < 1e-3 and want_acc > 0:
            fail(f"evaluate's accuracy should be a fraction between 0 and 1 ({want_acc:.4g}), got a percentage ({acc:.4g}).",
                 f"evaluate 的准确率应为 0 到 1 之间的比例（{want_acc:.4g}），实际得到百分数（{acc:.4g}）。")
        correct = want_acc * 50
        if abs(acc - correct / len(sizes)) < 1e-6:
            fail(f"evaluate's accuracy divides the correct count by the number of batches ({len(sizes)}), not by "
                 "the number of samples (50).",
                 f"evaluate 的准确率用正确个数除以 batch 个数（{len(sizes)}），而不是样本数（50）。")
        expect_value(acc, want_acc, ("evaluate's accuracy (correct predictions / number of samples)",
                                     "evaluate 的准确率（预测正确数 / 样本数）"))


@check("train_one_epoch: train mode, fresh gradients each batch, one step per batch, mean loss", points=3,
       zh="train_one_epoch：训练模式、每个 batch 的梯度都是新的、每个 batch 一步更新、平均损失")
def test_train_one_epoch(submission, rng):
    sample = draw_task(rng, 50)
    x, y = sample(50)
    model = new_model(rng)
    batch_size, lr = 16, 0.1
    sizes = batches_of(50, batch_size)
    out = submission.probe(run_train_epoch, model.state_dict(), x, y, batch_size, lr,
                           what="`train_one_epoch(model, train_loader, criterion, optimizer)`")
    forwards, steps = out["forwards"], out["steps"]
    if not forwards:
        fail("train_one_epoch never called the model.", "train_one_epoch 没有调用模型。")
    if not any(f["training"] for f in forwards):
        fail("train_one_epoch ran the model in evaluation mode: call model.train() at the start of each training "
             "epoch (the validation pass left the model in eval mode, so Dropout was off).",
             "train_one_epoch 在评估模式下运行了模型：请在每个训练 epoch 开始时调用 model.train()"
             "（验证阶段把模型留在了 eval 模式，Dropout 被关掉了）。")
    if not all(f["grad_enabled"] for f in forwards):
        fail("train_one_epoch ran the model without gradient tracking (under no_grad?): training needs the graph.",
             "train_one_epoch 在不记录梯度的情况下运行了模型（在 no_grad 里？）：训练需要计算图。")
    check_criterion_inputs(out["losses"], "train_one_epoch")
    if len(steps) != len(sizes):
        fail(f"{len(sizes)} batches should give {len(sizes)} optimizer steps (one per batch), got {len(steps)}: "
             "call optimizer.step() after each batch's backward, inside the loop.",
             f"{len(sizes)} 个 batch 应进行 {len(sizes)} 次 optimizer.step()（每个 batch 一次），实际 {len(steps)} 次："
             "请在循环内、每个 batch 的 backward 之后调用 optimizer.step()。")
    for k, step in enumerate(steps):
        if step["missing"]:
            fail(f"at optimizer.step() of batch {k + 1} there were no gradients: call loss.backward() before "
                 "optimizer.step(), and zero_grad before backward (not between backward and step).",
                 f"第 {k + 1} 个 batch 执行 optimizer.step() 时没有梯度：应在 optimizer.step() 之前调用 loss.backward()，"
                 "并在 backward 之前（而不是 backward 与 step 之间）调用 zero_grad。")
        if not step["fresh"]:
            fail(f"at optimizer.step() of batch {k + 1} the gradients also held earlier batches' gradients: "
                 "gradients accumulate, so call optimizer.zero_grad() at every batch before loss.backward().",
                 f"第 {k + 1} 个 batch 执行 optimizer.step() 时，梯度里还累加着之前 batch 的梯度："
                 "梯度会累加，请在每个 batch 的 loss.backward() 之前调用 optimizer.zero_grad()。")
    value = check_number(out["value"], ("the loss train_one_epoch returned", "train_one_epoch 返回的损失"))
    batch_losses = [r["loss"] for r in out["losses"]]
    if len(batch_losses) == len(sizes):
        want = sum(l * s for l, s in zip(batch_losses, sizes)) / sum(sizes)
        if abs(value - want) > 1e-4 * (1 + abs(want)):
            mean_mistakes(value, batch_losses, sizes, ("the loss train_one_epoch returned", "train_one_epoch 返回的损失"))
            expect_value(value, want, ("train_one_epoch's mean training loss over the samples",
                                       "train_one_epoch 按样本平均的训练损失"))


VAL_SIZE, TRAIN_SIZE, TEST_SIZE, EPOCHS, NOISY = 200, 320, 400, 10, 2


_FIT_RUNS = {}


def best_epochs(records):
    """The epoch of the lowest validation loss, and every epoch within rounding of it (near ties may
    order differently when the loss is summed batch by batch)."""
    losses = [r["loss"] for r in records]
    best = min(range(len(losses)), key=lambda k: (losses[k], k))
    return best, [k for k, v in enumerate(losses) if v <= losses[best] * (1 + 1e-4) + 1e-6]


def _same_state(state, reference):
    return all(isinstance(state.get(k), torch.Tensor) and state[k].shape == v.shape
               and torch.allclose(state[k].double(), v.double(), rtol=1e-5, atol=1e-6) for k, v in reference.items())


def fit_case(submission, rng):
    """Run fit once per grading (the three fit checks judge the same run; the first check's rng draws it)."""
    if id(submission) not in _FIT_RUNS:
        _FIT_RUNS[id(submission)] = _run_fit(submission, rng)
    return _FIT_RUNS[id(submission)]


def _run_fit(submission, rng):
    sample = draw_task(rng, 0)
    train, val, (x_test, y_test) = sample(TRAIN_SIZE), sample(VAL_SIZE), sample(TEST_SIZE)
    model = new_model(rng)
    out = submission.probe(run_fit, model.state_dict(), list(train), list(val), EPOCHS, NOISY, 0.01,
                           what=f"`fit(model, train_loader, val_loader, epochs={EPOCHS}, lr=0.01)`")
    return out, model, x_test, y_test


def check_fit_structure(out):
    if out["returned"] not in ("tuple", "list") or out["history"] is None:
        fail(f"fit should return (best_state, history), got a {out['returned']}.",
             f"fit 应返回 (best_state, history)，实际得到 {out['returned']}。")
    best = out["best"]
    if not isinstance(best, dict):
        fail(f"best_state should be a state_dict (a dict of tensors), got {type(best).__name__}: did you keep "
             "the model itself, or forget to set it?",
             f"best_state 应是一个 state_dict（tensor 的字典），实际得到 {type(best).__name__}：是不是保存了模型本身，或者忘了赋值？")
    keys = set(MLP().state_dict())
    if set(best) != keys:
        fail(f"best_state should have the keys of model.state_dict() ({sorted(keys)}), got {sorted(best)[:6]}.",
             f"best_state 的键应与 model.state_dict() 相同（{sorted(keys)}），实际为 {sorted(best)[:6]}。")
    if out["train_passes"] != EPOCHS or len(out["val"]) < EPOCHS:
        fail(f"fit(..., epochs={EPOCHS}) should run {EPOCHS} training and {EPOCHS} validation passes, got "
             f"{out['train_passes']} and {len(out['val'])}.",
             f"fit(..., epochs={EPOCHS}) 应进行 {EPOCHS} 次训练和 {EPOCHS} 次验证，实际为 {out['train_passes']} 次和 {len(out['val'])} 次。")
    if not isinstance(out["history"], (list, tuple)) or len(out["history"]) != EPOCHS:
        fail(f"history should be a list with one entry per epoch ({EPOCHS}).",
             f"history 应是一个列表，每个 epoch 一项（共 {EPOCHS} 项）。")


@check("fit: the best weights reach 85% accuracy on fresh data", points=1,
       zh="fit：最佳权重在新数据上达到 85% 的准确率")
def test_fit_accuracy(submission, rng):
    out, model, x_test, y_test = fit_case(submission, rng)
    record_curve("validation loss per epoch (true loss of your model after each epoch)",
                 {"yours": [r["loss"] for r in out["val"][:EPOCHS]]}, log=True, xlabel="epoch")
    check_fit_structure(out)
    model.load_state_dict(out["best"])
    _, loss, acc = expected_eval(model, x_test, y_test)
    best, good = best_epochs(out["val"][:EPOCHS])
    if acc < 0.85 and not any(_same_state(out["best"], out["val"][k]["state"]) for k in good):
        fail(f"the weights fit returned classify {acc:.1%} of {TEST_SIZE} fresh samples correctly (85% is expected), "
             f"but they are not the weights of the best epoch (epoch {best + 1}, validation accuracy "
             f"{out['val'][best]['acc']:.1%}): see the best_state check.",
             f"fit 返回的权重在 {TEST_SIZE} 个新样本上的准确率为 {acc:.1%}（期望至少 85%），但它们不是最佳 epoch 的权重"
             f"（第 {best + 1} 个 epoch，验证准确率 {out['val'][best]['acc']:.1%}）：见 best_state 的检查。")
    if acc < 0.85:
        fail(f"the best weights fit returned classify {acc:.1%} of {TEST_SIZE} fresh samples correctly "
             f"(test loss {loss:.3f}); 85% is expected. Is the model trained (zero_grad, backward, step) with "
             "CrossEntropyLoss on raw logits and Adam with the given lr?",
             f"fit 返回的最佳权重在 {TEST_SIZE} 个新样本上的准确率为 {acc:.1%}（测试损失 {loss:.3f}），期望至少 85%。"
             "模型是否真的在训练（zero_grad、backward、step），CrossEntropyLoss 是否用原始 logits，是否用了给定 lr 的 Adam？")


@check("fit: ReduceLROnPlateau is stepped once per epoch with the validation loss", points=1,
       zh="fit：每个 epoch 用验证损失调用一次 ReduceLROnPlateau.step")
def test_fit_scheduler(submission, rng):
    out, *_ = fit_case(submission, rng)
    steps = out["steps"]
    if not steps:
        fail("fit never stepped a ReduceLROnPlateau scheduler: create one on the optimizer (mode='min') and call "
             "scheduler.step(val_loss) after each validation pass.",
             "fit 没有调用 ReduceLROnPlateau 调度器的 step：请在 optimizer 上创建一个（mode='min'），"
             "并在每次验证之后调用 scheduler.step(val_loss)。")
    if len(steps) != EPOCHS:
        fail(f"ReduceLROnPlateau.step should be called once per epoch ({EPOCHS} times), got {len(steps)}: "
             "call it once after validation, not after every batch.",
             f"ReduceLROnPlateau.step 应每个 epoch 调用一次（共 {EPOCHS} 次），实际 {len(steps)} 次：请在验证之后调用一次，而不是每个 batch 都调用。")
    history = out["history"] if isinstance(out["history"], (list, tuple)) else []
    for k, step in enumerate(steps):
        if step["mode"] != "min":
            fail(f"the scheduler has mode='{step['mode']}', but a loss should go down: use mode='min' with the "
                 "validation loss.",
                 f"调度器的 mode='{step['mode']}'，而损失应该越小越好：请对验证损失使用 mode='min'。")
        if step["val_passes"] == 0:
            fail("ReduceLROnPlateau.step was called before any validation pass: step it with the validation loss "
                 "of the epoch.",
                 "ReduceLROnPlateau.step 在任何验证之前就被调用了：请用本 epoch 的验证损失调用它。")
        val = out["val"][step["val_passes"] - 1]
        metric = step["metric"]
        if metric is None or abs(metric - val["loss"]) > 1e-3 * (1 + val["loss"]):
            seen = "a non-number" if metric is None else f"{metric:.4g}"
            guess_en = guess_zh = ""
            if metric is not None and abs(metric - val["acc"]) < 1e-4:
                guess_en, guess_zh = " (that is the validation accuracy)", "（这是验证准确率）"
            elif metric is not None and k < len(history) and isinstance(history[k], dict) and \
                    isinstance(history[k].get("train_loss"), (int, float)) and abs(metric - history[k]["train_loss"]) < 1e-6:
                guess_en, guess_zh = " (that is the training loss)", "（这是训练损失）"
            elif metric is not None and k < len(history) and isinstance(history[k], dict) and \
                    isinstance(history[k].get("val_loss"), (int, float)) and abs(metric - history[k]["val_loss"]) < 1e-6:
                fail(f"at epoch {k + 1} scheduler.step got your validation loss, {metric:.4g}, but the cross-entropy "
                     f"of the model's logits on the validation set was {val['loss']:.4g}: fix evaluate first "
                     "(see its check).",
                     f"第 {k + 1} 个 epoch 中 scheduler.step 收到的是你算出的验证损失 {metric:.4g}，但模型 logits 在验证集上的"
                     f"交叉熵是 {val['loss']:.4g}：请先修正 evaluate（见它的检查）。")
            fail(f"at epoch {k + 1} scheduler.step got {seen}{guess_en}, but the validation loss was "
                 f"{val['loss']:.4g}: step ReduceLROnPlateau with the validation loss.",
                 f"第 {k + 1} 个 epoch 中 scheduler.step 收到的是 {seen}{guess_zh}，而验证损失为 {val['loss']:.4g}："
                 "请用验证损失调用 ReduceLROnPlateau.step。")


@check("fit: best_state is a copy of the weights of the epoch with the lowest validation loss", points=2,
       zh="fit：best_state 是验证损失最低那个 epoch 的权重的副本")
def test_fit_best_state(submission, rng):
    out, *_ = fit_case(submission, rng)
    check_fit_structure(out)
    if out["shared"]:
        fail(f"best_state shares memory with the model's live parameters ({out['shared'][0]}...): "
             "model.state_dict() returns references that keep changing as training goes on, and dict.copy() "
             "copies only the dict. Keep a deep copy: copy.deepcopy(model.state_dict()) or "
             "{k: v.clone() for k, v in ...}.",
             f"best_state 与模型正在训练的参数共享内存（{out['shared'][0]}...）：model.state_dict() 返回的是引用，"
             "会随训练不断变化，dict.copy() 也只复制了字典本身。请深拷贝：copy.deepcopy(model.state_dict()) 或 "
             "{k: v.clone() for k, v in ...}。")
    records = out["val"][:EPOCHS]
    losses = [r["loss"] for r in records]
    best, good = best_epochs(records)
    matches = [k for k, r in enumerate(records) if _same_state(out["best"], r["state"])]
    if any(k in good for k in matches):
        return
    if not matches:
        fail("best_state matches the weights of no epoch: copy model.state_dict() right after the validation "
             "pass in which the validation loss improved.",
             "best_state 与任何一个 epoch 结束时的权重都不一致：请在验证损失变好的那次验证之后立刻复制 model.state_dict()。")
    which = matches[0]
    history = out["history"]
    yours = [h.get("val_loss") if isinstance(h, dict) else None for h in history]
    if all(isinstance(v, (int, float)) for v in yours) and len(yours) == len(losses) and \
            which == min(range(len(yours)), key=lambda k: (yours[k], k)) and \
            any(abs(a - b) > 1e-3 * (1 + b) for a, b in zip(yours, losses)):
        fail(f"best_state follows your validation losses (lowest at epoch {which + 1}), but they are not the "
             f"cross-entropy of the model's logits on the validation set (lowest at epoch {best + 1}): fix "
             "evaluate first (see its check).",
             f"best_state 依据的是你算出的验证损失（第 {which + 1} 个 epoch 最低），但它们不是模型 logits 在验证集上的交叉熵"
             f"（第 {best + 1} 个 epoch 最低）：请先修正 evaluate（见它的检查）。")
    fail(f"best_state holds the weights of epoch {which + 1} (validation loss {losses[which]:.4g}), but epoch "
         f"{best + 1} had the lowest validation loss ({losses[best]:.4g}): keep a copy only when the validation "
         "loss improves on the best so far (in the checks the last epochs train on noisy labels, so the best "
         "epoch is not the last).",
         f"best_state 是第 {which + 1} 个 epoch 的权重（验证损失 {losses[which]:.4g}），但验证损失最低的是第 {best + 1} 个 epoch"
         f"（{losses[best]:.4g}）：只有当验证损失优于目前最好值时才保存副本（检查中最后几个 epoch 用带噪声的标签训练，"
         "所以最好的 epoch 不是最后一个）。")
