"""`sign.citation_signer`: the many citations of one paper, signed with what they share checked
and written once. Each must be exactly `sign_citation`'s event, or its refusal."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.paths import load_fixture
from support.signer import FixedSigner

from pithauthor.errors import EventError, KeyRetired
from pithauthor.protocol.canonical_json import canonical, json_string
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.events import SIGNED_FIELDS, envelope_bytes
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import RELATIONSHIPS
from pithauthor.protocol.subject import Subject
from pithauthor.sign import _envelope_frame, citation_signer, sign_citation

STAMP = "2026-12-01T10:00:00Z"


class _Subclass(Subject):
    """A Subject subclass: it could skip the checks a Subject makes, so it takes the full path."""


def _dear() -> Subject:
    return Subject.from_document(load_fixture("record-2302.12445v2.json"))


def _pipeline() -> Subject:
    return Subject.from_document(load_fixture("state-2204.10562v1.json"))


def _identity(unsigned: Any) -> Any:
    return unsigned


def _outcome(fn: Any) -> Any:
    """The event, or (the refusal's class, its text)."""
    try:
        return fn()
    except (EventError, KeyRetired) as exc:
        return (type(exc).__name__, str(exc))


# any text, weighted to what the template must escape or the rules refuse near their limits
_FIELD = st.text(
    st.characters() | st.sampled_from('"\\\n\t é\u00a0\u202e\u2028\ud800'),
    max_size=24,
) | st.sampled_from(["a" * 200, "a" * 201, "", " ", "k", 7, ["k"], b"k"])


@settings(max_examples=examples(400), deadline=None)
@given(
    key=st.none() | _FIELD,
    relationship=st.sampled_from([*RELATIONSHIPS, "Extends", "cites ", "", 3, ["cites"]]),
    cited=st.sampled_from(["other", "itself", "other version", "subclass"]),
    citing_year=st.booleans(),
    created_at=st.sampled_from([STAMP, STAMP, "2026-02-30T10:00:00Z", "2026-12-01 10:00:00"]),
    status=st.sampled_from(["active", "active", "retired"]),
)
def test_the_batch_makes_sign_citations_event_or_its_refusal(
    key: Any, relationship: Any, cited: str, citing_year: bool, created_at: str, status: str
) -> None:
    dear, pipeline = _dear(), _pipeline()
    citing = dear.pith_number if citing_year else PithNumber(dear.pith_number.body)
    citing_arxiv = None
    if cited == "itself":
        subject = dear
    elif cited == "other version":  # the records at hand say: two versions of one paper
        subject, citing_arxiv = pipeline, pipeline.source_id
    elif cited == "subclass":
        subject = _Subclass(pipeline.pith_number, pipeline.canonical_sha256, pipeline.source_id)
    else:
        subject = pipeline
    signer = FixedSigner(status=status)
    batch = _outcome(
        lambda: citation_signer(signer, citing, created_at=created_at, citing_arxiv=citing_arxiv)(
            subject, relationship, key
        )
    )
    # the full path: an identity `settle` takes every check (test_sign.py shows it does)
    full = _outcome(
        lambda: sign_citation(
            signer,
            subject,
            citing,
            relationship,
            citation_key=key,
            created_at=created_at,
            citing_arxiv=citing_arxiv,
            settle=_identity,
        )
    )
    assert batch == full
    if isinstance(batch, dict):  # the same dicts in the same order, and every strict check
        assert list(batch) == list(full) and list(batch["payload"]) == list(full["payload"])
        assert [c.name for c in check_author_event(batch).failed] == []
        signed = {k: batch[k] for k in SIGNED_FIELDS}
        assert batch["event_id"] == "sha256:" + hashlib.sha256(canonical(signed)).hexdigest()


def test_a_plain_citation_takes_the_batch_path_and_a_doubtful_one_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without this, the agreement above could hold because the batch always falls back."""
    import pithauthor.sign as signing

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("sign_citation ran")

    sign = citation_signer(FixedSigner(), _dear().pith_number, created_at=STAMP)
    monkeypatch.setattr(signing, "sign_citation", refuse)
    event = sign(_pipeline(), "extends", 'k"\\é')
    assert event["payload"]["citation_key"] == 'k"\\é'
    assert [c.name for c in check_author_event(event).failed] == []
    for relationship, key in (("extends", "a\u00a0b"), ("Extends", "k"), ("extends", "a" * 201)):
        with pytest.raises(AssertionError, match="sign_citation ran"):
            sign(_pipeline(), relationship, key)


def test_with_settle_every_citation_takes_sign_citation(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def settle(unsigned: Any) -> Any:
        seen.append(unsigned)
        return unsigned

    sign = citation_signer(FixedSigner(), _dear().pith_number, created_at=STAMP, settle=settle)
    event = sign(_pipeline(), "extends", "k")
    assert len(seen) == 1 and seen[0]["payload"] == event["payload"]


def test_the_batch_events_do_not_share_dicts() -> None:
    sign = citation_signer(FixedSigner(), _dear().pith_number, created_at=STAMP)
    first, second = (sign(_pipeline(), "cites", k) for k in ("a", "b"))
    first["signer"]["signer_id"] = "changed"
    assert second["signer"]["signer_id"] != "changed"
    assert first["payload"] is not second["payload"]


_TEXT = st.text(
    st.characters(exclude_categories=["Cs"]) | st.sampled_from('"\\\n\x00é\u2028'), max_size=16
)


@settings(max_examples=examples(200), deadline=None)
@given(created_at=_TEXT, event_type=_TEXT, payload=_TEXT, signer=_TEXT, subject=_TEXT, target=_TEXT)
def test_the_envelope_frame_is_envelope_bytes_cut_around_payload_and_subject(
    created_at: str, event_type: str, payload: str, signer: str, subject: str, target: str
) -> None:
    before, between, after = _envelope_frame(created_at, event_type, signer, target)
    assembled = f"{before}{payload}{between}{json_string(subject)}{after}".encode()
    assert assembled == envelope_bytes(created_at, event_type, payload, signer, subject, target)
