"""Identity proofs for author keys: what to publish, and checking what was published."""
