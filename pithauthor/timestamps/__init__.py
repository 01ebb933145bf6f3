"""Trusted time for author events: RFC 3161 tokens and OpenTimestamps proofs (issue 41)."""
