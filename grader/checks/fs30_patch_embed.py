"""Hidden checks of fs30: ViT patch embedding, the cls token, position embeddings and pooling.

The expectations are PyTorch's own: F.unfold(images, P, stride=P).transpose(1, 2) for the patches (row-major,
each (C, P, P)), F.conv2d(images, weight, bias, stride=P).flatten(2).transpose(1, 2) for the embedding, in float64.
Images are not square (Hp != Wp) and have C >= 2 channels and P >= 2, so that each known slip differs: the patch
flattened (P, P, C), the grid in column-major order, a reshape with no permute, the cls token appended last, the
position embedding added to the patches only, the mean pooled over the cls token too. Each is written out here.

Kata variants: `variant("pooling")` is how `pool` summarises the image: the cls token's output, or the mean of the
patch tokens (the cls token left out).
"""

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, fail, matches, variant

# -- judge side ------------------------------------------------------------------------------------


def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def mean_pooling() -> bool:
    return variant("pooling")["name"] == "mean"


def draw(rng, b=2, c=3, hp=2, wp=3, p=2, e=5):
    def randn(*shape):
        return torch.randn(*shape, generator=rng, dtype=torch.float64)
    return randn(b, c, hp * p, wp * p), randn(e, c, p, p), randn(e), randn(1, 1, e), randn(1, 1 + hp * wp, e)


