"""The map against the territory: docs/architecture.md and the package docstrings name files, modules and process
starts that exist and happen as drawn, and every part of grader/ is in a layer of the import contracts."""

import ast
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
GRADER = ROOT / "grader"
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
FILE_NAME = re.compile(r"\b((?:[a-z_]+/)*[a-z_]+\.py)\b")


def python_modules(package: Path) -> set[str]:
    return {p.relative_to(GRADER).as_posix() for p in package.rglob("*.py")}


def test_every_file_the_architecture_names_exists():
    """`judge/grading.py`, `sandbox/zygote.py`... (relative to grader/), or a file of the checkout."""
    named = set(FILE_NAME.findall(ARCHITECTURE))
    assert named, "the page names no file: the pattern is wrong"
    missing = [n for n in sorted(named) if not (GRADER / n).is_file() and not (ROOT / n).is_file()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def process_starts_in_code() -> dict[str, str]:
    """Each `python -m grader.X` the code starts, with the file that starts it."""
    starts = {}
    for path in GRADER.rglob("*.py"):
        for module in re.findall(r'"-m",\s*"(grader\.[a-z_.]+)"', path.read_text(encoding="utf-8")):
            starts[module] = path.relative_to(GRADER).as_posix()
    return starts


def test_every_process_the_code_starts_is_drawn_where_it_is_started():
    starts = process_starts_in_code()
    assert "grader.service.server" in starts, "the pattern finds no process start"
    drawn = set(re.findall(r"python -m (grader\.[a-z_.]+)", ARCHITECTURE))
    assert drawn == set(starts), f"drawn: {sorted(drawn)}, started by the code: {sorted(starts)}"
    for module, starter in starts.items():
        line = next(line for line in ARCHITECTURE.splitlines() if f"python -m {module}" in line)
        assert starter in line, f"{module} is started by {starter}, but the drawing's line says: {line.strip()}"
        assert (GRADER / (module.removeprefix("grader.").replace(".", "/") + ".py")).is_file(), module


def test_every_part_of_the_grader_is_in_a_layer():
    """A package or top-level module in no layer may import anything: `from grader.cli import main` in
    grader/gradients.py would break no contract."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["type"] == "layers")["layers"]
    in_layers = {name.strip() for layer in layers for name in re.split(r"[|:]", layer)}
    parts = {p.name for p in GRADER.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    parts |= {p.stem for p in GRADER.glob("*.py")} - {"__init__", "__main__"}
    assert parts - in_layers == set(), f"parts of grader/ in no layer: {sorted(parts - in_layers)}"


@pytest.mark.parametrize("package", sorted(p.name for p in GRADER.iterdir() if (p / "__init__.py").is_file()))
def test_a_package_docstring_names_its_own_files(package):
    """A file a package's docstring names as its own (`x.py`, not `other/x.py`) is in that package."""
    doc = ast.get_docstring(ast.parse((GRADER / package / "__init__.py").read_text(encoding="utf-8"))) or ""
    own = {n for n in FILE_NAME.findall(doc) if "/" not in n}
    mine = {Path(p).name for p in python_modules(GRADER / package)}
    assert own <= mine, f"grader/{package}/__init__.py names files it does not hold: {sorted(own - mine)}"
