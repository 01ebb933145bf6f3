"""Signed text: one rule refuses control characters and bidirectional controls in
every signed text field, when signing and when checking an incoming event; a paper cannot
cite itself; text pith did not write is printed escaped."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from support.cli import use_fast_kdf
from support.paths import FIXTURES, load_fixture
from support.signer import VECTOR_ORCID, FixedSigner

from pithauthor._cli.main import main
from pithauthor.errors import EventError
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.events import seal, signer_block, unsigned_event
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import attestation_payload, citation_payload
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.text import (
    BIDI_CONTROLS,
    escaped,
    payload_text_problem,
    text_problem,
    unsafe_char,
    unsafe_chars,
)
from pithauthor.sign import attest_authorship, record_replication, sign_citation

# a command that asks the default (dead) registry first retries without the back-off waits
pytestmark = pytest.mark.usefixtures("no_backoff")

DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")
OTHER = "pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ"

REFUSED = [
    *sorted(BIDI_CONTROLS),  # U+061C, U+200E-200F, U+202A-202E, U+2066-2069
    "\x00",
    "\x1b",  # ESC: terminal escape sequences
    "\n",
    "\r",
    "\t",
    "\x7f",
    "\x85",  # C1 NEXT LINE
    "\u2028",  # LINE SEPARATOR
    "\u2029",
    "\ud800",  # a lone surrogate
    "\u200b",  # ZERO WIDTH SPACE: "Ada\u200bLovelace" looks like "AdaLovelace"
    "\ufeff",  # BOM / ZERO WIDTH NO-BREAK SPACE
    "\u00ad",  # SOFT HYPHEN
    "\u2060",  # WORD JOINER
    "\u2064",  # INVISIBLE PLUS
    "\U000e0041",  # TAG LATIN CAPITAL LETTER A: hidden ASCII
]
ALLOWED = [
    "Ada Lovelace",
    "Sofía Müller-Łukasiewicz",
    "\u0645\u062d\u0645\u062f\u200c\u0631\u0636\u0627",  # ZWNJ: Persian names need it
    "山田 太郎",
    "שרה כהן",  # right-to-left script itself is fine: only the invisible controls are refused
    "O'Brien, J. R. R.",
    "\u0915\u094d\u200d\u0937",  # ZWJ in Devanagari (a half form)
    "\U0001f469\u200d\U0001f52c",  # ZWJ emoji sequence: woman scientist
]


def dear() -> Subject:
    return Subject.from_document(load_fixture("record-2302.12445v2.json"))


@pytest.mark.parametrize("char", REFUSED, ids=lambda c: f"U+{ord(c):04X}")
def test_every_refused_character_is_named_with_its_place(char: str) -> None:
    problem = text_problem(f"Ada{char}Lovelace")
    assert problem is not None and f"U+{ord(char):04X}" in problem and "character 4" in problem


def test_the_fast_scan_refuses_exactly_the_characters_of_the_rule_on_every_code_point() -> None:
    """`text_problem` scans with one regular expression; the rule is `unsafe_char` (Unicode
    categories and the bidi list): both must agree on all 1,114,112 code points."""
    every = "".join(map(chr, range(0x110000)))
    refused = {c for c in every if unsafe_char(c)}
    assert set(unsafe_chars().findall(every)) == refused
    by_category = {c for c in every if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp", "Cf")}
    assert refused >= by_category - {"\u200c", "\u200d"}  # every format character but joiners
    assert "\u200c" not in refused and "\u200d" not in refused
    assert refused >= BIDI_CONTROLS
    # beyond the categories: only format characters a newer Unicode added (unassigned here)
    assert {unicodedata.category(c) for c in refused - by_category} <= {"Cn"}


def test_printable_text_never_holds_a_refused_character_on_any_code_point() -> None:
    """`payload_text_problem` passes printable text without its scan: that is sound only if
    no refused character is printable in the running Python's Unicode tables."""
    every = "".join(map(chr, range(0x110000)))  # the regex is the rule (the test above)
    refused = set(unsafe_chars().findall(every))
    assert len(refused) > 2000 and not [c for c in refused if c.isprintable()]


@pytest.mark.parametrize("text", ALLOWED)
def test_real_names_in_any_script_are_allowed(text: str) -> None:
    assert text_problem(text) is None


def test_the_payload_rule_names_the_field_at_fault() -> None:
    payload = {"author": {"name": "Ada"}, "artifacts": [{"uri": "https://x.org/\u202efdp.exe"}]}
    problem = payload_text_problem(payload)
    assert problem is not None and problem.startswith("payload.artifacts[0].uri holds a bidi")


@pytest.mark.parametrize(
    ("sign", "field"),
    [
        (lambda s: attest_authorship(FixedSigner(), s, name="Ada \u202eecalevoL"), "author.name"),
        (
            lambda s: attest_authorship(FixedSigner(), s, name="Ada", statement="I am\nnot"),
            "statement",
        ),
        (
            lambda s: record_replication(
                FixedSigner(), s, kind="replication", outcome="reproduced", summary="ok\x1b[2J"
            ),
            "summary",
        ),
        (
            lambda s: sign_citation(
                FixedSigner(), s, PithNumber.parse(OTHER), "cites", context="see \u2066x\u2069"
            ),
            "context",
        ),
        (
            lambda s: sign_citation(
                FixedSigner(), s, PithNumber.parse(OTHER), "cites", citation_key="k\u200e"
            ),
            "citation_key",
        ),
    ],
    ids=["name", "statement", "summary", "context", "citation_key"],
)
def test_signing_refuses_control_and_bidi_characters_in_every_text_field(
    sign: Any, field: str
) -> None:
    with pytest.raises(EventError, match=rf"payload\.{field} holds"):
        sign(dear())


