"""nbgrader courses moved with their tests, through the real CLI as a teacher moves one: `grade new --from-notebook`
on nbgrader's documentation class and on our own (tests/nbgrader/README.md), then `grade batch` over what the
students submitted. Every test's outcome is the one nbgrader's autograde gave, read from its autograded notebooks,
except where a submission forged nbgrader's verdict; hidden tests stay out of what students get; a test that cannot
be converted fails loudly."""

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, grade_here, run_grade

CLASSES = ROOT / "tests" / "nbgrader"
DOCS, OURS = CLASSES / "docs_class", CLASSES / "own_class"


def nbgrader_outcomes(autograded: Path, notebooks: set[str]) -> dict[tuple[str, str, str], str]:
    """(student, notebook, test) -> "passed" or "failed", as nbgrader's autograde decided: a test cell whose outputs
    hold an error or something on stderr earned nothing (nbgrader.utils.determine_grade)."""
    found = {}
    for path in autograded.glob("*/*/*.ipynb"):
        if path.stem not in notebooks:
            continue
        for cell in nbformat.read(str(path), as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                failed = any(o.output_type == "error" or o.output_type == "stream" and o.name == "stderr"
                             for o in cell.outputs)
                found[path.parts[-3], path.stem, meta["grade_id"]] = "failed" if failed else "passed"
    return found


def our_outcomes(grades: Path) -> dict[tuple[str, str, str], str]:
    return {(r["student"], r["exercise"], c["id"]): "passed" if c["passed"] else "failed"
            for r in map(json.loads, (grades / "results.jsonl").read_text().splitlines()) for c in r["checks"]}


def messages(grades: Path) -> dict[tuple[str, str, str], dict]:
    return {(r["student"], r["exercise"], c["id"]): c
            for r in map(json.loads, (grades / "results.jsonl").read_text().splitlines()) for c in r["checks"]}


def import_class(course: Path, notebooks) -> list[str]:
    """`grade new --from-notebook` for each notebook; the report's lines."""
    lines = []
    for notebook in notebooks:
        made = grade_here("new", "--from-notebook", notebook, "--course", course)
        assert made.returncode == 0, made.stderr
        lines += made.stdout.splitlines()
    return lines


@pytest.fixture(scope="module")
def docs_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("docs_class")
    report = import_class(tmp / "course", [DOCS / "source" / "ps1" / "problem1.ipynb"])
    graded = run_grade("--course", tmp / "course", "batch", DOCS / "submitted", "--out", tmp / "grades")
    assert graded.returncode == 0, graded.stderr
    return tmp / "course", tmp / "grades", report


@pytest.fixture(scope="module")
def own_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("own_class")
    report = import_class(tmp / "course", sorted((OURS / "source" / "ps2").glob("*.ipynb")))
    graded = run_grade("--course", tmp / "course", "batch", OURS / "submitted", "--out", tmp / "grades")
    assert graded.returncode == 0, graded.stderr
    return tmp / "course", tmp / "grades", report


def test_nbgrader_documentation_class_grades_as_nbgrader_autograded_it(docs_class):
    _, grades, _ = docs_class
    theirs = nbgrader_outcomes(DOCS / "autograded", {"problem1"})
    assert len(theirs) == 8 and set(theirs.values()) == {"passed", "failed"}
    assert our_outcomes(grades) == theirs
    said = messages(grades)
    assert "`squares(1)` returned [0]" in said["bitdiddle", "problem1", "correct_squares"]["message"]
    assert said["bitdiddle", "problem1", "correct_squares"]["key"] == "test-failed"


def test_the_import_says_what_each_cell_became(docs_class):
    course, _, report = docs_class
    tests = [line for line in report if line.startswith("note: test ")]
    assert len(tests) == 4 and all("run in the judge" in line for line in tests)
    by_hand = [line for line in report if "graded by hand" in line]
    assert [line.split()[2] for line in by_hand] == ["sum_of_squares_equation", "sum_of_squares_application",
                                                      "cell-938593c4a215c6cc"]
    shown = json.loads(grade_here("--course", course, "show", "problem1", "--json").stdout)
    assert {c["id"]: c["points"] for c in shown["checks"]} == {
        "correct_squares": 1, "squares_invalid_input": 1, "correct_sum_of_squares": 0.5,
        "sum_of_squares_uses_squares": 0.5}


@pytest.mark.slow  # 18 notebooks
def test_our_class_grades_as_nbgrader_autograded_it_but_where_a_submission_forged_it(own_class):
    _, grades, report = own_class
    theirs = nbgrader_outcomes(OURS / "autograded", {"zscores", "dependency", "shapes"})
    ours = our_outcomes(grades)
    assert len(ours) == len(theirs) == 6 * 12
    differ = {key: (theirs[key], ours[key]) for key in theirs if theirs[key] != ours[key]}
    # eve's numbers equal to anything and her numpy.testing that passes anything fool the tests that run beside her
    # code in nbgrader; here the asserts are the judge's
    assert differ == {("eve", "dependency", "variance_values"): ("passed", "failed"),
                      ("eve", "zscores", "normalize_values"): ("passed", "failed")}
    assert sum("run beside the student's code" in line for line in report) == 2  # shapes: its class Rectangle
    said = messages(grades)
    assert said["eve", "dependency", "variance_values"]["message"].endswith("returned 0.0.")
    assert said["cy", "dependency", "scaler"]["outcome"] == "not_started"
    assert "`make_counter().count` returned 0" in said["bob", "shapes", "counter_ticks"]["message"]


@pytest.mark.slow
def test_hidden_tests_stay_out_of_the_student_version(own_class, tmp_path):
    course, _, _ = own_class
    released = grade_here("--course", course, "release", "--out", tmp_path / "week", "--notebooks")
    assert released.returncode == 0, released.stderr
    student_files = "\n".join(p.read_text() for p in (tmp_path / "week").rglob("*") if p.is_file())
    assert "np.arange(10.0) ** 2" in (course / "checks" / "zscores.py").read_text()
    for hidden in ("np.arange(10.0) ** 2", "HIDDEN TESTS", "ZeroDivisionError"):
        assert hidden not in student_files
    assert "clip_outliers([1, 2, 3, 100], k=1.5)" in student_files  # a visible test: a public check, as nbgrader
    assert "BEGIN SOLUTION" not in student_files and "x[np.abs(normalize(x)) <= k]" not in student_files


def test_a_test_that_cannot_be_converted_is_named_and_fails_loudly(tmp_path):
    report = import_class(tmp_path / "course", [DOCS / "source" / "ps1_autotest" / "problem1.ipynb"])
    tests = [line for line in report if line.startswith("note: test ")]
    assert len(tests) == 5 and all("NOT converted" in line and "AUTOTEST" in line for line in tests)
    solution = tmp_path / "course" / "solutions" / "problem1.py"
    result = json.loads(grade_here("--course", tmp_path / "course", "problem1", "--file", solution, "--json",
                                  cwd=tmp_path).stdout)
    assert result["score"] == 0 and all(c["key"] == "not-converted" for c in result["checks"])
    assert "was not converted to a check" in result["checks"][0]["message"]


def test_a_notebook_with_nothing_autograded_is_refused(tmp_path):
    refused = grade_here("new", "--from-notebook", DOCS / "source" / "ps1" / "problem2.ipynb", "--course", tmp_path)
    assert refused.returncode == 2 and "no autograded test cell" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_an_imported_exercise_validates_once_it_has_hints_and_a_mistake(docs_class, tmp_path):
    course, _, _ = docs_class
    mine = tmp_path / "course"
    shutil.copytree(course, mine)
    toml = mine / "exercises" / "problem1" / "exercise.toml"
    toml.write_text(toml.read_text().replace("hints = []", 'hints = ["range(1, n + 1) starts at 1."]'))
    (mine / "mistakes" / "problem1").mkdir(parents=True)
    (mine / "mistakes" / "problem1" / "from_zero.py").write_text(  # bitdiddle's squares
        "# Mistake: counts from 0.\n# Expect: `squares(1)` returned [0]\n"
        "def squares(n):\n    if n < 1:\n        raise ValueError\n    return [i ** 2 for i in range(n)]\n\n\n"
        "def sum_of_squares(n):\n    return sum(squares(n))\n")
    proved = run_grade("--course", mine, "validate", "problem1", "--seeds", "2")
    assert proved.returncode == 0, proved.stdout


def nbgrader_cell(code: str, **meta):
    cell = nbformat.v4.new_code_cell(code)
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, "schema_version": 3, **meta}
    return cell


