"""Reference solution of fs25 (box IoU by broadcasting, and greedy NMS, without torchvision)."""

import torch


def corners(boxes):
    # corners already: (x1, y1, x2, y2)
    return boxes


def box_iou(boxes1, boxes2):
    b1, b2 = corners(boxes1), corners(boxes2)
    area1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
    area2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
    lt = torch.max(b1[:, None, :2], b2[None, :, :2])  # [N, M, 2]: the intersection's top-left corner
    rb = torch.min(b1[:, None, 2:], b2[None, :, 2:])  # its bottom-right corner
    wh = (rb - lt).clamp(min=0)  # no overlap: a negative side counts as 0 (two negatives would multiply to > 0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area1[:, None] + area2[None, :] - inter)


def nms(boxes, scores, iou_threshold):
    iou = box_iou(boxes, boxes)
    order = torch.argsort(scores, descending=True, stable=True)  # equal scores: the lower index first
    keep = []
    for i in order.tolist():
        # only kept boxes suppress: a box suppressed earlier suppresses nothing
        if all(iou[i, j] <= iou_threshold for j in keep):
            keep.append(i)
    return torch.tensor(keep, dtype=torch.int64)
