"""A teacher's own course: scaffold an exercise (`grade new`; from an nbgrader notebook: from_nbgrader.py) and
write the student version (`grade release`). Never imports torch.

What `grade new` writes is a complete, working exercise that `grade validate` proves without a hand edit: a stub
with a TODO, a statement with what the checks verify, exercise.toml with points and hints, a solution, a checks
module with one check, three known mistakes and one correct variant; in a course with Chinese, the statement, hints
and stub texts in Chinese too, and an explained solution where the course asks for one. It joins the teaching order
(of a track: `--track`) by a parsed edit of course.toml that keeps its layout. The teacher then replaces the example
with their own lesson.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from pathlib import Path

import tomlkit

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

MISTAKES = {  # name -> a realistic wrong answer; its `# Expect:` line is text the message it gets must hold
    "squares_instead.py": '''# Mistake: squares x instead of doubling it.
# Expect: double(x) has wrong values
import torch


def double(x: torch.Tensor) -> torch.Tensor:
    return x * x
''',
    "returns_x.py": '''# Mistake: returns x itself, half of what is asked.
# Expect: multiply by 2
import torch


def double(x: torch.Tensor) -> torch.Tensor:
    return x.clone()
''',
    "adds_two.py": '''# Mistake: adds 2 instead of multiplying by 2.
# Expect: double(x) has wrong values
import torch


def double(x: torch.Tensor) -> torch.Tensor:
    return x + 2
''',
}

CHECKS = '''"""Hidden checks of {id}: they run in the judge; `submission` calls the learner's code in the sandbox."""

import torch

from grader.checking import check, expect_close, expect_tensor


@check("double(x) returns a tensor of x's shape and dtype", points=1,
       zh="double(x) 返回与 x 形状和 dtype 相同的 tensor")
def test_returns_tensor(submission, rng):
    x = torch.randn(2, 5, generator=rng)
    expect_tensor(submission.double(x), "double(x)", shape=x.shape, dtype=x.dtype)


@check("double(x) returns twice x", points=2, zh="double(x) 返回 x 的两倍", depends=["returns_tensor"])
def test_double(submission, rng):
    x = torch.randn(4, 3, generator=rng)  # inputs are drawn anew each run: answers cannot be hard-coded
    expect_close(submission.double(x), 2 * x, "double(x)", hints={{
        "factor 0.5": ("It returned x itself: multiply by 2.", "它返回了 x 本身：要乘以 2。"),
    }})
'''

STATEMENT = '''# {title}

Write `double(x)` in `{id}.py`: it returns a new tensor holding twice the values of `x`, with the same
shape and dtype.

## What the checks verify

- `double(x)` returns a tensor of `x`'s shape and dtype <!-- checks: returns_tensor -->
- `double(x)` equals `2 * x` on random tensors drawn anew each run <!-- checks: double -->
'''

STATEMENT_ZH = '''# {title}

在 `{id}.py` 中写出 `double(x)`：返回一个新的 tensor，值是 `x` 的两倍，形状和 dtype 与 `x` 相同。

## 检查内容

- `double(x)` 返回的 tensor 与 `x` 的形状和 dtype 相同 <!-- checks: returns_tensor -->
- 在每次重新抽取的随机 tensor 上，`double(x)` 等于 `2 * x` <!-- checks: double -->
'''

EXERCISE_TOML = '''title = "{title}"
topics = ["tensors"]
difficulty = 1
points = 3
time_limit = 10
public = ["returns_tensor"]  # the checks a released stub's student may run (`grade release`); the others stay hidden
hints = [
    "Arithmetic on a tensor works element by element.",
    "Multiplying a tensor by a number multiplies every value.",
    "return 2 * x",
]
'''

EXERCISE_TOML_ZH = '''
[zh]
title = "{title}"
hints = [
    "tensor 的算术是逐元素进行的。",
    "tensor 乘以一个数，会把每个值都乘以这个数。",
    "return 2 * x",
]
'''

STUB_ZH = """# The stub's comments and docstrings in Chinese (docs/authoring.md): each text as the English stub
# has it (`en`), then its translation (`zh`); the code stays as it is.

[[text]]
en = '''{title}

Write `double(x)`: a new tensor holding twice the values of `x`, of the same shape and dtype.
Replace the TODO, then run `grade {id}`.
'''
zh = '''{title}

