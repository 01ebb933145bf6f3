"""What `pith claim`, `pith cite` and `pith replicate` share after parsing: the preview of what
is about to be signed (the paper, who signs, what the statement says), the key, where the signed
events go (outbox, registry or file), and what to say about them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pithauthor._cli.output import ask, at_terminal, data, message
from pithauthor.errors import ConfirmationNeeded, Declined
from pithauthor.protocol.text import escaped

if TYPE_CHECKING:
    from pithauthor.keys.author import AuthorKey, DeferredKey
    from pithauthor.protocol.documents import AuthorEvent
    from pithauthor.protocol.ids import PithNumber
    from pithauthor.protocol.record import AuthorCheck
    from pithauthor.protocol.subject import Subject
    from pithauthor.registry.access import RegistryAccess
    from pithauthor.registry.client import RegistryClient
    from pithauthor.registry.statements import OnChange, Statements
    from pithauthor.sign import Settle
    from pithauthor.timestamps.time_sources import Sources


# What `pith claim`, `pith cite` and `pith replicate` share after parsing: the key, where the
# signed events go, and what to say about it. The decisions are the library's
# (`pithauthor.registry.client`, `pithauthor.registry.submit`); this module calls them and prints.


def submit_now(
    registry: RegistryAccess, *, only: Sequence[str] | None = None, quiet: bool = False
) -> None:
    """Send what is pending in the outbox (with `only`: just those events, the ones a
    signing command showed); events that cannot go now stay there, and so do the others."""
    from pithauthor.progress import Advance, report
    from pithauthor.registry.submit import submit_pending

    def sent(done: int, total: int) -> None:  # a bar on a terminal (output.Reports)
        report(Advance(f"submitting to {registry.client.base_url}", done, total))

    result = submit_pending(client=registry.client, note=message, only=only, progress=sent)
    if not quiet:
        message(f"submitted: {result.summary()}")
        for eid, reason in result.rejected.items():
            message(f"rejected {eid}: {reason}")
    send_time(registry.client, [*result.accepted, *result.duplicates, *result.confirmed], quiet)
    held = result.held_line()
    if held is not None:
        message(held)
    if result.error is not None:
        message(f"the events stay in the outbox; `{submit_command(registry)}` sends them later")
    others = len(result.others_pending)
    if others:
        rows = "row stays" if others == 1 else "rows stay"
        message(
            f"{others} other pending {rows} in the outbox (not shown here): "
            f"`{submit_command(registry)}` sends them"
        )
    result.raise_for_failure()


def send_time(client: RegistryClient, event_ids: Sequence[str], quiet: bool = False) -> None:
    """Send the outbox's sidecars of `event_ids` (the events just accepted) to the client's
    registry when its record names a trusted-time action (docs/protocol.md "Trusted time"):
    one line when sent, one warning line when they could not be, never a failure."""
    if not event_ids:
        return
    from pithauthor.registry.trusted_time import send_sidecars

    sent, problem = send_sidecars(client, event_ids)
    if sent and not quiet:
        message(f"trusted time: sent the proofs of {sent} event(s) to {client.base_url}")
    if problem is not None:
        message(f"warning: trusted time not sent to {client.base_url}: {problem}")


@dataclass
class Output:
    """What every signing command shares after signing: the key to open, where the events go,
    and whether to send them now."""

    key: str | None
    passphrase_file: str | None
    out: str | None
    print_events: bool
    submit: bool
    registry: RegistryAccess
    yes: bool = False
    timestamp: bool = True  # ask for trusted time after delivering (`--no-timestamp`: not)
    destination: str = ""
    _held: Statements | None = None
    _in_out: frozenset[str] = frozenset()  # the events `out` held before this run
    _recalled: set[str] = field(default_factory=set)  # papers whose state was read (`recall`)
    _key: DeferredKey | None = None
    _sources: Sources | None = None

    def __post_init__(self) -> None:
        # Refused before any look-up or key is opened: a script that would publish without
        # anyone seeing what is signed must say so with --yes.
        if self.submit and not self.yes and not at_terminal():
            raise ConfirmationNeeded(
                "--submit publishes for good and there is no terminal to confirm on: "
                "add --yes (nothing was signed or sent)"
            )
        if self.timestamp:  # a bad PITH_TSA or PITH_OTS_CALENDARS is bad input, before signing
            from pithauthor.timestamps.time_sources import sources_from_env

            self._sources = sources_from_env()

    def confirm(self, what: str, preview: Sequence[str]) -> None:
        """Before signing: show `preview` (stderr); on a terminal ask whether to sign `what`
        (this claim, these 3 citations...), and submit it with --submit. Anything but yes
        raises Declined (exit 2). --yes skips the question, never the preview.

        The key is opened (its passphrase asked) after the author's yes; with no question to
        ask (--yes, or no terminal: the passphrase comes from a file or the environment), before
        the preview, so that a wrong passphrase stays the one error line."""
        unasked = self.yes or not at_terminal()  # no terminal: __post_init__ refused --submit
        if unasked:
            self._open()
        for line in preview:
            message(line)
        if unasked:
            return
        if self.submit:
            question = f"Sign {what} and submit to {self.registry.client.base_url}?"
        elif self.out is not None or self.print_events:
            question = f"Sign {what}?"
        else:
            question = f"Sign {what} into the outbox (`pith submit` publishes it)?"
        if not ask(question):
            raise Declined("nothing was stored or sent (answered no)")
        self._open()  # the passphrase, asked now: after the preview and the author's yes

    def open_unasked(self) -> None:
        """Open the key now when no question will be asked (--yes, or no terminal: the
        passphrase comes from a file or the environment): a command that works for minutes
        before it can show what it signs (`pith archive`) stops on a bad passphrase or key
        before that work, not after it. On a terminal the passphrase is still asked after the
        preview and the author's yes (`confirm`)."""
        if self.yes or not at_terminal():
            self.signer().unlock()  # once: the events signed after it are signed at once

    def signer(self) -> DeferredKey:
        """The author's active signing key (or the named one). Its secret is opened only when
        `confirm` has its yes (or has no question to ask), or when the events are delivered:
        what is built before carries pending signatures (`pithauthor.keys.DeferredKey`), which
        are never written anywhere."""
        from pithauthor.keys.author import deferred_signing_key
        from pithauthor.keys.passphrase import passphrase_source

        if self._key is None:
            passphrase = passphrase_source(self.passphrase_file)
            self._key = deferred_signing_key(self.key, passphrase=passphrase)
        return self._key

    def _open(self) -> None:
        if self._key is not None and self._key.pending:
            self._key.unlock()

    def seal(self, events: Sequence[AuthorEvent]) -> None:
        """Put the real signatures into `events` (the key opened now if it was not yet)."""
        if self._key is not None:
            self._key.sign_pending(events)

    def held(self) -> Statements:
        """What the outbox already holds for this registry (read once)."""
        from pathlib import Path

        from pithauthor.registry.statements import Statements, events_in_file

        if self._held is None:
            in_out = events_in_file(Path(self.out)) if self.out is not None else []
            self._in_out = frozenset(e["event_id"] for e in in_out)
            self._held = Statements.from_outbox(
                self.registry.options.registry, note=message, also=in_out
            )
        return self._held

    def recall(self, paper: PithNumber, key_id: str, *, ask: bool = True) -> None:
        """Learn what the registry's merged state of `paper` holds by key `key_id` and its
        retired predecessors (signed on another machine, or dropped from the outbox), so that
        a statement is reused or corrected as if made here. Without `ask`, only the
        predecessors are named (what the outbox holds of them counts; no registry is asked).
        A state that cannot be read is said in one note, and only the outbox counts."""
        from pithauthor.errors import (
            AuthError,
            NetworkError,
            RegistryRejected,
            VerificationError,
        )
        from pithauthor.registry.statements import key_lineage, own_events_in_state

        held = self.held()
        mine, older = key_lineage(key_id)
        held.predecessors = frozenset(older)
        if not ask or paper.full in self._recalled or not mine:
            return
        self._recalled.add(paper.full)
        try:
            # two tries: with a record given by file the registry may be away, and this look
            # is a memory, not the command's purpose
            state = self.registry.client.state(paper, strict=False, attempts=2)
        except RegistryRejected:
            return  # the registry holds no such paper (a record given by file): nothing said
        except (AuthError, NetworkError, VerificationError) as exc:
            message(
                f"note: the merged state of {paper.full} at {self.registry.base_url} could "
                f"not be read ({exc}); only the outbox tells what you already signed"
            )
            return
        learnt = held.learn(own_events_in_state(state, [mine, *older]))
        if learnt:
            message(
                f"the registry {self.registry.base_url} holds {learnt} event(s) of yours on "
                f"{paper.full} that this outbox does not (signed elsewhere)"
            )

    def settle(self, on_change: OnChange) -> Settle:
        """The `settle=` that reuses a statement already made and names what a change
        replaces (pithauthor.registry.statements)."""
        return self.held().settle(on_change)

    def deliver(self, events: Sequence[AuthorEvent]) -> str:
        """Write the events where asked; return where they went."""
        from pithauthor.registry.submit import deliver

        self.seal(events)  # nothing leaves memory with a pending signature
        show = data if self.print_events else None
        self.destination = deliver(
            events,
            self.out,
            show=show,
            submit=self.submit,
            registry=self.registry.options.registry,
            note=message,
            # the outbox `held` opened (and checked) for this registry, not opened again
            outbox=None if self._held is None else self._held.outbox,
        )
        self.stamp(events)
        return self.destination

    def stamp(self, events: Sequence[AuthorEvent]) -> None:
        """Ask for the events' trusted time once they are stored (docs/protocol.md "Trusted
        time"): kept in the outbox and beside `out`. Never fails signing: a source that cannot
        be asked now is one warning line, and `pith timestamp` or the next `pith submit`
        fetches its proof. Events only printed (--json alone) have nowhere to keep proofs."""
        in_outbox = "the outbox" in self.destination
        if self._sources is None or self._sources.empty or not (in_outbox or self.out):
            return
        from pithauthor.registry.trusted_time import stamp_signed

        got = stamp_signed(events, self._sources, in_outbox=in_outbox, out=self.out)
        line = got.warning()
        if line is not None:
            later = f"pith timestamp {self.out}" if self.out and not in_outbox else "pith submit"
            message(f"{line} (`{later}` fetches it later)")

    def send(self, events: Sequence[str]) -> None:
        """With --submit: send `events` (what this command just signed or reused) and nothing
        else: rows an earlier run left pending were never shown here. Else say what sends
        them (the next step)."""
        if self.submit:
            submit_now(self.registry, only=events)
        elif "the outbox" in self.destination:
            from pithauthor.registry.client import registry_binding

            where = registry_binding(self.registry.options.registry)
            message(f"next: `{submit_command(self.registry)}` sends it to {where}")
        elif self.out is not None:
            command = submit_command(self.registry, self.out)
            message(f"next: `{command}` sends them to {self.registry.base_url}")

    def reused(self, event: AuthorEvent) -> bool:
        """True when `event` is one the outbox held (the same statement, signed before)."""
        return self._held is not None and self._held.settled(event).decision == "reused"

    def one(self, event: AuthorEvent) -> None:
        """Deliver one event, say so on stderr, and send it if asked. An event the outbox
        already held (the same statement, signed before) is reused: it is not written again."""
        settled = self._held.settled(event) if self._held is not None else None
        self.seal([event])
        if self.reused(event):
            in_out = event["event_id"] in self._in_out
            there = self._held is not None and event["event_id"] in self._held.from_registry
            where = f"the registry {self.registry.base_url}" if there else None
            message(reused_line(event, self.out if in_out else where))
            out = None if in_out else self.out  # never a second line in the same file
            # where asked; with --submit into the outbox too (a no-op when it holds it)
            if out is not None or self.print_events or self.submit:
                from pithauthor.registry.submit import deliver

                show = data if self.print_events else None
                self.destination = deliver(
                    [event],
                    out,
                    show=show,
                    submit=self.submit,
                    registry=self.registry.options.registry,
                    note=message,
                )
            self.send([event["event_id"]])
            return
        if settled is not None and settled.replaced is not None:
            message(f"replaces {settled.replaced[:19]}… (the merge shows this one instead)")
        message(summary(event, self.deliver([event])))
        self.send([event["event_id"]])


