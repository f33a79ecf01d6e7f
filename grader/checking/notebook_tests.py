"""nbgrader's autograded test cells as checks: the test's code runs in the judge, the learner's in the sandbox.

A check that `grade new --from-notebook` made calls `notebook_test(submission, grade_id, code)`. The cell's code
(the teacher's, from the checks module) runs here, in the judge, after the learner's cells above it, over a
namespace in which each name the learner's cells define stands for what the sandbox holds:
- plain data (numbers, strings, lists, dicts, tensors, numeric arrays): a copy, read again after each call;
- a function, or any other object (a model, a generator): a stand-in, `Yours`; calling it, or reading an
  attribute, an item, its length or its items, asks the sandbox, and what comes back is data again (or another
  stand-in). What the call changed in place of the test's lists, dicts, tensors and arrays is changed here too.
So `assert`, `==`, Python's own names, `numpy.testing`, `pytest.raises` and `nose.tools` are the judge's, and no
submission can forge them. What the cell does to the learner's names reaches the learner's code while it is called:
`del squares` (nbgrader's example checks that `sum_of_squares` uses `squares`), `squares = orig_squares`, or a
function of the cell's own in its place, which the learner's code then calls back here (`ask_judge`). An exception of
the learner's code is raised here as the closest class the judge knows (ValueError, NameError, torch's errors...), a
StopIteration as a plain Exception, which ends no loop of the test's. The cell passes when it ends without an error,
as in nbgrader; a failure at one of its hidden lines names the error's class only, never a call, a value or a
message. A stand-in is never compared, tested for truth or asked its class where its own class defines that: the
learner's code would decide; the test stops and says it cannot be decided here (`CannotJudge`).

A cell that needs the learner's process itself (a class of the notebook, its namespace, what it prints or writes)
runs in the sandbox instead, after the learner's cells, as nbgrader runs it (`mode="sandbox"`): its verdict is
worth what nbgrader's is, which a submission written to fool the test can forge (only what the learner's functions
raise into it that would stop a loop is made an ordinary error there, `_guard`). The import chose the mode and
said why (grader/author/from_nbgrader.py).

Runs in: the judge (`notebook_test`, the namespace, the messages) and the sandbox (the probes).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import os
import re
import sys
import types
import unittest

import pytest
import torch

from grader.checking.expect import LearnerError, Text, fail, learner_error, probe, verbatim, where
from grader.course.nbgrader_cells import BEGIN_HIDDEN, END_HIDDEN, regions
from grader.sandbox import wire
from grader.sandbox.problems import LearnerProblem
from grader.text import quoted
from grader.sandbox.process import ask_judge

__all__ = ["notebook_test", "not_converted"]

REF = "\x00torch-katas reference"  # the one key of a reference in plain data: [kind, what]
HANDLES: dict = {}  # sandbox side: the learner's objects the judge holds stand-ins of, by number
HELD: dict = {}  # sandbox side: id() of each object in HANDLES -> its number (HANDLES keeps it alive)
OWN: dict = {}  # sandbox side: the learner's own objects under the names a test's call binds for now
SHOWN = 100  # characters of a value quoted in a message
OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception, pytest.xfail.Exception)  # a test cell's use: a failure


# -- sandbox side --------------------------------------------------------------------------

def _plain(value) -> bool:
    """Whether `value` travels as data (wire.py: a number, a string, a tensor, a numeric array) rather than as a
    reference."""
    if value is None or isinstance(value, (bool, int, float, str, torch.Tensor)):
        return True
    return type(value).__module__ == "numpy" and hasattr(value, "__array_interface__") and value.dtype.kind in "biufc"


def _mutable(values) -> bool:
    """Whether one of `values` (a call's arguments) can change in place: a list, a dict, a tensor, an array, or a
    tuple that holds one."""
    return any(isinstance(value, (list, dict, torch.Tensor)) or type(value).__module__ == "numpy"
               or isinstance(value, tuple) and _mutable(value) for value in values)


def _about(value) -> dict:
    """What the judge may know of an object it holds a reference to: its type's name, and whether its type leaves
    equality and truth as Python's own (identity; always true), so that the judge decides them alike."""
    kind = type(value)
    return {"type": kind.__name__[:60], "eq": kind.__eq__ is object.__eq__ and kind.__ne__ is object.__ne__,
            "bool": not hasattr(kind, "__bool__") and not hasattr(kind, "__len__")}


def _outward(module, value, depth: int = 0):
    """A learner value on its way to the judge: plain data as it is; the module's own functions by name, a function of
    the test's (called back) as that, a module as its name, anything else as a stand-in by number."""
    if isinstance(value, (list, tuple)) and depth < 20:
        items = [_outward(module, item, depth + 1) for item in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict) and depth < 20 and all(isinstance(key, str) for key in value):
        return {key: _outward(module, item, depth + 1) for key, item in value.items()}
    if _plain(value):
        return value
    if isinstance(value, types.ModuleType):
        return {REF: ["module", value.__name__]}
    number = getattr(value, "test_function", None)
    if isinstance(number, int) and not isinstance(number, bool):
        return {REF: ["callback", number]}
    for name, bound in list(vars(module).items()):
        if bound is value and callable(value):
            return {REF: ["name", name, _about(value)]}
    number = HELD.setdefault(id(value), len(HANDLES))
    HANDLES[number] = value
    return {REF: ["handle", number, _about(value)]}


def _inward(module, value, depth: int = 0):
    """The judge's data with its references resolved: a learner's name or object, a module, a function of the test."""
    if isinstance(value, list) and depth < 20:
        return [_inward(module, item, depth + 1) for item in value]
    if isinstance(value, tuple) and depth < 20:
        return tuple(_inward(module, item, depth + 1) for item in value)
    if isinstance(value, dict) and depth < 20:
        if list(value) != [REF]:
            return {key: _inward(module, item, depth + 1) for key, item in value.items()}
        kind, what = value[REF][:2]
        if kind == "name":  # the learner's own, even where the test binds the name for now
            if what in OWN:
                return OWN[what]
            if what not in vars(module):
                raise NameError(f"name '{what}' is not defined")
            return vars(module)[what]
        if kind == "handle":
            return HANDLES[what]
        if kind == "module":
            return importlib.import_module(what)
        return _test_function(module, what)
    return value


def _test_function(module, number: int):
    """A function of the test cell's, which runs in the judge, as the learner's code calls it."""
    def from_the_test(*args, **kwargs):
        blobs: list = []
        header = {"number": number, "args": wire.encode(_outward(module, list(args)), blobs),
                  "kwargs": wire.encode(_outward(module, dict(kwargs)), blobs)}
        answer, out = ask_judge(header, blobs)
        if "raised" in answer:
            kind = getattr(builtins, str(answer["raised"].get("type")), None)
            kind = kind if isinstance(kind, type) and issubclass(kind, Exception) else RuntimeError
            raise kind(str(answer["raised"].get("message", "")))
        return _inward(module, wire.decode(answer.get("value"), out, restore_grad=True))

    from_the_test.test_function = number  # type: ignore[attr-defined]
    return from_the_test


def _raised(exc: BaseException, module) -> dict:
    """A learner's exception as data, with its classes (module, qualified name), most specific first."""
    info = learner_error(exc, module)
    info["classes"] = [[str(c.__module__)[:100], str(c.__qualname__)[:100]] for c in type(exc).__mro__[:12]]
    return info


def _reads(module) -> list[str]:
    """The global names the learner's functions and methods may read."""
    namespace = vars(module)
    todo = []
    for value in list(namespace.values()):
        if isinstance(value, types.FunctionType) and value.__globals__ is namespace:
            todo.append(value.__code__)
        elif isinstance(value, type) and value.__module__ == module.__name__:
            todo += [f.__code__ for f in vars(value).values() if isinstance(f, types.FunctionType)]
    names: set[str] = set()
    seen: set[int] = set()
    while todo:
        code = todo.pop()
        if id(code) not in seen:
            seen.add(id(code))
            names.update(code.co_names)
            todo += [const for const in code.co_consts if isinstance(const, types.CodeType)]
    return sorted(names)


GUARD = "__torch_katas_guard__"  # the name a test cell run beside the learner's code calls on what it reads


class LearnerStopped(Exception):
    """A StopIteration (StopAsyncIteration, GeneratorExit, KeyboardInterrupt, SystemExit) that a function of the
    learner's raised into a test cell run beside their code, as an ordinary error of theirs: no loop of the test
    (`all(map(f, xs))`) takes it for its end."""

    def __init__(self, raised: BaseException):
        super().__init__(f"{type(raised).__name__}: {raised}".rstrip(": "))
        self.raised = raised


def _guard(module):
    """What a test cell run beside the learner's code calls on each name and attribute it reads: a function of the
    learner's (of their cells, or of a file their cells wrote) as a wrapper that raises `LearnerStopped` for what the
    function raises into the test cell that would stop it; anything else as it is. One wrapper a function."""
    namespace, home = vars(module), os.environ.get("HOME", "") + os.sep
    wrappers: dict[int, tuple] = {}  # id of a function -> (the function, kept alive; its wrapper)

    def guard(value):
        fn = getattr(value, "__func__", value)
        if not (isinstance(fn, types.FunctionType) and (fn.__globals__ is namespace
                                                        or len(home) > 1 and fn.__code__.co_filename.startswith(home))):
            return value
        if id(value) in wrappers:
            return wrappers[id(value)][1]

        @functools.wraps(value)
        def guarded(*args, **kwargs):
            try:
                return value(*args, **kwargs)
            except (StopIteration, StopAsyncIteration, GeneratorExit, KeyboardInterrupt, SystemExit) as exc:
                if sys._getframe(1).f_code.co_filename.startswith("<test "):  # the test's call, or its map's
                    raise LearnerStopped(exc) from exc
                raise

        if value is fn:  # a bound method is made anew at each read: kept only while the test holds it
            wrappers[id(value)] = (value, guarded)
        return guarded

    return guard


class _Guarded(ast.NodeTransformer):
    """A test cell's names and attributes read through GUARD."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not isinstance(node.ctx, ast.Load) or node.id == GUARD:
            return node
        return ast.copy_location(ast.Call(ast.Name(GUARD, ast.Load()), [node], []), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(ast.Call(ast.Name(GUARD, ast.Load()), [node], []), node)


def _compiled(code: str, filename: str, guarded: bool = False):
    """The code of a cell, compiled as Jupyter runs it: all but a last expression, and that expression apart (its
    value is the cell's result); `guarded`: what it reads goes through GUARD."""
    tree = ast.parse(code, filename)
    if guarded:
        tree = ast.fix_missing_locations(_Guarded().visit(tree))
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval",  # type: ignore[attr-defined]
                       dont_inherit=True)
    return compile(tree, filename, "exec", dont_inherit=True), last


@probe
def learner_names(module, names):
    """Which of `names` the learner's module binds, each as it travels (data, or a reference); and the global names
    its functions read."""
    namespace = vars(module)
    return {"names": {name: _outward(module, namespace[name]) for name in names if name in namespace},
            "reads": _reads(module)}


@probe
def learner_value(module, name):
    """What the learner's module binds to `name` now, as it travels; None when nothing."""
    return {"value": _outward(module, vars(module)[name])} if name in vars(module) else None


@probe
def call_learner(module, target, how, args, kwargs, bindings):
    """Use the learner's `target` (a reference): call it (`how` is "call"), read an attribute or an item of it
    ("attr", "item": args[0]), its length ("len") or its items ("iter"), while the names the test changed hold what
    the test made of them (`bindings`: name -> [value], or [] where the test deleted it); they are back after. The
    value as it travels, or the exception."""
    namespace = vars(module)
    try:
        thing = _inward(module, {REF: target})
        args, kwargs = _inward(module, args), _inward(module, kwargs)
        given = {name: [_inward(module, bound[0])] if bound else [] for name, bound in bindings.items()}
    except Exception as exc:  # a name the test passes that the learner's code deleted meanwhile
        return {"raised": _raised(exc, module)}
    saved = {name: namespace[name] for name in given if name in namespace}
    mine = [name for name in saved if name not in OWN]  # a call made by the test's own function nests in another
    OWN.update({name: saved[name] for name in mine})
    for name, bound in given.items():
        if bound:
            namespace[name] = bound[0]
        else:
            namespace.pop(name, None)
    try:
        if how == "call":
            reply = {"value": _outward(module, thing(*args, **kwargs))}
        elif how == "attr":
            reply = {"value": _outward(module, getattr(thing, args[0]))}
        elif how == "item":
            reply = {"value": _outward(module, thing[args[0]])}
        elif how == "len":
            reply = {"value": len(thing)}
        else:
            reply = {"value": _outward(module, list(thing))}
    except BaseException as exc:  # the learner's code may raise anything, SystemExit too
        reply = {"raised": _raised(exc, module)}
    try:
        if how == "call" and _mutable([*args, *kwargs.values()]):  # what the call changed in place, for the test's own
            reply["after"] = {"args": _outward(module, args), "kwargs": _outward(module, kwargs)}
        return reply
    finally:
        for name in given:
            namespace.pop(name, None)
        namespace.update(saved)
        for name in mine:
            del OWN[name]


@probe
def run_test_here(module, filename, setup, code):
    """Run a test cell as nbgrader does, in the learner's namespace (its setup first, whose errors are the earlier
    cells'), the learner's functions it reads guarded (`_guard`); the cell's result as it travels, or the exception
    with the cell's line."""
    namespace = vars(module)
    try:
        exec(compile(setup, f"{filename} setup", "exec", dont_inherit=True), namespace)
    except BaseException:  # an earlier test cell failed there too: what it bound so far is what it left
        pass
    namespace[GUARD] = _guard(module)
    try:
        body, last = _compiled(code, filename, guarded=True)
        exec(body, namespace)
        return {"value": _outward(module, eval(last, namespace) if last is not None else None)}
    except BaseException as exc:  # the test failed, or the learner's code raised: both are the cell's error
        info = _raised(exc.raised if isinstance(exc, LearnerStopped) else exc, module)
        tb, line = exc.__traceback__, 0
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        info["line"] = line
        info["frames"] = [f for f in info["frames"] if f["cell"] != filename]
        return {"raised": info}
    finally:
        namespace.pop(GUARD, None)


# -- judge side ---------------------------------------------------------------------------------

class CannotJudge(BaseException):
    """The test needs what only the learner's code could decide (compare an object of theirs, ask its class): it
    stops, and the check says so. A BaseException, so that no `except Exception` of the test swallows it."""

    def __init__(self, text: Text):
        super().__init__(text.render("en"))
        self.text = text


class _Stop(BaseException):
    """A problem of the sandbox (a timeout, a crash, tampering) met inside the test's code: it ends the check."""

    def __init__(self, problem: LearnerProblem):
        super().__init__(str(problem))
        self.problem = problem


class LearnerRaised:
    """Mixed into the exception raised in the judge for one the learner's code raised: `info` (type, message,
    frames, classes) and `what` (the call)."""

    info: dict
    what: str


_RAISED: dict[type, type] = {}
_NOT_HERE = ("grader", "_pytest", "pytest", "pluggy")  # never raised for a learner: what the grader itself reads
NOT_RAISED = (MemoryError, StopIteration, StopAsyncIteration)  # nor these: a plain Exception stands for them


def _judge_class(classes) -> type[Exception]:
    """The most specific of a learner exception's classes that the judge has loaded, an Exception (never one the
    grader reads, nor MemoryError, nor StopIteration, which would end a loop of the test's as if it were done:
    `all(map(f, xs))`): only modules already imported here are read, and never through their `__getattr__`."""
    for entry in classes if isinstance(classes, list) else []:
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(part, str) for part in entry)):
            continue
        module, qualname = entry
        found = sys.modules.get(module)
        for part in qualname.split(".") if found is not None else ():
            found = vars(found).get(part) if hasattr(found, "__dict__") else None
        if (isinstance(found, type) and issubclass(found, Exception) and not issubclass(found, NOT_RAISED)
                and not str(found.__module__).startswith(_NOT_HERE)):
            return found
    return Exception


