"""Hidden checks of ex26: fine-tune the head, keep the backbone (weights and BatchNorm statistics).

A probe builds the model in the sandbox from weights the judge drew (a backbone with a BatchNorm whose
running statistics are those of a "pretrained" model, and a new head), runs the learner's fine_tune
over batches the judge drew, and returns the model's state afterwards, which parameters require grad,
the parameters the stepping optimizer holds, the mode of the head at each forward and the losses. The
model arrives in eval mode (as after its evaluation) and the head has a BatchNorm of its own, so a
fine_tune that never calls model.train() trains the head in eval mode. The judge fine-tunes the same
model itself (the backbone frozen and in eval mode, the head in training mode, SGD with momentum over
the head) and compares the losses step by step: a backbone in training mode, or a head in eval mode,
normalises with other statistics and gives other losses.
"""


import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from grader.checking import Text, check, fail, fail_raised, is_number, learner_call, matches, probe, verbatim

LR, EPOCHS, BATCHES, BATCH = 0.1, 3, 4, 16
CALL = f"`fine_tune(model, batches, lr={LR}, epochs={EPOCHS})`"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Sequential(nn.BatchNorm1d(16), nn.Linear(16, 3))

    def forward(self, x):
        return self.head(self.backbone(x))


def build(state):
    """The model as fine_tune gets it: in eval mode, as a pretrained model is after its evaluation."""
    model = Net()
    model.load_state_dict(state)
    return model.eval()


# -- sandbox side ---------------------------------------------------------------------------