def submit_command(registry: RegistryAccess, file: str | None = None) -> str:
    """The `pith submit` that sends what a signing command left (the outbox's rows for its
    registry, or FILE's events), with the flags they need to go as printed: the registry they
    are bound to and the trust the record was checked with (a local registry's key is trusted
    only when asked again). Quoted for a POSIX shell."""
    import shlex

    from pithauthor.registry.client import registry_binding

    options = registry.options
    words = ["pith", "submit", *([file] if file is not None else [])]
    words += ["--registry", registry_binding(options.registry)]
    for manifest in options.trust_manifests:
        words += ["--trust-manifest", manifest]
    if options.trust_local:
        words.append("--trust-local-registry")
    return shlex.join(words)


def reused_line(event: AuthorEvent, where: str | None = None) -> str:
    """`already signed: author_attestation sha256:1da6c9b7… for pith:2023:NFG5PAOX…, …`;
    `where` names the file that holds it (default: the outbox)."""
    return (
        f"already signed: {event['event_type']} {event['event_id'][:15]}… for "
        f"{_short(event)} is in {where or 'the outbox'}; nothing new was signed"
    )


def _short(event: AuthorEvent) -> str:
    number = str(event["subject_pith_number"])
    return number[: len("pith:YYYY:") + 8] + "…"


