"""A claim signs the author's public name (not the key's label), and is checked against the
paper's author list before anything is signed: DeAR's real authors, in arXiv's order (Lin
Zhang, Shaohuai Shi, Xiaowen Chu, Wei Wang, Bo Li, Chengjian Liu: every test's PITH_ARXIV_API
is a local stand-in serving them), not the order of the vectors' record (which sorts them by
given name); accents, initials and "Surname, Given" allowed for; a wrong position or a
stranger's name refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.arxiv_server import DEAR_ARXIV_ORDER
from support.cli import NO_REGISTRY, OnTerminal, RunPith, assert_one_line_error, use_fast_kdf
from support.paths import FIXTURES
from support.registry import REAL_NUMBER

from pithauthor.errors import InputError
from pithauthor.protocol.record import check_claimant, same_person, split_authors
from pithauthor.verify import read_documents, verify_file

RECORD = str(FIXTURES / "record-2302.12445v2.json")
DEAR_AUTHORS = ("Bo Li", "Chengjian Liu", "Lin Zhang", "Shaohuai Shi", "Wei Wang", "Xiaowen Chu")
DEAR_ORDER = tuple(DEAR_ARXIV_ORDER)  # arXiv's order: Shaohuai Shi is author 2, not 4
NO_ARXIV = {"PITH_ARXIV_API": f"{NO_REGISTRY}/api/query"}  # nothing listens: arXiv is away


@pytest.mark.parametrize(
    ("name", "listed"),
    [
        ("A. Lovelace", "Ada Lovelace"),
        ("Ada Lovelace", "Ada Lovelace"),
        ("Lovelace, Ada", "Ada Lovelace"),
        ("Ádá Lovelace", "Ada Lovelace"),
        ("ada lovelace", "Ádá Lóvelace"),
        ("Ada Lovelace", "Ada K. Lovelace"),  # a middle name left out
        ("J.-P. Sartre", "Jean-Paul Sartre"),
        ("Łukasz Kaiser", "Lukasz Kaiser"),
    ],
)
def test_names_written_differently_are_the_same_person(name: str, listed: str) -> None:
    assert same_person(name, listed)


@pytest.mark.parametrize(
    ("name", "listed"),
    [
        ("Bob Li", "Bo Li"),
        ("Ada Byron", "Ada Lovelace"),
        ("B. Lovelace", "Ada Lovelace"),
        ("Ada Lovelace", "Augusta Ada Lovelace"),  # given names compared in order
        ("", "Ada Lovelace"),
    ],
)
def test_other_names_are_not_the_same_person(name: str, listed: str) -> None:
    assert not same_person(name, listed)


def test_an_arxiv_author_field_splits_into_names_without_affiliations() -> None:
    text = "A. One (Univ. X), B. Two and C. Three (Lab (Y)); D. Four"
    assert split_authors(text) == ("A. One", "B. Two", "C. Three", "D. Four")


def test_the_check_names_the_right_position_in_arxiv_s_order_of_a_wrong_one() -> None:
    with pytest.raises(
        InputError, match=r"author 4 on arXiv is 'Wei Wang', not 'S\. Shi' \(author 2\)"
    ):
        check_claimant(DEAR_AUTHORS, "S. Shi", 4, order=DEAR_ORDER)
    assert check_claimant(DEAR_AUTHORS, "S. Shi", 2, order=DEAR_ORDER).positions == (2,)


def test_the_record_s_sorted_list_is_never_taken_as_an_order() -> None:
    """Without arXiv's order a position cannot be checked: refused (with --force: signed,
    the note saying so), even at the place the record's sorted list gives the name; the name
    itself is still checked against the record's list."""
    with pytest.raises(InputError, match=r"--position 4 cannot be checked: arXiv is away"):
        check_claimant(DEAR_AUTHORS, "S. Shi", 4, why_no_order="arXiv is away")
    forced = check_claimant(DEAR_AUTHORS, "S. Shi", 4, why_no_order="arXiv is away", force=True)
    assert forced.note.startswith("NOT CHECKED (--force): --position 4 cannot be checked")
    unplaced = check_claimant(DEAR_AUTHORS, "S. Shi", None)
    assert unplaced.positions == () and "one of the record's 6 authors" in unplaced.note
    with pytest.raises(InputError, match=r"'Ada Lovelace' is not among the paper's authors"):
        check_claimant(DEAR_AUTHORS, "Ada Lovelace", None)


