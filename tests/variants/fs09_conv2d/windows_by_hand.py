# Correct: pads with F.pad, then a loop over the kernel offsets (no unfold at all).
import torch
import torch.nn.functional as F


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    out_channels, per_in, kh, kw = weight.shape
    x = F.pad(x, (pw, pw, ph, ph))
    h_out = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    w_out = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    per_out = out_channels // groups
    out = x.new_zeros(x.shape[0], out_channels, h_out, w_out)
    for g in range(groups):
        xg = x[:, g * per_in:(g + 1) * per_in]
        wg = weight[g * per_out:(g + 1) * per_out]
        for i in range(kh):
            for j in range(kw):
                window = xg[:, :, i * dh:i * dh + sh * (h_out - 1) + 1:sh, j * dw:j * dw + sw * (w_out - 1) + 1:sw]
                out[:, g * per_out:(g + 1) * per_out] += torch.einsum("nchw,oc->nohw", window, wg[:, :, i, j])
    if bias is not None:
        out = out + bias.view(1, -1, 1, 1)
    return out
