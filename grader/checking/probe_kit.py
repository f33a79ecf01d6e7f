"""The sandbox side of the check toolkit: what probes share.

Runs in: the sandbox (inside a probe, around learner code). A probe (see `grader.sandbox.probes.probe`) runs
trusted code around the learner's in the sandbox and returns plain data. These helpers call learner code and catch
its exception as data with the place it came from (`learner_call`), tell a number as Python sees it (`is_number`),
replace a torch function for the duration of a call (also where the learner's module imported it by name), record
the torch functions a call reaches however it spells them (`recording_calls`) and the autograd entry points
(`watching_autograd`), pretend a CUDA device exists, so
that the GPU branch of learner code runs, and is judged, on a CPU, and import the learner's code anew there
(`imported_anew`), so that what it decides as it is imported is judged too.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import random
import sys
import threading

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

from grader.checking import routes
from grader.sandbox.frames import frame, frame_text


def learner_error(exc: BaseException, module, most: int = 2) -> dict:
    """A learner's exception as plain data: type, message, where it came from in the learner's code and
    whether it is a TODO left. `frames` is where as data (cell, line, function, code: see `where`);
    `where` is the same as English text ("line 12, in f: code"), for checks that quote it as it is; `locals`
    describes the tensors the innermost frame of the learner's code held ({name: {is_leaf, requires_grad}})."""
    frames, innermost = [], None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals is module.__dict__:  # the learner's code: a file, or notebook cells
            code = tb.tb_frame.f_code
            cell = "" if code.co_filename == getattr(module, "__file__", None) else code.co_filename
            frames.append(frame(cell, tb.tb_lineno, code.co_name, linecache.getline(code.co_filename, tb.tb_lineno)))
            innermost = tb.tb_frame
        tb = tb.tb_next
    frames = frames[-most:]
    return {"type": type(exc).__name__, "message": str(exc)[:400], "frames": frames,
            "where": "; ".join(frame_text(f).render("en") for f in frames),
            "not_started": isinstance(exc, NotImplementedError), "locals": _tensor_locals(innermost)}


def _tensor_locals(where) -> dict:
    """{name: {is_leaf, requires_grad}} for the first few tensors a frame held (read past any torch function mode)."""
    found: dict[str, dict] = {}
    if where is None:
        return found
    with torch._C.DisableTorchFunction():
        for name, value in list(where.f_locals.items())[:32]:
            if isinstance(value, torch.Tensor) and len(found) < 8:
                found[name] = {"is_leaf": bool(value.is_leaf), "requires_grad": bool(value.requires_grad)}
    return found


def learner_call(module, fn, *args, **kwargs) -> tuple[object, dict | None]:
    """Call learner code from a probe: `(its value, None)`, or `(None, its error as data)` (`learner_error`) when it
    raised, a TODO left (NotImplementedError) too. The one way a probe captures a learner's error; the check reports
    it with `fail_raised` (a TODO left: "not started")."""
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # the learner's error, as data for the judge
        return None, learner_error(exc, module)


def is_number(value, kind: type | tuple[type, ...] = float, *, tensor: bool = False) -> bool:
    """Whether `value` is a number of `kind` as Python sees it: `isinstance(value, kind)` (a `numpy.float64` is a
    float), never a bool; with `tensor=True`, a one-element tensor too (where the statement allows a tensor's
    scalar). `kind=(int, float)`: any Python number."""
    if isinstance(value, bool):
        return False
    return isinstance(value, kind) or tensor and isinstance(value, torch.Tensor) and value.numel() == 1


