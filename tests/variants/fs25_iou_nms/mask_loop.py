# A correct answer written differently: the intersection from unbind'ed coordinates, NMS as a mask of the boxes still
# alive, each kept box removing those it overlaps too much.
import torch


def corners(boxes):
    return boxes


def box_iou(boxes1, boxes2):
    x1, y1, x2, y2 = corners(boxes1).unbind(-1)
    u1, v1, u2, v2 = corners(boxes2).unbind(-1)
    iw = (torch.minimum(x2[:, None], u2[None]) - torch.maximum(x1[:, None], u1[None])).clamp_min(0)
    ih = (torch.minimum(y2[:, None], v2[None]) - torch.maximum(y1[:, None], v1[None])).clamp_min(0)
    inter = iw * ih
    union = ((x2 - x1) * (y2 - y1))[:, None] + ((u2 - u1) * (v2 - v1))[None] - inter
    return inter / union


def nms(boxes, scores, iou_threshold):
    n = scores.shape[0]
    alive = torch.ones(n, dtype=torch.bool)
    order = sorted(range(n), key=lambda i: (-float(scores[i]), i))
    iou = box_iou(boxes, boxes)
    keep = []
    for i in order:
        if alive[i]:
            keep.append(i)
            alive &= ~(iou[i] > iou_threshold)
    return torch.as_tensor(keep, dtype=torch.long).reshape(-1)
