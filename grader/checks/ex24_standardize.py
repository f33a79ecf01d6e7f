"""Hidden checks of ex24: standardise with statistics learned on the training split only.

The features are drawn with very different scales and offsets (so a learning rate that suits one does
not suit the others), and the validation split is drawn shifted from the training split (so statistics
learned on it, or on both splits together, give other numbers than the training split's). The std may
be the sample std (torch's default) or the population std: both are accepted. The last check trains a
linear model by full-batch gradient descent at a fixed learning rate on the learner's standardised
features and compares its validation loss with the same training on the judge's; on the raw features
the same learning rate diverges.

Kata variants: `variant("scaler")` is a z-score, (x - mean) / std, or a min-max scaler, (x - low) / span with
span = max - min; the expected statistics, the names in the messages and the diagnoses follow the draw.
"""

import math

import torch

from grader.checking import Text, check, expect_tensor, fail, matches, record_curve, variant, verbatim

N, N_VAL, D, LR = 200, 60, 4, 0.1
STEPS = {"zscore": 150, "minmax": 600}  # features in [0, 1] are not centred: descent needs longer


def draw(rng, constant: bool = False):
    scale = torch.tensor([100.0, 1.0, 0.01, 5.0])
    offset = torch.tensor([1000.0, -3.0, 0.5, 0.0])
    train = torch.randn(N, D, generator=rng) * scale + offset
    val = torch.randn(N_VAL, D, generator=rng) * scale * 1.5 + offset + 2 * scale
    if constant:
        c = float(torch.randint(1, 9, (1,), generator=rng))
        train[:, 2], val[:, 2] = c, c
    return train, val


STATISTICS = {  # what each scaler's two statistics are, in words
    "zscore": (Text("mean", "均值"), Text("standard deviation", "标准差")),
    "minmax": (Text("minimum", "最小值"), Text("range (max - min)", "取值范围（max - min）")),
}


def scaler() -> str:
    return variant("scaler")["name"]


def names() -> tuple[str, str]:
    """This draw's names of the two statistics: (mean, std) or (low, span)."""
    return variant("scaler")["a"], variant("scaler")["b"]


def formula():
    return verbatim(variant("scaler")["formula"])


def guarded(scale):
    return torch.where(scale > 0, scale, torch.ones_like(scale))


def accepted_stats(x) -> list:
    """Every correct (center, scale) of x: sample or population std for a z-score; min and max - min."""
    if scaler() == "minmax":
        low = x.amin(dim=0)
        return [(low, guarded(x.amax(dim=0) - low))]
    return [(x.mean(dim=0), guarded(x.std(dim=0, correction=c))) for c in (1, 0)]


def stats(x):
    return accepted_stats(x)[0]


def vector(value, what):
    """A per-feature statistic as D values: [D] or [1, D] are both fine."""
    t = expect_tensor(value, what, floating=True)
    if t.dim() == 2 and t.shape[0] == 1:
        t = t[0]
    if t.shape == (D,):
        return t
    if t.numel() == 1:
        fail("{what} is a single number: it pools all features together. Each feature (column) has its own scale: "
             "reduce over the samples only, dim=0, to get {d} values.",
             "{what} 只是一个数：它把所有特征混在一起了。每个特征（列）有自己的尺度：只沿样本维度归约（dim=0），得到 {d} 个值。",
             what=what, d=D, key="global-stats")
    if t.shape == (N,) or t.shape == (N, 1):
        fail("{what} has {n} values, one per sample: it reduces over the features (dim=1). Reduce over the samples, "
             "dim=0, to get one value per feature ({d}).",
             "{what} 有 {n} 个值，每个样本一个：它沿特征维度归约了（dim=1）。请沿样本维度 dim=0 归约，得到每个特征一个值（共 {d} 个）。",
             what=what, n=N, d=D, key="per-sample-stats")
    fail("{what} should hold one value per feature, shape [{d}], got shape {got}.",
         "{what} 应为每个特征一个值，形状 [{d}]，实际形状为 {got}。", what=what, d=D, got=list(t.shape), key="wrong-shape")


@check("fit_standardizer returns each feature's statistics over the training samples", points=2,
       zh="fit_standardizer 返回训练样本上每个特征的统计量")
