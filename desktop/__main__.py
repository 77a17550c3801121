"""The `edgedesk` command and `python -m desktop`: one entry point for both."""

import sys


def main() -> int:
    """Run the command line; Ctrl-C while Python still loads it is one line, exit 130."""
    try:
        from desktop.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("edgedesk: error: interrupted\n")
        return 130
    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