def _learner_exception(info: dict, what: str) -> BaseException:
    """An exception to raise in the judge for one of the learner's code, of the class `_judge_class` finds."""
    for kind in (_judge_class(info.get("classes")), Exception):
        try:
            if kind not in _RAISED:
                _RAISED[kind] = type(kind.__name__, (kind, LearnerRaised), {"__module__": kind.__module__})
            exc = _RAISED[kind](str(info.get("message", "")))
        except Exception:  # a class that cannot be derived, or whose constructor wants more (UnicodeDecodeError)
            continue
        exc.info, exc.what = info, what
        return exc
    raise AssertionError("unreachable: Exception(str) always builds")


class Yours:
    """A learner's function or object in the judge: it lives in the sandbox, reached by reference (`target`).
    Calling it, or reading an attribute, an item, its length or its items, asks the sandbox; equality and truth are
    Python's own where its type keeps them (identity; true), and are otherwise the learner's code's to answer, as is
    its class: the test then cannot be decided here (`CannotJudge`)."""

    def __init__(self, run: _Run, target: list, name: str, about: dict):
        for key, value in (("_run", run), ("target", target), ("__name__", name), ("_about", about)):
            object.__setattr__(self, key, value)

    def __call__(self, *args, **kwargs):
        return self._run.use(self, "call", args, kwargs)

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return self._run.use(self, "attr", (attr,), {})

    def __getitem__(self, key):
        return self._run.use(self, "item", (key,), {})

    def __len__(self) -> int:
        return self._run.use(self, "len", (), {})

    def __iter__(self):
        return iter(self._run.use(self, "iter", (), {}))

    def __repr__(self) -> str:
        return self.__name__

    def __eq__(self, other):
        return self is other if self._about.get("eq") is True else self._cannot()

    def __ne__(self, other):
        return self is not other if self._about.get("eq") is True else self._cannot()

    def __bool__(self) -> bool:
        return True if self._about.get("bool") is True else self._cannot()

    __hash__ = object.__hash__

    def _cannot(self, *_args, **_kwargs):
        raise CannotJudge(Text("the test compares {what}, or asks what it is, which only your code can answer",
                               "测试比较了 {what}，或询问它是什么，而这只有你的代码能回答",
                               what=verbatim(self.__name__)))

    __lt__ = __le__ = __gt__ = __ge__ = __contains__ = __setattr__ = __setitem__ = __delattr__ = _cannot
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __neg__ = __abs__ = _cannot
    __instancecheck__ = __subclasscheck__ = _cannot

    @property  # type: ignore[misc]
    def __class__(self):  # isinstance(x, nn.Module) asks it: the judge cannot answer for the learner's object
        self._cannot()


