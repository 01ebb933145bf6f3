"""Build and sign author events: claims of authorship, citation signatures, replication records,
timestamp anchors and storage attestations.

Each function takes a `signer` (anything meeting `pithauthor.protocol.events.Signer`, such as the
key `pithauthor.keys.author.load_signing_key` returns), the subject paper as a `Subject` (number
bound to its record's canonical_sha256), and the payload fields; it validates the payload
against its JSON Schema and returns the signed event, an `AuthorEvent` (a dict), in protocol
form (section 5 of the protocol, `docs/protocol.md`). A retired key is refused with
`KeyRetired`.

Corrections (DESIGN, docs/protocol.md "Corrections"): `replaces=EVENT_ID` signs the statement as
the correction of an earlier event of the same key, type and subject; `withdraw` takes one
back. `settle=` lets the caller look at the statement before it is signed: to reuse an event
that already says the same (nothing is signed), to name the event it corrects, or to refuse
(`pithauthor.registry.statements.Statements.settle` does this against the outbox).

    >>> event = sign_citation(key, cited, PithNumber.parse("pith:2023:..."), "extends")
"""

from __future__ import annotations

import hashlib
import sys
from binascii import b2a_base64
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from pithauthor.errors import EventError, InputError, KeyRetired, OrcidError
from pithauthor.protocol.canonical_json import json_string
from pithauthor.protocol.checks.event import vouch
from pithauthor.protocol.documents import (
    AuthorEvent,
    AuthorPayload,
    CitationPayload,
    EventType,
    UnsignedEvent,
)
from pithauthor.protocol.events import (
    EVENT_TARGETS,
    SIGNED_MESSAGE,
    Signer,
    created_at_ok,
    seal,
    signature_block,
    signer_block,
    signer_parts,
    unsigned_event,
)
from pithauthor.protocol.identity import fingerprint_hex, normalize_orcid, proofs_problem
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import (
    ANCHOR,
    ATTESTATION,
    CITATION,
    PAYLOAD_SCHEMAS,
    REPLICATION,
    STORAGE,
    Artifact,
    FieldRule,
    anchor_payload,
    attestation_payload,
    built_payload_violation,
    citation_payload,
    citation_rules,
    plain_field,
    replication_payload,
    rules_problem,
    self_citation_problem,
    storage_payload,
)
from pithauthor.protocol.subject import Subject, replacing, withdrawing
from pithauthor.protocol.text import payload_text_problem
from pithauthor.protocol.utc import utc_now, utc_stamp

__all__ = [
    "CitationSigner",
    "Settle",
    "anchor_record",
    "artifact_sha256",
    "attest_authorship",
    "attest_storage",
    "citation_signer",
    "record_replication",
    "sign_citation",
    "withdraw",
]

CreatedAt = str | datetime | None


def artifact_sha256(path: Path | str) -> str:
    """The SHA-256 (lowercase hex) of an artifact file, read in chunks: a replication's logs or
    data can be far larger than memory. InputError (exit 2) when it cannot be read."""
    try:
        with open(path, "rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the artifact file ({exc.strerror})") from None


#: Decides, before anything is signed, what becomes of a statement
# (`pithauthor.registry.statements`):
#: returns a signed event making the same statement (reused: nothing is signed), or the
#: unsigned event to sign (perhaps now naming the event it `replaces`); or raises to refuse.
Settle = Callable[[UnsignedEvent], UnsignedEvent | AuthorEvent]


def attest_authorship(
    signer: Signer,
    subject: Subject,
    *,
    name: str,
    orcid: str | None = None,
    position: int | None = None,
    statement: str | None = None,
    identity_proofs: Iterable[Mapping[str, Any]] = (),
    created_at: CreatedAt = None,
    replaces: str | None = None,
    settle: Settle | None = None,
) -> AuthorEvent:
    """A signed `author_attestation`: the signer is author `name` (at `position`, 1-based).

    `identity_proofs` ({kind, locator}: orcid, web, paper; docs/identity.md) are signed with
    the rest; an `orcid` proof must name the author's own iD. `replaces` and `settle`: see
    the module docstring."""
    if orcid is not None:
        try:  # an orcid.org URL is accepted, as `keys generate` accepts it
            orcid = normalize_orcid(orcid)
        except OrcidError as exc:
            raise EventError(str(exc)) from None
    proofs = list(identity_proofs)
    problem = proofs_problem(proofs, orcid)
    if problem is not None:
        raise EventError(f"identity_proofs: {problem}")
    payload = attestation_payload(
        subject.canonical_sha256,
        name=name,
        orcid=orcid,
        position=position,
        statement=statement,
        identity_proofs=proofs,
    )
    return _sign(signer, ATTESTATION, subject.pith_number, payload, created_at, replaces, settle)


