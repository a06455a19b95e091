"""`python -m cronplane` runs the CLI."""

from cronplane.cli.main import entry

if __name__ == "__main__":
    entry()
