"""`vouched_text`: an event this process made, and its canonical text, from one serialisation.

The outbox stores an event just signed as `vouched_text` gives it: the text is the signed bytes
with the event's `event_id` and `signature` members put in their places (`events.named_text`),
and the proof is asked of those very bytes. Here the text must be `canonical`'s, byte for byte,
for any payload (nested objects named `signer` or `signature`, quotes, `,"signer":` inside
texts, any characters), and whatever `vouched` refuses (an event changed after it was made, one
never made here) `vouched_text` refuses too, and the outbox then checks it in full.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.signer import FixedSigner

from pithauthor.errors import EventError
from pithauthor.protocol.canonical_json import b64encode, canonical
from pithauthor.protocol.checks.event import vouch, vouched, vouched_text
from pithauthor.protocol.events import SIGNED_FIELDS, compute_event_id, named_text
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.subject import Subject
from pithauthor.registry.outbox import Outbox
from pithauthor.sign import sign_citation

SIGNER = FixedSigner()
DIGEST = hashlib.sha256(b"the cited paper").hexdigest()
SUBJECT = Subject(PithNumber.from_digest(DIGEST, 2021), DIGEST)
CITING = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW")

# JSON values as a payload may hold them (no floats: the protocol's JSON has none)
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["signer", "signature", ',"signer":{', '","signature":{"a":"b"},"signer":', "\\", '"']
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=12,
)


def _made(payload: dict[str, Any], created_at: str = "2026-01-02T03:04:05Z") -> dict[str, Any]:
    """A citation's envelope around `payload`, named and signed as the signer writes it, and
    vouched for as `pithauthor.sign` vouches for its own keys' events."""
    event = dict(sign_citation(SIGNER, SUBJECT, CITING, "cites"))
    event["payload"], event["created_at"] = payload, created_at
    digest = hashlib.sha256(canonical({k: event[k] for k in SIGNED_FIELDS})).digest()
    event["event_id"] = "sha256:" + digest.hex()
    signature = b64encode(SIGNER.sign_digest(digest))
    event["signature"] = {**event["signature"], "signature_b64": signature}
    vouch(event)  # type: ignore[arg-type]
    return event


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(payload=st.dictionaries(_TEXT, _JSON, max_size=5), created_at=_TEXT)
def test_the_text_is_canonicals_byte_for_byte(payload: dict[str, Any], created_at: str) -> None:
    event = _made(payload, created_at)
    assert named_text(event) == (compute_event_id(event), canonical(event).decode("utf-8"))
    made = vouched_text(event)
    assert made is not None and made[0] is event
    assert made[1] == canonical(event).decode("utf-8")


def test_a_citation_as_signed_is_vouched_for_with_its_text() -> None:
    event = sign_citation(SIGNER, SUBJECT, CITING, "extends", citation_key='k","signer":{')
    vouch(event)
    assert vouched_text(event) == (event, canonical(event).decode("utf-8"))


def _tamper(event: dict[str, Any], how: str) -> None:
    if how == "payload":
        event["payload"]["relationship"] = "refutes"
    elif how == "created_at":
        event["created_at"] = "2026-01-02T03:04:06Z"
    elif how == "signature":
        event["signature"]["signature_b64"] = b64encode(bytes(64))
    elif how == "key":
        event["signer"]["public_key_b64"] = b64encode(bytes(32))
    elif how == "extra field":
        event["note"] = "added"
    elif how == "a number for a text":
        event["payload"]["relationship"] = 1
    elif how == "a text field not text":
        event["target"] = ["paper"]


TAMPERINGS = [
    "payload",
    "created_at",
    "signature",
    "key",
    "extra field",
    "a number for a text",
    "a text field not text",
]


@pytest.mark.parametrize("how", TAMPERINGS)
def test_what_vouched_refuses_vouched_text_refuses(how: str) -> None:
    event = _made({"relationship": "cites", "payload_schema": "x"})
    assert vouched_text(event) is not None
    _tamper(event, how)
    assert vouched(event) is None
    assert vouched_text(event) is None


def test_an_event_never_made_here_is_not_vouched_for() -> None:
    event = copy.deepcopy(_made({"relationship": "cites"}))
    event["event_id"] = "sha256:" + "0" * 64  # an id nothing was made under
    assert vouched_text(event) is None
    assert vouched_text("not an event") is None


@pytest.mark.parametrize("how", ["payload", "created_at", "signature"])
def test_the_outbox_checks_a_changed_event_in_full_and_refuses_it(tmp_path: Path, how: str) -> None:
    event = dict(sign_citation(SIGNER, SUBJECT, CITING, "extends"))
    vouch(event)  # type: ignore[arg-type]
    _tamper(event, how)
    with Outbox(tmp_path / "outbox.sqlite3") as outbox:
        with pytest.raises(EventError, match="does not verify"):
            outbox.store([event])
        assert outbox.counts()["pending"] == 0


def test_the_outbox_stores_an_event_made_here_as_its_canonical_text(tmp_path: Path) -> None:
    event = sign_citation(SIGNER, SUBJECT, CITING, "extends", citation_key="smith2021")
    vouch(event)
    with Outbox(tmp_path / "outbox.sqlite3") as outbox:
        assert outbox.store([event]) == (1, 0)
        (entry,) = outbox.working()
        assert entry.stored == canonical(event).decode("utf-8")
        assert entry.event == event  # read back, checked in full
