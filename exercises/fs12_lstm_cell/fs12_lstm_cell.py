"""fs12 - An LSTM cell from scratch, as nn.LSTMCell lays it out.

An LSTM cell reads an input x and a state (h, c) and returns the next state. Four gates, computed from x and h,
decide what the cell state c forgets (f), what it takes in (i, times the candidate g), and what of it comes out as
the hidden state h (o):

    i, f, o = sigmoid(...), g = tanh(...)    c' = f * c + i * g    h' = o * tanh(c')

Lay the weights out exactly as nn.LSTMCell does, so that its state dict loads into your cell. Do not use
nn.LSTMCell, nn.LSTM or torch.lstm_cell. Run `grade fs12` to check your work.
"""

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        """The parameters of nn.LSTMCell, with its names and shapes: weight_ih [4H, I], weight_hh [4H, H],
        bias_ih [4H], bias_hh [4H] (H = hidden_size, I = input_size), the four gates stacked in the order
        i, f, g, o; each drawn from the uniform U(-1/sqrt(H), 1/sqrt(H))."""
        super().__init__()
        # TODO
        raise NotImplementedError

    def forward(self, x: torch.Tensor, state=None):
        """x: [B, I], or [I] for one unbatched sample. state: (h, c), each [B, H] (or [H]); None means zeros.
        Returns the next (h, c), each [B, H] (or [H] for an unbatched x)."""
        # TODO
        raise NotImplementedError


def lstm(cell: LSTMCell, xs: torch.Tensor, state=None):
    """Run the cell over the sequence xs [T, B, I] (nn.LSTM's default layout), the state carried from step
    to step, starting from state (None: zeros). Returns (outputs, (h, c)): the h of every step, [T, B, H],
    and the state after the last step."""
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    cell = LSTMCell(3, 4)
    h, c = cell(torch.randn(2, 3))
    print(h.shape, c.shape, sorted(name for name, _ in cell.named_parameters()))
