"""`grade validate`: prove an exercise's checks are not vacuous.

The reference solution and every correct variant in tests/variants/<exercise>/ must score full,
the untouched stub less than full (and still load), an empty file and a file that defines nothing 0, and
every known mistake in
tests/mistakes/<exercise>/ less than full, with a failure message that contains the text its
`# Expect:` line names. Each file is also graded as a notebook (written as `grade notebook` writes
one) with the same seed, and must score the same there.

The stub in each language of the course (grader/stub_text.py) must have every comment and docstring
translated, on every draw, and the same code as the English stub.

An exercise with variants (grader/variants.py) is proved on every draw: its templates rendered with the default
draw must be its files, and on each other draw the rendered solution and variants score full and the rendered
stub and mistakes less. A mistake or variant file with a `# Variant: reduction=mean` line counts on the draws
that match it only.
"""

from __future__ import annotations

import random
import re
import tempfile
from pathlib import Path

from grader import stub_text
from grader import variants as draws
from grader.exercises import Exercise
from grader.judge import grade, prewarm
from grader.keys import describe, registered, registry_file
from grader.notebook import write_notebook
from grader.result import Result
from grader.source import load_source
from grader.text import english_prose
from grader.trace import trace_problems


def expected_text(path: Path) -> str | None:
    """The `# Expect: ...` line of a mistake file: text the feedback must contain."""
    match = re.search(r"^# Expect: (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return match.group(1).strip() if match else None


def applies(path: Path, draw: dict) -> bool:
    """Whether a mistake or variant file counts on `draw`: it has no `# Variant:` line, or the draw matches it."""
    match = re.search(r"^# Variant: (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    if not match:
        return True
    wanted = dict(pair.strip().split("=", 1) for pair in match.group(1).split(",") if "=" in pair)
    return all(draws.label({k: draw.get(k)}).split("=", 1)[1] == v.strip() for k, v in wanted.items())


def drawn(path: Path, draw: dict, folder: Path) -> Path:
    """The file to grade for `draw`: `path` itself, or its template rendered into `folder`."""
    if not draws.template_of(path).is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / path.name
    out.write_text(draws.rendered(path, draw), encoding="utf-8")
    return out


def mistakes(exercise: Exercise) -> list[Path]:
    return sorted((exercise.course.mistakes_dir / exercise.name).glob("*.py"))


def variants(exercise: Exercise) -> list[Path]:
    return sorted((exercise.course.variants_dir / exercise.name).glob("*.py"))


NOTHING = {"empty.py": "", "defines_nothing.py": "import torch\n"}  # must score 0


def _messages(result: Result) -> str:
    return " | ".join(c.message.render("en") for c in result.checks if not c.passed)


def _score(result: Result) -> str:
    return f"{result.score:g}/{result.max_score:g} ({result.status})"


def validate(exercise: Exercise, seed: int | None = None, device: str = "cpu") -> dict:
    """Grade solution, variants, stub and mistakes, each as a .py and as a notebook; return
    {exercise, seed, ok, rows: [{kind, file, ok, why}]}."""
    if not exercise.solution.is_file():
        return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": False, "rows": [
            {"kind": "solution", "file": str(exercise.solution), "ok": False,
             "why": "no reference solution here: validate from the course's own folder (or a clone of torch-katas)"}]}
    prewarm([exercise])
    every = draws.all_draws(exercise)
    with tempfile.TemporaryDirectory() as tmp:
        report = _validate(exercise, seed, device, Path(tmp), every[0])
        problems = draws.template_problems(exercise)
        report["rows"] += [{"kind": "metadata", "file": "variants", "ok": False, "why": p} for p in problems]
        if not problems:
            for i, draw in enumerate(every[1:], 1):
                other = _validate(exercise, seed, device, Path(tmp) / f"draw{i}", draw)
                report["rows"] += [{**row, "kind": row["kind"], "file": f"{row['file']} [{draws.label(draw)}]"}
                                   for row in other["rows"]]
        report["draws"] = len(every)
        report["ok"] = all(r["ok"] for r in report["rows"])
        return report


