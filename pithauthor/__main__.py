"""`python -m pithauthor` runs the `pith` command."""

from pithauthor._cli.entry import main

main()
