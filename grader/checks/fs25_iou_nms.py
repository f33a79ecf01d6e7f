"""Hidden checks of fs25: box IoU and greedy non-maximum suppression, without torchvision.

The judge draws boxes as corners, computes the references here on that draw (IoU in float64 by broadcasting; greedy
NMS as a plain loop over the boxes by decreasing score, ties to the lower index, a box kept unless a kept box
overlaps it with IoU > iou_threshold), and hands the learner the same boxes in this draw's format. The inputs are
built so that the wrong criterion and the right disagree on every seed: clusters of overlapping boxes whose
best-scoring box is not their lowest index and is not row 0; disjoint pairs apart in both directions (two negative
sides multiply to a positive "intersection"); a chain A-B-C where B overlaps both and A and C barely touch (a
suppressed box that still suppresses drops C); a pair whose IoU is exactly the threshold; scores increasing with the
index (the kept indices must come by decreasing score); twenty equal scores (a stable sort); no box and one
box; with a GPU pretended, nothing goes to it. Known mistakes are named when the
learner's value is what they compute: no clamp, the union without the intersection subtracted, +1 pixel sizes,
intersection over the smaller area, the other box format; positions in the sorted order, the boxes visited in index
order, suppressed boxes suppressing, >= for >, the kept indices in index order.

Kata variants: `variant("format")` is the box format, "xyxy" corners or "cxcywh" centre and size.
"""

import torch

from grader.checking import Text, check, expect_close, expect_tensor, fail, variant, verbatim
from grader.devices import expect_cpu_only

# -- judge-side helpers -------------------------------------------------------------------------


def box_format() -> str:
    return variant("format")["name"]


def to_input(xyxy, how=None):
    """Corner boxes in the format this draw hands the learner."""
    if (how or box_format()) == "xyxy":
        return xyxy.clone()
    return torch.cat([(xyxy[:, :2] + xyxy[:, 2:]) / 2, xyxy[:, 2:] - xyxy[:, :2]], dim=1)


def from_input(boxes, how=None):
    """Boxes in `how`'s format (the draw's by default) read as corners."""
    if (how or box_format()) == "xyxy":
        return boxes.double()
    b = boxes.double()
    return torch.cat([b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2], dim=1)


def iou_terms(b1, b2, clamp=True, plus=0.0):
    """Per pair, in float64 from corner boxes: the intersection and both areas."""
    area1 = (b1[:, 2] - b1[:, 0] + plus) * (b1[:, 3] - b1[:, 1] + plus)
    area2 = (b2[:, 2] - b2[:, 0] + plus) * (b2[:, 3] - b2[:, 1] + plus)
    wh = torch.min(b1[:, None, 2:], b2[None, :, 2:]) - torch.max(b1[:, None, :2], b2[None, :, :2]) + plus
    if clamp:
        wh = wh.clamp(min=0)
    return wh[..., 0] * wh[..., 1], area1[:, None], area2[None, :]


def iou_reference(b1, b2):
    inter, a1, a2 = iou_terms(b1, b2)
    return inter / (a1 + a2 - inter)


def nms_reference(boxes, scores, threshold, suppressed_suppress=False, visit=None, strict=True):
    """Greedy NMS over corner boxes: kept indices by decreasing score (ties: lower index first)."""
    iou = iou_reference(boxes, boxes) if len(boxes) else torch.zeros(0, 0)
    order = visit if visit is not None else sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    keep, seen = [], []
    for i in order:
        against = seen if suppressed_suppress else keep
        if all((iou[i, j] <= threshold) if strict else (iou[i, j] < threshold) for j in against):
            keep.append(i)
        seen.append(i)
    return keep