def summary(event: AuthorEvent, destination: str) -> str:
    """`signed citation_signature sha256:1da6c9b7… for pith:2023:NFG5PAOX… → out.jsonl`."""
    what = f"{event['event_type']} {event['event_id'][:15]}…"
    return f"signed {what} for {_short(event)} → {destination}"


# What a signing command shows before it signs (on stderr): the paper as the verified record
# gives it (Pith Number, arXiv version, title, authors), who signs (public name, ORCID iD, key id)
# and what the statement says. Text from a record is shown with control characters escaped, so a
# hostile title cannot rewrite the terminal.

HEADER = "{what} to sign (public and permanent once submitted):"

_TITLE_WIDTH = 56


def shown(text: str) -> str:
    """`text` safe for a terminal: control and format characters as \\x.. / \\u.... escapes
    (the one rule, `pithauthor.protocol.text.escaped`)."""
    return escaped(text)


def _row(label: str, value: str) -> str:
    return f"  {label:<10} {value}"


def paper_lines(
    paper: Subject,
    label: str = "paper",
    *,
    order: Sequence[str] | None = None,
    marked: Sequence[int] = (),
) -> list[str]:
    """Number and arXiv version, title and authors of `paper`: the authors in arXiv's `order`
    when it is given (numbered, the places in `marked` followed by "(you)"), else as its record
    lists them, which is not the paper's order (pith.science sorts them by given name)."""
    version = f"v{paper.source_version}" if paper.source_version is not None else ""
    source = f" (arXiv {shown(paper.source_id)}{version})" if paper.source_id else ""
    title = shown(paper.title) if paper.title else "(the record gives no title)"
    if order:
        authors = ", ".join(
            f"{i} {shown(a)}{' (you)' if i in marked else ''}" for i, a in enumerate(order, 1)
        )
        authors += " (arXiv's order)"
    elif paper.authors:
        authors = ", ".join(shown(a) for a in paper.authors)
        authors += " (the record's list, not the paper's order)"
    else:
        authors = "(the record lists no authors)"
    return [
        _row(label, f"{paper.pith_number.full}{source}"),
        _row("title", title),
        _row("authors", authors),
    ]


