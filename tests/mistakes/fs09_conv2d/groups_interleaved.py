# Mistake: splits the input channels into groups with a stride (x[:, g::groups]) instead of contiguous blocks.
# Expect: groups are interleaved
import torch
import torch.nn.functional as F


def pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    stride, padding, dilation = pair(stride), pair(padding), pair(dilation)
    n, _, h, w = x.shape
    out_channels, _, kh, kw = weight.shape
    h_out = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    w_out = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    per_group = out_channels // groups
    outs = []
    for g in range(groups):
        xg = x[:, g::groups]
        cols = F.unfold(xg, (kh, kw), dilation=dilation, padding=padding, stride=stride)
        kernels = weight[g * per_group:(g + 1) * per_group].reshape(per_group, -1)
        outs.append((kernels @ cols).reshape(n, per_group, h_out, w_out))
    out = torch.cat(outs, dim=1)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out
