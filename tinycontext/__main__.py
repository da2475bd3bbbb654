"""`python -m tinycontext`: the same as the `tinycontext` command."""

from tinycontext.cli import main

raise SystemExit(main())
