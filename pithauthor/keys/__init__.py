"""Internals of the author key store: secret containers, keyring access, metadata, passphrases."""
