"""Probes that travel as code: what a sandbox started from the zygote needs of the check modules, and no more.

Judge side, `bundle` takes the probes of the modules a grading uses and collects, transitively, what each one
names at module level: the functions and classes of its own module go as their source text (decorators and all)
and as that text compiled (marshal, once, in the judge's parent), modules and the objects of other modules as
references to import, plain constants as literals. Sandbox side, `install` runs that code, in the file's order,
over a stand-in module holding only those names, so the sandbox never imports a check module, and no reference
computation of it (nothing a probe does not use) is there.
"""

from __future__ import annotations

import __future__
import ast
import base64
import functools
import importlib
import inspect
import linecache
import marshal
import os
import sys
import textwrap
import types

import torch


REFERENCES = {"grader.checking.gradients"}  # never in a sandbox, not even rebuilt: the reference computations


class NotShippable(Exception):
    """A probe names a module-level value that cannot travel as code (the check module's author must change it)."""


def _literal(value) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value and type(ast.literal_eval(repr(value))) is type(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _names(tree: ast.AST) -> set[str]:
    """Every name the code reads (its decorators, defaults, bases and bodies)."""
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


@functools.lru_cache(maxsize=64)
def _top_level(filename: str, _version: tuple[int, int]) -> dict[str, tuple[int, str, frozenset[str]]]:
    """The functions and classes defined at the top of a file: name -> (first line, source with its decorators,
    the names it reads). One parse per file, where `inspect.getsource` would parse it again for every definition."""
    lines = linecache.getlines(filename)
    found = {}
    for node in ast.parse("".join(lines)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.end_lineno:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found[node.name] = (first, "".join(lines[first - 1:node.end_lineno]), frozenset(_names(node)))
    return found


def _definition(value, name: str, module: str) -> tuple[int, str, set[str]]:
    """Where `value` (module `module`'s function or class `name`) is defined: its first line, its source, the names
    it reads."""
    filename = getattr(sys.modules[module], "__file__", None) or ""
    try:
        stat = os.stat(filename)
        top = _top_level(filename, (stat.st_mtime_ns, stat.st_size))
    except (OSError, SyntaxError, ValueError):
        top = {}
    if getattr(value, "__qualname__", None) == name and name in top:
        line, source, used = top[name]
        return line, source, set(used)
    source = textwrap.dedent(inspect.getsource(value))
    return inspect.getsourcelines(value)[1], source, _names(ast.parse(source))


def _defined_here(value, module: str) -> bool:
    return (isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == module
            and getattr(inspect.unwrap(value), "__module__", None) == module)


def _reference(name: str, value, module: str, secret: set[str]):
    """How `value` (module `module`'s global `name`) travels: ["module", name], ["attr", module, qualname],
    ["literal", repr] or ["def"] (its source goes along)."""
    if isinstance(value, types.ModuleType):
        if value.__name__ in secret:
            raise NotShippable(f"{module}.{name} is the module {value.__name__}, which a sandbox must not import")
        return ["module", value.__name__]
    if _defined_here(value, module):
        return ["def"]
    if isinstance(value, torch.dtype):
        return ["attr", "torch", str(value).removeprefix("torch.")]
    if _literal(value):
        return ["literal", repr(value)]
    owner, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(owner, str) and isinstance(qualname, str) and "<" not in qualname and owner in sys.modules:
        found: object = sys.modules[owner]
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is value:
            if owner in REFERENCES:
                raise NotShippable(f"{module}.{name} is {owner}.{qualname}: reference computations stay in the judge")
            return ["attr", owner, qualname]
    raise NotShippable(f"{module}.{name} (a {type(value).__name__}) cannot travel to the sandbox as code")


def bundle(probes: dict, modules: set[str], secret: set[str]) -> dict:
    """What `install` needs to rebuild the probes of `modules` (keys of `probes`, `module.name`): per module its
    future flags, the references it needs and its own definitions used (source and code); `secret` are the modules a
    sandbox must not import (a reference into one of the `modules` is rebuilt instead)."""
    chosen = {key: fn for key, fn in probes.items() if fn.__module__ in modules}
    return _bundle(tuple(sorted(chosen)), tuple(sorted(modules | secret)), tuple(id(fn) for fn in chosen.values()))


@functools.lru_cache(maxsize=64)
def _bundle(keys: tuple[str, ...], secret_names: tuple[str, ...], _ids: tuple[int, ...]) -> dict:
    from grader.sandbox.probes import PROBES

    secret = set(secret_names)
    shipped: dict[str, dict] = {}
    todo = [(PROBES[key].__module__, PROBES[key].__name__) for key in keys]
    while todo:
        module, name = todo.pop()
        entry = shipped.setdefault(module, {"future": 0, "refs": {}, "defs": {}})
        if name in entry["refs"]:
            continue
        namespace = vars(sys.modules[module])
        if name not in namespace:
            continue  # a builtin, or a name bound later: the stand-in has what the module had
        value = namespace[name]
        ref = _reference(name, value, module, secret)
        if ref[0] == "attr" and ref[1] in secret:  # a helper of another module the sandbox must not import: rebuilt
            todo.append((ref[1], ref[2].split(".")[0]))
        entry["refs"][name] = ref
        if ref == ["def"]:
            line, source, used = _definition(value, name, module)
            entry["future"] = getattr(namespace.get("annotations"), "compiler_flag", 0) \
                if isinstance(namespace.get("annotations"), __future__._Feature) else 0
            # compiled here once: a sandbox loads the code (compiling took it 2-10 ms)
            code = compile(source, f"<probe code of {module}>", "exec", flags=entry["future"], dont_inherit=True)
            entry["defs"][name] = [line, source, base64.b64encode(marshal.dumps(code)).decode("ascii")]
            todo.extend((module, other) for other in used)
    return {"modules": shipped, "probes": list(keys)}


def install(shipped: dict, registry: dict) -> dict[str, types.ModuleType]:
    """Sandbox side: rebuild the shipped modules as stand-ins (their definitions run in the file's order); the probes
    register themselves in `registry` as they are defined. Returns the stand-ins by module name."""
    modules = shipped.get("modules", {})
    stand_ins = {name: types.ModuleType(name) for name in modules}
    done: set[str] = set()

    def build(name: str) -> None:
        if name in done:
            return
        done.add(name)
        entry, namespace = modules[name], vars(stand_ins[name])
        for key, ref in entry["refs"].items():
            if ref[0] == "module":
                namespace[key] = importlib.import_module(ref[1])
            elif ref[0] == "literal":
                namespace[key] = ast.literal_eval(ref[1])
            elif ref[0] == "attr":
                if ref[1] in stand_ins:
                    build(ref[1])
                    value = stand_ins[ref[1]]
                else:
                    value = importlib.import_module(ref[1])
                for part in ref[2].split("."):
                    value = getattr(value, part)
                namespace[key] = value
        for _, _, code in sorted(entry["defs"].values()):
            exec(marshal.loads(base64.b64decode(code)), namespace)

    for name in modules:
        build(name)
    missing = [key for key in shipped.get("probes", []) if key not in registry]
    if missing:
        raise NotShippable(f"probes not rebuilt: {', '.join(missing)}")
    return stand_ins
