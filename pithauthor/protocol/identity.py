"""Identity in the protocol (pure): how an Ed25519 public key is named (fingerprint, key id),
ORCID iDs and their check digit, and the identity proofs an author publishes (what a proof
holds, where it is found, and when a retired key still speaks).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal, NamedTuple, TypedDict
from urllib.parse import unquote, urlsplit

from pithauthor.errors import InputError, OrcidError
from pithauthor.protocol.canonical_json import base32_nopad
from pithauthor.protocol.payloads import payload_orcid
from pithauthor.protocol.urls import checked_url, origin

# How an Ed25519 public key is named (section 3 rule, plus this project's key-id DESIGN).
#
# - `public_key_fingerprint` = first 16 bytes of sha256(raw public key), as 32 hex characters
#   (VERIFIED on the registry key).
# - `key_id` (DESIGN) = `ed25519:` + the first 26 characters of base32(sha256(raw public key)),
#   the same base32 fingerprint the registry manifest publishes; any verifier recomputes it from
#   the public key alone.
# - `signer_id` (DESIGN) = `orcid:<ORCID iD>` when the author gave one, else the key id.

KEY_ID_PREFIX = "ed25519:"


PUBLIC_KEY_LENGTH = 32


KEY_ID_RE = re.compile(r"ed25519:[A-Z2-7]{26}")


@lru_cache(maxsize=256)  # pure; an author signs and checks many events with one key
def fingerprint_hex(public_key: bytes) -> str:
    """First 16 bytes of sha256(raw key), lower-case hex (32 characters)."""
    return hashlib.sha256(public_key).digest()[:16].hex()


def fingerprint_b32(public_key: bytes) -> str:
    """First 26 characters of base32(sha256(raw key)), as in the registry's manifest."""
    return base32_nopad(hashlib.sha256(public_key).digest())[:26]


@lru_cache(maxsize=256)
def key_id(public_key: bytes) -> str:
    """The author key id: `ed25519:` + base32 fingerprint."""
    return KEY_ID_PREFIX + fingerprint_b32(public_key)


def signer_id(public_key: bytes, orcid: str | None) -> str:
    """`orcid:<iD>` when an ORCID iD is known, else the key id."""
    return f"orcid:{orcid}" if orcid else key_id(public_key)


def parse_key_id(text: str) -> str:
    """A key id the user typed (`--signer`), upper-cased base32; InputError when malformed."""
    prefix, _, body = text.strip().partition(":")
    candidate = f"{prefix.lower()}:{body.upper()}"
    # ASCII as written: upper() would fold lookalikes (the long s to S) into a real key id
    if not text.isascii() or not KEY_ID_RE.fullmatch(candidate):
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise InputError(f"{shown!r} is not a key id ({KEY_ID_PREFIX} + 26 base32 characters)")
    return candidate


# ORCID iDs: format and the ISO 7064 MOD 11-2 check digit (pure, no I/O).
#
# The one home of the ORCID rule: what users type is read by `normalize_orcid` (bare iD or an
# orcid.org URL), what signed documents carry is checked by `is_orcid` (bare iD only).

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


# Identity proofs for author keys (DESIGN): what each proof names, and how it is matched.
#
# Three proofs bind a key id (`ed25519:` + 26 base32 characters) to a person, each naming the key
# id so that it cannot be reused for another key:
#
# - `orcid`: a researcher URL on the public ORCID record whose address ends in `/key/<key id>`
#   (`https://pith.science/key/ed25519:...`); its name says whether the key is retired;
# - `web`: `<origin>/.well-known/pith-keys.json` lists the key id (and the author's ORCID iD);
# - `paper`: the PDF's Info dictionary holds `/PithAuthorKeys` with the key id (`\pithauthorkey`).
#
# This module is pure: it builds what an author publishes and reads what was fetched. Fetching
# lives in `pithauthor.identity`. The kinds and how many a claim may name (8) are the rules of
# pithauthor/schemas/author_attestation.schema.json.


ORCID_URL_NAME = "Pith author key"


ORCID_RETIRED_MARK = "retired"


KEY_URL_BASE = "https://pith.science/key/"


WELL_KNOWN_PATH = "/.well-known/pith-keys.json"


WEB_DOCUMENT_VERSION = "pith-keys.v1"


PDF_INFO_KEY = "/PithAuthorKeys"


