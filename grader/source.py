"""Load a submission: the learner's code as one source text, from a .py file (or a notebook)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class SubmissionError(Exception):
    """The submission cannot be read at all (missing file, unsupported type, broken notebook)."""


@dataclass
class Source:
    """Learner code ready to run: the text, the name tracebacks show, and notes for the report."""

    code: str
    filename: str
    path: Path
    notes: list[str] = field(default_factory=list)


def load_source(path: Path) -> Source:
    path = Path(path)
    if not path.is_file():
        raise SubmissionError(f"no such file: {path}")
    if path.suffix == ".py":
        try:
            code = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise SubmissionError(f"{path} is not UTF-8 text") from None
        return Source(code=code, filename=path.name, path=path)
    raise SubmissionError(f"cannot grade {path.name}: expected a .py file")
