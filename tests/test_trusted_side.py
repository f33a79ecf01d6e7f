"""The trusted side (judge, grading parent) believes nothing the learner made: no link followed, no FIFO
blocking, no parse that raises, no CSV cell run as a formula, no forged message parsed at any cost.
Fast tests of each piece; tests/test_integrity.py runs the attacks through the real CLI and batch."""

import csv
import io
import json
import os
import random
import socket
import struct
import subprocess
import threading
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, ordinary_user_or_skip, user_python, user_pythonpath
from grader.teacher import csvsafe
from grader.checking import routes
from grader.sandbox import safefs, wire
from grader.sandbox.source import SubmissionError, load_source

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"


# -- files in a work dir -----------------------------------------------------------------------------------

def test_a_link_in_the_work_dir_is_never_read(tmp_path):
    secret = tmp_path / "grader-only.txt"
    secret.write_text("the teacher's token")
    secret.chmod(0o600)
    work = tmp_path / "work"
    work.mkdir()
    (work / ".output").symlink_to(secret)
    assert open(work / ".output").read() == "the teacher's token"  # what reading it by name did
    with pytest.raises(safefs.NotRegular):
        safefs.read_regular(str(work / ".output"), 1 << 20)


def test_a_fifo_never_blocks_and_a_size_is_bounded(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(safefs.NotRegular):  # opened non-blocking, refused at once: no writer needed
        safefs.read_regular(str(tmp_path / "fifo"), 1 << 20)
    (tmp_path / "big").write_bytes(b"x" * 100)
    assert safefs.read_regular(str(tmp_path / "big"), 10) == b"x" * 10


def test_a_descriptor_opened_before_keeps_reading_what_it_opened(tmp_path):
    fd = os.open(tmp_path / ".output", os.O_RDWR | os.O_CREAT)
    os.write(fd, b"printed")
    os.unlink(tmp_path / ".output")
    (tmp_path / ".output").symlink_to("/etc/passwd")  # what learner code does to the name changes nothing
    assert safefs.read_fd(fd, 100) == b"printed"
    os.close(fd)


def _hostile_tree(root: Path, outside: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "data").write_bytes(b"x" * 1000)
    (root / "a" / "link").symlink_to(outside)
    (root / "link_file").symlink_to(outside / "keep.txt")
    os.mkfifo(root / "fifo")
    fd = os.open(root, os.O_RDONLY)
    for _ in range(3000):  # deeper than any recursion limit, longer than PATH_MAX
        os.mkdir("d" * 20, dir_fd=fd)
        inner = os.open("d" * 20, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    (root / "a" / "b").chmod(0)
    (root / "a").chmod(0)


def test_cleanup_removes_what_the_learner_made_unreadable_and_follows_no_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    root = tmp_path / "work"
    try:
        _hostile_tree(root, outside)
        safefs.remove_tree(str(root))
    finally:
        if root.exists():
            subprocess.run(["rm", "-rf", str(root)], check=False)  # not recursion-bound, unlike pytest's cleanup
    assert not root.exists() and (outside / "keep.txt").read_text() == "keep"


def test_cleanup_as_an_ordinary_user(world_readable_tmp):
    user = ordinary_user_or_skip()
    script = ("import os, sys; from pathlib import Path; sys.path.insert(0, 'tests');"
              "from test_trusted_side import _hostile_tree; from grader.sandbox.safefs import remove_tree;"
              f"root = Path({str(world_readable_tmp)!r}) / 'work'; outside = Path({str(world_readable_tmp)!r}) / 'out';"
              "outside.mkdir(); (outside / 'keep.txt').write_text('keep'); _hostile_tree(root, outside);"
              "remove_tree(str(root)); print(root.exists(), (outside / 'keep.txt').exists())")
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join([*user_pythonpath(), str(ROOT)])}
    proc = subprocess.run(["runuser", "-u", user, "--", "env", *(f"{k}={v}" for k, v in env.items()), user_python(),
                           "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["False", "True"], proc.stderr


# -- submissions that do not parse: always that student's error, never a crash ----------------------------------

NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None,
                       "source": ["import torch\n", "def predict(x, w, b):\n", "    return w * x + b\n"]},
                      {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "text"}]}
