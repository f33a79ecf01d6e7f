"""fs25 - Box IoU and greedy non-maximum suppression, without torchvision.

A detector proposes many overlapping boxes for one object. IoU (intersection over union) measures how much two boxes
overlap; greedy NMS keeps the best-scoring box, drops every box that overlaps a kept one too much, and repeats. Boxes
are rows of 4 numbers: (x1, y1, x2, y2): the top-left and the bottom-right corners, x1 < x2 and y1 < y2.

Run `grade fs25` to check your work.
"""

import torch


def box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    """The IoU of every pair, [N, M] float, for boxes1 [N, 4] and boxes2 [M, 4] (boxes of positive area).

    Boxes that do not overlap have IoU 0.
    """
    # TODO: the intersection box of every pair (its width and height at least 0), then inter / union.
    raise NotImplementedError


def nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """Greedy NMS, as torchvision.ops.nms: the indices (int64) of the kept boxes, by decreasing score.

    boxes: [N, 4]; scores: [N] (N may be 0). Visit the boxes by decreasing score (equal scores: the lower index
    first); keep a box unless a kept box overlaps it with IoU > iou_threshold.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.1, 0.1, 2.1, 2.1], [3.0, 3.0, 4.0, 4.0]])
    print(box_iou(boxes, boxes))
    print(nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5))
