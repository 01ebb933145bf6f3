"""Registries: the client, submission through the outbox, tokens, trust manifests."""