MALFORMED = {
    "deep.ipynb": "[" * 100_000 + "]" * 100_000,
    "deep_cells.ipynb": '{"nbformat": 4, "cells": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "number_source.ipynb": json.dumps({**NOTEBOOK, "cells": [{**NOTEBOOK["cells"][0], "source": 5}]}),
    "list_of_numbers.ipynb": json.dumps({**NOTEBOOK, "cells": [{**NOTEBOOK["cells"][0], "source": [1, 2]}]}),
    "cells_not_list.ipynb": json.dumps({**NOTEBOOK, "cells": {"a": 1}}),
    "cell_not_dict.ipynb": json.dumps({**NOTEBOOK, "cells": [3, "x", None]}),
    "tags_not_list.ipynb": json.dumps({**NOTEBOOK, "cells": [{**NOTEBOOK["cells"][0], "metadata": {"tags": 7}}]}),
    "metadata_not_dict.ipynb": json.dumps({**NOTEBOOK, "cells": [{**NOTEBOOK["cells"][0], "metadata": []}]}),
    "version_text.ipynb": json.dumps({**NOTEBOOK, "nbformat": "4"}),
    "not_json.ipynb": "{\"cells\": [",
    "empty.ipynb": "",
    "latin1.ipynb": "caf\xe9",
    "bad_cookie.py": "# -*- coding: no-such-codec -*-\nx = 1\n",
    "not_utf8.py": "x = 'caf\xe9'\n",
}


def _one_line_error(path: Path) -> None:
    try:
        load_source(path)
    except SubmissionError as exc:
        assert str(exc) and "\n" not in str(exc) and "Traceback" not in str(exc)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_submission_is_one_line_of_error(tmp_path, name):
    path = tmp_path / name
    text = MALFORMED[name]
    path.write_bytes(text.encode("latin-1") if "\xe9" in text else text.encode())
    _one_line_error(path)


def test_fuzzed_notebooks_never_raise_anything_else(tmp_path):
    """Mutations of a valid notebook (truncated, bytes changed, values of the wrong type) load or give the
    submission's own error: nothing else ever escapes."""
    rng = random.Random(19)
    good = json.dumps(NOTEBOOK).encode()
    odd_values = [None, 0, -1, 3.5, "", "x", [], {}, [None], {"a": []}, True, "\udcff" * 0 + "é"]
    for i in range(150):
        kind = i % 3
        if kind == 0:
            data = good[:rng.randrange(len(good))]
        elif kind == 1:
            data = bytearray(good)
            for _ in range(rng.randint(1, 5)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            data = bytes(data)
        else:
            nb = json.loads(good)
            target = rng.choice([nb, nb["cells"][0], nb["cells"][1], nb["cells"][0]["metadata"]])
            target[rng.choice(list(target) or ["x"])] = rng.choice(odd_values)
            data = json.dumps(nb).encode()
        path = tmp_path / f"fuzz{i}.ipynb"
        path.write_bytes(data)
        _one_line_error(path)


def test_python_reads_the_file_as_python_does(tmp_path):
    """A PEP 263 coding cookie (GBK, Latin-1) or a byte-order mark: the text Python would run."""
    code = SOLUTION.read_text(encoding="utf-8")
    for name, data in (("gbk.py", ("# -*- coding: gbk -*-\n# 手写反向传播\n" + code).encode("gbk")),
                       ("latin.py", ("# coding: latin-1\n# café\n" + code).encode("latin-1")),
                       ("bom.py", b"\xef\xbb\xbf" + code.encode())):
        (tmp_path / name).write_bytes(data)
        text = load_source(tmp_path / name).chunks[0][1]
        assert text.endswith(code) and not text.startswith("\ufeff")
        assert "手写" in text or "café" in text or name == "bom.py"


def test_a_fifo_or_a_link_as_the_submission_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "ex05.py")
    with pytest.raises(SubmissionError, match="not a regular file"):
        load_source(tmp_path / "ex05.py")
    (tmp_path / "link.py").symlink_to(SOLUTION)
    with pytest.raises(SubmissionError, match="not a regular file"):
        load_source(tmp_path / "link.py")