def sign_citation(
    signer: Signer,
    cited: Subject,
    citing: PithNumber,
    relationship: str,
    *,
    citation_key: str | None = None,
    context: str | None = None,
    created_at: CreatedAt = None,
    replaces: str | None = None,
    settle: Settle | None = None,
    citing_arxiv: str | None = None,
) -> AuthorEvent:
    """A signed `citation_signature`: paper `citing` cites `cited` (the subject) as
    `relationship`, one of RELATIONSHIPS. `citing_arxiv` is the citing paper's arXiv id when
    its record is at hand: a citation of another version of it is refused too."""
    if citing.year is None:
        raise EventError(f"the citing paper's number needs its year: pith:YYYY:{citing.body}")
    citing_full, subject = citing.full, cited.pith_number.full
    if citing_full == subject or citing_arxiv is not None:  # (else it cannot find a problem)
        problem = self_citation_problem(citing_full, subject, citing_arxiv, cited.source_id)
        if problem is not None:
            raise EventError(problem)
    # a Subject's digest was checked when it was made (a subclass could skip that); `settle`
    # and `replaces` change the payload after it is built, so those take the full checks
    if type(cited) is Subject and replaces is None and settle is None:
        event = _template_citation(
            signer, cited, citing_full, subject, relationship, citation_key, context, created_at
        )
        if event is not None:
            return event
    payload = citation_payload(
        cited.canonical_sha256,
        citing=citing_full,
        relationship=relationship,
        citation_key=citation_key,
        context=context,
    )
    return _sign(signer, CITATION, cited.pith_number, payload, created_at, replaces, settle)


def _template_citation(
    signer: Signer,
    cited: Subject,
    citing: str,
    subject: str,
    relationship: str,
    key: str | None,
    note: str | None,
    created_at: CreatedAt,
) -> AuthorEvent | None:
    """`_sign(signer, CITATION, ...)` of the payload `citation_payload` builds, in one frame,
    when each field from outside passes its schema rule; None when one is doubtful (the full
    checks then have the last word, and the message). The cited digest (a Subject's) and
    payload_schema (a constant) are proven by construction; the citing number and the
    relationship pass their rules once per pair (`_citation_head`), the citation key and the
    context theirs and `isprintable` on every call; the payload's text is written in one
    template instead of the sorting encoder, the envelope's in another. The same refusals, in
    the same order, as the full path: a retired key, then a `created_at` that is not UTC to
    the second. tests/unit/sign/test_sign.py signs hostile-but-accepted fields both ways and
    runs the strict checker on every event. (Checking and serialising were half of signing a
    citation; the template's five frames, a tenth of what was left beyond the signature.)"""
    if type(relationship) is not str:  # (the cache needs a hash)
        return None
    head = _citation_head(citing, relationship)
    if (
        head is None
        or not (key is None or plain_field(key, head[2]))
        or not (note is None or plain_field(note, head[3]))
    ):
        return None
    if getattr(signer, "status", None) == "retired":
        _refuse_retired(signer)
    when = utc_now() if created_at is None else _created_at(created_at)
    digest_hex = cited.canonical_sha256
    payload: CitationPayload = {  # `citation_payload`'s dict, in its order
        "payload_schema": PAYLOAD_SCHEMAS[CITATION],
        "canonical_sha256": digest_hex,
        "citing_pith_number": citing,
        "relationship": relationship,
    }
    if key is not None:
        payload["citation_key"] = key
    if note is not None:
        payload["context"] = note
    block, block_text = signer_parts(signer.public_key, signer.signer_id)
    # `envelope_bytes` of `_citation_template`'s text, both written in one step: the
    # envelope's text around the payload and the subject kept per stamp and key
    before, between, after = _citation_frame(when, block_text)
    key_text = "" if key is None else f',"citation_key":{json_string(key)}'
    note_text = "" if note is None else f',"context":{json_string(note)}'
    signed = (
        f'{before}{{"canonical_sha256":"{digest_hex}"{key_text},"citing_pith_number":{head[0]}'
        f"{note_text},{head[1]}}}{between}{json_string(subject)}{after}"
    ).encode()
    digest = sha256(signed).digest()  # signed as bytes, named in hex
    event: AuthorEvent = {  # the fields in the order `seal` gives them
        "event_type": CITATION,
        "target": _CITATION_TARGET,
        "subject_pith_number": subject,
        "created_at": when,
        "signer": block.copy(),  # (kept per key: each event has its own)
        "payload": payload,
        "event_id": "sha256:" + digest.hex(),
        "signature": {  # `signature_block`'s
            "algorithm": "ed25519",
            "signed_message": SIGNED_MESSAGE,
            "signature_b64": b2a_base64(signer.sign_digest(digest), newline=False).decode(),
        },
    }
    return _made(signer, event)


