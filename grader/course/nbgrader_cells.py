"""What an nbgrader notebook's cells mean, as nbgrader reads them (its documentation and its preprocessors
ClearSolutions, ClearHiddenTests and SaveAutoGrades, read, not copied).

Each cell's metadata has `nbgrader: {grade, solution, locked, task, grade_id, points}`:
- an autograded test: a code cell with `grade` and not `solution`; its `points` when it runs without an error,
  0 when it raises; lines between `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS` are left out of what
  students get;
- a solution: `solution` (and not `grade`); the lines between `### BEGIN SOLUTION` and `### END SOLUTION` become
  `# YOUR CODE HERE` / `raise NotImplementedError()` for students, or the whole cell where it has no markers;
- a manually graded answer: `grade` and `solution` (code or markdown), and a task: `task`; a person grades both;
- anything else: the notebook as written (statement, demonstrations, code the teacher gives); with `locked` (nbgrader's
  "read-only"), as the teacher wrote it whatever the student made of it: nbgrader's autograde puts it back, by its
  grade_id.
Markers are found anywhere in a line, as nbgrader finds them. Never imports torch.
"""

from __future__ import annotations

BEGIN_SOLUTION, END_SOLUTION = "BEGIN SOLUTION", "END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")


class MarkerError(ValueError):
    """A cell's markers do not pair up (a BEGIN without its END, or one inside another)."""


def metadata(cell) -> dict:
    """The cell's `nbgrader` metadata ({} where it has none, or where it is not a table)."""
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    found = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return found if isinstance(found, dict) else {}


def kind(cell) -> str:
    """"test", "solution", "manual", "task" or "plain": what nbgrader does with the cell."""
    meta = metadata(cell)
    if meta.get("task"):
        return "task"
    if meta.get("grade") and meta.get("solution"):
        return "manual"
    if meta.get("grade"):
        return "test" if cell.get("cell_type") == "code" else "plain"
    if meta.get("solution"):
        return "solution"
    return "plain"


def is_test(cell) -> bool:
    """An autograded test cell: its code is the course's, never the student's."""
    return kind(cell) == "test"


def is_locked(cell) -> bool:
    """A read-only code cell of the teacher's (not a test): nbgrader runs the teacher's version of it."""
    return kind(cell) == "plain" and cell.get("cell_type") == "code" and bool(metadata(cell).get("locked")) \
        and bool(grade_id(cell))


def grade_id(cell) -> str:
    return str(metadata(cell).get("grade_id") or "")


def points(cell) -> float:
    try:
        return float(metadata(cell).get("points") or 0)
    except (TypeError, ValueError):
        return 0.0


def source(cell) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def regions(code: str, begin: str, end: str) -> list[tuple[int, int]]:
    """The (first, last) line numbers, from 1, of each `begin` ... `end` region of `code`, markers included."""
    found, start = [], None
    for number, line in enumerate(code.split("\n"), 1):
        if begin in line:
            if start is not None:
                raise MarkerError(f"a second '{begin}' at line {number} before '{end}'")
            start = number
        elif end in line:
            if start is None:
                raise MarkerError(f"'{end}' at line {number} without '{begin}'")
            found.append((start, number))
            start = None
    if start is not None:
        raise MarkerError(f"'{begin}' at line {start} has no '{end}'")
    return found


def student_code(code: str) -> str:
    """A solution cell as students get it: each solution region replaced by the code stub at the marker's
    indentation; a cell without markers replaced whole."""
    spans = regions(code, BEGIN_SOLUTION, END_SOLUTION)
    if not spans:
        return "\n".join(CODE_STUB)
    lines, out, inside = code.split("\n"), [], set[int]()
    for first, last in spans:
        inside.update(range(first, last + 1))
    for number, line in enumerate(lines, 1):
        if any(number == first for first, _ in spans):
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + stub for stub in CODE_STUB]
        elif number not in inside:
            out.append(line)
    return "\n".join(out)


def solution_code(code: str) -> str:
    """A solution cell as the reference solution: the marker lines left out, the code between them kept."""
    spans = regions(code, BEGIN_SOLUTION, END_SOLUTION)
    markers = {n for span in spans for n in span}
    return "\n".join(line for number, line in enumerate(code.split("\n"), 1) if number not in markers)
