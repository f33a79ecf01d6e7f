"""ex26 - Freezing for fine-tuning: train the head, keep the backbone as it was.

`model` has a pretrained `model.backbone` (with a BatchNorm layer) and a new `model.head`. Fine-tune the
head only: the backbone's weights and its BatchNorm statistics must come out exactly as they went in.
Run `grade ex26` to check your work.
"""

import torch
from torch import nn


def fine_tune(model: nn.Module, batches: list, lr: float, epochs: int) -> list:
    """Freeze model.backbone, then train model.head with torch.optim.SGD(lr=lr, momentum=0.9) and
    nn.CrossEntropyLoss over `batches` (a list of (x, labels)) for `epochs` epochs, one step per batch.
    Returns the loss of every step, as Python floats. Afterwards the backbone stays frozen."""
    # TODO: requires_grad_(False) on the backbone; an optimizer over the trainable parameters only;
    #       keep the backbone's BatchNorm from updating its running statistics
    raise NotImplementedError


if __name__ == "__main__":
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.ReLU())
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            return self.head(self.backbone(x))

    torch.manual_seed(0)
    model = Net()
    batches = [(torch.randn(8, 5), torch.randint(0, 3, (8,))) for _ in range(4)]
    before = {k: v.clone() for k, v in model.backbone.state_dict().items()}
    losses = fine_tune(model, batches, lr=0.1, epochs=5)
    print("losses:", [round(v, 3) for v in losses[::4]])
    print("backbone unchanged:", all(torch.equal(v, before[k]) for k, v in model.backbone.state_dict().items()))