# "named": a file names the key, but nothing shows an author put it there (not the arXiv PDF
# of the claimed version): reported, never passed.
Standing = Literal["current", "retired", "absent", "named"]


# ASCII digits only ([0-9], not \d, which takes any script's digits): dates are compared as
# text, and a day spelt in other digits sorts after every ASCII one, so it would pass for "later"
_RETIRED_DAY_RE = re.compile(r"\(\s*retired\s+([0-9]{4}-[0-9]{2}-[0-9]{2})\s*\)", re.IGNORECASE)


_STAMP_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


_DAY_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class IdentityProof(TypedDict):
    """One entry of an attestation's `identity_proofs`: which proof, and where it is."""

    kind: str
    locator: str


class WebKey(TypedDict, total=False):
    """One key in a `pith-keys.json` document."""

    key_id: str
    status: str
    created_at: str
    retired_at: str


class WebDocument(TypedDict, total=False):
    """`/.well-known/pith-keys.json`: the keys a site vouches for, and whose they are."""

    version: str
    orcid: str
    keys: list[WebKey]


class Finding(NamedTuple):
    """What a fetched proof says of one key: listed as current or retired, or not at all."""

    standing: Standing
    detail: str
    retired_at: str | None = None  # when the source says the key was retired (day or stamp)


# --- what an author publishes ------------------------------------------------------------------


def key_url(key_id: str) -> str:
    """The researcher URL that names `key_id` on an ORCID record."""
    return KEY_URL_BASE + key_id


def orcid_url_name(retired_at: str | None = None) -> str:
    """The researcher URL's name: `Pith author key`, or `... (retired YYYY-MM-DD)`."""
    if retired_at is None:
        return ORCID_URL_NAME
    return f"{ORCID_URL_NAME} ({ORCID_RETIRED_MARK} {retired_at[:10]})"


def web_document(keys: Sequence[WebKey], orcid: str | None) -> WebDocument:
    """The `pith-keys.json` a site publishes for these keys."""
    doc: WebDocument = {"version": WEB_DOCUMENT_VERSION}
    if orcid is not None:
        doc["orcid"] = orcid
    doc["keys"] = [k.copy() for k in keys]
    return doc


def web_origin(url: str) -> str:
    """`https://host[:port]` of a site URL; InputError unless `checked_url` allows it."""
    checked_url(url, "the site")
    # one spelling per origin (`urls.origin`: no default port, no root dot), so a proof signed
    # for `https://example.org:443/` is the same public statement as one for `https://example.org`
    return origin(url.strip())


def well_known_url(origin: str) -> str:
    """Where a site's `pith-keys.json` lives."""
    return web_origin(origin) + WELL_KNOWN_PATH


def arxiv_pdf_url(source_id: str, version: int | None) -> str:
    """The PDF arXiv serves for a paper version (the latest when the version is unknown)."""
    return f"https://arxiv.org/pdf/{source_id}" + (f"v{version}" if version else "")


def locator_problem(proof: Mapping[str, Any]) -> str | None:
    """None when the locator suits its kind; else why not (the schema checks the form)."""
    kind, locator = proof.get("kind"), proof.get("locator")
    if not isinstance(locator, str):
        return "locator is not text"
    if kind == "orcid":
        try:
            if normalize_orcid(locator) != locator:
                return f"{locator!r} is not a bare ORCID iD"
        except OrcidError as exc:
            return str(exc)
        return None
    if kind in ("web", "paper"):
        try:
            web_origin(locator)
        except InputError as exc:
            return str(exc)
        return None
    return f"unknown proof kind {kind!r}"


# --- reading what was fetched ------------------------------------------------------------------