def _validate(exercise: Exercise, seed: int | None, device: str, tmp: Path, draw: dict) -> dict:
    """Validate one draw of the exercise's variants (the default draw: the exercise as its files stand)."""
    rows: list[dict] = []
    results: dict[str, Result] = {}  # file name -> its result, with every message in each language
    default = draw == draws.default_draw(exercise)
    rendered = tmp / "rendered"

    def run(path: Path):
        """The .py's result and score; a row for the notebook when it scores otherwise."""
        run_seed = random.randrange(2**31) if seed is None else seed
        path = path if default else drawn(path, draw, rendered)
        result = results[path.name] = grade(exercise, load_source(path), seed=run_seed, device=device,
                                            languages=("en", "zh"), variant=draw)
        tmp.mkdir(parents=True, exist_ok=True)
        notebook = write_notebook(exercise, path.read_text(encoding="utf-8"), tmp / f"{path.stem}.ipynb")
        as_notebook = grade(exercise, load_source(notebook), seed=run_seed, device=device, variant=draw)
        if [_score(as_notebook), as_notebook.message.render("en")] != [_score(result), result.message.render("en")]:
            said = as_notebook.message.render("en") or _messages(as_notebook)
            rows.append({"kind": "notebook", "file": notebook.name, "ok": False,
                         "why": f"{_score(as_notebook)} where the .py scores {_score(result)}: {said[:300]}"})
        return result, _score(result)

    for kind, path in [("solution", exercise.solution)] + [("variant", p) for p in variants(exercise)
                                                           if applies(p, draw)]:
        result, score = run(path)
        declared = sum(c.max_points for c in result.checks if c.id != "unreported")
        if kind == "solution" and declared != exercise.points:
            rows.append({"kind": "metadata", "file": "exercise.toml", "ok": False,
                         "why": f"the checks declare {declared:g} points, exercise.toml says {exercise.points:g}"})
        rows.append({"kind": kind, "file": path.name, "ok": result.full,
                     "why": score if result.full else f"{score}: {_messages(result)[:300]}"})
    result, score = run(exercise.stub)
    ok = result.score < result.max_score and result.status != "error"
    rows.append({"kind": "stub", "file": exercise.stub.name, "ok": ok,
                 "why": score if ok else f"{score}: the stub must load and score less than full"})
    for name, text in NOTHING.items() if default else ():  # work that does nothing earns nothing, whatever `depends=`
        empty = tmp / name
        tmp.mkdir(parents=True, exist_ok=True)
        empty.write_text(text, encoding="utf-8")
        result = grade(exercise, load_source(empty), seed=random.randrange(2**31) if seed is None else seed,
                       device=device)
        earned = [c.title.render("en") for c in result.checks if c.points > 0]
        rows.append({"kind": "nothing", "file": name, "ok": result.score == 0,
                     "why": _score(result) if result.score == 0 else
                     f"{_score(result)}: {name} earns points from {', '.join(earned)}; make those checks depend on "
                     "one that needs the work (`depends=`)"})
    for path in (p for p in mistakes(exercise) if applies(p, draw)):
        want = expected_text(path if default else drawn(path, draw, rendered))
        result, score = run(path)
        messages = _messages(result)
        if want is None:
            ok, why = False, "no `# Expect:` line names the message this mistake must get"
        elif result.score >= result.max_score:
            ok, why = False, f"{score}: this mistake scores full: the checks miss it"
        elif want.lower() not in messages.lower():
            ok, why = False, f"{score}: no message says '{want}'; got: {messages[:300]}"
        else:
            ok, why = True, f"{score}: '{want}'"
        rows.append({"kind": "mistake", "file": path.name, "ok": ok, "why": why})
    if "zh" in exercise.course.languages:
        rows += [{"kind": "language", "file": name, "ok": False, "why": why}
                 for name, why in english_in_chinese(results)]
    rows += [{"kind": "key", "file": name, "ok": False, "why": why} for name, why in unknown_keys(exercise, results)]
    if not default:
        if not any(r["kind"] == "mistake" for r in rows):
            rows.append({"kind": "metadata", "file": "mistakes", "ok": False,
                         "why": "no known mistake counts on this draw: add one (a `# Variant:` line or a template)"})
        return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": all(r["ok"] for r in rows),
                "rows": rows}
    course = exercise.course
    problems = []
    languages = [lang for lang in course.languages if lang in ("en", "zh")]
    hints = {"en": exercise.hints, "zh": exercise.zh.get("hints", [])}
    if "zh" in languages:
        problems += [f"the Chinese {what} has English prose: {'; '.join(english_prose(text))[:160]}"
                     for what, text in [("title", exercise.zh.get("title", "")),
                                        *((f"hint {i}", h) for i, h in enumerate(hints["zh"], 1))]
                     if english_prose(text)]
    for lang in languages:
        if len(hints[lang]) < course.min_hints:
            where = "hints" if lang == "en" else f"[{lang}] hints"
            problems.append(f"needs at least {course.min_hints} {lang} hint{'s' if course.min_hints > 1 else ''} in "
                            f"exercise.toml's {where} (it has {len(hints[lang])})")
    if sum(r["kind"] == "mistake" for r in rows) < course.min_mistakes:
        folder = course.mistakes_dir / exercise.name
        problems.append(f"needs at least {course.min_mistakes} known mistake(s) in {folder}/")
    rows += [{"kind": "metadata", "file": "exercise.toml", "ok": False, "why": p} for p in problems]
    rows += [{"kind": "trace", "file": "README", "ok": False, "why": p} for p in trace_problems(exercise)]
    rows += [{"kind": "language", "file": stub_text.catalogue_file(exercise, lang).name, "ok": False, "why": p}
             for lang in languages for p in stub_text.problems(exercise, lang)]
    return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": all(r["ok"] for r in rows),
            "rows": rows}


