"""The course author's tools: scaffold an exercise or import an nbgrader notebook, release a student version
(scaffold.py), prove the checks (validate.py) and their reach (mutants.py).

Runs in: the `grade` process of an author's command, a warm parent that forks judges. Trusted (the course is the
author's); graded files run in sandboxes as every submission does.
"""
