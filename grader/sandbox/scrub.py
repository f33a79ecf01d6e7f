"""Forget what a sandbox inherited and must not hold, before learner code runs in it.

A sandbox is a fork of the judge, itself a fork of the grading parent, so it starts with their memory:
the teacher's environment block, the frames of the judge and the parent (a check's expected values, a
batch's job list), the hidden check modules. `scrub` removes what Python code can reach of it:
- the environment block and the command line (env_start..env_end, arg_start..arg_end of
  /proc/self/stat), overwritten with zeros; `posix.environ`, Python's first copy, emptied;
- every frame below the sandbox's own: their locals dropped (those frames never resume: the sandbox
  ends with os._exit);
- the check modules: out of sys.modules (a stand-in takes the place of one with probes), each probe rebuilt
  over a namespace holding only the names it uses (transitively), so `probe.__globals__` leads to no
  reference computation.
What remains is memory no Python object refers to any more (freed, not overwritten): code that reads its
own memory raw (ctypes, /proc/self/mem) can still find pieces of it. Only a sandbox started from a clean
process removes that: the zygote (zygote.py), which never held them, forks sandboxes by default; this forgetting
stays as defence in depth there, and is all there is with TORCH_KATAS_ZYGOTE=0 (see docs/security.md).
"""

from __future__ import annotations

import ctypes
import gc
import sys
import types

# fields of /proc/self/stat (1-based): arg_start, arg_end, env_start, env_end
_ARG_START, _ENV_END = 48, 51


def _blocks() -> list[tuple[int, int]]:
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()  # after the command name, field 3 is fields[0]
    arg_start, arg_end, env_start, env_end = (int(v) for v in fields[_ARG_START - 3:_ENV_END - 2])
    return [(arg_start, arg_end), (env_start, env_end)]


def clear_environment_block() -> None:
    """Zero the process's original environment and arguments (os.environ must hold no pointer into them: call
    after os.environ.clear())."""
    import posix

    posix.environ.clear()
    sys.orig_argv[:] = []
    for start, end in _blocks():
        if 0 < start < end:
            ctypes.memset(start, 0, end - start)


def _drop_locals(frame) -> None:
    if sys.version_info >= (3, 13):  # f_locals writes through (PEP 667)
        for name in list(frame.f_locals):
            try:
                frame.f_locals[name] = None
            except (KeyError, ValueError):
                pass
        return
    frame.f_locals.clear()
    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(1))


def clear_outer_frames(below) -> None:
    """Drop the locals of every frame `below` was called from (frames that never resume)."""
    frame = below.f_back
    while frame is not None:
        if frame.f_locals is not frame.f_globals:  # a module's top level: its globals, which others still use
            _drop_locals(frame)
        frame = frame.f_back
    del frame


def drop_hooks() -> None:
    """Forget the judge's callbacks the interpreter keeps (a signal handler of pytest-timeout holds the running
    check, hence the whole session): signal handlers back to the default, atexit, trace and log handlers."""
    import atexit
    import logging
    import signal
    import threading

    for number in range(1, signal.NSIG):
        try:
            handler = signal.getsignal(number)
            if callable(handler) and handler is not signal.default_int_handler:
                signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    atexit._clear()
    sys.settrace(None)
    sys.setprofile(None)
    sys.excepthook, threading.excepthook = sys.__excepthook__, threading.__excepthook__
    for logger in [logging.root, *logging.root.manager.loggerDict.values()]:
        if isinstance(logger, logging.Logger):
            logger.handlers.clear()


def _names(code: types.CodeType) -> set[str]:
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def isolate_probes(probes: dict, secret_modules: set[str]) -> dict[str, types.ModuleType]:
    """Rebuild each probe, and the functions and classes of its module it uses, over a stand-in module holding only
    the names used (transitively); return the stand-ins (what `pickle` finds under the module's name)."""
    stand_ins: dict[str, types.ModuleType] = {}
    done: dict[int, object] = {}

    def namespace(module: str) -> dict:
        if module not in stand_ins:
            stand_ins[module] = types.ModuleType(module)
            stand_ins[module].__dict__["__builtins__"] = __builtins__
        return stand_ins[module].__dict__

    def own(value) -> object:
        if id(value) in done or getattr(value, "__module__", None) not in secret_modules:
            return done.get(id(value), value)
        if isinstance(value, types.FunctionType):
            new = types.FunctionType(value.__code__, namespace(value.__module__), value.__name__, value.__defaults__,
                                     value.__closure__)
            new.__kwdefaults__, new.__module__, new.__qualname__ = value.__kwdefaults__, value.__module__, \
                value.__qualname__
            new.__dict__.update(value.__dict__)
            done[id(value)] = new
            uses(value.__code__, value.__globals__, namespace(value.__module__))
            return new
        if isinstance(value, type):
            done[id(value)] = value
            for key, attr in list(vars(value).items()):
                if isinstance(attr, types.FunctionType):
                    setattr(value, key, own(attr))
            return value
        return value

    def uses(code, old: dict, new: dict) -> None:
        for name in _names(code):
            if name in old and name not in new:
                new[name] = None  # taken, before the recursion comes back to it
                new[name] = own(old[name])

    for key, fn in list(probes.items()):
        probes[key] = own(fn)
        namespace(fn.__module__)[fn.__name__] = probes[key]
    return stand_ins


# the grader's own modules that compute references (gradients), drive the checks, or know a batch's jobs
TRUSTED_ONLY = {"grader.gradients", "grader.checking.gradients", "grader.checking.expect", "grader.judge.grading",
                "grader.judge.plugin", "grader.teacher.batch", "grader.teacher.collect", "grader.author.validate",
                "grader.author.scaffold", "grader.teacher.gradebook"}


def _loaded(names: set[str]) -> set[str]:
    """Those of `names` imported. Not `names & set(sys.modules)`: that touches every module's name, and in a fresh
    fork each touch copies a page (about 4 ms)."""
    return {name for name in names if name in sys.modules}


def inside(path: str, folders) -> bool:
    """Whether `path` lies in one of `folders`."""
    return any(path.startswith(folder.rstrip("/") + "/") for folder in folders)


def check_modules(probes: dict, folders: tuple[str, ...]) -> set[str]:
    """The names of the hidden check modules loaded (those that define probes, or that lie in `folders`) and the
    grader's modules learner code has no use for."""
    names = {fn.__module__ for fn in probes.values()} | _loaded(TRUSTED_ONLY)
    for name, module in list(sys.modules.items()) if folders else ():  # (each module's page is copied on touch)
        path = getattr(module, "__file__", None) or ""
        if path and inside(path, folders):
            names.add(name)
    return names


def scrub(probes: dict, folders: tuple[str, ...], below, shipped: bool = False) -> None:
    """All of the above, in the sandbox, after os.environ was cleared and before learner code runs; `below` is
    the frame of the sandbox's last function that returns (its callers' locals go). `shipped`: the sandbox was
    started by the zygote, which never imported a check module (`folders` are not scanned) and rebuilt the probes
    from their shipped code over stand-ins holding only what they use (probecode.install): they stay as they are."""
    clear_environment_block()
    clear_outer_frames(below)
    drop_hooks()
    if shipped:
        secret, stand_ins = _loaded(TRUSTED_ONLY), {}
    else:
        secret = check_modules(probes, folders)
        stand_ins = isolate_probes(probes, secret)
    for name in secret:
        sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
            delattr(sys.modules[parent], child)
    sys.modules.update(stand_ins)  # a probe's own objects still pickle by name
    gc.collect()
