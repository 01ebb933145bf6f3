"""The pure core: canonical JSON, identifiers, records, events. No I/O in here.

Every rule in here carries one of three tags (from the protocol notes,
docs/protocol.md), in its module docstring or the comment heading it:

- VERIFIED: recomputed from what the registry publishes; the vectors in tests/vectors and
  tests/fixtures prove it, and the tests prove it again (canonical JSON, the record and its
  Pith Number, the registry key and its receipts);
- OBSERVED: seen in the documents or pages the registry serves, not recomputable (the
  citation relationships, the shape of bundles and merged states);
- DESIGN: not published by the registry: this project decides it, documents it in
  docs/protocol.md, and keeps it in one module so it can follow the registry later (author
  events, key ids, identity proofs, the local merge).

The verdict words (a check `passed`, `failed`, `unverifiable`, `not_signed`, and what a verdict
"speaks for") are defined in `pithauthor.protocol.verdict`.
"""
