"""Hidden checks of ex14: the full training loop. Train and validation phases (train()/eval(),
no_grad), CrossEntropyLoss on raw logits, accuracy, ReduceLROnPlateau stepped with the validation
loss, the history, and the best model kept as a copy.

accuracy, evaluate and train_one_epoch are judged on their own: the judge draws the data and the
model's weights, and probes observe the loop (forward hooks for the modes and grad mode, a recording
criterion, an SGD that checks at each step that the gradients come from this batch only). fit is
judged with trusted train_one_epoch and evaluate in place of the learner's (so a mistake there costs
only their points), in two runs:
- a real training of a small MLP, whose best epoch must classify fresh samples well;
- a scripted run, whose model returns logits the judge designed per epoch: the validation loss is lowest
  at one epoch, the accuracy highest at a later one, the last epoch is neither, and the training loss keeps
  falling. So the best epoch by validation loss differs from the best by accuracy, the last and the
  first, on every seed, by construction; a tag buffer in the model tells which epoch best_state copied.
A third, short run takes the learner's own fit and helpers with a GPU pretended, and follows which tensors would
be on it: the model and the batches must meet on one device.
"""

import contextlib

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils.data import DataLoader, TensorDataset

from grader.checking import (Text, check, describe, expect_number, explain, fail, is_number, learner_call, matches,
                             patched, pretend_cuda, probe, record_curve, tensor_info, verbatim)
from grader.devices import expect_cpu_only, fail_if_gpu, imported_anew

FEATURES, HIDDEN, CLASSES = 4, 32, 3
EPOCHS = 10
# The real training: 50 Adam steps, whose best epoch classifies 94 % or more of fresh samples with the reference
# fit (the worst of 60 seeds); an lr other than the stub's default 0.01, so that a hard-coded one shows.
FIT_BATCH, FIT_LR = 64, 0.03


class MLP(nn.Module):
    """The model of the real runs (the same class in the judge and in the sandbox)."""

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
        torch.default_generator.manual_seed(seed)  # the CPU's alone, as fork_rng restores (torch.manual_seed: +3 ms)
        return MLP()


def draw_task(rng):
    """A sampler of a 3-class problem a small MLP learns: labels from a random linear teacher."""
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
        self.forwards.append({"training": module.training, "grad_enabled": torch.is_grad_enabled(),
                              "mixed": any(m.training != module.training for m in module.modules())})
        self.pending.append(output.detach())

    def is_raw(self, x):
        """Is x the model's last output, or all its outputs since the last loss, concatenated?"""
        if not self.pending:
            return False
        candidates = [self.pending[-1], torch.cat(self.pending)] if len(self.pending) > 1 else self.pending
        return any(x.shape == c.shape and torch.equal(x, c) for c in candidates)

    def criterion(self, lift_single=False):
        """A CrossEntropyLoss that records its inputs. With `lift_single`, the loss of a one-sample batch is
        lifted by a constant (1 + the largest loss so far; the gradients do not change), so that a mean that
        does not weight batches by their size is off by a clear margin."""
        recorder = self

        class RecordingCrossEntropy(nn.CrossEntropyLoss):
            def forward(self, input, target):
                loss = super().forward(input, target)
                if lift_single and input.shape[0] == 1:
                    loss = loss + 1.0 + max([r["loss"] for r in recorder.losses], default=0.0)
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


class Batched(TensorDataset):
    """A TensorDataset a DataLoader reads a batch at a time (one indexing per tensor), not sample by sample: with
    `collate_fn=Batched.collate`, the same batches as a TensorDataset's, `[x, y]`. Every loader of these probes reads
    one: the real training takes about a quarter less time, the runs with a GPU pretended (each indexing through two
    TorchFunctionModes) about a third."""

    def __getitems__(self, indices):
        index = torch.tensor(indices)
        return [t[index] for t in self.tensors]

    @staticmethod
    def collate(batch):
        return batch


def _loader(x, y, batch_size):
    return DataLoader(Batched(x, y), batch_size=batch_size, shuffle=False, collate_fn=Batched.collate)


def _model_with(state):
    model = MLP()
    model.load_state_dict(state)
    return model


@probe
def run_evaluate(module, state, x, y, batch_size):
    model = _model_with(state)
    model.train()  # left in training mode, as after a training epoch
    rec = Recorder(model)
    with pretend_cuda(module) as gpu:  # a GPU at hand: still nothing leaves the model's device
        module = imported_anew(module, gpu) or module  # the file imported with it there: a device chosen then too
        at_import = len(gpu.calls)
        value = module.evaluate(model, _loader(x, y, batch_size), rec.criterion())
    return {"value": tuple(value) if isinstance(value, (tuple, list)) else value,
            "forwards": rec.forwards, "losses": rec.losses, "cuda": gpu.calls[at_import:]}


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
            steps.append({"fresh": fresh, "missing": missing})
            latest.clear()
            return super().step(closure)

    optimizer = CheckedSGD(model.parameters(), lr=lr)
    with pretend_cuda(module) as gpu:
        module = imported_anew(module, gpu) or module  # the file imported with the GPU there: a device chosen then too
        at_import = len(gpu.calls)
        value = module.train_one_epoch(model, _loader(x, y, batch_size), rec.criterion(lift_single=True), optimizer)
    return {"value": value, "forwards": rec.forwards, "losses": rec.losses, "steps": steps,
            "cuda": gpu.calls[at_import:]}


def trusted_train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total, count = total + loss.item() * len(y), count + len(y)
    return total / count


def trusted_evaluate(model, loader, criterion):
    model.eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            total += criterion(logits, y).item() * len(y)
            correct += int((logits.argmax(dim=1) == y).sum())
            count += len(y)
    return total / count, correct / count


def _by_kind(args, kwargs, kinds):
    """The arguments of a helper call by kind (model, loader, criterion, optimizer), in any order; None
    when one is missing (a wrapped loader, say): then the learner's own helper runs."""
    found = {}
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.optim.Optimizer):
            kind = "optimizer"
        elif isinstance(value, DataLoader):
            kind = "loader"
        elif isinstance(value, nn.Module) and any(True for _ in value.parameters()):
            kind = "model"
        elif callable(value):
            kind = "criterion"
        else:
            continue
        found.setdefault(kind, value)
    return [found[k] for k in kinds] if all(k in found for k in kinds) else None


