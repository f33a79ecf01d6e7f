"""Find the course and its exercises, and read their metadata. Never imports torch.

A course is a folder with a `course.toml` (name, languages, exercises in teaching order, assignments,
points overrides, the checks' visibility) and the four places of an exercise:

    exercises/<id>/<id>.py, README.md, exercise.toml    what learners get: stub, statement, metadata
    solutions/<id>.py                                   the reference solution
    checks/<id>.py                                      the hidden checks
    mistakes/<id>/*.py, variants/<id>/*.py              known wrong answers and correct variants

where its `[layout]` may put them elsewhere (the built-in course's checks are the package grader.checks, its
mistakes and variants under tests/). An entry `COURSE:EXERCISE` of `exercises` is another course's exercise, used
as it is from where it lies: `torch-katas:ex05` (the built-in course), `dl101:hw1` (an installed course), or
`../shared:hw1` (a course folder, relative to this one); its id is the one it has there. The built-in course
(course.toml at the project's top, or in the wheel's grader/_bundle) is the default course, read by the same code
as any other; a course can also be an installed package that names itself in the `torch_katas.courses` entry point
group. `grade --course PATH|NAME`, the
TORCH_KATAS_COURSE variable, a `course.toml` in the current folder or a parent, or a workspace made by
`grade init --course` select one (`find_course`); `use_course` makes it the one every command sees.
"""

from __future__ import annotations

import ast
import difflib
import functools
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple, TypeVar

from grader.course.visibility import VISIBILITIES
from grader.text import LANGUAGES, Text, message_of, verbatim

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # grader/
COURSE_FILE = "course.toml"
WORKSPACE_FILE = "torch-katas.toml"  # in a workspace made by `grade init --course`: which course it follows
ENTRY_POINTS = "torch_katas.courses"
BUILTIN = "torch-katas"  # the built-in course's name, as --course and a workspace name it
BUILTIN_ROOT = PACKAGE_DIR / "_bundle" if (PACKAGE_DIR / "_bundle" / COURSE_FILE).is_file() else PACKAGE_DIR.parent
CHECKS_DIR = PACKAGE_DIR / "checks"  # the built-in course's checks (and the judge's pytest.ini)
SOLUTIONS_DIR = PACKAGE_DIR.parent / "solutions"  # in a clone only: the wheel ships no solutions


