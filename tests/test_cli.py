"""The `grade` command as a learner uses it: ids, files, JSON, exit codes, bad input. A few run the real entry in a
Python of its own (run_grade); the rest in a fork of this warm process (grade_here), which runs the same command."""

import json
import subprocess
import sys

from conftest import ROOT, grade_here, grade_json, run_grade

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"


def test_grade_solution_full_score_exit_0():
    proc = run_grade("ex05", "--file", SOLUTION)  # the real entry, `python -m grader`, in a Python of its own
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Score: 10/10" in proc.stdout


def test_ids_resolve_the_same_exercise():
    for key in ("5", "ex05", "ex05_manual_backward", "EX05"):
        assert grade_json(key, "--file", SOLUTION)["exercise"] == "ex05"


def test_json_is_one_object_with_the_schema():
    proc = grade_here("ex05", "--file", SOLUTION, "--json", "--seed", "7")
    result = json.loads(proc.stdout)  # the whole stdout is one JSON object
    assert set(result) >= {"exercise", "submission", "status", "score", "max_score", "checks", "duration_s"}
    assert result["status"] == "graded" and result["score"] == result["max_score"] == 10
    for check in result["checks"]:
        assert set(check) >= {"id", "title", "outcome", "passed", "points", "max_points", "message"}


def test_stub_is_not_started_exit_1():
    proc = grade_here("ex05", "--json")  # the repository's own stub
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["score"] == 0
    assert {c["outcome"] for c in result["checks"]} == {"not_started"}


def test_seed_reproduces_the_inputs():
    mistake = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "sign_flipped.py"
    first = grade_json("ex05", "--file", mistake, "--seed", "123")
    again = grade_json("ex05", "--file", mistake, "--seed", "123")
    other = grade_json("ex05", "--file", mistake, "--seed", "124")
    messages = lambda r: [c["message"] for c in r["checks"]]  # noqa: E731
    assert messages(first) == messages(again) != messages(other)


def test_syntax_error_is_status_error_with_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\ndef predict(x, w, b)\n    return w * x + b\n")
    result = grade_json("ex05", "--file", bad)
    assert result["status"] == "error" and result["score"] == 0
    assert result["message"].startswith("SyntaxError at line 3: expected ':'")
    assert {c["outcome"] for c in result["checks"]} == {"not_run"} and not any(c["message"] for c in result["checks"])


def test_a_load_failure_is_shown_once_with_its_line_and_a_caret(tmp_path):
    text = "import torch\n\ndef predict(x, w, b):\n    return w * x + b\n  y = 2\n"
    (tmp_path / "bad.py").write_text(text)
    try:
        compile(text, "bad.py", "exec")
    except IndentationError as exc:
        column = exc.offset  # where Python itself points
    proc = grade_here("ex05", "--file", tmp_path / "bad.py")
    assert proc.returncode == 1
    assert proc.stdout.count("IndentationError") == 1 and proc.stdout.count("could not be loaded") == 1
    lines = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "IndentationError at line 5" in line)
    code, caret = lines[at + 1], lines[at + 2]
    assert code.strip() == "y = 2" and caret.strip() == "^"
    assert caret.index("^") - code.index("  y") == column - 1
    assert "fix the error above" in proc.stdout


def test_a_byte_order_mark_is_not_code(tmp_path):
    path = tmp_path / "ex05.py"
    path.write_bytes(b"\xef\xbb\xbf" + SOLUTION.read_bytes())
    assert grade_json("ex05", "--file", path)["score"] == 10


def test_input_at_top_level_says_so(tmp_path):
    path = tmp_path / "ex05.py"
    path.write_text('n = int(input("how many? "))\n' + SOLUTION.read_text())
    result = grade_json("ex05", "--file", path)
    assert result["status"] == "error"
    assert "your code called input(): graded code cannot read the keyboard" in result["message"]
    assert "line 1" in result["message"] and "pytest" not in result["message"]


def test_unknown_exercise_one_line_exit_2():
    proc = run_grade("ex99")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown exercise" in proc.stderr


def test_missing_file_one_line_exit_2(tmp_path):
    proc = run_grade("ex05", "--file", tmp_path / "nope.py")
    assert proc.returncode == 2 and "no such file" in proc.stderr and proc.stderr.strip().count("\n") == 0


def test_wrong_file_type_exit_2(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    proc = run_grade("ex05", "--file", other)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0


def test_list_and_help_do_not_import_torch():
    code = ("import sys; from click.testing import CliRunner; from grader.cli.main import main; "
            "r = CliRunner(); assert r.invoke(main, ['list']).exit_code == 0; "
            "assert r.invoke(main, ['--help']).exit_code == 0; "
            "assert r.invoke(main, ['hint', 'ex05']).exit_code == 0; "
            "assert r.invoke(main, ['hint']).exit_code == 0; "
            "assert '用法' in r.invoke(main, ['hint', '--help', '--lang', 'zh']).output; "
            "assert '学习者' in r.invoke(main, ['--lang', 'zh', '--help']).output; "
            "print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "False", proc.stderr


def test_list_json_has_every_exercise():
    proc = grade_here("list", "--json")
    items = json.loads(proc.stdout)
    assert items[0]["id"] == "ex01" or items[0]["id"].startswith("ex")
    assert any(i["id"] == "ex05" and i["points"] == 10 for i in items)


def test_chinese_messages():
    mistake = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "sign_flipped.py"
    result = grade_json("ex05", "--file", mistake, "--lang", "zh")
    assert any("符号相反" in c["message"] for c in result["checks"])


def test_terminal_report_without_color_when_piped():
    mistake = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "missing_factor_two.py"
    proc = run_grade("ex05", "--file", mistake)
    assert proc.returncode == 1
    assert "\x1b[" not in proc.stdout
    assert "FAIL" in proc.stdout and "factor" in proc.stdout and "grade hint ex05" in proc.stdout
