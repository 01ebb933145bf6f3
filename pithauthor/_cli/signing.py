"""What `pith claim`, `pith cite` and `pith replicate` share after parsing: the key, where the
signed events go, and what to say about it. The decisions are the library's
(`pithauthor.registry.client`, `pithauthor.registry.submit`); this module calls them and prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pithauthor._cli.output import ask, at_terminal, data, message
from pithauthor.errors import ConfirmationNeeded, Declined

if TYPE_CHECKING:
    from pithauthor.keys import AuthorKey
    from pithauthor.protocol import AuthorEvent
    from pithauthor.registry import OnChange, RegistryAccess, Statements
    from pithauthor.sign import Settle


def submit_now(
    registry: RegistryAccess, *, only: Sequence[str] | None = None, quiet: bool = False
) -> None:
    """Send what is pending in the outbox (with `only`: just those events, the ones a
    signing command showed); events that cannot go now stay there, and so do the others."""
    from pithauthor.registry import submit_pending

    result = submit_pending(client=registry.client, note=message, only=only)
    if not quiet:
        message(f"submitted: {result.summary()}")
        for eid, reason in result.rejected.items():
            message(f"rejected {eid}: {reason}")
    if result.error is not None:
        message("the events stay in the outbox; `pith submit` sends them later")
    others = len(result.others_pending)
    if others:
        rows = "row stays" if others == 1 else "rows stay"
        message(
            f"{others} other pending {rows} in the outbox (not shown here): "
            "`pith submit` sends them"
        )
    result.raise_for_failure()


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
    destination: str = ""
    _held: Statements | None = None
    _in_out: frozenset[str] = frozenset()  # the events `out` held before this run

    def __post_init__(self) -> None:
        # Refused before any look-up or key is opened: a script that would publish without
        # anyone seeing what is signed must say so with --yes.
        if self.submit and not self.yes and not at_terminal():
            raise ConfirmationNeeded(
                "--submit publishes for good and there is no terminal to confirm on: "
                "add --yes (nothing was signed or sent)"
            )

    def confirm(self, what: str, preview: Sequence[str]) -> None:
        """Before signing: show `preview` (stderr); on a terminal ask whether to sign `what`
        (this claim, these 3 citations...), and submit it with --submit. Anything but yes
        raises Declined (exit 2). --yes skips the question, never the preview."""
        for line in preview:
            message(line)
        if self.yes or not at_terminal():  # no terminal: __post_init__ refused a bare --submit
            return
        if self.submit:
            question = f"Sign {what} and submit to {self.registry.client.base_url}?"
        elif self.out is not None or self.print_events:
            question = f"Sign {what}?"
        else:
            question = f"Sign {what} into the outbox (`pith submit` publishes it)?"
        if not ask(question):
            raise Declined("nothing was stored or sent (answered no)")

    def signer(self) -> AuthorKey:
        """The author's active signing key (or the named one), unlocked from the key store."""
        from pithauthor.keys import load_signing_key, passphrase_source

        return load_signing_key(self.key, passphrase=passphrase_source(self.passphrase_file))

    def held(self) -> Statements:
        """What the outbox already holds for this registry (read once)."""
        from pathlib import Path

        from pithauthor.registry import Statements, events_in_file

        if self._held is None:
            in_out = events_in_file(Path(self.out)) if self.out is not None else []
            self._in_out = frozenset(e["event_id"] for e in in_out)
            self._held = Statements.from_outbox(
                self.registry.options.registry, note=message, also=in_out
            )
        return self._held

    def settle(self, on_change: OnChange) -> Settle:
        """The `settle=` that reuses a statement already made and names what a change
        replaces (pithauthor.registry.statements)."""
        return self.held().settle(on_change)

    def deliver(self, events: Sequence[AuthorEvent]) -> str:
        """Write the events where asked; return where they went."""
        from pithauthor.registry import deliver

        show = data if self.print_events else None
        self.destination = deliver(
            events,
            self.out,
            show=show,
            submit=self.submit,
            registry=self.registry.options.registry,
            note=message,
        )
        return self.destination

    def send(self, events: Sequence[str]) -> None:
        """With --submit: send `events` (what this command just signed or reused) and nothing
        else: rows an earlier run left pending were never shown here. Else say what sends
        them (the next step)."""
        if self.submit:
            submit_now(self.registry, only=events)
        elif "the outbox" in self.destination:
            from pithauthor.registry import registry_binding

            where = registry_binding(self.registry.options.registry)
            message(f"next: `pith submit` sends it to {where}, the registry it is bound to")
        elif self.out is not None:
            message(f"next: `pith submit {self.out}` sends them to the registry")

    def reused(self, event: AuthorEvent) -> bool:
        """True when `event` is one the outbox held (the same statement, signed before)."""
        settled = self._held.last if self._held is not None else None
        return (
            settled is not None
            and settled.decision == "reused"
            and (settled.event_id == event["event_id"])
        )

    def one(self, event: AuthorEvent) -> None:
        """Deliver one event, say so on stderr, and send it if asked. An event the outbox
        already held (the same statement, signed before) is reused: it is not written again."""
        settled = self._held.last if self._held is not None else None
        if self.reused(event):
            in_out = event["event_id"] in self._in_out
            message(reused_line(event, self.out if in_out else None))
            out = None if in_out else self.out  # never a second line in the same file
            # where asked; with --submit into the outbox too (a no-op when it holds it)
            if out is not None or self.print_events or self.submit:
                from pithauthor.registry import deliver

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
