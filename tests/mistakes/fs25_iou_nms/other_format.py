# Mistake: reads the boxes in the other format: corners read as centre and size.
# Expect: the boxes were read as
import torch


def corners(boxes):
    return torch.cat([boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2], dim=1)


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
    iou = box_iou(boxes, boxes)
    order = torch.argsort(scores, descending=True, stable=True)
    keep = []
    for i in order.tolist():
        if all(iou[i, j] <= iou_threshold for j in keep):
            keep.append(i)
    return torch.tensor(keep, dtype=torch.int64)