class _CallRecorder(TorchFunctionMode):
    """Adds the name of every torch function called under it to a set."""

    def __init__(self, into: set):
        super().__init__()
        self.into = into

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.into.add(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def recording_calls(into: set) -> TorchFunctionMode:
    """A context in which every torch function called (`F.softmax`, `x.softmax()`, `torch._softmax`, an op behind
    `torch.ops.aten`...) adds its name to `into`: how a probe sees a forbidden built-in, whatever the spelling."""
    return _CallRecorder(into)


@contextlib.contextmanager
def watching_autograd(module, into: list):
    """A context in which each call of an autograd entry point (`torch.autograd.grad`, `torch.autograd.backward`,
    `Tensor.backward`) appends its name to `into`, and at the end what differentiated however it was reached (the
    engine's entry `run_backward`, forward-mode AD, torch.func, ATen's backward kernels such as
    `aten.mse_loss_backward`, a graph torch.fx traced), in this thread or one the block starts (`routes.entry_watch`):
    how a probe sees a hand-written backward that lets a machine differentiate instead."""
    def spy(label, original):
        def recorded(*args, **kwargs):
            into.append(label)
            return original(*args, **kwargs)
        return recorded

    details: dict[str, str] = {}
    watch = routes.entry_watch({}, details=details)
    before = sys.getprofile()
    sys.setprofile(watch)
    threading.setprofile(watch)
    try:
        with patched(module, torch.autograd, "grad", spy("torch.autograd.grad", torch.autograd.grad)), \
                patched(module, torch.autograd, "backward", spy("torch.autograd.backward", torch.autograd.backward)), \
                patched(module, torch.Tensor, "backward", spy(".backward()", torch.Tensor.backward)):
            yield into
    finally:
        sys.setprofile(before)
        threading.setprofile(None)
        engine = details.pop("torch.autograd", None)
        if engine and not into:  # an entry point of its own: the engine's
            into.append("torch.autograd.Variable._execution_engine.run_backward")
        into.extend(name for name in details.values() if name not in into)


@contextlib.contextmanager
def patched(module, owner, name: str, replacement):
    """Replace `owner.name` by `replacement` while the block runs, and the learner module's own names
    bound to the same object (`from torch.cuda import is_available`)."""
    original = getattr(owner, name)
    aliases = [key for key, value in vars(module).items() if value is original]
    setattr(owner, name, replacement)
    for key in aliases:
        setattr(module, key, replacement)
    try:
        yield original
    finally:
        setattr(owner, name, original)
        for key in aliases:
            setattr(module, key, original)


@contextlib.contextmanager
def salted_hash(module):
    """While the block runs, `hash()` of a str or bytes is what another Python process computes (each process salts
    them: PYTHONHASHSEED), for the learner's module too: a seed derived from hash() of a string shows, since it agrees
    within one process only. Other values hash as before."""
    import builtins

    real = builtins.hash

    def other_process(value):
        return real(value) ^ 0x5DEECE66D if isinstance(value, (str, bytes)) else real(value)

    with patched(module, builtins, "hash", other_process):
        yield


def _names_cuda(value) -> bool:
    if isinstance(value, torch.device):
        return value.type == "cuda"
    if isinstance(value, str):
        return value.split(":")[0] == "cuda"
    return isinstance(value, int) and not isinstance(value, bool)  # .to(0), .cuda(0): a GPU index


def _held(value) -> list[tuple]:
    """The keys `PretendCuda.keep` files a value under: a tensor's storage (a view or a Parameter of it shares it),
    any other object's identity; one level into lists and tuples (torch.cat's)."""
    if isinstance(value, (list, tuple)):
        return [key for item in value if not isinstance(item, (list, tuple)) for key in _held(item)]
    if isinstance(value, torch.Tensor):
        try:
            pointer = value.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):  # a tensor without storage of its own
            return []
        return [("storage", pointer)] if pointer else []
    return [("object", id(value))] if isinstance(value, torch.Generator) else []


