"""`grade validate --mutants`: prove the checks against generated wrong answers.

Each mutant is the reference solution with one learner slip made by an AST operator (the standard
library's `ast`, rewritten with `ast.unparse`: a slip changes code, not layout, so a concrete syntax
tree such as libcst's buys nothing here). The operators come in families, each scored on its own: the slips
(here), and the spec, device and edge families (families.py): a statement's rule broken with right values, a GPU
branch, an edge input. The mutants are graded in a warm batch (`grade batch`'s
forked judges); a mutant that still scores full is a survivor: a slip the checks miss. An author kills
it with a check, or marks it equivalent (the same behaviour as the solution) with a reason in
<mistakes folder>/../mutants/<exercise>.toml:

    [equivalent]
    "sgd_step.drop-call.3f2a9c" = "zero_grad after the last step: the caller never reads w.grad"

A mutant's id names its function, its operator and a digest of the code it changed, so ids survive
edits elsewhere in the solution.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import sys
import tempfile
from collections.abc import Iterator, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.author import causes, families
from grader.course.exercises import Exercise
from grader.judge.result import Result
from grader.text import Text

MINIMUM = 0.95  # the mutation score each exercise must reach

# -- the slips ------------------------------------------------------------------------------------

SIGN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
ORDERED = (ast.Sub, ast.Div, ast.MatMult, ast.Pow, ast.FloorDiv, ast.Mod)  # operands whose order matters
COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
           ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
REDUCTION = {"sum": "mean", "mean": "sum", "max": "min", "min": "max", "amax": "amin", "amin": "amax",
             "argmax": "argmin", "argmin": "argmax", "softmax": "log_softmax", "log_softmax": "softmax"}
DROPPED_CALL = {"detach", "item", "clone", "contiguous", "float", "double", "cpu", "cuda", "to", "t", "squeeze",
                "unsqueeze", "flatten", "train", "eval", "requires_grad_", "retain_grad", "zero_grad"}
OUT_OF_PLACE = {"add", "sub", "mul", "div", "clamp", "relu", "exp", "sigmoid", "tanh", "neg", "abs", "sqrt",
                "pow", "log", "masked_fill", "lerp", "addcmul", "addcdiv"}
SHARING = {"tensor": "as_tensor", "as_tensor": "tensor", "from_numpy": "tensor"}  # copy <-> share memory
STRINGS = {"cuda": "cpu", "cpu": "cuda", "sum": "mean", "mean": "sum", "none": "mean"}
DTYPES = {"float32": "float64", "float64": "float32", "float": "double", "double": "float", "float16": "bfloat16",
          "bfloat16": "float16", "half": "bfloat16", "long": "int32", "int64": "int32", "int32": "int64"}


def _expression_slips(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(operator, replacement) for each slip of one expression node."""
    if isinstance(node, ast.BinOp):
        if type(node.op) in SIGN:
            yield "flip-operator", ast.BinOp(node.left, SIGN[type(node.op)](), node.right)
        if isinstance(node.op, ORDERED):
            yield "swap-operands", ast.BinOp(node.right, node.op, node.left)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        yield "drop-unary", node.operand
    elif isinstance(node, ast.BoolOp):
        yield "and-or", ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
        yield "flip-comparison", ast.Compare(node.left, [COMPARE[type(node.ops[0])]()], node.comparators)
    elif isinstance(node, ast.IfExp):
        yield "invert-condition", ast.IfExp(ast.UnaryOp(ast.Not(), node.test), node.body, node.orelse)
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            yield "flip-bool", ast.Constant(not value)
        elif isinstance(value, int):
            yield "off-by-one", ast.Constant(value + 1)
            if value != 0:
                yield "off-by-one", ast.Constant(value - 1)
        elif isinstance(value, str) and value in STRINGS:
            yield "string-literal", ast.Constant(STRINGS[value])
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch" \
            and node.attr in DTYPES:
        yield "dtype", ast.Attribute(node.value, DTYPES[node.attr], node.ctx)
    elif isinstance(node, ast.Call):
        yield from _call_slips(node)


