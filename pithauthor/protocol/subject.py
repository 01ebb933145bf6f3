"""What an event is about (pure): the paper (its Pith Number and the canonical_sha256 it was
cut from), and for a correction the earlier event it replaces or withdraws (DESIGN).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pithauthor.errors import DocumentError, PithError
from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.documents import AuthorEvent, AuthorPayload, UnsignedEvent
from pithauthor.protocol.events import SIGNED_FIELDS
from pithauthor.protocol.ids import FIRST_YEAR, PithNumber
from pithauthor.protocol.payloads import digest_matches_number
from pithauthor.protocol.record import record_year, split_authors, text_canon_sha256

__all__ = [
    "LINK_FAULTS",
    "LINK_FIELDS",
    "link_faults",
    "link_of",
    "link_verdict",
    "replacing",
    "statement_key",
    "unlinked",
    "withdrawing",
]


# The paper an event is about: its Pith Number and the canonical_sha256 it was cut from.


@dataclass(frozen=True, slots=True)
class Subject:
    """A paper, bound to its exact record: the number must be cut from the digest.

    `source_id` is the arXiv id of the record (without version) when known, and
    `source_version` its version number. `title` is the record's displayed title when its hash
    is the canonical record's `title_canon_sha256` (else None); `authors` the record's author
    list as displayed (no signature covers it: shown to the author, compared with a claim's
    name, never trusted further). Neither takes part in equality.
    """

    pith_number: PithNumber
    canonical_sha256: str
    source_id: str | None = None
    source_version: int | None = None
    title: str | None = field(default=None, compare=False)
    authors: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        year = self.pith_number.year
        if year is None:
            raise DocumentError(f"the subject {self.pith_number} needs its year: pith:YYYY:BODY")
        # a PithNumber made directly is not checked: the events signed about it must verify
        if not FIRST_YEAR <= year <= 9999:
            raise DocumentError(f"the subject's year {year} is not in {FIRST_YEAR}-9999")
        if not digest_matches_number(self.canonical_sha256, self.pith_number):
            raise DocumentError(
                f"canonical_sha256 {self.canonical_sha256[:16]}... does not give "
                f"{self.pith_number.full}"
            )

    @classmethod
    def from_document(cls, doc: Any) -> Subject:
        """From a registry record, `pith number from-arxiv --json` output, a bundle or a merged
        state. The canonical record is hashed again; it must give the stated hash and number."""
        if not isinstance(doc, Mapping):
            raise DocumentError("a record document is a JSON object")
        record, stated_hash = _canonical_of(doc)
        if not isinstance(record, Mapping):
            raise DocumentError("the document has no canonical_record")
        computed = canonical_sha256(record)
        if stated_hash is not None and stated_hash != computed:
            raise DocumentError(
                f"canonical_sha256 {stated_hash!r} is not the hash of its canonical_record "
                f"({computed})"
            )
        try:
            # from the hash just computed: the record is hashed once (a 300-entry `pith cite`
            # builds 300 subjects; `pith_number_of` would hash each again)
            number = PithNumber.from_digest(computed, record_year(record))
        except (PithError, KeyError, TypeError) as exc:
            raise DocumentError(f"cannot derive the Pith Number of the record: {exc}") from None
        stated = doc.get("pith_number")
        if stated is not None and stated != number.full:
            raise DocumentError(f"the document says {stated!r}; its record gives {number.full}")
        source = record.get("source")
        source_id = source.get("id") if isinstance(source, Mapping) else None
        version = source.get("version") if isinstance(source, Mapping) else None
        title, authors = _displayed_paper(doc, record)
        return cls(
            number,
            computed,
            source_id if isinstance(source_id, str) else None,
            version if isinstance(version, int) and not isinstance(version, bool) else None,
            title,
            authors,
        )


def _displayed_paper(
    doc: Mapping[str, Any], record: Mapping[str, Any]
) -> tuple[str | None, tuple[str, ...]]:
    """(title, authors) of a record document's `paper`: the title only when the canonical
    record's hash vouches for it."""
    paper = doc.get("paper")
    if not isinstance(paper, Mapping):
        return None, ()
    title = paper.get("title")
    metadata = record.get("metadata")
    stated = metadata.get("title_canon_sha256") if isinstance(metadata, Mapping) else None
    if not isinstance(title, str) or text_canon_sha256(title) != stated:
        title = None
    authors = paper.get("authors_text")
    return title, split_authors(authors) if isinstance(authors, str) else ()


def _canonical_of(doc: Mapping[str, Any]) -> tuple[Any, Any]:
    """(canonical_record, stated canonical_sha256) of any known document kind."""
    if "canonical_record" in doc:
        return doc["canonical_record"], doc.get("canonical_sha256")
    current = doc.get("current")
    if isinstance(current, Mapping):
        created = current.get("record_created")
        payload = created.get("payload") if isinstance(created, Mapping) else None
        stated = payload.get("canonical_sha256") if isinstance(payload, Mapping) else None
        return current.get("canonical_record"), stated
    return None, None


