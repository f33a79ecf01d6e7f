"""The command-line options several `grade` commands share, each defined once with its default.

Memory is given in MiB on the command line and passed on in bytes (`memory_bytes`), the unit of
`grader.sandbox.limits.Limits`; its default is `MEMORY_MIB`, which `Limits` uses too. Never imports torch.
"""

from __future__ import annotations

from pathlib import Path

import click

from grader.sandbox.limits import MEMORY_MIB


def memory_bytes(mib: int | None) -> int | None:
    """A --memory value (MiB) in bytes; None: the default."""
    return mib << 20 if mib else None


def memory(who: str = "your code"):
    return click.option("--memory", type=click.IntRange(256, 1 << 20),
                        help=f"Memory limit of {who} in MiB (default {MEMORY_MIB}).")


def time_limit(who: str = "your code"):
    return click.option("--time-limit", type=click.FloatRange(0.1, 3600),
                        help=f"Seconds per call into {who} (default: the exercise's).")


seed = click.option("--seed", type=int, help="Seed of the checks' random inputs (to reproduce a run).")
device = click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True,
                      help="Device the checks run on.")
as_json = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
assignment = click.option("--assignment", "-a", help="An assignment of the course (its course.toml): its exercises "
                          "and points.")
out_file = click.option("--out", type=click.Path(path_type=Path), help="File to write.")
no_server = click.option("--no-server", is_flag=True, help="Grade in this process, without the warm grading service "
                         "(also: TORCH_KATAS_NO_SERVER=1).")