@contextlib.contextmanager
def trusted_helpers(module):
    """fit calls trusted train_one_epoch and evaluate in place of the learner's (judged by their own checks)."""
    helpers = {"train_one_epoch": (trusted_train_one_epoch, ("model", "loader", "criterion", "optimizer")),
               "evaluate": (trusted_evaluate, ("model", "loader", "criterion"))}
    seen = {"misordered": [],  # calls whose positional arguments are not in the helper's own order
            "optimizers": []}  # the class and learning rate of the optimizer each training epoch was given
    with contextlib.ExitStack() as stack:
        for name, (trusted, kinds) in helpers.items():
            original = getattr(module, name, None)
            if callable(original):
                def helper(*args, _original=original, _trusted=trusted, _kinds=kinds, _name=name, **kwargs):
                    routed = _by_kind(args, kwargs, _kinds)
                    if routed is None:
                        return _original(*args, **kwargs)
                    kind_of = {id(value): kind for kind, value in zip(_kinds, routed)}
                    given = [kind_of.get(id(a), "?") for a in args]
                    if given != list(_kinds[:len(args)]):
                        seen["misordered"].append(f"{_name}({', '.join(given)})")
                    if "optimizer" in _kinds:
                        optimizer = routed[_kinds.index("optimizer")]
                        model = routed[_kinds.index("model")] if "model" in _kinds else None
                        held = {id(p) for group in optimizer.param_groups for p in group["params"]}
                        left = [name for name, p in model.named_parameters() if id(p) not in held] if model else []
                        seen["optimizers"].append([type(optimizer).__name__, optimizer.param_groups[0].get("lr"),
                                                   left])
                    return _trusted(*routed)
                stack.enter_context(patched(module, module, name, helper))
        yield seen


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
                "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
            })
        model.train(was_training)
        return super().__iter__()


@probe
def run_fit(module, state, train, val, epochs, lr):
    """A real training with the learner's fit (and trusted helpers): the true validation loss per pass."""
    model = _model_with(state)
    train_loader = DataLoader(Batched(*train), batch_size=FIT_BATCH, shuffle=True, collate_fn=Batched.collate)
    val_loader = ValLoader(Batched(*val), batch_size=len(val[1]), shuffle=False, collate_fn=Batched.collate)  # one batch
    val_loader.model_ref, val_loader.records = model, []
    with trusted_helpers(module) as seen:  # no GPU pretended: Adam's step asks for the real one
        module.fit(model, train_loader, val_loader, epochs, lr)
    return {"val": val_loader.records, **seen}


class _VirtualGpu(TorchFunctionMode):
    """With CUDA pretended (everything really on the CPU): which tensors would be on the GPU (what a call naming
    CUDA returned, a model parameter sent there, what is computed from them, the gradients of such parameters),
    and the first call that would get tensors on both devices. A GPU parameter reports `device` cuda, so code that
    follows the model's device follows it here too. Entered inside `pretend_cuda`, whose record is `calls`."""

    def __init__(self, model, calls):
        super().__init__()
        self.params = list(model.parameters())
        self.param_ids = {id(p) for p in self.params}
        self.calls = calls
        self.gpu = {}  # id -> tensor on the pretended GPU (kept alive, so that ids stay theirs)
        self.gpu_params = []  # the model's parameters sent there: their gradients are there too
        self.helper = []  # the learner's helper running now, if any
        self.by_helper = set()  # ids of the tensors a helper sent to the GPU
        self.mixed = None

    def on_gpu(self, t):
        return id(t) in self.gpu or any(t is p.grad for p in self.gpu_params)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name == "__get__":
            if getattr(func, "__self__", None) is torch.Tensor.device and args and self.on_gpu(args[0]):
                return torch.device("cuda", 0)
            return func(*args, **kwargs)
        tensors = [t for a in list(args) + list(kwargs.values())
                   for t in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(t, torch.Tensor)]
        before = len(self.calls)
        out = func(*args, **kwargs)
        moving = name in ("to", "cuda", "cpu") and args and isinstance(args[0], torch.Tensor)
        if moving and len(self.calls) > before:  # sent to the GPU
            gpu = True
            if any(args[0] is p for p in self.params):
                self.mark(args[0])
            if self.helper:
                self.by_helper.add(id(out))
        elif moving and (name == "cpu" or any(str(a).startswith("cpu") for a in list(args[1:]) + [kwargs.get("device")]
                                              if isinstance(a, (str, torch.device)))):
            gpu = False
        else:
            sized = [self.on_gpu(t) for t in tensors if t.dim() > 0]
            if self.mixed is None and True in sized and False in sized and name not in ("copy_", "__setitem__"):
                by_helper = all(id(t) in self.by_helper for t in tensors if t.dim() > 0 and id(t) in self.gpu)
                self.mixed = {"func": name, "model": bool(self.gpu_params),
                              "by_helper": by_helper, "calls": list(dict.fromkeys(self.calls))}
            gpu = any(self.on_gpu(t) for t in tensors)
        if gpu:
            for t in (out if isinstance(out, (list, tuple)) else [out]):
                if isinstance(t, torch.Tensor):
                    self.mark(t)
        return out

    def mark(self, t):
        """`t` is on the pretended GPU (a parameter's gradient too)."""
        if id(t) not in self.gpu and id(t) in self.param_ids:
            self.gpu_params.append(t)
        self.gpu[id(t)] = t


@probe
def run_fit_on_gpu(module, state, train, val, epochs, lr):
    """The learner's own fit and helpers with a GPU pretended: would the model and the batches meet on one device?"""
    model = _model_with(state)
    train_loader = DataLoader(Batched(*train), batch_size=16, shuffle=False, collate_fn=Batched.collate)
    val_loader = DataLoader(Batched(*val), batch_size=16, shuffle=False, collate_fn=Batched.collate)
    with contextlib.ExitStack() as stack:
        seen = stack.enter_context(pretend_cuda(module))
        tracker = stack.enter_context(_VirtualGpu(model, seen.calls))
        for name in ("train_one_epoch", "evaluate"):
            original = getattr(module, name, None)
            if callable(original):
                def helper(*args, _original=original, _name=name, **kwargs):
                    tracker.helper.append(_name)
                    try:
                        return _original(*args, **kwargs)
                    finally:
                        tracker.helper.pop()
                stack.enter_context(patched(module, module, name, helper))
        _, error = learner_call(module, module.fit, model, train_loader, val_loader, epochs, lr)
    if error and error["not_started"]:  # the other checks judge errors: here only where tensors went
        raise NotImplementedError
    return {"mixed": tracker.mixed}


class ScriptedModel(nn.Module):
    """Returns the logits the judge designed for the current pass: a sample is x = [index, 1 for validation];
    `tag` holds the number of the last validation pass, so a copied state tells which epoch it is from."""

    def __init__(self, script):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(2, CLASSES))
        self.register_buffer("tag", torch.zeros(()))
        self.script = script

    def forward(self, x):
        base = x @ self.weight  # the value is the script's; the gradient reaches the weight
        index, val = x[:, 0].long(), x[:, 1] > 0.5
        passes = self.script["passes"]
        train = self.script["train"][min(max(passes["train"], 1), len(self.script["train"])) - 1]
        valid = self.script["val"][min(max(passes["val"], 1), len(self.script["val"])) - 1]
        designed = torch.where(val[:, None], valid[index.clamp(max=len(valid) - 1)],
                               train[index.clamp(max=len(train) - 1)])
        return designed + (base - base.detach())


class ScriptedLoader(DataLoader):
    """Counts its passes (a pass over the training data counts in training mode only: evaluating on it does not
    start an epoch); a validation pass tags the model and records its weight."""

    def __iter__(self):
        passes = self.script["passes"]
        if self.kind == "train" and self.model_ref.training:
            passes["train"] += 1
        if self.kind == "val":
            passes["val"] += 1
            self.model_ref.tag.fill_(passes["val"] - 1)
            self.script["weights"].append(self.model_ref.weight.detach().clone())
        return super().__iter__()


