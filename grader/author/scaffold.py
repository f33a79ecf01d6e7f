"""A teacher's own course: scaffold an exercise (`grade new`; from an nbgrader notebook: from_nbgrader.py) and
write the student version (`grade release`). Never imports torch.

What `grade new` writes is a complete, working exercise that `grade validate` proves: a stub with a TODO, a
statement, exercise.toml with points and hints, a solution, a checks module with one check, one known
mistake and one correct variant. The teacher then replaces the example with their own lesson.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from grader.course import stub_text
from grader.course.exercises import COURSE_FILE, WORKSPACE_FILE, Course, CourseError, load_course

ID = re.compile(r"[a-z][a-z0-9_]*")

COURSE_TOML = '''# A torch-katas course. See docs/authoring.md.
name = {name}
languages = ["en"]           # add "zh" to give Chinese statements, hints, messages and stubs too
exercises = []               # in teaching order; `grade new` adds to it

# An assignment is a named list of exercises, with points overrides if wanted:
# [assignments.week1]
# exercises = ["hw1_backprop"]
# points = {{ "hw1_backprop.double" = 4 }}

# Points of single checks for the whole course ("exercise.check" = points):
# [points]
'''

STUB = '''"""{title}

Write `double(x)`: a new tensor holding twice the values of `x`, of the same shape and dtype.
Replace the TODO, then run `grade {id}`.
"""

import torch


def double(x: torch.Tensor) -> torch.Tensor:
    """Twice `x`, as a new tensor (x itself unchanged)."""
    # TODO: return a tensor twice x
    raise NotImplementedError
'''

SOLUTION = '''"""Reference solution of {id}."""

import torch


def double(x: torch.Tensor) -> torch.Tensor:
    return 2 * x
'''

VARIANT = '''"""A correct answer written differently: it must score full."""

import torch


def double(x: torch.Tensor) -> torch.Tensor:
    return x + x
'''

MISTAKE = '''# Mistake: squares x instead of doubling it.
# Expect: double(x) has wrong values
import torch


def double(x: torch.Tensor) -> torch.Tensor:
    return x * x
'''

CHECKS = '''"""Hidden checks of {id}: they run in the judge; `submission` calls the learner's code in the sandbox."""

import torch

from grader.checking import check, expect_close


@check("double(x) returns twice x", points=2)
def test_double(submission, rng):
    x = torch.randn(4, 3, generator=rng)  # inputs are drawn anew each run: answers cannot be hard-coded
    expect_close(submission.double(x), 2 * x, "double(x)", hints={{
        "factor 0.5": ("It returned x itself: multiply by 2.", "它返回了 x 本身：要乘以 2。"),
    }})
'''

STATEMENT = '''# {title}

Write `double(x)` in `{id}.py`: it returns a new tensor holding twice the values of `x`, with the same
shape and dtype.

