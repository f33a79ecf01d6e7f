# Mistake: the loop steps along the time axis, but the outputs are stacked along the other one: not a loop over the
# wrong axis.
# Expect: stacked along the wrong axis
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        bound = 1 / math.sqrt(hidden_size)  # nn.LSTMCell's init: every parameter from U(-1/sqrt(H), 1/sqrt(H))
        self.weight_ih = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-bound, bound))
        self.weight_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-bound, bound))
        self.bias_ih = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-bound, bound))
        self.bias_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor, state=None):
        batched = x.dim() == 2
        if not batched:
            x = x.unsqueeze(0)  # one unbatched sample: computed as a batch of 1, returned unbatched
        if state is None:
            h = c = x.new_zeros(x.shape[0], self.hidden_size)
        else:
            h, c = (s if batched else s.unsqueeze(0) for s in state)
        gates = x @ self.weight_ih.t() + self.bias_ih + h @ self.weight_hh.t() + self.bias_hh
        i, f, g, o = gates.chunk(4, dim=1)  # PyTorch stacks the four gates in this order
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)  # the new cell state, squashed, through the output gate
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


def lstm(cell: LSTMCell, xs: torch.Tensor, state=None):
    outputs = []
    for x in xs.unbind(0):  # one step per time step, the state carried from each to the next
        state = cell(x, state)
        outputs.append(state[0])
    return torch.stack(outputs, 1), state
