"""`python -m grader`: the `grade` command (relayed to the warm service when one runs: relay.py)."""

from grader.relay import main

main()