def _scripted_loader(script, model, kind, y, batch_size):
    n = len(y)
    x = torch.stack([torch.arange(n, dtype=torch.float32), torch.full((n,), float(kind == "val"))], dim=1)
    loader = ScriptedLoader(Batched(x, y), batch_size=batch_size, shuffle=False, collate_fn=Batched.collate)
    loader.script, loader.kind, loader.model_ref = script, kind, model
    return loader


@probe
def run_scripted_fit(module, val_logits, val_y, train_logits, train_y, epochs, lr):
    script = {"val": val_logits, "train": train_logits, "passes": {"train": 0, "val": 0}, "weights": []}
    model = ScriptedModel(script)
    train_loader = _scripted_loader(script, model, "train", train_y, 32)
    val_loader = _scripted_loader(script, model, "val", val_y, 16)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau
    original = plateau.step
    steps = []

    def recording_step(self, metrics, *args, **kwargs):
        value = float(metrics) if is_number(metrics, (int, float), tensor=True) else None
        steps.append({"metric": value, "mode": self.mode, "val_passes": script["passes"]["val"]})
        return original(self, metrics, *args, **kwargs)

    with trusted_helpers(module), patched(module, plateau, "step", recording_step):
        value = module.fit(model, train_loader, val_loader, epochs, lr)
    best, history = value if isinstance(value, (tuple, list)) and len(value) == 2 else (value, None)
    best_type = type(best).__name__
    if isinstance(best, nn.Module):
        best = best.state_dict()
    shared = []
    if isinstance(best, dict):
        live = {t.untyped_storage().data_ptr() for t in model.state_dict().values()}
        shared = [k for k, v in best.items() if isinstance(v, torch.Tensor) and v.untyped_storage().data_ptr() in live]
        best = {k: (v.detach().clone() if isinstance(v, torch.Tensor) else v) for k, v in best.items()}
    if isinstance(history, (list, tuple)):
        history = [{k: (v.detach().clone() if isinstance(v, torch.Tensor) else v) for k, v in h.items()}
                   if isinstance(h, dict) else type(h).__name__ for h in history]
    return {"best": best, "best_type": best_type, "history": history, "shared": shared, "steps": steps,
            "returned": type(value).__name__, "passes": script["passes"], "weights": script["weights"]}


# -- judge side: numbers ---------------------------------------------------------------------

def python_float(value, want, what):
    """A value the statement names a Python float: a tensor still holding a graph, or any other type,
    fails with its lesson; returns the value as a float for the diagnoses that follow."""
    if isinstance(value, torch.Tensor) and tensor_info(value).get("requires_grad"):
        fail("{what} is a tensor that still requires grad (it keeps the whole graph alive): accumulate loss.item() "
             "(a Python float) instead of the loss tensor.",
             "{what} 是一个仍然 requires_grad 的 tensor（会让整张计算图一直留在内存里）："
             "请累加 loss.item()（Python float），而不是 loss tensor。", what=what, key="loss-tensor-accumulated")
    if not is_number(value, (int, float)):
        expect_number(value, want, what, exact_type=True)  # fails: not a Python number, with the .item() lesson
    return float(value)


def mean_mistakes(value, batch_losses, sizes, what):
    """Explain a wrong mean loss: unweighted batch means, a sum divided by the number of batches, a sum."""
    n, weighted = sum(sizes), sum(loss * s for loss, s in zip(batch_losses, sizes))
    values = dict(what=what, last=sizes[-1], size=sizes[0], batches=len(sizes), n=n)
    if matches(value, sum(batch_losses) / len(sizes), atol=1e-4):
        fail("{what} is the plain average of the batch losses, but the last batch is smaller ({last} of {size} "
             "samples): weight each batch by its size, sum(loss * batch size) / number of samples.",
             "{what} 是各 batch 损失的简单平均，但最后一个 batch 更小（{last} 个样本，其他为 {size} 个）："
             "请按 batch 大小加权：sum(loss * batch 大小) / 样本总数。", key="batch-mean-unweighted", **values)
    if matches(value, weighted / len(sizes), atol=1e-4):
        fail("{what} divides the sum by the number of batches ({batches}), not by the number of samples ({n}).",
             "{what} 除以的是 batch 的个数（{batches}），而不是样本数（{n}）。", key="divided-by-batches", **values)
    if matches(value, sum(batch_losses), atol=1e-4):
        fail("{what} is the sum of the batch losses: average it over the samples (weight each batch by its size).",
             "{what} 是各 batch 损失之和：请对样本求平均（按 batch 大小加权）。", key="loss-summed", **values)


def check_forwards(forwards, where, training):
    """The mode and grad mode the model ran in: `training` is what the phase needs."""
    if not forwards:
        fail("{where} never called the model.", "{where} 没有调用模型。", where=where, key="model-not-called")
    if any(f["mixed"] for f in forwards):
        fail("{where} ran the model with its sub-modules in another mode than the model itself: setting "
             "model.training = {flag} changes only the top module, Dropout inside keeps its mode. Call {call}, "
             "which sets every sub-module.",
             "{where} 运行模型时，子模块的模式与模型本身不同：model.training = {flag} 只改了最外层的模块，里面的 Dropout "
             "仍保持原来的模式。请调用 {call}，它会设置每一个子模块。",
             where=where, flag=training, call="model.train()" if training else "model.eval()",
             key="training-attribute-set")
    if training and not any(f["training"] for f in forwards):
        fail("{where} ran the model in evaluation mode: call model.train() at the start of each training "
             "epoch (the validation pass left the model in eval mode, so Dropout was off).",
             "{where} 在评估模式下运行了模型：请在每个训练 epoch 开始时调用 model.train()"
             "（验证阶段把模型留在了 eval 模式，Dropout 被关掉了）。", where=where, key="train-mode-not-set")
    if not training and any(f["training"] for f in forwards):
        fail("{where} ran the model in training mode: call model.eval() first, or Dropout keeps dropping units "
             "and the validation loss is noisy.",
             "{where} 在训练模式下运行了模型：请先调用 model.eval()，否则 Dropout 仍会随机丢弃神经元，验证损失会抖动。",
             where=where, key="eval-mode-not-set")
    if training and not all(f["grad_enabled"] for f in forwards):
        fail("{where} ran the model without gradient tracking (under no_grad?): training needs the graph.",
             "{where} 在不记录梯度的情况下运行了模型（在 no_grad 里？）：训练需要计算图。", where=where,
             key="no-grad-in-training")
    if not training and any(f["grad_enabled"] for f in forwards):
        fail("{where} ran the model with gradient tracking on: wrap the validation loop in torch.no_grad() "
             "(no graph is built, which saves memory and time).",
             "{where} 运行模型时仍在记录梯度：请把验证循环放在 torch.no_grad() 中（不建计算图，省内存也省时间）。",
             where=where, key="no-grad-missing")


