"""Hidden checks of fs23: InfoNCE (with extra negatives) and CLIP's symmetric contrastive loss, from scratch.

The judge draws embeddings per seed (queries and keys whose norms differ from row to row, 0.5 to 1.5, so that cosine and
dot product disagree and no loss vanishes; a single pair; keys with extra negatives beyond N; a temperature of 0.01 with embeddings whose
logits pass 88, where exp overflows float32; a logit_scale in [0.5, 2.5]) and compares the learner's loss with
`F.cross_entropy` computed here in float64 on the logits the statement defines, with the labels on the diagonal
(`torch.arange(N)`), and CLIP's as the mean of `F.cross_entropy(logits, labels)` and `F.cross_entropy(logits.T,
labels)`. A classic mistake is named only when the learner's value is what that mistake computes, each computed
here: the other similarity (normalized or not), the temperature multiplied, the softmax over the keys' axis, a sum
over the queries, one direction of CLIP only, the two directions summed, logit_scale not exponentiated or divided
by, the labels of an [M, M] problem. A probe runs CLIP's loss backward in the sandbox: the gradients for both
embeddings and for logit_scale are the reference's.

Kata variants: `variant("similarity")` is "cosine" (each embedding normalized first) or "dot" (the raw dot
product); the reference and the naming of the other follow it.
"""

import math

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, fail, probe, variant, verbatim
from grader.gradients import expect_gradient

# -- probes (run in the sandbox) ----------------------------------------------------------------


@probe
def clip_gradients(module, image, text, scale):
    """CLIP's loss and its gradients for both embeddings and logit_scale (backward in the sandbox)."""
    a, b, s = (t.clone().requires_grad_(True) for t in (image, text, scale))
    loss = module.clip_loss(a, b, s)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        return {"loss": loss.detach() if isinstance(loss, torch.Tensor) else loss}
    loss.reshape(()).backward()
    return {"loss": loss.detach(), "image": a.grad, "text": b.grad, "scale": s.grad}


# -- judge-side helpers -------------------------------------------------------------------------

def similarity() -> str:
    """This draw's similarity: "cosine" or "dot"."""
    return variant("similarity")["name"]


def sim(a, b, how=None):
    a, b = a.double(), b.double()
    if (how or similarity()) == "cosine":
        a, b = F.normalize(a, dim=-1), F.normalize(b, dim=-1)
    return a @ b.T


def ce(logits, dim=1):
    """The mean cross-entropy with the labels on the diagonal, over rows (dim=1) or over columns (dim=0)."""
    logits = logits if dim == 1 else logits.T
    return F.cross_entropy(logits, torch.arange(logits.shape[0]))


def nce_reference(q, k, temperature, how=None):
    return ce(sim(q, k, how) / temperature)


def clip_reference(a, b, scale, how=None):
    logits = scale.double().exp() * sim(a, b, how)
    return (ce(logits) + ce(logits, dim=0)) / 2


def same(a, b) -> bool:
    """Close scalars, where NaN equals NaN and an infinity itself."""
    return bool(torch.allclose(a.double().reshape(()), b.double().reshape(()), rtol=1e-4, atol=1e-6, equal_nan=True))


def scalar(value, what):
    value = expect_tensor(value, what, floating=True)
    if value.numel() != 1:
        fail("{what} should be one number, got shape {shape}: one loss per query is not averaged yet.",
             "{what} 应为一个数，实际形状为 {shape}：每个查询一个损失，还没有求平均。", what=what,
             shape=list(value.shape), key="not-reduced")
    return value.reshape(())


OTHER_SIM = {"cosine": ("the similarity was the raw dot product; this draw takes the cosine: normalize each "
                        "embedding to unit length first (F.normalize(x, dim=-1)).",
                        "相似度用了原始点积；本题用余弦相似度：先把每个嵌入归一化成单位长度（F.normalize(x, dim=-1)）。"),
             "dot": ("the embeddings were normalized (cosine); this draw takes the raw dot product of the embeddings as "
                     "they are.",
                     "嵌入被归一化了（余弦相似度）；本题用嵌入原样的点积。")}


def nce_candidates(q, k, temperature) -> list:
    other = "dot" if similarity() == "cosine" else "cosine"
    s = sim(q, k)
    n, m = s.shape
    found = [(nce_reference(q, k, temperature, other), "other-similarity", *OTHER_SIM[similarity()]),
             (ce(s * temperature), "temperature-multiplied",
              "the similarities were multiplied by the temperature; divide by it (a small temperature sharpens).",
              "相似度乘以了温度；应除以温度（温度越小越尖锐）。"),
             (ce(s / temperature) * n, "sum-for-mean",
              "that is the sum over the {n} queries; the loss is their mean.",
              "这是对 {n} 个查询求和；损失应是它们的平均。")]
    if n == m and n > 1:
        found.append((ce(s / temperature, dim=0), "wrong-axis",
                      "the softmax ran over the queries (the columns); each query picks among the keys: softmax over "
                      "dim=1 of the [N, M] logits.",
                      "softmax 沿查询（列）做了；每个查询要在键之中挑选：对 [N, M] logits 沿 dim=1 做 softmax。"))
    if m > n:
        found.append((F.cross_entropy((s / temperature)[:, :n], torch.arange(n)), "extra-negatives-dropped",
                      "the keys beyond the first N were left out; they are negatives of every query and belong in "
                      "each row's softmax.",
                      "前 N 个之后的键被丢掉了；它们是每个查询的负样本，应在每一行的 softmax 之中。"))
    return found