class _CudaOnCpu(TorchFunctionMode):
    """Runs calls that name CUDA on the CPU instead, and records them; once the learner's file has been imported
    anew (`imported_anew`), also the calls that use what its import put on CUDA."""

    def __init__(self, seen: PretendCuda):
        super().__init__()
        self.seen = seen
        self.record = seen.calls
        self.default_cuda = False  # torch.set_default_device("cuda") was called (`_default_device_kept`)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", str(func))
        before = len(self.record)
        if self.seen.made and not self.seen.importing \
                and any(key in self.seen.made for value in (*args, *kwargs.values()) for key in _held(value)):
            self.record.append(f"{name}() with what your file put on cuda at import")
        if self.default_cuda and kwargs.get("device") is None and func in _device_constructors():
            self.record.append(f"set_default_device(cuda), then {name}()")
            kwargs["device"] = "cpu"
        if name == "cuda":
            self.record.append(".cuda()")
            result = args[0]
        elif name == "pin_memory":
            self.record.append(".pin_memory()")
            result = args[0]
        else:
            if "device" in kwargs and _names_cuda(kwargs["device"]):
                self.record.append(f"{name}(device=cuda)")
                kwargs["device"] = "cpu"
            if name == "to":
                args = list(args)
                for i in range(1, len(args)):
                    if _names_cuda(args[i]) and (i == 1 or not isinstance(args[i], int)):
                        self.record.append(".to(cuda)")
                        args[i] = "cpu"
                args = tuple(args)
            result = func(*args, **kwargs)
        if self.seen.importing and len(self.record) > before:
            self.seen.keep(result)
        return result


def _load_on_cpu(load, record: list[str]):
    """torch.load that loads onto the CPU what a map_location naming CUDA would put on a GPU, and records it."""
    def load_on_cpu(f, *args, **kwargs):
        if "map_location" in kwargs and _names_cuda(kwargs["map_location"]):
            kwargs["map_location"] = "cpu"
            record.append("torch.load(map_location=cuda)")
        elif args and _names_cuda(args[0]):
            args = ("cpu", *args[1:])
            record.append("torch.load(map_location=cuda)")
        return load(f, *args, **kwargs)
    return load_on_cpu


def _generator_on_cpu(seen: PretendCuda) -> type:
    """torch.Generator, which makes on the CPU the generator a device naming CUDA would put on a GPU, and records it
    (a subclass: `isinstance(g, torch.Generator)` holds)."""
    class Generator(torch.Generator):
        def __new__(cls, device="cpu"):
            if not _names_cuda(device):
                return super().__new__(cls, device=device)  # type: ignore[call-arg]  # torch's C type takes it
            seen.calls.append("torch.Generator(device=cuda)")
            made = super().__new__(cls, device="cpu")  # type: ignore[call-arg]
            if seen.importing:
                seen.keep(made)
            return made

        def __init__(self, device="cpu"):
            pass

    return Generator


def _default_device_kept(set_default_device, mode: _CudaOnCpu):
    """torch.set_default_device, which leaves the default device as it is when the new one is CUDA (it would outlive
    the block, and put the next tensors on a GPU that is not there) and has `mode` record the tensors made on it."""
    def set_default(device) -> None:
        mode.default_cuda = device is not None and _names_cuda(device)
        if not mode.default_cuda:
            set_default_device(device)
    return set_default


class _IdleStream:
    """The stream of the pretended GPU: never capturing a CUDA graph."""

    def is_capturing(self) -> bool:
        return False


_IDLE_STREAM = _IdleStream()


class PretendCuda:
    """What learner code did with the CUDA device that `pretend_cuda` made up."""

    def __init__(self):
        self.calls: list[str] = []  # ".cuda()", ".to(cuda)", "zeros(device=cuda)", "torch.cuda.manual_seed_all"...
        self.seeds: list[int] = []  # the seeds given to torch.cuda.manual_seed and manual_seed_all
        self.importing = False  # the learner's file is being imported anew (`imported_anew`)
        self.made: dict[tuple, object] = {}  # what that import put on CUDA (`_held`'s keys), kept alive

    def keep(self, value) -> None:
        """Remember `value` (a tensor, a generator, a list of them) as put on CUDA by the learner's import."""
        for key in _held(value):
            self.made[key] = value

    @property
    def used(self) -> bool:
        return bool(self.calls)


