"""A paper's page, as pith.science shows it, from documents this machine verified: the record
and the merged state (both verified), what the state says (claims, citations received,
replications, completeness) and what this machine's outbox holds for the paper.

>>> with connect(url, [], True) as client:
...     page = paper_status(client, "2302.12445", judge=judge_proofs)   # record + state verified

Everything here is data (JSON-ready dicts); the CLI prints it. Text that came from a registry or
from someone else's event (titles, names, summaries) is returned as sent: whoever prints it
escapes it (`pithauthor.protocol.text.escaped`).

Its own module, apart from `statements` (what you already said, `pith papers`): a page signs
and submits nothing, and a second look at an unchanged paper (`pith status`: under 0.2 s of
CPU, docs/performance.md) loaded the key store and the submitter with `statements` (about 10 ms).
For the same reason the proofs of rows 1 and 2 (a Bitcoin anchor, an archive copy) are judged
by the caller's `judge` (`pithauthor.registry.judge.judge_proofs`), called only when the state
lists such events: most papers have none, and the proof machinery (OpenTimestamps, Bitcoin
headers, this machine's archive checks) is not loaded for them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from pithauthor.errors import EventError
from pithauthor.protocol.ids import PithNumber
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.outbox import Outbox, OutboxEntry

if TYPE_CHECKING:  # only the judge makes one: a page without proofs to judge loads none
    from pithauthor.protocol.checklist import Verdict

__all__ = [
    "COMPLETENESS",
    "PAGE_BRIEF",
    "PAGE_ROWS",
    "PAGE_SUMMARY",
    "ProofJudge",
    "paper_status",
    "state_brief",
    "state_page",
]

# The completeness items of the paper's page (pith.science: "not attested · not anchored ·
# not stored · refs pending"), each from a part of the verified merged state, never from the
# record's `verification_status` (no signature covers it; a local registry sends none).
COMPLETENESS: tuple[tuple[str, str, str, str], ...] = (
    ("author_claims", "author_attestations", "attested", "not attested"),
    ("timestamp", "timestamp_anchors", "anchored", "not anchored"),
    ("archive_copy", "storage_attestations", "stored", "not stored"),
    ("citations", "citation_signatures", "cited", "no citations"),
    ("replications", "replication_records", "replicated", "no replications"),
)


ProofJudge = Callable[[str, Sequence[Any], str], "Verdict"]
"""The judge of checklist rows 1 and 2: (row item, that row's events of the verified state, the
record's canonical SHA-256) -> its verdict (`pithauthor.registry.judge.judge_proofs`)."""


def paper_status(
    client: RegistryClient, ref: str, *, judge: ProofJudge, every_row: bool = True
) -> dict[str, Any]:
    """The page of the paper `ref` (Pith Number, alias or arXiv id) on `client`'s registry.

    The record and the merged state are verified (the record's receipt, every author event
    against its own key, the merge redone here); the registry's own parts of the state (its
    event ids, which it alone can check) are counted as unverifiable, never as passed. Rows 1
    and 2 of the checklist are done only when `judge` proved them (it is asked only about a
    row whose events the state lists). The outbox part lists what this machine holds for the
    paper, for every registry.

    `every_row`: the claims, citations received and replications, every one; else the first
    PAGE_ROWS of each the state lists (`state_brief`), which is what a text page shows: a
    second look at an unchanged paper then reads a summary whose size does not grow with the
    paper's citations. The counts (`completeness`, `citations_by_relationship`) are whole
    either way."""
    record, record_verdict = client.record_verdict(ref)  # checked once (or kept: see there)
    number = PithNumber.parse(record["pith_number"])
    # not strict: pith.science's states always hold parts nobody else can check (its merge);
    # a page shows them counted as unverifiable instead of showing nothing
    # checked once; when the client keeps documents, what the page shows of it is kept with it
    # and read alone while the state is unchanged (not the whole state again)
    # both summaries are kept whenever the state is verified, so that a text look after a
    # `--json` one (or the other way round) is a 304 too; a look reads only the one it shows
    kind = PAGE_SUMMARY if every_row else PAGE_BRIEF
    others = {k: f for k, f in _SUMMARIES.items() if k != kind}
    shown, state_verdict = client.state_summary(
        number, kind, _SUMMARIES[kind], strict=False, also=others
    )
    paper: Mapping[str, Any] = record.get("paper") or {}
    source = record["canonical_record"].get("source", {})
    outbox = Outbox.existing()  # none yet (nothing ever signed here): nothing it holds
    entries: list[OutboxEntry] = []
    if outbox is not None:
        with outbox:
            entries = outbox.about(number.full)  # through its indexes: by subject, by citing
    mine = [e for e in entries if e.subject == number.full]
    made = [e for e in entries if e.subject != number.full]  # citations made by this paper
    counts = cast("dict[str, int]", shown["counts"])  # as state_page made it
    proofs = _proven_rows(shown, record["canonical_sha256"], judge)
    completeness = [
        _row(item, counts[part], yes, no, proofs.get(item)) for item, part, yes, no in COMPLETENESS
    ]
    refs = shown["references"]
    completeness.append(
        {"item": "references", "count": refs, "label": "refs resolved" if refs else "refs pending"}
    )
    return {
        "registry": client.base_url,
        "pith_number": number.full,
        "short_pith_number": record.get("short_pith_number"),
        "arxiv": f"{source.get('id')}v{source.get('version')}" if source.get("id") else None,
        "version": source.get("version"),
        "title": paper.get("title"),
        "authors": paper.get("authors_text"),
        "verified": {
            "record": {
                "ok": record_verdict["ok"],
                "passed": record_verdict["passed"],
                "unverifiable": record_verdict["unverifiable"],
                "failed": record_verdict["failed"],
            },
            "state": {
                "ok": state_verdict["ok"],
                "passed": state_verdict["passed"],
                "unverifiable": state_verdict["unverifiable"],
                "failed": state_verdict["failed"],
            },
        },
        "completeness": completeness,
        "checklist": _checklist(completeness),
        "claims": shown["claims"],
        "citations_received": shown["citations_received"],
        "citations_by_relationship": shown["relationships"],
        "citations_made": [_made(e) for e in made],
        "replications": shown["replications"],
        "outbox": _by_registry(mine + [e for e in made if e not in mine]),
    }


#: The record page's checklist, rows 1 to 5 in its order (PROTOCOL.md section 4, OBSERVED):
#: the Bitcoin timestamp, the archive copy, author claims, citations, replications.
CHECKLIST: tuple[str, ...] = (
    "timestamp",
    "archive_copy",
    "author_claims",
    "citations",
    "replications",
)


def _checklist(completeness: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_item = {c["item"]: c for c in completeness}
    return [{"row": n, **by_item[item]} for n, item in enumerate(CHECKLIST, start=1)]


PAGE_SUMMARY = "page-3"
"""The name `paper_status` keeps its summary of a state under, every row of every list
(`RegistryClient.state_summary`; `state_page`)."""

PAGE_BRIEF = "page-brief-1"
"""The name of the summary a text page reads: the first PAGE_ROWS rows of each list, and the
counts (`state_brief`)."""

PAGE_ROWS = 10
"""How many claims, citations received and replications a text page lists (the first the
state lists); the counts say how many there are, and `pith status --all` lists every one."""


def state_page(state: Mapping[str, Any]) -> dict[str, Any]:
    """What a paper's page shows of its merged state, verified: claims, citations received,
    replications, the citations received counted per relationship, the size of each part of
    COMPLETENESS, and the references resolved. JSON data: `paper_status` keeps it beside the
    state and reads it alone on a second look."""
    return _summary(state, None)


def state_brief(state: Mapping[str, Any]) -> dict[str, Any]:
    """`state_page` with at most PAGE_ROWS claims, citations received and replications (the
    first the state lists); the counts are whole. What a text page shows: a second look at a
    paper of 100,000 citations reads ten of them, not 100,000."""
    return _summary(state, PAGE_ROWS)


def _summary(state: Mapping[str, Any], rows: int | None) -> dict[str, Any]:
    current: Mapping[str, Any] = state.get("current", {})
    cited = _events(current.get("citation_signatures"))
    return {
        "claims": [_claim(e) for e in _events(current.get("author_attestations"))[:rows]],
        "citations_received": [_citation(e) for e in cited[:rows]],
        "replications": [
            _replication(e) for e in _events(current.get("replication_records"))[:rows]
        ],
        "relationships": _relationships(cited),
        "counts": {part: len(current.get(part, [])) for _, part, _, _ in COMPLETENESS},
        "references": _references(current),
        # the events whose proofs the page judges itself (rows 1 and 2), whole: their verdict
        # depends on what this machine holds beside the state (the headers it can judge by,
        # the archive checks it made), so it is drawn on every look, not kept. A bounded
        # number: a registry listing thousands cannot make every look cost more.
        "anchors": _first(current.get("timestamp_anchors"), PROVEN_AT_MOST),
        "storage": _first(current.get("storage_attestations"), PROVEN_AT_MOST),
    }


_SUMMARIES: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    PAGE_SUMMARY: state_page,
    PAGE_BRIEF: state_brief,
}


def _events(events: object) -> list[Any]:
    return events if isinstance(events, list) else []


def _relationships(cited: list[Any]) -> dict[str, int]:
    """How many citations received say each relationship, most first (then by name)."""
    counts: dict[str, int] = {}
    for event in cited:
        payload = event.get("payload") or {}
        relationship = str(payload.get("relationship"))
        counts[relationship] = counts.get(relationship, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


PROVEN_AT_MOST = 64
"""How many anchor and storage events a page judges (the first the state lists)."""


def _first(events: object, n: int) -> list[Any]:
    return list(events[:n]) if isinstance(events, list) else []


# The rows of the checklist that a registry's word does not make done (docs/cli.md,
# `pith status`): the anchor's proof reaches the record's hash and a Bitcoin header judged
# here; the archive copy's digest is the paper's, as this machine computed it.
_NOT_CHECKED = {
    "timestamp": "anchor claimed by the registry, not checked",
    "archive_copy": "archive copy claimed by the registry, not checked",
}


def _proven_rows(
    shown: Mapping[str, Any], canonical_sha256: str, judge: ProofJudge
) -> dict[str, Verdict]:
    """The verdicts of rows 1 and 2 for the events `shown` keeps (none: no verdict, and
    `judge` is not asked)."""
    verdicts: dict[str, Verdict] = {}
    for item, kept in (("timestamp", "anchors"), ("archive_copy", "storage")):
        events = shown.get(kept) or []
        if events:
            verdicts[item] = judge(item, events, canonical_sha256)
    return verdicts


def _row(item: str, count: int, yes: str, no: str, verdict: Verdict | None) -> dict[str, Any]:
    """One completeness item: done when its part of the verified state holds an event, and,
    for the rows a proof makes done, only when that proof was checked here."""
    row: dict[str, Any] = {"item": item, "count": count}
    if item not in _NOT_CHECKED:
        return {**row, "label": yes if count else no, "done": bool(count)}
    if not count:
        return {**row, "label": no, "done": False, "proven": False, "detail": None}
    assert verdict is not None  # a count means events kept for the verdict
    label = f"{yes} (proven)" if verdict.proven else _NOT_CHECKED[item]
    return {
        **row,
        "label": label,
        "done": verdict.proven,
        "proven": verdict.proven,
        "detail": verdict.detail,
    }


def _references(current: Mapping[str, Any]) -> int:
    """How many references the registry's newest graph snapshot resolved (0: pending)."""
    for snapshot in reversed(current.get("graph_snapshots") or []):
        graph = (snapshot.get("payload") or {}).get("graph_snapshot") or {}
        resolved = (graph.get("references") or {}).get("resolved_work")
        if isinstance(resolved, int):
            return resolved
    return 0


def _signer(event: Mapping[str, Any]) -> dict[str, Any]:
    signer = event.get("signer") or {}
    return {"key_id": signer.get("key_id"), "signer_id": signer.get("signer_id")}


def _claim(event: Mapping[str, Any]) -> dict[str, Any]:
    payload = event.get("payload") or {}
    author = payload.get("author") or {}
    proofs = payload.get("identity_proofs") or []
    return {
        **_signer(event),
        "event_id": event.get("event_id"),
        "name": author.get("name"),
        "position": author.get("position"),
        # identity-bound: the claim names proofs binding its key to a person (an ORCID record,
        # a web page, the paper's PDF); `pith verify --orcid` checks them over the network
        "identity_bound": bool(proofs),
        "identity_proofs": [p.get("kind") for p in proofs if isinstance(p, Mapping)],
    }


def _citation(event: Mapping[str, Any]) -> dict[str, Any]:
    payload = event.get("payload") or {}
    return {
        **_signer(event),
        "event_id": event.get("event_id"),
        "citing_pith_number": payload.get("citing_pith_number"),
        "relationship": payload.get("relationship"),
    }


def _replication(event: Mapping[str, Any]) -> dict[str, Any]:
    payload = event.get("payload") or {}
    return {
        **_signer(event),
        "event_id": event.get("event_id"),
        "kind": payload.get("kind"),
        "outcome": payload.get("outcome"),
        "summary": payload.get("summary"),
    }


def _made(entry: OutboxEntry) -> dict[str, Any]:
    try:
        payload: Mapping[str, Any] = entry.event.get("payload") or {}
    except EventError:  # its body was dropped from the ledger: its row is all there is
        payload = {}
    return {
        "cited_pith_number": entry.subject,
        "relationship": payload.get("relationship"),
        "event_id": entry.event_id,
        "registry": entry.registry,
        "state": entry.state,
    }


def _by_registry(entries: Iterable[OutboxEntry]) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for e in entries:
        group = groups.setdefault(e.registry, {"registry": e.registry, "events": []})
        group["events"].append(
            {
                "event_id": e.event_id,
                "event_type": e.event_type,
                "state": e.state,
                "subject": e.subject,
                "reason": e.reason,
            }
        )
    return list(groups.values())