def clip_candidates(a, b, scale) -> list:
    other = "dot" if similarity() == "cosine" else "cosine"
    s = sim(a, b)
    e = scale.double().exp()
    found = [(clip_reference(a, b, scale, other), "other-similarity", *OTHER_SIM[similarity()]),
             (ce(e * s), "one-direction",
              "that is the image->text loss only; CLIP's loss is symmetric: also each text picks its image (the "
              "columns), and the two are averaged.",
              "这只是图像到文本的损失；CLIP 的损失是对称的：每个文本也要挑出自己的图像（按列），两者再求平均。"),
             (ce(e * s, dim=0), "one-direction",
              "that is the text->image loss only; CLIP's loss is symmetric: also each image picks its text (the "
              "rows), and the two are averaged.",
              "这只是文本到图像的损失；CLIP 的损失是对称的：每个图像也要挑出自己的文本（按行），两者再求平均。"),
             (ce(e * s) + ce(e * s, dim=0), "directions-summed",
              "the two directions were added; CLIP averages them: (image->text + text->image) / 2.",
              "两个方向的损失相加了；CLIP 取它们的平均：(图像到文本 + 文本到图像) / 2。"),
             ((ce(scale.double() * s) + ce(scale.double() * s, dim=0)) / 2, "scale-not-exponentiated",
              "the similarities were multiplied by logit_scale itself; it is the log of 1 / temperature: multiply by "
              "logit_scale.exp().",
              "相似度直接乘以了 logit_scale；它是 1 / temperature 的对数：应乘以 logit_scale.exp()。"),
             ((ce(s / e) + ce(s / e, dim=0)) / 2, "scale-divided",
              "the similarities were divided by logit_scale.exp(); logit_scale.exp() is 1 / temperature: multiply.",
              "相似度除以了 logit_scale.exp()；logit_scale.exp() 就是 1 / temperature：应相乘。")]
    return found


def diagnose(value, expected, candidates, what, n) -> None:
    """Name the known mistake `value` is; fall back to a plain comparison."""
    if same(value, expected):
        return
    values = dict(what=what, got=float(value), want=float(expected), n=n)
    for candidate, key, en, zh in candidates:
        if same(value, candidate):
            fail("{what} is {got:.6g}, expected {want:.6g}: " + en, "{what} 为 {got:.6g}，应为 {want:.6g}：" + zh,
                 **values, key=key)
    if math.isfinite(float(expected)) and not math.isfinite(float(value)):
        fail("{what} is {got}, expected {want:.6g}: an overflow. With a small temperature the logits pass 88 and exp() "
             "is inf in float32: subtract each row's max before exp (torch.logsumexp or F.cross_entropy do).",
             "{what} 为 {got}，应为 {want:.6g}：发生了溢出。温度很小时 logits 超过 88，float32 中 exp() 为 inf："
             "在 exp 之前减去每行的最大值（torch.logsumexp 或 F.cross_entropy 会这样做）。", **values, key="overflow")
    expect_close(value, expected, what, n=n)


def embeddings(rng, n, d=6):
    """[n, d] embeddings whose norms differ from row to row (0.5 to 1.5), so cosine and dot product disagree, and
    dot products stay small enough that no loss vanishes (a vanished loss hides every mistake)."""
    x = F.normalize(torch.randn(n, d, generator=rng), dim=-1)
    return x * (0.5 + torch.rand(n, 1, generator=rng))


def correlated(rng, n, d=6):
    """Pairs that resemble each other (keys = queries plus noise of their own size, a cosine near 0.7): a loss below
    log(N) and far above 0, where the mistakes' values stand apart."""
    q = embeddings(rng, n, d)
    return q, q + q.norm(dim=1, keepdim=True) / d ** 0.5 * torch.randn(n, d, generator=rng)


def call_nce(submission, q, k, temperature):
    what = f"info_nce(query{list(q.shape)}, keys{list(k.shape)}, temperature={temperature:g})"
    return what, scalar(submission.info_nce(q, k, temperature), what)


def call_clip(submission, a, b, scale):
    what = f"clip_loss(image_emb{list(a.shape)}, text_emb{list(b.shape)}, logit_scale={float(scale):.3g})"
    return what, scalar(submission.clip_loss(a, b, scale), what)


def temperature_of(rng) -> float:
    return round(float(torch.empty(()).uniform_(0.3, 1.0, generator=rng)), 3)


# -- the checks ---------------------------------------------------------------------------------

@check("info_nce matches the cross-entropy of the similarity rows, labels on the diagonal (one pair too)", points=2,
       zh="info_nce 与相似度各行的交叉熵一致，标签在对角线上（只有一对时也是）")
