"""`python -m desktop` runs the same entry point as the `edgedesk` command."""

from desktop.cli import main

raise SystemExit(main())
