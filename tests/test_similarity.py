"""Similar submissions: a copy with renamed variables, reordered functions and changed comments is found, in a long
exercise and in a short one; ten independently written correct solutions are not flagged, nor a class of identical
correct answers; scores never change; nothing to install."""

import csv
import json
import os
import shutil

from conftest import ROOT, run_grade

SOLUTIONS = ROOT / "tests" / "similarity" / "ex14"  # s01..s10 written independently; copy_of_s03 is s03 disguised
SHORT = ROOT / "tests" / "similarity" / "ex05"  # the same for a short exercise: copy_of_s06 is s06 disguised


def test_a_disguised_copy_is_found_and_independent_solutions_are_not(tmp_path):
    subs = tmp_path / "subs"
    for path in SOLUTIONS.glob("*.py"):
        (subs / path.stem).mkdir(parents=True)
        shutil.copy(path, subs / path.stem / "ex14_training_loop.py")
    out = tmp_path / "grades"
    proc = run_grade("batch", subs, "--out", out, "--workers", "2", "--similarity")
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads((out / "similarity.json").read_text())
    assert [(p["students"], p["identical"]) for p in pairs] == [(["copy_of_s03", "s03"], False)]
    assert pairs[0]["similarity"] > 0.9
    assert {r["ex14"] for r in csv.DictReader((out / "grades.csv").open())} == {"10"}  # all correct, none changed
    page = (out / "similarity.html").read_text()
    assert page.count("<mark>") >= 2 and "def loop_over" in page and "def run_batches" in page
    assert "copy_of_s03 · s03" in (out / "index.html").read_text()


def test_a_short_exercise_copy_is_found_without_flooding_a_class_of_identical_answers(tmp_path):
    """ex05: a few lines of the students' own under a long stub. The disguised copy is found; ten independent
    solutions and twelve students handing in the same correct answer (the class's common answer) are not listed."""
    subs = tmp_path / "subs"
    for path in SHORT.glob("*.py"):
        (subs / path.stem).mkdir(parents=True)
        shutil.copy(path, subs / path.stem / "ex05_manual_backward.py")
    for n in range(12):
        (subs / f"same{n:02d}").mkdir()
        shutil.copy(ROOT / "solutions" / "ex05_manual_backward.py", subs / f"same{n:02d}" / "ex05.py")
    out = tmp_path / "grades"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'blocker'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    (tmp_path / "blocker" / "copydetect").mkdir(parents=True)  # not needed: a copydetect that cannot import
    (tmp_path / "blocker" / "copydetect" / "__init__.py").write_text("raise ImportError('not installed')\n")
    proc = run_grade("batch", subs, "--out", out, "--workers", "2", "--similarity", env=env)
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads((out / "similarity.json").read_text())
    assert [(p["students"], p["identical"]) for p in pairs] == [(["copy_of_s06", "s06"], False)], pairs
    assert pairs[0]["similarity"] == 1


def test_groups_are_listed_as_maximal_sets():
    from grader.teacher.similarity import maximal

    entries = [{"exercise": "ex14", "students": ["a", "b"], "similarity": 0.9},
               {"exercise": "ex14", "students": ["a", "b", "c"], "similarity": 0.9},
               {"exercise": "ex15", "students": ["a", "b"], "similarity": 1.0},
               {"exercise": "ex15", "students": ["a", "b", "c"], "similarity": 0.8}]
    assert maximal(entries) == entries[1:]  # a and b again with c, as similar: once; a closer pair stays


def _renamed(code: str) -> str:
    """`code` with every name its functions bind (parameters, locals) renamed: a disguised copy."""
    import ast
    import io
    import tokenize

    bound = {n.arg for n in ast.walk(ast.parse(code)) if isinstance(n, ast.arg)}
    bound |= {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return tokenize.untokenize((t.type, t.string + "_mine" if t.type == tokenize.NAME and t.string in bound
                                else t.string) for t in tokens)


def test_a_pair_who_copied_three_exercises_is_listed_on_each(tmp_path):
    """p and q hand in the same three files, q's with renamed variables; three classmates wrote theirs another way,
    one of them close enough to the pair's on two exercises to be listed with it: the pair is listed on each."""
    from grader.course.exercises import all_exercises
    from grader.teacher.collect import collect_from
    from grader.teacher.similarity import find_similar

    subs = tmp_path / "subs"
    for name in ("ex01_tensors", "ex02_views", "ex03_broadcasting"):
        solution = (ROOT / "solutions" / f"{name}.py").read_text()
        others = sorted((ROOT / "tests" / "variants" / name).glob("*.py"))
        for student, code in {"p": solution, "q": _renamed(solution),
                              **{s: path.read_text() for s, path in zip("abc", others)}}.items():
            (subs / student).mkdir(parents=True, exist_ok=True)
            (subs / student / f"{name}.py").write_text(code)
    found = collect_from(subs, all_exercises(), tmp_path / "unpack")
    entries = find_similar(found.jobs, 0.5)
    assert sorted(e["exercise"] for e in entries if e["students"] == ["p", "q"]) == ["ex01", "ex02", "ex03"], entries
    assert any(len(e["students"]) == 3 for e in entries)  # a classmate close to the pair: listed beside it
