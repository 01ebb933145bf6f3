"""The registry is the author's memory too: two PITH_HOMEs share one key (`pith keys backup`,
then `pith keys import` on the second), and the second machine, whose outbox is empty, sees
what the first one published on the project's own local registry (loopback): a different
claim of the same paper is refused without --replace and replaces with it (one current claim,
no equivocation), the same claim is reused, the first machine's citation is withdrawn by its
id, and `pith papers --registry URL` lists the paper."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from support.cli import RunPith, StartRegistry, use_fast_kdf

from pithauthor.registry.outbox import Outbox

DEAR = "2302.12445"  # claimed (Chengjian Liu is an author)
CITED = "2101.99901"  # an example paper DEAR cites here
PASSPHRASE = "one key on two machines"


@pytest.fixture
def machines(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[dict[str, str], dict[str, str]]:
    """The environments of two machines: the first made the key, the second restored it from
    the first one's backup."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    first = {"PITH_HOME": str(tmp_path / "first")}
    second = {"PITH_HOME": str(tmp_path / "second")}
    made = pith("keys", "generate", "--name", "ada", "--public-name", "Chengjian Liu",
                "--backend", "file", env=first)  # fmt: skip
    assert made.returncode == 0, made.stderr
    backup = tmp_path / "ada.backup"
    saved = pith("keys", "backup", "ada", "-o", str(backup), env=first)
    assert saved.returncode == 0, saved.stderr
    restored = pith("keys", "import", str(backup), "--backend", "file", "--offline", env=second)
    assert restored.returncode == 0, restored.stderr
    return first, second


def _state(url: str, ref: str) -> dict[str, object]:
    number = httpx.get(f"{url}/pith/{ref}").json()["pith_number"]
    body = number.rsplit(":", 1)[1]
    result: dict[str, object] = httpx.get(f"{url}/pith/{body}/state.json").json()
    return result


def test_a_second_machine_knows_what_the_first_published_with_the_same_key(
    pith: RunPith, machines: tuple[dict[str, str], dict[str, str]], local_registry: StartRegistry
) -> None:
    first, second = machines
    server = local_registry()
    flags = ("--registry", server.url, "--trust-local-registry", "--submit", "--yes")
    claimed = pith("claim", DEAR, *flags, env=first)
    assert claimed.returncode == 0, claimed.stderr
    cited = pith("cite", "--from", DEAR, "--to", CITED, "--relationship", "extends", *flags,
                 env=first)  # fmt: skip
    assert cited.returncode == 0, cited.stderr
    state = _state(server.url, CITED)
    [citation] = state["current"]["citation_signatures"]  # type: ignore[index]
    citation_id = citation["event_id"]

    # before anything was signed there: the outbox knows nothing, the registry does
    assert "no papers yet" in pith("papers", env=second).stderr
    listed = pith("papers", "--registry", server.url, "--trust-local-registry", DEAR,
                  "--json", env=second)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    [page] = json.loads(listed.stdout)
    assert page["pith_number"] == _state(server.url, DEAR)["pith_number"]
    assert "claimed" in page["roles"]
    assert page["registries"][server.url]["on the registry"] == 1

    # a different claim: refused as on the first machine
    other = ("claim", DEAR, "--statement", "I wrote the appendix.", *flags)
    refused = pith(*other, env=second)
    assert refused.returncode == 2, refused.stderr
    assert "you already signed author claim" in refused.stderr
    assert "on the registry, from another machine" in refused.stderr
    assert f"--paper {page['pith_number']}` to take it back" in refused.stderr

    # the same claim: reused, nothing new signed (and now in this outbox too)
    same = pith("claim", DEAR, *flags, env=second)
    assert same.returncode == 0, same.stderr
    assert "already signed" in same.stderr and f"the registry {server.url}" in same.stderr
    claims = _state(server.url, DEAR)["current"]["author_attestations"]  # type: ignore[index]
    assert len(claims) == 1

    # the different claim again, as a replacement
    replaced = pith(*other, "--replace", env=second)
    assert replaced.returncode == 0, replaced.stderr
    state = _state(server.url, DEAR)
    [current] = state["current"]["author_attestations"]  # type: ignore[index]
    assert current["payload"]["statement"] == "I wrote the appendix."
    assert state["equivocation_count"] == 0

    # the first machine's citation, withdrawn by its id from the second
    withdrawn = pith("withdraw", citation_id[:19], "--paper", CITED, *flags, env=second)
    assert withdrawn.returncode == 0, withdrawn.stderr
    state = _state(server.url, CITED)
    assert state["current"]["citation_signatures"] == []  # type: ignore[index]
    assert state["equivocation_count"] == 0
    with Outbox(Path(second["PITH_HOME"]) / "outbox" / "outbox.sqlite3") as outbox:
        assert {e.state for e in outbox.entries()} == {"accepted"}