def test_a_record_without_author_list_is_refused_unless_forced() -> None:
    """Fail closed: nothing to compare the name with is no match."""
    with pytest.raises(InputError, match=r"lists no authors.*--force signs anyway"):
        check_claimant((), "Anyone", 3)
    check = check_claimant((), "Anyone", 3, force=True)
    assert not check.checked and "NOT CHECKED (--force)" in check.note


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch, pith: RunPith) -> dict[str, Any]:
    """A real key made by `pith keys generate --public-name` (label "ada", a login)."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "claim authors passphrase")
    made = pith("keys", "generate", "--name", "ada", "--public-name", "Shaohuai  Shi",
                "--backend", "file", "--json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    doc: dict[str, Any] = json.loads(made.stdout)
    return doc


def _claim(pith: RunPith, tmp_path: Path, *args: str) -> Any:
    return pith("claim", REAL_NUMBER, "--record", RECORD, "-o", str(tmp_path / "c.jsonl"), *args)


def _signed(tmp_path: Path) -> list[Any]:
    path = tmp_path / "c.jsonl"
    return read_documents(str(path)) if path.exists() else []


def test_keys_generate_stores_the_public_name_apart_from_the_label(key: dict[str, Any]) -> None:
    assert key["name"] == "ada"
    assert key["public_name"] == "Shaohuai Shi"  # white space folded


def test_a_claim_signs_the_public_name_at_its_checked_position(
    pith: RunPith, key: dict[str, Any], tmp_path: Path
) -> None:
    result = _claim(pith, tmp_path, "--position", "2")
    assert result.returncode == 0, result.stderr
    (event,) = _signed(tmp_path)
    assert event["payload"]["author"]["name"] == "Shaohuai Shi"
    assert event["payload"]["author"]["position"] == 2
    assert verify_file(tmp_path / "c.jsonl").ok
    assert "2 of 6 on arXiv (Shaohuai Shi)" in result.stderr


@pytest.mark.parametrize(
    ("name", "position"), [("S. Shi", "2"), ("Shi, Shaohuai", "2"), ("Sháohuài Shī", "2")]
)
def test_accents_initials_and_surname_first_match_the_record(
    pith: RunPith, key: dict[str, Any], tmp_path: Path, name: str, position: str
) -> None:
    result = _claim(pith, tmp_path, "--name", name, "--position", position)
    assert result.returncode == 0, result.stderr
    (event,) = _signed(tmp_path)
    assert event["payload"]["author"] == {"name": name, "position": int(position)}


def test_a_wrong_position_is_refused_naming_the_right_one_and_nothing_is_signed(
    pith: RunPith, key: dict[str, Any], tmp_path: Path
) -> None:
    result = _claim(pith, tmp_path, "--position", "4")
    assert_one_line_error(result, 2)
    assert "author 4 on arXiv is 'Wei Wang', not 'Shaohuai Shi' (author 2)" in result.stderr
    assert _signed(tmp_path) == []
    beyond = _claim(pith, tmp_path, "--position", "7")
    assert_one_line_error(beyond, 2)
    assert "the paper has 6 authors on arXiv" in beyond.stderr


@pytest.mark.parametrize(("name", "position"), [("Bo Li", "5"), ("C. Liu", "6"), ("Wéi Wáng", "4")])
def test_a_name_that_is_not_the_keys_public_name_is_refused_though_it_is_an_author(
    pith: RunPith, key: dict[str, Any], tmp_path: Path, name: str, position: str
) -> None:
    """Shaohuai Shi's key cannot sign a co-author's name, even at that co-author's position."""
    refused = _claim(pith, tmp_path, "--name", name, "--position", position)
    assert_one_line_error(refused, 2)
    assert f"--name {name!r} is not the key's public name ('Shaohuai Shi')" in refused.stderr
    assert "--force" in refused.stderr and _signed(tmp_path) == []


def test_a_record_without_authors_is_refused_naming_force(
    pith: RunPith, key: dict[str, Any], tmp_path: Path
) -> None:
    doc = json.loads(Path(RECORD).read_text("utf-8"))
    del doc["receipt"]  # a computed record, so that its author list can be taken out here
    del doc["paper"]["authors_text"]
    bare = tmp_path / "record.json"
    bare.write_text(json.dumps(doc), "utf-8")
    args = ("claim", REAL_NUMBER, "--record", str(bare), "--position", "2",
            "-o", str(tmp_path / "c.jsonl"))  # fmt: skip
    refused = pith(*args, env=NO_ARXIV)  # and arXiv away: no list at all to check with
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    # one error line (after the note that the record was computed, not from a registry)
    (error,) = [ln for ln in refused.stderr.splitlines() if ln.startswith("pith: error: ")]
    assert "the record lists no authors" in error and "--force signs anyway" in error
    assert _signed(tmp_path) == []
    forced = pith(*args, "--force", env=NO_ARXIV)
    assert forced.returncode == 0, forced.stderr
    assert "NOT CHECKED (--force): the record lists no authors" in forced.stderr
    assert len(_signed(tmp_path)) == 1


