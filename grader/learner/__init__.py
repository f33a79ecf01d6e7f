"""The learner's tools: the workspace and its progress, katas and their schedule, watch mode, `check()` and
`hint()` in Jupyter.

Runs in: the `grade` process or the front's fork, a Jupyter kernel (jupyter.py). Trusted; grades through the
service or a judge here, never runs learner code itself. No torch but through the judge.
"""
