# Mistake: sorts boxes and scores, runs NMS on the sorted copy and returns positions in it, not the boxes' indices.
# Expect: positions in the score-sorted order
import torch


def corners(boxes):
    return boxes


def box_iou(boxes1, boxes2):
    b1, b2 = corners(boxes1), corners(boxes2)
    area1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
    area2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
    lt = torch.max(b1[:, None, :2], b2[None, :, :2])
    rb = torch.min(b1[:, None, 2:], b2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area1[:, None] + area2[None, :] - inter)


def nms(boxes, scores, iou_threshold):
    order = torch.argsort(scores, descending=True, stable=True)
    iou = box_iou(boxes[order], boxes[order])
    keep = []
    for p in range(len(order)):
        if all(iou[p, q] <= iou_threshold for q in keep):
            keep.append(p)
    return torch.tensor(keep, dtype=torch.int64)