def test_what_the_judge_cannot_run_as_nbgrader_does_is_said(tmp_path):
    """IPython magics: not converted; a test that asks the notebook's namespace: beside the student's code; a test
    ending in a number (nbgrader's partial credit): fails saying so; markers that do not pair up: refused."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%matplotlib inline\n!pip install numpy"),
        nbgrader_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
                      solution=True, grade_id="double"),
        nbgrader_cell("%time double(1)\nassert double(1) == 2", grade=True, grade_id="timed", points=1),
        nbgrader_cell('assert "double" in globals()', grade=True, grade_id="defined", points=1),
        nbgrader_cell("double(1) / 4", grade=True, grade_id="partial", points=1),
        nbgrader_cell("import contextlib, io\nout = io.StringIO()\nwith contextlib.redirect_stdout(out):\n"
                      "    print(double(2))\nassert out.getvalue() == '4\\n'", grade=True, grade_id="printed",
                      points=1),
    ])
    nbformat.write(nb, str(tmp_path / "hw.ipynb"))
    report = import_class(tmp_path / "course", [tmp_path / "hw.ipynb"])
    assert any("test timed" in line and "NOT converted" in line and "magics" in line for line in report)
    assert any("test defined" in line and "beside the student's code" in line and "globals" in line
               for line in report)
    solution = tmp_path / "course" / "solutions" / "hw.py"
    result = json.loads(grade_here("--course", tmp_path / "course", "hw", "--file", solution, "--json",
                                  cwd=tmp_path).stdout)
    outcomes = {c["id"]: (c["outcome"], c["key"], c["message"]) for c in result["checks"]}
    assert any("test printed" in line and "prints (redirect_stdout)" in line for line in report)
    assert outcomes["defined"][0] == outcomes["printed"][0] == "passed"
    assert outcomes["timed"][1] == "not-converted"
    stub = tmp_path / "course" / "exercises" / "hw" / "hw.py"  # the magics are comments in the files: they load
    graded = json.loads(grade_here("--course", tmp_path / "course", "hw", "--file", stub, "--json",
                                   cwd=tmp_path).stdout)
    assert graded["status"] == "graded" and "# %matplotlib inline  (IPython only)" in stub.read_text()
    assert outcomes["partial"][1] == "not-converted" and "partial credit" in outcomes["partial"][2]
    nb.cells[1].source = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
    nbformat.write(nb, str(tmp_path / "broken.ipynb"))
    refused = grade_here("new", "--from-notebook", tmp_path / "broken.ipynb", "--course", tmp_path / "course")
    assert refused.returncode == 2 and "has no 'END SOLUTION'" in refused.stderr


def test_a_submission_cannot_answer_for_the_tests_own_names(tmp_path):
    """A student's cell that binds a name of Python's own that a test uses (`abs`), patches numpy.testing or returns
    numbers equal to anything: the test, in the judge, still uses its own."""
    nb = nbformat.v4.new_notebook(cells=[
        nbgrader_cell("import numpy as np", grade_id="given", locked=True),
        nbgrader_cell("def half(x):\n    ### BEGIN SOLUTION\n    return x / 2\n    ### END SOLUTION",
                      solution=True, grade_id="half"),
        nbgrader_cell("assert abs(half(3) - 1.5) < 1e-9", grade=True, grade_id="by_abs", points=1),
        nbgrader_cell("np.testing.assert_allclose(half(np.arange(3.0)), [0, 0.5, 1])", grade=True,
                      grade_id="by_numpy", points=1),
        nbgrader_cell("assert half(5) == 2.5", grade=True, grade_id="by_equality", points=1),
    ])
    nbformat.write(nb, str(tmp_path / "halves.ipynb"))
    report = import_class(tmp_path / "course", [tmp_path / "halves.ipynb"])
    assert sum("run in the judge" in line for line in report) == 3
    honest = grade_here("--course", tmp_path / "course", "halves", "--file", tmp_path / "halves.ipynb", "--json",
                       cwd=tmp_path)
    assert json.loads(honest.stdout)["score"] == 3
    nb.cells[1].source = ("abs = lambda value: 0\nnp.testing.assert_allclose = lambda *args, **kwargs: None\n\n\n"
                          "class Anything(float):\n    def __eq__(self, other):\n        return True\n\n\n"
                          "def half(x):\n    return Anything(0)")
    nbformat.write(nb, str(tmp_path / "forged.ipynb"))
    result = json.loads(grade_here("--course", tmp_path / "course", "halves", "--file", tmp_path / "forged.ipynb",
                                  "--json", cwd=tmp_path).stdout)
    assert {c["id"]: c["outcome"] for c in result["checks"]} == {
        "by_abs": "failed", "by_numpy": "failed", "by_equality": "failed"}


def test_code_that_never_ends_fails_the_tests_it_stands_before_and_no_other(tmp_path):
    """A cell that loops forever below the first test: that test passes (nbgrader ran it before), the next fails as
    a timeout; a function that never returns fails the test that calls it. The grading ends."""
    nb = nbformat.v4.new_notebook(cells=[
        nbgrader_cell("def one():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", solution=True,
                      grade_id="one"),
        nbgrader_cell("assert one() == 1", grade=True, grade_id="first", points=1),
        nbgrader_cell("def spin():\n    ### BEGIN SOLUTION\n    return 0\n    ### END SOLUTION", solution=True,
                      grade_id="spin"),
        nbgrader_cell("assert one() == 1", grade=True, grade_id="second", points=1),
        nbgrader_cell("assert spin() == 0", grade=True, grade_id="third", points=1),
    ])
    nbformat.write(nb, str(tmp_path / "loops.ipynb"))
    import_class(tmp_path / "course", [tmp_path / "loops.ipynb"])
    nb.cells[2].source = "while True:\n    pass"
    nbformat.write(nb, str(tmp_path / "forever.ipynb"))
    nb.cells[2].source = "def spin():\n    while True:\n        pass"
    nbformat.write(nb, str(tmp_path / "spins.ipynb"))
    outcomes = {}
    for name in ("forever", "spins"):
        graded = grade_here("--course", tmp_path / "course", "loops", "--file", tmp_path / f"{name}.ipynb", "--json",
                           "--time-limit", "1", cwd=tmp_path)
        outcomes[name] = {c["id"]: (c["outcome"], c["key"]) for c in json.loads(graded.stdout)["checks"]}
    assert outcomes["forever"] == {"first": ("passed", None), "second": ("failed", "timeout"),
                                   "third": ("failed", "timeout")}
    assert outcomes["spins"] == {"first": ("passed", None), "second": ("passed", None), "third": ("failed", "timeout")}


def test_what_the_students_code_changes_in_place_the_test_sees_changed(tmp_path):
    """A list, a dict, a numpy array and a tensor the test passes come back changed where the student's code changed
    them in place, as in one process; code that returns a changed copy instead leaves them as they were."""
    nb = nbformat.v4.new_notebook(cells=[
        nbgrader_cell("import numpy as np\nimport torch", grade_id="given", locked=True),
        nbgrader_cell("def bump_(things):\n    ### BEGIN SOLUTION\n    for i in range(len(things)):\n"
                      "        things[i] += 1\n    ### END SOLUTION", solution=True, grade_id="bump"),
        nbgrader_cell("def tag_(record):\n    ### BEGIN SOLUTION\n    record['seen'] = True\n    ### END SOLUTION",
                      solution=True, grade_id="tag"),
        nbgrader_cell("xs = [1, 2]\nbump_(xs)\nassert xs == [2, 3]", grade=True, grade_id="a_list", points=1),
        nbgrader_cell("a = np.zeros(3)\nbump_(a)\nnp.testing.assert_array_equal(a, [1, 1, 1])", grade=True,
                      grade_id="an_array", points=1),
        nbgrader_cell("t = torch.zeros(2)\nbump_(t)\nassert t.tolist() == [1.0, 1.0]", grade=True,
                      grade_id="a_tensor", points=1),
        nbgrader_cell("r = {'name': 'ana'}\ntag_(r)\nassert r == {'name': 'ana', 'seen': True}", grade=True,
                      grade_id="a_dict", points=1),
    ])
    nbformat.write(nb, str(tmp_path / "inplace.ipynb"))
    import_class(tmp_path / "course", [tmp_path / "inplace.ipynb"])
    nb.cells[1].source = "def bump_(things):\n    return [x + 1 for x in things]"
    nb.cells[2].source = "def tag_(record):\n    return {**record, 'seen': True}"
    nbformat.write(nb, str(tmp_path / "copies.ipynb"))
    scores = {}
    for name in ("inplace", "copies"):
        graded = grade_here("--course", tmp_path / "course", "inplace", "--file", tmp_path / f"{name}.ipynb",
                           "--json", cwd=tmp_path)
        scores[name] = {c["id"]: c["outcome"] for c in json.loads(graded.stdout)["checks"]}
    assert set(scores["inplace"].values()) == {"passed"} and set(scores["copies"].values()) == {"failed"}


def test_the_submission_cannot_steer_its_tests(tmp_path):
    """A function that raises StopIteration fails the tests that map it (in the judge and beside the student's code)
    instead of ending their all() and any() as if done; a read-only cell runs as the teacher wrote it, whatever the
    student made of it; a failure at a hidden line names the test, never the hidden input, the call or a message."""
    nb = nbformat.v4.new_notebook(cells=[
        nbgrader_cell("def reference(n):\n    return n % 2 == 0", grade_id="reference", locked=True),
        nbgrader_cell("def is_even(n):\n    ### BEGIN SOLUTION\n    return n % 2 == 0\n    ### END SOLUTION",
                      solution=True, grade_id="is_even"),
        nbgrader_cell("assert all(map(is_even, [0, 2, 4]))\nassert not any(map(is_even, [1, 3]))", grade=True,
                      grade_id="mapped", points=1),
        nbgrader_cell("assert 'is_even' in globals()\nassert all(map(is_even, [0, 2]))\n"
                      "assert not any(map(is_even, [1]))",
                      grade=True, grade_id="beside", points=1),
        nbgrader_cell("assert [is_even(n) for n in range(5)] == [reference(n) for n in range(5)]", grade=True,
                      grade_id="as_reference", points=1),
        nbgrader_cell("assert is_even(10)\n### BEGIN HIDDEN TESTS\nassert is_even(123456789) is False, "
                      "f'is_even(123456789) gave {is_even(123456789)}'\n### END HIDDEN TESTS", grade=True,
                      grade_id="large", points=1),
    ])
    nbformat.write(nb, str(tmp_path / "parity.ipynb"))
    report = import_class(tmp_path / "course", [tmp_path / "parity.ipynb"])
    assert any("test beside" in line and "beside the student's code" in line for line in report)
    assert any(line.startswith("note: read-only cell reference: kept in the checks (LOCKED)") for line in report)
    students = {"ana": {}, "stops": {1: "def is_even(n):\n    return next(iter([]))"},
                "rewrote": {0: "def reference(n):\n    return n % 2 == 1", 1: "def is_even(n):\n    return n % 2 == 1"},
                "raises": {1: "def is_even(n):\n    if n > 1000:\n        raise ValueError(f'too big: {n}')\n"
                              "    return n % 2 == 0"},
                "large": {1: "def is_even(n):\n    return n % 2 == 0 or n > 1000"}}
    for student, changed in students.items():
        mine = nbformat.from_dict(json.loads(nbformat.writes(nb)))
        for at, code in changed.items():
            mine.cells[at].source = code
        (tmp_path / "submitted" / student / "hw").mkdir(parents=True)
        nbformat.write(mine, str(tmp_path / "submitted" / student / "hw" / "parity.ipynb"))
    graded = run_grade("--course", tmp_path / "course", "batch", tmp_path / "submitted", "--out", tmp_path / "grades")
    assert graded.returncode == 0, graded.stderr
    failed = {}
    for (student, _, test), outcome in our_outcomes(tmp_path / "grades").items():
        failed.setdefault(student, set()).update({test} if outcome == "failed" else set())
    everything = {"mapped", "beside", "as_reference", "large"}
    assert failed == {"ana": set(), "stops": everything, "rewrote": everything, "raises": {"large"}, "large": {"large"}}
    said = messages(tmp_path / "grades")
    assert "`is_even(0)` raised StopIteration" in said["stops", "parity", "mapped"]["message"]
    assert "raised StopIteration" in said["stops", "parity", "beside"]["message"]
    assert said["large", "parity", "large"]["message"] == "The test large failed at a hidden line."
    raised = said["raises", "parity", "large"]["message"]
    assert raised.startswith("The test large failed at a hidden line: your code raised ValueError (cell In[2], line 3")
    assert not any("123456789" in c["message"] for c in said.values())  # their code's line, not its message, shown
    assert "LOCKED = {" in (tmp_path / "course" / "checks" / "parity.py").read_text()
