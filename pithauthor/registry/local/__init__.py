"""The local registry: the same protocol as pith.science, served from this machine.

`keys` (its own Ed25519 key and manifest), `store` (SQLite), `documents` (record, bundle and
state JSON), `server` (the HTTP server), `papers` (adding papers). Never trusted by a client
unless the user says so.
"""
