"""The checks of every document pith verifies, one module per document (pure)."""
