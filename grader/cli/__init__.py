"""The `grade` command: its entry (entry.py: relayed to the warm service's front, else run here), the front that
runs a relayed command (front.py), the commands (main.py), their shared options and click's words in the
learner's language.

Runs in: the `grade` process, or a fork of the front. Trusted. No torch at import: `--help`, `list`, `hint` and a
grading with nothing to grade never import it.
"""