def iou_candidates(x1, x2) -> list:
    """(value, key, English, Chinese) for each known mistake of box_iou, computed here in float64."""
    b1, b2 = from_input(x1), from_input(x2)
    other = "cxcywh" if box_format() == "xyxy" else "xyxy"
    inter, a1, a2 = iou_terms(b1, b2, clamp=False)
    found = [(inter / (a1 + a2 - inter), "no-clamp",
              "the intersection's width and height were not clamped at 0: for boxes apart in both directions two "
              "negative sides multiply to a positive intersection. Use (rb - lt).clamp(min=0).",
              "交集的宽和高没有截断到 0：两个框在两个方向上都分开时，两条负的边相乘得到正的交集。请用 (rb - lt).clamp(min=0)。")]
    inter, a1, a2 = iou_terms(b1, b2)
    found += [(inter / (a1 + a2), "union-not-subtracted",
               "the union is area1 + area2 - intersection; the intersection was counted twice.",
               "并集是 面积1 + 面积2 - 交集；交集被算了两次。"),
              (inter / torch.min(a1, a2), "over-min-area",
               "that is the intersection over the smaller area; IoU divides by the union.",
               "这是交集除以较小的面积；IoU 要除以并集。")]
    inter, a1, a2 = iou_terms(b1, b2, plus=1.0)
    found.append((inter / (a1 + a2 - inter), "plus-one",
                  "the sizes took +1 (the old pixel convention); boxes here are continuous: x2 - x1.",
                  "尺寸加了 1（旧的像素约定）；这里的框是连续坐标：x2 - x1。"))
    o1, o2 = from_input(x1, other), from_input(x2, other)
    found.append((iou_reference(o1, o2), "other-format",
                  "the boxes were read as {other_rule}; they are {rule}.", "框被当成了 {other_rule}；它们是 {rule}。"))
    return found


def expect_iou(submission, xyxy1, xyxy2) -> None:
    x1, x2 = to_input(xyxy1), to_input(xyxy2)
    what = f"box_iou(boxes1{list(x1.shape)}, boxes2{list(x2.shape)})"
    got = expect_tensor(submission.box_iou(x1, x2), what, shape=[len(x1), len(x2)], floating=True)
    want = iou_reference(xyxy1.double(), xyxy2.double())
    if torch.allclose(got.double(), want, rtol=1e-4, atol=1e-6):
        return
    for value, key, en, zh in iou_candidates(x1, x2):
        if torch.allclose(got.double(), value, rtol=1e-4, atol=1e-6, equal_nan=True):
            fail("{what} is wrong: " + en, "{what} 不对：" + zh, what=what, rule=rule(), other_rule=rule(other=True),
                 key=key)
    expect_close(got, want, what)


def rule(other=False):
    name = box_format()
    if other:
        name = "cxcywh" if name == "xyxy" else "xyxy"
    return {"xyxy": ("corners (x1, y1, x2, y2)", "角点 (x1, y1, x2, y2)"),
            "cxcywh": ("centre and size (cx, cy, w, h)", "中心和大小 (cx, cy, w, h)")}[name]


def random_boxes(rng, n):
    lt = 4 * torch.rand(n, 2, generator=rng)
    return torch.cat([lt, lt + 0.5 + 2.5 * torch.rand(n, 2, generator=rng)], dim=1)


