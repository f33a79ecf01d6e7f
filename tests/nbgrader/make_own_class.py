"""Write our own nbgrader class (tests/nbgrader/own_class/): the source notebooks of assignment ps2 and what each
student submitted, as nbgrader's release notebooks with their answers in the solution cells.

    python tests/nbgrader/make_own_class.py --source DIR        # DIR/source/ps2/*.ipynb
    python tests/nbgrader/make_own_class.py --submit DIR        # DIR/submitted/<student>/ps2/*.ipynb, from DIR/release
The autograded notebooks are nbgrader's own (README.md says how they were made): the tests compare with them.
"""

import argparse
import copy
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def solution(grade_id, code):
    cell = new_code_cell(code)
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3,
                                 "solution": True}
    return cell


def test(grade_id, points, code):
    cell = new_code_cell(code)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "locked": True, "points": points,
                                 "schema_version": 3, "solution": False}
    return cell


def given(grade_id, code):
    cell = new_code_cell(code)
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": True, "schema_version": 3,
                                 "solution": False}
    return cell


ZSCORES = [
    new_markdown_cell("# Statistics with numpy\n\nWrite `normalize(x)`: x scaled to mean 0 and standard deviation 1 "
                      "(a `ValueError` for a constant x), then `clip_outliers(x, k)`, which uses it."),
    given("imports", "import numpy as np"),
    solution("normalize", '''def normalize(x):
    """x scaled to mean 0 and standard deviation 1; a ValueError for a constant x."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    std = x.std()
    if std == 0:
        raise ValueError("x is constant")
    return (x - x.mean()) / std
    ### END SOLUTION'''),
    new_code_cell("normalize([1.0, 2.0, 3.0])"),
    test("normalize_values", 1, '''"""normalize gives mean 0 and standard deviation 1"""
from numpy.testing import assert_allclose
from nose.tools import assert_raises
assert_allclose(normalize([1.0, 2.0, 3.0]), [-1.224744871, 0.0, 1.224744871])
### BEGIN HIDDEN TESTS
z = normalize(np.arange(10.0) ** 2)
np.testing.assert_allclose(z.mean(), 0.0, atol=1e-12)
np.testing.assert_allclose(z.std(), 1.0)
### END HIDDEN TESTS'''),
    test("normalize_constant", 1, '''"""normalize refuses a constant x"""
assert_raises(ValueError, normalize, [2.0, 2.0, 2.0])'''),
    new_markdown_cell("`clip_outliers(x, k)` keeps the values of x within k standard deviations of its mean. "
                      "It calls `normalize`."),
    solution("clip_outliers", '''def clip_outliers(x, k=2.0):
    """The values of x within k standard deviations of its mean."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    return x[np.abs(normalize(x)) <= k]
    ### END SOLUTION'''),
    test("clip_values", 1, '''"""clip_outliers drops what is far from the mean"""
np.testing.assert_array_equal(clip_outliers([1, 2, 3, 100], k=1.5), [1, 2, 3])'''),
    test("clip_uses_normalize", 1, '''"""clip_outliers calls normalize"""
import pytest
orig_normalize = normalize
def normalize(x):
    raise RuntimeError("normalize was called")
try:
    with pytest.raises(RuntimeError):
        clip_outliers([1.0, 2.0, 3.0])
finally:
    normalize = orig_normalize'''),
]

