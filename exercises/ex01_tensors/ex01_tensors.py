"""ex01 - Tensors: creation, dtypes, copies and shared memory.

Four small functions about what a tensor *is*: which dtype a list becomes, which tensors can
require gradients, and when two objects share the same memory (so that writing to one changes
the other). Run `grade ex01` to check your work; `grade hint ex01` if you are stuck.
"""

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    """Return a 1-D float32 tensor holding `values` that requires grad (a leaf, ready for an optimizer).

    `values` is a Python list of numbers; it may hold ints only, e.g. [3, -1, 4].
    """
    # TODO: which dtype does torch.tensor give a list of ints? Which dtypes can require grad?
    raise NotImplementedError


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    """Return a tensor with the values, shape and dtype of `arr` that does NOT share its memory.

    Writing into `arr` after the call must leave the returned tensor unchanged.
    """
    # TODO
    raise NotImplementedError


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    """Return a tensor with the values, shape and dtype of `arr` that SHARES its memory (no copy).

    Writing into `arr` after the call must show up in the returned tensor.
    """
    # TODO
    raise NotImplementedError


def snapshot(t: torch.Tensor) -> torch.Tensor:
    """Return an independent copy of `t`: same values, shape and dtype, its own memory.

    In-place changes to `t` after the call (t.add_(1), t[0] = 5) must not change the snapshot.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    print(make_weights([3, -1, 4]))
    a = np.array([1.0, 2.0, 3.0])
    copied, shared = copy_from_numpy(a), share_from_numpy(a)
    a[0] = 100.0
    print("copy:", copied, "shared:", shared)
    t = torch.ones(3)
    s = snapshot(t)
    t.add_(1)
    print("t:", t, "snapshot:", s)