def clusters(rng):
    """Three far-apart clusters of three jittered boxes (IoU within a cluster above 0.6), shuffled, with distinct
    scores such that the best box overall is not row 0 and some cluster's best box is not its lowest index."""
    for _ in range(100):
        centres = torch.tensor([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]]) + torch.rand(3, 2, generator=rng)
        sizes = 1 + torch.rand(3, 2, generator=rng)
        rows = []
        for c, s in zip(centres, sizes):
            for _ in range(3):
                jitter = 0.05 * torch.randn(4, generator=rng)
                rows.append(torch.cat([c - s / 2, c + s / 2]) + jitter)
        boxes = torch.stack(rows)
        perm = torch.randperm(9, generator=rng)
        boxes, cluster = boxes[perm], (perm // 3)
        scores = torch.rand(9, generator=rng)
        best_first = any(int(scores[cluster == k].argmax()) != 0 for k in range(3))  # index order differs
        bests = [int(torch.nonzero(cluster == k)[scores[cluster == k].argmax()]) for k in range(3)]
        keep = sorted(bests, key=lambda i: -float(scores[i]))  # not in index order, nor the positions 0, 1, 2
        if int(scores.argmax()) != 0 and best_first and keep != sorted(keep) and sorted(keep) != [0, 1, 2]:
            return boxes, scores
    return boxes, scores


def chain(rng):
    """A, B, C along x (height 1): IoU(A, B) = IoU(B, C) = 3/7 > 0.25 >= IoU(A, C) = 1/9, far from the threshold
    (also for a union counted twice: 0.3 and 0.1); scores A > B > C; shuffled, shifted."""
    base = torch.tensor([[0.0, 0.0, 2.0, 1.0], [0.8, 0.0, 2.8, 1.0], [1.6, 0.0, 3.6, 1.0]])
    base = base + torch.cat([5 * torch.rand(2, generator=rng)] * 2)
    perm = torch.randperm(3, generator=rng)
    scores = torch.tensor([0.9, 0.6, 0.3])
    return base[perm], scores[perm]


def nms_call(submission, xyxy, scores, threshold):
    x = to_input(xyxy)
    what = f"nms(boxes{list(x.shape)}, scores{list(scores.shape)}, iou_threshold={threshold:g})"
    got = expect_tensor(submission.nms(x, scores, threshold), what, dtype=torch.int64)
    return what, got


def expect_nms(submission, xyxy, scores, threshold) -> None:
    what, got = nms_call(submission, xyxy, scores, threshold)
    want = nms_reference(xyxy.double(), scores, threshold)
    kept = got.reshape(-1).tolist()
    if got.dim() == 1 and kept == want:
        return
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    other = "cxcywh" if box_format() == "xyxy" else "xyxy"
    known = [
        (sorted(want), "kept-in-index-order",
         "the kept indices came in index order; return them by decreasing score, as torchvision.ops.nms.",
         "保留的下标按下标顺序排列了；应按分数从高到低返回，与 torchvision.ops.nms 一致。"),
        ([order.index(i) for i in want], "sorted-positions",
         "those are positions in the score-sorted order; return the boxes' own indices (order[position]).",
         "这些是按分数排序后的位置；应返回框在原始 boxes 中的下标（order[位置]）。"),
        (nms_reference(xyxy.double(), scores, threshold, visit=list(range(len(scores)))), "index-order",
         "the boxes were visited in index order; greedy NMS visits them by decreasing score.",
         "按下标顺序访问了各个框；贪心 NMS 按分数从高到低访问。"),
        (nms_reference(xyxy.double(), scores, threshold, suppressed_suppress=True), "suppressed-suppress",
         "a box that was already suppressed still suppressed others; only kept boxes suppress.",
         "已经被抑制的框仍然抑制了别的框；只有保留下来的框才会抑制别的框。"),
        (nms_reference(xyxy.double(), scores, threshold, visit=torch.argsort(scores, descending=True).tolist()),
         "ties-unstable",
         "boxes of equal score came in another order than their indices; sort stably (equal scores: the lower index "
         "first), torch.argsort(scores, descending=True, stable=True).",
         "分数相同的框没有按下标顺序排列；请用稳定排序（分数相同时下标小的在前）："
         "torch.argsort(scores, descending=True, stable=True)。"),
        (nms_reference(xyxy.double(), scores, threshold, strict=False), "ge-threshold",
         "a box whose IoU with a kept box equals iou_threshold was suppressed; only IoU > iou_threshold suppresses.",
         "与保留框的 IoU 恰好等于 iou_threshold 的框被抑制了；只有 IoU > iou_threshold 才抑制。"),
        (nms_reference(from_input(to_input(xyxy), other), scores, threshold), "other-format",
         "the boxes were read as {other_rule}; they are {rule}.", "框被当成了 {other_rule}；它们是 {rule}。"),
    ]
    for wrong, key, en, zh in known:
        if kept == wrong and wrong != want:
            fail("{what} is {got}, expected {want}: " + en, "{what} 为 {got}，应为 {want}：" + zh, what=what,
                 got=verbatim(str(kept)), want=verbatim(str(want)), rule=rule(), other_rule=rule(other=True), key=key)
    fail("{what} is {got}, expected {want} (the indices of the kept boxes, by decreasing score).",
         "{what} 为 {got}，应为 {want}（保留框的下标，按分数从高到低）。", what=what, got=verbatim(str(kept)),
         want=verbatim(str(want)), key="wrong-values")


# -- the checks ---------------------------------------------------------------------------------

@check("box_iou gives [N, M] floats, 1 for a box with itself; nms gives int64 indices of the boxes", points=1,
       zh="box_iou 给出 [N, M] 的浮点数，框与自身的 IoU 为 1；nms 给出框的 int64 下标")
def test_shapes(submission, rng):
    n, m = int(torch.randint(2, 6, (), generator=rng)), int(torch.randint(1, 5, (), generator=rng))
    a = random_boxes(rng, n)
    x1, x2 = to_input(a), to_input(torch.cat([a[:1], random_boxes(rng, m - 1)]))
    what = f"box_iou(boxes1{list(x1.shape)}, boxes2{list(x2.shape)})"
    got = expect_tensor(submission.box_iou(x1, x2), what, shape=[n, m], floating=True)
    expect_close(got[0, 0], torch.tensor(1.0), Text("{what}[0, 0] (a box with itself)", "{what}[0, 0]（框与自身）",
                                                    what=verbatim(what)))
    what = f"nms(boxes{list(x1.shape)}, scores[{n}], 0.5)"
    kept = expect_tensor(submission.nms(x1, torch.rand(n, generator=rng), 0.5), what, dtype=torch.int64)
    if kept.dim() != 1 or not 1 <= len(kept) <= n or not all(0 <= int(i) < n for i in kept):
        fail("{what} is {got}: it should be a 1-D tensor of between 1 and {n} indices into boxes.",
             "{what} 为 {got}：应为一维 tensor，含有 1 到 {n} 个 boxes 的下标。", what=what,
             got=verbatim(str(kept.tolist())), n=n, key="wrong-shape")
    # with a GPU present (pretended), the kept indices stay where the boxes are
    expect_cpu_only(submission, [("box_iou", [x1, x2]), ("nms", [x1, torch.rand(n, generator=rng), 0.5])])


@check("box_iou matches the IoU of every pair (one box too)", points=2, zh="box_iou 与每一对框的 IoU 一致（只有一个框时也是）",
       depends="shapes")
def test_iou(submission, rng):
    n, m = int(torch.randint(3, 7, (), generator=rng)), int(torch.randint(2, 6, (), generator=rng))
    a, b = random_boxes(rng, n), random_boxes(rng, m)
    b[0] = a[0] + 0.3 * torch.rand(4, generator=rng)  # one pair that overlaps for sure
    expect_iou(submission, a, b)
    expect_iou(submission, random_boxes(rng, 1), b)


@check("box_iou is exactly 0 for boxes apart, in one direction or in both", points=1,
       zh="框分开时（一个方向或两个方向），box_iou 正好为 0", depends="iou")
def test_iou_disjoint(submission, rng):
    a = random_boxes(rng, 1)
    w = a[0, 2:] - a[0, :2]
    shift = torch.stack([torch.cat([w + 1, w + 1]), torch.tensor([float(w[0]) + 1, 0.0] * 2)])
    b = a + shift * (1 + torch.rand(2, 1, generator=rng))  # apart diagonally, and apart along x only
    expect_iou(submission, a, b)


@check("nms keeps the best box of each cluster, by decreasing score, as their original indices", points=2,
       zh="nms 保留每一簇中最好的框，按分数从高到低，返回原始下标", depends="iou")
def test_nms(submission, rng):
    boxes, scores = clusters(rng)
    expect_nms(submission, boxes, scores, round(float(torch.empty(()).uniform_(0.5, 0.6, generator=rng)), 3))


@check("a box that nms suppressed suppresses nothing", points=2, zh="被 nms 抑制的框不会再抑制别的框", depends="nms")
def test_nms_chain(submission, rng):
    boxes, scores = chain(rng)
    expect_nms(submission, boxes, scores, 0.25)


@check("IoU equal to iou_threshold does not suppress", points=1, zh="IoU 恰好等于 iou_threshold 时不抑制",
       depends="nms")
def test_nms_threshold(submission, rng):
    shift = torch.randint(0, 5, (2,), generator=rng).float()
    boxes = torch.tensor([[0.0, 0.0, 3.0, 1.0], [1.0, 0.0, 4.0, 1.0]]) + torch.cat([shift, shift])  # IoU = 2 / 4
    expect_nms(submission, boxes, torch.tensor([0.9, 0.8]), 0.5)


@check("nms with no box, with one box, and with scores rising along the index", points=1,
       zh="nms 在没有框、只有一个框、分数随下标递增时", depends="nms")
def test_nms_edge(submission, rng):
    what, got = nms_call(submission, torch.zeros(0, 4), torch.zeros(0), 0.5)
    if got.numel() != 0:
        fail("{what} is {got}: with no box nothing is kept, an empty int64 tensor.",
             "{what} 为 {got}：没有框时什么都不保留，应返回空的 int64 tensor。", what=what, got=verbatim(str(got.tolist())),
             key="wrong-values")
    expect_nms(submission, random_boxes(rng, 1), torch.rand(1, generator=rng), 0.5)
    n = int(torch.randint(3, 6, (), generator=rng))
    apart = torch.tensor([[3.0 * i, 0.0, 3.0 * i + 2, 2.0] for i in range(n)])
    expect_nms(submission, apart, torch.linspace(0.1, 0.9, n), 0.5)
    tied = torch.tensor([[3.0 * i, 0.0, 3.0 * i + 2, 2.0] for i in range(20)])  # 20 equal scores: an unstable sort
    expect_nms(submission, tied, torch.full((20,), 0.5), 0.5)  # reorders them