def unknown_keys(exercise: Exercise, results: dict[str, Result]) -> list[tuple[str, str]]:
    """(file, why) for each mistake key a check named that no registry describes (a typo makes a new category)."""
    keys = registered(exercise)
    return [(name, f"{c.id}: the mistake key '{c.key}' is not registered: add it to {registry_file(exercise).name} "
                   "(python -m grader.keys drafts the line)")
            for name, result in results.items() for c in result.checks if c.key and describe(c.key, keys) is None]


def english_in_chinese(results: dict[str, Result]) -> list[tuple[str, str]]:
    """(file, why) for each Chinese message that still holds English prose, outside code and quotes."""
    found = []
    for name, result in results.items():
        for c in result.checks:
            prose = english_prose((c.messages or {}).get("zh", ""))
            if prose:
                found.append((name, f"{c.id}: the Chinese message has English prose: {'; '.join(prose)[:200]}"))
    return found


def render_validation(reports: list[dict]) -> str:
    lines = []
    for report in reports:
        seed = f" (seed {report['seed']})" if report.get("seed") is not None else ""
        lines.append(f"{report['name']}{seed}: {'ok' if report['ok'] else 'FAILED'}")
        for row in report["rows"]:
            lines.append(f"  {'ok  ' if row['ok'] else 'FAIL'} {row['kind']:<8} {row['file']:<40} {row['why']}")
    good = sum(r["ok"] for r in reports)
    lines.append(f"{good} of {len(reports)} validations ok")
    return "\n".join(lines)


def check_release(exercises: list[Exercise]) -> list[str]:
    """What stands in the way of releasing `exercises`: a solution that does not score full, a stub that does."""
    prewarm(exercises)
    refused = []
    for ex in exercises:
        if not ex.solution.is_file():
            refused.append(f"{ex.id}: no reference solution at {ex.solution}")
            continue
        solution = grade(ex, load_source(ex.solution))
        if not solution.full:
            refused.append(f"{ex.id}: the solution scores {_score(solution)}: {_messages(solution)[:200]}")
        stub = grade(ex, load_source(ex.stub))
        if stub.score >= stub.max_score:
            refused.append(f"{ex.id}: the untouched stub already scores full: its checks test nothing it must do")
    return refused