def _zip(path: Path, members: dict[str, bytes], **options) -> Path:
    with zipfile.ZipFile(path, "w", **options) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_bad_zips_fifos_and_odd_names_are_problems_never_a_crash(tmp_path):
    from grader.teacher.collect import collect
    from grader.course.exercises import find_exercise

    subs = tmp_path / "subs"
    honest = SOLUTION.read_bytes()
    for student in ("honest", '=HYPERLINK("http:\\\\evil","x")', "名字 with spaces", "line\nbreak", "x" * 200):
        (subs / student).mkdir(parents=True)
        (subs / student / "ex05.py").write_bytes(honest)
    (subs / "corrupt.zip").write_bytes(b"PK\x03\x04 not a zip at all")
    good = _zip(tmp_path / "good.zip", {"ex05.py": honest})
    (subs / "truncated.zip").write_bytes(good.read_bytes()[:60])
    method = bytearray(_zip(tmp_path / "m.zip", {"ex05.py": honest}).read_bytes())
    method[8:10] = struct.pack("<H", 99)  # a compression method zipfile does not know
    central = method.rfind(b"PK\x01\x02")
    method[central + 10:central + 12] = struct.pack("<H", 99)
    (subs / "method.zip").write_bytes(bytes(method))
    _zip(subs / "escape.zip", {"../../outside.py": b"x", "/abs/ex05.py": b"y"})
    (subs / "fifo").mkdir()
    os.mkfifo(subs / "fifo" / "ex05.py")
    os.mkfifo(subs / "fifo_zip.zip")
    fd = os.open(subs, os.O_RDONLY)
    for _ in range(1500):  # deeper than os.walk's recursion reaches
        os.mkdir("deep", dir_fd=fd)
        inner = os.open("deep", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    try:
        found = collect(subs, [find_exercise("ex05")], tmp_path / "unpack")
    finally:
        safefs.remove_tree(str(subs))  # pytest's own cleanup would recurse past its limit
    graded = sorted(j.student for j in found.jobs)
    assert "honest" in graded and '=HYPERLINK("http:\\\\evil","x")' in graded and len(graded) == 5
    said = {p["student"]: str(p["message"]) for p in found.problems}
    for student in ("corrupt", "truncated", "method", "fifo_zip"):
        assert "not a readable zip" in said[student], said
    assert "not a regular file" in said["fifo"] and "not graded" in said["deep"]
    assert not (tmp_path / "outside.py").exists()


# -- CSV cells ---------------------------------------------------------------------------------------------------

def test_cells_that_would_run_as_formulas_are_text_numbers_stay_numbers():
    for value in ('=HYPERLINK("http://evil","x")', "+cmd", "-cmd|' /C calc'!A0", "@SUM(A1)", "-", "  =1+1"):
        assert csvsafe.cell(value) == "'" + value
    for value in ("\tx", "\rx", "\t=1+1", "\x1b[31m=x", "a\u202eb"):  # no control character: then as text
        assert csvsafe.cell(value) == {"\tx": " x", "\rx": " x", "\t=1+1": "' =1+1", "\x1b[31m=x": "\\x1b[31m=x",
                                       "a\u202eb": "a\\u202eb"}[value]
    for value in ("-1.5", "+2", "10", "0.25", "-3e-2", "alice", "", 7, -2.5, None):
        assert csvsafe.cell(value) == value


def test_grades_csv_and_exports_neutralise_names_but_keep_scores(tmp_path):
    from grader.teacher.export import export
    from grader.teacher.gradebook import write_csv

    evil = '=HYPERLINK("http://evil","x")'
    book = {"exercises": [{"id": "ex05", "name": "ex05_manual_backward", "title": "t", "points": 10.0}],
            "max_total": 10.0,
            "rows": [{"student": evil, "cells": {"ex05": {"score": -1.5, "state": "graded", "max_score": 10.0}},
                      "total": -1.5, "max_total": 10.0, "id": "-12", "name": "@me", "email": "+x@y", "section": "",
                      "sis_user_id": "", "sis_login_id": "", "problems": ["=cmd"]}]}
    write_csv(book, tmp_path / "grades.csv")
    header, row = list(csv.reader(io.StringIO((tmp_path / "grades.csv").read_text())))
    cells = dict(zip(header, row))
    assert cells["student"] == "'" + evil and cells["name"] == "'@me" and cells["email"] == "'+x@y"
    assert cells["ex05"] == "-1.5" and cells["total"] == "-1.5"
    assert cells["id"] == "-12" and cells["problems"] == "'=cmd"
    for fmt in ("csv", "canvas"):
        out = tmp_path / f"{fmt}.csv"
        export(book, fmt, out)
        text = out.read_text()
        assert evil not in text.replace("'" + evil, "") and "-1.5" in text


# -- messages from the sandbox -------------------------------------------------------------------------------

def test_a_forged_huge_or_deep_message_is_refused_cheaply():
    a, b = socket.socketpair()
    try:
        a.sendall(struct.pack("!Q", wire.MAX_HEADER + 1))  # announces more than is ever read: nothing more is sent
        with pytest.raises(wire.ProtocolError):
            wire.recv(b)
        deep = b"[" * 50_000 + b"]" * 50_000
        sender = threading.Thread(target=a.sendall, args=(struct.pack("!Q", len(deep)) + deep,))
        sender.start()
        with pytest.raises(wire.ProtocolError):
            wire.recv(b)
        sender.join()
        for blobs in ([-5], ["7"], [wire.MAX_MESSAGE + 1]):
            head = json.dumps({"ok": True, "blobs": blobs}).encode()
            a.sendall(struct.pack("!Q", len(head)) + head)
            with pytest.raises(wire.ProtocolError):
                wire.recv(b)
    finally:
        a.close()
        b.close()
    with pytest.raises(wire.ProtocolError):
        wire.decode({"__tensor__": 0, "dtype": "save", "shape": [1]}, [b"\0" * 4])


# -- the static scan of banned routes --------------------------------------------------------------------------

@pytest.mark.parametrize("code,route", [
    ("loss.backward()", "autograd"),
    ("import torch\ng = torch.autograd.grad(l, [w])", "autograd"),
    ("from torch.autograd import grad as g", "autograd"),
    ("torch.autograd.Variable._execution_engine.run_backward(a, b)", "autograd"),
    ("def f(x, _g=torch.autograd.grad):\n    return _g(x)", "autograd"),
    ("import torch.func\ntorch.func.grad(f)(w)", "autograd"),
    ("from torch import func", "autograd"),
    ("import importlib\nm = importlib.import_module('torch.' + 'autograd')", "indirect"),
    ("g = getattr(torch, name)", "indirect"),
    ("g = getattr(torch, 'auto' + 'grad')", "indirect"),
    ("opt = torch.optim.SGD(ps, lr=0.1)", "torch.optim"),
    ("import operator, sys\noperator.attrgetter('set' + 'profile')(sys)(None)", "indirect"),
    ("from operator import attrgetter as a", "indirect"),
    ("import sys\nsys.modules['to' + 'rch']", "indirect"),
    ("import sys\nsys.__dict__['set' + 'profile'](None)", "indirect"),
    ("import functools\nf = functools.reduce(getattr, names, torch)", "indirect"),
    ("setattr(threading, '_pro' + 'file_hook', None)", "indirect"),
    ("import torch.multiprocessing as mp", "indirect"),
    ("import _thread\n_thread.start_new_thread(work, ())", "indirect"),
    ("from torch.fx.experimental.proxy_tensor import make_fx", "autograd"),
    ("f = torch.compile(g)", "autograd"),
    ("d = torch.ops.aten.mse_loss_backward(g, p, y, 1)", "autograd"),
    ("w = w + 1e-20j", "autograd"),
    ("class Dual:\n    def __mul__(self, other):\n        return self", "autograd"),
])
def test_the_scan_flags_each_banned_route(code, route):
    flags = routes.scan([("f.py", code)], {"f": ["autograd", "torch.optim"]})
    assert route in {f["route"] for f in flags}, flags


SOFTMAX = ["torch.nn.functional.softmax", "torch.Tensor.softmax", "torch.nn.Softmax", "torch.optim.Adam"]


@pytest.mark.parametrize("code", [
    "import torch.nn.functional as F\ny = F.softmax(x, dim=-1)",
    "y = x.softmax(-1)",
    "y = torch.nn.functional.softmax(x, 1)",
    "from torch.nn.functional import softmax as s",
    "layer = nn.Softmax(dim=1)",
    "f = getattr(F, 'softmax')",
    "f = eval('torch.nn.functional.softmax')",
    "opt = torch.optim.Adam(ps)",
])
def test_the_scan_flags_a_banned_built_in_however_it_is_reached(code):
    flags = routes.scan([("f.py", code)], {"softmax": SOFTMAX})
    assert set(SOFTMAX) & {f["route"] for f in flags}, flags


def test_the_scan_of_built_ins_leaves_the_learners_own_names_alone():
    own = ("def softmax(x, dim=-1):\n    m = x.amax(dim=dim, keepdim=True)\n    e = (x - m).exp()\n"
           "    return e / e.sum(dim=dim, keepdim=True)\n\nclass Adam:\n    def step(self):\n"
           "        return self.softmax(softmax(self.x))\n\nname = 'Adam'\n")
    assert routes.scan([("own.py", own)], {"softmax": SOFTMAX}) == []


def test_the_scan_flags_nothing_in_honest_code_and_never_raises():
    honest = [SOLUTION, *sorted((ROOT / "tests" / "variants" / "ex05_manual_backward").glob("*.py")),
              ROOT / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py"]
    for path in honest:
        assert routes.scan([(path.name, path.read_text())], {"linear_grads": ["autograd"]}) == [], path
    assert routes.scan([("deep.py", "x = " + "(" * 100_000 + ")" * 100_000)], {"f": ["autograd"]}) == []
    assert routes.scan([("bad.py", "def (")], {"f": ["autograd"]}) == []
    assert routes.scan([("any.py", "loss.backward()")], {}) == []  # nothing banned: nothing flagged
