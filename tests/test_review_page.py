"""The review page, `grade review GRADES --serve`, as a teacher meets it: a class of 25 graded once, then reviewed
by mistake and by submission in a real browser (headless Chromium driven by Playwright), from two tabs at once,
in both languages; the token as the only door; bad input in one line; the same review.toml entries, with who and
when, that `grade review` writes, and the gradebook and feedback that follow."""

import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import nbformat
import pytest

from conftest import ROOT, grade_here, run_grade, wait_for
from grader.teacher.review import history, read_reviews

MISTAKES = ROOT / "tests" / "mistakes" / "ex05_manual_backward"
SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"
STUB = ROOT / "exercises" / "ex05_manual_backward" / "ex05_manual_backward.py"
HOSTILE = "s25<img src=x onerror=window.pwned=1>"  # a folder name is the student's: it is text on the page
INJECTED = "# </pre><script>window.pwned = 1</script>\n"
# the class: which file each student hands in (the sign group is s09-s13, s24's notebook and s25)
CLASS = {**{f"s{n:02}": SOLUTION for n in range(1, 9)},
         **{f"s{n:02}": MISTAKES / "sign_flipped.py" for n in range(9, 14)},
         **{f"s{n:02}": MISTAKES / "missing_factor_two.py" for n in range(14, 18)},
         **{f"s{n:02}": MISTAKES / "uses_autograd.py" for n in range(18, 21)},
         **{f"s{n:02}": MISTAKES / "swapped_outputs.py" for n in range(21, 23)}, "s23": STUB}
SIGN = ["s09", "s10", "s11", "s12", "s13", "s24", HOSTILE]


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def notebook(source: str) -> str:
    """The file as a notebook: a markdown cell, then its code in two cells, the first with what it printed, drew
    and raised (a text that looks like markup, a PNG, an SVG that would run script, a coloured traceback)."""
    head, _, tail = source.partition("def linear_grads")
    first = nbformat.v4.new_code_cell(head, outputs=[
        nbformat.v4.new_output("stream", text="<script>window.pwned = 1</script>\n"),
        nbformat.v4.new_output("display_data", data={"image/png": PNG}),
        nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg onload='window.pwned=1'/>",
                                                     "text/plain": "<Figure size 640x480>"}),
        nbformat.v4.new_output("error", ename="ValueError", evalue="bad",
                               traceback=["\x1b[31mValueError\x1b[0m: bad"])])
    cells = [nbformat.v4.new_markdown_cell("## My answer <b>not bold</b>"), first,
             nbformat.v4.new_code_cell("def linear_grads" + tail)]
    return nbformat.writes(nbformat.v4.new_notebook(cells=cells))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class of 25, graded once for the module (with --similarity: the page lists similar submissions)."""
    tmp = tmp_path_factory.mktemp("class")
    subs = tmp / "subs"
    for student, source in CLASS.items():
        (subs / student).mkdir(parents=True)
        (subs / student / "ex05.py").write_text(source.read_text())
    sign = (MISTAKES / "sign_flipped.py").read_text()
    (subs / "s24").mkdir()
    (subs / "s24" / "ex05.ipynb").write_text(notebook(sign))
    (subs / HOSTILE).mkdir()
    (subs / HOSTILE / "ex05.py").write_text(INJECTED + sign)
    out = tmp / "grades"
    batch = run_grade("batch", subs, "-e", "ex05", "--out", out, "--workers", "2", "--similarity")
    assert batch.returncode == 0, batch.stderr
    return out


@pytest.fixture
def grades(graded, tmp_path):
    """A copy of the graded class for one test to review."""
    return Path(shutil.copytree(graded, tmp_path / "grades"))


class Server:
    """A running `grade review GRADES --serve`: its printed address, and the requests a client makes."""

    def __init__(self, grades: Path, *args: str):
        self.grades, self.log = grades, grades.parent / "serve.log"
        env = {**os.environ, "TORCH_KATAS_REVIEWER": "Prof. Li"}
        with self.log.open("w") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "grader", "review", str(grades), "--serve", *args],
                                         cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env)
        wait_for(lambda: "token=" in self.log.read_text() or self.proc.poll() is not None, "the page's address")
        self.url = self.log.read_text().splitlines()[1]  # the address on a line of its own, to copy
        parts = urlsplit(self.url)
        self.port, self.token = parts.port, parts.query.removeprefix("token=")
        self.origin = f"http://127.0.0.1:{self.port}"
        self.root, self.cookie = "", ""
        status, headers, _ = self.request("GET", f"/?token={self.token}", cookie=False, bare=True)
        assert status == 303, status  # the token opens the secret path, with the cookie that goes with it
        self.root = headers["location"].removesuffix("/")
        self.cookie = headers["set-cookie"].split(";")[0]
        self.home = self.origin + self.root  # where the pages are, in a browser that opened the address

    def request(self, method: str, path: str, form: dict | list | None = None, cookie: bool = True,
                bare: bool = False, **headers):
        """(status, headers, body) of one request to `path` under the secret path (`bare`: as it is); redirects
        are not followed."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {**({"Cookie": self.cookie} if cookie else {}), **headers}
        path = path if bare else self.root + path
        body = None
        if form is not None:
            body = urlencode(form)
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        conn.request(method, path, body=body, headers={k.replace("_", "-"): v for k, v in headers.items()})
        response = conn.getresponse()
        result = response.status, dict(response.getheaders()), response.read().decode()
        conn.close()
        return result

    def review(self, form: list, **headers):
        return self.request("POST", "/review", [("exercise", "ex05"), *form],
                            **{"Origin": self.origin, **headers})

    def stop(self) -> str:
        """Ctrl-C: the page stops and says so (exit status 0)."""
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(timeout=60) == 0, self.log.read_text()
        return self.log.read_text()


