"""The `submission` fixture: the proxy a check calls (`submission.linear_grads(x, y, w, b)`,
`submission.probe(fn, ...)`), which asks a sandbox and returns plain data or raises a learner's problem.

Runs in: the judge. A sandbox that died or hung is replaced by a fresh one for the next check; a file that failed
to load is one problem, and no check runs.
"""

from __future__ import annotations

import torch

from grader.sandbox import wire
from grader.sandbox.frames import cell_name, cut, error_text, where
from grader.sandbox.handle import Sandbox
from grader.sandbox.limits import Limits
from grader.sandbox.problems import (
    CellsFailed,
    LearnerError,
    LearnerProblem,
    LearnerTimeout,
    LoadFailed,
    Tampered,
    does_not_define,
)
from grader.sandbox.source import Source
from grader.text import Text, joined, quoted, verbatim

OUTPUT_SHOWN = 500


def describe_arg(value) -> str:
    """How an argument reads in a call shown to the learner: `x[8, 1]`-style for tensors."""
    if isinstance(value, torch.Tensor):
        return f"tensor{list(value.shape)}"
    if isinstance(value, (list, tuple)) and len(value) > 4:
        return f"{type(value).__name__}[{len(value)}]"
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


class Submission:
    """The proxy checks receive as the `submission` fixture.

    `submission.fn(*args)` calls the learner's `fn` in the sandbox and returns its value as plain
    data; `submission.probe(probe_fn, *args)` runs a trusted probe there. A sandbox that died
    or hung is replaced by a fresh one for the next check; a file that failed to load is one
    problem (`load_problem`), and no check runs.
    """

    def __init__(self, source: Source, limits: Limits, seed: int = 0):
        self._source = source
        self._limits = limits
        self._seed = seed
        self._sandbox: Sandbox | None = None
        self.load_problem: LearnerProblem | None = None  # the file did not load: no check can run
        self._hung: dict[str, tuple[str, Text]] = {}  # function timed out -> (the call, its check): fails at once
        self._current: dict[str, Text] = {}  # "check": the title of the check running now (judge/plugin.py sets it)
        self.problems: list[LearnerProblem] = []
        self.outputs: list[str] = []
        self.isolation: dict = {}  # the last sandbox's isolation: {"applied": [layers], "missing": {layer: why}}
        self._shared: dict = {}  # what `once` made
        self._parts: dict[str, Submission] = {}  # nbgrader test cell -> the submission of the cells above it

    # -- lifecycle --
    def launch(self) -> None:
        """Start the first sandbox now, so that it loads the learner's code while the judge's pytest collects the
        checks; the first request waits for it."""
        if self._sandbox is None and not self._source.tests:  # nbgrader's tests run on the cells above them
            self._sandbox = Sandbox(self._source, self._limits, self._seed)
            self._sandbox.launch()

    def _ready(self) -> Sandbox:
        if self.load_problem is not None:
            raise self.load_problem
        if self._sandbox is not None and self._sandbox.alive and self._sandbox.load_reply:
            return self._sandbox
        if self._sandbox is None or not self._sandbox.alive:
            self._retire()
            self._sandbox = Sandbox(self._source, self._limits, self._seed)
        try:
            reply = self._sandbox.start()
        except LearnerProblem as problem:
            self.load_problem = problem
            self.problems.append(problem)
            raise
        self._note_tampering(reply)
        self.isolation.update(reply.get("isolation", {}))
        if not reply.get("ok"):
            self.load_problem = LoadFailed(Text("{error}{where}", "{error}{where}", error=error_text(reply),
                                                where=where(reply)))  # the report says it could not be loaded
            self.problems.append(self.load_problem)
            raise self.load_problem
        self._note_failed_cells(reply.get("failed_cells"))
        return self._sandbox

    def _note_failed_cells(self, failed: list[dict] | None) -> None:
        if failed and not any(isinstance(p, CellsFailed) for p in self.problems):
            cells = joined([Text("\n  {cell}: {error}{where}", "\n  {cell}：{error}{where}", cell=cell_name(f["cell"]),
                                 error=error_text(f), where=where(f)) for f in failed], "")
            self.problems.append(CellsFailed(Text(
                "Notebook cells that raised an error (the checks ran with what the other cells define):{cells}",
                "以下单元格抛出了错误（检查使用了其他单元格定义的内容）：{cells}", cells=cells)))

    def _retire(self) -> None:
        if self._sandbox is not None:
            self.outputs.append(self._sandbox.output())
            self._sandbox.close()
            self._sandbox = None

    def close(self) -> None:
        for part in self._parts.values():
            part.close()
        self._retire()

    def before(self, grade_id: str, locked: dict[str, str] | None = None) -> Submission:
        """The submission as it stands before nbgrader's test cell `grade_id` (the cells above it, in a notebook
        that has it; all of it otherwise; `locked`: the teacher's read-only cells, which replace the student's), in a
        sandbox of its own, made once per grading. Its problems and output are this grading's."""
        source = self._source.before(grade_id, locked)
        if source is self._source:
            return self
        key = "\n".join(f"{label}\n{code}" for label, code in source.chunks)
        if key not in self._parts:
            part = self._parts[key] = Submission(source, self._limits, self._seed)
            part.problems, part.outputs, part.isolation = self.problems, self.outputs, self.isolation
            part._current = self._current
        return self._parts[key]

    def output(self) -> str:
        """The learner's printed output (the last OUTPUT_SHOWN characters)."""
        text = "".join(self.outputs)
        return text if len(text) <= OUTPUT_SHOWN else "..." + text[-OUTPUT_SHOWN:]

    def once(self, key, make):
        """What `make()` returns, made once per grading for `key`: the checks that judge the same run share it (the
        first check that asks draws its inputs). A `make` that raised is tried again by the next check that asks."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]

    # -- requests --
    def running(self, check: Text) -> None:
        """The check that runs now: a call that times out is said to have in it."""
        self._current["check"] = check

    def _request(self, header: dict, args, kwargs, what: str, on_callback=None):
        if header["name"] in self._hung:  # its own call, never made: the earlier call's message is no message of its
            raise LearnerTimeout(Text(
                "{what} was not called: {first} ran past the time limit in an earlier check (“{check}”).",
                "没有调用 {what}：{first} 在之前的检查（“{check}”）中超时了。", what=what,
                first=self._hung[header["name"]][0], check=self._hung[header["name"]][1]))
        sandbox = self._ready()
        blobs: list[bytes] = []
        header = {**header, "args": wire.encode(list(args), blobs), "kwargs": wire.encode(dict(kwargs), blobs)}
        try:
            reply, out = sandbox.request(header, blobs, what)
            while reply.get("callback") is True and on_callback is not None:  # the probe asks the judge first
                answer, answer_blobs = on_callback(reply, out)
                reply, out = sandbox.request({**answer, "answer": True}, answer_blobs, what)
        except LearnerProblem as problem:
            self.problems.append(problem)
            if isinstance(problem, LearnerTimeout):
                self._hung[header["name"]] = what, self._current.get("check", Text(""))
            raise
        self._note_tampering(reply)
        if not reply.get("ok"):
            raise self._error(reply, what)
        return reply, out

    def _note_tampering(self, reply: dict) -> None:
        names = reply.get("tampered")
        if names and not any(isinstance(p, Tampered) for p in self.problems):
            listed = verbatim(", ".join(map(str, names[:5])))
            self.problems.append(Tampered(Text("Your code replaced {listed}: that is tampering, and the score is 0.",
                                               "你的代码替换了 {listed}：这属于篡改评分，得分为 0。", listed=listed)))

    def _error(self, reply: dict, what) -> LearnerError:
        if reply.get("missing"):
            name = reply.get("name") or str(what).strip("`").split("(")[0]
            return LearnerError(does_not_define(name), exc_type="AttributeError", key="missing-name")
        if reply.get("not_started"):
            return LearnerError(Text("Not started: {what} still raises NotImplementedError (fill in its TODO).",
                                     "尚未开始：{what} 仍然抛出 NotImplementedError（请完成其中的 TODO）。", what=what),
                                exc_type="NotImplementedError", not_started=True)
        if reply.get("unsendable"):
            return LearnerError(Text("{what} returned a value that cannot be sent back: {detail}",
                                     "{what} 返回的值无法传回评分器：{detail}",
                                     what=what, detail=quoted(cut(reply["message"]))),
                                exc_type=reply["type"], key="unsendable-value")
        if reply.get("type") == "MemoryError" or "can't allocate memory" in reply.get("message", ""):
            return LearnerError(Text("{what} ran out of memory (the limit is {limit} MiB): is a tensor far larger than "
                                     "needed?{where}",
                                     "{what} 内存不足（上限 {limit} MiB）：是不是创建了过大的 tensor？{where}",
                                     what=what, limit=self._limits.memory >> 20, where=where(reply)),
                                exc_type="MemoryError", key="out-of-memory")
        return LearnerError(Text("{what} raised {error}{where}", "{what} 抛出了异常 {error}{where}",
                                 what=what, error=quoted(cut(reply["message"])), where=where(reply)),
                            exc_type=reply.get("type", ""))

    def call(self, name: str, *args, **kwargs):
        """Call the learner's `name(*args, **kwargs)` and return its value."""
        what = f"`{name}({', '.join(map(describe_arg, args))})`"
        reply, out = self._request({"op": "call", "name": name}, args, kwargs, what)
        return wire.decode(reply["value"], out)

    def call_with_args(self, name: str, *args, **kwargs):
        """Like `call`, but also return the arguments as they were after the call (in-place changes)."""
        what = f"`{name}({', '.join(map(describe_arg, args))})`"
        reply, out = self._request({"op": "call", "name": name, "echo_args": True}, args, kwargs, what)
        return wire.decode(reply["value"], out), wire.decode(reply["args"], out)

    def probe(self, fn, *args, what: str | None = None, on_callback=None, **kwargs):
        """Run the probe `fn` (see `probe`) in the sandbox and return its plain-data result. `on_callback(header,
        blobs)` answers, with (header, blobs), what the probe asks the judge while it runs (`ask_judge`)."""
        what = what or f"`{fn.__name__}`"
        reply, out = self._request({"op": "probe", "name": fn.probe_name}, args, kwargs, what, on_callback)
        return wire.decode(reply["value"], out)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs)
