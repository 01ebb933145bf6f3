"""What `pith status PAPER` does and prints, without Typer: the Typer command (`status_cmd`) and
the entry point's plain form (`pithauthor._cli.entry`) both run `show_status`.

Why a plain form: a Typer command with a text argument imports pydantic (Typer coerces every
such parameter through a pydantic `TypeAdapter`), and Typer, click and pydantic together cost
more CPU than a second look at a 10,000-event paper itself (under 0.2 s). The plain
forms (`plain_form`: one PAPER, --registry, --trust-manifest, --trust-local-registry, --json,
--all) are answered before Typer loads; anything else, --help or a mistake included, is Typer's
(tests/cli/test_status_fast_path.py runs forms both ways).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from pithauthor._cli.output import data_lines, emit_json, warn
from pithauthor.protocol.text import escaped

if TYPE_CHECKING:
    from pithauthor.protocol.checklist import Verdict

TRUST_LOCAL_ENV = "PITH_TRUST_LOCAL_REGISTRY"
"""The environment variable of `--trust-local-registry` (options.TRUST_LOCAL_ENV): when it is
set, the form is Typer's, which reads it (tests/cli/test_status_fast_path.py holds them equal)."""

# the options the entry point reads itself: name -> (parameter, FLAG / VALUE / MANY)
FLAG, VALUE, MANY = "flag", "value", "many"
PLAIN_OPTIONS: Final[dict[str, tuple[str, str]]] = {
    "--registry": ("registry", VALUE),
    "--trust-manifest": ("trust_manifest", MANY),
    "--trust-local-registry": ("trust_local", FLAG),
    "--json": ("as_json", FLAG),
    "--all": ("all_rows", FLAG),
}


def plain_form(args: list[str], environ: dict[str, str]) -> dict[str, Any] | None:
    """The parameters of `pith status ARGS` (those of `show_status`) when ARGS is a plain form,
    else None: Typer then reads ARGS (and prints their errors).

    Plain: exactly one PAPER; no other word starting with `-` but PLAIN_OPTIONS (`--opt VALUE`
    or `--opt=VALUE`), each value non-empty and not starting with `-`, each option but
    --trust-manifest at most once; every word valid UTF-8; PITH_TRUST_LOCAL_REGISTRY unset."""
    if TRUST_LOCAL_ENV in environ:
        return None
    values: dict[str, Any] = {
        "ref": None,
        "registry": None,
        "trust_manifest": [],
        "trust_local": False,
        "as_json": False,
        "all_rows": False,
    }
    seen: set[str] = set()
    words = iter(args)
    for word in words:
        if not _plain(word):
            return None
        if not word.startswith("-"):
            if values["ref"] is not None:
                return None
            values["ref"] = word
            continue
        name, equals, value = word.partition("=")
        option = PLAIN_OPTIONS.get(name)
        if option is None or (option[1] != MANY and name in seen):
            return None
        seen.add(name)
        parameter, kind = option
        if kind == FLAG:
            if equals:
                return None
            values[parameter] = True
            continue
        if not equals:
            value = next(words, "")
        if not _plain(value) or value.startswith("-"):
            return None
        if kind == MANY:
            values[parameter].append(value)
        else:
            values[parameter] = value
    return values if values["ref"] is not None else None