E = TypeVar("E", "Exercise", "Named")
ROUTE = re.compile(r"autograd|[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # a [banned] route: autograd, or a dotted name


def exercise_id(name: str, short: bool = False) -> str:
    """An exercise's id: its folder name, or with `short` (a course's `short_ids`) the part before the first
    underscore (`ex05` for `ex05_manual_backward`)."""
    head, sep, _ = name.partition("_")
    return head if short and sep and head else name


class UnknownExercise(LookupError):
    """Raised for an exercise id that matches nothing, or more than one exercise."""


class CourseError(ValueError):
    """A course that cannot be found or read."""


@dataclass
class Exercise:
    """One exercise: its folder, metadata and the places of its pieces."""

    name: str  # ex05_manual_backward, hw1_backprop
    folder: Path
    title: str
    topics: list[str]
    difficulty: int
    points: float  # the total, with the course's and assignment's points overrides
    time_limit: float
    hints: list[str]
    course: Course
    zh: dict = field(default_factory=dict)
    preload: list[str] = field(default_factory=list)  # modules the judge imports before learner code runs
    banned: dict[str, list[str]] = field(default_factory=dict)  # function -> routes it must not take (routes.py)
    rules: dict[str, list[str]] = field(default_factory=dict)  # function -> its statement's rules (author/families.py)
    number: int = 0  # 1-based place in the course's teaching order
    overrides: dict[str, float] = field(default_factory=dict)  # check id -> points, from course.toml
    hidden_points: float = 0.0  # in a release: the points of the checks that run only at grading time
    variants: dict[str, list] = field(default_factory=dict)  # parameter -> values drawn per kata (course/variants.py)
    origin: Course | None = None  # the course its pieces lie in, when it is another's (`COURSE:EXERCISE`)
    visibility: dict[str, str] = field(default_factory=dict)  # check id -> it, by exercise.toml or course.toml

    @property
    def home(self) -> Course:
        """The course whose folders hold its stub, solution, checks, mistakes and variants."""
        return self.origin or self.course

    @property
    def id(self) -> str:
        return exercise_id(self.name, self.home.short_ids)

    @property
    def stub(self) -> Path:
        return self.folder / f"{self.name}.py"

    @property
    def solution(self) -> Path:
        return self.home.solutions_dir / f"{self.name}.py"

    @property
    def checks(self) -> Path:
        return self.home.checks_dir / f"{self.name}.py"

    @property
    def checks_module(self) -> str:
        """The module name the judge imports the checks as (pytest's own rule for the checks folder)."""
        if self.home.checks_package:
            return f"{self.home.checks_package}.{self.name}"
        return self.name

    def statement(self, lang: str = "en") -> str:
        path = self.folder / ("README.zh.md" if lang == "zh" else "README.md")
        if not path.exists():
            path = self.folder / "README.md"
        return re.sub(r" ?<!-- checks:[^>]*-->", "", path.read_text(encoding="utf-8"))  # the trace: for authors

    def text(self, key: str, lang: str = "en"):
        """A metadata text (title, hints) in the asked language, English as fallback."""
        if lang == "zh" and key in self.zh:
            return self.zh[key]
        return getattr(self, key)

    def declared_checks(self) -> list[dict]:
        """The `@check` functions of the checks module (id, title, points), read without importing it: one per
        function, so a parametrized check once (`checklist.collected_checks` has every check as it runs), with
        the visibility the exercise and the course give it."""
        return [{**c, "visibility": self.visibility_of(c["id"], c["visibility"])} for c in declared_checks(self.checks)]

    def checks_as_released(self) -> list[dict]:
        """`declared_checks`, or where exercise.toml or the course names a check they do not know (parametrized by a
        helper), every check as collected (with points as declared); a check exercise.toml names must be one."""
        declared = self.declared_checks()
        if set(self.visibility) - {c["id"] for c in declared}:
            from grader.course.collection import CollectionError, collected_checks  # imports torch

            try:
                declared = collected_checks(replace(self, overrides={}))
            except CollectionError as exc:
                raise CourseError(f"{self.checks}: {exc}") from None
        ids = {c["id"].split("[")[0] for c in declared}
        unknown = sorted(set(self.visibility) - ids)  # the course's are known when it loads: exercise.toml's
        if unknown:
            raise CourseError(not_found(self.folder / "exercise.toml", "public", unknown[0], sorted(ids), "check"))
        return declared

    def visibility_of(self, check_id: str, declared: str = "hidden") -> str:
        """The visibility of check `check_id` (`init_weights[Linear]`: its function's), `declared` by its @check
        unless exercise.toml or the course sets it."""
        return self.visibility.get(check_id.split("[")[0], declared)

    def check_points(self) -> dict[str, float]:
        """Check id -> points, with the course's overrides (a parametrized check's id as overridden), read without
        importing the checks: what a rerun scores stored outcomes with (grader/teacher/graded_against.py)."""
        return {**{c["id"]: self.overrides.get(c["id"], c["points"]) for c in self.declared_checks()},
                **self.overrides}

    def as_dict(self, lang: str = "en") -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "title": self.text("title", lang),
            "topics": self.topics,
            "difficulty": self.difficulty,
            "points": self.points,
        }


class Track(NamedTuple):
    """A path through a course (course.toml's `[[tracks]]`): its exercises, in teaching order."""

    name: str  # as `grade list --track` and `grade init --track` name it
    title: str
    zh: str  # its title in Chinese ("": the English one)
    exercises: list[str]  # folder names

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" and self.zh else self.title


