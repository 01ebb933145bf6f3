"""What the tests share, imported as `support.<module>` (tests/ is on the path through
tests/conftest.py): helpers, data and test servers. Fixtures built on them (`pith`,
`local_registry`, `arxiv_server`, `identity_server`, ...) are in the conftest.py files; no test
module imports another test module (tests/test_layout.py checks it)."""
