"""`python -m tinycontext`: the same as the `tinycontext` command."""

from tinycontext.entry.cli import main

raise SystemExit(main())
