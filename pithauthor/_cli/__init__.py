"""The `pith` command line: a thin layer that parses arguments, calls the API and prints.

Command modules import only Typer at module level; everything heavier is imported inside the
command that needs it, so `pith --help` and `pith --version` start instantly.
"""