def _names_key(url: str, key_id: str) -> bool:
    """True when `url` is an http(s) address whose last path segment is `key_id`."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("https", "http"):
        return False
    return unquote(parts.path).rstrip("/").rsplit("/", 1)[-1] == key_id


def _orcid_path_problem(doc: Mapping[str, Any], orcid: str) -> str | None:
    """None when the answer is the record of `orcid`: its `path` and every entry's `path` are
    under `/{orcid}/researcher-urls`, and a link's own `source-orcid` (who added it), when
    given, is `orcid`. Else what the answer is the record of instead.

    A mirror, a proxy or a same-origin redirect could hand over another iD's record; ORCID
    itself always writes these paths, so a missing one is not the record asked for either."""
    base = f"/{orcid}/researcher-urls"
    paths: list[Any] = [doc.get("path")]
    sources: list[Any] = []
    for entry in doc.get("researcher-url", []):
        if isinstance(entry, Mapping):
            paths.append(entry.get("path"))
            source = entry.get("source")
            who = source.get("source-orcid") if isinstance(source, Mapping) else None
            if isinstance(who, Mapping):
                sources.append(who.get("path"))
    for path in paths:
        if not isinstance(path, str) or not (path == base or path.startswith(base + "/")):
            return f"the answer is not the record of {orcid}: it has path {path!r}"
    for who in sources:
        if who != orcid:
            return f"a researcher URL of the answer was added by {who!r}, not {orcid}"
    return None


def match_orcid_record(doc: Any, key_id: str, orcid: str) -> Finding:
    """Read ORCID's v3.0 `/researcher-urls` answer for `orcid`: is `key_id` named by a
    researcher URL of that record?

    The answer has `researcher-url`: a list of objects with `url-name` and `url.value`, and
    `path`s that name the record's iD (`_orcid_path_problem`)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("researcher-url", []), list):
        return Finding("absent", "the answer is not an ORCID researcher-urls document")
    wrong = _orcid_path_problem(doc, orcid)
    if wrong is not None:
        return Finding("absent", wrong)
    entries = [e for e in doc.get("researcher-url", []) if isinstance(e, Mapping)]
    # every link naming the key is read, not the first: a record that names the key twice,
    # as current and as retired (the rotation renames the old link), says it was retired,
    # whichever link comes first
    current: Finding | None = None
    retired: list[Finding] = []
    for entry in entries:
        url = entry.get("url")
        value = url.get("value") if isinstance(url, Mapping) else None
        if isinstance(value, str) and _names_key(value, key_id):
            name = entry.get("url-name")
            name = name if isinstance(name, str) else ""
            if ORCID_RETIRED_MARK in name.lower():
                day = _RETIRED_DAY_RE.search(name)
                retired.append(
                    Finding(
                        "retired",
                        f"researcher URL {name!r} {value} marks the key retired",
                        day.group(1) if day else None,
                    )
                )
            elif current is None:
                current = Finding("current", f"researcher URL {name!r} {value}")
    if retired:
        return earliest_retirement(retired)
    if current is not None:
        return current
    return Finding("absent", f"none of its {len(entries)} researcher URL(s) names {key_id}")


def earliest_retirement(found: Sequence[Finding]) -> Finding:
    """Of several findings that a source marks the key retired, the one that unbinds the most:
    one that does not say when (or says it in no date form) counts against every event, else
    the earliest date. A day (an ORCID link's) ends at 23:59:59 of that day, the last moment
    `after_retirement` counts as before it."""

    def moment(f: Finding) -> str:
        when = f.retired_at
        if when is not None and _STAMP_RE.fullmatch(when):
            return when
        if when is not None and _DAY_RE.fullmatch(when):
            return when + "T23:59:59Z"
        return ""  # sorts first: no date is the earliest retirement there is

    return min(found, key=moment)


def match_web_document(doc: Any, key_id: str, orcid: str | None) -> Finding:
    """Read a `pith-keys.json`: is `key_id` listed, and is the site's ORCID iD the author's?"""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("keys"), list):
        return Finding("absent", "not a pith-keys.json document (no `keys` list)")
    site_orcid = doc.get("orcid")
    if orcid is not None and site_orcid is not None and site_orcid != orcid:
        return Finding("absent", f"the site names ORCID iD {site_orcid}, not {orcid}")
    # every entry for the key is read, not the first: a document listing it as active and
    # then as retired says it was retired, in either order; a `retired_at` on an
    # entry says so whatever its `status`
    current: Finding | None = None
    retired: list[Finding] = []
    for entry in doc["keys"]:
        if isinstance(entry, Mapping) and entry.get("key_id") == key_id:
            if entry.get("status") == "retired" or "retired_at" in entry:
                since = entry.get("retired_at")
                since = since if isinstance(since, str) else None
                retired.append(
                    Finding(
                        "retired",
                        f"lists {key_id} as retired" + (f" ({since})" if since else ""),
                        since,
                    )
                )
            elif current is None:
                current = Finding(
                    "current", f"lists {key_id}" + (f" for {site_orcid}" if site_orcid else "")
                )
    if retired:
        return earliest_retirement(retired)
    if current is not None:
        return current
    return Finding("absent", f"{len(doc['keys'])} key(s) listed, not {key_id}")


