"""The `pith` command line: parse arguments, call the public API, print. No library logic here.

- Imports: only public pithauthor modules (plus `pithauthor._cli.*` and `_version`), checked by
  tests/test_layout.py.
- Commands: one file per command or group (`*_cmd.py`), each with `register(app)`, listed once
  in `pithauthor._cli.catalog.ENTRIES` with its one-line summary.
- Start-up: at module level only Typer, light standard modules, `_cli.*` and `pithauthor.errors`.
  Library modules are imported inside the command that needs them: loading them all at
  start-up more than doubles `pith --help` (benchmarks/bench_startup.py), and
  tests/test_startup_imports.py keeps httpx, PyNaCl, keyring and the like out of it.
"""
