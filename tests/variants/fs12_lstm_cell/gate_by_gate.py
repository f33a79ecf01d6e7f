# Correct: each gate from its own slice of the weights with F.linear; a loop by index.
import math

import torch
import torch.nn.functional as F
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.weight_ih = nn.Parameter(torch.empty(4 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.empty(4 * hidden_size))
        self.bias_hh = nn.Parameter(torch.empty(4 * hidden_size))
        for p in self.parameters():
            nn.init.uniform_(p, -1 / math.sqrt(hidden_size), 1 / math.sqrt(hidden_size))

    def gate(self, k, x, h):
        rows = slice(k * self.hidden_size, (k + 1) * self.hidden_size)
        from_x = F.linear(x, self.weight_ih[rows], self.bias_ih[rows])
        return from_x + F.linear(h, self.weight_hh[rows], self.bias_hh[rows])

    def forward(self, x, state=None):
        if state is None:
            state = (torch.zeros(*x.shape[:-1], self.hidden_size, dtype=x.dtype),) * 2
        h, c = state
        i, f = torch.sigmoid(self.gate(0, x, h)), torch.sigmoid(self.gate(1, x, h))
        g, o = torch.tanh(self.gate(2, x, h)), torch.sigmoid(self.gate(3, x, h))
        c = f * c + i * g
        return o * torch.tanh(c), c


def lstm(cell, xs, state=None):
    steps = []
    for t in range(xs.shape[0]):
        state = cell(xs.select(0, t), state)
        steps.append(state[0])
    return torch.stack(steps, dim=0), state