_CITATION_TARGET = EVENT_TARGETS[CITATION]
sha256 = hashlib.sha256


@lru_cache(maxsize=64)
def _citation_frame(created_at: str, signer: str) -> tuple[str, str, str]:
    """`_envelope_frame` of a citation at `created_at` by the signer block whose canonical
    text is `signer`: the events of one run share both."""
    return _envelope_frame(created_at, CITATION, signer, _CITATION_TARGET)


def _citation_template(head: _Head, digest: str, key: str | None, note: str | None) -> str:
    """The canonical text of a citation payload whose fields were checked
    (`_template_citation`)."""
    # the keys in sorted order, as the canonical encoder writes them; optional ones left out
    key_text = "" if key is None else f',"citation_key":{json_string(key)}'
    note_text = "" if note is None else f',"context":{json_string(note)}'
    return (
        f'{{"canonical_sha256":"{digest}"{key_text},'
        f'"citing_pith_number":{head[0]}{note_text},{head[1]}}}'
    )


# A bibliography's citations share the citing paper and a few relationships: those two fields
# are checked, and written, once per pair.
_Head = tuple[str, str, FieldRule, FieldRule]


@lru_cache(maxsize=64)
def _citation_head(citing: str, relationship: str) -> _Head | None:
    """(the citing number as JSON, the payload_schema and relationship fields as JSON, the rules
    of citation_key and context) when both pass their schema rules; None when either does not."""
    rules = citation_rules()
    if (
        rules is None
        or not plain_field(citing, rules["citing_pith_number"])
        or not plain_field(relationship, rules["relationship"])
    ):
        return None
    tail = f'"payload_schema":{json_string(PAYLOAD_SCHEMAS[CITATION])},"relationship":'
    return (
        json_string(citing),
        tail + json_string(relationship),
        rules["citation_key"],
        rules["context"],
    )


#: Signs one citation of a `citation_signer`'s citing paper: (cited, relationship, citation_key).
CitationSigner = Callable[[Subject, str, "str | None"], AuthorEvent]


def citation_signer(
    signer: Signer,
    citing: PithNumber,
    *,
    created_at: str,
    citing_arxiv: str | None = None,
    settle: Settle | None = None,
) -> CitationSigner:
    """`sign_citation(signer, cited, citing, relationship, citation_key=key, created_at=...,
    citing_arxiv=..., settle=...)` as a function of (cited, relationship, key): the same event,
    or the same refusal, for each of the many citations of one paper (`pith cite`).

    What every citation of the batch shares is checked and written once, not per citation:
    the citing number, the key (its retirement, its signer block), the signing
    time, and the envelope's text around the payload and the subject. Per citation, the fields
    from outside (relationship, key, the cited subject) pass the same rules as in
    `_template_citation`; anything doubtful, and every citation when `settle` is given, is signed by
    `sign_citation` itself, which then has the last word. tests/unit/sign/test_sign_batch.py
    compares both on hostile fields, the strict checker verifying every event."""

    def careful(cited: Subject, relationship: str, key: str | None) -> AuthorEvent:
        return sign_citation(
            signer,
            cited,
            citing,
            relationship,
            citation_key=key,
            created_at=created_at,
            settle=settle,
            citing_arxiv=citing_arxiv,
        )

    # a settle that can say "nothing is held for this paper" (`Statements.settle`) leaves each
    # citation it holds nothing for to the batch (`pith cite` always passes one)
    nothing_held: Callable[[str, str, str], bool] | None = getattr(settle, "nothing_held", None)
    if (
        (settle is not None and nothing_held is None)
        or citing.year is None
        or getattr(signer, "status", None) == "retired"
        or not created_at_ok(created_at)
    ):
        return careful  # each call refuses as sign_citation does, or takes its full checks
    citing_full = citing.full
    block, block_text = signer_parts(signer.public_key, signer.signer_id)
    fingerprint = block["public_key_fingerprint"]
    target = EVENT_TARGETS[CITATION]
    before, between, after = _envelope_frame(created_at, CITATION, block_text, target)
    schema = PAYLOAD_SCHEMAS[CITATION]
    sign_digest, sha256 = signer.sign_digest, hashlib.sha256
    heads: dict[str, _Head] = {}  # `_citation_head` of each relationship that passed it

    def sign(cited: Subject, relationship: str, key: str | None) -> AuthorEvent:
        # a Subject's digest and number were checked when it was made (a subclass could skip
        # that); relationship and key are the author's: the rules of `_template_citation`
        if type(cited) is not Subject or type(relationship) is not str:
            return careful(cited, relationship, key)
        head = heads.get(relationship) or _citation_head(citing_full, relationship)
        subject = cited.pith_number.full
        if (
            head is None
            or not (key is None or plain_field(key, head[2]))
            or self_citation_problem(citing_full, subject, citing_arxiv, cited.source_id)
            or (nothing_held is not None and not nothing_held(fingerprint, CITATION, subject))
        ):
            return careful(cited, relationship, key)
        payload: CitationPayload = {  # `citation_payload`'s dict, in its order
            "payload_schema": schema,
            "canonical_sha256": cited.canonical_sha256,
            "citing_pith_number": citing_full,
            "relationship": relationship,
        }
        if key is not None:
            payload["citation_key"] = key
        heads[relationship] = head
        text = _citation_template(head, cited.canonical_sha256, key, None)
        signed = f"{before}{text}{between}{json_string(subject)}{after}".encode()
        digest = sha256(signed).digest()  # signed as bytes, named in hex
        event: AuthorEvent = {  # `_template_citation`'s event
            "event_type": CITATION,
            "target": target,
            "subject_pith_number": subject,
            "created_at": created_at,
            "signer": block.copy(),  # each event has its own
            "payload": payload,
            "event_id": "sha256:" + digest.hex(),
            "signature": signature_block(sign_digest(digest)),
        }
        return _made(signer, event)

    return sign