# Correcting an author event (DESIGN): a replacement names the event it corrects, a withdrawal
# the event it takes back. Both are ordinary signed events of the same type; the link is one
# optional payload field, so it is signed with the rest and no one else can add or move it.
#
#     replaces   "sha256:<hex>" of the event this one corrects: the merge shows this one instead
#     withdraws  "sha256:<hex>" of the event this one takes back: the merge shows neither; the
#                rest of the payload restates the withdrawn event's (its own link left out), so
#                nobody can read a withdrawal as a new statement
#
# A link holds (`link_faults` is empty) when the event it names
#
#     replaces_unknown     is at hand (in the same merged state, file or outbox) and valid
#     replaces_signer      was signed by the same key (`signer.public_key_fingerprint`)
#     replaces_type        is of the same event type
#     replaces_subject     is about the same subject (`subject_pith_number`)
#     replaces_order       was not created after the event naming it
#     replaces_withdrawal  is not itself a withdrawal (a withdrawal is final: sign anew instead)
#     withdraws_payload    (a withdrawal) has the same payload, links left out
#
# A cycle cannot be built: `event_id` is the hash of the payload that holds the link, so an event
# can only name one that existed before it. Only the key that signed an event can correct it: a
# link signed by another key is `replaces_signer`, and the event carrying it is invalid.
#
# The merge (`pithauthor.protocol.checks.merge`) applies these rules; `pith verify` reports them;
# the CLI uses `statement_key` and `unlinked` to find a statement the outbox already holds.

LinkKind = Literal["replaces", "withdraws"]

LINK_FIELDS: Final[tuple[LinkKind, ...]] = ("replaces", "withdraws")

LINK_FAULTS: Final = (
    "replaces_unknown",
    "replaces_signer",
    "replaces_type",
    "replaces_subject",
    "replaces_order",
    "replaces_withdrawal",
    "withdraws_payload",
)


def link_of(event: Mapping[str, Any]) -> tuple[LinkKind, str] | None:
    """(`replaces` or `withdraws`, the event id it names), or None for a plain statement."""
    payload = event.get("payload")
    # a dict first: the ABC's isinstance is slower than the rest, and a merge asks this of
    # every event several times
    if type(payload) is dict:
        if payload.keys().isdisjoint(LINK_FIELDS):  # a plain statement, told in C
            return None
    elif not isinstance(payload, Mapping):
        return None
    for kind in LINK_FIELDS:
        target = payload.get(kind)
        if isinstance(target, str):
            return kind, target
    return None


def unlinked(payload: AuthorPayload) -> AuthorPayload:
    """The payload without its link: what the statement says, whatever it corrects."""
    copied = payload.copy()
    copied.pop("replaces", None)
    copied.pop("withdraws", None)
    return copied


def statement_key(event: UnsignedEvent) -> str:
    """What makes two events the same statement: sha256 of the signed fields but `created_at`,
    the payload's link left out (signing the same thing again, at another time, is no new
    statement, and a correction that says what the event it corrects said is none either)."""
    fields: dict[str, object] = {k: v for k, v in event.items() if k in SIGNED_FIELDS}
    del fields["created_at"]
    fields["payload"] = unlinked(event["payload"])
    return canonical_sha256(fields)


def replacing(payload: AuthorPayload, event_id: str) -> AuthorPayload:
    """`payload` as the correction of `event_id`."""
    linked = unlinked(payload)
    linked["replaces"] = event_id
    return linked


def withdrawing(withdrawn: AuthorEvent) -> AuthorPayload:
    """The payload of the withdrawal of event `withdrawn`: its own, restated, naming it."""
    linked = unlinked(withdrawn["payload"])
    linked["withdraws"] = withdrawn["event_id"]
    return linked


def link_faults(event: Mapping[str, Any], target: Mapping[str, Any] | None) -> list[str]:
    """The link rules (module docstring) that `event`'s link to `target` breaks; `target` is
    the event its link names, or None when that event is not at hand. Empty without a link."""
    link = link_of(event)
    if link is None:
        return []
    if target is None:
        return ["replaces_unknown"]
    faults = []
    # the same key, not the same signer_id: anyone can write an ORCID iD into signer_id, only
    # the key's holder can sign with it
    if _fingerprint(event) != _fingerprint(target):
        faults.append("replaces_signer")
    if event.get("event_type") != target.get("event_type"):
        faults.append("replaces_type")
    if event.get("subject_pith_number") != target.get("subject_pith_number"):
        faults.append("replaces_subject")
    # as text: the envelope admits only fixed-width UTC stamps, whose text order is time order;
    # the same second is allowed (a correction made at once)
    if str(event.get("created_at", "")) < str(target.get("created_at", "")):
        faults.append("replaces_order")
    named = link_of(target)
    if named is not None and named[0] == "withdraws":
        faults.append("replaces_withdrawal")
    if link[0] == "withdraws":
        mine, theirs = event.get("payload"), target.get("payload")
        if not (
            isinstance(mine, Mapping)
            and isinstance(theirs, Mapping)
            and _without_links(mine) == _without_links(theirs)
        ):
            faults.append("withdraws_payload")
    return faults


def link_verdict(
    event: Mapping[str, Any], known: Mapping[str, Mapping[str, Any]]
) -> tuple[bool | None, str] | None:
    """How `event`'s link fares against the events at hand (`known`, by event_id): None
    without a link; (True, detail) when it holds, (False, the broken rules) when it breaks,
    (None, detail) when the event it names is not at hand (so it cannot be checked here)."""
    link = link_of(event)
    if link is None:
        return None
    how, target_id = link
    named = f"{how} {target_id[:19]}…"
    target = known.get(target_id)
    if target is None:
        return None, f"{named}, which is not at hand here: compare with the registry's state"
    faults = link_faults(event, target)
    if faults:
        return False, f"{named}: {', '.join(faults)}"
    return True, f"{named}: at hand, same key, type and subject, not newer"


def _without_links(payload: Mapping[str, object]) -> dict[str, object]:
    return {k: v for k, v in payload.items() if k not in LINK_FIELDS}


def _fingerprint(event: Mapping[str, Any]) -> object:
    signer = event.get("signer")
    return signer.get("public_key_fingerprint") if isinstance(signer, Mapping) else None
