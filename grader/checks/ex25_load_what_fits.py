"""Hidden checks of ex25: load a pretrained backbone's state_dict into a model with a new head.

The checkpoint comes from OldNet: an encoder (a Linear, a Linear whose name holds the prefix, a BatchNorm
with running statistics), a classifier for 10 classes and an auxiliary head. The learner's model is NewNet:
the same encoder, a classifier for 3 classes (same key, another shape) and an adapter the old model
never had. The checkpoint is given with every key prefixed (saved from a wrapper) and without. A probe
builds NewNet in the sandbox from weights the judge drew, calls load_what_fits and returns the model's
state_dict, the value returned and whether the checkpoint dict was changed.

Kata variants: `variant("wrapper")` is the wrapper that saved the checkpoint: nn.DataParallel ("module.") or
torch.compile ("_orig_mod."). Its names (the encoder's, the inner layer's) are chosen so that str.replace
cuts the prefix inside a key and str.lstrip eats the start of the encoder's name, whichever prefix.
"""

import torch
from torch import nn

from grader.checking import Text, check, fail, fail_raised, learner_call, probe, variant, verbatim


class Encoder(nn.Module):
    def __init__(self, inner: str):
        super().__init__()
        self.stem = nn.Linear(6, 12)
        setattr(self, inner, nn.Linear(12, 12))
        self.norm = nn.BatchNorm1d(12)


class OldNet(nn.Module):
    def __init__(self, encoder: str, inner: str):
        super().__init__()
        setattr(self, encoder, Encoder(inner))
        self.classifier = nn.Linear(12, 10)
        self.aux = nn.Linear(12, 1)


class NewNet(nn.Module):
    def __init__(self, encoder: str, inner: str):
        super().__init__()
        setattr(self, encoder, Encoder(inner))
        self.classifier = nn.Linear(12, 3)
        self.adapter = nn.Linear(12, 12)


MISSING = ["classifier.weight", "classifier.bias", "adapter.weight", "adapter.bias"]
UNEXPECTED = ["aux.weight", "aux.bias"]
CALL = "`load_what_fits(model, checkpoint)`"


def names() -> tuple[str, str]:
    """This draw's (encoder, inner layer) attribute names."""
    wrapper = variant("wrapper")
    return wrapper["encoder"], wrapper["inner"]


def prefix() -> str:
    return variant("wrapper")["prefix"]


def encoder_keys() -> list[str]:
    encoder = names()[0]
    return [k for k in NewNet(*names()).state_dict() if k.startswith(encoder + ".")]


# -- sandbox side ---------------------------------------------------------------------------

def _names(value):
    if isinstance(value, (list, tuple, set)) and all(isinstance(k, str) for k in value):
        return sorted(value)
    return {"type": type(value).__name__}


@probe
def load_probe(module, init, checkpoint, layer_names):
    model = NewNet(*layer_names)
    model.load_state_dict(init)
    given = {k: v.clone() for k, v in checkpoint.items()}
    returned, error = learner_call(module, module.load_what_fits, model, checkpoint)
    if error:
        return {"error": error}
    changed = set(checkpoint) != set(given) or any(not torch.equal(checkpoint[k], v) for k, v in given.items())
    if isinstance(returned, (list, tuple)) and len(returned) == 2:
        returned = [_names(returned[0]), _names(returned[1])]
    else:
        returned = {"type": type(returned).__name__}
    return {"error": None, "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "returned": returned, "changed": changed}


# -- judge side -----------------------------------------------------------------------------

def draw(rng):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=rng)))
    old, new = OldNet(*names()), NewNet(*names())
    norm = getattr(old, names()[0]).norm
    with torch.no_grad():
        norm.running_mean.copy_(torch.randn(12, generator=rng))
        norm.running_var.copy_(torch.rand(12, generator=rng) + 0.5)
        norm.num_batches_tracked.fill_(int(torch.randint(10, 1000, (1,), generator=rng)))
        norm.weight.copy_(torch.rand(12, generator=rng) + 0.5)
        norm.bias.copy_(torch.randn(12, generator=rng))
    return old.state_dict(), new.state_dict()


def run(submission, rng, prefixed: bool):
    def loaded():
        old, init = draw(rng)
        checkpoint = {(prefix() + k if prefixed else k): v for k, v in old.items()}
        return old, init, submission.probe(load_probe, init, checkpoint, names(), what=CALL)
    old, init, out = submission.once((prefixed, prefix()), loaded)  # the draw too: the model's names follow it
    if out["error"]:
        fail_load_error(out["error"])
    return old, init, out


