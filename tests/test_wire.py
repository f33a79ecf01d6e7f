"""Plain data between judge and sandbox: exact round trips, base-class tensors, no pickle."""

import socket
import warnings

import numpy as np
import pytest
import torch

from grader.sandbox import wire
from grader.sandbox.problems import LearnerError
from grader.sandbox.limits import Limits
from grader.judge.submission import Submission
from grader.sandbox.source import Source


def roundtrip(value):
    a, b = socket.socketpair()
    blobs = []
    wire.send(a, {"value": wire.encode(value, blobs)}, blobs)
    header, got = wire.recv(b)
    return wire.decode(header["value"], got)


def test_tensors_of_every_dtype_roundtrip():
    for t in (torch.randn(3, 2), torch.arange(5), torch.tensor(True), torch.randn(2).bfloat16(),
              torch.randn(2, 3).double().t(), torch.empty(0, 4), torch.tensor(3.5)):
        back = roundtrip(t)
        assert type(back) is torch.Tensor and back.dtype == t.dtype and back.shape == t.shape
        assert torch.equal(back, t)


def test_tensor_facts_travel_with_it():
    w = torch.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    y = w * 2
    back_w, back_y = roundtrip([w, y])
    assert wire.tensor_info(back_w)["is_leaf"] and torch.equal(wire.tensor_info(back_w)["grad"], torch.full((2,), 3.0))
    assert wire.tensor_info(back_y)["grad_fn"] == "MulBackward0" and not back_y.requires_grad


def test_containers_numbers_and_opaque_objects():
    value = {"a": (1, 2.5, float("nan")), "b": [None, "s", True], "arr": np.arange(3)}
    back = roundtrip(value)
    assert back["a"][:2] == (1, 2.5) and back["a"][2] != back["a"][2]
    assert back["b"] == [None, "s", True] and back["arr"].tolist() == [0, 1, 2]
    opaque = roundtrip(object())
    assert isinstance(opaque, wire.Opaque) and opaque.type_name == "object"


def test_a_lying_subclass_arrives_as_its_plain_data():
    class Liar(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is torch.Tensor.__eq__:
                return True
            return super().__torch_function__(func, types, args, kwargs or {})

    back = roundtrip(torch.zeros(2).as_subclass(Liar))
    assert type(back) is torch.Tensor and wire.tensor_info(back)["subclass"] == "Liar"
    assert not torch.equal(back, torch.ones(2))


def _odd_stride_one_element():
    """What `torch.diagonal(a @ b.T)` returns for one row: one element with stride 2."""
    return torch.diagonal(torch.randn(1, 3) @ torch.randn(1, 3).T)


class Marked(torch.Tensor):
    pass


LAYOUTS = {
    "transposed": lambda: torch.randn(2, 3).double().t(),
    "expanded": lambda: torch.randn(3, 1).expand(3, 4),
    "zero stride": lambda: torch.tensor(1.5).expand(5),
    "one element, odd stride": _odd_stride_one_element,
    "one element of a column": lambda: torch.arange(10.0).reshape(5, 2)[1:2, 0],
    "every third": lambda: torch.arange(10.0)[::3],
    "0-d": lambda: torch.tensor(3.5),
    "0-d view of a matrix": lambda: torch.arange(6.0).reshape(2, 3)[1, 2],
    "empty": lambda: torch.empty(0, 4),
    "empty transposed": lambda: torch.empty(3, 0).t(),
    "conj view": lambda: torch.randn(3, dtype=torch.complex64).conj(),
    "neg view": lambda: torch.randn(3, dtype=torch.complex64).conj().imag,
    "bool transposed": lambda: (torch.randn(2, 3) > 0).t(),
    "bfloat16 every other column": lambda: torch.randn(4, 4).bfloat16()[:, ::2],
    "complex32": lambda: torch.randn(3, dtype=torch.complex64).to(torch.complex32),
    "float8": lambda: torch.randn(3).to(torch.float8_e4m3fn),
    "uint16 expanded": lambda: torch.tensor([7], dtype=torch.uint16).expand(2, 3),
    "sparse coo": lambda: torch.eye(3).to_sparse(),
    "sparse csr": lambda: torch.eye(3).to_sparse_csr(),
    "non-leaf, odd stride": lambda: (torch.randn(1, 3, requires_grad=True) @ torch.randn(3, 1)).diagonal(),
    "subclass, odd stride": lambda: _odd_stride_one_element().as_subclass(Marked),
}


def values(t: torch.Tensor) -> list:
    """A tensor's values as Python numbers, for any dtype (complex ones as pairs)."""
    t = t.detach().to_dense() if t.layout != torch.strided else t.detach()
    t = t.as_subclass(torch.Tensor)
    if t.is_complex():
        return torch.view_as_real(t.to(torch.complex64).resolve_conj()).tolist()
    return t.to(torch.float64).tolist()


@pytest.mark.parametrize("name", LAYOUTS)
def test_every_layout_travels_with_its_values(name):
    t = LAYOUTS[name]()
    back = roundtrip(t)
    assert type(back) is torch.Tensor and back.dtype == t.dtype and back.shape == t.shape
    assert values(back) == values(t)
    info = wire.tensor_info(back)
    assert info["requires_grad"] == t.requires_grad and info["layout"] == str(t.layout).removeprefix("torch.")
    if t.layout == torch.strided:
        assert info["stride"] == list(t.stride())


@pytest.mark.parametrize("make, kind", [
    (lambda: torch.empty(2, device="meta"), "meta"),
    (lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]), "nested"),
    (lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8), "quantized"),
])
def test_tensors_without_plain_values_say_what_they_are(make, kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensors are deprecated
        t = make()
    with pytest.raises(wire.Unsendable, match=f"a {kind} tensor"):
        wire.encode(t, [])


def test_objects_that_cannot_travel_are_described():
    class BadRepr:
        def __repr__(self):
            raise RuntimeError("no")

    assert roundtrip(BadRepr()).text == "(its repr() failed)"
    assert isinstance(roundtrip(np.array([object()])), wire.Opaque)  # never bytes of pointers


SOURCE = """
import torch

def rowwise_dot(a, b):
    return torch.diagonal(a @ b.T)

def meta():
    return torch.empty(2, device="meta")
"""


def test_the_sandbox_sends_back_any_layout_and_names_what_it_cannot(tmp_path):
    """The reported case: a correct rowwise_dot with one row returned one element with stride 2, and the
    sandbox died ("exit status 3") as if the learner had called os._exit()."""
    source = Source(chunks=[("work.py", SOURCE)], filename="work.py", path=tmp_path / "work.py")
    submission = Submission(source, Limits(time=30))
    try:
        a, b = torch.randn(1, 3), torch.randn(1, 3)
        assert torch.allclose(submission.rowwise_dot(a, b), (a * b).sum(1))
        with pytest.raises(LearnerError, match=r"`meta\(\)` returned a value that cannot be sent back: a meta tensor"):
            submission.meta()
        assert torch.allclose(submission.rowwise_dot(b, a), (a * b).sum(1))  # the same sandbox, still serving
        assert submission.problems == []
    finally:
        submission.close()