def test_withdrawing_an_event_signed_elsewhere_without_its_paper_names_the_option(
    pith: RunPith, machines: tuple[dict[str, str], dict[str, str]], local_registry: StartRegistry
) -> None:
    first, second = machines
    server = local_registry()
    flags = ("--registry", server.url, "--trust-local-registry", "--submit", "--yes")
    claimed = pith("claim", DEAR, *flags, env=first)
    assert claimed.returncode == 0, claimed.stderr
    [claim] = _state(server.url, DEAR)["current"]["author_attestations"]  # type: ignore[index]
    result = pith("withdraw", claim["event_id"], *flags, env=second)
    assert result.returncode == 2
    assert "--paper PAPER" in result.stderr


def test_a_claim_of_a_retired_key_is_reused_and_never_replaced_across_keys(
    pith: RunPith, machines: tuple[dict[str, str], dict[str, str]], local_registry: StartRegistry
) -> None:
    """The key store knows rotations: the same claim made by the key this one replaced is
    reused (nothing signed), and a different one is refused with --replace (only the old key
    could replace its own claim), then stands beside it without."""
    first, _ = machines
    server = local_registry()
    flags = ("--registry", server.url, "--trust-local-registry", "--submit", "--yes")
    claimed = pith("claim", DEAR, *flags, env=first)
    assert claimed.returncode == 0, claimed.stderr
    rotated = pith("keys", "rotate", "ada", "--backend", "file", env=first)
    assert rotated.returncode == 0, rotated.stderr
    again = pith("claim", DEAR, *flags, env=first)
    assert again.returncode == 0, again.stderr
    assert "already signed" in again.stderr
    claims = _state(server.url, DEAR)["current"]["author_attestations"]  # type: ignore[index]
    assert len(claims) == 1
    other = ("claim", DEAR, "--statement", "I wrote the appendix.", *flags)
    refused = pith(*other, "--replace", env=first)
    assert refused.returncode == 2, refused.stderr
    assert "signed by your retired key" in refused.stderr
    beside = pith(*other, env=first)
    assert beside.returncode == 0, beside.stderr
    state = _state(server.url, DEAR)
    assert len(state["current"]["author_attestations"]) == 2  # type: ignore[arg-type,index]
    assert state["equivocation_count"] == 0


def test_withdrawing_what_another_machine_withdrew_reuses_its_withdrawal(
    pith: RunPith, machines: tuple[dict[str, str], dict[str, str]], local_registry: StartRegistry
) -> None:
    first, second = machines
    server = local_registry()
    flags = ("--registry", server.url, "--trust-local-registry", "--submit", "--yes")
    claimed = pith("claim", DEAR, *flags, env=first)
    assert claimed.returncode == 0, claimed.stderr
    [claim] = _state(server.url, DEAR)["current"]["author_attestations"]  # type: ignore[index]
    by_second = pith("withdraw", claim["event_id"], "--paper", DEAR, *flags, env=second)
    assert by_second.returncode == 0, by_second.stderr
    by_first = pith("withdraw", claim["event_id"], *flags, env=first)
    assert by_first.returncode == 0, by_first.stderr
    assert "is withdrawn already" in by_first.stderr
    assert f"is in the registry {server.url}" in by_first.stderr
    assert len(_state(server.url, DEAR)["withdrawals"]) == 1  # type: ignore[arg-type]
