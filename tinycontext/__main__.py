"""`python -m tinycontext`: the same as the `tinycontext` command."""

from tinycontext.entry.cli import console

console()