def check_criterion_inputs(losses, where):
    """Structure of what reached the loss: raw logits and integer class targets."""
    if not losses:
        fail("{where} never called the criterion it was given: compute each batch's loss with criterion(logits, y).",
             "{where} 没有调用传入的 criterion：请用 criterion(logits, y) 计算每个 batch 的损失。",
             where=where, key="criterion-not-called")
    for rec in losses:
        if rec["probs"] and not rec["raw"]:
            fail("{where} passed probabilities (softmax outputs) to CrossEntropyLoss: it applies log_softmax "
                 "itself, so give it the model's raw outputs (logits). A softmax before it squashes the "
                 "gradients and slows learning.",
                 "{where} 把概率（softmax 的输出）传给了 CrossEntropyLoss：它内部已经做了 log_softmax，"
                 "应直接传入模型的原始输出（logits）。提前 softmax 会压扁梯度、拖慢学习。",
                 where=where, key="softmax-before-cross-entropy")
        if rec["log_probs"] and not rec["raw"]:
            fail("{where} passed log_softmax outputs to CrossEntropyLoss, which applies log_softmax itself: "
                 "give it the model's raw outputs (logits).",
                 "{where} 把 log_softmax 的输出传给了 CrossEntropyLoss，而它内部已经做了 log_softmax："
                 "请直接传入模型的原始输出（logits）。", where=where, key="log-softmax-before-cross-entropy")
        if not rec["raw"]:
            fail("{where} did not pass the model's outputs unchanged to the criterion: CrossEntropyLoss expects "
                 "the raw logits of the batch.",
                 "{where} 没有把模型输出原样传给 criterion：CrossEntropyLoss 需要该 batch 的原始 logits。",
                 where=where, key="logits-changed")
        if rec["target_dtype"] not in ("int64", "long"):
            fail("{where} gave CrossEntropyLoss targets of dtype {dtype}: pass the integer class indices y from the "
                 "loader (int64), not one-hot or float targets.",
                 "{where} 传给 CrossEntropyLoss 的目标 dtype 为 {dtype}：请直接传入 loader 给出的整数类别索引 y"
                 "（int64），不要用 one-hot 或浮点目标。", where=where, dtype=rec["target_dtype"],
                 key="targets-not-class-indices")


# -- checks: the helpers ---------------------------------------------------------------------

ARGMAX_DIM = {"must match the size of tensor": (
    "The predictions and the targets have different shapes: is the argmax taken over dim 1 (the classes), "
    "not over dim 0 (the samples)?",
    "预测和目标的形状不同：argmax 是沿 dim 1（类别）取的吗？不应沿 dim 0（样本）。")}


ONE_ROW = {"out of range": (
    "With one sample, the logits have shape [1, C]: did a .squeeze() without a dim drop the sample dimension?",
    "只有一个样本时 logits 的形状是 [1, C]：是不是不带 dim 的 .squeeze() 把样本那一维也去掉了？")}


