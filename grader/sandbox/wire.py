"""Plain data between the judge and the sandbox: JSON plus raw tensor bytes, never pickle.

A message is a JSON header and a list of binary blobs, sent as length-prefixed frames.
Values that can travel: None, bool, int, float, str, list, tuple, dict with str keys,
torch.Tensor (always rebuilt as a base-class tensor on arrival, whatever its layout, strides or
conj/neg bits) and numeric numpy arrays. Anything else travels as a description
`{"__object__": type name, "repr": ...}` so a check can say what it got. Only a tensor that has
no values to send (meta, nested, quantized) raises `Unsendable`.
"""

from __future__ import annotations

import json
import math
import socket
import struct
from collections.abc import Sequence
from typing import cast

import torch

MAX_HEADER = 8 << 20  # a message's JSON part: parsing costs about 25 times its size in memory, so it stays small
MAX_MESSAGE = 256 << 20  # its tensor bytes, all blobs together (raw bytes: no parse)
_HEADER = struct.Struct("!Q")


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed message."""


class Unsendable(Exception):
    """A value that has no plain data to send: the message says what it was."""


class Opaque:
    """A value that could not travel: its type name and a short repr."""

    def __init__(self, type_name: str, text: str):
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>"


def _dense(t: torch.Tensor) -> torch.Tensor:
    """`t`'s values as a fresh contiguous CPU tensor of the same dtype and shape: any strides (expanded,
    one element with an odd stride, 0-d, empty), sparse layouts and conj/neg views alike."""
    if t.device.type == "meta" or t.is_nested or t.is_quantized:
        kind = "meta" if t.device.type == "meta" else "nested" if t.is_nested else "quantized"
        raise Unsendable(f"a {kind} tensor ({type(t).__name__}), which has no plain values")
    data = t.detach()
    if data.layout != torch.strided:
        data = data.to_dense()
    return torch.empty(data.shape, dtype=data.dtype).copy_(data)  # copy_ resolves conj/neg views


def _tensor_bytes(t: torch.Tensor) -> bytes:
    with torch._C.DisableTorchFunction():
        flat = _dense(t.as_subclass(torch.Tensor) if type(t) is not torch.Tensor else t).reshape(-1)
        if flat.dtype == torch.bool:
            flat = flat.to(torch.uint8)
        return flat.view(torch.uint8).numpy().tobytes()


def encode(value, blobs: list, depth: int = 0):
    """Turn `value` into JSON-able data, appending tensor bytes to `blobs`."""
    if depth > 20:
        return {"__object__": "deep structure", "repr": "..."}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value, blobs, depth)
    if isinstance(value, (list, tuple)):
        items = [encode(v, blobs, depth + 1) for v in value]
        return items if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: encode(v, blobs, depth + 1) for k, v in value.items()}}
    if type(value).__module__ == "numpy" and hasattr(value, "__array_interface__") and value.dtype.kind in "biufc":
        return _encode_ndarray(value, blobs)
    return {"__object__": type(value).__name__, "repr": _short_repr(value)}


def _short_repr(value) -> str:
    if isinstance(value, type):
        return value.__name__
    try:
        return repr(value)[:200]
    except Exception:  # a learner's __repr__ may raise anything
        return "(its repr() failed)"


def _encode_tensor(t: torch.Tensor, blobs: list, depth: int) -> dict:
    with torch._C.DisableTorchFunction():
        grad = t.grad if t.is_leaf or t.retains_grad else None
        blobs.append(_tensor_bytes(t))
        strided = t.layout == torch.strided
        info = {
            "__tensor__": len(blobs) - 1,
            "dtype": str(t.dtype).removeprefix("torch."),
            "shape": list(t.shape),
            "requires_grad": bool(t.requires_grad),
            "is_leaf": bool(t.is_leaf),
            "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
            "device": str(t.device),
            "layout": str(t.layout).removeprefix("torch."),
            "contiguous": strided and bool(t.is_contiguous()),
            "stride": list(t.stride()) if strided else None,
            "storage": int(t.untyped_storage().data_ptr()) if strided else 0,
            "offset": int(t.storage_offset()) if strided else 0,
            "subclass": type(t).__name__ if type(t) is not torch.Tensor else None,
        }
        if grad is not None:
            info["grad"] = _encode_tensor(grad, blobs, depth + 1)
        return info


def _encode_ndarray(a, blobs: list) -> dict:
    blobs.append(a.tobytes())
    return {
        "__ndarray__": len(blobs) - 1,
        "dtype": str(a.dtype),
        "shape": list(a.shape),
    }


class TensorInfo(dict):
    """What the sandbox said about a tensor beyond its values (requires_grad, grad_fn, device...)."""


def decode(data, blobs: list, *, restore_grad: bool = False):
    """Rebuild values from `encode` output. Tensors come back as plain torch.Tensor.

    Each tensor carries what the sandbox said of it, read with `tensor_info(t)`; with restore_grad the
    tensor's requires_grad flag is set again (used on the sandbox side for inputs).
    """
    if isinstance(data, list):
        return [decode(v, blobs, restore_grad=restore_grad) for v in data]
    if not isinstance(data, dict):
        return data
    if "__tensor__" in data:
        return _decode_tensor(data, blobs, restore_grad)
    if "__tuple__" in data:
        return tuple(decode(v, blobs, restore_grad=restore_grad) for v in data["__tuple__"])
    if "__dict__" in data:
        return {k: decode(v, blobs, restore_grad=restore_grad) for k, v in data["__dict__"].items()}
    if "__float__" in data:
        return float(data["__float__"])
    if "__ndarray__" in data:
        import numpy as np

        return np.frombuffer(blobs[data["__ndarray__"]], dtype=np.dtype(data["dtype"])).reshape(data["shape"]).copy()
    if "__object__" in data:
        return Opaque(str(data["__object__"]), str(data.get("repr", "")))
    raise ProtocolError(f"unknown value {sorted(data)[:3]}")


def _decode_tensor(data: dict, blobs: list, restore_grad: bool) -> torch.Tensor:
    dtype = getattr(torch, str(data.get("dtype")), None)
    if not isinstance(dtype, torch.dtype):
        raise ProtocolError(f"not a dtype: {str(data.get('dtype'))[:40]}")
    raw = bytearray(blobs[data["__tensor__"]])
    if dtype == torch.bool:
        t = torch.frombuffer(raw, dtype=torch.uint8).to(torch.bool) if raw else torch.empty(0, dtype=torch.bool)
    else:
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
    t = t.reshape(data["shape"]).clone()
    info = TensorInfo({k: v for k, v in data.items() if k not in ("__tensor__", "grad")})
    if "grad" in data:
        info["grad"] = _decode_tensor(data["grad"], blobs, False)
    if restore_grad and data["requires_grad"] and t.is_floating_point():
        t.requires_grad_(True)
    t._grader_info = info  # type: ignore[attr-defined]  # judge-side annotation: a plain Python attribute
    return t


def tensor_info(t: torch.Tensor) -> TensorInfo:
    """The sandbox-side facts of a tensor received from it (empty for judge-made tensors)."""
    return cast(TensorInfo, getattr(t, "_grader_info", TensorInfo()))


# -- framing -------------------------------------------------------------------------------

def send(sock: socket.socket, header: dict, blobs: Sequence[bytes] = ()) -> None:
    head = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode()
    parts = [_HEADER.pack(len(head)), head, *blobs]
    sock.sendall(b"".join(parts))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket) -> tuple[dict, list[bytes]]:
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if size > MAX_HEADER:
        raise ProtocolError(f"a message of {size} bytes (at most {MAX_HEADER} are read)")
    try:
        header = json.loads(_recv_exact(sock, size))
        sizes = header.pop("blobs")
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ProtocolError(f"bad header: {type(exc).__name__}") from None
    if not isinstance(sizes, list) or not all(type(n) is int and n >= 0 for n in sizes) or sum(sizes) > MAX_MESSAGE:
        raise ProtocolError("bad blob sizes")
    return header, [_recv_exact(sock, int(n)) for n in sizes]
