"""torch-katas: auto-graded PyTorch exercises. `from grader import check, hint` in a notebook.

The packages are the processes and the trust line (docs/architecture.md draws them):
    cli/        the `grade` command: its entry, the front that runs a relayed command, the commands by audience
    learner/    workspace, katas, watch, Jupyter                                       (the learner's `grade`)
    teacher/    batch, gradebook, reviews, exports, similarity, Gradescope             (the teacher's `grade`)
    author/     new exercises, releases, validate, mutants                             (the author's `grade`)
    service/    the warm service, its address and its client                           (service process; clients)
    cluster/    grading on Dask workers                                                (batch; Dask workers)
    report/     the terminal table, HTML and Markdown pages                            (every process that shows)
    judge/      a forked judge runs pytest over the hidden checks; the pool of judges  (judge; warm parents)
    checking/   the check API: what a check module may import                          (judge; probes in sandbox)
    sandbox/    learner code and its walls: the sandbox process, the zygote, isolation (sandbox, zygote; judge)
    course/     the course as data: exercises, stubs, variants, keys; no torch        (every process)
    checks/     the built-in course's hidden checks                                    (judge; probes in sandbox)
Learner code runs only in a sandbox; nothing above sandbox/ ever imports it, and only sandbox/process.py runs it.
"""

from grader.version import __version__  # noqa: F401 - grader.__version__, as every package has


def check(exercise: str, **options):
    """In Jupyter: grade the cells this notebook has run so far, e.g. `check("ex05")`."""
    from grader.learner.jupyter import check as run_check

    return run_check(exercise, **options)


def hint(exercise: str, **options):
    """In Jupyter: reveal the next hint of an exercise, e.g. `hint("ex05")` (`all=True` for every one)."""
    from grader.learner.jupyter import hint as show_hint

    return show_hint(exercise, **options)
