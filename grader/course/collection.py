"""The checks an exercise has, as pytest collects them: one source for `grade show`, the points overrides and
`grade validate`, parametrized checks included (`init_weights[Linear]`, one check per parameter).

Collecting imports the checks module, so torch (about a second): the one module of the course that does, and only
when asked (`grade show`, a points override naming a parametrized check, `grade validate`, the judge).
`exercises.declared_checks` reads the `@check` decorators from the source instead where torch must stay out
(`grade list`), and knows a parametrized check by its function only.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from grader.course.exercises import Exercise

PYTEST_INI = Path(__file__).resolve().parent.parent / "checks" / "pytest.ini"  # the judge's pytest settings
AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"


@contextlib.contextmanager
def only_given_plugins():
    """pytest loads the plugins it is given and none installed beside it (pytest-benchmark would make ./.benchmarks
    in the learner's folder), while the block runs."""
    before = os.environ.get(AUTOLOAD)
    os.environ[AUTOLOAD] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(AUTOLOAD, None)
        else:
            os.environ[AUTOLOAD] = before


class _Collector:
    """A pytest plugin that keeps what collection found, and stops there."""

    def __init__(self) -> None:
        self.checks: list[dict] = []
        self.unmarked: list[str] = []
        self.errors: list[str] = []

    def pytest_collection_finish(self, session) -> None:
        for item in session.items:
            marker = item.get_closest_marker("check")
            if marker is None:
                self.unmarked.append(item.name)
                continue
            self.checks.append({"id": item.name.removeprefix("test_"), "title": marker.kwargs["title"],
                                "zh": marker.kwargs.get("zh") or marker.kwargs["title"],
                                "points": float(marker.kwargs["points"]),
                                "visibility": marker.kwargs.get("visibility", "hidden")})

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append(str(report.longrepr).strip().splitlines()[-1] if report.longrepr else report.nodeid)


class CollectionError(RuntimeError):
    """The checks module could not be collected (it raises on import, or a test has no @check)."""


def collected_checks(exercise: Exercise) -> list[dict]:
    """Each check of `exercise` as the judge will run it: id, title, zh (its Chinese title), points and visibility,
    with the course's points overrides and the visibility exercise.toml and the course set applied; in the order
    they run."""
    collector = _Collector()
    args = [str(exercise.checks), "-c", str(PYTEST_INI), "--rootdir", str(exercise.home.checks_dir),
            "--collect-only", "-q", "--noconftest", "-p", "no:cacheprovider"]
    with contextlib.redirect_stdout(io.StringIO()), only_given_plugins():
        pytest.main(args, plugins=[collector])
    if collector.errors or collector.unmarked:
        raise CollectionError("; ".join(collector.errors + [f"{name} has no @check(title, points)"
                                                            for name in collector.unmarked]))
    return [{**c, "points": exercise.overrides.get(c["id"], c["points"]),
             "visibility": exercise.visibility_of(c["id"], c["visibility"])} for c in collector.checks]