def accuracy_cases(rng):
    """(logits, targets, known errors and their key): random logits with about half right; a square [5, 5] case where the argmax over
    the wrong dim gives another accuracy, by construction; one sample."""
    n = int(torch.randint(20, 40, (1,), generator=rng))
    logits = torch.randn(n, 5, generator=rng)
    targets = torch.randint(0, 5, (n,), generator=rng)
    targets[: n // 2] = logits[: n // 2].argmax(dim=1)
    square = 0.5 * torch.randn(5, 5, generator=rng)
    square[torch.arange(5), (torch.arange(5) + 1) % 5] += 5.0  # row i peaks at column i+1, column j at row j-1
    square_targets = (torch.arange(5) + 1) % 5
    square_targets[0] = 4  # wrong by rows, right by columns: 4/5 by dim 1, 1/5 by dim 0
    one = torch.randn(1, 3, generator=rng)
    return [(logits, targets, ARGMAX_DIM, "argmax-wrong-dim"), (square, square_targets, ARGMAX_DIM, "argmax-wrong-dim"),
            (one, one.argmax(dim=1), ONE_ROW, "squeeze-drops-dim")]


@check("accuracy is the fraction of correct argmax predictions, a Python float", points=1,
       zh="accuracy 是 argmax 预测正确的比例（Python float）")
def test_accuracy(submission, rng):
    for logits, targets, causes, key in accuracy_cases(rng):
        n, c = logits.shape
        expected = float((logits.argmax(dim=1) == targets).float().mean())
        what = f"`accuracy(logits[{n}, {c}], targets[{n}])`"
        with explain(causes, key=key):
            value = submission.accuracy(logits, targets)
        number = python_float(value, expected, what)
        if matches(number, 100 * expected, rtol=1e-5, atol=1e-5) and expected > 0:
            fail("accuracy should be a fraction between 0 and 1 ({want:.4g}), got a percentage ({got:.4g}).",
                 "accuracy 应该是 0 到 1 之间的比例（{want:.4g}），实际得到的是百分数（{got:.4g}）。",
                 want=expected, got=number, key="accuracy-percent")
        by_rows = float((logits.argmax(dim=0) == targets).float().mean()) if n == c else None
        if by_rows is not None and by_rows != expected and matches(number, by_rows, rtol=1e-5, atol=1e-5):
            fail("{what} should be {want:.4g}, got {got:.4g}: that is the argmax over dim 0 (the samples). The "
                 "predicted class of a row is its argmax over dim 1 (the classes).",
                 "{what} 应为 {want:.4g}，实际为 {got:.4g}：这是沿 dim 0（样本）取的 argmax。"
                 "每一行的预测类别是沿 dim 1（类别）的 argmax。", what=what, want=expected, got=number,
                 key="argmax-wrong-dim")
        expect_number(number, expected, Text("{what} (the predicted class is the argmax over dim 1)",
                                              "{what}（预测类别是沿 dim 1 的 argmax）", what=what))
    expect_cpu_only(submission, [("accuracy", [logits, targets])])


HELPER_N, HELPER_BATCH = 49, 16  # the last batch holds one sample


@check("evaluate: eval mode, no_grad, mean loss and accuracy over the samples", points=2,
       zh="evaluate：eval 模式、no_grad、按样本平均的损失和准确率")
def test_evaluate(submission, rng):
    x, y = draw_task(rng)(HELPER_N)
    model = new_model(rng)
    x, y = single_sample_last(model, x, y)
    out = submission.probe(run_evaluate, model.state_dict(), x, y, HELPER_BATCH,
                           what="`evaluate(model, val_loader, criterion)`")
    fail_if_gpu(out["cuda"], "`evaluate(model, val_loader, criterion)`")
    check_forwards(out["forwards"], "evaluate", training=False)
    check_criterion_inputs(out["losses"], "evaluate")
    value = out["value"]
    if not isinstance(value, tuple) or len(value) != 2:
        fail("evaluate should return two numbers, (mean loss, accuracy), got {got}.",
             "evaluate 应返回两个数：(平均损失, 准确率)，实际得到{got}。", got=describe(value), key="not-a-pair")
    _, want_loss, want_acc = expected_eval(model, x, y)
    if is_number(value[0], (int, float)) and is_number(value[1], (int, float)) and \
            matches(value[0], want_acc, atol=1e-4) and matches(value[1], want_loss, atol=1e-4) \
            and not matches(want_acc, want_loss, atol=1e-4):
        fail("evaluate returned (accuracy, loss): return (loss, accuracy).", "evaluate 返回了 (准确率, 损失)：应返回 (损失, 准确率)。",
             key="swapped-pair")
    loss_name = ("the loss evaluate returned", "evaluate 返回的损失")
    loss = python_float(value[0], want_loss, loss_name)
    acc = python_float(value[1], want_acc, ("the accuracy evaluate returned", "evaluate 返回的准确率"))
    sizes = batches_of(HELPER_N, HELPER_BATCH)
    if not matches(loss, want_loss, atol=1e-4):
        mean_mistakes(loss, [r["loss"] for r in out["losses"]], sizes, loss_name)
        expect_number(loss, want_loss, ("evaluate's mean cross-entropy loss over the samples",
                                        "evaluate 按样本平均的交叉熵损失"))
    if abs(acc - want_acc) > 1e-6:
        if matches(acc, 100 * want_acc, rtol=1e-5, atol=1e-5) and want_acc > 0:
            fail("evaluate's accuracy should be a fraction between 0 and 1 ({want:.4g}), got a percentage ({got:.4g}).",
                 "evaluate 的准确率应为 0 到 1 之间的比例（{want:.4g}），实际得到百分数（{got:.4g}）。",
                 want=want_acc, got=acc, key="accuracy-percent")
        if abs(acc - want_acc * HELPER_N / len(sizes)) < 1e-6:
            fail("evaluate's accuracy divides the correct count by the number of batches ({batches}), not by the "
                 "number of samples ({n}).",
                 "evaluate 的准确率用正确个数除以 batch 个数（{batches}），而不是样本数（{n}）。",
                 batches=len(sizes), n=HELPER_N, key="divided-by-batches")
        expect_number(acc, want_acc, ("evaluate's accuracy (correct predictions / number of samples)",
                                      "evaluate 的准确率（预测正确数 / 样本数）"), rtol=0)


def single_sample_last(model, x, y):
    """The samples reordered so that the last batch (one sample) holds the sample whose loss is farthest from
    the mean of the others: a mean that does not weight batches by their size is then off by a clear margin."""
    model.eval()
    with torch.no_grad():
        losses = nn.functional.cross_entropy(model(x), y, reduction="none")
    rest = (losses.sum() - losses) / (len(losses) - 1)
    last = int((losses - rest).abs().argmax())
    order = torch.cat([torch.arange(len(y))[torch.arange(len(y)) != last], torch.tensor([last])])
    return x[order], y[order]


def expected_eval(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
    return logits, float(nn.functional.cross_entropy(logits, y)), float((logits.argmax(1) == y).float().mean())


@check("train_one_epoch: train mode, fresh gradients each batch, one step per batch, mean loss", points=2,
       zh="train_one_epoch：训练模式、每个 batch 的梯度都是新的、每个 batch 一步更新、平均损失")
def test_train_one_epoch(submission, rng):
    x, y = draw_task(rng)(HELPER_N)
    model = new_model(rng)
    sizes = batches_of(HELPER_N, HELPER_BATCH)
    out = submission.probe(run_train_epoch, model.state_dict(), x, y, HELPER_BATCH, 0.1,
                           what="`train_one_epoch(model, train_loader, criterion, optimizer)`")
    fail_if_gpu(out["cuda"], "`train_one_epoch(model, train_loader, criterion, optimizer)`")
    steps = out["steps"]
    check_forwards(out["forwards"], "train_one_epoch", training=True)
    check_criterion_inputs(out["losses"], "train_one_epoch")
    if len(steps) != len(sizes):
        fail("{n} batches should give {n} optimizer steps (one per batch), got {got}: call optimizer.step() after "
             "each batch's backward, inside the loop.",
             "{n} 个 batch 应进行 {n} 次 optimizer.step()（每个 batch 一次），实际 {got} 次："
             "请在循环内、每个 batch 的 backward 之后调用 optimizer.step()。", n=len(sizes), got=len(steps),
             key="steps-per-batch")
    for k, step in enumerate(steps, start=1):
        if step["missing"]:
            fail("At optimizer.step() of batch {k} there were no gradients: call loss.backward() before "
                 "optimizer.step(), and zero_grad before backward (not between backward and step).",
                 "第 {k} 个 batch 执行 optimizer.step() 时没有梯度：应在 optimizer.step() 之前调用 loss.backward()，"
                 "并在 backward 之前（而不是 backward 与 step 之间）调用 zero_grad。", k=k, key="no-gradients-at-step")
        if not step["fresh"]:
            fail("At optimizer.step() of batch {k} the gradients also held earlier batches' gradients: gradients "
                 "accumulate, so call optimizer.zero_grad() at every batch before loss.backward().",
                 "第 {k} 个 batch 执行 optimizer.step() 时，梯度里还累加着之前 batch 的梯度："
                 "梯度会累加，请在每个 batch 的 loss.backward() 之前调用 optimizer.zero_grad()。", k=k,
                 key="zero-grad-missing")
    batch_losses = [r["loss"] for r in out["losses"]]
    want = sum(loss * s for loss, s in zip(batch_losses, sizes)) / sum(sizes)
    what = ("the loss train_one_epoch returned", "train_one_epoch 返回的损失")
    value = python_float(out["value"], want, what)
    if len(batch_losses) == len(sizes) and not matches(value, want, atol=1e-4):
        mean_mistakes(value, batch_losses, sizes, what)
        expect_number(value, want, ("train_one_epoch's mean training loss over the samples",
                                    "train_one_epoch 按样本平均的训练损失"))


# -- checks: fit -----------------------------------------------------------------------------

VAL_SIZE, TRAIN_SIZE, TEST_SIZE = 200, 320, 400


def fit_run(submission, rng):
    """The real training, once per grading."""
    def trained():
        sample = draw_task(rng)
        train, val, test = sample(TRAIN_SIZE), sample(VAL_SIZE), sample(TEST_SIZE)
        model = new_model(rng)
        out = submission.probe(run_fit, model.state_dict(), list(train), list(val), EPOCHS, FIT_LR,
                               what=f"`fit(model, train_loader, val_loader, epochs={EPOCHS}, lr={FIT_LR})`")
        return out, model, test
    return submission.once("fit", trained)


@check("fit trains the model: its best epoch classifies 85% of fresh samples", points=1,
       zh="fit 训练了模型：最好的 epoch 在新样本上达到 85% 的准确率")
def test_fit_trains(submission, rng):
    out, model, (x_test, y_test) = fit_run(submission, rng)
    records = out["val"][:EPOCHS]
    if out["misordered"]:
        call = out["misordered"][0]
        fail("fit calls `{call}`: the arguments are not in the order your helper takes them, "
             "`train_one_epoch(model, loader, criterion, optimizer)` and `evaluate(model, loader, criterion)`, "
             "so with your own helpers it would fail.",
             "fit 调用了 `{call}`：参数顺序与辅助函数定义的顺序不同，应为 `train_one_epoch(model, loader, criterion, optimizer)` "
             "和 `evaluate(model, loader, criterion)`，用你自己的辅助函数时会出错。", call=verbatim(call),
             key="helper-arguments-swapped")
    kinds = sorted({name for name, *_ in out["optimizers"]})
    if kinds and kinds != ["Adam"]:
        fail("fit trains with {kinds}: the statement asks for `Adam(model.parameters(), lr=lr)`.",
             "fit 用 {kinds} 训练：题目要求使用 `Adam(model.parameters(), lr=lr)`。",
             kinds=verbatim(", ".join(kinds)), key="wrong-optimizer")
    left = out["optimizers"][0][2] if out["optimizers"] else []
    if left:
        fail("fit's optimizer does not hold every parameter of the model: {names} never train. Give Adam "
             "model.parameters(), all of them.",
             "fit 的优化器没有包含模型的全部参数：{names} 永远不会被训练。请把 model.parameters() 全部交给 Adam。",
             names=verbatim(", ".join(f"`{n}`" for n in left[:4])), key="optimizer-misses-params")
    if out["optimizers"] and abs(out["optimizers"][0][1] - FIT_LR) > 1e-12:
        fail("fit's optimizer starts at `lr={got}`, but fit was called with `lr={lr}`: pass lr to Adam.",
             "fit 的优化器初始学习率为 `lr={got}`，但调用 fit 时 `lr={lr}`：请把 lr 传给 Adam。", lr=FIT_LR,
             got=out["optimizers"][0][1], key="lr-ignored")
    record_curve("validation loss per epoch (true loss of your model after each epoch)",
                 {"yours": [r["loss"] for r in records]}, log=True, xlabel="epoch")
    if len(out["val"]) < EPOCHS:
        fail("fit(..., epochs={epochs}) should validate once per epoch, {epochs} times, got {got} validation passes.",
             "fit(..., epochs={epochs}) 应每个 epoch 验证一次，共 {epochs} 次，实际验证了 {got} 次。",
             epochs=EPOCHS, got=len(out["val"]), key="epochs-not-run")
    best = min(range(len(records)), key=lambda k: records[k]["loss"])
    model.load_state_dict(records[best]["state"])
    _, loss, acc = expected_eval(model, x_test, y_test)
    if acc < 0.85:
        fail("After fit, the model's best epoch classifies {acc:.1%} of {n} fresh samples correctly (test loss "
             "{loss:.3f}); 85% is expected. Does fit train with CrossEntropyLoss and Adam(model.parameters(), lr=lr), "
             "for every epoch?",
             "fit 之后，模型最好的 epoch 在 {n} 个新样本上的准确率为 {acc:.1%}（测试损失 {loss:.3f}），期望至少 85%。"
             "fit 是否用 CrossEntropyLoss 和 Adam(model.parameters(), lr=lr) 训练了每一个 epoch？",
             acc=acc, n=TEST_SIZE, loss=loss, key="not-trained")


@check("fit keeps the model and the batches on one device, with a GPU there too", points=1,
       zh="有 GPU 时，fit 也让模型和 batch 在同一个设备上", depends="fit_trains")
def test_fit_one_device(submission, rng):
    # The learner's own fit and helpers run with a GPU pretended (a CPU grader never runs code behind
    # `if torch.cuda.is_available():` otherwise); a helper that sends batches there is its own check's mistake.
    sample = draw_task(rng)
    out = submission.probe(run_fit_on_gpu, new_model(rng).state_dict(), list(sample(32)), list(sample(16)), 2,
                           0.01, what="`fit(model, train_loader, val_loader, epochs=2)`")
    mixed = out["mixed"]
    if mixed is None or (mixed["by_helper"] and not mixed["model"]):
        return
    values = dict(func=verbatim(mixed["func"]), calls=verbatim(", ".join(mixed["calls"])))
    if mixed["model"]:
        fail("With a GPU present, fit put the model on it (`{calls}`) while the batches stayed on the CPU: `{func}` "
             "got tensors on both devices, which fails on a real GPU. Move each batch to the model's device too "
             "(`x, y = x.to(device), y.to(device)`), or leave the model where the caller put it.",
             "有 GPU 时，fit 把模型放到了 GPU 上（`{calls}`），而 batch 还留在 CPU 上：`{func}` 同时收到了两个设备上的 "
             "tensor，在真正的 GPU 上会报错。请把每个 batch 也移到模型所在的设备上（`x, y = x.to(device), "
             "y.to(device)`），或者让模型留在调用者放的地方。", key="model-without-batches", **values)
    fail("With a GPU present, fit sent tensors to it (`{calls}`) while the model stayed on the CPU: `{func}` got "
         "tensors on both devices, which fails on a real GPU. Keep every batch on the model's device.",
         "有 GPU 时，fit 把 tensor 放到了 GPU 上（`{calls}`），而模型还留在 CPU 上：`{func}` 同时收到了两个设备上的 "
         "tensor，在真正的 GPU 上会报错。请让每个 batch 都留在模型所在的设备上。", key="batches-without-model", **values)


VAL_N, TRAIN_N = 40, 64


def design(rng):
    """The scripted run's numbers, per pass (EPOCHS + 2, in case fit validates more). Over the epochs: validation
    accuracy strictly highest at `acc_best`, strictly lowest at the first epoch; validation loss strictly lowest at
    `loss_best`, before `acc_best`, never at the first or last epoch; training loss falling. Losses stay below
    every accuracy, so a value sent to the scheduler or kept in history tells which it is."""
    passes = EPOCHS + 2
    loss_best = int(torch.randint(2, 6, (1,), generator=rng))
    acc_best = int(torch.randint(max(loss_best + 1, 5), EPOCHS - 1, (1,), generator=rng))
    correct = [30 + k if k <= acc_best else 30 + 2 * acc_best - k for k in range(passes)]
    low = 0.30 + 0.02 * float(torch.rand((), generator=rng))
    val_loss = [low + (0.05 * (loss_best - k) if k <= loss_best else 0.03 * (k - loss_best) + 0.004)
                for k in range(passes)]
    train_loss = [1.5 - 0.04 * k for k in range(passes)]
    return {"loss_best": loss_best, "acc_best": acc_best, "correct": correct, "val_loss": val_loss,
            "train_loss": train_loss}


def scripted_logits(plan, rng):
    """Logits as log-probabilities, so that cross-entropy and accuracy come out as planned. Per validation pass,
    `correct` samples give their class a probability exp(-right), the others exp(-wrong) (below 1/3: a wrong
    class has the largest), with right and wrong chosen so that the mean is the planned loss."""
    val_y = torch.randint(0, CLASSES, (VAL_N,), generator=rng)
    train_y = torch.randint(0, CLASSES, (TRAIN_N,), generator=rng)
    val = []
    for correct, loss in zip(plan["correct"], plan["val_loss"]):
        acc = correct / VAL_N
        wrong = min(max((loss - 0.3 * acc) / (1 - acc), 1.15), 3.0)
        right = (loss - (1 - acc) * wrong) / acc  # in (0.05, 0.9) for every plan design() makes
        is_right = torch.zeros(VAL_N, dtype=torch.bool)
        is_right[torch.randperm(VAL_N, generator=rng)[:correct]] = True
        q = torch.where(is_right, torch.tensor(right), torch.tensor(wrong)).double().neg().exp()
        probs = torch.empty(VAL_N, CLASSES, dtype=torch.float64)
        rows = torch.arange(VAL_N)
        probs[rows, val_y] = q
        probs[rows, (val_y + 1) % CLASSES] = torch.where(is_right, (1 - q) / 2, 1 - 2 * q)
        probs[rows, (val_y + 2) % CLASSES] = torch.where(is_right, (1 - q) / 2, q)
        val.append(probs.log().float())
    train = []
    for loss in plan["train_loss"]:
        q = torch.exp(torch.tensor(-loss, dtype=torch.float64))
        probs = torch.full((TRAIN_N, CLASSES), float((1 - q) / 2), dtype=torch.float64)
        probs[torch.arange(TRAIN_N), train_y] = q
        train.append(probs.log().float())
    return torch.stack(val), val_y, torch.stack(train), train_y


def scripted_run(submission, rng):
    """The scripted run, once per grading; with the judge's own losses and accuracies per pass."""
    def scripted():
        plan = design(rng)
        val, val_y, train, train_y = scripted_logits(plan, rng)
        truth = {"val_loss": [float(nn.functional.cross_entropy(v, val_y)) for v in val],
                 "val_acc": [float((v.argmax(1) == val_y).float().mean()) for v in val],
                 "train_loss": [float(nn.functional.cross_entropy(t, train_y)) for t in train]}
        out = submission.probe(run_scripted_fit, val, val_y, train, train_y, EPOCHS, 0.01,
                               what=f"`fit(model, train_loader, val_loader, epochs={EPOCHS}, lr=0.01)`")
        return out, truth
    return submission.once("scripted", scripted)


def as_number(value):
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.reshape(()))
    return float(value) if is_number(value, (int, float)) else None


@check("fit: ReduceLROnPlateau is stepped once per epoch with the validation loss", points=1,
       zh="fit：每个 epoch 用验证损失调用一次 ReduceLROnPlateau.step")
def test_fit_scheduler(submission, rng):
    out, truth = scripted_run(submission, rng)
    steps = out["steps"]
    if not steps:
        fail("fit never stepped a ReduceLROnPlateau scheduler: create one on the optimizer (mode='min') and call "
             "scheduler.step(val_loss) after each validation pass.",
             "fit 没有调用 ReduceLROnPlateau 调度器的 step：请在 optimizer 上创建一个（mode='min'），"
             "并在每次验证之后调用 scheduler.step(val_loss)。", key="scheduler-not-stepped")
    if len(steps) != EPOCHS:
        fail("ReduceLROnPlateau.step should be called once per epoch ({epochs} times), got {got}: call it once "
             "after validation, not after every batch.",
             "ReduceLROnPlateau.step 应每个 epoch 调用一次（共 {epochs} 次），实际 {got} 次：请在验证之后调用一次，"
             "而不是每个 batch 都调用。", epochs=EPOCHS, got=len(steps), key="scheduler-steps-per-epoch")
    for k, step in enumerate(steps, start=1):
        if step["mode"] != "min":
            fail("The scheduler has mode='{mode}', but a loss should go down: use mode='min' with the validation loss.",
                 "调度器的 mode='{mode}'，而损失应该越小越好：请对验证损失使用 mode='min'。", mode=step["mode"],
                 key="scheduler-mode-max")
        if step["val_passes"] == 0:
            fail("ReduceLROnPlateau.step was called before any validation pass: step it with the validation loss "
                 "of the epoch.", "ReduceLROnPlateau.step 在任何验证之前就被调用了：请用本 epoch 的验证损失调用它。",
                 key="scheduler-before-validation")
        p = min(step["val_passes"], len(truth["val_loss"])) - 1
        metric, want = step["metric"], truth["val_loss"][p]
        if metric is not None and matches(metric, want, rtol=1e-3, atol=1e-3):
            continue
        values = dict(k=k, got=describe(metric) if metric is None else f"{metric:.4g}", want=want)
        if metric is not None and matches(metric, truth["val_acc"][p], atol=1e-4):
            fail("At epoch {k} scheduler.step got {got}, the validation accuracy, but the validation loss was "
                 "{want:.4g}: step ReduceLROnPlateau (mode='min') with the loss. Are loss and accuracy swapped when "
                 "you unpack evaluate's (loss, accuracy)?",
                 "第 {k} 个 epoch 中 scheduler.step 收到的是 {got}，即验证准确率，而验证损失为 {want:.4g}："
                 "请用损失调用 ReduceLROnPlateau（mode='min'）。解包 evaluate 返回的 (损失, 准确率) 时是不是把两者写反了？",
                 key="scheduler-val-accuracy", **values)
        if metric is not None and matches(metric, truth["train_loss"][min(k, len(truth["train_loss"])) - 1],
                                          atol=1e-4):
            fail("At epoch {k} scheduler.step got {got}, the training loss, but the validation loss was {want:.4g}: "
                 "step ReduceLROnPlateau with the validation loss (the training loss keeps falling even when the "
                 "model stops improving).",
                 "第 {k} 个 epoch 中 scheduler.step 收到的是 {got}，即训练损失，而验证损失为 {want:.4g}："
                 "请用验证损失调用 ReduceLROnPlateau（即使模型不再变好，训练损失也会一直下降）。",
                 key="scheduler-train-loss", **values)
        fail("At epoch {k} scheduler.step got {got}, but the validation loss was {want:.4g}: step ReduceLROnPlateau "
             "with the validation loss.",
             "第 {k} 个 epoch 中 scheduler.step 收到的是 {got}，而验证损失为 {want:.4g}："
             "请用验证损失调用 ReduceLROnPlateau.step。", key="scheduler-wrong-metric", **values)


def swapped_history(history, truth) -> bool:
    """Does the learner's history hold each epoch's accuracy as its val_loss (evaluate's pair unpacked swapped)?"""
    if not isinstance(history, (list, tuple)) or not history:
        return False
    values = [as_number(h.get("val_loss")) if isinstance(h, dict) else None for h in history]
    return all(v is not None and matches(v, acc, atol=1e-4) for v, acc in zip(values, truth["val_acc"]))


def check_returned_pair(out):
    if out["returned"] not in ("tuple", "list") or out["history"] is None:
        fail("fit should return (best_state, history), got {got}.", "fit 应返回 (best_state, history)，实际得到 {got}。",
             got=out["returned"], key="fit-not-a-pair")


@check("fit: history has one entry per epoch with its train_loss, val_loss and val_acc", points=1,
       zh="fit：history 每个 epoch 一项，含 train_loss、val_loss 和 val_acc")
def test_fit_history(submission, rng):
    out, truth = scripted_run(submission, rng)
    check_returned_pair(out)
    history = out["history"]
    if len(history) != EPOCHS:
        fail("history should have one entry per epoch ({epochs}), got {got}.",
             "history 应每个 epoch 一项（共 {epochs} 项），实际有 {got} 项。", epochs=EPOCHS, got=len(history),
             key="history-length")
    for k, entry in enumerate(history):
        if not isinstance(entry, dict) or not {"train_loss", "val_loss", "val_acc"} <= set(entry):
            fail("history[{k}] should be a dict with the keys \"train_loss\", \"val_loss\" and \"val_acc\", got {got}.",
                 "history[{k}] 应是含 \"train_loss\"、\"val_loss\" 和 \"val_acc\" 三个键的字典，实际得到 {got}。",
                 k=k, got=sorted(entry) if isinstance(entry, dict) else entry, key="history-keys")
        got = {name: as_number(entry[name]) for name in ("train_loss", "val_loss", "val_acc")}
        want = {name: truth[name][k] for name in got}
        if all(v is not None for v in got.values()) and matches(got["val_loss"], want["val_acc"], atol=1e-4) and \
                matches(got["val_acc"], want["val_loss"], atol=1e-4):
            fail("history[{k}] has val_loss {loss:.4g} and val_acc {acc:.4g}, swapped: evaluate returns (loss, "
                 "accuracy), unpack it in that order.",
                 "history[{k}] 的 val_loss 为 {loss:.4g}、val_acc 为 {acc:.4g}，两者反了：evaluate 返回的是 (损失, 准确率)，"
                 "请按这个顺序解包。", k=k, loss=got["val_loss"], acc=got["val_acc"], key="swapped-pair")
        for name in got:
            if got[name] is None or not matches(got[name], want[name], atol=1e-4):
                fail("history[{k}][\"{name}\"] should be {want:.4g}, the value of epoch {epoch}, got {got}.",
                     "history[{k}][\"{name}\"] 应为第 {epoch} 个 epoch 的值 {want:.4g}，实际为 {got}。",
                     k=k, name=name, want=want[name], epoch=k + 1,
                     got=describe(entry[name]) if got[name] is None else f"{got[name]:.4g}", key="history-values")


@check("fit: best_state is a copy of the weights of the epoch with the lowest validation loss", points=1,
       zh="fit：best_state 是验证损失最低那个 epoch 的权重的副本")
def test_fit_best_state(submission, rng):
    out, truth = scripted_run(submission, rng)
    best = out["best"]
    if out["best_type"] not in ("dict", "OrderedDict"):
        if out["best_type"] == "ScriptedModel":
            fail("best_state should be a state_dict, got the model itself: return model.state_dict() (a copy taken at "
                 "the best epoch).",
                 "best_state 应是一个 state_dict，实际得到的是模型本身：请返回 model.state_dict()（在最佳 epoch 时复制的副本）。",
                 key="best-state-is-model")
        fail("best_state should be a state_dict (a dict of tensors), got {got}: did you forget to set it?",
             "best_state 应是一个 state_dict（tensor 的字典），实际得到 {got}：是不是忘了给它赋值？",
             got=describe(best), key="best-state-missing")
    if set(best) != {"weight", "tag"}:
        fail("best_state should have the keys of model.state_dict() ({want}), got {got}.",
             "best_state 的键应与 model.state_dict() 相同（{want}），实际为 {got}。",
             want=["tag", "weight"], got=sorted(best)[:6], key="best-state-keys")
    if out["shared"]:
        fail("best_state shares memory with the model's live weights ({name}...): model.state_dict() returns "
             "references that keep changing as training goes on, and neither dict.copy() nor .cpu() on a CPU "
             "tensor copies them. Keep a deep copy: copy.deepcopy(model.state_dict()) or "
             "{{k: v.clone() for k, v in ...}}.",
             "best_state 与模型正在训练的权重共享内存（{name}...）：model.state_dict() 返回的是引用，会随训练不断变化，"
             "dict.copy() 和对 CPU tensor 调用 .cpu() 都不会复制它们。请深拷贝：copy.deepcopy(model.state_dict()) 或 "
             "{{k: v.clone() for k, v in ...}}。", name=out["shared"][0], key="best-state-shared")
    losses, accs = truth["val_loss"], truth["val_acc"]
    passes = min(out["passes"]["val"], len(losses))
    want = min(range(passes), key=lambda k: losses[k])
    epoch = int(best["tag"])
    weights = out["weights"]
    if epoch == want and epoch < len(weights) and matches(best["weight"], weights[epoch], rtol=1e-5, atol=1e-8):
        return
    if not 0 <= epoch < passes or epoch >= len(weights) or not matches(best["weight"], weights[epoch], rtol=1e-5,
                                                                          atol=1e-8):
        fail("best_state matches the weights of no epoch: copy model.state_dict() right after the validation pass "
             "in which the validation loss improved.",
             "best_state 与任何一个 epoch 结束时的权重都不一致：请在验证损失变好的那次验证之后立刻复制 model.state_dict()。",
             key="best-state-no-epoch")
    values = dict(got=epoch + 1, got_loss=losses[epoch], got_acc=accs[epoch], want=want + 1, want_loss=losses[want])
    cause = Text("keep a copy only when the validation loss improves on the best so far.",
                 "只有当验证损失优于目前最好值时才保存副本。")
    key = "best-state-wrong-epoch"
    if epoch == max(range(passes), key=lambda k: accs[k]):
        cause, key = Text("that is the epoch of the highest validation accuracy. Accuracy and loss disagree here, as "
                          "they often do (a model can get more samples right while growing over-confident on the "
                          "ones it gets wrong): choose by the validation loss.",
                          "那是验证准确率最高的 epoch。这里准确率和损失并不一致，这很常见（模型可能答对更多样本，"
                          "同时对答错的样本越来越过度自信）：请按验证损失来选。"), "best-by-accuracy"
    elif epoch == passes - 1:
        cause, key = Text("those are the last epoch's weights: keep a copy only when the validation loss improves "
                          "on the best so far, not after every epoch.",
                          "那是最后一个 epoch 的权重：只有当验证损失优于目前最好值时才保存副本，而不是每个 epoch 都保存。"), \
            "best-is-last"
    elif swapped_history(out["history"], truth):
        cause, key = Text("your history holds the accuracy as val_loss: are loss and accuracy swapped when you "
                          "unpack evaluate's (loss, accuracy)?",
                          "你的 history 里 val_loss 存的是准确率：解包 evaluate 返回的 (损失, 准确率) 时是不是把两者写反了？"), \
            "swapped-pair"
    elif epoch == max(range(passes), key=lambda k: losses[k]):
        cause, key = Text("that is the epoch of the highest validation loss: is the comparison reversed?",
                          "那是验证损失最高的 epoch：是不是比较方向写反了？"), "best-comparison-reversed"
    fail("best_state holds the weights of epoch {got} (validation loss {got_loss:.4g}, accuracy {got_acc:.1%}), but "
         "epoch {want} had the lowest validation loss ({want_loss:.4g}): {cause}",
         "best_state 是第 {got} 个 epoch 的权重（验证损失 {got_loss:.4g}，准确率 {got_acc:.1%}），但验证损失最低的是第 "
         "{want} 个 epoch（{want_loss:.4g}）：{cause}", cause=cause, key=key, **values)
