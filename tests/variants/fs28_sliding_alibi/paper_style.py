"""A correct variant: the paper's recursive get_slopes, a symmetric -slope * |i - j| bias, the band from tril and triu."""

import math

import torch


def alibi_slopes(num_heads):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]

    if math.log2(num_heads).is_integer():
        return torch.tensor(get_slopes_power_of_2(num_heads))
    closest = 2 ** math.floor(math.log2(num_heads))
    rest = alibi_slopes(2 * closest).tolist()[0::2][:num_heads - closest]
    return torch.tensor(get_slopes_power_of_2(closest) + rest)


def alibi_bias(slopes, t):
    i = torch.arange(t, device=slopes.device).view(t, 1)
    j = torch.arange(t, device=slopes.device).view(1, t)
    return -slopes.view(-1, 1, 1) * (i - j).abs()


def sliding_window_attention(q, k, v, window, slopes=None):
    t = q.shape[2]
    ones = torch.ones(t, t, dtype=torch.bool, device=q.device)
    allowed = ones.tril() & ones.triu(-(window - 1))
    scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(q.shape[-1]))
    if slopes is not None:
        scores = scores + alibi_bias(slopes.to(q.dtype), t)
    scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
    return scores.softmax(dim=-1).matmul(v)
