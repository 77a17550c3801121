"""`python -m desktop` runs the same entry point as the `edgedesk` command."""

import sys

try:
    from desktop.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python loads the command: still one line
    sys.stderr.write("edgedesk: error: interrupted\n")
    raise SystemExit(130) from None

raise SystemExit(main())
