"""Signed text and printed text: the one rule (`pithauthor._core.text`), for callers.

>>> text_problem("Ada \u202eecalevoL")   # why it cannot be signed, or None
>>> escaped(title)                        # safe to print: invisible characters escaped
"""

from __future__ import annotations

from pithauthor._core.text import escaped, payload_text_problem, text_problem

__all__ = ["escaped", "payload_text_problem", "text_problem"]