The checks call `double` on random tensors and compare with `2 * x`.
'''

EXERCISE_TOML = '''title = "{title}"
topics = ["tensors"]
difficulty = 1
points = 2
time_limit = 10
hints = [
    "Arithmetic on a tensor works element by element.",
    "Multiplying a tensor by a number multiplies every value.",
    "return 2 * x",
]
'''


def new_exercise(course_root: Path, exercise_id: str, title: str | None = None) -> list[Path]:
    """Scaffold exercise `exercise_id` in the course at `course_root` (made, with its course.toml, if it does
    not exist yet); return the files written."""
    title = title or exercise_id.replace("_", " ").capitalize()
    values = {"id": exercise_id, "title": title}
    return write_exercise(course_root, exercise_id, {
        ("exercises", f"{exercise_id}.py"): STUB.format(**values),
        ("exercises", "README.md"): STATEMENT.format(**values),
        ("exercises", "exercise.toml"): EXERCISE_TOML.format(**values),
        ("solutions", None): SOLUTION.format(**values),
        ("checks", None): CHECKS.format(**values),
        ("mistakes", "squares_instead.py"): MISTAKE,
        ("variants", "adds_itself.py"): VARIANT,
    })


def write_exercise(course_root: Path, exercise_id: str, files: dict[tuple[str, str | None], str]) -> list[Path]:
    """Write an exercise's files into the course's places, (place, name) -> text: ("exercises", "README.md")
    goes to exercises/<id>/README.md, ("solutions", None) to solutions/<id>.py; add it to the teaching order."""
    if not ID.fullmatch(exercise_id):
        raise CourseError(f"'{exercise_id}' cannot name an exercise: use lower-case letters, digits and _ "
                          "(hw1_backprop)")
    course = _course_at(course_root)
    if (course.exercises_dir / exercise_id).exists():
        raise CourseError(f"{course.exercises_dir / exercise_id} already exists")
    places = {"exercises": course.exercises_dir, "solutions": course.solutions_dir, "checks": course.checks_dir,
              "mistakes": course.mistakes_dir, "variants": course.variants_dir}
    written = []
    for (place, name), text in files.items():
        path = places[place] / exercise_id / name if name else places[place] / f"{exercise_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    add_to_order(course.root, exercise_id)
    return written


def _course_at(root: Path) -> Course:
    """The course at `root`, made (with a course.toml) if it does not exist yet."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / COURSE_FILE).exists():
        (root / COURSE_FILE).write_text(COURSE_TOML.format(name=json.dumps(root.resolve().name)), encoding="utf-8")
    return load_course(root.resolve())


def add_to_order(root: Path, exercise_id: str) -> None:
    """Append the exercise to course.toml's `exercises` list (the teaching order), keeping the rest of the file."""
    path = root / COURSE_FILE
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^exercises\s*=\s*\[(.*?)\]", text, re.MULTILINE | re.DOTALL)
    if match is None:
        text = text.rstrip("\n") + f"\nexercises = [{json.dumps(exercise_id)}]\n"
    else:
        items = [item.strip() for item in match.group(1).split(",") if item.strip()]
        items.append(json.dumps(exercise_id))
        text = text[:match.start(1)] + ", ".join(items) + text[match.end(1):]
    path.write_text(text, encoding="utf-8")


# -- release -----------------------------------------------------------------------------------------

STUDENT_FILES = ("README.md", "README.zh.md", "exercise.toml")


def release(course: Course, exercises, out: Path, notebooks: bool = False, lang: str = "en") -> list[Path]:
    """Write the student version of `exercises` into `out`: a workspace (exercises/ with the stubs, notebooks if
    asked) that follows the course in out/course/, which grades with the public checks only
    (grader/course/visibility.py):
    stubs, statements, metadata (with the points the hidden checks keep for grading time), data files, the public
    checks and a course.toml. Never solutions, hidden checks, mistakes or variants."""
    from grader.course.exercises import data_files
    from grader.course.visibility import public_source, release_points

    if (out / "exercises").exists():
        raise CourseError(f"{out / 'exercises'} already exists: release into an empty folder")
    written = []
    points = {}
    root = out / "course"
    for ex in exercises:
        folder = root / "exercises" / ex.name
        for path in [ex.folder / name for name in (ex.stub.name, *STUDENT_FILES)] + data_files(ex) + \
                [stub_text.catalogue_file(ex, other) for other in course.languages if other != "en"]:
            if path.is_file() and path.name != "exercise.toml":
                for target in {folder / path.relative_to(ex.folder), out / "exercises" / ex.name / path.name}:
                    if target.parent.parent == out / "exercises" and path.name not in (ex.stub.name, *STUDENT_FILES):
                        continue  # the workspace gets the stub and the statement, as `grade init` gives them
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if target.parent.parent == out / "exercises" and path == ex.stub:
                        target.write_text(stub_text.stub(ex, lang), encoding="utf-8")  # the learner's language
                    else:
                        shutil.copy2(path, target)
                    written.append(target)
        public, overrides, hidden = release_points(ex)
        points.update({f"{ex.name}.{cid}": value for cid, value in overrides.items()})
        made_public = [cid for cid, how in ex.visibility.items() if how == "public"]  # by exercise.toml, the course
        line = (f"points = {sum(public.values()):g}  # the public checks'\n"
                f"hidden_points = {hidden:g}  # in the checks that run when the teacher grades"
                + (f"\npublic = {json.dumps(made_public)}" if made_public else ""))
        meta = re.sub(r"(?ms)^public\s*=\s*\[.*?\][^\n]*\n?", "",  # the release says it again, as it is now
                      (ex.folder / "exercise.toml").read_text(encoding="utf-8"))
        meta = re.sub(r"(?m)^points\s*=.*$", line, meta, count=1)  # no backslash nor group in it: ids, numbers
        (folder / "exercise.toml").write_text(meta, encoding="utf-8")
        checks = root / "checks" / f"{ex.name}.py"
        checks.parent.mkdir(exist_ok=True)
        checks.write_text(public_source(ex.checks, ex.visibility), encoding="utf-8")
        written += [folder / "exercise.toml", checks]
        if notebooks:
            from grader.course.notebook_writer import write_notebook

            notebook = out / "notebooks" / f"{ex.name}.ipynb"
            written.append(write_notebook(ex, stub_text.stub(ex, lang), notebook, lang))
    toml = [f"# The student version of {course.name}, with its public checks (the hidden ones run when the teacher "
            "grades).", f"name = {json.dumps(course.name)}", f"languages = {json.dumps(course.languages)}",
            f"exercises = {json.dumps([ex.name for ex in exercises])}", "", "[points]",
            *(f"{json.dumps(key)} = {value:g}" for key, value in points.items())]
    (root / COURSE_FILE).write_text("\n".join(toml) + "\n", encoding="utf-8")
    (out / WORKSPACE_FILE).write_text("# this workspace follows the course below: `grade list`, `grade hint`, `grade "
                                      "ID` work here\ncourse = \"course\"\n", encoding="utf-8")
    return written + [root / COURSE_FILE, out / WORKSPACE_FILE]
