"""`check("ex05")` and `hint("ex05")` inside Jupyter: grade the code this notebook has run so far, and
reveal the exercise's hints one by one, as `grade ex05` and `grade hint ex05` do in a terminal.

The executed cells (in execution order) become the cells of a notebook, graded as a notebook file would be:
by the warm grading service (grader/service/server.py, started if need be), else by the `grade` command in a fresh
process. Never in the kernel, nor by forking it: the kernel may have used threads or CUDA, which makes
forking it unsafe, and the learner's kernel must not share a process with the judge anyway. The earlier
`check()` and `hint()` cells are among those run, and are neutral when graded (grader/sandbox/check_cells.py). A grading
counts in the progress of the workspace the notebook runs in, as `grade ex05` does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.learner import kata
from grader.course import variants
from grader.report.terminal import next_step, render
from grader.judge.result import Result
from grader.text import say

SANDBOX_ENV = "TORCH_KATAS_SANDBOX"


class CheckResult:
    """A grading result that shows itself as an HTML table in Jupyter and as text elsewhere."""

    def __init__(self, result: Result, hint: str | None, lang: str, workspace: Path | None = None,
                 kata: bool = False):
        self.result = result
        self.hint = hint  # the hint line shown when a check fails ("Hint 1/3: ...")
        self.lang = lang
        self.workspace = workspace  # the workspace whose progress it was recorded in (None: not recorded)
        self.kata = kata  # a kata attempt's grading: recorded in the kata, its next step the next kata

    @property
    def score(self) -> float:
        return self.result.score

    @property
    def passed(self) -> bool:
        return self.result.full

    def shown_hint(self) -> str | None:
        return self.hint if self.hint and not self.passed else None

    def recorded(self) -> str:
        """Whether the grading counts in the learner's progress ("" after a failure of the grader's own)."""
        if self.result.grader_failure or self.kata:
            return ""
        if self.workspace is None:
            return say(self.lang, "Not recorded in your progress: this notebook is not in a workspace "
                                  "(`grade init` makes one).")
        return say(self.lang, "Recorded in your progress ({workspace}).", workspace=self.workspace)

    def __repr__(self) -> str:
        lines = [render(self.result, self.lang, color=False, notebook=True, kata=self.kata), self.shown_hint(),
                 self.recorded()]
        return "\n".join(line for line in lines if line)

    def _repr_html_(self) -> str:
        from grader.report.pages import notebook_html

        hint = self.shown_hint()
        lines = [next_step(self.result, self.lang, notebook=True, kata=self.kata), f"💡 {hint}" if hint else "",
                 self.recorded()]
        return notebook_html(self.result, [line for line in lines if line], self.lang)


class Hints:
    """The hints revealed so far: text, or HTML in Jupyter."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_html_(self) -> str:
        from grader.report.pages import hints_html

        return hints_html(self.lines)


def executed_cells() -> list[str]:
    """The code of the cells this kernel has run, in order, without the cell running now."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("check() runs inside Jupyter; elsewhere use `grade EXERCISE --file FILE`")
    return list(shell.history_manager.input_hist_raw[1:-1])


def _progress():
    """The progress of the workspace this notebook runs in (None outside a workspace)."""
    from grader.learner.workspace import Progress, find_workspace

    workspace = find_workspace()
    return Progress(workspace) if workspace is not None else None


def check(exercise: str, *, lang: str | None = None, seed: int | None = None, device: str | None = None,
          cells: list[str] | None = None):
    """Grade the code this notebook has run so far as EXERCISE; return a displayable result."""
    if os.environ.get(SANDBOX_ENV):
        return None  # inside a grading sandbox: never grade recursively
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from grader.learner.workspace import default_lang
    from grader.service.client import served
    from grader.course.exercises import find_exercise

    lang = lang or default_lang()
    ex = find_exercise(exercise)
    run = executed_cells() if cells is None else cells  # cell In[N] of the report is In [N] of this kernel
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{ex.name}_notebook.ipynb")
        nbformat.write(new_notebook(cells=[new_code_cell(code) for code in run]), path)
        practice = _kata_attempt(ex)
        in_kata = practice is not None  # `grade --kata` records the attempt: graded by the command
        result = None if in_kata else served(ex, Path(path), {"seed": seed, "lang": lang, "device": device or "cpu"})
        if result is None:  # no service (or a kata attempt): the `grade` command, in a process of its own
            args = [sys.executable, "-m", "grader.cli.main", ex.id, "--file", path, "--json", "--lang", lang]
            args += ["--kata"] if in_kata else ["--no-server"]
            args += ["--seed", str(seed)] if seed is not None else []
            args += ["--device", device] if device else []
            proc = subprocess.run(args, capture_output=True, text=True)
            try:
                result = Result.from_json(json.loads(proc.stdout))
            except (json.JSONDecodeError, KeyError, TypeError):
                raise RuntimeError(proc.stderr.strip() or "grading failed") from None
    progress = _progress()
    if progress is not None and not result.grader_failure and not in_kata:  # a kata counts in its own state
        progress.record(ex, result)
    if in_kata:  # a kata shows the hints its learner asked for (`hint()`): each one counts in the attempt
        hints = variants.hints(ex, kata.usable(ex, practice[1])["variant"], lang)
        level = min(practice[1]["hints"], len(hints))
    else:
        hints = ex.text("hints", lang)
        level = max(1, progress.entry(ex).get("hints", 0) if progress else 0)
    hint = say(lang, "Hint {i}/{n}: {hint}", i=level, n=len(hints), hint=hints[level - 1]) if hints and level else None
    return CheckResult(result, hint, lang, progress.path.parent if progress else None, kata=in_kata)


def _kata_attempt(ex):
    """(workspace, attempt) when this notebook runs in the folder of a kata attempt (`grade kata --notebook`)."""
    from grader.learner.kata import attempt_of

    return attempt_of(ex, Path.cwd() / ex.stub.name)


_REVEALED: dict[str, int] = {}  # outside a workspace: the hints revealed in this kernel


def hint(exercise: str, *, lang: str | None = None, all: bool = False) -> Hints:  # as `grade hint --all`
    """Reveal the next hint of EXERCISE (each call one more, gentle to strong), as `grade hint` does."""
    from grader.learner.workspace import default_lang
    from grader.report.terminal import hint_lines
    from grader.course.exercises import find_exercise

    lang = lang or default_lang()
    ex = find_exercise(exercise)
    practice = _kata_attempt(ex)
    attempt = kata.hint_used(practice[0], ex) if practice else None  # a hint in a kata counts in the attempt
    hints = ex.text("hints", lang) if attempt is None else variants.hints(ex, kata.usable(ex, attempt)["variant"], lang)
    progress = _progress()
    if all:
        shown = len(hints)
    elif attempt is not None:
        shown = min(attempt["hints"], len(hints))
    elif progress is not None:
        shown = progress.next_hint(ex)
    else:
        shown = _REVEALED[ex.id] = min(_REVEALED.get(ex.id, 0) + 1, len(hints))
    return Hints(hint_lines(hints, shown, lang, again=f'`hint("{ex.id}")`'))