def test_a_paper_cannot_sign_a_citation_of_itself() -> None:
    subject = dear()
    with pytest.raises(EventError, match="a paper cannot cite itself"):
        sign_citation(FixedSigner(), subject, subject.pith_number, "extends")
    # another paper is fine
    assert sign_citation(FixedSigner(), subject, PithNumber.parse(OTHER), "extends")


def _forged(event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A well-signed event built past `pithauthor.sign` (as another tool could make one)."""
    subject = dear()
    unsigned = unsigned_event(
        event_type,  # type: ignore[arg-type]
        subject.pith_number,
        "2026-01-01T00:00:00Z",
        signer_block(FixedSigner()),
        payload,  # type: ignore[arg-type]
    )
    return dict(seal(unsigned, FixedSigner()))


def test_an_incoming_event_with_a_bidi_override_in_a_name_fails_payload_text() -> None:
    payload = attestation_payload(dear().canonical_sha256, name="Ada \u202eecalevoL", orcid=None)
    report = check_author_event(_forged("author_attestation", dict(payload)))
    checks = {c.name: c for c in report.checks}
    assert checks["signature"].status == "passed"  # well signed: the text is what fails
    assert checks["payload_text"].status == "failed"
    assert "payload.author.name" in checks["payload_text"].detail and "U+202E" in (
        checks["payload_text"].detail
    )
    assert not report.ok


def test_an_incoming_self_citation_fails_payload_citing() -> None:
    payload = citation_payload(dear().canonical_sha256, citing=DEAR, relationship="cites")
    report = check_author_event(_forged("citation_signature", dict(payload)))
    assert {c.name: c.status for c in report.checks}["payload_citing"] == "failed"
    clean = citation_payload(dear().canonical_sha256, citing=OTHER, relationship="cites")
    assert check_author_event(_forged("citation_signature", dict(clean))).ok


def test_escaped_makes_every_invisible_character_visible() -> None:
    assert escaped("a\u202eb\x1b[2Jc\u2028d\U000e0001") == "a\\u202eb\\x1b[2Jc\\u2028d\\U000e0001"
    assert escaped("Sofía 山田") == "Sofía 山田"


def test_escaped_leaves_exactly_the_printable_characters_of_every_code_point_as_they_are() -> None:
    """`escaped` returns printable text untouched without looking at each character:
    that is right only if no printable character is one it escapes, on every code point of the
    running Python's tables; and every character it keeps alone is printed as itself."""
    for code in range(0x110000):
        char = chr(code)
        category = unicodedata.category(char)
        escapes = category[0] == "C" or category in ("Zl", "Zp")
        assert not (escapes and char.isprintable()), hex(code)
        assert (escaped(char) == char) != escapes, hex(code)


# --- through the `pith` command -------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


@pytest.fixture
def author(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "signed text tests passphrase")
    code, _, err = run(
        capsys, "keys", "generate", "--name", "liu", "--orcid", VECTOR_ORCID, "--backend",
        "file", "--public-name", "Chengjian Liu",
    )  # fmt: skip
    assert code == 0, err


def test_claim_with_a_bidi_override_in_the_statement_is_one_line_and_nothing_written(
    capsys: pytest.CaptureFixture[str], author: None, tmp_path: Path
) -> None:
    out_file = tmp_path / "claim.jsonl"
    code, out, err = run(
        capsys, "claim", DEAR, "--record", DEAR_RECORD, "--statement", "I am an author\u202e",
        "--out", str(out_file), "--yes",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "payload.statement holds" in err
    assert "Traceback" not in err and not out_file.exists()


def test_cite_to_the_citing_paper_itself_is_refused(
    capsys: pytest.CaptureFixture[str], author: None, tmp_path: Path
) -> None:
    out_file = tmp_path / "cite.jsonl"
    code, _, err = run(
        capsys, "cite", "--from", DEAR, "--from-record", DEAR_RECORD, "--to", DEAR,
        "--record", DEAR_RECORD, "--out", str(out_file), "--yes",
    )  # fmt: skip
    assert code == 2 and "cannot cite itself" in err and not out_file.exists()


def test_verify_prints_text_from_a_hostile_event_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    payload = dict(attestation_payload(dear().canonical_sha256, name="Ada", orcid=VECTOR_ORCID))
    payload["identity_proofs"] = [{"kind": "web", "locator": "https://x.org/\u202egnp.exe"}]
    event = tmp_path / "hostile.json"
    event.write_text(json.dumps(_forged("author_attestation", payload)), "utf-8")
    code, out, _ = run(capsys, "verify", str(event))
    assert code == 1 and "failed       payload_text" in out
    assert "\u202e" not in out and "\\u202e" in out


def test_a_public_name_meets_the_same_rule() -> None:
    from pithauthor.errors import InputError
    from pithauthor.keys.author import check_public_name

    persian = "\u0645\u062d\u0645\u062f\u200c\u0631\u0636\u0627"  # with a ZWNJ
    assert check_public_name(persian) == persian
    with pytest.raises(InputError, match="U\\+202E"):
        check_public_name("Ada \u202eecalevoL")


def test_the_bibliography_table_prints_keys_and_details_from_the_bib_escaped() -> None:
    import dataclasses

    from pithauthor.bibliography.reading import EntryRow, render_table

    fields = {f.name for f in dataclasses.fields(EntryRow)}
    values: dict[str, Any] = {name: None for name in fields}
    values.update(key="evil\u202eKEY", file="refs.bib", line=3, status="unresolved")
    values.update(detail="title \x1b[2J here", identifier=None, source=None)
    table = render_table([EntryRow(**values)])
    assert "\u202e" not in table and "\x1b" not in table
    assert "evil\\u202eKEY" in table and "\\x1b[2J" in table
