"""The course as data: its exercises in teaching order and their metadata, stubs in each language, variants, mistake
keys, statement rules, visibility, notebooks written from an exercise.

Runs in: every process (the `grade` client, the front, the service, batch, the judge). Trusted: a course is the
teacher's. Never imports torch, never runs learner code.
"""
