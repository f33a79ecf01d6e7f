"""What can go wrong on the learner's side, as the judge sees it: an exception of the learner's code, a timeout,
a crash, tampering, a file that does not load.

Runs in: the judge (raised by its handle of the sandbox, caught by checks and the pytest plugin). No torch.
"""

from __future__ import annotations

from grader.text import Text


class LearnerProblem(Exception):
    """Base: learner code did not produce a value. `text` is learner-facing, `key` names the problem."""

    status = "graded"
    key = "learner-problem"

    def __init__(self, text: Text):
        super().__init__(text.render("en"))
        self.text = text

    @property
    def message(self) -> str:
        return self.text.render("en")


class LearnerError(LearnerProblem):
    """Learner code raised an exception."""

    def __init__(self, text: Text, *, exc_type: str = "", not_started: bool = False, key: str | None = None):
        super().__init__(text)
        self.exc_type = exc_type
        self.not_started = not_started
        self.key = key or ("not-started" if not_started else f"raised-{exc_type or 'error'}")


class LearnerTimeout(LearnerProblem):
    status = "timeout"
    key = "timeout"


class LearnerCrashed(LearnerProblem):
    status = "crashed"
    key = "crashed"


class Tampered(LearnerProblem):
    """Learner code replaced part of torch, the test runner or the grader."""

    status = "tampered"
    key = "tampered"


class LoadFailed(LearnerProblem):
    """The learner's file could not be loaded (syntax error, exception at import)."""

    status = "error"
    key = "load-failed"


class CellsFailed(LearnerProblem):
    """Notebook cells raised: the checks ran with what the other cells defined."""

    key = "cell-raised"


class ZygoteLost(LearnerProblem):
    """The zygote that starts sandboxes is gone (outside a judge: `grade doctor`'s test sandbox)."""

    status = "error"
    key = "grader-failure"


def does_not_define(name: str) -> Text:
    """The message for a name the learner's file lacks."""
    return Text("Your file does not define `{name}`: was it renamed or deleted?",
                "你的文件里没有定义 `{name}`：是不是被改名或删除了？", name=name)