def _envelope_frame(
    created_at: str, event_type: str, signer: str, target: str
) -> tuple[str, str, str]:
    """`envelope_bytes` cut around the payload and the subject: (before the payload's text,
    between it and the subject's JSON string, after that), for a batch that shares the rest."""
    return (
        f'{{"created_at":{json_string(created_at)},"event_type":{json_string(event_type)},'
        '"payload":',
        f',"signer":{signer},"subject_pith_number":',
        f',"target":{json_string(target)}}}',
    )


def record_replication(
    signer: Signer,
    subject: Subject,
    *,
    kind: str,
    outcome: str,
    summary: str,
    artifacts: Iterable[Artifact | tuple[str, str]] = (),
    proof_system: str | None = None,
    created_at: CreatedAt = None,
    replaces: str | None = None,
    settle: Settle | None = None,
) -> AuthorEvent:
    """A signed `replication_record` of `kind` (replication, falsification, formal_bridge) with
    an `outcome` from OUTCOMES[kind]; `proof_system` (PROOF_SYSTEMS) for a formal bridge only."""
    payload = replication_payload(
        subject.canonical_sha256,
        kind=kind,
        outcome=outcome,
        summary=summary,
        artifacts=[a if isinstance(a, Artifact) else Artifact(*a) for a in artifacts],
        proof_system=proof_system,
    )
    return _sign(signer, REPLICATION, subject.pith_number, payload, created_at, replaces, settle)


def anchor_record(
    signer: Signer,
    subject: Subject,
    *,
    proofs: Iterable[tuple[str, str]],
    headers: Iterable[tuple[int, str]],
    created_at: CreatedAt = None,
    settle: Settle | None = None,
) -> AuthorEvent:
    """A signed `timestamp_anchor` of the paper: `proofs` are (calendar URL, base64 complete
    OpenTimestamps proof of the 32 raw bytes of its canonical_sha256), `headers` (height, 160
    hex) the header of every block they name (DESIGN, docs/protocol.md "Anchors and archive
    copies"). Whether the proofs reach the hash is the caller's to check before: this builds
    and signs only."""
    payload = anchor_payload(subject.canonical_sha256, proofs=proofs, headers=headers)
    return _sign(signer, ANCHOR, subject.pith_number, payload, created_at, None, settle)