def signer_line(
    key: AuthorKey | DeferredKey, name: str | None = None, orcid_id: str | None = None
) -> str:
    """`signer     Ada Lovelace · ORCID 0000-… · key ed25519:…`."""
    who = name or key.public_name or f"(no public name; key {key.name!r})"
    orcid_id = orcid_id or key.orcid
    orcid = f"ORCID {orcid_id}" if orcid_id else "no ORCID iD"
    return _row("signer", f"{shown(who)} · {orcid} · key {key.key_id}")


def claim_preview(
    paper: Subject, key: AuthorKey | DeferredKey, event: AuthorEvent, checked: AuthorCheck
) -> list[str]:
    """The claim as signed: its payload's name, ORCID iD, position, statement and proofs; the
    paper's authors in arXiv's order (when it was had) with the signer's place marked."""
    # read from the signed event (held in memory until the author says yes), not from the
    # options: the author sees the very text the signature covers, never a paraphrase of it
    payload: Any = event["payload"]
    author = payload["author"]
    signed = author.get("position")
    marked = (signed,) if isinstance(signed, int) else checked.positions
    lines = [
        HEADER.format(what="An author claim"),
        *paper_lines(paper, order=checked.order, marked=marked),
        signer_line(key, author["name"], author.get("orcid")),
        _row("position", shown(checked.note)),
        _row("statement", shown(payload["statement"])),
    ]
    for proof in payload.get("identity_proofs", []):
        lines.append(_row("proof", f"{proof['kind']}: {shown(proof['locator'])}"))
    return lines


def _citing(citing: PithNumber, note: str | None) -> list[str]:
    """Your paper's row, and how its number was checked (when it was given in full)."""
    return [_row("citing", f"{citing.full} (your paper)"), *([_row("", note)] if note else [])]


def citation_preview(
    citing: PithNumber,
    citing_note: str | None,
    cited: Subject,
    relationship: str,
    key: AuthorKey | DeferredKey,
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
    key: AuthorKey | DeferredKey,
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
    key: AuthorKey | DeferredKey,
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
        # the arXiv version too: each version is its own record, and the one signed is shown
        version = (
            f"{paper.source_id}v{paper.source_version}, "
            if paper.source_id and paper.source_version
            else ""
        )
        cited = f"{title} ({version}{paper.pith_number.alias(8)}…)"
        lines.append(f"  {shown(ref):<{width}}  {cited:<{_TITLE_WIDTH}}  {relationship}")
    lines.append(signer_line(key))
    return lines
