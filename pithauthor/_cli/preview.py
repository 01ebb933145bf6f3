"""What a signing command shows before it signs (on stderr): the paper as the verified record
gives it (Pith Number, arXiv version, title, authors), who signs (public name, ORCID iD, key id)
and what the statement says. Text from a record is shown with control characters escaped, so a
hostile title cannot rewrite the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pithauthor.protocol import escaped

if TYPE_CHECKING:
    from pithauthor import PithNumber, Subject
    from pithauthor.keys import AuthorKey
    from pithauthor.protocol import AuthorEvent

HEADER = "{what} to sign (public and permanent once submitted):"
_TITLE_WIDTH = 56


def shown(text: str) -> str:
    """`text` safe for a terminal: control and format characters as \\x.. / \\u.... escapes
    (the one rule, `pithauthor.protocol.text.escaped`)."""
    return escaped(text)


def _row(label: str, value: str) -> str:
    return f"  {label:<10} {value}"


def paper_lines(paper: Subject, label: str = "paper") -> list[str]:
    """Number and arXiv version, title and authors of `paper`, as its record gives them."""
    version = f"v{paper.source_version}" if paper.source_version is not None else ""
    source = f" (arXiv {shown(paper.source_id)}{version})" if paper.source_id else ""
    title = shown(paper.title) if paper.title else "(the record gives no title)"
    authors = ", ".join(shown(a) for a in paper.authors) or "(the record lists no authors)"
    return [
        _row(label, f"{paper.pith_number.full}{source}"),
        _row("title", title),
        _row("authors", authors),
    ]


def signer_line(key: AuthorKey, name: str | None = None, orcid_id: str | None = None) -> str:
    """`signer     Ada Lovelace · ORCID 0000-… · key ed25519:…`."""
    who = name or key.public_name or f"(no public name; key {key.name!r})"
    orcid_id = orcid_id or key.orcid
    orcid = f"ORCID {orcid_id}" if orcid_id else "no ORCID iD"
    return _row("signer", f"{shown(who)} · {orcid} · key {key.key_id}")


def claim_preview(
    paper: Subject, key: AuthorKey, event: AuthorEvent, position_note: str
) -> list[str]:
    """The claim as signed: its payload's name, ORCID iD, statement and proofs."""
    # read from the signed event (held in memory until the author says yes), not from the
    # options: the author sees the very text the signature covers, never a paraphrase of it
    payload: Any = event["payload"]
    author = payload["author"]
    lines = [
        HEADER.format(what="An author claim"),
        *paper_lines(paper),
        signer_line(key, author["name"], author.get("orcid")),
        _row("position", shown(position_note)),
        _row("statement", shown(payload["statement"])),
    ]
    for proof in payload.get("identity_proofs", []):
        lines.append(_row("proof", f"{proof['kind']}: {shown(proof['locator'])}"))
    return lines


def _citing(citing: PithNumber, note: str | None) -> list[str]:
    """Your paper's row, and how its number was checked (when it was given in full)."""
    return [_row("citing", f"{citing.full} (your paper)"), *([_row("", note)] if note else [])]


def citation_preview(
    citing: PithNumber, citing_note: str | None, cited: Subject, relationship: str, key: AuthorKey
) -> list[str]:
    return [
        HEADER.format(what="A citation"),
        *_citing(citing, citing_note),
        *paper_lines(cited, "cited"),
        _row("relation", relationship),
        signer_line(key),
    ]


def replication_preview(
    paper: Subject,
    key: AuthorKey,
    kind: str,
    outcome: str,
    summary: str,
    artifacts: Sequence[tuple[str, str]],
) -> list[str]:
    lines = [
        HEADER.format(what=f"A {kind.replace('_', ' ')} record"),
        *paper_lines(paper),
        signer_line(key),
        _row("outcome", shown(outcome)),
        _row("summary", shown(summary)),
    ]
    for uri, digest in artifacts:
        lines.append(_row("artifact", f"{shown(uri)} (sha256 {digest[:12]}…)"))
    return lines


def bibliography_preview(
    citing: PithNumber,
    citing_note: str | None,
    rows: Sequence[tuple[str, Subject, str]],
    key: AuthorKey,
) -> list[str]:
    """A table: reference (BibTeX key), cited paper (title and number), relationship."""
    width = max([len("reference"), *(len(shown(ref)) for ref, _, _ in rows)])
    lines = [
        HEADER.format(what=f"{len(rows)} citation(s) by {citing.full}"),
        *([f"  {citing_note}"] if citing_note else []),
        f"  {'reference':<{width}}  {'cited paper':<{_TITLE_WIDTH}}  relationship",
    ]
    for ref, paper, relationship in rows:
        title = shown(paper.title) if paper.title else "(no title)"
        if len(title) > _TITLE_WIDTH - 20:
            title = title[: _TITLE_WIDTH - 21] + "…"
        cited = f"{title} ({paper.pith_number.alias(8)}…)"
        lines.append(f"  {shown(ref):<{width}}  {cited:<{_TITLE_WIDTH}}  {relationship}")
    lines.append(signer_line(key))
    return lines
