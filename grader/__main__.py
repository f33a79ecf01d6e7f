"""`python -m grader`: the `grade` command (relayed to the warm service when one runs: relay.py)."""

from grader.cli.entry import main

main()
