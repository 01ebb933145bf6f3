"""Verification of one author-signed event: the envelope, then the payload rules."""

from __future__ import annotations

from typing import Any

from pithauthor._core.checks import Report
from pithauthor._core.envelope import check_envelope


def check_author_event(event: Any) -> Report:
    """Every rule an author event must meet, each as a named check."""
    return check_envelope(event)