def _call_slips(node: ast.Call) -> Iterator[tuple[str, ast.AST]]:
    func = node.func
    if isinstance(func, ast.Attribute):
        name = func.attr
        if name in SHARING and isinstance(func.value, ast.Name) and func.value.id == "torch":
            yield "copy-share", ast.Call(ast.Attribute(func.value, SHARING[name], func.ctx), node.args, node.keywords)
        if name in REDUCTION:
            yield "reduction", ast.Call(ast.Attribute(func.value, REDUCTION[name], func.ctx), node.args, node.keywords)
        on_module = isinstance(func.value, ast.Name) and func.value.id in ("torch", "nn", "F")
        if name in DROPPED_CALL and not on_module:
            yield "drop-call", func.value
        if name.endswith("_") and not name.endswith("__") and name[:-1] in OUT_OF_PLACE:
            yield "out-of-place", ast.Call(ast.Attribute(func.value, name[:-1], func.ctx), node.args, node.keywords)
        if name in OUT_OF_PLACE and not on_module:
            yield "in-place", ast.Call(ast.Attribute(func.value, name + "_", func.ctx), node.args, node.keywords)
    positional = [a for a in node.args if not isinstance(a, ast.Starred)]
    if len(positional) == len(node.args) >= 2:
        i = 1 if len(node.args) == 3 else 0  # where(c, a, b): the branches; f(a, b): the operands
        args = list(node.args)
        args[i], args[i + 1] = args[i + 1], args[i]
        yield "swap-arguments", ast.Call(func, args, node.keywords)
    for k, keyword in enumerate(node.keywords):
        if keyword.arg is not None:
            yield "drop-keyword", ast.Call(func, node.args, node.keywords[:k] + node.keywords[k + 1:])


def _statement_slips(body: list[ast.stmt], i: int, numbers: set[str]) -> Iterator[tuple[str, list[ast.stmt]]]:
    """(operator, statements replacing body[i:i+2]) for slips of whole statements."""
    stmt = body[i]
    docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    if isinstance(stmt, (ast.Expr, ast.AugAssign)) and not docstring:
        yield "drop-statement", [ast.Pass()]
    if isinstance(stmt, ast.With):
        yield "drop-with", stmt.body  # the block without its context (no_grad, autocast, ...)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and not _number(stmt, numbers):
        yield "out-of-place", [ast.Assign([stmt.target], ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op,
                                                                   stmt.value))]
        if type(stmt.op) in SIGN:
            yield "flip-operator", [ast.AugAssign(stmt.target, SIGN[type(stmt.op)](), stmt.value)]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.left, ast.Name) \
            and stmt.value.left.id == stmt.targets[0].id:
        yield "in-place", [ast.AugAssign(ast.Name(stmt.targets[0].id, ast.Store()), stmt.value.op, stmt.value.right)]
    if isinstance(stmt, (ast.If, ast.While)):
        yield "invert-condition", [type(stmt)(ast.UnaryOp(ast.Not(), stmt.test), stmt.body, stmt.orelse)]
    pair = body[i:i + 2]
    if len(pair) == 2 and not docstring and not isinstance(pair[1], ast.Return) and _depend(*pair) \
            and any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in pair) \
            and not any(isinstance(s, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) for s in pair):
        yield "move-statement", [body[i + 1], stmt]