def fail_load_error(err):
    """Fail with the learner's error, with the lesson of load_state_dict's own words where they are in it."""
    message, lessons = err["message"] or "", []
    if "Missing key" in message or "Unexpected key" in message:
        lessons.append(Text("load_state_dict is strict by default: every key must match. Pass strict=False to load "
                            "what fits.", "load_state_dict 默认是严格的：每个键都必须对上。请传入 strict=False，只加载能对上的部分。"))
    if "size mismatch" in message:
        lessons.append(Text("strict=False skips missing and unexpected keys, not a key both sides have with another "
                            "shape (the classifier: 10 classes in the checkpoint, 3 in the model). Drop those entries "
                            "before loading.",
                            "strict=False 只会跳过缺失的和多余的键，不会跳过双方都有但形状不同的键（分类头：检查点里是 10 类，"
                            "模型里是 3 类）。请在加载之前去掉这些条目。"))
    fail_raised(err, CALL, Text("{a} {b}", "{a}{b}", a=lessons[0], b=lessons[1]) if len(lessons) == 2 else
                (lessons[0] if lessons else None))


def expect_encoder_loaded(old, out, label):
    state, encoder = out["state"], encoder_keys()
    wrong = [k for k in encoder if not torch.equal(state[k], old[k])]
    if not wrong:
        return
    values = dict(label=label, keys=verbatim(", ".join(f"`{k}`" for k in wrong[:5])))
    if len(wrong) == len(encoder):
        fail("after loading the {label} checkpoint, no tensor of the encoder holds the checkpoint's values: nothing "
             "was loaded. Do the keys match the model's after the prefix is stripped?",
             "加载{label}检查点之后，编码器中没有任何 tensor 取得检查点里的值：什么都没有加载。去掉前缀之后，键和模型的键对得上吗？",
             key="nothing-loaded", **values)
    if all("running" in k or "num_batches" in k for k in wrong):
        fail("after loading the {label} checkpoint, the BatchNorm statistics are not loaded: {keys}. They are "
             "buffers: model.state_dict() has them, model.named_parameters() does not. Compare with "
             "model.state_dict().",
             "加载{label}检查点之后，BatchNorm 的统计量没有加载：{keys}。它们是 buffer：model.state_dict() 里有，"
             "model.named_parameters() 里没有。请与 model.state_dict() 比较。", key="buffers-not-loaded", **values)
    encoder, inner = names()
    fail("after loading the {label} checkpoint, these tensors of the encoder do not hold the checkpoint's values: "
         "{keys}. Strip only a leading {prefix} (str.replace also cuts it inside a key such as {inside}; "
         "str.lstrip strips letters, not a prefix).",
         "加载{label}检查点之后，编码器的这些 tensor 没有取得检查点里的值：{keys}。只去掉开头的 {prefix}"
         "（str.replace 也会剪掉键中间的部分，例如 {inside}；str.lstrip 去掉的是字母，而不是前缀）。",
         prefix=verbatim(f"'{prefix()}'"), inside=verbatim(f"`{encoder}.{inner}.weight`"),
         key="encoder-not-loaded", **values)


def prefixed_label() -> Text:
    return Text("prefixed ({prefix})", "带前缀（{prefix}）的", prefix=verbatim(f"'{prefix()}'"))


PLAIN = ("plain", "不带前缀的")


@check("strip_prefix removes a leading prefix only, once, into a new dict", points=2,
       zh="strip_prefix 只去掉开头的前缀，只去一次，并返回一个新字典")
def test_strip(submission, rng):
    v = [torch.randn(2, generator=rng) for _ in range(4)]
    (encoder, inner), pre = names(), prefix()
    given = {f"{pre}{encoder}.stem.weight": v[0], f"{encoder}.{inner}.weight": v[1],
             f"{pre}{encoder}.{inner}.bias": v[2], f"{pre}{pre}head": v[3]}
    want = {f"{encoder}.stem.weight": v[0], f"{encoder}.{inner}.weight": v[1], f"{encoder}.{inner}.bias": v[2],
            f"{pre}head": v[3]}
    got, (after, *_) = submission.call_with_args("strip_prefix", given)
    if not isinstance(got, dict):
        fail("strip_prefix should return a dict.", "strip_prefix 应返回一个字典。", key="not-a-dict")
    if sorted(after) != sorted(given):
        fail("strip_prefix changed the dict it was given (its keys are now {keys}): build a new dict.",
             "strip_prefix 修改了传入的字典（它的键现在是 {keys}）：请构建一个新字典。",
             keys=verbatim(", ".join(f"`{k}`" for k in sorted(after)[:4])), key="dict-changed")
    if sorted(got) != sorted(want):
        wrong = [k for k in got if k not in want]
        fail("strip_prefix({given}) gave the keys {got}, expected {want}{wrong}: only a {prefix} at the start of a key "
             "goes, once (str.replace also cuts it in the middle, str.lstrip strips letters).",
             "strip_prefix({given}) 得到的键为 {got}，应为 {want}{wrong}：只去掉键开头的 {prefix}，且只去一次"
             "（str.replace 也会剪掉中间的部分，str.lstrip 去掉的是字母）。",
             given=verbatim(", ".join(f"'{k}'" for k in given)), got=verbatim(", ".join(f"'{k}'" for k in got)),
             want=verbatim(", ".join(f"'{k}'" for k in want)), prefix=verbatim(f"'{pre}'"), key="wrong-strip",
             wrong=Text(" (not expected: {keys})", "（不应出现：{keys}）", keys=verbatim(", ".join(
                 f"'{k}'" for k in wrong))) if wrong else "")
    for k, t in want.items():
        if not torch.equal(got[k], t):
            fail("strip_prefix changed the value under {k}: only the keys change.",
                 "strip_prefix 改变了 {k} 下的值：只应改变键。", k=verbatim(f"'{k}'"), key="value-changed")


