"""Scale out with Gradescope: build an autograder bundle, and grade inside its container.

`grade gradescope ex05 ex06 --out autograder.zip` (or `grade --course dl101 gradescope --assignment week1`)
writes a zip with `setup.sh` (installs the grader's dependencies in a virtual environment),
`run_autograder` (grades /autograder/submission), the grader itself and, for a course of a teacher's own,
the exercises graded and their checks (never their solutions, mistakes or variants, nor any other exercise) and
a course.toml with what grading reads only: nothing about students (no [late], reviewer, roster or review).
Gradescope runs every submission in its own container, so a course of any size is graded in
parallel. Inside, `python -m grader.teacher.gradescope --root /autograder ex05 ex06` writes
/autograder/results/results.json in Gradescope's schema.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path

from grader.course.exercises import BUILTIN_ROOT, CHECKS_DIR, COURSE_FILE, PACKAGE_DIR, Course, Exercise
from grader.course.visibility import VISIBILITIES
from grader.judge.result import Result
from grader.text import Text, message_of

VENV = "/autograder/venv"

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu 22.04 or 24.04). The packages go
# into a virtual environment: Ubuntu 24.04's Python refuses pip installs into the system (PEP 668).
set -euo pipefail
apt-get update -qq && apt-get install -y -qq python3 python3-venv >/dev/null
python3 -m venv {venv}
{venv}/bin/pip install -q --index-url https://download.pytorch.org/whl/cpu {torch}
{venv}/bin/pip install -q {others}
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this for every submission (the zip is unpacked in /autograder/source).
source="${{AUTOGRADER_SOURCE:-/autograder/source}}"
python="${{AUTOGRADER_PYTHON:-{venv}/bin/python}}"
cd "$source" && PYTHONPATH="$source" exec "$python" -m grader.teacher.gradescope \\
    --root "${{AUTOGRADER_ROOT:-/autograder}}" {args}
"""


def validated_torch() -> str:
    """The torch version running here, the one `grade validate` proved the checks with ("2.13.0", without a
    local build tag such as +cpu)."""
    from importlib.metadata import version

    return version("torch").split("+")[0]


