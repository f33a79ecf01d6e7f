"""Where in the learner's code something happened: frames as plain data, made in the sandbox, and how they
read in the learner's language, rendered in the judge; so does an error that stopped the code from loading.

Runs in: the sandbox (`frame`, for replies and probes) and the judge (`where`, `frame_text`). No torch.
"""

from __future__ import annotations

from grader.text import Text, joined, quoted, verbatim


def frame(cell: str, line: int, function: str, code: str | None) -> dict:
    """One place in the learner's code as plain data: the notebook cell's label ("" in a file), the line,
    the function and the line's code."""
    return {"cell": cell, "line": line, "function": function, "code": (code or "").strip()}


SHOWN_LINE = 200  # characters of a line of the learner's shown in an error (a line may be 200 kB)
SHOWN_ERROR = 2000  # characters of an error's message


def cut(text: str, width: int = SHOWN_LINE, most: int = SHOWN_ERROR) -> str:
    """`text` with each line at most `width` characters and the whole at most `most`, each cut marked with `…`."""
    text = "\n".join(line if len(line) <= width else line[:width] + "…" for line in str(text).split("\n"))
    return text if len(text) <= most else text[:most] + "…"


def error_text(reply: dict) -> Text:
    """An error reply's message in the learner's language where it has words of ours: a syntax error's line
    ("第 28 行有 SyntaxError：「invalid syntax」"), Python's own words quoted; else the message as it came. Each is
    cut to a length a page shows (`cut`)."""
    syntax = reply.get("syntax")
    if not syntax:
        return Text("{error}", "{error}", error=verbatim(cut(reply["message"], SHOWN_ERROR)))
    return Text("{error} at line {line}: {detail}{pointer}", "第 {line} 行有 {error}：{detail}{pointer}",
                error=verbatim(cut(reply["type"])), line=syntax["line"], detail=quoted(cut(syntax["detail"])),
                pointer=verbatim(cut(syntax["pointer"])))


def frame_text(f: dict) -> Text:
    """'line 12, in train: loss.backward()', or 'cell In[3], line 2, in ...' in a notebook."""
    function = Text("<module>", "顶层代码") if f["function"] == "<module>" else verbatim(f["function"])
    values = {"line": f["line"], "function": function, "code": verbatim(cut(f["code"]))}
    if not f["cell"]:
        return Text("line {line}, in {function}: {code}", "第 {line} 行，{function} 中：{code}", **values)
    return Text("{cell}, line {line}, in {function}: {code}", "{cell} 第 {line} 行，{function} 中：{code}",
                cell=cell_name(f["cell"]), **values)


def cell_name(label: str) -> Text | str:
    """A notebook cell's label ("cell In[3]") in the learner's language."""
    return Text("cell {n}", "单元格 {n}", n=verbatim(label[5:])) if label.startswith("cell ") else verbatim(label)


def where(error: dict) -> Text:
    """Where a learner's error came from, to put after its message: " (line 12, in train: ...)" in the
    learner's language, from a `learner_error` or a sandbox reply (its `frames`), or a check's own English
    `where` quoted as it is; empty when unknown."""
    if error.get("frames"):
        return Text(" ({places})", "（{places}）", places=joined([frame_text(f) for f in error["frames"]], "; ", "；"))
    if error.get("where"):
        return Text("{where}", "{where}", where=verbatim(f" ({error['where']})"))
    return Text("", "")