def pdf_key_ids(value: str) -> list[str]:
    """The key ids in a `/PithAuthorKeys` value: whole tokens (separated by spaces or
    commas) that are each exactly a key id. `xed25519:<M>Q` or two ids glued together name
    no key: a substring match would let a PDF name M without holding it."""
    return [t for t in re.split(r"[\s,]+", value) if KEY_ID_RE.fullmatch(t)]


def match_pdf_keys(value: str | None, key_id: str) -> Finding:
    """Does the PDF's `/PithAuthorKeys` name `key_id`?"""
    if value is None:
        return Finding("absent", f"the PDF has no {PDF_INFO_KEY} (no \\pithauthorkey)")
    keys = pdf_key_ids(value)
    if key_id in keys:
        return Finding("current", f"{PDF_INFO_KEY} names {key_id}")
    return Finding("absent", f"{PDF_INFO_KEY} names {', '.join(keys) or 'no key'}, not {key_id}")


def proofs_problem(proofs: Sequence[Mapping[str, Any]], orcid: str | None) -> str | None:
    """None when every proof's locator suits its kind and an ORCID proof names the author's
    own iD (`orcid`); else the first problem. A rule the JSON Schema cannot state."""
    for index, proof in enumerate(proofs):
        problem = locator_problem(proof)
        if problem is not None:
            return f"[{index}] {problem}"
        if proof.get("kind") == "orcid" and proof.get("locator") != orcid:
            return f"[{index}] the ORCID proof names {proof.get('locator')}, not the author's iD"
    return None


def event_proofs(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The `identity_proofs` an attestation carries (empty for other events)."""
    payload = event.get("payload")
    proofs = payload.get("identity_proofs") if isinstance(payload, Mapping) else None
    return [p for p in proofs if isinstance(p, Mapping)] if isinstance(proofs, list) else []


def event_orcid(event: Mapping[str, Any]) -> str | None:
    """The ORCID iD the event names: its signer_id's, else the attestation payload's."""
    signer = event.get("signer")
    sid = signer.get("signer_id") if isinstance(signer, Mapping) else None
    if isinstance(sid, str) and sid.startswith("orcid:"):
        return sid[len("orcid:") :]
    payload = event.get("payload")
    return payload_orcid(payload) if isinstance(payload, Mapping) else None


def event_key_id(event: Mapping[str, Any]) -> str | None:
    signer = event.get("signer")
    kid = signer.get("key_id") if isinstance(signer, Mapping) else None
    return kid if isinstance(kid, str) else None


def after_retirement(created_at: Any, retired_at: str | None) -> bool:
    """True when an event dated `created_at` is later than the key's retirement, or when that
    cannot be told (no date, or one that is not a date): a retired key's claims are bound
    only when they are known to predate it.

    `retired_at` is a stamp (`YYYY-MM-DDTHH:MM:SSZ`, the key store and `pith-keys.json`) or a
    day (`YYYY-MM-DD`, an ORCID link's name): with a day, a claim made that same day is
    before it (the link cannot say the hour). Both are UTC, so text order is time order."""
    if not isinstance(created_at, str) or not _STAMP_RE.fullmatch(created_at):
        return True
    if retired_at is None:
        return True
    if _STAMP_RE.fullmatch(retired_at):
        return created_at > retired_at
    if _DAY_RE.fullmatch(retired_at):
        return created_at[:10] > retired_at
    return True


def paper_finding(found: Finding, where: str, claimed: str | None) -> Finding:
    """What a PDF naming the key shows. Only the arXiv PDF of the claimed version (`claimed`:
    its address, from the paper's record), fetched from there, shows that an author put the
    key in the paper: only the paper's authors can put a PDF on arXiv under its id. Any other
    file (a local copy, another host, another version or paper) only names the key."""
    if found.standing != "current":
        return found
    if claimed is not None and where == claimed:
        return Finding("current", f"{found.detail}: an author of the claimed version put it there")
    if "://" not in where:
        why = "it is a file on this machine, not the PDF arXiv serves"
    elif claimed is None:
        why = "which arXiv version is claimed is not known (give the paper's record: --record)"
    else:
        why = f"it is not the arXiv PDF of the claimed version, {claimed}"
    return Finding("named", f"this file names the key; {why}: {found.detail}")