def test_a_name_that_is_no_author_of_the_paper_is_refused_unless_forced(
    pith: RunPith, key: dict[str, Any], tmp_path: Path
) -> None:
    refused = _claim(pith, tmp_path, "--name", "Ada Lovelace")
    assert_one_line_error(refused, 2)
    assert "'Ada Lovelace' is not the key's public name" in refused.stderr
    assert "--force" in refused.stderr and _signed(tmp_path) == []
    renamed = pith("keys", "set", "ada", "--public-name", "Ada Lovelace")
    assert renamed.returncode == 0, renamed.stderr
    not_author = _claim(pith, tmp_path)
    assert_one_line_error(not_author, 2)
    assert (
        "'Ada Lovelace' is not among the paper's authors on arXiv (Lin Zhang, Shaohuai Shi"
        in not_author.stderr
    )
    assert _signed(tmp_path) == []
    forced = _claim(pith, tmp_path, "--name", "Ada Lovelace", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "NOT CHECKED (--force)" in forced.stderr
    (event,) = _signed(tmp_path)
    assert event["payload"]["author"]["name"] == "Ada Lovelace"


def test_accents_in_the_record_s_author_list_match_a_plain_name(
    pith: RunPith, key: dict[str, Any], tmp_path: Path
) -> None:
    """The record's side folded too, when arXiv is away (the record's list is then what the
    name is checked with): a record (without receipt, so its list can be edited here) listing
    "Sháohuài Shī"."""
    doc = json.loads(Path(RECORD).read_text("utf-8"))
    del doc["receipt"]
    doc["paper"]["authors_text"] = doc["paper"]["authors_text"].replace(
        "Shaohuai Shi", "Sháohuài Shī"
    )
    edited = tmp_path / "record.json"
    edited.write_text(json.dumps(doc), "utf-8")
    result = pith("claim", REAL_NUMBER, "--record", str(edited),
                  "-o", str(tmp_path / "c.jsonl"), env=NO_ARXIV)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Sháohuài Shī" in result.stderr  # the preview shows the record's spelling


def test_a_key_without_public_name_cannot_claim_until_keys_set_gives_one(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "claim authors passphrase")
    made = pith("keys", "generate", "--name", "ada", "--backend", "file")
    assert made.returncode == 0 and "pith keys set --public-name" in made.stderr
    refused = _claim(pith, tmp_path, "--position", "1")
    assert_one_line_error(refused, 2)
    assert "no public name" in refused.stderr and _signed(tmp_path) == []

    named = pith("keys", "set", "ada", "--public-name", "Bo Li", "--json")
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["public_name"] == "Bo Li"
    assert _claim(pith, tmp_path, "--position", "5").returncode == 0
    (event,) = _signed(tmp_path)
    assert event["payload"]["author"]["name"] == "Bo Li"


def test_rotation_keeps_the_public_name(pith: RunPith, key: dict[str, Any]) -> None:
    rotated = pith("keys", "rotate", "ada", "--json")
    assert rotated.returncode == 0, rotated.stderr
    assert json.loads(rotated.stdout)["active"]["public_name"] == "Shaohuai Shi"


@pytest.mark.parametrize("bad", ["", "   ", "Ada\x1b[2JLovelace", "A" * 201])
def test_a_public_name_that_is_not_a_name_is_refused_before_anything_is_stored(
    pith: RunPith, key: dict[str, Any], bad: str
) -> None:
    assert_one_line_error(pith("keys", "set", "ada", "--public-name", bad), 2)
    shown = json.loads(pith("keys", "show", "ada", "--json").stdout)
    assert shown["public_name"] == "Shaohuai Shi"


def test_keys_generate_on_a_terminal_asks_for_the_public_name(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, terminal: OnTerminal
) -> None:
    import sys

    from support.cli import LAUNCHER

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "claim authors passphrase")
    argv = [sys.executable, LAUNCHER, "keys", "generate", "--name", "ada", "--backend", "file"]
    code, shown = terminal(argv, ["Ádá Lovelace".encode()], prompt=b"Your name as on your papers")
    assert code == 0, shown
    listed = json.loads(pith("keys", "show", "ada", "--json").stdout)
    assert listed["public_name"] == "Ádá Lovelace" and listed["name"] == "ada"


def test_the_preview_shows_the_orcid_the_claim_carries(
    pith: RunPith, key: dict[str, Any], tmp_path: Path
) -> None:
    """The key has no ORCID iD; the claim carries --orcid: the preview shows what is signed."""
    result = _claim(pith, tmp_path, "--position", "2", "--orcid", "0000-0002-1825-0097")
    assert result.returncode == 0, result.stderr
    assert "signer     Shaohuai Shi · ORCID 0000-0002-1825-0097 · key " in result.stderr
    (event,) = _signed(tmp_path)
    assert event["payload"]["author"]["orcid"] == "0000-0002-1825-0097"