def attest_storage(
    signer: Signer,
    subject: Subject,
    *,
    captures: Iterable[Mapping[str, str]],
    code: Mapping[str, str] | None = None,
    created_at: CreatedAt = None,
    settle: Settle | None = None,
) -> AuthorEvent:
    """A signed `storage_attestation` of the paper: its Wayback `captures` (url, capture_url,
    timestamp, digest `sha1:<base32>`, mimetype, and sha256 for the PDF's), and `code`
    ({origin, swhid}) when its repository was saved. The caller compares the PDF capture's
    digest with the PDF it downloaded before it signs (DESIGN, docs/protocol.md "Anchors and
    archive copies"); an event whose payload breaks a rule is refused (`EventError`)."""
    payload = storage_payload(subject.canonical_sha256, captures=captures, code=code)
    return _sign(signer, STORAGE, subject.pith_number, payload, created_at, None, settle)


def withdraw(signer: Signer, event: AuthorEvent, *, created_at: CreatedAt = None) -> AuthorEvent:
    """The signed withdrawal of `event`, one of the signer's own: the same type and subject,
    its payload restated with `withdraws: <its event_id>`. Another key is refused
    (`EventError`): only the key that made a statement can take it back."""
    mine = fingerprint_hex(signer.public_key)
    theirs = event["signer"]["public_key_fingerprint"]
    if theirs != mine:
        raise EventError(
            f"{event['event_id']} was signed by another key (fingerprint {theirs}); "
            "only the key that signed an event can withdraw it"
        )
    return _sign(
        signer,
        event["event_type"],
        PithNumber.parse(event["subject_pith_number"]),
        withdrawing(event),
        created_at,
        None,
        None,
    )


def _sign(
    signer: Signer,
    event_type: EventType,
    subject: PithNumber,
    payload: AuthorPayload,
    created_at: CreatedAt,
    replaces: str | None,
    settle: Settle | None,
) -> AuthorEvent:
    """Sign `payload` by the full checks (a citation `_template_citation` vouches for is
    signed there)."""
    if getattr(signer, "status", None) == "retired":
        _refuse_retired(signer)
    if replaces is not None:
        payload = replacing(payload, replaces)
    # one rule for every signed text field, the verifier's check 15: an event that would not
    # verify is never made
    problem = payload_text_problem(payload)
    if problem is not None:
        raise EventError(f"{event_type}: {problem}; not signed (docs/events.md)")
    when = _created_at(created_at)
    unsigned = unsigned_event(event_type, subject, when, signer_block(signer), payload)
    if settle is not None:
        settled = settle(unsigned)
        if "signature" in settled:  # the same statement, already signed: nothing new is made
            return settled  # type: ignore[return-value]  # "signature": signed
        unsigned = settled
    # the payload was built here (or by `settle`, from one built here): the direct check of a
    # flat schema's rules, or the full schema (payload_schema.built_payload_violation)
    violation = built_payload_violation(event_type, unsigned["payload"])
    if violation is None:  # and the rules a schema cannot state (anchors, storage)
        violation = rules_problem(event_type, unsigned["payload"])
    if violation is not None:
        raise EventError(f"{event_type}: {violation}")
    return _made(signer, seal(unsigned, signer))


def _refuse_retired(signer: Signer) -> NoReturn:
    """KeyRetired: a retired key signs nothing."""
    label = getattr(signer, "name", None) or getattr(signer, "key_id", "this key")
    raise KeyRetired(f"the key {label} is retired; it can no longer sign")


def _made(signer: Signer, event: AuthorEvent) -> AuthorEvent:
    """`event`, vouched for (`pithauthor.protocol.checks.event.vouch`: the outbox stores it
    without checking it again) when `signer` is one of this process's own keys, an
    `AuthorKey`: it was tested to sign for its public key when loaded, and every event built
    here meets the rules as it is built; or a `DeferredKey`, whose events are vouched for when
    its opened key signs them. Any other signer's events are checked when stored."""
    # an AuthorKey exists only once its module is loaded: no import for other signers
    keys = sys.modules.get("pithauthor.keys.author")
    if keys is not None and isinstance(signer, keys.AuthorKey):
        vouch(event)
    elif keys is not None and isinstance(signer, keys.DeferredKey):
        signer.made_here(event)  # vouched for once its real signature is in
    return event


def _created_at(value: CreatedAt) -> str:
    if value is None:
        return utc_now()
    if isinstance(value, datetime):
        if value.tzinfo is None:  # a local time read as UTC would be hours off, and signed
            raise EventError("created_at must carry a time zone (it is stored in UTC)")
        return utc_stamp(value)
    if not created_at_ok(value):
        raise EventError(
            f"created_at {value!r} is not UTC at second precision (YYYY-MM-DDTHH:MM:SSZ)"
        )
    return value