@contextlib.contextmanager
def pretend_cuda(module, available: bool = True, mps: bool = False):
    """Make torch report one CUDA device (or none, with `available=False`) while the block runs, and an Apple MPS
    device with `mps=True` (none otherwise: a device pick that prefers MPS shows on any machine).

    With a device reported, calls that name CUDA (`.cuda()`, `.to("cuda")`, `device="cuda"`) run on
    the CPU and are recorded (`torch.load(map_location="cuda")` and `torch.Generator(device="cuda")` too, and
    the tensors made after `torch.set_default_device("cuda")`, which changes nothing beyond), and so are calls
    of `torch.cuda`'s seeding functions (with the seeds given, `torch.manual_seed`'s own call of
    `torch.cuda.manual_seed_all` too), so a check can see the GPU branch of learner code run on a machine without
    a GPU. Yields a `PretendCuda`.
    """
    seen = PretendCuda()
    fakes: list[tuple[object, str, object]] = [
        (torch.cuda, "is_available", lambda: available),
        (torch.cuda, "device_count", lambda: 1 if available else 0),
        (torch.cuda, "is_bf16_supported", lambda *a, **k: available),
        (torch.accelerator, "is_available", lambda: available),
        (torch.accelerator, "device_count", lambda: 1 if available else 0),
        (torch.accelerator, "current_accelerator",
         lambda check_available=False: torch.device("cuda") if available else None),
        (torch.backends.mps, "is_available", lambda: mps),
        (torch.accelerator, "current_stream", lambda device=None: _IDLE_STREAM),  # optimizers ask (Adam.step)
    ]

    def recorder(name):
        def fake(*args, **kwargs):
            seen.calls.append(f"torch.cuda.{name}")
            if name.startswith("manual_seed"):
                seen.seeds.append(int(args[0] if args else kwargs["seed"]))
        return fake

    for name in ("manual_seed", "manual_seed_all", "seed", "seed_all", "synchronize", "empty_cache"):
        fakes.append((torch.cuda, name, recorder(name)))
    mode = _CudaOnCpu(seen)
    if available:
        fakes += [(torch, "load", _load_on_cpu(torch.load, seen.calls)),
                  (torch, "Generator", _generator_on_cpu(seen)),
                  (torch, "set_default_device", _default_device_kept(torch.set_default_device, mode))]
    with contextlib.ExitStack() as stack:
        for owner, name, fake in fakes:
            stack.enter_context(patched(module, owner, name, fake))
        if available:
            stack.enter_context(mode)
        yield seen


class _Discard(io.TextIOBase):
    """Where the output of an import made again goes: nowhere (the learner saw it once)."""

    def write(self, text: str) -> int:
        return len(text)


def imported_anew(module, seen: PretendCuda):
    """The learner's code run again from its first line as a new module, in the world the caller set up (a GPU
    pretended by `pretend_cuda`, whose record is `seen`), so that what it decides as it is imported shows: a device
    chosen at module level. What the import puts on CUDA is recorded as any call is, and each later call that uses it
    too (a tensor made on CUDA at import and never used, a demo at the bottom of the file, is no mistake). The new
    module, or None when running it again raised (a file that cannot be imported twice is judged on `module`, the
    one served, alone). Its output is dropped, and torch's, random's and NumPy's generators are left as they were."""
    from grader.sandbox import process

    numpy = sys.modules.get("numpy")
    states = torch.get_rng_state(), random.getstate(), numpy.random.get_state() if numpy else None
    seen.importing = True
    try:
        with contextlib.redirect_stdout(_Discard()), contextlib.redirect_stderr(_Discard()):
            return process.load_again()
    except (Exception, SystemExit):  # the learner's error: the served module was imported once, it is judged
        return None
    finally:
        seen.importing = False
        torch.set_rng_state(states[0])
        random.setstate(states[1])
        if numpy:
            numpy.random.set_state(states[2])
