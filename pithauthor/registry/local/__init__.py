"""The local registry: the same protocol as pith.science, served from this machine (its
names are offered by `pithauthor.registry`).

`run` (start one, add papers), `server` and `pool` (HTTP), `store` (SQLite), `answers`
(record, bundle and state JSON), `signer` (its own key, receipts and manifest). Never
trusted by a client unless the user says so.
"""
