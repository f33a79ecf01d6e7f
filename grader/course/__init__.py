"""The course as data: its exercises in teaching order and their metadata, stubs in each language, variants, mistake
keys, statement rules, visibility, notebooks written from an exercise.

Runs in: every process (the `grade` client, the front, the service, batch, the judge). Trusted: a course is the
teacher's. Never runs learner code, and never imports torch, but for collection.py, which collects an exercise's
checks with pytest (so its checks module and torch) when asked: `grade show`, validate, the judge.
"""