def test_fit(submission, rng):
    train, _ = draw(rng)
    out = submission.fit_standardizer(train)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail("fit_standardizer should return ({a}, {b}).", "fit_standardizer 应返回 ({a}, {b})。",
             a=verbatim(names()[0]), b=verbatim(names()[1]), key="wrong-return")
    (a, b), (what_a, what_b) = names(), STATISTICS[scaler()]
    center, scale = vector(out[0], a), vector(out[1], b)
    want_center, want_scale = stats(train)
    if not matches(center, want_center, atol=1e-4):
        fail("{a} is {got}, expected the {what} of each column of train_x, {want}.",
             "{a} 为 {got}，应为 train_x 每一列的{what} {want}。", a=verbatim(a), what=what_a,
             got=[round(v, 4) for v in center.tolist()], want=[round(v, 4) for v in want_center.tolist()],
             key="wrong-mean")
    if not any(matches(scale, s, atol=1e-4) for _, s in accepted_stats(train)):
        hint = Text("", "")
        if scaler() == "zscore" and (matches(scale, train.var(dim=0), atol=1e-4)
                                     or matches(scale, train.var(dim=0, correction=0), atol=1e-4)):
            hint = Text(" That is the variance: take its square root.", "这是方差：请开平方。")
        if scaler() == "minmax" and matches(scale, train.amax(dim=0), atol=1e-4):
            hint = Text(" That is the maximum: the range is max - min.", "这是最大值：取值范围是 max - min。")
        fail("{b} is {got}, expected the {what} of each column of train_x, {want}.{hint}",
             "{b} 为 {got}，应为 train_x 每一列的{what} {want}。{hint}", b=verbatim(b), what=what_b,
             got=[round(v, 4) for v in scale.tolist()], want=[round(v, 4) for v in want_scale.tolist()], hint=hint,
             key="wrong-std")


@check("a feature that never varies gives no NaN or inf", points=1.5, zh="从不变化的特征不会产生 NaN 或 inf",
       depends="fit")
def test_zero_std(submission, rng):
    train, val = draw(rng, constant=True)
    a, b = names()
    center, scale = submission.fit_standardizer(train)
    scale = vector(scale, b)
    if not (torch.isfinite(scale).all() and (scale > 0).all()):
        fail("for a training feature whose values are all equal, fit_standardizer gives {b} {got}: {formula} "
             "is then 0 / 0 = NaN (or inf for any other value). Guard it: replace a zero {b} by 1, or clamp it to a "
             "small minimum.",
             "对于训练集中取值全都相同的特征，fit_standardizer 给出的 {b} 为 {got}：此时 {formula} 就是 0 / 0 = NaN"
             "（其他值则为 inf）。请加以防护：把为 0 的 {b} 换成 1，或把它截断到一个很小的下限。",
             b=verbatim(b), formula=formula(), got=verbatim(f"{float(scale[2]):g}"), key="zero-std")
    z = expect_tensor(submission.standardize(train, center, scale), f"standardize(train_x, {a}, {b})", shape=[N, D])
    if not torch.isfinite(z).all():
        fail("standardize gives NaN or inf on a constant training feature, even with the {b} fit_standardizer "
             "returned.", "即使使用 fit_standardizer 返回的 {b}，standardize 在常数特征上仍给出 NaN 或 inf。",
             b=verbatim(b), key="zero-std")


@check("standardize applies the statistics it is given, per feature, and leaves x unchanged", points=1.5,
       zh="standardize 逐特征使用传入的统计量，且不改变 x")
def test_standardize(submission, rng):
    x, _ = draw(rng)
    (a, b), (own_center, own_scale) = names(), stats(x)
    center, scale = own_center + torch.randn(D, generator=rng), own_scale * 1.3
    before = x.clone()
    z, (x_after, *_) = submission.call_with_args("standardize", x, center, scale)
    call = verbatim(f"standardize(x, {a}, {b})")
    z = expect_tensor(z, str(call), shape=[N, D], floating=True)
    values = dict(a=verbatim(a), b=verbatim(b), formula=formula(), call=call)
    if not torch.equal(x_after, before):
        fail("standardize changed x in place (x -= {a} or x /= {b}): the caller's data are gone. Compute a new "
             "tensor, {formula}.",
             "standardize 原地修改了 x（x -= {a} 或 x /= {b}）：调用者的数据被破坏了。请计算一个新 tensor：{formula}。",
             key="in-place", **values)
    if not matches(z, (x - center) / scale, atol=1e-4):
        hint = Text("", "")
        if matches(z, (x - center) / scale.mean(), atol=1e-4) or \
                matches(z, (x - own_center) / own_scale, atol=1e-4):
            hint = Text(" Use the {a} and {b} you are given, not statistics of x itself.",
                        "请使用传入的 {a} 和 {b}，而不是 x 自己的统计量。", a=verbatim(a), b=verbatim(b))
        fail("{call} differs from {formula}, feature by feature.{hint}",
             "{call} 与逐特征计算的 {formula} 不同。{hint}", hint=hint, key="wrong-standardize", **values)


def prepared(submission, rng):
    train, val = draw(rng)
    out = submission.prepare(train, val)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail("prepare should return (train_z, val_z).", "prepare 应返回 (train_z, val_z)。", key="wrong-return")
    train_z = expect_tensor(out[0], "train_z", shape=[N, D], floating=True)
    val_z = expect_tensor(out[1], "val_z", shape=[N_VAL, D], floating=True)
    return train, val, train_z, val_z