def setup_script() -> str:
    """setup.sh: the CPU build of the torch running here (pinned: the autograder grades with the version the
    checks were validated with), then the grader's other dependencies, as this installed grader declares them
    (no extras), into a virtual environment."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    needed = [r for r in requires("torch-katas") or [] if "extra ==" not in r]
    others = [r for r in needed if Requirement(r).name != "torch"]
    return SETUP.format(venv=VENV, torch=shlex.quote(f"torch=={validated_torch()}"), others=shlex.join(others))


def build_bundle(exercises: list[Exercise], out: Path, *, time_limit: float | None = None, memory: int | None = None,
                 lang: str = "en", assignment: str | None = None) -> Path:
    """Write the autograder zip: setup.sh, run_autograder and the grader package with the exercises graded and their
    checks only (and a teacher's course: its course.toml, and those of its exercises and checks). `time_limit`
    (seconds per call), `memory` (MiB) and `lang` are the runner's options; `assignment` gives the points of that
    assignment of the course.

    The reference solutions stay out: student code runs in that container. So does every other exercise.
    """
    course = exercises[0].course
    args = ["--lang", lang] + (["--time-limit", f"{time_limit:g}"] if time_limit else []) \
        + (["--memory", str(memory)] if memory else [])
    if not course.built_in:
        args += ["--course", "course"] + (["--assignment", assignment] if assignment else [])
    elsewhere = [ex for ex in exercises if ex.home is not course and not ex.home.built_in]
    if elsewhere:
        raise BundleError(Text("{ex} lies in the course {home}, which a bundle does not carry: copy it into {course} "
                               "(docs/authoring.md)", "{ex} 在课程 {home} 中，打包时不会带上它：请把它复制到 "
                               "{course} 中（docs/authoring.md）", ex=elsewhere[0].id, home=elsewhere[0].home.name,
                               course=course.name))
    ignore = shutil.ignore_patterns("__pycache__", ".*")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        package = root / "grader"
        shutil.copytree(PACKAGE_DIR, package, ignore=lambda folder, names: {"__pycache__", *(
            ("_bundle", "checks") if Path(folder) == PACKAGE_DIR else ())} & set(names))  # checks: the chosen only
        (package / "checks").mkdir()
        for name in ("__init__.py", "pytest.ini"):
            shutil.copy(CHECKS_DIR / name, package / "checks" / name)
        (package / "_bundle" / "exercises").mkdir(parents=True)
        shutil.copy(BUILTIN_ROOT / COURSE_FILE, package / "_bundle" / COURSE_FILE)
        for ex in exercises:
            home = ex.home
            if home.built_in:
                folder, checks = package / "_bundle" / "exercises" / ex.name, package / "checks"
            else:
                folder, checks = root / "course" / "exercises" / ex.name, root / "course" / "checks"
            shutil.copytree(ex.folder, folder, ignore=ignore)
            checks.mkdir(parents=True, exist_ok=True)
            for path in (ex.checks, ex.checks.with_suffix(".keys.toml")):
                if path.is_file():
                    shutil.copy(path, checks / path.name)
        if not course.built_in:
            (root / "course").mkdir(exist_ok=True)
            (root / "course" / COURSE_FILE).write_text(graded_course_toml(course), encoding="utf-8")
        (root / "setup.sh").write_text(setup_script())
        (root / "run_autograder").write_text(RUN.format(venv=VENV, args=shlex.join(
            args + [ex.name if not course.built_in else ex.id for ex in exercises])))
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    info = zipfile.ZipInfo(path.relative_to(root).as_posix())
                    executable = path.name in ("setup.sh", "run_autograder")
                    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    zf.writestr(info, path.read_bytes())
    return out


def graded_course_toml(course: Course) -> str:
    """The course.toml a bundle carries: what grading reads (name, languages, ids, the exercises in order, points,
    the assignments' exercises and points, visibility), in the bundle's layout. Nothing else of the teacher's
    course.toml travels: no [late] (extensions and excused students), reviewer, nor anything added later."""
    import tomlkit

    graded: dict = {"name": course.name, "languages": course.languages, "short_ids": course.short_ids,
                    "exercises": course.order}
    if course.points:
        graded["points"] = course.points
    if course.assignments:
        graded["assignments"] = {name: {"exercises": list(spec.get("exercises", [])),
                                        **({"points": spec["points"]} if spec.get("points") else {})}
                                 for name, spec in course.assignments.items()}
    if course.visibility:
        graded["visibility"] = {key: {how: [c for c, h in checks.items() if h == how]
                                      for how in VISIBILITIES if how in checks.values()}
                                for key, checks in course.visibility.items() if checks}
    return ("# The course as its Gradescope bundle grades it: the teacher's course.toml, less what is not grading's\n"
            + tomlkit.dumps(graded))


class BundleError(ValueError):
    """The exercises cannot travel in a bundle."""


NOT_RUN = Text("Not run: the file did not load (the reason is at the top).", "没有运行：文件没能加载（原因见最上面）。")


def to_gradescope(results: list[Result], problems: list[str], lang: str = "en") -> dict:
    """Gradescope's results.json: a test per check, named with the exercise, shown to students as the check's
    visibility says (public: visible; after_due_date: after the due date; hidden: once grades are published)."""
    from grader.course.visibility import GRADESCOPE

    tests = []
    for r in results:
        for c in r.checks:
            output = (NOT_RUN if c.outcome == "not_run" else c.message).render(lang)
            tests.append({"name": f"{r.exercise}: {c.title.render(lang)}", "score": c.points,
                          "max_score": c.max_points, "status": "passed" if c.passed else "failed", "output": output,
                          "visibility": GRADESCOPE[c.visibility]})
        if not r.checks:
            tests.append({"name": f"{r.exercise}: submission", "score": 0.0, "max_score": r.max_score,
                          "status": "failed", "output": r.message.render(lang), "visibility": "visible"})
    lines = [f"{r.exercise}: {r.score:g}/{r.max_score:g} ({r.status}) {r.message.render(lang)}".rstrip()
             for r in results] + problems
    return {"score": sum(r.score for r in results), "output": "\n".join(lines), "tests": tests,
            "visibility": "visible", "stdout_visibility": "hidden"}


def run(root: Path, exercise_ids: list[str], *, lang: str = "en", time_limit: float | None = None,
        memory: int | None = None, assignment: str | None = None) -> dict:
    """Grade root/submission as the given exercises (a .zip in it is unpacked, as `grade batch` does); write
    root/results/results.json."""
    from grader.judge.result import error_result
    from grader.teacher.collect import collect
    from grader.judge.doctor import run_self_test, summary_line
    from grader.course.exercises import find_exercise
    from grader.judge.grading import grade
    from grader.sandbox.source import SubmissionError, load_source

    exercises = [find_exercise(i, assignment) for i in exercise_ids]
    print(summary_line(run_self_test(), lang))  # the container's log, seen by instructors
    options = {"lang": lang, "time_limit": time_limit, "memory": memory << 20 if memory else None}
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        staged = Path(tmp) / "in" / "student"
        shutil.copytree(root / "submission", staged, symlinks=True)  # a link stays a link: reported, not followed
        found = collect(staged.parent, exercises, Path(tmp) / "unpacked")
        for job in found.jobs:
            try:
                results.append(grade(job.exercise, load_source(job.path), hidden=[root / "submission"], **options))
            except SubmissionError as exc:
                results.append(error_result("student", job.exercise, message_of(exc)))
    by_id = {ex.id: ex for ex in exercises}
    results += [error_result("student", by_id[p["exercise"]], p["message"]) for p in found.problems if "exercise" in p]
    problems = [Text.of(p["message"]).render(lang) for p in found.problems if "exercise" not in p]
    told = {r.exercise for r in results}
    for ex in exercises:
        if ex.id not in told:
            results.append(error_result("student", ex,
                                        f"no file named like {ex.id}*.py or {ex.id}*.ipynb was submitted"))
    report = to_gradescope(results, problems, lang)
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/autograder"))
    parser.add_argument("--course", help="the course folder in the bundle (a teacher's own course)")
    parser.add_argument("--assignment", help="the course's assignment whose points apply")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--time-limit", type=float)
    parser.add_argument("--memory", type=int, help="MiB")
    parser.add_argument("exercises", nargs="+")
    args = parser.parse_args()
    if args.course:
        from grader.course.exercises import load_course, use_course

        use_course(load_course(Path(args.course).resolve()))
    run(args.root, args.exercises, lang=args.lang, time_limit=args.time_limit, memory=args.memory,
        assignment=args.assignment)


if __name__ == "__main__":
    main()
