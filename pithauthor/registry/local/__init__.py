"""The local registry: the same protocol as pith.science, served from this machine (its
names are offered by `pithauthor.registry`).

`run` (start one, add papers), `server` and `pool` (HTTP), `store` (its data folder and
SQLite), `answers` (what it serves: record, bundle, state and manifest JSON, and its own key,
which signs their receipts). Never trusted by a client unless the user says so.
"""