@check("load_what_fits loads the encoder (weights and BatchNorm statistics) from a prefixed checkpoint", points=2.5,
       zh="load_what_fits 从带前缀的检查点加载编码器（权重和 BatchNorm 统计量）")
def test_prefixed(submission, rng):
    old, _, out = run(submission, rng, prefixed=True)
    expect_encoder_loaded(old, out, prefixed_label())


@check("load_what_fits loads a checkpoint without the prefix too", points=1, zh="load_what_fits 也能加载不带前缀的检查点")
def test_plain(submission, rng):
    old, _, out = run(submission, rng, prefixed=False)
    expect_encoder_loaded(old, out, PLAIN)


@check("the new classifier and the new adapter keep their own initial weights", points=1.5,
       zh="新的分类头和新的 adapter 保持它们自己的初始权重")
def test_new_layers(submission, rng):
    _, init, out = run(submission, rng, prefixed=True)
    changed = [k for k in MISSING if not torch.equal(out["state"][k], init[k])]
    if changed:
        fail("load_what_fits changed {keys}, which the checkpoint has no fitting value for: leave the new layers as "
             "the model made them (no copying part of the old classifier, no re-initialising).",
             "load_what_fits 改变了 {keys}，而检查点里并没有能对上的值：请保持新层为模型创建时的样子（不要复制旧分类头的一部分，"
             "也不要重新初始化）。", keys=verbatim(", ".join(f"`{k}`" for k in changed)), key="new-layers-changed")


@check("load_what_fits returns (missing, unexpected) keys", points=2, zh="load_what_fits 返回 (missing, unexpected) 键",
       depends="prefixed")
def test_returned(submission, rng):
    _, _, out = run(submission, rng, prefixed=True)
    returned = out["returned"]
    if isinstance(returned, dict) or any(isinstance(r, dict) for r in returned):
        fail("load_what_fits should return (missing, unexpected), two lists of key names (load_state_dict's result "
             "has them: .missing_keys, .unexpected_keys).",
             "load_what_fits 应返回 (missing, unexpected)，即两个由键名组成的列表（load_state_dict 的返回值里就有："
             ".missing_keys、.unexpected_keys）。", key="wrong-return")
    missing, unexpected = returned
    values = dict(got=verbatim(", ".join(f"`{k}`" for k in missing) or "[]"),
                  gotu=verbatim(", ".join(f"`{k}`" for k in unexpected) or "[]"),
                  want=verbatim(", ".join(f"`{k}`" for k in sorted(MISSING))),
                  wantu=verbatim(", ".join(f"`{k}`" for k in sorted(UNEXPECTED))))
    if any(k.startswith(prefix()) for k in unexpected):
        fail("unexpected is {gotu}: it names keys with the {prefix} prefix. Report the keys after stripping it.",
             "unexpected 为 {gotu}：里面是带 {prefix} 前缀的键。请报告去掉前缀之后的键。", key="unexpected-prefixed",
             prefix=verbatim(f"'{prefix()}'"), **values)
    if sorted(missing) != sorted(MISSING):
        fail("missing is {got}, expected {want}: the model's keys that got no value (the new adapter, and the "
             "classifier whose shape changed).",
             "missing 为 {got}，应为 {want}：模型中没有得到值的键（新的 adapter，以及形状改变了的分类头）。",
             key="wrong-missing", **values)
    if sorted(unexpected) != sorted(UNEXPECTED):
        fail("unexpected is {gotu}, expected {wantu}: the checkpoint's keys the model does not have. Keep them in "
             "what you pass to load_state_dict(..., strict=False) and it reports them; the classifier is not one "
             "of them (the model has that key, with another shape).",
             "unexpected 为 {gotu}，应为 {wantu}：检查点中模型没有的键。把它们留在传给 load_state_dict(..., strict=False) "
             "的字典里，它就会报告它们；分类头不在其中（模型有这个键，只是形状不同）。", key="wrong-unexpected", **values)


@check("load_what_fits leaves the checkpoint dict it is given unchanged", points=1, zh="load_what_fits 不修改传入的检查点字典")
def test_checkpoint_unchanged(submission, rng):
    _, _, out = run(submission, rng, prefixed=True)
    if out["changed"]:
        fail("load_what_fits changed the checkpoint dict it was given (pop, del or renamed keys): the caller may "
             "load it into another model next. Build a new dict.",
             "load_what_fits 修改了传入的检查点字典（pop、del 或改名）：调用者接下来可能还要把它加载进另一个模型。请构建一个新字典。",
             key="checkpoint-changed")