def test_info_nce(submission, rng):
    n = int(torch.randint(4, 8, (), generator=rng))
    for q, k in (correlated(rng, n), (embeddings(rng, 1), embeddings(rng, 1))):
        temperature = temperature_of(rng)
        what, value = call_nce(submission, q, k, temperature)
        diagnose(value, nce_reference(q, k, temperature), nce_candidates(q, k, temperature), what, q.shape[0])


@check("info_nce takes keys beyond N as extra negatives of every query", points=2,
       zh="info_nce 把第 N 个之后的键当作每个查询的额外负样本", depends="info_nce")
def test_extra_negatives(submission, rng):
    n = int(torch.randint(3, 6, (), generator=rng))
    q, k = correlated(rng, n)
    # hard negatives: near copies of some positives, so that leaving them out changes every draw's loss
    extra = k[torch.randint(0, n, (int(torch.randint(2, 6, (), generator=rng)),), generator=rng)]
    k = torch.cat([k, extra + 0.1 * extra.norm(dim=1, keepdim=True) / 6 ** 0.5 * torch.randn(extra.shape, generator=rng)])
    temperature = temperature_of(rng)
    what, value = call_nce(submission, q, k, temperature)
    diagnose(value, nce_reference(q, k, temperature), nce_candidates(q, k, temperature), what, n)


@check("info_nce is finite and right with temperature 0.01, where logits pass 88", points=1,
       zh="温度为 0.01、logits 超过 88 时，info_nce 有限且正确", depends="info_nce")
def test_stable(submission, rng):
    n = int(torch.randint(4, 8, (), generator=rng))
    q = embeddings(rng, n)
    k = q + 0.05 * q.norm(dim=1, keepdim=True) * torch.randn(q.shape, generator=rng)  # cosine near 0.99: logit 99
    if similarity() == "dot":  # dot products near 2.2: / 0.01 passes 88 as the cosine's do
        q, k = F.normalize(q, dim=-1) * 1.5, F.normalize(k, dim=-1) * 1.5
    # an extra key along the first positive, 0.9 of its length: the cosine ties it (a loss of log 2 in row 0), the dot
    # product does not, so the two similarities disagree on every draw
    k = torch.cat([k, 0.9 * k[:1]])
    what, value = call_nce(submission, q, k, 0.01)
    diagnose(value, nce_reference(q, k, 0.01), nce_candidates(q, k, 0.01), what, n)


@check("clip_loss is the mean of the image->text and text->image losses, logits scaled by logit_scale.exp()", points=3,
       zh="clip_loss 是图像到文本和文本到图像两个损失的平均，logits 乘以 logit_scale.exp()", depends="info_nce")
def test_clip(submission, rng):
    n = int(torch.randint(4, 8, (), generator=rng))
    for a, b in (correlated(rng, n), (embeddings(rng, 1), embeddings(rng, 1))):
        scale = torch.empty(()).uniform_(0.5, 2.5, generator=rng)
        what, value = call_clip(submission, a, b, scale)
        diagnose(value, clip_reference(a, b, scale), clip_candidates(a, b, scale), what, a.shape[0])


@check("clip_loss's gradients for both embeddings and for logit_scale are the reference's", points=2,
       zh="clip_loss 对两个嵌入和 logit_scale 的梯度与参考值一致", depends="clip")
def test_gradient(submission, rng):
    n = int(torch.randint(4, 8, (), generator=rng))
    a, b = correlated(rng, n)
    a, b = (F.normalize(x, dim=-1) * (0.5 + torch.rand(n, 1, generator=rng)) for x in (a, b))  # logits below 20
    scale = torch.empty(()).uniform_(0.5, 2.0, generator=rng)
    result = submission.probe(clip_gradients, a, b, scale,
                              what=Text("`{call}` then backward", "`{call}` 之后 backward",
                                        call=verbatim("clip_loss(image_emb, text_emb, logit_scale)")))
    if "image" not in result:
        fail("The loss does not require grad: the graph from the embeddings to the loss was cut (.detach(), .item(), "
             "torch.no_grad() or a NumPy round trip).",
             "损失不 requires_grad：从嵌入到损失的计算图被切断了（`.detach()`、`.item()`、`torch.no_grad()` "
             "或者转成了 NumPy）。", key="graph-cut")
    leaves = [a.double().requires_grad_(True), b.double().requires_grad_(True), scale.double().requires_grad_(True)]
    expected = torch.autograd.grad(clip_reference(*leaves), leaves)
    for name, got, want in zip(("image_emb", "text_emb", "logit_scale"), (result["image"], result["text"],
                                                                          result["scale"]), expected):
        if got is None:
            fail("d loss/d {name} is None: no gradient reached {name}; it must take part in the loss through autograd "
                 "(no float() or .item() of it).",
                 "d loss/d {name} 是 None：没有梯度传到 {name}；它必须通过 autograd 参与损失的计算（不要对它用 float() 或 "
                 ".item()）。", name=verbatim(name), key="no-gradient")
        expect_gradient(got.reshape(want.shape), want, name, rtol=1e-3, atol=1e-5)