def _plain(word: str) -> bool:
    """A word the plain form reads as Typer would: not empty, and valid UTF-8 (a word the
    shell passed undecodable holds surrogates, which Typer reports in its own way)."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return word != ""


def show_status(
    ref: str,
    registry: str | None,
    trust_manifest: list[str],
    trust_local: bool,
    as_json: bool,
    all_rows: bool = False,
) -> None:
    """`pith status`: the page of `ref` from the registry (record and merged state verified;
    the state's summary kept and revalidated), printed as text or JSON. The text lists the
    first PAGE_ROWS claims, citations received, replications and citations made, with their
    counts; `all_rows` (--all) every one, as JSON always does."""
    from pithauthor._cli.access import registry_options
    from pithauthor.registry.client import RecordCache
    from pithauthor.registry.outbox import STATES
    from pithauthor.registry.page import PAGE_ROWS, paper_status

    # as options.make_client does (which loads Typer for its option declarations)
    options = registry_options(registry, trust_manifest, trust_local, parallel=4)
    with options.connect(warn=warn) as client:
        cache = RecordCache()  # the state verified before, revalidated (If-None-Match)
        try:
            client.keep(cache)
            # a text page reads only the first rows it shows (a summary that does not grow
            # with the paper's fame), JSON and --all every row
            every_row = as_json or all_rows
            page = paper_status(client, ref, judge=judge_proofs, every_row=every_row)
        finally:
            cache.close()
    if as_json:
        emit_json(page)
        return
    data_lines(page_lines(page, STATES, None if all_rows else PAGE_ROWS))


def judge_proofs(item: str, events: Sequence[Any], canonical_sha256: str) -> Verdict:
    """`pithauthor.registry.judge.judge_proofs`, loaded only when a page has a proof to judge:
    most papers list no anchor and no archive copy, and the proof machinery (OpenTimestamps,
    Bitcoin headers, this machine's archive checks) was about 8 ms of a second look."""
    from pithauthor.registry.judge import judge_proofs as judge

    return judge(item, events, canonical_sha256)


#: The record page's checklist, in its order and words (PROTOCOL.md section 4, OBSERVED).
CHECKLIST_NAMES: Final[dict[str, str]] = {
    "timestamp": "Bitcoin timestamp",
    "archive_copy": "archive copy",
    "author_claims": "author claims",
    "citations": "citations",
    "replications": "replications",
}


def page_lines(page: dict[str, Any], states: tuple[str, ...], rows: int | None) -> list[str]:
    """The page as text (outbox counts in the order of `states`); everything the registry or
    another signer wrote is escaped. `rows`: how many claims, citations received, citations
    made and replications to list (the first of each; None: every one), then one line says
    how many more there are and how to list them: a page of 100,000 citations keeps its
    checklist in sight. The counts are the page's own (`completeness`), whole either way."""
    e = escaped
    arxiv = f"  arXiv:{page['arxiv']}" if page["arxiv"] else ""
    lines = [
        f"{page['pith_number']}  ({page['short_pith_number']}){arxiv}",
        e(page["title"] or "(no title)"),
        # pith.science sorts the authors by given name: never shown as if in the paper's order
        e(page["authors"]) + " (as the registry lists them, not necessarily the paper's order)"
        if page["authors"]
        else "(no authors)",
        f"version {page['version']}  on {page['registry']}",
    ]
    for what, v in page["verified"].items():
        verdict = "verified" if v["ok"] else "FAILED: " + ", ".join(v["failed"])
        extra = f"; unverifiable here: {', '.join(v['unverifiable'])}" if v["unverifiable"] else ""
        lines.append(f"{what}: {verdict} ({v['passed']} checks passed{extra})")
    lines.append(" · ".join(c["label"] for c in page["completeness"]))
    lines.append("checklist (as the record page lists it)")
    for row in page["checklist"]:
        mark = "done" if row["done"] else "open"
        line = f"  {row['row']} {CHECKLIST_NAMES[row['item']]:<17} {mark}: {row['label']}"
        if row.get("detail"):  # what proves it, or why it is not proven (pith's own words)
            line += f"; {row['detail']}"
        lines.append(line)
    counts = {c["item"]: c["count"] for c in page["completeness"]}
    claims = page["claims"][:rows]
    lines.append(f"claims ({counts['author_claims']})")
    for c in claims:
        bound = (
            f"identity-bound ({', '.join(c['identity_proofs'])})"
            if c["identity_bound"]
            else "not identity-bound (key only)"
        )
        where = f"#{c['position']}" if c["position"] is not None else "(no position)"
        lines.append(f"  {where} {e(str(c['name']))}  {c['key_id']}  {bound}")
    lines.extend(_more(counts["author_claims"], len(claims)))
    received = page["citations_received"][:rows]
    by_relationship = ", ".join(
        f"{n} {e(relationship)}" for relationship, n in page["citations_by_relationship"].items()
    )
    said = f": {by_relationship}" if by_relationship else ""
    lines.append(f"citations received ({counts['citations']}){said}")
    for c in received:
        lines.append(f"  {e(str(c['citing_pith_number']))} {c['relationship']}  by {c['key_id']}")
    lines.extend(_more(counts["citations"], len(received)))
    made = page["citations_made"]
    lines.append(f"citations made, signed on this machine ({len(made)})")
    for c in made[:rows]:
        lines.append(f"  {c['relationship']} {c['cited_pith_number']}  {c['state']}")
    lines.extend(_more(len(made), len(made[:rows])))
    replications = page["replications"][:rows]
    lines.append(f"replications ({counts['replications']})")
    for r in replications:
        summary = e(str(r["summary"] or ""))
        lines.append(f"  {r['kind']} {r['outcome']}  by {r['key_id']}: {summary}")
    lines.extend(_more(counts["replications"], len(replications)))
    if not page["outbox"]:
        lines.append("outbox: nothing for this paper")
    for group in page["outbox"]:
        held = [ev["state"] for ev in group["events"]]
        said = ", ".join(f"{held.count(s)} {s}" for s in states if s in held)
        lines.append(f"outbox for {group['registry']}: {said}")
    return lines


def _more(total: int, shown: int) -> list[str]:
    """The line under a list that shows `shown` of its `total` rows (none when it shows all)."""
    if total <= shown:
        return []
    return [f"  ... and {total - shown} more (--all lists every one, as --json does)"]