@dataclass
class Course:
    """A course: its exercises in teaching order and where their solutions, checks, mistakes and variants are."""

    name: str
    spec: str  # how to name it again: "torch-katas", an installed course's name, or a folder
    root: Path
    exercises_dir: Path
    solutions_dir: Path
    checks_dir: Path
    mistakes_dir: Path
    variants_dir: Path
    order: list[str] = field(default_factory=list)  # exercise folder names or COURSE:EXERCISE; empty: every folder
    languages: list[str] = field(default_factory=lambda: ["en"])
    assignments: dict[str, dict] = field(default_factory=dict)  # name -> {"exercises": [...], "points": {...}}
    points: dict[str, float] = field(default_factory=dict)  # "exercise.check" -> points
    checks_package: str | None = None  # "grader.checks" for the built-in course: its checks are a package
    min_mistakes: int = 1  # what `grade validate` asks of each exercise
    min_hints: int = 1
    explained: bool = False  # `grade validate` asks each exercise for solutions/<name>.explain.toml
    short_ids: bool = False  # ex05 for ex05_manual_backward
    tracks: list[Track] = field(default_factory=list)  # none: one path, the teaching order
    reviewer: str = ""  # who reviews, as students read it (`grade review`'s default --by)
    visibility: dict[str, dict[str, str]] = field(default_factory=dict)  # [visibility.EXERCISE]: check id -> it
    _others: dict[str, Course] = field(default_factory=dict, repr=False, compare=False)  # COURSE -> it, once read

    @property
    def built_in(self) -> bool:
        """The course shipped with torch-katas: every install has it (a service or a worker finds it by name)."""
        return self.spec == BUILTIN

    def exercises(self, assignment: str | None = None) -> list[Exercise]:
        """The exercises in teaching order, or an assignment's, with their points overrides applied."""
        entries = self.entries()
        if assignment is None:
            return [self._with_points(self._load(entry), self.points) for entry in entries]
        if assignment not in self.assignments:
            known = ", ".join(sorted(self.assignments)) or "none"
            raise CourseError(f"course {self.name} has no assignment '{assignment}' (assignments: {known})")
        spec = self.assignments[assignment]
        chosen = [self._assigned(entries, str(key)) for key in spec.get("exercises", [])]  # only these are read
        return [self._with_points(self._load(entry), {**self.points, **spec.get("points", {})}) for entry in chosen]

    def _assigned(self, entries: list[Named], key: str) -> Named:
        """The entry an assignment's exercise names: as `find_in` resolves it, or `COURSE:EXERCISE` as the course's
        own list writes it (`torch-katas:ex05`)."""
        spec, borrowed, name = key.rpartition(":")
        if not borrowed:
            return find_in(entries, key)
        home = self.other(spec).root.resolve()
        found = [entry for entry in entries if entry.home.root.resolve() == home]
        if not found:
            raise UnknownExercise(Text("{key}: the course's exercises list nothing of {spec}",
                                       "{key}：课程的练习列表里没有 {spec} 的练习", key=verbatim(key),
                                       spec=verbatim(spec)))
        return find_in(found, name)

    def find(self, key: str, assignment: str | None = None) -> Exercise:
        """The exercise `key` names (see `find_in`); outside an assignment, only its own exercise.toml is read."""
        if assignment is not None:
            return find_in(self.exercises(assignment), key)
        return self._with_points(self._load(find_in(self.entries(), key)), self.points)

    def track(self, name: str) -> Track:
        """The track called `name` (or a unique prefix of its name)."""
        found = [t for t in self.tracks if t.name == name] or [t for t in self.tracks if t.name.startswith(name)]
        if len(found) != 1:
            known = ", ".join(t.name for t in self.tracks) or "none"
            raise CourseError(f"course {self.name} has no track '{name}' (tracks: {known})")
        return found[0]

    def track_of(self, exercise: Exercise) -> Track | None:
        return next((t for t in self.tracks if exercise.name in t.exercises), None)

    def entries(self) -> list[Named]:
        """The exercises in teaching order, known by folder name, place, id and the course they lie in."""
        if not self.order:
            names = sorted(p.name for p in self.exercises_dir.iterdir() if (p / "exercise.toml").is_file()) \
                if self.exercises_dir.is_dir() else []
            return [Named(name, number, exercise_id(name, self.short_ids), self) for number, name in
                    enumerate(names, 1)]
        entries = []
        for number, item in enumerate(self.order, 1):
            spec, borrowed, key = str(item).rpartition(":")
            if borrowed:
                home = self.other(spec)
                try:
                    found = find_in(home.entries(), key)
                except UnknownExercise as exc:
                    raise CourseError(Text("{path}: {item}: {error}", "{path}：{item}：{error}",
                                           path=self.root / COURSE_FILE, item=item, error=message_of(exc))) from None
                entries.append(found._replace(number=number))
            else:
                entries.append(Named(item, number, exercise_id(item, self.short_ids), self))
        unknown = next((key for key in self.visibility if not any(key in self._names(e) for e in entries)), None)
        if unknown is not None:
            raise CourseError(not_found(self.root / COURSE_FILE, f"[visibility] {unknown}", unknown,
                                        [n for e in entries for n in self._names(e)], "exercise"))
        return entries

    def _names(self, entry: Named) -> tuple[str, ...]:
        """What names `entry` in course.toml: its item of `exercises` (`torch-katas:ex05`), its name and its id."""
        return (*self.order[entry.number - 1:entry.number], entry.name, entry.id)

    def borrowed(self) -> list[Course]:
        """The other courses some of its exercises lie in (`COURSE:EXERCISE` entries), each once."""
        homes = {id(entry.home): entry.home for entry in self.entries() if entry.home is not self}
        return list(homes.values())

    def other(self, spec: str) -> Course:
        """The course `spec` names in a `COURSE:EXERCISE` entry: the built-in one, an installed one, or a folder
        (relative to this course's)."""
        if spec not in self._others:
            try:
                course = course_from(str(self.root / spec) if "/" in spec or spec.startswith(".") else spec)
            except CourseError as exc:
                raise CourseError(Text("{path}: {error}", "{path}：{error}", path=self.root / COURSE_FILE,
                                       error=message_of(exc))) from None
            if course.root.resolve() == self.root.resolve():
                raise CourseError(f"{self.root / COURSE_FILE}: {spec}: names this course itself")
            self._others[spec] = course
        return self._others[spec]

    def _load(self, entry: Named) -> Exercise:
        home = entry.home
        folder = home.exercises_dir / entry.name
        try:
            meta = tomllib.loads((folder / "exercise.toml").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CourseError(missing_exercise(self, entry.name, folder)) from None
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CourseError(f"{folder / 'exercise.toml'}: {exc}") from None
        ex = Exercise(
            name=entry.name,
            folder=folder,
            title=meta.get("title", entry.name),
            topics=list(meta.get("topics", [])),
            difficulty=int(meta.get("difficulty", 1)),
            points=float(meta.get("points", 0)),
            time_limit=float(meta.get("time_limit", 10)),
            hints=list(meta.get("hints", [])),
            zh=dict(meta.get("zh", {})),
            preload=list(meta.get("preload", [])),
            banned=_banned(meta.get("banned", {}), folder),
            rules={str(k): list(v) for k, v in meta.get("rules", {}).items()},
            hidden_points=float(meta.get("hidden_points", 0)),
            variants=dict(meta.get("variants", {})),
            number=entry.number,
            course=self,
            origin=home if home is not self else None,
        )
        ex.visibility = {**_public(meta.get("public", []), folder), **self._visibility(entry, ex)}
        return ex

    def _visibility(self, entry: Named, ex: Exercise) -> dict[str, str]:
        """What course.toml's [visibility] sets for the checks of `ex`; a check it names must be one of them."""
        told = {cid: how for key, table in self.visibility.items() if key in self._names(entry)
                for cid, how in table.items()}
        checks = {c["id"] for c in declared_checks(ex.checks)} if told else set()
        if set(told) - checks:  # a check declared otherwise (parametrized by a helper): only collection knows it
            from grader.course.collection import CollectionError, collected_checks  # imports torch

            try:
                checks |= {c["id"].split("[")[0] for c in collected_checks(ex)}
            except CollectionError as exc:
                raise CourseError(f"{ex.checks}: {exc}") from None
        for cid in told:
            if cid not in checks:
                raise CourseError(not_found(self.root / COURSE_FILE, f"[visibility] {self._names(entry)[0]}: {cid}",
                                            cid, sorted(checks), "check"))
        return told

    def _with_points(self, ex: Exercise, points: dict[str, float]) -> Exercise:
        """`ex` with the overrides that name it ("hw1_backprop.dw" or "hw1.dw"); its total follows them."""
        mine = {key.split(".", 1)[1]: float(value) for key, value in points.items()
                if key.split(".", 1)[0] in (ex.name, ex.id) and "." in key}
        if not mine:
            return ex
        declared = {c["id"]: c["points"] for c in ex.declared_checks()}
        if set(mine) - set(declared):  # a parametrized check ("init_weights[Linear]"): only collection knows it
            from grader.course.collection import CollectionError, collected_checks  # imports torch

            try:
                declared = {c["id"]: c["points"] for c in collected_checks(ex)}
            except CollectionError as exc:
                raise CourseError(f"{ex.checks}: {exc}") from None
        unknown = sorted(set(mine) - set(declared))
        if unknown:
            raise CourseError(f"{self.root / COURSE_FILE}: {ex.id} has no check {', '.join(unknown)} "
                              f"(its checks: {', '.join(declared)})")
        total = ex.points + sum(value - declared[cid] for cid, value in mine.items())
        return replace(ex, overrides=mine, points=total)


class Named(NamedTuple):
    """An exercise known by its folder name, place, id and the course it lies in (what `find_in` reads), its metadata
    unread."""

    name: str
    number: int
    id: str
    home: Course


def missing_exercise(course: Course, name: str, folder: Path) -> Text:
    """Why an exercise course.toml names cannot be read: no folder, and how to name another course's exercise."""
    said = Text("{path} names {name}, but {folder} has no exercise.toml", "{path} 列出了 {name}，但 {folder} 中没有 "
                "exercise.toml", path=course.root / COURSE_FILE, name=name, folder=folder)
    if course.spec != BUILTIN:
        try:
            found = find_in(builtin_course().entries(), name)
        except (UnknownExercise, CourseError):
            return said
        return Text("{said}: to use the built-in exercise, write \"{builtin}:{id}\" in exercises", "{said}：要使用"
                    "内置练习，请在 exercises 中写 \"{builtin}:{id}\"", said=said, builtin=BUILTIN, id=found.id)
    return said


def not_found(path: Path, where: str, name: str, known: list[str], kind: str) -> Text:
    """`{path}: {where}: no exercise (or check) of that name`, and the closest one there is."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    said = Text("{path}: {where}: there is no {kind} {name}", "{path}：{where}：没有名为 {name} 的{kind}", path=path,
                where=verbatim(where), name=verbatim(name), kind=Text(kind, "练习" if kind == "exercise" else "检查"))
    if not close:
        return said
    return said + Text(" (did you mean {close}?)", "（是不是 {close}？）", close=verbatim(close[0]))


def _public(names: object, folder: Path) -> dict[str, str]:
    """exercise.toml's `public`: the checks a release ships besides those @check marks public."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CourseError(f"{folder / 'exercise.toml'}: public is a list of check ids: public = [\"values\"]")
    return dict.fromkeys(names, "public")


def _visibility_tables(tables: object, path: Path) -> dict[str, dict[str, str]]:
    """course.toml's [visibility]: exercise -> check id -> visibility, from `[visibility."torch-katas:ex05"]`
    tables of lists (`public = ["values"]`, `hidden = [...]`, `after_due_date = [...]`)."""
    shape = (f'{path}: [visibility."EXERCISE"] takes lists of check ids: public = [...], hidden = [...], '
             'after_due_date = [...]')
    if not isinstance(tables, dict):
        raise CourseError(shape)
    found: dict[str, dict[str, str]] = {}
    for key, table in tables.items():
        if not isinstance(table, dict) or not set(table) <= set(VISIBILITIES) or not all(
                isinstance(ids, list) and all(isinstance(i, str) for i in ids) for ids in table.values()):
            raise CourseError(shape)
        found[key] = {cid: how for how, ids in table.items() for cid in ids}
        if len(found[key]) != sum(map(len, table.values())):
            raise CourseError(f"{path}: [visibility.\"{key}\"] names a check more than once")
    return found


def find_in(exercises: Sequence[E], key: str) -> E:
    """Resolve `5` (the 5th in teaching order), an id (`ex05`, `hw1_backprop`), a full name, or a unique
    prefix of one."""
    key = key.strip()
    if key.isdigit():
        number = int(key)
        for ex in exercises:
            if ex.number == number:
                return ex
        raise UnknownExercise(Text("there is no exercise number {number} (see `grade list`)", number=number))
    lowered = key.lower()
    for ex in exercises:
        if lowered in (ex.id.lower(), ex.name.lower()):
            return ex
    matches = [ex for ex in exercises if ex.name.lower().startswith(lowered) or ex.id.lower().startswith(lowered)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UnknownExercise(Text("'{key}' matches several exercises ({matches}): say which", key=key,
                                   matches=", ".join(ex.id for ex in matches)))
    raise UnknownExercise(Text("unknown exercise '{key}' (see `grade list`)", key=verbatim(key)))


def _banned(table: object, folder: Path) -> dict[str, list[str]]:
    """exercise.toml's `[banned]`: function -> routes, each `autograd` or a dotted name (checking/routes.py)."""
    if not isinstance(table, dict):
        raise CourseError(f"{folder / 'exercise.toml'}: [banned] must be a table: function = [routes]")
    for function, names in table.items():
        if not isinstance(names, list) or not all(isinstance(n, str) and ROUTE.fullmatch(n) for n in names):
            raise CourseError(f"{folder / 'exercise.toml'}: [banned] {function} = {names!r}: each route is "
                              "autograd or a dotted name (torch.optim, torch.nn.functional.softmax)")
    return {str(k): list(v) for k, v in table.items()}


def declared_checks(path: Path) -> list[dict]:
    """The `@check(title, points=..., zh=..., visibility=...)` functions of a checks module, read from its source
    (no import, no torch). A check whose title or points are not written as literals is read as points 0; zh is
    None then; visibility is "hidden" unless it says "public" or "after_due_date". A source is parsed once (a
    batch's gradebook asks once per result)."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [dict(c) for c in _declared_checks(source)]


@functools.lru_cache(maxsize=256)
def _declared_checks(source: str) -> list[dict]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and getattr(deco.func, "id", getattr(deco.func, "attr", "")) == "check":
                args = {kw.arg: kw.value for kw in deco.keywords}
                title = deco.args[0] if deco.args else args.get("title")
                points = deco.args[1] if len(deco.args) > 1 else args.get("points")
                zh = deco.args[2] if len(deco.args) > 2 else args.get("zh")
                visibility = args.get("visibility")
                found.append({"id": node.name.removeprefix("test_"),
                              "title": title.value if isinstance(title, ast.Constant) else node.name,
                              "points": float(points.value) if isinstance(points, ast.Constant)
                              and isinstance(points.value, (int, float)) else 0.0,
                              "zh": zh.value if isinstance(zh, ast.Constant) else None,
                              "visibility": visibility.value if isinstance(visibility, ast.Constant) else "hidden"})
    return found


# -- finding the course ---------------------------------------------------------------------------

def builtin_course() -> Course:
    """The exercises shipped with torch-katas: the course of the course.toml at the project's top."""
    return load_course(BUILTIN_ROOT, BUILTIN)


def load_course(root: Path, spec: str | None = None) -> Course:
    """The course whose course.toml is in `root` (`spec`: its installed name, if it is a package)."""
    path = root / COURSE_FILE
    try:
        meta = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise CourseError(f"no {COURSE_FILE} in {root}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{path}: {exc}") from None
    checks = meta.get("validate", {})
    layout = {part: str(place) for part, place in meta.get("layout", {}).items()}
    package = layout.get("checks") if "/" not in layout.get("checks", "/") else None  # checks as an importable package
    tracks = _tracks(meta.get("tracks", []), path)
    order = [name for track in tracks for name in track.exercises] or list(meta.get("exercises", []))
    if tracks and "exercises" in meta:
        raise CourseError(f"{path}: a course with [[tracks]] lists its exercises in them, not in `exercises`")
    if spec is None:  # the built-in course, found from a folder of the clone, is still the built-in course
        spec = BUILTIN if root.resolve() == BUILTIN_ROOT.resolve() else str(root)
    return Course(name=meta.get("name", root.name), spec=spec, root=root,
                  exercises_dir=root / layout.get("exercises", "exercises"),
                  solutions_dir=root / layout.get("solutions", "solutions"),
                  checks_dir=_package_dir(package) if package else root / layout.get("checks", "checks"),
                  mistakes_dir=root / layout.get("mistakes", "mistakes"),
                  variants_dir=root / layout.get("variants", "variants"), order=order, tracks=tracks,
                  languages=list(meta.get("languages", ["en"])), assignments=dict(meta.get("assignments", {})),
                  points={k: float(v) for k, v in meta.get("points", {}).items()}, checks_package=package,
                  min_mistakes=int(checks.get("mistakes", 1)), min_hints=int(checks.get("hints", 1)),
                  explained=bool(checks.get("explained", False)), short_ids=bool(meta.get("short_ids", False)),
                  reviewer=str(meta.get("reviewer", "")),
                  visibility=_visibility_tables(meta.get("visibility", {}), path))


def _tracks(tables: object, path: Path) -> list[Track]:
    """course.toml's `[[tracks]]`: each a name, a title (and its Chinese, `zh`) and its exercises."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise CourseError(f"{path}: tracks are tables: [[tracks]] name = ..., title = ..., exercises = [...]")
    tracks = []
    for table in tables:
        name, exercises = table.get("name"), table.get("exercises")
        if not isinstance(name, str) or not isinstance(exercises, list) \
                or not all(isinstance(e, str) for e in exercises):
            raise CourseError(f"{path}: each of [[tracks]] needs a name and a list of exercises")
        tracks.append(Track(name, str(table.get("title", name)), str(table.get("zh", "")), list(exercises)))
    named = [n for t in tracks for n in t.exercises]
    if len(set(named)) != len(named) or len({t.name for t in tracks}) != len(tracks):
        raise CourseError(f"{path}: each track and each exercise of the tracks is named once")
    return tracks


def _package_dir(name: str) -> Path:
    """The folder of an importable package, found without importing it (a course's checks must not run here)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise CourseError(f"no package {name} for the course's checks")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def installed_courses() -> dict[str, str]:
    """Courses published as packages: entry point name -> module, from the `torch_katas.courses` group."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINTS)}


def course_from(spec: str) -> Course:
    """A course from `--course`: a folder with a course.toml, or the name of an installed course package."""
    if spec in (BUILTIN, "builtin"):
        return builtin_course()
    path = Path(spec).expanduser()
    if path.is_dir() and not (path / COURSE_FILE).is_file() and (path / WORKSPACE_FILE).is_file():
        return workspace_course(path)  # a workspace (a release): the course it follows
    if path.is_dir():
        return load_course(path.resolve())
    installed = installed_courses()
    if spec in installed:
        import importlib

        module = importlib.import_module(installed[spec])
        return load_course(Path(module.__file__ or spec).resolve().parent, spec)
    known = ", ".join(sorted(installed)) or "none installed"
    raise CourseError(f"no course '{spec}': not a folder with a {COURSE_FILE}, nor an installed course ({known})")


def find_course(spec: str | None = None, start: Path | None = None) -> Course:
    """`spec` (--course), else $TORCH_KATAS_COURSE, else a course.toml or a workspace's torch-katas.toml in
    `start` (the current folder) or a parent, else the built-in course."""
    spec = spec or os.environ.get("TORCH_KATAS_COURSE")
    if spec:
        return course_from(spec)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / COURSE_FILE).is_file():
            return load_course(folder)
        if (folder / WORKSPACE_FILE).is_file():
            return workspace_course(folder)
    return builtin_course()


def workspace_course(folder: Path) -> Course:
    """The course a workspace's torch-katas.toml names: a folder (relative to the workspace, as a release
    writes it), an installed course, or none (the built-in one)."""
    try:
        meta = tomllib.loads((folder / WORKSPACE_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CourseError(f"{folder / WORKSPACE_FILE}: {exc}") from None
    spec = meta.get("course")
    if not spec:
        return builtin_course()
    here = folder / spec
    return load_course(here.resolve()) if (here / COURSE_FILE).is_file() else course_from(spec)


_current: Course | None = None


def use_course(course: Course | None) -> None:
    """Make `course` the one every command sees (None: find it again)."""
    global _current
    _current = course


def current_course() -> Course:
    global _current
    if _current is None:
        _current = find_course()
    return _current


def all_exercises(assignment: str | None = None) -> list[Exercise]:
    """Every exercise of the current course in teaching order (or an assignment's)."""
    return current_course().exercises(assignment)


def find_exercise(key: str, assignment: str | None = None) -> Exercise:
    """Resolve `5`, `ex05`, `ex05_manual_backward`, `hw1_backprop` or a unique prefix in the current course."""
    return current_course().find(key, assignment)


def data_files(exercise: Exercise) -> list[Path]:
    """The files of the exercise's folder that the checks may read: all but the statement, the metadata and
    the stub and its translations (the learner's starting point, never graded against: grader/course/stub_text.py)."""
    skip = {exercise.stub.name, "exercise.toml", *(f"{exercise.name}.{lang}.toml" for lang in LANGUAGES)}
    return sorted(p for p in exercise.folder.rglob("*") if p.is_file() and p.name not in skip
                  and not (p.suffix == ".md" and p.parent == exercise.folder) and "__pycache__" not in p.parts)