@pytest.fixture
def server(grades):
    running = Server(grades)
    yield running
    if running.proc.poll() is None:
        assert "The review page stopped." in running.stop()


def gradebook_row(grades: Path, student: str) -> dict:
    """The student's row of the gradebook as written now (the page writes it again a moment after a review)."""
    return next(row for row in json.loads((grades / "gradebook.json").read_text())["rows"] if row["student"] == student)


def listening_address(port: int) -> str:
    """The local address the socket listening on `port` is bound to, from /proc/net/tcp (hex, as the kernel
    writes it: 0100007F is 127.0.0.1)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":  # LISTEN
            return address
    return ""


# -- the code as shown ---------------------------------------------------------------------------------------------

def test_code_keeps_its_lines_and_a_notebook_its_cells():
    pytest.importorskip("pygments", reason="the review extra: pip install -e '.[review]'")
    from grader.report.code_view import cells, code_of, highlighted

    source = "\n\n" + INJECTED + "def f(x):\n    return '</pre>' + x  # ok\n"
    lines = highlighted(source)
    assert ["".join(text for _, text in line) for line in lines] == source.splitlines()  # line 3 is line 3
    assert ("k", "def") in lines[3] and any(kind.startswith("c") for kind, _ in lines[2])
    shown = cells(notebook("x = 1\ndef linear_grads(): pass\n"))
    assert [(c["kind"], c["label"]) for c in shown] == [("markdown", ""), ("code", "In[1]"), ("code", "In[2]")]
    assert code_of(notebook("x = 1\ndef linear_grads(): pass\n"), True) == "x = 1\n\n\ndef linear_grads(): pass\n"
    assert cells("{not a notebook") is None and code_of("{not a notebook", True) == "{not a notebook"
    assert shown[1]["outputs"] == [{"text": "<script>window.pwned = 1</script>\n"},
                                   {"image": f"data:image/png;base64,{PNG}"}, {"text": "<Figure size 640x480>"},
                                   {"text": "ValueError: bad"}]  # no SVG, no colour codes


# -- the door ------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_token_is_the_only_door(server, grades):
    assert listening_address(server.port) == "0100007F"  # 127.0.0.1, nothing else
    for path in ("/", "/static/review.js", "/s/s09/ex05", f"/?token={server.token[:-1]}x"):
        assert server.request("GET", path, bare=True)[0] == 403, path  # the cookie alone opens nothing
        assert server.request("GET", path, cookie=False)[0] == 403, path  # nor the secret path alone
    status, headers, _ = server.request("GET", f"/s/s09/ex05?token={server.token}", cookie=False, bare=True)
    assert status == 303 and headers["location"] == f"{server.root}/s/s09/ex05"  # the token leaves the address bar
    sent = headers["set-cookie"].split(";")[0]  # what the browser sends back: neither the token nor the path
    assert server.token not in sent and server.root.split("/")[-1] not in sent
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=strict" in headers["set-cookie"]
    assert f"Path={server.root}" in headers["set-cookie"]  # a browser sends it under the secret path only
    status, headers, body = server.request("GET", "/")
    assert status == 200 and "script-src 'self'" in headers["content-security-policy"] and "<script>" not in body
    assert server.request("GET", "/", Host="review.example.com")[0] == 400  # a DNS rebinding page gets nothing
    status, _, body = server.request("GET", "/s/s18/ex05")  # autograd used: the route seen in the source, flagged
    assert status == 200 and "Flagged for a look" in body and "`.backward` (line 19)" in body
    similar = body.split("<ul id='similar'>")[1].split("</ul>")[0]  # 3 of 25 hand in the same file: listed
    assert "s19" in similar and "s20" in similar  # (the sign group, 7 of 25, is the class's common answer: not)

    comment = [("student", "s09"), ("comment", "from elsewhere")]
    assert server.review(comment, Origin="http://127.0.0.1:1")[0] == 403  # another local page: not this server
    assert server.review(comment, Sec_Fetch_Site="same-site")[0] == 403
    assert server.request("POST", "/review", [("exercise", "ex05"), *comment], Origin=server.origin,
                          bare=True)[0] == 403
    assert server.request("POST", "/review", [("exercise", "ex05"), *comment], Origin=server.origin,
                          cookie=False)[0] == 403
    assert not (grades / "review.toml").exists()


@pytest.mark.slow
def test_bad_input_is_said_in_one_line_and_writes_nothing(server, grades):
    cases = {"the score is a number, not abc": [("student", "s09"), ("score", "abc")],
             "the score is a number from 0 up, not -1": [("student", "s09"), ("score", "-1")],
             "the score 10.5 is above ex05&#39;s 10 points": [("student", "s09"), ("score", "10.5")],
             "no student s09x in this batch; did you mean s09?": [("student", "s09x"), ("comment", "hello")],
             "no check nope that can be set to passed": [("student", "s09"), ("check:nope", "passed")],
             "say what to review": [("student", "s09"), ("comment", "  ")],
             "select at least one submission": [("comment", "hello")],
             "no student zz in this batch": [("student", "zz"), ("comment", "hello")]}
    for message, form in cases.items():
        status, _, body = server.review(form)
        assert status in (400, 404) and f"class='problem'>{message}" in body, (message, body[-500:])
    assert server.request("GET", "/s/s99/ex05")[0] == 404
    assert server.request("GET", "/mistake?exercise=ex05&key=x")[0] == 404
    status, _, body = server.request("GET", "/s/s09/ex5")
    assert status == 404 and "no exercise ex5 in this batch; did you mean ex05?" in body
    assert not (grades / "review.toml").exists()

    # what the command writes: a score, a check's verdict, a comment and a file, with who and when
    form = [("student", "s21"), ("score", "8.5"), ("check:dw", "passed"), ("check:db", ""), ("comment", "ok"),
            ("file", "ex05.py"), ("next", "//elsewhere.example/")]
    status, headers, _ = server.review(form)
    assert status == 303 and headers["location"] == f"{server.root}/?saved=1"  # back to this server only
    entry = read_reviews(grades)[("s21", "ex05")]
    assert {k: entry[k] for k in ("score", "checks", "comment", "file", "by")} == {
        "score": 8.5, "checks": {"dw": "passed"}, "comment": "ok", "file": "ex05.py", "by": "Prof. Li"} and entry["at"]
    wait_for(lambda: gradebook_row(grades, "s21")["total"] == 8.5, "the gradebook written again")
    status, _, _ = server.review([("student", "s22"), ("score", "10.5"), ("bonus", "1")])
    assert status == 303 and read_reviews(grades)[("s22", "ex05")]["bonus"] is True
    status, _, body = server.request("GET", "/")
    assert "score set to 10.5 (bonus)" in body.split("<td>s22</td>")[1].split("</tr>")[0]
    # a review from the command line shows at the page's next request
    assert grade_here("review", grades, "s23", "ex05", "--comment", "seen from the shell").returncode == 0
    assert "seen from the shell" in server.request("GET", "/s/s23/ex05")[2]


@pytest.mark.slow
def test_the_command_says_what_is_wrong_in_one_line(tmp_path, grades):
    for args, said in [((tmp_path, "--serve"), "no batch in"),
                       ((grades, "s09", "--serve"), "--serve takes GRADES alone"),
                       ((grades,), "say which STUDENT and EXERCISE to review"),
                       ((grades, "s09", "ex05", "--score", "11"), "the score 11 is above ex05's 10 points: mark it "
                                                                  "as a bonus"),
                       ((grades, "s09", "ex05", "--score", "-1"), "the score is a number from 0 up, not -1"),
                       ((grades, "s09", "ex05", "--comment", "x", "--bonus"), "--bonus goes with --score"),
                       ((grades, "s9", "ex05", "--comment", "x"), "no student s9 in " + str(grades)),
                       ((grades, "s09", "ex5", "--comment", "x"), "no exercise ex5 in " + str(grades)),
                       ((grades, "s09", "ex03", "--comment", "x"), "no exercise ex03 in")]:
        proc = run_grade("review", *args)
        assert proc.returncode == 2 and said in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, args
    assert not (grades / "review.toml").exists()
    for args, said in [(("s09x", "ex05"), "(the student column of grades.csv); did you mean s09?"),
                       (("s09", "ex5"), "(its exercises: ex05); did you mean ex05?")]:
        assert said in grade_here("review", grades, *args, "--comment", "x").stderr, args
    assert "did you mean" not in grade_here("review", grades, "zz", "ex05", "--comment", "x").stderr  # none close
    proc = grade_here("review", grades, "s09x", "ex05", "--comment", "x", "--lang", "zh")
    assert proc.returncode == 2 and "中没有学生 s09x" in proc.stderr and "是不是 s09？" in proc.stderr

    # a bonus: above the points, said so in the gradebook, grades.csv and the student's feedback
    proc = grade_here("review", grades, "s09", "ex05", "--score", "12", "--bonus")
    assert proc.returncode == 0, proc.stderr
    row = next(r for r in json.loads((grades / "gradebook.json").read_text())["rows"] if r["student"] == "s09")
    assert row["total"] == 12 and row["cells"]["ex05"]["review"]["bonus"] is True
    assert "score set to 12 (bonus)" in (grades / "grades.csv").read_text()
    assert "score set to 12 (bonus)" in (grades / "feedback" / "s09.md").read_text()
    grade_here("review", grades, "s09", "ex05", "--score", "9")  # a later score within the points: no bonus
    assert "score set to 9 (" in (grades / "feedback" / "s09.md").read_text()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = run_grade("review", grades, "--serve", "--port", taken.getsockname()[1])
    assert proc.returncode == 2 and "cannot listen on 127.0.0.1:" in proc.stderr
    fake = tmp_path / "no_starlette" / "starlette"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('not installed')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake.parent), str(ROOT)])}
    proc = run_grade("review", grades, "--serve", env=env)
    assert proc.returncode == 2 and "pip install 'torch-katas[review]'" in proc.stderr


@pytest.mark.slow
def test_concurrent_reviews_lose_no_entry(server, grades):
    """Twelve requests and two `grade review` commands at once, each comment longer than one write."""
    students = [f"s{n:02}" for n in range(1, 13)]
    long = "x" * 10_000
    statuses = []
    threads = [threading.Thread(target=lambda s=s: statuses.append(server.review(
        [("student", s), ("comment", f"{s} {long}")])[0])) for s in students]
    commands = [subprocess.Popen([sys.executable, "-m", "grader", "review", str(grades), s, "ex05", "--comment",
                                  f"{s} by command {long}"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL) for s in ("s13", "s14")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [c.wait(timeout=300) for c in commands] == [0, 0]
    assert statuses == [303] * len(students)
    reviews = read_reviews(grades)  # the file reads: no entry torn by another
    assert {s for s, _ in reviews} == {*students, "s13", "s14"}
    assert all(reviews[(s, "ex05")]["comment"].startswith(s) and reviews[(s, "ex05")]["by"] == "Prof. Li"
               for s in students)
    wait_for(lambda: sum(bool(row["cells"]["ex05"].get("review")) for row in json.loads(
        (grades / "gradebook.json").read_text())["rows"]) == 14, "the gradebook written after the last of them")


# -- in a browser ---------------------------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright: "
                                   "pip install -e '.[test]'")
    if not CHROMIUM:
        pytest.skip("the browser tests need Chromium: apt-get install chromium")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


@pytest.fixture
def tab(browser, server):
    """A browser tab that opened the printed address; a dialog (an alert from injected code) fails the test."""
    context = browser.new_context()
    dialogs = []
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server.url)
    yield page
    assert dialogs == []
    context.close()


class Collector(http.server.ThreadingHTTPServer):
    """Another local user's server on another port of 127.0.0.1: it keeps every request the browser sends it, and
    serves a page that loads an image from it."""

    def __init__(self):
        self.got: list[tuple[str, dict]] = []
        collector = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                collector.got.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                body = b"<!doctype html><img src='/pixel.png'><p>elsewhere</p>" if self.path != "/pixel.png" else b""
                self.send_response(200)
                self.send_header("Content-Type", "image/png" if self.path == "/pixel.png" else "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


@pytest.mark.slow
def test_what_another_port_receives_opens_nothing(tab, server, grades):
    other = Collector()
    try:
        tab.goto(f"{server.home}/s/s09/ex05")
        assert "opposite sign" in tab.locator("table.checks").inner_text()  # the teacher is in
        # a link to the other port followed from the page, then its page loads an image from it
        tab.evaluate("url => { const a = document.createElement('a'); a.href = url; document.body.append(a); "
                     "a.click(); }", f"{other.origin}/followed")
        wait_for(lambda: any(path == "/pixel.png" for path, _ in other.got), "the other port's image loaded")
    finally:
        other.shutdown()
        other.server_close()
    assert {path for path, _ in other.got} >= {"/followed", "/pixel.png"}
    said = " ".join(f"{path} {headers}" for path, headers in other.got)
    assert server.root.split("/")[-1] not in said  # the secret path: no Referer, nothing
    # whatever it received, replayed here (even on the secret path, were it guessed): no page, no grade
    cookies = {headers.get("cookie", "") for _, headers in other.got}
    for cookie in cookies:
        for path in ("/", "/s/s09/ex05", f"{server.root}/", f"{server.root}/s/s09/ex05"):
            assert server.request("GET", path, bare=True, Cookie=cookie)[0] == 403, (path, cookie)
        for path in ("/review", f"{server.root}/review"):
            status, _, _ = server.request("POST", path, [("exercise", "ex05"), ("student", "s09"), ("score", "0")],
                                          bare=True, Cookie=cookie, Origin=server.origin)
            assert status == 403, (path, cookie)
    assert not (grades / "review.toml").exists()
    assert server.request("GET", "/s/s09/ex05")[0] == 200  # while the teacher's own cookie and path still open it


@pytest.mark.slow
def test_grading_by_mistake_in_a_browser(tab, server, grades):
    # the class by mistake: the sign mistake, 7 of 25, with what it means
    row = tab.locator("table.mistakes tr", has=tab.locator("code", has_text="sign"))
    assert "7 of 25" in row.inner_text() and "opposite sign" in row.inner_text()
    with tab.expect_navigation():  # to its load event: its keys are listened to once its (deferred) script ran
        row.locator("a").click()
    cards = tab.locator("section.card")
    assert sorted(cards.locator("ul.members b").all_inner_texts()) == sorted(SIGN)
    # the same code once, with its students: s09-s13's file and the hostile folder's (a comment aside)
    same = sorted(cards.nth(0).locator("b").all_inner_texts())
    assert same == sorted(["s09", "s10", "s11", "s12", "s13", HOSTILE]) and cards.count() < len(SIGN)
    assert "6 submissions with this code" in cards.nth(0).inner_text()
    assert "opposite sign" in cards.nth(0).inner_text() and "error = y - predict" in cards.nth(0).inner_text()
    assert cards.nth(0).locator("pre.code").count() == 1

    # keyboard: j to the last card, x leaves its students out; one comment for the others
    for _ in range(cards.count()):
        tab.keyboard.press("j")
    tab.keyboard.press("x")
    left_out = cards.last.locator("b").all_inner_texts()
    assert left_out and not any(box.is_checked() for box in cards.last.locator("input[type=checkbox]").all())
    tab.fill("#apply textarea[name=comment]", "Check the sign of the error: y_pred - y.")
    tab.select_option("#apply select[name='check:db']", "passed")
    with tab.expect_navigation():
        tab.click("#apply button[type=submit]")
    reviewed = sorted(s for s in SIGN if s not in left_out)
    assert f"Saved: {len(reviewed)} review(s)" in tab.locator(".saved").inner_text()
    reviews = read_reviews(grades)
    assert sorted(s for s, _ in reviews) == reviewed
    assert all(r["comment"] == "Check the sign of the error: y_pred - y." and r["checks"] == {"db": "passed"}
               and r["by"] == "Prof. Li" and r["at"] for r in reviews.values())
    assert tab.locator("section.card .reviewed").count() == len(reviewed)

    # each one still reviewed alone: open the first card's first student with o, see it whole, save a score with
    # Ctrl+Enter
    tab.keyboard.press("j")
    with tab.expect_navigation():
        tab.keyboard.press("o")
    student = tab.locator("#review input[name=student]").input_value()
    assert student in reviewed
    assert "opposite sign" in tab.locator("table.checks").inner_text()
    assert "error = y - predict" in tab.locator("pre.code").first.inner_text()
    tab.locator("#diff summary").click()
    assert tab.locator("#diff .add").count() > 0 and tab.locator("#diff .del").count() > 0
    assert "Check the sign of the error" in tab.locator("#history").inner_text()
    tab.fill("#review input[name=score]", "7")
    tab.fill("#review textarea[name=comment]", "Right idea otherwise.")
    with tab.expect_navigation():
        tab.keyboard.press("Control+Enter")
    assert tab.locator("#history li").count() == 2 and "score set to 7" in tab.locator(".reviewed").inner_text()
    assert len(history(grades, student, "ex05")) == 2

    # the next one of the mistake with n; the gradebook and the student's feedback follow
    here = tab.url
    tab.keyboard.press("n")
    tab.wait_for_url(lambda url: url != here)
    assert "key=sign" in tab.url
    wait_for(lambda: "Right idea otherwise." in (grades / "feedback" / f"{student}.md").read_text(),
             "the feedback written again")
    assert gradebook_row(grades, student)["total"] == 7
    export = grade_here("export", grades, "--format", "csv")
    assert export.returncode == 0 and "Right idea otherwise." in (grades / "csv.csv").read_text()


@pytest.mark.slow
def test_notebooks_show_as_cells_and_hostile_text_stays_text(tab, server):
    tab.goto(f"{server.home}/s/s24/ex05")
    cells = tab.locator(".cell")
    assert cells.count() == 3 and "## My answer <b>not bold</b>" in cells.nth(0).inner_text()
    assert "In[1]" in cells.nth(1).inner_text() and "In[2]" in cells.nth(2).inner_text()
    outputs = cells.nth(1).locator(".output")  # what it printed as text, its PNG as an image, the SVG not at all
    assert outputs.nth(0).inner_text().strip() == "<script>window.pwned = 1</script>"
    assert cells.nth(1).locator("img.output").count() == 1 and "ValueError: bad" in outputs.last.inner_text()
    assert tab.evaluate("document.querySelector('img.output').naturalWidth") == 1
    tab.goto(server.home + "/")
    tab.locator("table.book tr", has_text=HOSTILE).locator("a").click()
    tab.wait_for_selector("#review")
    assert HOSTILE in tab.locator("h1").inner_text()
    assert "<script>window.pwned = 1</script>" in tab.locator("pre.code").first.inner_text()
    assert tab.evaluate("window.pwned") is None and tab.locator("img").count() == 0


@pytest.mark.slow
def test_two_tabs_reviewing_at_once_lose_nothing(browser, server, grades):
    context = browser.new_context()
    tabs = [context.new_page(), context.new_page()]
    tabs[0].goto(server.url)
    for page, student in zip(tabs, ("s14", "s15")):
        page.goto(f"{server.home}/s/{student}/ex05")
        page.fill("#review textarea[name=comment]", f"{student}: the factor of two.")
    for page in tabs:  # both sent before either answer comes
        page.evaluate("document.getElementById('review').requestSubmit()")
    for page in tabs:
        page.wait_for_selector(".saved")
    for page in tabs:
        page.goto(f"{server.home}/mistake?exercise=ex05&key=factor-0.5")
        page.fill("#apply textarea[name=comment]", f"group comment from tab {tabs.index(page)}")
    for page in tabs:
        page.evaluate("document.getElementById('apply').requestSubmit()")
    for page in tabs:
        page.wait_for_selector(".saved")
    context.close()
    group = ["s14", "s15", "s16", "s17"]
    assert {s: len(history(grades, s, "ex05")) for s in group} == {"s14": 3, "s15": 3, "s16": 2, "s17": 2}


@pytest.mark.slow
def test_the_page_speaks_both_languages(browser, grades):
    chinese = Server(grades, "--lang", "zh")
    try:
        page = browser.new_page()
        page.goto(chinese.url)
        assert page.locator("h2").first.inner_text() == "按错误" and "快捷键" in page.locator(".keys").inner_text()
        mistakes = page.locator("table.mistakes").inner_text()  # the checks' titles in the page's language
        assert "db 与 autograd 和有限差分一致" in mistakes and "matches autograd" not in mistakes
        page.goto(f"{chinese.home}/mistake?exercise=ex05&key=sign")
        assert "db 与 autograd 和有限差分一致" in page.locator("#apply").inner_text()
        page.goto(f"{chinese.home}/s/s09/ex05")
        assert page.locator("#review button").inner_text() == "保存复核"
        page.click("#lang")
        page.wait_for_selector("text=Save the review")
        assert page.url.endswith("/s/s09/ex05")
        page.close()
    finally:
        assert "复核页面已停止。" in chinese.stop()


# -- every shape a batch can have ----------------------------------------------------------------------------------

ROSTER = "folder,name\nann,Ann Lee\nbob,Bob Wu\ncid,Cid Absent\ndee,Dee Two\neve,Eve Sign\n"


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    """Batches of every shape, graded once for the module: an absentee on the roster, an exercise nobody handed in
    and a student with two files for one (needs a look); only errors; a roster and no submission at all."""
    tmp = tmp_path_factory.mktemp("shapes")
    (tmp / "roster.csv").write_text(ROSTER)
    files = {"absent": {"ann/ex05.py": SOLUTION.read_text(), "bob/ex05.py": "def (\n",
                        "dee/ex05.py": STUB.read_text(), "dee/ex05_v2.py": SOLUTION.read_text(),
                        "eve/ex05.py": (MISTAKES / "sign_flipped.py").read_text()},
             "errors": {"ann/ex05.py": "def (\n", "bob/ex05.py": "import os\nos._exit(3)\n"},
             "nobody": {}}
    batches = {}
    for shape, content in files.items():
        subs = tmp / shape
        subs.mkdir()
        for name, text in content.items():
            (subs / name).parent.mkdir(exist_ok=True)
            (subs / name).write_text(text)
        out = tmp / f"{shape}-grades"
        batch = run_grade("batch", subs, "-e", "ex05", "-e", "ex03", "--out", out, "--workers", "2", "--roster",
                          tmp / "roster.csv")
        assert batch.returncode == 0, batch.stderr
        batches[shape] = out
    return batches


def walk(server: Server) -> dict[str, str]:
    """Every page of the review page reachable from the class by its links, and every student's every exercise:
    path -> body; each must answer 200."""
    import html
    import re

    seen: dict[str, str] = {}
    todo = ["/"]
    book = json.loads((server.grades / "gradebook.json").read_text())
    todo += [f"/s/{row['student']}/{ex['id']}" for row in book["rows"] for ex in book["exercises"]]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        status, _, body = server.request("GET", path)
        assert status == 200 and "<h1>" in body, (path, status, body[-300:])
        seen[path] = body
        for link in re.findall(r"href='([^']*)'", body):
            link = html.unescape(link)
            if link.startswith(server.root + "/") and "/lang/" not in link and "/static/" not in link:
                todo.append(link.removeprefix(server.root))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["absent", "errors", "nobody"])
def test_every_page_opens_on_every_shape_of_batch(shapes, shape, tmp_path):
    grades = Path(shutil.copytree(shapes[shape], tmp_path / "grades"))
    server = Server(grades)
    try:
        pages = walk(server)
    finally:
        server.stop()
    overview = pages["/"]
    for name in ("Ann Lee", "Bob Wu", "Cid Absent", "Dee Two", "Eve Sign"):  # the roster, absentees included
        assert name in overview, name
    assert "<th title=" in overview and ">ex03<" in overview and ">ex05<" in overview
    cid = overview.split("<td>cid</td>")[1].split("</tr>")[0]
    assert "missing" in cid and "<td class='num'>–</td>" in cid  # nothing scored: a blank total, not 0
    absent = pages["/s/cid/ex05"]
    assert "No graded file of this exercise is kept" in absent and "Cid Absent" in absent
    if shape == "absent":
        assert "needs a look" in pages["/s/dee/ex05"].lower() or "two files" in pages["/s/dee/ex05"]
        groups = [body for path, body in pages.items() if path.startswith("/mistake?")]
        assert any("<b>eve</b>" in body and "opposite sign" in body for body in groups)  # her mistake's group
    if shape == "errors":
        assert "SyntaxError" in pages["/s/ann/ex05"] or "syntax" in pages["/s/ann/ex05"].lower()


@pytest.mark.slow
def test_rubric_items_are_defined_once_and_followed_everywhere(server, grades):
    define = grade_here("review", grades, "--item", "ex05:sign-db", "--points", "-2", "--text", "sign of db", "--by",
                       "Prof. Li")
    assert define.returncode == 0 and "rubric item sign-db of ex05 (-2)" in define.stdout, define.stderr
    # applied to a selection of the group on the page, to one student from the command line
    status, _, body = server.review([("student", "s09"), ("item", "nope")])
    assert status == 400 and "ex05 has no rubric item nope" in body
    assert "sign-db" in server.request("GET", "/mistake?exercise=ex05&key=sign")[2]  # offered by the group's form
    assert server.review([("student", "s09"), ("student", "s10"), ("item", "sign-db")])[0] == 303
    proc = grade_here("review", grades, "s11", "ex05", "--apply", "sign-bd")
    assert proc.returncode == 2 and "ex05 has no rubric item sign-bd" in proc.stderr and "did you mean sign-db?" in \
        proc.stderr
    assert grade_here("review", grades, "s11", "ex05", "--apply", "sign-db").returncode == 0
    plain = gradebook_row(grades, "s12")["total"]  # the same mistake, no item
    wait_for(lambda: [gradebook_row(grades, s)["total"] for s in ("s09", "s10", "s11")] == [plain - 2] * 3,
             "the item's points in the gradebook")
    # changed once: every submission that has it follows, in every output
    again = grade_here("review", grades, "--item", "ex05:sign-db", "--points", "-1", "--text", "the sign of db")
    assert again.returncode == 0, again.stderr
    assert [gradebook_row(grades, s)["total"] for s in ("s09", "s10", "s11")] == [plain - 1] * 3
    assert "-1 the sign of db" in (grades / "feedback" / "s09.md").read_text()
    assert "ex05: -1 the sign of db" in (grades / "grades.csv").read_text()
    assert "-1 the sign of db" in server.request("GET", "/s/s10/ex05")[2]  # at the page's next request
    items = [e for e in __import__("tomllib").loads((grades / "review.toml").read_text())["item"]]
    assert [(i["points"], i.get("by"), bool(i["at"])) for i in items] == [(-2, "Prof. Li", True), (-1, None, True)]
    # an item that overrides a check: its points follow the check's (db: 1 point), and those built on it
    assert grade_here("review", grades, "--item", "ex05:db-ok", "--points", "0", "--text", "db accepted", "--check",
                     "db=passed").returncode == 0
    assert grade_here("review", grades, "s12", "ex05", "--apply", "db-ok").returncode == 0
    assert gradebook_row(grades, "s12")["total"] == plain + 1
    assert "db accepted" in (grades / "feedback" / "s12.md").read_text()
    bad = grade_here("review", grades, "--item", "ex05:x", "--points", "0", "--check", "nope=passed")
    assert bad.returncode == 2 and "ex05 has no check nope=passed" in bad.stderr
    # defined on the page too, then applied there
    item = [("exercise", "ex05"), ("name", "tidy"), ("text", "tidy code")]
    status, _, body = server.request("POST", "/item", [*item, ("points", "abc")], Origin=server.origin)
    assert status == 400 and "a rubric item needs a name and its points" in body
    assert server.request("POST", "/item", [*item, ("points", "1")], Origin=server.origin)[0] == 303
    assert server.request("POST", "/item", [*item, ("points", "1")], bare=True, Origin=server.origin)[0] == 403
    group = server.request("GET", "/mistake?exercise=ex05&key=sign")[2]
    assert "+1 tidy code" in group and "<legend>Rubric items</legend>" in group
    assert server.review([("student", "s13"), ("item", "tidy")])[0] == 303
    wait_for(lambda: gradebook_row(grades, "s13")["total"] == plain + 1, "the page's item in the gradebook")


def test_a_mistakes_messages_are_in_the_pages_language(grades):
    """The batch graded in English keeps each check's message in both of the course's languages: the page shows it
    in its own, the record's `message` stays the batch's."""
    import re

    from grader.teacher.review_view import load, mistake_page

    record = json.loads((grades / "results.jsonl").read_text().splitlines()[0])
    assert all("messages" not in c and "spliced" not in c for c in record["checks"])  # validate's, never a batch's
    said = {lang: mistake_page(load(grades, lang), {"exercise": "ex05", "key": "sign"})["cards"][0]["messages"]
            for lang in ("en", "zh")}
    assert said["en"] and said["en"] != said["zh"]
    assert all(re.search(r"[\u4e00-\u9fff]", m) for m in said["zh"]), said["zh"]
    assert not any(re.search(r"[\u4e00-\u9fff]", m) for m in said["en"]), said["en"]