def standardised_by(x, source, z) -> bool:
    return any(matches(z, (x - c) / s, atol=1e-4) for c, s in accepted_stats(source))


@check("prepare standardises both splits with the training split's statistics only", points=2.5,
       zh="prepare 只用训练集的统计量来标准化两个数据划分", depends="fit")
def test_prepare(submission, rng):
    train, val, train_z, val_z = prepared(submission, rng)
    both = torch.cat([train, val])
    for split, x, z in (("train_z", train, train_z), ("val_z", val, val_z)):
        if standardised_by(x, train, z):
            continue
        values = dict(split=split, a=verbatim(names()[0]), b=verbatim(names()[1]), formula=formula())
        if standardised_by(x, both, z):
            fail("{split} was standardised with statistics of the training and validation splits together: the "
                 "validation data leak into the preprocessing, and the validation score is no longer that of unseen "
                 "data. Learn {a} and {b} on train_x only.",
                 "{split} 是用训练集和验证集合在一起的统计量标准化的：验证数据泄漏进了预处理，验证分数就不再是模型在未见过的数据上的表现。"
                 "请只在 train_x 上学习 {a} 和 {b}。", key="stats-leak", **values)
        if split == "val_z" and standardised_by(x, val, z):
            fail("val_z was standardised with the validation split's own {a} and {b}: the model was trained on "
                 "features measured with the training split's statistics, so the validation features must be measured "
                 "the same way (section 5.1: 'training and validation preprocessing differ'). Apply the training "
                 "statistics to val_x.",
                 "val_z 是用验证集自己的 {a} 和 {b} 标准化的：模型是在用训练集统计量度量的特征上训练的，验证特征也必须用同样的方式度量"
                 "（第 5.1 节：“训练和验证的数据预处理不一致”）。请把训练集的统计量用在 val_x 上。", key="val-own-stats", **values)
        fail("{split} is not {formula} with the per-feature {a} and {b} of train_x.",
             "{split} 不等于用 train_x 逐特征的 {a} 和 {b} 计算的 {formula}。", key="wrong-prepare", **values)


def gd_val_loss(train_z, val_z, y, y_val, lr=LR, steps=None):
    """Full-batch gradient descent of a linear model from zero; the validation MSE after each step."""
    w, b, curve = torch.zeros(D, dtype=torch.float64), torch.zeros((), dtype=torch.float64), []
    xt, xv = train_z.double(), val_z.double()
    for _ in range(steps or STEPS[scaler()]):
        err = xt @ w + b - y
        w, b = w - lr * 2 * xt.T @ err / len(y), b - lr * 2 * err.mean()
        curve.append(float(((xv @ w + b - y_val) ** 2).mean()))
    return curve


@check("gradient descent at lr=0.1 converges on your standardised features (it diverges on the raw ones)",
       points=2.5, zh="在你标准化后的特征上，lr=0.1 的梯度下降能收敛（在原始特征上会发散）", depends="prepare")
def test_converges(submission, rng):
    train, val, train_z, val_z = prepared(submission, rng)
    center, scale = stats(train)
    w_true = torch.randn(D, generator=rng, dtype=torch.float64)
    y = ((train - center) / scale).double() @ w_true + 0.1 * torch.randn(N, generator=rng, dtype=torch.float64)
    y_val = ((val - center) / scale).double() @ w_true + 0.1 * torch.randn(N_VAL, generator=rng, dtype=torch.float64)
    ref = gd_val_loss((train - center) / scale, (val - center) / scale, y, y_val)
    raw = gd_val_loss(train, val, y, y_val, steps=5)
    if not (ref[-1] < 0.1 and not all(math.isfinite(v) and v < 1e6 for v in raw)):  # pragma: no cover
        raise AssertionError("the check's data are wrong: standardised should converge, raw should diverge")
    got = gd_val_loss(train_z, val_z, y, y_val)
    record_curve("validation loss per step", {"yours": got, "reference": ref}, log=True, xlabel="step")
    if not (math.isfinite(got[-1]) and got[-1] <= 1.5 * ref[-1] + 1e-3):
        fail("gradient descent at lr=0.1 for {steps} steps on your train_z reaches a validation loss of {got:.4g} on "
             "your val_z; on features scaled with the training statistics it reaches {ref:.4g} (on the raw "
             "features it diverges: {raw}).",
             "在你的 train_z 上用 lr=0.1 做 {steps} 步梯度下降，在你的 val_z 上的验证损失为 {got:.4g}；用训练集统计量标准化的特征"
             "可以达到 {ref:.4g}（在原始特征上会发散：{raw}）。", steps=STEPS[scaler()], got=got[-1], ref=ref[-1],
             raw=verbatim(", ".join(f"{v:.3g}" for v in raw[:3]) + ", ..."), key="does-not-converge")
