"""Learner code and the walls around it: the submission's code as loaded, the zygote that forks every sandbox, the
isolation layers, the sandbox process that runs learner code and answers in plain data, and the judge's handle of it.

Runs in: the sandbox (process.py, portable.py's sandbox side, and what they import: frames, limits,
notebook_shell.py, wire) -- untrusted once learner code runs; the zygote (zygote.py, warmup.py, probe_shipping.py)
-- trusted, holds nothing secret; and the judge and grading parents (handle.py, problems.py, safefs.py, cgroup.py,
source.py, backend.py) -- trusted, and everything they read from a sandbox or a submission is hostile input. Two
small modules serve both sides with code that decides nothing about a grade: probes.py (the `probe` registry the
judge names and ships probes by, and the sandbox runs them by) and cell_text.py (pure functions of a cell's text).
The walls' self-test is judge/doctor.py; which walls this platform has, backend.py.
Imports nothing of the judge, the checks, the service, the teacher's or the learner's tools.
"""
