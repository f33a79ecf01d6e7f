"""The pytest plugin of the judge: the `submission`, `rng` and `device` fixtures, and the
translation of each check's outcome into a result the report can show.

Results are emitted one by one as checks finish, so a judge that is killed later loses nothing.
"""

from __future__ import annotations

import os
import zlib

import pytest
import torch

from grader.checking.expect import CheckFailed, recorded_curves, use_variant
from grader.sandbox.limits import Limits
from grader.sandbox.problems import LearnerError, LearnerProblem
from grader.judge.submission import Submission
from grader.sandbox.source import Source
from grader.judge.result import blocked_failure, blocked_text
from grader.text import CJK_LANGUAGES, Text, quoted, spliced

STATUS_ORDER = ["graded", "timeout", "crashed", "tampered", "error"]


def worst(statuses) -> str:
    return max(statuses, key=STATUS_ORDER.index, default="graded")


class JudgePlugin:
    def __init__(self, source: Source, limits: Limits, seed: int, lang: str, device: str, emit,
                 languages: tuple[str, ...] = (), overrides: dict[str, float] | None = None,
                 variant: dict | None = None):
        self.bind(source, limits, seed, lang, device, emit, languages, overrides, variant)

    @classmethod
    def unbound(cls) -> JudgePlugin:
        """A plugin pytest is configured with before any grading (judge.Prepared), silent until `bind` gives it one."""
        plugin = cls.__new__(cls)
        plugin.emit, plugin.overrides = lambda event: None, {}  # what pytest's collection hook asks of it
        return plugin

    def bind(self, source: Source, limits: Limits, seed: int, lang: str, device: str, emit,
             languages: tuple[str, ...] = (), overrides: dict[str, float] | None = None,
             variant: dict | None = None) -> None:
        """This grading's submission, seed, language and the rest: what the fixtures and the results use."""
        self.proxy = Submission(source, limits, seed)
        self.seed = seed
        self.lang = lang
        self.languages = languages  # also emit every message in these languages (grade validate reads them)
        self.device_name = device
        self.emit = emit
        self.statuses = {"graded"}
        self.failed: dict[str, Text] = {}  # id -> title of the checks that failed so far
        self.builds_on: set[str] = set()  # the failed checks whose dependents were told why, once in a table
        self.overrides = overrides or {}  # check id -> points, from the course's course.toml
        use_variant(variant or {})  # the drawn parameters the checks read with variant(name)

    # -- fixtures --
    @pytest.fixture
    def submission(self) -> Submission:
        return self.proxy

    @pytest.fixture
    def rng(self, request) -> torch.Generator:
        """A generator seeded from the run's seed and the check's name: fresh inputs each run,
        the same inputs for the same --seed."""
        return torch.Generator().manual_seed(self.seed ^ zlib.crc32(request.node.name.encode()))

    @pytest.fixture
    def device(self) -> str:
        if self.device_name == "cuda" and not torch.cuda.is_available():
            pytest.skip("not verified here: this machine has no CUDA device")
        return self.device_name

    # -- results --
    def pytest_collection_finish(self, session):
        """First event: the checks collected, with their points; the parent accepts results for these only."""
        unmarked = [item.name for item in session.items if item.get_closest_marker("check") is None]
        event = {"event": "collected",
                 "checks": [{"id": item.name.removeprefix("test_"), "max_points": self._points(item)}
                            for item in session.items if item.get_closest_marker("check")]}
        if unmarked:
            event["problem"] = f"{', '.join(unmarked)} in the checks have no @check(title, points): not a check"
        self.emit(event)

    def pytest_runtest_setup(self, item):
        meta = item.get_closest_marker("check")
        self.proxy.running(Text(meta.kwargs["title"], meta.kwargs.get("zh")) if meta else Text(item.name))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = (yield).get_result()
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.emit({"event": "check", **self._result(item, call, report)})

    def pytest_sessionfinish(self):
        self.proxy.close()
        self.statuses.update(p.status for p in self.proxy.problems)
        status = worst(self.statuses)
        first = next((p for p in self.proxy.problems if p.status == status), None)
        self.emit({"event": "end", "status": status, "output": self.proxy.output(),
                   "message": first.text.render(self.lang) if first else "", "curves": recorded_curves(self.lang),
                   "isolation": self.proxy.isolation.get("applied", [])})

    def _result(self, item, call, report) -> dict:
        meta = item.get_closest_marker("check").kwargs
        check_id = item.name.removeprefix("test_")
        points = self._points(item)
        title = Text(meta["title"], meta.get("zh"))
        outcome, text, key = self._outcome(call, report)
        depends = list(meta.get("depends", ()))
        after = next((d for d in depends if d in self.failed), None)
        told = after in self.builds_on  # said in full once per table; shortly for the next check building on it
        alone = {"outcome": outcome, "message": text.render(self.lang), "key": key}  # its verdict on its own
        if after and outcome == "passed":  # it builds on a check that did not pass: no points for it alone
            outcome, key = "failed", None
            text = blocked_text(self.failed[after], told)
        elif after and outcome == "failed":
            text = blocked_failure(self.failed[after], text, told)
        else:
            after = None
        if after:
            self.builds_on.add(after)
        if outcome in ("failed", "not_started", "not_run"):
            self.failed[check_id] = title
        passed = outcome == "passed"
        result = {
            "id": check_id,
            "title": title.render(self.lang),
            "outcome": outcome,
            "passed": passed,
            "points": points if passed else 0.0,
            "max_points": points,
            "message": text.render(self.lang),
            "key": key,
            "visibility": meta.get("visibility", "hidden"),
        }
        if depends:
            result["depends"] = depends
        if after:
            result["after"] = after  # it failed after a check it builds on: that mistake's consequence
            result["alone"] = alone  # what it said on its own: a review that passes `after` gives it back
        if self.languages:
            result["translations"] = {lang: text.render(lang) for lang in self.languages}
            result["messages"] = {lang: text.render(lang, mask=True) for lang in self.languages}
            result["spliced"] = {lang: spliced(text, lang) for lang in self.languages if lang in CJK_LANGUAGES}
        return result

    def _points(self, item) -> float:
        """A check's points: as declared by @check, or as the course overrides them."""
        declared = item.get_closest_marker("check").kwargs["points"]
        return float(self.overrides.get(item.name.removeprefix("test_"), declared))

    def _outcome(self, call, report) -> tuple[str, Text, str | None]:
        if report.passed:
            return "passed", Text("", ""), None
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            reason = reason.removeprefix("Skipped: ")
            return "skipped", Text(reason), None
        exc = call.excinfo.value if call.excinfo else None
        if isinstance(exc, MemoryError):  # the judge's own memory bound: the grader failed, not the learner
            os._exit(70)
        if exc is not None and exc is self.proxy.load_problem:
            return "not_run", Text("", ""), None  # the load failure is the result's message, shown once
        if isinstance(exc, CheckFailed):
            return "failed", exc.text, exc.key
        if isinstance(exc, LearnerError) and exc.not_started:
            return "not_started", exc.text, exc.key
        if isinstance(exc, LearnerProblem):
            return "failed", exc.text, exc.key
        if isinstance(exc, pytest.fail.Exception) and "Timeout" in str(exc):
            self.statuses.add("timeout")
            return "failed", Text("This check ran past its time limit: is your code very slow, or stuck in a loop?",
                                  "这个检查超过了时间限制：你的代码是不是太慢，或者卡在循环里？"), "timeout"
        error = quoted(f"{type(exc).__name__}: {exc}"[:300] if exc else "unknown failure")
        return "failed", Text("The check could not finish ({error}): does your code return what the statement asks "
                              "for?", "检查无法完成（{error}）：你的代码返回的是题目要求的内容吗？",
                              error=error), "check-error"