def patches(images, p, slip=None):
    """The patches [B, N, C*P*P], right (F.unfold) or with one slip: "hwc" (each patch (P, P, C)), "columns"
    (the grid column-major), "reshape" (a reshape with no permute)."""
    b, c, h, w = images.shape
    if slip == "reshape":
        return images.reshape(b, (h // p) * (w // p), c * p * p)
    x = images.reshape(b, c, h // p, p, w // p, p)
    order = {"hwc": (0, 2, 4, 3, 5, 1), "columns": (0, 4, 2, 1, 3, 5)}.get(slip)
    if order is None:
        return F.unfold(images, p, stride=p).transpose(1, 2)
    return x.permute(*order).reshape(b, (h // p) * (w // p), c * p * p)


def patch_slips(images, p) -> list:
    return [
        (patches(images, p, "hwc"), Text(
            "it matches each patch flattened as (P, P, C), channels last: the statement's order is (C, P, P), the "
            "layout of a Conv2d weight [E, C, P, P], so that patch_embed is one matmul with weight.reshape(E, -1).",
            "它与把每个 patch 按 (P, P, C)（通道在最后）展平的结果一致：题目的顺序是 (C, P, P)，即 Conv2d 权重 "
            "[E, C, P, P] 的布局，这样 patch_embed 就是与 weight.reshape(E, -1) 的一次矩阵乘法。"), "channels-last"),
        (patches(images, p, "columns"), Text(
            "it matches the patches in column-major order (top to bottom, then left to right): row-major puts the "
            "patch at row i, column j at i * (W / P) + j, the row index first.",
            "它与按列优先顺序（先从上到下，再从左到右）排列的 patch 一致：按行优先时，第 i 行第 j 列的 patch 在 "
            "i * (W / P) + j，行下标在前。"), "column-major"),
        (patches(images, p, "reshape"), Text(
            "it matches a reshape of the image with no permute: that cuts the memory into runs of C * P * P numbers, "
            "which mixes rows and channels. Reshape to [B, C, H/P, P, W/P, P], permute to [B, H/P, W/P, C, P, P], "
            "then flatten.",
            "它与不做 permute、直接 reshape 图像的结果一致：那样只是把内存切成一段段 C * P * P 个数，会把行和通道混在"
            "一起。请先 reshape 成 [B, C, H/P, P, W/P, P]，再 permute 成 [B, H/P, W/P, C, P, P]，然后展平。"),
         "reshape-without-permute"),
    ]


def embed(images, weight, bias, p):
    return F.conv2d(images, weight, bias, stride=p).flatten(2).transpose(1, 2)


def first_wrong(got, want, rtol, atol) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol, equal_nan=True)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_named(got, want, what, slips, rtol=1e-6, atol=1e-8):
    if matches(got, want, rtol=rtol, atol=atol):
        return
    for wrong, why, key in slips:
        if wrong.shape == want.shape and not matches(wrong, want, rtol=rtol, atol=atol) and matches(
                got, wrong, rtol=rtol, atol=atol):
            fail(Text("{what}{at} should be {want:.5g}, got {got:.5g}: {why}", "{what}{at} 应为 {want:.5g}，实际为 "
                      "{got:.5g}：{why}", what=what, why=why, **first_wrong(got, want, rtol, atol)), key=key)
    expect_close(got, want, what, rtol=rtol, atol=atol)


# -- the checks -------------------------------------------------------------------------------------

@check("the four functions return the statement's shapes", points=1, zh="四个函数返回题目规定的形状")
def test_shapes(submission, rng):
    images, weight, bias, cls, pos = draw(rng)
    expect_tensor(submission.patchify(images, 2), "patchify(images[2, 3, 4, 6], 2)", shape=[2, 6, 12], floating=True)
    expect_tensor(submission.patch_embed(images, weight, bias, 2), "patch_embed(images[2, 3, 4, 6], weight[5, 3, 2, 2], "
                  "bias, 2)", shape=[2, 6, 5], floating=True)
    tokens = expect_tensor(submission.vit_input(images, weight, bias, cls, pos, 2), "vit_input(images[2, 3, 4, 6], ...)",
                           shape=[2, 7, 5], floating=True)
    expect_tensor(submission.pool(tokens), "pool(tokens[2, 7, 5])", shape=[2, 5], floating=True)


@check("patchify gives the patches in row-major order, each flattened (C, P, P), as F.unfold", points=2,
       zh="patchify 按行优先顺序给出各个 patch，每个按 (C, P, P) 展平，与 F.unfold 相同", depends="shapes")
def test_patchify(submission, rng):
    hp = randint(rng, 2, 3)
    for c, hp_, wp, p in ((3, hp, hp + 1, 2), (2, 3, 2, 3), (1, 1, 1, 4)):
        images = draw(rng, c=c, hp=hp_, wp=wp, p=p)[0]
        what = f"patchify(images{list(images.shape)}, {p})"
        got = expect_tensor(submission.patchify(images, p), what, shape=[2, hp_ * wp, c * p * p], floating=True)
        expect_named(got, patches(images, p), what, patch_slips(images, p))


@check("patch_embed matches a Conv2d with kernel_size = stride = P", points=2,
       zh="patch_embed 与 kernel_size = stride = P 的 Conv2d 一致", depends="patchify")
def test_embed(submission, rng):
    images, weight, bias, _, _ = draw(rng, c=3, hp=2, wp=3, p=2, e=randint(rng, 4, 6))
    what = f"patch_embed(images{list(images.shape)}, weight{list(weight.shape)}, bias, 2)"
    got = expect_tensor(submission.patch_embed(images, weight, bias, 2), what, shape=[2, 6, weight.shape[0]],
                        floating=True)
    flat = weight.reshape(weight.shape[0], -1)
    hwc = weight.permute(0, 2, 3, 1).reshape(weight.shape[0], -1)
    slips = [(patches(images, 2) @ flat.T, Text("it matches the projection without the bias: add bias [E] to every "
                                                  "token.", "它与没有偏置的投影一致：每个词元都要加上 bias [E]。"),
              "no-bias"),
             (patches(images, 2) @ hwc.T + bias, Text(
                 "it matches the weight flattened (P, P, C) while the patches are (C, P, P): flatten both in the same "
                 "order, weight.reshape(E, -1) for the (C, P, P) patches.",
                 "它与把权重按 (P, P, C) 展平、而 patch 按 (C, P, P) 展平的结果一致：两者要按同一顺序展平，对 "
                 "(C, P, P) 的 patch 用 weight.reshape(E, -1)。"), "weight-order")]
    expect_named(got, embed(images, weight, bias, 2), what, slips)


@check("vit_input puts the cls token first and adds the position embeddings to every token", points=2,
       zh="vit_input 把 cls 词元放在最前面，并给每个词元加上位置嵌入", depends="embed")
def test_tokens(submission, rng):
    images, weight, bias, cls, pos = draw(rng, b=3)
    what = "vit_input(images[3, 3, 4, 6], weight, bias, cls_token, pos_embed, 2)"
    got = expect_tensor(submission.vit_input(images, weight, bias, cls, pos, 2), what, shape=[3, 7, 5], floating=True)
    tokens = embed(images, weight, bias, 2)
    first = torch.cat([cls.expand(3, -1, -1), tokens], 1)
    slips = [(torch.cat([tokens, cls.expand(3, -1, -1)], 1) + pos, Text(
        "it matches the cls token appended after the patches: it goes first, token 0, where pooling reads it.",
        "它与把 cls 词元放在 patch 之后的结果一致：它应该在最前面，作为第 0 个词元，池化时从那里读取。"), "cls-last"),
             (first, Text("it matches the tokens without the position embeddings: add pos_embed [1, 1 + N, E].",
                          "它与没有位置嵌入的词元一致：请加上 pos_embed [1, 1 + N, E]。"), "no-pos-embed"),
             (torch.cat([cls.expand(3, -1, -1), tokens + pos[:, 1:]], 1), Text(
                 "it matches the position embeddings added to the patch tokens only: pos_embed has 1 + N rows, and "
                 "row 0 belongs to the cls token.",
                 "它与只给 patch 词元加位置嵌入的结果一致：pos_embed 有 1 + N 行，第 0 行属于 cls 词元。"), "pos-skips-cls")]
    expect_named(got, first + pos, what, slips)


@check("pool summarises the output tokens as the statement says", points=1, zh="pool 按题目的方式汇总输出词元",
       depends="shapes")
def test_pool(submission, rng):
    tokens = torch.randn(2, randint(rng, 4, 7), 5, generator=rng, dtype=torch.float64)
    tokens[:, 0] += 3  # the cls token stands apart from the others
    what = f"pool(tokens{list(tokens.shape)})"
    got = expect_tensor(submission.pool(tokens), what, shape=[2, 5], floating=True)
    want = tokens[:, 1:].mean(1) if mean_pooling() else tokens[:, 0]
    slips = [(tokens.mean(1), Text("it matches the mean of every token, the cls token included: the mean here is "
                                   "over the patch tokens only, tokens[:, 1:].",
                                   "它与对所有词元（包括 cls 词元）取平均的结果一致：这里只对 patch 词元取平均，"
                                   "即 tokens[:, 1:]。"), "mean-with-cls"),
             (tokens[:, -1], Text("it matches the last token: the cls token is the first, tokens[:, 0].",
                                  "它与最后一个词元一致：cls 词元是第一个，tokens[:, 0]。"), "cls-last"),
             (tokens[:, 0] if mean_pooling() else tokens[:, 1:].mean(1), Text(
                 "it matches the other pooling: the statement asks {want}.", "它与另一种池化一致：题目要求{want}。",
                 want=Text("the mean of the patch tokens", "patch 词元的平均值") if mean_pooling() else Text(
                     "the cls token's output", "cls 词元的输出")), "other-pooling")]
    expect_named(got, want, what, slips)
