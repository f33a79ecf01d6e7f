"""`grade validate`: prove an exercise's checks are not vacuous.

The reference solution and every correct variant in tests/variants/<exercise>/ must score full,
the untouched stub less than full (and still load), and every known mistake in
tests/mistakes/<exercise>/ less than full, with a failure message that contains the text its
`# Expect:` line names. Each file is also graded as a notebook (written as `grade notebook` writes
one) with the same seed, and must score the same there.
"""

from __future__ import annotations

import random
import re
import tempfile
from pathlib import Path

from grader.exercises import Exercise
from grader.judge import grade, prewarm
from grader.notebook import write_notebook
from grader.source import load_source
from grader.text import english_prose
from grader.trace import trace_problems


def expected_text(path: Path) -> str | None:
    """The `# Expect: ...` line of a mistake file: text the feedback must contain."""
    match = re.search(r"^# Expect: (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return match.group(1).strip() if match else None


def mistakes(exercise: Exercise) -> list[Path]:
    return sorted((exercise.course.mistakes_dir / exercise.name).glob("*.py"))


def variants(exercise: Exercise) -> list[Path]:
    return sorted((exercise.course.variants_dir / exercise.name).glob("*.py"))


def _messages(result: dict) -> str:
    return " | ".join(c["message"] for c in result["checks"] if not c["passed"])


def _score(result: dict) -> str:
    return f"{result['score']:g}/{result['max_score']:g} ({result['status']})"


def validate(exercise: Exercise, seed: int | None = None, device: str = "cpu") -> dict:
    """Grade solution, variants, stub and mistakes, each as a .py and as a notebook; return
    {exercise, seed, ok, rows: [{kind, file, ok, why}]}."""
    if not exercise.solution.is_file():
        return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": False, "rows": [
            {"kind": "solution", "file": str(exercise.solution), "ok": False,
             "why": "no reference solution here: validate from the course's own folder (or a clone of torch-katas)"}]}
    prewarm([exercise])
    with tempfile.TemporaryDirectory() as tmp:
        return _validate(exercise, seed, device, Path(tmp))


def _validate(exercise: Exercise, seed: int | None, device: str, tmp: Path) -> dict:
    rows: list[dict] = []
    results: dict[str, dict] = {}  # file name -> its result, with every message in each language

    def run(path: Path):
        """The .py's result and score; a row for the notebook when it scores otherwise."""
        run_seed = random.randrange(2**31) if seed is None else seed
        result = results[path.name] = grade(exercise, load_source(path), seed=run_seed, device=device,
                                            languages=("en", "zh"))
        notebook = write_notebook(exercise, path, tmp / f"{path.stem}.ipynb")
        as_notebook = grade(exercise, load_source(notebook), seed=run_seed, device=device)
        if [_score(as_notebook), as_notebook["message"]] != [_score(result), result["message"]]:
            said = as_notebook["message"] or _messages(as_notebook)
            rows.append({"kind": "notebook", "file": notebook.name, "ok": False,
                         "why": f"{_score(as_notebook)} where the .py scores {_score(result)}: {said[:300]}"})
        return result, _score(result)

    for kind, path in [("solution", exercise.solution)] + [("variant", p) for p in variants(exercise)]:
        result, score = run(path)
        declared = sum(c["max_points"] for c in result["checks"] if c["id"] != "unreported")
        if kind == "solution" and declared != exercise.points:
            rows.append({"kind": "metadata", "file": "exercise.toml", "ok": False,
                         "why": f"the checks declare {declared:g} points, exercise.toml says {exercise.points:g}"})
        full = result["score"] >= result["max_score"] and result["status"] == "graded"
        rows.append({"kind": kind, "file": path.name, "ok": full,
                     "why": score if full else f"{score}: {_messages(result)[:300]}"})
    result, score = run(exercise.stub)
    ok = result["score"] < result["max_score"] and result["status"] != "error"
    rows.append({"kind": "stub", "file": exercise.stub.name, "ok": ok,
                 "why": score if ok else f"{score}: the stub must load and score less than full"})
    for path in mistakes(exercise):
        want = expected_text(path)
        result, score = run(path)
        messages = _messages(result)
        if want is None:
            ok, why = False, "no `# Expect:` line names the message this mistake must get"
        elif result["score"] >= result["max_score"]:
            ok, why = False, f"{score}: this mistake scores full: the checks miss it"
        elif want.lower() not in messages.lower():
            ok, why = False, f"{score}: no message says '{want}'; got: {messages[:300]}"
        else:
            ok, why = True, f"{score}: '{want}'"
        rows.append({"kind": "mistake", "file": path.name, "ok": ok, "why": why})
    if "zh" in exercise.course.languages:
        rows += [{"kind": "language", "file": name, "ok": False, "why": why} for name, why in english_in_chinese(results)]
    course = exercise.course
    problems = []
    languages = [lang for lang in course.languages if lang in ("en", "zh")]
    hints = {"en": exercise.hints, "zh": exercise.zh.get("hints", [])}
    if "zh" in languages:
        problems += [f"the Chinese {what} has English prose: {'; '.join(english_prose(text))[:160]}"
                     for what, text in [("title", exercise.zh.get("title", "")),
                                        *((f"hint {i}", h) for i, h in enumerate(hints["zh"], 1))] if english_prose(text)]
    if any(len(hints[lang]) < course.min_hints for lang in languages):
        problems.append(f"needs {course.min_hints} hint(s) in exercise.toml, in each of: {', '.join(languages)}")
    if sum(r["kind"] == "mistake" for r in rows) < course.min_mistakes:
        problems.append(f"needs at least {course.min_mistakes} known mistake(s) in {course.mistakes_dir / exercise.name}/")
    rows += [{"kind": "metadata", "file": "exercise.toml", "ok": False, "why": p} for p in problems]
    rows += [{"kind": "trace", "file": "README", "ok": False, "why": p} for p in trace_problems(exercise)]
    return {"exercise": exercise.id, "name": exercise.name, "seed": seed, "ok": all(r["ok"] for r in rows),
            "rows": rows}


def english_in_chinese(results: dict[str, dict]) -> list[tuple[str, str]]:
    """(file, why) for each Chinese message that still holds English prose, outside code and quotes."""
    found = []
    for name, result in results.items():
        for c in result["checks"]:
            prose = english_prose(c.get("messages", {}).get("zh", ""))
            if prose:
                found.append((name, f"{c['id']}: the Chinese message has English prose: {'; '.join(prose)[:200]}"))
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
        if solution["status"] != "graded" or solution["score"] < solution["max_score"]:
            refused.append(f"{ex.id}: the solution scores {solution['score']:g}/{solution['max_score']:g} "
                           f"({solution['status']}): {_messages(solution)[:200]}")
        stub = grade(ex, load_source(ex.stub))
        if stub["score"] >= stub["max_score"]:
            refused.append(f"{ex.id}: the untouched stub already scores full: its checks test nothing it must do")
    return refused
