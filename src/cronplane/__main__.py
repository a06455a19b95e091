"""`python -m cronplane` runs the CLI."""

from cronplane.cli.main import main

if __name__ == "__main__":
    main()
