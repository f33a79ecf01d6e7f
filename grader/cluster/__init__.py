"""`grade batch --cluster`: the batch's submissions graded on a Dask cluster's workers.

Runs in: the batch (dispatch.py: no torch), each Dask worker (worker_plugin.py) and the warm grading process a
worker keeps (worker_grader.py: a batch's warm parent, forking judges). Trusted; a worker grades only with the
batch's own grader, course, torch and Python, and believes nothing a sandbox made.
"""
