"""How fast the review page (`grade review GRADES --serve`) answers as the class grows: 200 and 1000 students.

A class is made from four graded submissions of ex05 (the solution, the sign mistake, the missing factor of two, the
stub), graded once here, then copied to each student of a synthetic class as `grade batch` leaves it (results.jsonl,
batch.json, the kept files): 78 % make the sign mistake (157 of 200, in 12 versions of the code: most hand in the
same), the others split among the rest. Each page is asked of a running `grade review --serve` as a browser asks it,
timed as the median of a few requests after a first one, beside the page's own stylesheet in the same run (the
baseline: what a request costs at all); also the first request of the page (the batch read), the group's first
request after the comment (review.toml read again) and the time until the gradebook and feedback hold it (written
again in the page's own thread, after the answer). Targets: the class and the largest mistake group under 0.3 s,
a submission under 0.2 s, a comment applied to 150 of the group under 1 s. Exits 1 if a target is missed.

    python bench/bench_review.py [SIZES...]     (default: 200 1000)
"""

from __future__ import annotations

import http.client
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.teacher.consistency import code_hash  # noqa: E402
from grader.teacher.gradebook import rebuild  # noqa: E402

MISTAKES = ROOT / "tests" / "mistakes" / "ex05_manual_backward"
KINDS = {"sign": MISTAKES / "sign_flipped.py", "solution": ROOT / "solutions" / "ex05_manual_backward.py",
         "factor": MISTAKES / "missing_factor_two.py", "stub": ROOT / "exercises/ex05_manual_backward/"
                                                                  "ex05_manual_backward.py"}
TARGETS = {"class": 0.3, "group": 0.3, "submission": 0.2, "apply 150": 1.0}


def graded_once(tmp: Path) -> dict[str, dict]:
    """One graded result of each kind (as results.jsonl holds it)."""
    subs = tmp / "subs"
    for kind, source in KINDS.items():
        (subs / kind).mkdir(parents=True)
        shutil.copy(source, subs / kind / "ex05.py")
    out = tmp / "base"
    subprocess.run([sys.executable, "-m", "grader", "batch", str(subs), "-e", "ex05", "--out", str(out),
                    "--workers", "2"], cwd=ROOT, check=True, capture_output=True)
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {r["student"]: r for r in results}


def kind_of(i: int, n: int) -> str:
    share = i / n
    return "sign" if share < 0.785 else "solution" if share < 0.86 else "factor" if share < 0.93 else "stub"


def synthetic_class(base: dict[str, dict], n: int, out: Path) -> None:
    """A grades folder of `n` students as `grade batch` leaves it, from the graded results in `base`."""
    out.mkdir(parents=True)
    lines, students = [], {}
    for i in range(n):
        student, kind = f"st{i:04}", kind_of(i, n)
        code = KINDS[kind].read_text()
        if kind == "sign" and i % 12:  # 12 versions of the sign mistake's code, one of them most common
            code += f"\n\nEXTRA_{i % 12} = {i % 12}\n" if i % 3 == 0 else ""
        kept = out / "files" / student / "ex05.py"
        kept.parent.mkdir(parents=True)
        kept.write_text(code)
        lines.append(json.dumps({**base[kind], "student": student, "submission": str(kept),
                                 "code_hash": code_hash(kept)[0]}))
        students[student] = {}
    (out / "results.jsonl").write_text("\n".join(lines) + "\n")
    (out / "batch.json").write_text(json.dumps({"exercises": ["ex05"], "assignment": None, "problems": [],
                                                "students": students, "similar": None, "lang": "en",
                                                "seeds": {}}))
    rebuild(out)  # the outputs, as after a batch


class Page:
    """A running review page, asked as a browser asks it (its cookie, its secret path)."""

    def __init__(self, out: Path):
        self.log = out.parent / f"{out.name}.log"
        self.proc = subprocess.Popen([sys.executable, "-m", "grader", "review", str(out), "--serve"], cwd=ROOT,
                                     stdout=self.log.open("w"), stderr=subprocess.STDOUT)
        while "token=" not in self.log.read_text():
            assert self.proc.poll() is None, self.log.read_text()
            time.sleep(0.05)
        url = urlsplit(self.log.read_text().splitlines()[1])
        self.port = url.port
        status, headers, _ = self.ask("GET", f"/?{url.query}", bare=True)
        self.root, self.cookie = headers["location"].removesuffix("/"), headers["set-cookie"].split(";")[0]

    def ask(self, method: str, path: str, form: list | None = None, bare: bool = False):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {"Cookie": getattr(self, "cookie", ""), "Origin": f"http://127.0.0.1:{self.port}"}
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path if bare else self.root + path, body=urlencode(form) if form else None,
                     headers=headers)
        response = conn.getresponse()
        result = response.status, dict(response.getheaders()), response.read().decode()
        conn.close()
        return result

    def timed(self, path: str, times: int = 5) -> float:
        """The median seconds of `times` requests of `path`, after a first one (the page's first load)."""
        status = self.ask("GET", path)[0]
        assert status == 200, (path, status)
        spans = []
        for _ in range(times):
            start = time.perf_counter()
            self.ask("GET", path)
            spans.append(time.perf_counter() - start)
        return statistics.median(spans)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def once(page: Page, path: str) -> float:
    start = time.perf_counter()
    assert page.ask("GET", path)[0] == 200, path
    return time.perf_counter() - start


def measure(base: dict[str, dict], n: int, tmp: Path) -> dict[str, float]:
    out = tmp / f"class{n}"
    synthetic_class(base, n, out)
    page = Page(out)
    try:
        group = "/mistake?" + urlencode({"exercise": "ex05", "key": "sign"})
        spans = {"baseline": page.timed("/static/review.css"), "class, first": once(page, "/"),
                 "class": page.timed("/"),
                 "group": page.timed(group), "submission": page.timed("/s/st0001/ex05")}
        form = [("exercise", "ex05"), ("comment", "the sign of the error"), ("next", page.root + group)]
        form += [("student", f"st{i:04}") for i in range(150)]
        start = time.perf_counter()
        status = page.ask("POST", "/review", form)[0]
        spans["apply 150"] = time.perf_counter() - start
        assert status == 303, status
        spans["group, next"] = once(page, group)  # review.toml read again
        while "the sign of the error" not in (out / "feedback" / "st0149.md").read_text():
            time.sleep(0.05)
        spans["outputs"] = time.perf_counter() - start  # the gradebook and feedback written again
    finally:
        page.stop()
    return spans


def main(sizes: list[int]) -> int:
    missed = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        base = graded_once(tmp)
        for n in sizes:
            spans = measure(base, n, tmp)
            print(f"{n} students ({sum(kind_of(i, n) == 'sign' for i in range(n))} in the sign group):")
            for name, span in spans.items():
                target = TARGETS.get(name)
                mark = "" if target is None else " ok" if span <= target else f" MISSED (target {target} s)"
                print(f"  {name:12} {span:7.3f} s  {span / spans['baseline']:7.1f}x the baseline{mark}")
                if target is not None and span > target:
                    missed.append(f"{n}: {name}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main([int(a) for a in sys.argv[1:]] or [200, 1000]))