写出 `double(x)`：一个新的 tensor，值是 `x` 的两倍，形状和 dtype 不变。
替换掉 TODO，然后运行 `grade {id}`。
'''

[[text]]
en = '''Twice `x`, as a new tensor (x itself unchanged).'''
zh = '''`x` 的两倍，作为一个新的 tensor（x 本身不变）。'''

[[text]]
en = '''TODO: return a tensor twice x'''
zh = '''TODO：返回一个是 x 两倍的 tensor'''
"""

EXPLAIN = """idea = '''Multiplying a tensor by a number multiplies every value and makes a new tensor: `x` stays as
it was.'''
{idea_zh}
[[avoids]]
key = "factor-0.5"
en = "It multiplies by 2, so it never returns x itself."
{avoid_zh}
[[text]]
en = '''Reference solution of {id}.'''
{text_zh}"""
EXPLAIN_IDEA_ZH = "idea_zh = '''tensor 乘以一个数会把每个值都乘以它，并得到一个新的 tensor：`x` 保持不变。'''\n"
EXPLAIN_AVOID_ZH = 'zh = "它乘以 2，所以不会返回 x 本身。"\n'
EXPLAIN_TEXT_ZH = "zh = '''{id} 的参考答案。'''\n"


def new_exercise(course_root: Path, exercise_id: str, title: str | None = None,
                 track: str | None = None) -> list[Path]:
    """Scaffold exercise `exercise_id` in the course at `course_root` (made, with its course.toml, if it does
    not exist yet), with every file the course's `grade validate` asks for (its languages, its number of mistakes,
    an explained solution); return the files written."""
    title = title or exercise_id.replace("_", " ").capitalize()
    values = {"id": exercise_id, "title": title}
    course = _course_at(course_root)
    zh = "zh" in course.languages
    files: dict[tuple[str, str | None], str] = {
        ("exercises", f"{exercise_id}.py"): STUB.format(**values),
        ("exercises", "README.md"): STATEMENT.format(**values),
        ("exercises", "exercise.toml"): EXERCISE_TOML.format(**values) + (EXERCISE_TOML_ZH.format(**values)
                                                                          if zh else ""),
        ("solutions", None): SOLUTION.format(**values),
        ("checks", None): CHECKS.format(**values),
        **{("mistakes", name): text for name, text in MISTAKES.items()},
        ("variants", "adds_itself.py"): VARIANT,
    }
    if zh:
        files[("exercises", "README.zh.md")] = STATEMENT_ZH.format(**values)
        files[("exercises", f"{exercise_id}.zh.toml")] = STUB_ZH.format(**values)
    if course.explained:
        files[("solutions", f"{exercise_id}.explain.toml")] = EXPLAIN.format(
            id=exercise_id, idea_zh=EXPLAIN_IDEA_ZH if zh else "", avoid_zh=EXPLAIN_AVOID_ZH if zh else "",
            text_zh=EXPLAIN_TEXT_ZH.format(id=exercise_id) if zh else "")
    return write_exercise(course_root, exercise_id, files, track)


def write_exercise(course_root: Path, exercise_id: str, files: dict[tuple[str, str | None], str],
                   track: str | None = None) -> list[Path]:
    """Write an exercise's files into the course's places, (place, name) -> text: ("exercises", "README.md")
    goes to exercises/<id>/README.md, ("solutions", None) to solutions/<id>.py, ("solutions", "<id>.explain.toml")
    beside it; add it to the teaching order (of `track`)."""
    if not ID.fullmatch(exercise_id):
        raise CourseError(f"'{exercise_id}' cannot name an exercise: use lower-case letters, digits and _ "
                          "(hw1_backprop)")
    course = _course_at(course_root)
    if (course.exercises_dir / exercise_id).exists():
        raise CourseError(f"{course.exercises_dir / exercise_id} already exists")
    document = _ordered(course, exercise_id, track)  # refused before any file is written
    places = {"exercises": course.exercises_dir, "solutions": course.solutions_dir, "checks": course.checks_dir,
              "mistakes": course.mistakes_dir, "variants": course.variants_dir}
    written = []
    for (place, name), text in files.items():
        if name is None:
            path = places[place] / f"{exercise_id}.py"
        elif place in ("exercises", "mistakes", "variants"):
            path = places[place] / exercise_id / name
        else:  # beside the solutions' or the checks' modules
            path = places[place] / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    (course.root / COURSE_FILE).write_text(tomlkit.dumps(document), encoding="utf-8")
    return written


def _course_at(root: Path) -> Course:
    """The course at `root`, made (with a course.toml) if it does not exist yet."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / COURSE_FILE).exists():
        (root / COURSE_FILE).write_text(COURSE_TOML.format(name=json.dumps(root.resolve().name)), encoding="utf-8")
    return load_course(root.resolve())


def _ordered(course: Course, exercise_id: str, track: str | None) -> tomlkit.TOMLDocument:
    """course.toml with the exercise appended to its teaching order, parsed and edited with its layout and comments
    kept (tomlkit): to `track`'s list in a course of tracks (to the one track, if there is only one), else to
    `exercises`. A track that does not exist, or none named where there are several, is refused."""
    path = course.root / COURSE_FILE
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    tracks = document.get("tracks") or []
    names = [str(t.get("name", "")) for t in tracks]
    if track is not None and track not in names:
        close = difflib.get_close_matches(track, names, n=1)
        raise CourseError(f"{path}: no track {track!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                          + (f"; its tracks: {', '.join(names)}" if names else "; it has no [[tracks]]"))
    if names and track is None:
        if len(names) > 1:
            raise CourseError(f"{path} has several tracks: name one with --track ({', '.join(names)})")
        track = names[0]
    table = next(t for t in tracks if str(t.get("name", "")) == track) if track is not None else document
    if "exercises" not in table:
        table["exercises"] = tomlkit.array()
    if exercise_id not in table["exercises"]:
        table["exercises"].append(exercise_id)
    return document


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
