"""Internals of the bibliography reader (public API: `pithauthor.bibliography.reading`)."""
