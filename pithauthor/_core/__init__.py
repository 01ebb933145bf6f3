"""The pure core: canonical JSON, identifiers, records, events. No I/O in here."""