class _Namespace(dict):
    """The globals of a test cell run in the judge: the learner's names read through from the sandbox, what the
    cell binds and deletes kept apart, to reach the learner's code when it is called."""

    def __init__(self, run: _Run):
        super().__init__()
        self.run = run

    def __getitem__(self, name: str):
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        return self.run.learner(name)

    def __setitem__(self, name: str, value) -> None:
        self.run.changed.add(name)
        self.run.deleted.discard(name)
        dict.__setitem__(self, name, value)

    def __delitem__(self, name: str) -> None:
        if dict.__contains__(self, name):
            dict.__delitem__(self, name)
        else:
            self.run.learner(name)  # KeyError where the learner's cells have no such name either
        self.run.changed.add(name)
        self.run.deleted.add(name)


class _Run:
    """One test cell run in the judge over one submission (the cells above it)."""

    def __init__(self, submission, filename: str, names: set[str]):
        self.submission = submission
        self.filename = filename
        described = self._probe(learner_names, sorted(names), what=Text("the names your cells define",
                                                                           "你的单元格定义的名字"))
        self.kinds: dict = described["names"]  # name -> its value as it travelled (data or a reference)
        self.reads = set(described["reads"])
        self.values: dict = {}  # name -> the learner's value as the test reads it, since the last call
        self.called = False  # a call ran since the names were described: data is read again
        self.stand_ins: dict[str, Yours] = {}  # the learner's functions by name: one stand-in each
        self.held: dict[int, Yours] = {}  # the learner's other objects by number: one stand-in each
        self.changed: set[str] = set()
        self.deleted: set[str] = set()
        self.functions: list = []  # the test's functions the learner's code may call back
        self.calls: list[tuple[int | None, str, object]] = []  # (the test's line, the call, its value or raised)
        self.namespace = _Namespace(self)

    def _probe(self, fn, *args, what):
        try:
            return self.submission.probe(fn, *args, what=what, on_callback=self.answer)
        except LearnerProblem as problem:
            raise _Stop(problem) from None

    # -- the learner's names, as the test reads them
    def learner(self, name: str):
        """The learner's `name` as the test reads it now: KeyError where the cells have no such name (or the test
        deleted it). Data is read again after each call; a function stays its stand-in."""
        if name in self.deleted or name not in self.kinds:
            raise KeyError(name)
        if name not in self.values:
            sent = self.kinds[name]
            if self.called and not _named(sent, name):
                fresh = self._probe(learner_value, name, what=Text("`{name}`", name=verbatim(name)))
                if fresh is None:
                    raise KeyError(name)
                sent = fresh["value"]
            self.values[name] = self.inward(sent, name)
        return self.values[name]

    def inward(self, value, name: str = "", depth: int = 0):
        """The sandbox's data with its references as the judge's objects."""
        if isinstance(value, list) and depth < 20:
            return [self.inward(item, name, depth + 1) for item in value]
        if isinstance(value, tuple) and depth < 20:
            return tuple(self.inward(item, name, depth + 1) for item in value)
        if not isinstance(value, dict):
            return value
        ref = value.get(REF) if list(value) == [REF] else None
        if not (isinstance(ref, list) and len(ref) in (2, 3) and isinstance(ref[0], str)):
            return {key: self.inward(item, name, depth + 1) for key, item in value.items()}
        kind, what = ref[:2]
        about = ref[2] if len(ref) == 3 and isinstance(ref[2], dict) else {}
        if kind == "name" and isinstance(what, str):
            return self.stand_ins.setdefault(what, Yours(self, [kind, what], what, about))
        if kind == "handle" and type(what) is int:  # named for the expression that made it: make_counter()
            shown = name[:80] or f"a {about.get('type', 'object')}"
            return self.held.setdefault(what, Yours(self, [kind, what], shown, about))
        if kind == "callback" and type(what) is int and 0 <= what < len(self.functions):
            return self.functions[what]
        if kind == "module" and isinstance(sys.modules.get(str(what)), types.ModuleType):
            return sys.modules[str(what)]
        return Yours(self, ["name", name], name, {})  # a module the judge has not loaded: reached in the sandbox

    def outward(self, value, depth: int = 0):
        """A value of the test's on its way to the learner's code: stand-ins and modules as references, the test's
        functions as numbers to call back."""
        if type(value) is Yours:
            return {REF: value.target}
        if isinstance(value, (list, tuple)) and depth < 20:
            items = [self.outward(item, depth + 1) for item in value]
            return items if isinstance(value, list) else tuple(items)
        if isinstance(value, dict) and depth < 20:
            return {key: self.outward(item, depth + 1) for key, item in value.items()}
        if isinstance(value, types.ModuleType):
            return {REF: ["module", value.__name__]}
        if callable(value) and not isinstance(value, type) and not _plain(value):
            number = next((i for i, f in enumerate(self.functions) if f is value), None)
            if number is None:
                self.functions.append(value)
                number = len(self.functions) - 1
            return {REF: ["callback", number]}
        return value

    def bindings(self) -> dict:
        """What the test changed of the names the learner's code defines or reads: name -> [value], [] if deleted."""
        return {name: [] if name in self.deleted else [self.outward(dict.__getitem__(self.namespace, name))]
                for name in sorted(self.changed) if name in self.kinds or name in self.reads}

    # -- calls into the sandbox, and back
    def use(self, thing: Yours, how: str, args, kwargs):
        what = _shown_call(thing.__name__, how, args, kwargs)
        reply = self._probe(call_learner, thing.target, how, self.outward(list(args)), self.outward(dict(kwargs)),
                            self.bindings(), what=what)
        self.values.clear()  # the learner's code may have changed its values
        self.called = True
        if isinstance(reply.get("after"), dict):  # and the test's arguments, in place
            _write_back(list(args), self.inward(reply["after"].get("args")))
            _write_back(dict(kwargs), self.inward(reply["after"].get("kwargs")))
        line = self.line()
        if "raised" in reply:
            exc = _learner_exception(reply["raised"], what)
            self.calls.append((line, what, exc))
            raise exc
        value = self.inward(reply.get("value"), what.strip("`"))
        self.calls.append((line, what, value))
        return value

    def answer(self, header: dict, blobs: list) -> tuple[dict, list]:
        """Run the test's function the learner's code called (its number, its arguments), for the sandbox."""
        number = header.get("number")
        try:
            if not (type(number) is int and 0 <= number < len(self.functions)):
                raise RuntimeError("no such function of the test")
            args = self.inward(wire.decode(header.get("args", []), blobs))
            kwargs = self.inward(wire.decode(header.get("kwargs", {"__dict__": {}}), blobs))
            value = self.functions[number](*args, **kwargs)
        except Exception as exc:  # the test's function raised (an assert of a fake): the learner's code sees it
            return {"raised": {"type": _builtin_name(exc), "message": str(exc)[:400]}}, []
        out: list = []
        return {"value": wire.encode(self.outward(value), out)}, out

    def line(self) -> int | None:
        """The line of the test cell running now (None in its setup)."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self.filename:
            frame = frame.f_back  # type: ignore[assignment]
        return frame.f_lineno if frame is not None else None


def _changes_in_place(value) -> bool:
    """A list, a dict, a tuple (that may hold one), a tensor or an array of the test's (never a stand-in: asking a
    stand-in what it is cannot be answered here)."""
    return type(value) is not Yours and (isinstance(value, (list, dict, tuple, torch.Tensor))
                                         or type(value).__module__ == "numpy")


def _write_back(mine, theirs, depth: int = 0) -> None:
    """Make the test's own arguments (`mine`) what the learner's code made of them in place (`theirs`, as they came
    back): lists and dicts item by item, tensors and arrays value by value, as one process would have seen them."""
    if depth > 20 or not _changes_in_place(mine) or type(theirs) is Yours:
        return
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) != len(theirs):
        mine[:] = theirs  # grown or shrunk in place
    elif isinstance(mine, (list, tuple)) and isinstance(theirs, (list, tuple)):
        for i, (item, after) in enumerate(zip(mine, theirs)):
            if _changes_in_place(item):
                _write_back(item, after, depth + 1)
            elif isinstance(mine, list):
                mine[i] = after
    elif isinstance(mine, dict) and isinstance(theirs, dict):
        for key in [key for key in mine if key not in theirs]:
            del mine[key]
        for key, after in theirs.items():
            if key in mine and _changes_in_place(mine[key]):
                _write_back(mine[key], after, depth + 1)
            else:
                mine[key] = after
    elif isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor) and mine.shape == theirs.shape:
        with torch.no_grad():
            mine.copy_(theirs.to(mine.dtype))
    elif getattr(mine, "shape", None) == getattr(theirs, "shape", None) and \
            getattr(getattr(mine, "flags", None), "writeable", False):
        mine[...] = theirs


def _named(sent, name: str) -> bool:
    """Whether what the sandbox sent for `name` is a reference to that name (a function: no need to read it again)."""
    ref = sent.get(REF) if isinstance(sent, dict) else None
    return isinstance(ref, list) and ref[:2] == ["name", name]


def _builtin_name(exc: BaseException) -> str:
    """The name of the most specific builtin class of `exc` (the learner's code raises it)."""
    return next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")


def _shown(value) -> str:
    text = value.__name__ if type(value) is Yours else repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def _shown_call(name: str, how: str, args, kwargs) -> str:
    if how == "attr":
        return f"`{name}.{args[0]}`"
    if how == "item":
        return f"`{name}[{_shown(args[0])}]`"
    if how in ("len", "iter"):
        return f"`{'len' if how == 'len' else 'list'}({name})`"
    listed = [_shown(a) for a in args] + [f"{k}={_shown(v)}" for k, v in kwargs.items()]
    return f"`{name}({', '.join(listed)})`"


def _names_in(*codes: str) -> set[str]:
    """The names the codes use that the learner's cells may define: never one of Python's own (`isinstance`, `sum`),
    which a notebook could bind to answer for the test (the import runs a test of a notebook that defines one beside
    the learner's code)."""
    return {node.id for code in codes for node in ast.walk(ast.parse(code))
            if isinstance(node, ast.Name) and node.id not in vars(builtins)}


@functools.cache
def _nose() -> types.ModuleType:
    """nose.tools, which nbgrader's older courses import (nose itself no longer installs): unittest's assertions
    under nose's names (assertEqual as assert_equal...), ok_ and eq_."""
    class Tools(unittest.TestCase):
        maxDiff = None

        def runTest(self):  # pragma: no cover - never run
            pass

    case, tools, nose = Tools(), types.ModuleType("nose.tools"), types.ModuleType("nose")
    for name in dir(case):
        if name.startswith("assert") and "_" not in name:
            setattr(tools, re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower(), getattr(case, name))

    def ok_(expr, msg=None):
        if not expr:
            raise AssertionError(msg)

    def eq_(a, b, msg=None):
        if not a == b:
            raise AssertionError(msg or f"{a!r} != {b!r}")

    tools.ok_, tools.eq_ = ok_, eq_  # type: ignore[attr-defined]
    nose.tools = tools  # type: ignore[attr-defined]
    return nose


def _builtins() -> dict:
    """The builtins a test cell sees: Python's, where `import nose.tools` finds the stand-in when nose is missing."""
    real = builtins.__import__

    def importer(name, globals=None, locals=None, fromlist=(), level=0):
        if name in ("nose", "nose.tools") and level == 0:
            try:
                return real(name, globals, locals, fromlist, level)
            except ImportError:
                nose = _nose()
                return nose.tools if fromlist and name == "nose.tools" else nose
        return real(name, globals, locals, fromlist, level)

    return {**vars(builtins), "__import__": importer}


# -- the check -------------------------------------------------------------------------------------

def notebook_test(submission, grade_id: str, code: str, *, setup: str = "", mode: str = "judge",
                  locked: dict[str, str] | None = None) -> None:
    """The nbgrader test cell `grade_id` (its `code`, after `setup`: the earlier cells' lines it needs) as a check:
    it passes when the cell runs to its end without an error, after the learner's cells above it, of which the
    read-only ones (`locked`: grade_id -> the teacher's code) run as the teacher wrote them. `mode`: "judge" (the cell
    runs in the judge, the learner's code in the sandbox) or "sandbox" (both in the sandbox, as nbgrader runs them)."""
    part = submission.before(grade_id, locked)
    filename = f"<test {grade_id}>"
    hidden = regions(code, BEGIN_HIDDEN, END_HIDDEN)
    if mode == "sandbox":
        reply = part.probe(run_test_here, filename, setup, code, what=Text("the test {id}", "测试 {id}", id=grade_id))
        if "raised" in reply:
            _failed_here(grade_id, code, hidden, reply["raised"].get("line"), _raised_in_test(reply["raised"]), [])
        _ends_in_a_number(reply.get("value"))
        return
    if mode != "judge":
        raise ValueError(f"notebook_test(mode={mode!r}): the mode is 'judge' or 'sandbox'")
    try:
        body, last = _compiled(code, filename)
        names = _names_in(setup, code)
    except SyntaxError as exc:
        fail("This nbgrader test was not converted to a check (its code is not Python: {error}): it fails until the "
             "teacher rewrites it.",
             "这个 nbgrader 测试没有被转换成检查（它的代码不是 Python：{error}）：在老师改写它之前，它总是不通过。",
             error=verbatim(f"{exc.msg}, line {exc.lineno}"), key="not-converted")
    try:
        run = _Run(part, filename, names)
    except _Stop as stop:  # the cells above the test could not be loaded (a timeout, a crash)
        raise stop.problem from None
    namespace = run.namespace
    dict.update(namespace, {"__builtins__": _builtins(), "__name__": "__main__"})
    value = None
    try:
        for statement in ast.parse(setup).body if setup.strip() else ():
            try:
                exec(compile(ast.Module([statement], []), f"{filename} setup", "exec", dont_inherit=True), namespace)
            except Exception:  # an earlier test cell failed there too: what it bound so far is what it left
                pass
        exec(body, namespace)
        value = eval(last, namespace) if last is not None else None
    except _Stop as stop:
        raise stop.problem from None
    except OUTCOMES as exc:  # pytest.raises' "DID NOT RAISE", pytest.fail(): the test failed
        if str(exc).startswith("Timeout"):  # pytest-timeout's: the check ran past its time
            raise
        _failed_here(grade_id, code, hidden, _test_line(exc, filename), AssertionError(str(exc)), run.calls)
    except CannotJudge as exc:
        fail("This test cannot be decided by the grader: {why}. Your teacher can run it beside your code instead "
             "(mode=\"sandbox\").", "评分器无法判定这个测试：{why}。老师可以改为让它在你的代码旁边运行"
             "（mode=\"sandbox\"）。", why=exc.text if _public_line(_test_line(exc, filename), hidden) else
             Text("the test compares an object of yours, or asks what it is, which only your code can answer",
                  "测试比较了你的一个对象，或询问它是什么，而这只有你的代码能回答"), key="not-judgeable")
    except Exception as exc:  # the test failed (an assert), or raised (the learner's code did, or the test's own)
        _failed_here(grade_id, code, hidden, _test_line(exc, filename), exc, run.calls)
    _ends_in_a_number(value)


def _public_line(line: int | None, hidden) -> bool:
    """Whether the test cell's `line` is none of its hidden lines (a line not known: where the cell has none)."""
    return not any(first <= line <= last for first, last in hidden) if line else not hidden


def _test_line(exc: BaseException, filename: str) -> int | None:
    """The line of the test cell the exception came through last."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _raised_in_test(info: dict) -> BaseException:
    """The exception that ended a test cell run in the sandbox: the learner's where it came from their code, else the
    test's own (its assert)."""
    if info.get("frames"):
        return _learner_exception(info, "")
    if ["_pytest.outcomes", "OutcomeException"] in info.get("classes", []):  # pytest.raises' "DID NOT RAISE"
        return AssertionError(str(info.get("message", "")))
    try:
        return _judge_class(info.get("classes"))(str(info.get("message", "")))
    except Exception:  # a class whose constructor wants more
        return Exception(str(info.get("message", "")))


def _ends_in_a_number(value) -> None:
    """nbgrader reads a test cell whose result is a number as partial credit, which a check does not give."""
    if type(value) is not Yours and isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        fail("This nbgrader test was not converted to a check (it ends in the number {value:g}, which nbgrader reads "
             "as partial credit; a check passes or fails whole): it fails until the teacher rewrites it.",
             "这个 nbgrader 测试没有被转换成检查（它以数字 {value:g} 结尾，nbgrader 把它当作部分得分；而检查只有通过"
             "或不通过）：在老师改写它之前，它总是不通过。", value=value, key="not-converted")


def _failed_here(grade_id: str, code: str, hidden, line: int | None, exc: BaseException, calls) -> None:
    """Fail the check for the exception that ended the test cell at `line`, with what the learner's code did. At a
    hidden line (or one not known, in a test that has hidden lines) the message names the test and the error's class
    only: no call of the test's, no value, no message that could show a hidden input."""
    secret = not _public_line(line, hidden)
    if isinstance(exc, LearnerRaised) and exc.info.get("not_started"):
        raise LearnerError(Text("Not started: {what} still raises NotImplementedError (fill in its TODO).",
                                "尚未开始：{what} 仍然抛出 NotImplementedError（请完成其中的 TODO）。",
                                what=verbatim(exc.what) if exc.what and not secret else Text("your code", "你的代码")),
                           exc_type="NotImplementedError", not_started=True)
    if not line:
        at = Text("", "")
    elif secret:
        at = Text(" at a hidden line", "（在一行隐藏的测试处）")
    else:
        at = Text(" at `{code}`", "（在 `{code}` 处）", code=verbatim(code.split("\n")[line - 1].strip()[:120]))
    if isinstance(exc, LearnerRaised):
        kind = exc.info.get("type") or "Exception"
        error = quoted(kind if secret else f"{kind}: {exc.info.get('message', '')}".rstrip(": ")[:300])
        # at a hidden line, the class alone: a message (Python's own too: "index 10 is out of bounds") may show inputs
        what = verbatim(exc.what) if exc.what and not secret else Text("your code", "你的代码")
        fail("The test {id} failed{at}: {what} raised {error}{where}.",
             "测试 {id} 未通过{at}：{what} 抛出了异常 {error}{where}。", id=grade_id, at=at, what=what, error=error,
             where=where(exc.info), key=f"raised-{exc.info.get('type') or 'error'}")
    said = Text("", "") if secret else _last_call([c for c in calls if c[0] == line] or
                                                  [c for c in calls[-1:] if c[0] and _public_line(c[0], hidden)])
    if isinstance(exc, AssertionError):
        said_by_test = "" if secret else " ".join(str(exc).split())[:300]
        message = Text(": {message}", "：{message}", message=quoted(said_by_test)) if said_by_test else Text("", "")
        fail("The test {id} failed{at}{message}.{said}", "测试 {id} 未通过{at}{message}。{said}", id=grade_id, at=at,
             message=message, said=said, key="test-failed")
    fail("The test {id} could not finish{at}: {error}.{said}", "测试 {id} 无法完成{at}：{error}。{said}", id=grade_id,
         at=at, error=quoted(type(exc).__name__ if secret else f"{type(exc).__name__}: {exc}"[:300]), said=said,
         key="missing-name" if type(exc) is NameError else "test-error")


def _last_call(calls) -> Text:
    """' squares(10) returned [0, 1, 4].': the last of `calls` (the learner's), which the failure follows."""
    if not calls or type(calls[-1][2]) is not Yours and isinstance(calls[-1][2], BaseException):
        return Text("", "")
    _, what, value = calls[-1]
    return Text(" {what} returned {value}.", "{what} 返回了 {value}。", what=verbatim(what),
                value=verbatim(_shown(value)))


def not_converted(why: str, zh: str | None = None) -> None:
    """Fail loudly: the nbgrader test this check stands for could not be converted faithfully (`why`, and in Chinese
    `zh`)."""
    fail("This nbgrader test was not converted to a check ({why}): it fails until the teacher rewrites it.",
         "这个 nbgrader 测试没有被转换成检查（{why}）：在老师改写它之前，它总是不通过。",
         why=Text(why, zh) if zh else verbatim(why), key="not-converted")
