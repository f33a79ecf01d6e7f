"""Learner code and the walls around it: the submission's code as loaded, the zygote that forks every sandbox, the
isolation layers, the sandbox process that runs learner code and answers in plain data, and the judge's handle of it.

Runs in: the sandbox (process.py, and what it imports: frames, limits, notebook_shell.py, wire) -- untrusted
once learner code runs; the zygote (zygote.py, warmup.py, probe_shipping.py) -- trusted, holds nothing secret; and
the judge and grading parents (handle.py, problems.py, safefs.py, cgroup.py, source.py) -- trusted, and
everything they read from a sandbox or a submission is hostile input. cell_text.py's pure functions of a cell's text
serve both the loader and the notebook shell. One file still holds both sides: process.py (the sandbox's main loop,
and the `probe` registry the judge imports to name and ship probes). The walls' self-test is judge/doctor.py.
Imports nothing of the judge, the checks, the service, the teacher's or the learner's tools.
"""
