"""The RFC 3161 vectors (tests/vectors/rfc3161/): `generate.py` reproduces them byte for byte,
pith's verdict on each token is the one `index.json` names, and the valid one is also accepted
by rfc3161-client's verifier given nothing but the pinned roots."""

from __future__ import annotations

import base64
import importlib.util
import json
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cryptography import x509
from rfc3161_client import VerifierBuilder, decode_timestamp_response
from support.tsa_server import response

from pithauthor.errors import VerificationError
from pithauthor.timestamps.rfc3161 import check_token
from pithauthor.timestamps.time_sources import Authority, pem_certificates

VECTORS = Path(__file__).parents[2] / "vectors" / "rfc3161"
INDEX: list[dict[str, Any]] = json.loads((VECTORS / "index.json").read_text(encoding="utf-8"))
ROOTS = pem_certificates((VECTORS / "roots.pem").read_bytes())
PINNED = [Authority("https://tsa.vectors.example", ROOTS)]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rfc3161_vectors", VECTORS / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _case(entry: dict[str, Any]) -> tuple[bytes, bytes]:
    doc = json.loads((VECTORS / entry["file"]).read_text(encoding="utf-8"))
    return base64.b64decode(doc["token_b64"]), base64.b64decode(doc["message_b64"])


def test_the_generator_reproduces_every_committed_file() -> None:
    files, _ = _generator().cases()
    committed = {p.name for p in VECTORS.iterdir() if p.name not in ("generate.py", "README.md")}
    assert set(files) == committed - {"__pycache__"}
    for name, data in files.items():
        assert (VECTORS / name).read_bytes() == data, name


def test_the_vectors_cover_an_accepted_token_and_every_refusal() -> None:
    assert [e["accepted"] for e in INDEX].count(True) == 1
    assert len(INDEX) == 7


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"] for e in INDEX])
def test_pith_gives_each_vector_its_verdict(entry: dict[str, Any]) -> None:
    token, message = _case(entry)
    if entry["accepted"]:
        proven = check_token(token, message, PINNED)
        assert proven.time == datetime.fromisoformat(entry["gen_time"]).astimezone(UTC)
        assert proven.by == "rfc3161 https://tsa.vectors.example"
    else:
        with pytest.raises(VerificationError, match=entry["refused"]):
            check_token(token, message, PINNED)


def test_rfc3161_client_accepts_the_valid_vector_with_the_pinned_roots_alone() -> None:
    [entry] = [e for e in INDEX if e["accepted"]]
    token, message = _case(entry)
    builder = VerifierBuilder()
    for root in ROOTS:
        builder = builder.add_root_certificate(x509.load_der_x509_certificate(root))
    assert builder.build().verify_message(decode_timestamp_response(response(token)), message)
