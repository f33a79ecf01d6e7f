"""`check("ex05")` inside Jupyter: grade the code this notebook has run so far.

The executed cells (in execution order) become the cells of a notebook, graded by the `grade`
command in a fresh process, as a notebook file would be: the kernel may have used threads or CUDA, which makes forking it unsafe, and the
learner's kernel must not share a process with the judge anyway.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import tempfile

from grader.report import render

SANDBOX_ENV = "TORCH_KATAS_SANDBOX"


class CheckResult:
    """A grading result that shows itself as an HTML table in Jupyter and as text elsewhere."""

    def __init__(self, result: dict, hint: str | None, lang: str):
        self.result = result
        self.hint = hint
        self.lang = lang

    @property
    def score(self) -> float:
        return self.result["score"]

    @property
    def passed(self) -> bool:
        return self.result["score"] >= self.result["max_score"] and self.result["status"] == "graded"

    def __repr__(self) -> str:
        text = render(self.result, self.lang, color=False)
        return text + (f"\nHint: {self.hint}" if self.hint and not self.passed else "")

    def _repr_html_(self) -> str:
        icons = {"passed": "✅", "failed": "❌", "not_started": "⬜", "skipped": "➖", "not_run": "⭕"}
        rows = "".join(
            f"<tr><td>{icons[c['outcome']]}</td><td>{html.escape(c['title'])}</td>"
            f"<td>{c['points']:g}/{c['max_points']:g}</td><td>{html.escape(c['message'])}</td></tr>"
            for c in self.result["checks"])
        r = self.result
        head = f"<b>{html.escape(r['exercise'])} · {html.escape(r.get('title', ''))}</b>"
        total = f"<p><b>Score: {r['score']:g}/{r['max_score']:g}</b> ({html.escape(r['status'])})</p>"
        hint = f"<p>💡 {html.escape(self.hint)}</p>" if self.hint and not self.passed else ""
        return f"{head}<table>{rows}</table>{total}{hint}"


def executed_cells() -> list[str]:
    """The code of the cells this kernel has run, in order, without the cell running now."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("check() runs inside Jupyter; elsewhere use `grade EXERCISE --file FILE`")
    return list(shell.history_manager.input_hist_raw[1:-1])


def check(exercise: str, *, lang: str | None = None, seed: int | None = None, cells: list[str] | None = None):
    """Grade the code this notebook has run so far as EXERCISE; return a displayable result."""
    if os.environ.get(SANDBOX_ENV):
        return None  # inside a grading sandbox: never grade recursively
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from grader.cli import default_lang
    from grader.exercises import find_exercise

    lang = lang or default_lang()
    ex = find_exercise(exercise)
    run = executed_cells() if cells is None else cells  # cell In[N] of the report is In [N] of this kernel
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{ex.name}_notebook.ipynb")
        nbformat.write(new_notebook(cells=[new_code_cell(code) for code in run]), path)
        args = [sys.executable, "-m", "grader.cli", ex.id, "--file", path, "--json", "--lang", lang]
        if seed is not None:
            args += ["--seed", str(seed)]
        proc = subprocess.run(args, capture_output=True, text=True)
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(proc.stderr.strip() or "grading failed") from None
    hints = ex.text("hints", lang)
    return CheckResult(result, hints[0] if hints else None, lang)