@probe
def fine_tune_probe(module, state, batches):
    model = build(state)
    stepped = {}

    def step_hook(optimizer, args, kwargs):
        stepped[id(optimizer)] = [id(p) for group in optimizer.param_groups for p in group["params"]]

    head_modes = []

    def mode_hook(head, args):
        if torch.is_grad_enabled():  # a training forward, not an evaluation under no_grad
            head_modes.append(head[0].training)  # the mode of the head's BatchNorm

    hook = register_optimizer_step_pre_hook(step_hook)
    mode_handle = model.head.register_forward_pre_hook(mode_hook)
    out = {"error": None, "head_modes": head_modes}
    try:
        returned, out["error"] = learner_call(module, module.fine_tune, model, batches, LR, EPOCHS)
    finally:
        hook.remove()
        mode_handle.remove()
    if out["error"]:
        return out
    names = {id(p): name for name, p in model.named_parameters()}
    out["optimizers"] = [sorted(names.get(i, "?") for i in ids) for ids in stepped.values()]
    out["requires_grad"] = {name: p.requires_grad for name, p in model.named_parameters()}
    out["attribute"] = "requires_grad" in vars(model.backbone)
    out["state"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
    out["returned"] = ([v if is_number(v, float) else type(v).__name__ for v in returned]
                       if isinstance(returned, list) else type(returned).__name__)
    return out


# -- judge side -----------------------------------------------------------------------------

def draw(rng):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
    model = Net()
    bn = model.backbone[1]
    with torch.no_grad():
        bn.running_mean.copy_(0.5 * torch.randn(16, generator=rng))
        bn.running_var.copy_(torch.rand(16, generator=rng) + 0.5)
        bn.num_batches_tracked.fill_(500)
    teacher = torch.randn(5, 3, generator=rng)
    batches = []
    for _ in range(BATCHES):
        x = 2 * torch.randn(BATCH, 5, generator=rng) + 1
        batches.append((x, (x @ teacher).argmax(dim=1)))
    return model.state_dict(), batches


def reference(state, batches):
    model = build(state)
    model.backbone.requires_grad_(False)
    optimizer = torch.optim.SGD(model.head.parameters(), lr=LR, momentum=0.9)
    losses = []
    for _ in range(EPOCHS):
        model.train()
        model.backbone.eval()
        for x, labels in batches:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


def run(submission, rng):
    def tuned():
        state, batches = draw(rng)
        return state, batches, submission.probe(fine_tune_probe, state, batches, what=CALL)
    state, batches, out = submission.once("fine-tune", tuned)
    if out["error"]:
        fail_raised(out["error"], CALL, Text(
            "The loss has no graph at all: is the head frozen too? Freeze model.backbone only.",
            "损失根本没有计算图：是不是把分类头也冻结了？只冻结 model.backbone。")
            if "does not require grad" in (out["error"]["message"] or "") else None)
    return state, batches, out


def keys(names) -> Text:
    return verbatim(", ".join(f"`{n}`" for n in names[:5]) + (", ..." if len(names) > 5 else ""))


@check("the backbone's parameters are frozen (requires_grad=False), the head's are not", points=1.5,
       zh="主干的参数被冻结（requires_grad=False），分类头的参数没有")
def test_frozen(submission, rng):
    _, _, out = run(submission, rng)
    flags = out["requires_grad"]
    still = [n for n, rg in flags.items() if n.startswith("backbone.") and rg]
    if still and out["attribute"]:
        fail("`model.backbone.requires_grad = False` sets an attribute on the module object and freezes nothing: "
             "requires_grad is a flag of each parameter. Call model.backbone.requires_grad_(False) (with the "
             "underscore), or set p.requires_grad = False for each p in model.backbone.parameters().",
             "`model.backbone.requires_grad = False` 只是给模块对象设置了一个属性，什么也没有冻结：requires_grad 是每个参数的标志。"
             "请调用 model.backbone.requires_grad_(False)（带下划线），或对 model.backbone.parameters() 中的每个 p 设置 "
             "p.requires_grad = False。", key="module-attribute")
    if still:
        fail("after fine_tune these backbone parameters still have requires_grad=True: {names}. Freeze every "
             "parameter of model.backbone.", "fine_tune 之后这些主干参数仍然 requires_grad=True：{names}。请冻结 model.backbone 的每个参数。",
             names=keys(still), key="backbone-not-frozen")
    frozen_head = [n for n, rg in flags.items() if n.startswith("head.") and not rg]
    if frozen_head:
        fail("the head is frozen too ({names}): it is the part that must learn. Freeze model.backbone only.",
             "分类头也被冻结了（{names}）：它正是需要学习的部分。只冻结 model.backbone。", names=keys(frozen_head),
             key="head-frozen")


@check("the backbone's weights come out exactly as they went in", points=2, zh="主干的权重训练前后完全相同")
def test_backbone_weights(submission, rng):
    state, _, out = run(submission, rng)
    moved = [k for k in state if k.startswith("backbone.") and "running" not in k and "num_batches" not in k
             and not torch.equal(out["state"][k], state[k])]
    if moved:
        fail("fine_tune changed the backbone's weights: {names}. A frozen parameter gets no gradient and no "
             "optimizer step moves it.", "fine_tune 改变了主干的权重：{names}。被冻结的参数不会得到梯度，任何优化器的 step 都不会改变它。",
             names=keys(moved), key="backbone-moved")


@check("the backbone's BatchNorm keeps its running statistics", points=2, zh="主干中的 BatchNorm 保持它的 running 统计量")
def test_batchnorm(submission, rng):
    state, _, out = run(submission, rng)
    changed = [k for k in state if k.startswith("backbone.") and ("running" in k or "num_batches" in k)
               and not torch.equal(out["state"][k], state[k])]
    if changed:
        fail("the backbone's BatchNorm updated its running statistics ({names}): requires_grad=False stops the "
             "gradients, not BatchNorm, which in training mode replaces its pretrained mean and variance with those "
             "of your batches at every forward. model.train() sets every submodule to training mode: call "
             "model.backbone.eval() after it.",
             "主干中的 BatchNorm 更新了它的 running 统计量（{names}）：requires_grad=False 只阻止梯度，挡不住 BatchNorm；"
             "训练模式下它每次前向传播都会用你的批次统计量替换预训练的均值和方差。model.train() 会把每个子模块都设为训练模式："
             "请在它之后调用 model.backbone.eval()。", names=keys(changed), key="batchnorm-updated")


@check("the optimizer holds the head's parameters and nothing frozen", points=1.5,
       zh="优化器持有分类头的参数，不含任何被冻结的参数")
def test_optimizer(submission, rng):
    _, _, out = run(submission, rng)
    if not out["optimizers"]:
        fail("no optimizer.step() ran during fine_tune.", "fine_tune 期间没有运行 optimizer.step()。", key="step-missing")
    held = sorted({n for names in out["optimizers"] for n in names})
    head = [n for n in out["requires_grad"] if n.startswith("head.")]
    missing = [n for n in head if n not in held]
    if missing:
        fail("the optimizer does not hold {names}: the head never learns.", "优化器没有持有 {names}：分类头永远学不到东西。",
             names=keys(missing), key="head-not-in-optimizer")
    frozen = [n for n in held if n.startswith("backbone.")]
    if frozen:
        fail("the optimizer also holds the frozen backbone's parameters ({names}): give it only the parameters that "
             "train, [p for p in model.parameters() if p.requires_grad]. Otherwise it keeps state for them, and any "
             "gradient that reaches them later (a layer unfrozen, weight decay) moves the 'frozen' backbone.",
             "优化器还持有被冻结的主干参数（{names}）：只把需要训练的参数交给它，即 [p for p in model.parameters() if "
             "p.requires_grad]。否则它会为这些参数保存状态，以后只要有梯度到达它们（某层被解冻、权重衰减），“冻结”的主干就会改变。",
             names=keys(frozen), key="frozen-in-optimizer")


@check("the head learns in training mode as SGD with momentum over a frozen, eval-mode backbone does", points=3,
       zh="分类头在训练模式下学习，过程与在冻结且处于 eval 模式的主干上用带动量的 SGD 训练一致",
       depends=("frozen", "batchnorm"))
def test_learns(submission, rng):
    state, batches, out = run(submission, rng)
    got = out["returned"]
    if not isinstance(got, list) or any(isinstance(v, str) for v in got):
        fail("fine_tune should return a list of Python floats (loss.item()), one per step, got {got}.",
             "fine_tune 应返回由 Python float（loss.item()）组成的列表，每步一个，实际得到 {got}。",
             got=verbatim(f"`{got if isinstance(got, str) else next(v for v in got if isinstance(v, str))}`"),
             key="wrong-return")
    want = reference(state, batches)
    if len(got) != len(want):
        fail("fine_tune returned {n} losses, expected one per step: {epochs} epochs x {b} batches = {m}.",
             "fine_tune 返回了 {n} 个损失，应为每步一个：{epochs} 个 epoch x {b} 个批次 = {m}。", n=len(got),
             epochs=EPOCHS, b=BATCHES, m=len(want), key="wrong-steps")
    for k, (g, w) in enumerate(zip(got, want), start=1):
        off = not matches(g, w, atol=1e-5)
        if off and not all(out["head_modes"]):
            fail("step {k}: loss {g:.5g}, expected {w:.5g}: the head ran in eval mode, so its BatchNorm normalised "
                 "with its running statistics instead of the batch's. The model may arrive in eval mode (as after "
                 "its evaluation): call model.train() before training, then model.backbone.eval().",
                 "第 {k} 步：损失为 {g:.5g}，应为 {w:.5g}：分类头在 eval 模式下运行，它的 BatchNorm 用 running 统计量而不是批次的"
                 "统计量做归一化。模型交给你时可能处于 eval 模式（比如刚评估完）：训练前调用 model.train()，再调用 "
                 "model.backbone.eval()。", k=k, g=g, w=w, key="head-eval-mode")
        if off:
            fail("step {k}: loss {g:.5g}, while the head trained with SGD(lr={lr}, momentum=0.9) over the frozen "
                 "backbone in eval mode gives {w:.5g}. Keep the optimizer, lr, momentum and the order of the batches.",
                 "第 {k} 步：损失为 {g:.5g}，而在处于 eval 模式的冻结主干上用 SGD(lr={lr}, momentum=0.9) 训练分类头应为 {w:.5g}。"
                 "请保持优化器、lr、momentum 和批次顺序不变。", k=k, g=g, w=w, lr=LR, key="wrong-trajectory")
    if not sum(want[-BATCHES:]) < sum(want[:BATCHES]):  # pragma: no cover - guards the check's own data
        raise AssertionError("the reference fine-tuning did not learn: the check's data are wrong")
