"""`python -m pithauthor` runs the `pith` command."""

from pithauthor._cli.main import main

main()
