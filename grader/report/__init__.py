"""Showing a grading: the terminal table and JSON (terminal.py), the HTML pages with their inline charts (pages.py).

Runs in: the `grade` client or the front's fork, batch, watch, Jupyter. Trusted; renders what learner code printed
or named as hostile text. No torch.
"""
