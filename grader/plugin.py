"""The pytest plugin of the judge: the `submission`, `rng` and `device` fixtures, and the
translation of each check's outcome into a result the report can show.

Results are emitted one by one as checks finish, so a judge that is killed later loses nothing.
"""

from __future__ import annotations

import zlib

import pytest
import torch

from grader.checking import CURVES, CheckFailed
from grader.sandbox import Limits, LearnerError, LearnerProblem, Submission
from grader.source import Source

STATUS_ORDER = ["graded", "timeout", "crashed", "tampered", "error"]


def worst(statuses) -> str:
    return max(statuses, key=STATUS_ORDER.index, default="graded")


class JudgePlugin:
    def __init__(self, source: Source, limits: Limits, seed: int, lang: str, device: str, emit):
        self.proxy = Submission(source, limits, seed)
        self.seed = seed
        self.lang = lang
        self.device_name = device
        self.emit = emit
        self.statuses = {"graded"}

    # -- fixtures --
    @pytest.fixture(scope="session")
    def submission(self) -> Submission:
        return self.proxy

    @pytest.fixture
    def rng(self, request) -> torch.Generator:
        """A generator seeded from the run's seed and the check's name: fresh inputs each run,
        the same inputs for the same --seed."""
        return torch.Generator().manual_seed(self.seed ^ zlib.crc32(request.node.name.encode()))

    @pytest.fixture(scope="session")
    def device(self) -> str:
        if self.device_name == "cuda" and not torch.cuda.is_available():
            pytest.skip("not verified here: this machine has no CUDA device")
        return self.device_name

    # -- results --
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
                   "message": self._text(first.message, first.zh) if first else "", "curves": CURVES})

    def _text(self, en: str, zh: str | None) -> str:
        return zh if self.lang == "zh" and zh else en

    def _result(self, item, call, report) -> dict:
        marker = item.get_closest_marker("check")
        meta = marker.kwargs if marker else {"title": item.name, "points": 0.0, "zh": item.name}
        outcome, message = self._outcome(call, report)
        passed = outcome == "passed"
        return {
            "id": item.name.removeprefix("test_"),
            "title": self._text(meta["title"], meta.get("zh")),
            "outcome": outcome,
            "passed": passed,
            "points": meta["points"] if passed else 0.0,
            "max_points": meta["points"],
            "message": message,
        }

    def _outcome(self, call, report) -> tuple[str, str]:
        if report.passed:
            return "passed", ""
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            return "skipped", reason.removeprefix("Skipped: ")
        exc = call.excinfo.value if call.excinfo else None
        if exc is not None and exc is self.proxy.load_problem:
            return "not_run", ""  # the load failure is the result's message, shown once
        if isinstance(exc, CheckFailed):
            return "failed", self._text(exc.message, exc.zh)
        if isinstance(exc, LearnerError) and exc.not_started:
            return "not_started", self._text(exc.message, exc.zh)
        if isinstance(exc, LearnerProblem):
            return "failed", self._text(exc.message, exc.zh)
        if isinstance(exc, pytest.fail.Exception) and "Timeout" in str(exc):
            self.statuses.add("timeout")
            return "failed", self._text("This check ran past its time limit: is your code very slow, or stuck in a loop?",
                                        "这个检查超过了时间限制：你的代码是不是太慢，或者卡在循环里？")
        text = f"{type(exc).__name__}: {exc}" if exc else "unknown failure"
        return "failed", self._text(f"The check could not finish ({text[:300]}): does your code return what the "
                                    f"statement asks for?",
                                    f"检查无法完成（{text[:300]}）：你的代码返回的是题目要求的内容吗？")
