"""Payload JSON Schemas of the author event types (package data)."""
