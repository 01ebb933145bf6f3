"""ORCID iDs: format and the ISO 7064 MOD 11-2 check digit (pure, no I/O).

The one home of the ORCID rule: what users type is read by `normalize_orcid` (bare iD or an
orcid.org URL), what signed documents carry is checked by `is_orcid` (bare iD only).
"""

from __future__ import annotations

import re

from pithauthor.errors import OrcidError

_FORM = re.compile(r"[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]")
_URL_PREFIXES = ("https://orcid.org/", "http://orcid.org/", "orcid.org/", "orcid:")


def check_digit(base_digits: str) -> str:
    """ISO 7064 MOD 11-2 check character of the 15 base digits ('0'-'9' or 'X')."""
    total = 0
    for char in base_digits:
        total = (total + int(char)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def is_orcid(text: str) -> bool:
    """True when `text` is exactly a bare iD `0000-0002-1825-0097` with a valid check digit
    (the form signed events carry: no URL, no lower-case x, no spaces)."""
    if not (isinstance(text, str) and text.isascii() and _FORM.fullmatch(text)):
        return False
    digits = text.replace("-", "")
    return digits[15] == check_digit(digits[:15])


def normalize_orcid(text: str) -> str:
    """The bare iD `0000-0002-1825-0097` from an iD or orcid.org URL; OrcidError if invalid."""
    value = text.strip()
    for prefix in _URL_PREFIXES:
        if value.lower().startswith(prefix):
            value = value[len(prefix) :]
            break
    value = value.upper()
    if not _FORM.fullmatch(value):
        raise OrcidError(f"{text!r} is not an ORCID iD (form 0000-0000-0000-000X)")
    digits = value.replace("-", "")
    expected = check_digit(digits[:15])
    if digits[15] != expected:
        raise OrcidError(
            f"{text!r} is not a valid ORCID iD: check digit {digits[15]}, expected {expected}"
        )
    return value