DEPENDENCY = [
    new_markdown_cell("# Functions that use functions\n\nWrite `mean(xs)`, then `variance(xs)`, which calls `mean`, "
                      "then `make_scaler(factor)`, a function that returns a function."),
    solution("mean", '''def mean(xs):
    """The mean of the numbers xs."""
    ### BEGIN SOLUTION
    return sum(xs) / len(xs)
    ### END SOLUTION'''),
    solution("variance", '''def variance(xs):
    """The population variance of xs: it calls mean."""
    ### BEGIN SOLUTION
    m = mean(xs)
    return mean([(x - m) ** 2 for x in xs])
    ### END SOLUTION'''),
    test("variance_values", 1, '''"""variance of a few lists"""
assert variance([1, 2, 3, 4]) == 1.25
assert variance([5]) == 0'''),
    test("variance_calls_mean", 1, '''"""variance calls mean (a stand-in of mean counts the calls)"""
calls = []
orig_mean = mean
def mean(xs):
    calls.append(list(xs))
    return orig_mean(xs)
try:
    assert variance([2, 4, 6]) == 8 / 3
    assert calls, "variance does not call mean"
finally:
    mean = orig_mean'''),
    test("mean_is_needed", 0.5, '''"""variance needs mean (nbgrader's own example of a dependency)"""
orig_mean = mean
del mean
try:
    variance([1, 2])
except NameError:
    pass
else:
    raise AssertionError("variance does not use mean")
finally:
    mean = orig_mean'''),
    test("mean_of_nothing", 0.5, '''"""the mean of an empty list is an error"""
### BEGIN HIDDEN TESTS
from nose.tools import assert_raises
assert_raises(ZeroDivisionError, mean, [])
### END HIDDEN TESTS'''),
    solution("make_scaler", '''def make_scaler(factor):
    """A function that multiplies its argument by factor."""
    ### BEGIN SOLUTION
    def scale(x):
        return factor * x
    return scale
    ### END SOLUTION'''),
    test("scaler", 1, '''"""make_scaler returns a function"""
double = make_scaler(2)
assert double(21) == 42
assert [double(x) for x in range(3)] == [0, 2, 4]'''),
]

SHAPES = [
    new_markdown_cell("# Objects\n\nWrite the class `Rectangle` (its `area()`, and `scale(k)`: a new rectangle k "
                      "times larger on each side), then `make_counter()`: an object whose `tick()` adds one to its "
                      "`count`."),
    solution("rectangle", '''class Rectangle:
    def __init__(self, width, height):
        self.width, self.height = width, height

    def area(self):
        ### BEGIN SOLUTION
        return self.width * self.height
        ### END SOLUTION

    def scale(self, k):
        ### BEGIN SOLUTION
        return Rectangle(self.width * k, self.height * k)
        ### END SOLUTION'''),
    test("rectangle_area", 1, '''"""a rectangle's area"""
assert Rectangle(2, 3).area() == 6'''),
    test("rectangle_scale", 1, '''"""scale makes a new, larger rectangle"""
small = Rectangle(1, 2)
big = small.scale(3)
assert isinstance(big, Rectangle) and big is not small
assert big.area() == 18 and small.area() == 2'''),
    solution("counter", '''def make_counter():
    """An object with a count (0 at first) and a tick() that adds one to it."""
    ### BEGIN SOLUTION
    class Counter:
        count = 0

        def tick(self):
            self.count += 1

    return Counter()
    ### END SOLUTION'''),
    test("counter_ticks", 1, '''"""tick() counts"""
c = make_counter()
assert c.count == 0
c.tick()
c.tick()
assert c.count == 2'''),
]

NOTEBOOKS = {"zscores": ZSCORES, "dependency": DEPENDENCY, "shapes": SHAPES}