def _path(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of names and attributes (a subscript stands for its value); None otherwise."""
    if isinstance(node, ast.Subscript):
        return _path(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _path(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


ANYTHING = "*"  # a call whose effects are unknown (step, backward, zero_grad, seeding...)
LOCAL_EFFECT = {"append", "extend", "insert", "update", "pop"}


def _effects(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """(what `stmt` writes, what it reads), as paths; calls inside expressions count as reads only, a call
    made as a statement writes its receiver (an in-place method, `append`) or anything."""
    writes: set[str] = set()
    reads: set[str] = set()
    inner = {id(n.value) for n in ast.walk(stmt) if isinstance(n, (ast.Attribute, ast.Subscript))}  # `m` of `m.bias`
    for node in ast.walk(stmt):
        path = _path(node) if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) else None
        if path and id(node) not in inner:
            (writes if isinstance(getattr(node, "ctx", None), ast.Store) else reads).add(path)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            receiver = getattr(func, "value", None)
            on_module = receiver is not None and _path(receiver) in ("torch", "nn.init", "torch.nn.init", "init")
            target = node.value.args[0] if (on_module or receiver is None) and node.value.args else receiver
            local = _path(target) if (name in LOCAL_EFFECT or name.endswith("_")) and target is not None else None
            writes.add(local or ANYTHING)
    return writes, reads


def _depend(a: ast.stmt, b: ast.stmt) -> bool:
    """Whether swapping `a` and `b` may change what runs: one writes what the other reads or writes, or both
    have unknown effects, or one has them and the other reads a gradient."""
    (wa, ra), (wb, rb) = _effects(a), _effects(b)
    grads = lambda paths: any(p.endswith(".grad") or ".grad." in p for p in paths)  # noqa: E731
    if ANYTHING in wa and (ANYTHING in wb or grads(rb)) or ANYTHING in wb and grads(ra):
        return True
    return _overlap(wa - {ANYTHING}, rb | wb) or _overlap(wb - {ANYTHING}, ra)


def _overlap(xs: set[str], ys: set[str]) -> bool:
    """Whether a path of `xs` is a path of `ys`, or lies inside one, or holds one."""
    return any(x == y or y.startswith(x + ".") or x.startswith(y + ".") for x in xs for y in ys)


def _numbers(tree: ast.AST) -> set[str]:
    """Names that some assignment sets to a number literal (`total, count = 0.0, 0`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple) and \
                    isinstance(node.value, ast.Tuple) else [(target, node.value)]
                found |= {t.id for t, v in pairs if isinstance(t, ast.Name) and isinstance(v, ast.Constant)}
    return found


def _number(stmt: ast.AugAssign, numbers: set[str]) -> bool:
    """Whether an `x += ...` accumulates a Python number (then `x = x + ...` is the same): x starts as a
    number literal, or what is added is `.item()`, `len()` or `.size()`."""
    return getattr(stmt.target, "id", None) in numbers or any(
        isinstance(n, ast.Call) and (getattr(n.func, "attr", None) in ("item", "size")
                                     or getattr(n.func, "id", None) == "len")
        for n in ast.walk(stmt.value))


# -- mutants --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mutant:
    id: str  # function.operator.digest
    line: int
    before: str
    after: str
    code: str
    family: str = "slip"  # slip, spec, device or edge (families.py)
    operator: str = ""
    context: str = ""  # the header of the statement the change sits in (a `for` line, not its body)

    @property
    def changed(self) -> set[str]:
        """The words of the code this mutant changed, where the mistake it makes lies (causes.py)."""
        return causes.words("\n".join((self.before, self.after, self.context)))

    @property
    def description(self) -> str:
        return f"line {self.line}: `{_short(self.before)}` -> `{_short(self.after)}`"


def _short(code: str, width: int = 70) -> str:
    code = " ".join(code.split())
    return code if len(code) <= width else code[:width - 3] + "..."


def _sites(node: ast.AST, path: tuple = (), function: str = "<module>") -> Iterator[tuple[tuple, ast.AST, str]]:
    """(path from the root, node, enclosing function) for every node, in a fixed order."""
    yield path, node, function
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        function = node.name if function == "<module>" else f"{function}.{node.name}"
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _sites(item, path + ((name, i),), function)
        elif isinstance(value, ast.AST):
            yield from _sites(value, path + ((name, None),), function)


def _at(tree: ast.AST, path: tuple) -> tuple[ast.AST, str, int | None]:
    """The parent, field and index of the node at `path`."""
    parent = tree
    for name, i in path[:-1]:
        parent = getattr(parent, name) if i is None else getattr(parent, name)[i]
    return parent, path[-1][0], path[-1][1]


def given_code(stub: str) -> set[tuple[str, str]]:
    """(function, statement) for each statement of the stub, as `ast.dump` writes it: the solution's statements
    that the stub already holds are code handed to the learner, not mutated."""
    return {(function, ast.dump(node)) for _, node, function in _sites(ast.parse(stub)) if isinstance(node, ast.stmt)}


def _parameters(tree: ast.AST) -> dict[str, list[ast.arg]]:
    """Each function's parameters, by the name `_sites` gives the code inside it (`fit`, `Stack.forward`)."""
    found = {}
    for _, node, function in _sites(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name if function == "<module>" else f"{function}.{node.name}"
            found[name] = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
    return found


def generate(code: str, given: Set[tuple[str, str]] = frozenset(), rules: dict[str, list[str]] | None = None
             ) -> list[Mutant]:
    """The mutants of `code`, each one slip, in a fixed order; ids are stable across unrelated edits.
    Statements in `given` (see `given_code`) are left alone; `rules` (function -> the statement's rules for it,
    exercise.toml's [rules]) choose the spec family's mutants."""
    rules = rules or {}
    tree = ast.parse(code)
    parameters = _parameters(tree)
    original = ast.unparse(tree)
    mutants, seen_code, seen_ids = [], {original}, set()
    skip = {id(n) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):  # a signature (defaults, annotations) is the stub's, not the learner's
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip |= {id(n) for part in (node.args, node.returns) if part for n in ast.walk(part)}
    handed = set()  # the stub's code: only a rule of the statement is broken there (keep SGD, keep the dtype...)
    for _, node, function in _sites(tree):
        if isinstance(node, ast.stmt) and (function, ast.dump(node)) in given:
            handed |= {id(n) for n in ast.walk(node)}
    numbers = _numbers(tree)
    at_import = families.imports_torch(tree)
    for path, node, function in _sites(tree):
        if id(node) in skip or not path:
            continue
        slips: list[tuple[str, tuple[str, Any]]] = []
        args = parameters.get(function, [])
        params, stated = [a.arg for a in args], set(rules.get(function, ()))
        arrays = {a.arg for a in args if a.annotation is not None and "ndarray" in ast.unparse(a.annotation)}
        mine = id(node) not in handed
        if isinstance(node, ast.stmt) and path[-1][1] is not None:
            parent, name, i = _at(tree, path)
            assert i is not None  # a statement in a body has an index there
            if mine:
                slips += [(op, ("stmts", new)) for op, new in _statement_slips(getattr(parent, name), i, numbers)]
            if mine and function != "<module>":
                slips += [(op, ("stmts", new)) for op, new in families.device_statement_slips(node, params)]
                slips += [(op, ("stmts", new)) for op, new in families.edge_statement_slips(node)]
            if isinstance(node, ast.FunctionDef):
                own = node.name if function == "<module>" else f"{function}.{node.name}"
                slips += [(op, ("function", new)) for op, new in
                          families.spec_function_slips(node, set(rules.get(own, ())))]
        if isinstance(node, ast.expr) and not isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            if mine:
                slips += [(op, ("expr", new)) for op, new in _expression_slips(node)]
                slips += [(op, ("expr", new)) for op, new in families.device_expression_slips(node)]
                if at_import and function != "<module>":
                    slips += [(op, ("expr", new)) for op, new in families.device_import_slips(node)]
                slips += [(op, ("expr", new)) for op, new in families.edge_expression_slips(node, params, arrays)]
            slips += [(op, ("expr", new)) for op, new in families.spec_expression_slips(node, stated)]
        for operator, (kind, new) in slips:
            named = function
            if kind == "function":  # a whole function changed: named by it, shown by the lines that changed
                named = node.name if function == "<module>" else f"{function}.{node.name}"  # type: ignore[attr-defined]
                kind, new = "stmts", [new]
            mutated = copy.deepcopy(tree)
            parent, name, i = _at(mutated, path)
            if kind == "stmts":
                assert i is not None
                body = getattr(parent, name)
                span = 2 if operator == "move-statement" else 1
                before = "\n".join(ast.unparse(s) for s in body[i:i + span])
                new_nodes = copy.deepcopy(new)
                body[i:i + span] = new_nodes
            else:
                before = ast.unparse(node)
                new_nodes = [copy.deepcopy(new)]
                if i is None:
                    setattr(parent, name, new_nodes[0])
                else:
                    getattr(parent, name)[i] = new_nodes[0]
            if operator.endswith("-at-import"):
                families.with_device_at_import(mutated)
            try:
                mutant_code = ast.unparse(ast.fix_missing_locations(mutated))
                after = "\n".join(ast.unparse(n) for n in new_nodes)
                compile(mutant_code, "<mutant>", "exec")
            except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
                continue
            if mutant_code in seen_code:
                continue
            seen_code.add(mutant_code)
            if named != function:
                before, after = _changed_lines(before, after)
            digest = hashlib.sha1(f"{named}|{operator}|{before}|{after}".encode()).hexdigest()[:6]
            mutant_id = f"{named}.{operator}.{digest}"
            n = 2
            while mutant_id in seen_ids:  # the same slip twice in one function: numbered in order
                mutant_id = f"{named}.{operator}.{digest}-{n}"
                n += 1
            seen_ids.add(mutant_id)
            mutants.append(Mutant(mutant_id, getattr(node, "lineno", 0), before, after, mutant_code,
                                  families.family(operator), operator, _context(tree, path)))
    return mutants


def _context(tree: ast.AST, path: tuple) -> str:
    """The code of the innermost statement holding the node at `path`; of a compound statement, its header only."""
    node, found = tree, None
    for name, i in path:
        node = getattr(node, name) if i is None else getattr(node, name)[i]
        if isinstance(node, ast.stmt):
            found = node
    if found is None:
        return ""
    header = copy.copy(found)
    for field in ("body", "orelse", "finalbody", "handlers"):
        if isinstance(getattr(header, field, None), list):
            setattr(header, field, [])
    return ast.unparse(header) if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
        else ""


def _changed_lines(before: str, after: str) -> tuple[str, str]:
    """The lines of a function that a mutant removed and added, for its description and id."""
    import difflib

    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    return ("\n".join(line[2:].strip() for line in diff if line.startswith("- ")),
            "\n".join(line[2:].strip() for line in diff if line.startswith("+ ")))


def mutants_of(exercise: Exercise) -> list[Mutant]:
    """The mutants of the exercise's reference solution, but for the code its stub hands over as it is."""
    stub = exercise.stub.read_text(encoding="utf-8")
    return generate(exercise.solution.read_text(encoding="utf-8"), given_code(stub), exercise.rules)


# -- equivalence marks ----------------------------------------------------------------------------

def marks_file(exercise: Exercise) -> Path:
    return exercise.home.mistakes_dir.parent / "mutants" / f"{exercise.name}.toml"


def equivalent_marks(exercise: Exercise) -> dict[str, str]:
    """mutant id -> the author's reason it behaves as the solution does."""
    path = marks_file(exercise)
    if not path.is_file():
        return {}
    return {str(k): str(v) for k, v in tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", {}).items()}


# -- grading them ---------------------------------------------------------------------------------

def run_mutants(exercises: list[Exercise], *, seeds: Sequence[int] = (0,), workers: int = 2,
                only: set[str] | None = None, limit: int | None = None, device: str = "cpu",
                kinds: Set[str] | None = None) -> list[dict]:
    """Grade every mutant of each exercise's solution with each seed, in a warm batch; return per exercise
    {exercise, name, total, killed, equivalent, survivors: [{id, description}], unmarked..., score,
    families: {family: {total, killed, judged, score}}, false_causes: [{id, description, blamed}]}. A mutant is
    killed when every seed scores it less than full; a false cause is a mutant with a failed check ({check, key,
    message} in `blamed`) that names a mistake the mutant does not make (causes.py); `only` picks mutants by id,
    `kinds` by family, `limit` takes the first few (a fast sample)."""
    from grader.judge.job import Job
    from grader.judge.pool import grade_all
    from grader.judge.grading import prewarm

    prewarm(exercises)
    reports = []
    with tempfile.TemporaryDirectory(prefix="torch-katas-mutants-") as tmp:
        jobs, chosen = [], {}
        for exercise in exercises:
            mutants = mutants_of(exercise)
            if only is not None:
                mutants = [m for m in mutants if m.id in only]
            if kinds is not None:
                mutants = [m for m in mutants if m.family in kinds]
            mutants = mutants[:limit] if limit else mutants
            chosen[exercise.id] = mutants
            folder = Path(tmp) / exercise.name
            folder.mkdir()
            for n, mutant in enumerate(mutants):
                path = folder / f"m{n:04d}" / f"{exercise.name}.py"
                path.parent.mkdir()
                path.write_text(mutant.code, encoding="utf-8")
                jobs.append(Job(student=mutant.id, exercise=exercise, path=path, sha256=""))
        results: dict[tuple[str, str], list[Result]] = {}

        def record(result: Result, job: Job) -> None:
            results.setdefault((job.exercise.id, job.student), []).append(result)

        for seed in seeds:
            grade_all(jobs, workers, record, {"seed": seed, "device": device})
    for exercise in exercises:
        marks = equivalent_marks(exercise)
        row: dict[str, Any] = {"exercise": exercise.id, "name": exercise.name, "killed": 0, "equivalent": [],
                               "survivors": [], "failures": [], "stale_marks": [], "families": {},
                               "false_causes": []}
        for mutant in chosen[exercise.id]:
            graded = results.get((exercise.id, mutant.id), [])
            tally = row["families"].setdefault(mutant.family, {"total": 0, "killed": 0, "judged": 0})
            tally["total"] += 1
            entry = {"id": mutant.id, "family": mutant.family, "description": mutant.description}
            if any(r.grader_failure for r in graded):
                row["failures"].append(entry)
                continue
            blamed = {(c.id, c.key): c.message.render("en") for r in graded for c in r.checks if not c.passed}
            blames = causes.false_causes(mutant.changed, mutant.operator,
                                         [(check, key, said) for (check, key), said in blamed.items()])
            if blames:
                row["false_causes"].append({**entry, "blamed": blames})
            if graded and not any(r.full for r in graded):
                row["killed"] += 1
                tally["killed"] += 1
            elif mutant.id in marks:
                row["equivalent"].append({**entry, "reason": marks[mutant.id]})
                continue
            else:
                row["survivors"].append({**entry, "seeds": [r.seed for r in graded if r.full]})
            tally["judged"] += 1
        for tally in row["families"].values():
            tally["score"] = tally["killed"] / tally["judged"] if tally["judged"] else 1.0
        if only is None and not limit and kinds is None:
            ids = {m.id for m in chosen[exercise.id]}
            row["stale_marks"] = sorted(set(marks) - ids)
        row["total"] = len(chosen[exercise.id])
        judged = row["total"] - len(row["equivalent"]) - len(row["failures"])
        row["score"] = row["killed"] / judged if judged else 1.0
        reports.append(row)
    return reports


def render_mutants(reports: list[dict], minimum: float, lang: str = "en") -> str:
    """The reports as text, in `lang` (a mutant's id and its change are code, shown as they are)."""
    def say(en: str, zh: str, **values) -> str:
        return Text(en, zh, **values).render(lang)

    def by_family(tallies: dict) -> str:
        return say("by family: ", "按族：") + ", ".join(
            f"{say(f, FAMILY_ZH[f])} {t['score']:.0%} ({t['killed']}/{t['judged']})" if t["judged"] else
            f"{say(f, FAMILY_ZH[f])} - ({say('{n} equivalent', '{n} 个等价', n=t['total'])})"
            for f, t in sorted(tallies.items(), key=lambda item: families.FAMILIES.index(item[0])))

    lines = []
    for r in reports:
        judged = r["total"] - len(r["equivalent"]) - len(r["failures"])
        verdict = say("ok", "已通过") if mutation_ok(r, minimum) else say("FAILED", "失败")
        lines.append(say("{name}: {score} ({killed} of {judged} killed; {equivalent} equivalent; {total} mutants; "
                         "{false} false causes) {verdict}", "{name}：{score}（{judged} 个中杀死 {killed} 个；"
                         "{equivalent} 个等价；共 {total} 个变异体；{false} 处错误归因）{verdict}", name=r["name"],
                         score=f"{r['score']:.0%}", killed=r["killed"], judged=judged, equivalent=len(r["equivalent"]),
                         total=r["total"], false=len(r.get("false_causes", [])), verdict=verdict))
        if r["families"]:
            lines.append("  " + by_family(r["families"]))
        for s in r["survivors"]:
            lines.append(f"  {say('survived', '存活')} {s['id']:<44} {s['description']}")
        for s in r.get("false_causes", []):
            lines.append(f"  {say('false cause', '错误归因')} {s['id']:<41} {s['description']}")
            for key in dict.fromkeys(b["key"] for b in s["blamed"]):
                named = [b for b in s["blamed"] if b["key"] == key]
                lines.append("    " + say("{checks} name {key}: {message}", "{checks} 说是 {key}：{message}",
                                          checks=", ".join(b["check"] for b in named), key=key,
                                          message=_short(named[0]["message"], 160)))
        for s in r["failures"]:
            lines.append(f"  {say('grader failure', '评分程序出错')} {s['id']:<38} {s['description']}")
        for mark in r["stale_marks"]:
            lines.append("  " + say("stale mark {mark}: no such mutant any more (remove it from {file})",
                                    "过时的标记 {mark}：已经没有这个变异体了（把它从 {file} 中删掉）", mark=mark,
                                    file=f"{r['name']}.toml"))
    overall: dict[str, dict] = {}
    for r in reports:
        for f, t in r["families"].items():
            into = overall.setdefault(f, {"total": 0, "killed": 0, "judged": 0})
            for key in into:
                into[key] += t[key]
    for t in overall.values():
        t["score"] = t["killed"] / t["judged"] if t["judged"] else 1.0
    if len(reports) > 1 and overall:
        lines.append(by_family(overall))
    total = sum(r["killed"] for r in reports)
    judged = sum(r["total"] - len(r["equivalent"]) - len(r["failures"]) for r in reports)
    lines.append(say("mutation score {total}/{judged} = {share}; {good} of {n} exercises at {minimum} or more",
                     "变异得分 {total}/{judged} = {share}；{n} 个练习中有 {good} 个达到 {minimum} 或以上", total=total,
                     judged=judged, share=f"{total / judged if judged else 1:.1%}",
                     good=sum(mutation_ok(r, minimum) for r in reports), n=len(reports), minimum=f"{minimum:.0%}"))
    return "\n".join(lines)


FAMILY_ZH = {"slip": "笔误", "spec": "规定", "device": "设备", "edge": "边界"}


def mutation_ok(report: dict, minimum: float) -> bool:
    """Whether an exercise's checks pass: every family at `minimum` or more, no grader failure, no stale mark, no
    message blaming a mutant for a mistake it does not make."""
    return report["score"] >= minimum and all(t["score"] >= minimum for t in report["families"].values()) \
        and not report["failures"] and not report["stale_marks"] and not report.get("false_causes")
