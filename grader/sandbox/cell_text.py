"""Notebook cells as text: a cell's code as Python (IPython's own input transformer) and a cell label's number.

Runs in: the trusted loader (source.py, reading a submission's notebook) and the sandbox (notebook_shell.py, for
`%%capture`'s cell). Pure functions of text: they run no cell, and trust nothing they are given.
"""

from __future__ import annotations


def cell_to_python(cell: str) -> str:
    """A code cell as Python, by IPython's own input transformer (`%time x` becomes
    `get_ipython().run_line_magic('time', 'x')`, `!ls` becomes `get_ipython().system('ls')`), with the
    cell's line numbers: IPython drops leading blank lines, they are put back."""
    from IPython.core.inputtransformer2 import TransformerManager  # only notebooks pay for IPython

    lines = cell.splitlines()
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "\n" * blank + TransformerManager().transform_cell(cell)


def cell_number(label: str) -> int:
    """N of a notebook cell's label "cell In[N]"."""
    return int(label.removeprefix("cell In[")[:-1])