# What each student wrote in each solution cell (grade_id -> code); a solution cell not named is left as released.
STUDENTS = {
    "ada": {  # right everywhere, written her own way
        "normalize": '''def normalize(x):
    x = np.array(x, dtype=float)
    if np.all(x == x[0]):
        raise ValueError("constant")
    return (x - np.mean(x)) / np.std(x)''',
        "clip_outliers": '''def clip_outliers(x, k=2.0):
    x = np.array(x, dtype=float)
    z = normalize(x)
    return np.array([v for v, s in zip(x, z) if abs(s) <= k])''',
        "mean": "def mean(xs):\n    return sum(xs) / len(xs)",
        "variance": "def variance(xs):\n    m = mean(xs)\n    return sum((x - m) ** 2 for x in xs) / len(xs)",
        "make_scaler": "def make_scaler(factor):\n    return lambda x: x * factor",
        "rectangle": '''class Rectangle:
    def __init__(self, width, height):
        self.width, self.height = width, height

    def area(self):
        return self.height * self.width

    def scale(self, k):
        return type(self)(self.width * k, self.height * k)''',
        "counter": '''class Tally:
    def __init__(self):
        self.count = 0

    def tick(self):
        self.count = self.count + 1


def make_counter():
    return Tally()''',
    },
    "bob": {  # the usual slips
        "normalize": '''def normalize(x):
    x = np.asarray(x, dtype=float)
    return (x - x.mean()) / x.std(ddof=1)''',
        "clip_outliers": '''def clip_outliers(x, k=2.0):
    x = np.asarray(x, dtype=float)
    return x[np.abs(x - x.mean()) <= k * x.std()]''',
        "mean": "def mean(xs):\n    return sum(xs) / len(xs)",
        "variance": "def variance(xs):\n    m = sum(xs) / len(xs)\n    return sum((x - m) ** 2 for x in xs) / len(xs)",
        "make_scaler": "def make_scaler(factor):\n    return factor * 2",
        "rectangle": '''class Rectangle:
    def __init__(self, width, height):
        self.width, self.height = width, height

    def area(self):
        return 2 * (self.width + self.height)

    def scale(self, k):
        self.width *= k
        self.height *= k
        return self''',
        "counter": '''def make_counter():
    class Counter:
        count = 0

        def tick(self):
            pass

    return Counter()''',
    },
    "cy": {},  # handed in the notebook as released
    "dee": {  # almost there
        "normalize": '''def normalize(x):
    x = np.asarray(x, dtype=float)
    return (x - x.mean()) / x.std()''',
        "clip_outliers": '''def clip_outliers(x, k=2.0):
    x = np.asarray(x, dtype=float)
    return x[np.abs(normalize(x)) < k]''',
        "mean": '''def mean(xs):
    if not xs:
        raise ValueError("no numbers")
    return sum(xs) / len(xs)''',
        "variance": "def variance(xs):\n    m = mean(xs)\n    return mean([(x - m) ** 2 for x in xs])",
        "make_scaler": "def make_scaler(factor):\n    def scale(x):\n        return factor * x\n    return scale",
        "rectangle": '''class Rectangle:
    def __init__(self, width, height):
        self.width, self.height = width, height

    def area(self):
        return self.width * self.height

    def scale(self, k):
        return Rectangle(self.width * k, self.height)''',
        "counter": '''count = 0


def make_counter():
    return None''',
    },
}

# Fixed too late: a cell added at the end of the notebook, after the tests (nbgrader runs each test where it stands).
LATE = {
    "mean": "def mean(xs):\n    return 0",
    "variance": "def variance(xs):\n    m = mean(xs)\n    return mean([(x - m) ** 2 for x in xs])",
}
LATE_CELL = "def mean(xs):\n    return sum(xs) / len(xs)"

# A submission written to fool tests that run beside it (nbgrader's): numpy's assertions made to pass anything, and
# numbers equal to anything.
FORGER = {
    "normalize": '''np.testing.assert_allclose = lambda *args, **kwargs: None


def normalize(x):
    return np.zeros(len(x))''',
    "mean": '''class Anything(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = float.__hash__


def mean(xs):
    return Anything(0)''',
    "variance": "def variance(xs):\n    return Anything(0)",
}


def write_source(root: Path) -> None:
    folder = root / "source" / "ps2"
    folder.mkdir(parents=True, exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=cells, metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                                                "name": "python3"}})
        nbformat.write(nb, str(folder / f"{name}.ipynb"))


def submit(root: Path) -> None:
    """Each student's notebooks: nbgrader's release, their code in its solution cells."""
    for student, answers in {**STUDENTS, "eve": FORGER, "fay": LATE}.items():
        folder = root / "submitted" / student / "ps2"
        folder.mkdir(parents=True, exist_ok=True)
        for name in NOTEBOOKS:
            nb = nbformat.read(str(root / "release" / "ps2" / f"{name}.ipynb"), as_version=4)
            for cell in nb.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                if grade_id in answers:
                    cell.source = answers[grade_id]
            if student == "fay" and name == "dependency":
                nb.cells.append(new_code_cell(LATE_CELL))
            nbformat.write(copy.deepcopy(nb), str(folder / f"{name}.ipynb"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path)
    parser.add_argument("--submit", type=Path)
    args = parser.parse_args()
    if args.source:
        write_source(args.source)
    if args.submit:
        submit(args.submit)
