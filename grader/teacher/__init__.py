"""The teacher's tools: grade a class (batch.py with collect.py, roster.py, late.py), the gradebook and feedback
(gradebook.py), reviews, exports to an LMS, similarity, Gradescope bundles, what a result was graded against.

Runs in: the `grade` process of a teacher's command, the batch being the warm parent that forks judges. Trusted;
every student file and archive it reads is hostile input. Imports torch only when something must be graded.
"""
