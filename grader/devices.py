"""The public name of `grader.checking.devices` (check modules import it as `grader.devices`)."""

from grader.checking.devices import *  # noqa: F403
from grader.checking.devices import __all__  # noqa: F401
