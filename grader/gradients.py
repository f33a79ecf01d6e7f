"""The public name of `grader.checking.gradients` (check modules import it as `grader.gradients`)."""

from grader.checking.gradients import *  # noqa: F403
from grader.checking.gradients import __all__  # noqa: F401
