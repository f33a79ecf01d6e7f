"""The warm grading service of one user and install: where it listens and how each end proves itself (address.py),
the client side (client.py), the service process (server.py, which forks judges and starts the front,
grader/cli/front.py).

Runs in: the `grade` client, `check()` in a kernel, `grade watch`, the front's forks (address, client: no torch),
and the service (server.py: torch, through the judge). Trusted: acts with the user's rights, so it believes no
peer on its uid alone, and is reachable from no sandbox.
"""
