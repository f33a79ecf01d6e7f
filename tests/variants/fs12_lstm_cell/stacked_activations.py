# Correct: addmm for the gates, one sigmoid over the three gates, an unbatched input as a view.
import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        k = hidden_size ** -0.5
        self.weight_ih = nn.Parameter(torch.rand(4 * hidden_size, input_size) * 2 * k - k)
        self.weight_hh = nn.Parameter(torch.rand(4 * hidden_size, hidden_size) * 2 * k - k)
        self.bias_ih = nn.Parameter(torch.rand(4 * hidden_size) * 2 * k - k)
        self.bias_hh = nn.Parameter(torch.rand(4 * hidden_size) * 2 * k - k)

    def forward(self, x, state=None):
        xb = x.reshape(-1, x.shape[-1])
        hidden = self.weight_hh.shape[1]
        h, c = (xb.new_zeros(xb.shape[0], hidden),) * 2 if state is None else (s.reshape(-1, hidden) for s in state)
        gates = torch.addmm(self.bias_ih + self.bias_hh, xb, self.weight_ih.t()) + h @ self.weight_hh.t()
        if_, g = gates[:, :2 * hidden].sigmoid(), gates[:, 2 * hidden:3 * hidden].tanh()
        o = gates[:, 3 * hidden:].sigmoid()
        c = if_[:, hidden:] * c + if_[:, :hidden] * g
        h = o * c.tanh()
        shape = (*x.shape[:-1], hidden)
        return h.reshape(shape), c.reshape(shape)


def lstm(cell, xs, state=None):
    outs = []
    for x in xs.transpose(0, 0):
        state = cell(x, state)
        outs.append(state[0])
    return torch.stack(outs).transpose(0, 0), state
