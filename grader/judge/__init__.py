"""Grading one submission: a judge process forked from a warm parent runs pytest over the exercise's hidden checks;
each check asks the submission's sandbox for plain data through the `submission` proxy; the outcome is one
`Result`.

Runs in: the judge (grading.py's child, plugin.py, submission.py) and the warm parents that fork it (grading.py:
service, batch, watch, `--no-server`, validate, cluster workers). Trusted: never imports learner code. `result.py`
(the record) is also read by clients that never import torch; doctor.py is `grade doctor`, the sandbox's self-test.
"""
