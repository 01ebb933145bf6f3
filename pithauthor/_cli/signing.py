"""What `pith claim`, `pith cite` and `pith replicate` share: the key, the subject paper, and
where the signed events go. Imported inside the commands only (start-up time)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pithauthor._core.pith_number import PithNumber
from pithauthor._core.reference import classify_reference
from pithauthor._core.subject import Subject
from pithauthor.errors import DocumentError, InputError

if TYPE_CHECKING:
    from pithauthor._core.trust import Trust
    from pithauthor.keys import AuthorKey
    from pithauthor.sign import AuthorEvent
    from pithauthor.submit import RegistryClient


def load_key(name: str | None, passphrase_file: str | None) -> AuthorKey:
    """The author's active signing key (or the named one), unlocked from the key store."""
    from pithauthor.keys import load_signing_key, passphrase_source

    return load_signing_key(name, passphrase=passphrase_source(passphrase_file))


class RegistryAccess:
    """The registry a signing command may need (to fetch records, or to submit), opened on
    first use only: a command given every record by file never touches the network."""

    def __init__(self, registry: str | None, trust_manifest: list[str], trust_local: bool) -> None:
        from pithauthor._cli.registryopts import check_registry_options

        check_registry_options(registry, trust_manifest)
        self.options = (registry, trust_manifest, trust_local)
        self._client: RegistryClient | None = None

    @property
    def client(self) -> RegistryClient:
        if self._client is None:
            from pithauthor._cli.registryopts import make_client

            self._client = make_client(*self.options)
        return self._client

    def trust(self) -> Trust:
        """The keys record files are checked against: the pinned key, `PITH_TRUST`,
        `--trust-manifest`, and (only with --trust-local-registry) the local registry's."""
        if self.options[2]:
            return self.client.trust
        from pithauthor.trust import default_trust

        return default_trust(self.options[1])

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> RegistryAccess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def subject_for(ref: str, record: str | None, registry: RegistryAccess) -> Subject:
    """The paper `ref` (Pith Number, alias or arXiv id) names: from a record file, checked to be
    that paper, or else from the registry (its record verified)."""
    if record is None:
        return Subject.from_document(registry.client.record(ref))
    subject = read_subject(record, registry.trust())
    check_names(ref, subject, record)
    return subject


def read_subject(path: str, trust: Trust | None = None) -> Subject:
    """The subject of a record JSON file (registry record, `pith number from-arxiv --json`,
    bundle or state); `-` reads stdin. A document that carries a registry receipt is verified
    whole and refused (VerificationError, exit 1) when any check fails; one without a receipt
    (computed locally) is taken, and stderr says so."""
    from pithauthor._cli.output import message
    from pithauthor.errors import VerificationError
    from pithauthor.verify import detect_kind, read_documents, verify_document

    docs = read_documents(path)
    if len(docs) != 1:
        raise DocumentError(f"{path} holds {len(docs)} documents; give one record")
    doc = docs[0]
    subject = Subject.from_document(doc)
    kind = detect_kind(doc)
    if kind == "computed_record" or (kind == "record" and "receipt" not in doc):
        message(
            f"note: {path} has no registry receipt: its Pith Number was computed, not vouched "
            "for by a registry"
        )
        return subject
    report = verify_document(doc, trust)
    if not report.ok:
        failed = ", ".join(c.name for c in report.failed[:6])
        raise VerificationError(f"{path} does not verify ({failed}); not signing for it")
    return subject


def check_names(ref: str, subject: Subject, where: str) -> None:
    """Refuse a record that is not the paper the user named."""
    number = subject.pith_number
    named = classify_reference(ref)
    if named.arxiv is not None:
        if subject.source_id is None or named.arxiv.id != subject.source_id:
            raise InputError(
                f"{where} is the record of arXiv {subject.source_id or '(none)'} "
                f"({number.full}), not of {named.arxiv.id}"
            )
        return
    same = (
        named.alias.matches(number)
        if named.alias
        else bool(named.number and named.number.same_paper(number))
    )
    if not same:
        raise InputError(f"{where} is the record of {number.full}, not of {ref}")


def citing_number(ref: str, record: str | None, registry: RegistryAccess) -> PithNumber:
    """The citing paper's full Pith Number: given as such, from its record, or by look-up."""
    if record is None:
        named = classify_reference(ref)
        if named.number is not None and named.number.year is not None:
            return named.number
    return subject_for(ref, record, registry).pith_number


def check_destination(out: str | None) -> None:
    """Refuse, before any key is opened, a destination that cannot take the events."""
    if out is not None:
        from pithauthor._files import check_output_file

        check_output_file(out, InputError, "a file to append events to")


def deliver(
    events: Sequence[AuthorEvent], out: str | None, *, print_events: bool, submit: bool
) -> str:
    """Put the events where asked: `--out` FILE, stdout (`--json`), and the outbox when
    `--submit` is given or nothing else is; return where they went."""
    from pithauthor.submit import store_in_outbox

    check_destination(out)
    places = []
    if out is not None:
        append_jsonl(Path(out), events)
        places.append(out)
    if print_events:
        from pithauthor._cli.output import data

        for event in events:
            data(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
        places.append("stdout")
    if submit or not places:
        store_in_outbox(list(events))
        places.append("the outbox")
    return " and ".join(places)


def submit_now(registry: RegistryAccess, *, quiet: bool = False) -> None:
    """Send what is pending in the outbox; events that cannot go now stay there."""
    from pithauthor._cli.output import message
    from pithauthor.submit import submit_pending

    result = submit_pending(client=registry.client)
    if not quiet:
        message(f"submitted: {result.summary()}")
        for eid, reason in result.rejected.items():
            message(f"rejected {eid}: {reason}")
    if result.error is not None:
        message("the events stay in the outbox; `pith submit` sends them later")
        raise result.error
    if result.rejected:
        from pithauthor.errors import RegistryRejected

        raise RegistryRejected(f"the registry rejected {len(result.rejected)} event(s)")


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
    destination: str = ""

    def signer(self) -> AuthorKey:
        return load_key(self.key, self.passphrase_file)

    def deliver(self, events: Sequence[AuthorEvent]) -> str:
        """Write the events where asked; return where they went."""
        self.destination = deliver(
            events, self.out, print_events=self.print_events, submit=self.submit
        )
        return self.destination

    def send(self) -> None:
        """With --submit: send what is pending now; else say what sends them (the next step)."""
        from pithauthor._cli.output import message

        if self.submit:
            submit_now(self.registry)
        elif "the outbox" in self.destination:
            message("next: `pith submit` sends the outbox to the registry")
        elif self.out is not None:
            message(f"next: `pith submit {self.out}` sends them to the registry")

    def one(self, event: AuthorEvent) -> None:
        """Deliver one event, say so on stderr, and send it if asked."""
        from pithauthor._cli.output import message

        message(summary(event, self.deliver([event])))
        self.send()


def append_jsonl(path: Path, events: Sequence[AuthorEvent]) -> None:
    """Append one JSON line per event in a single write, then fsync: whole lines or nothing."""
    lines = "".join(
        json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events
    ).encode("utf-8")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    fd = os.open(path, flags, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as existing:
                existing.seek(size - 1)
                if existing.read(1) != b"\n":
                    lines = b"\n" + lines  # never glue our first line to a partial one
        os.write(fd, lines)
        os.fsync(fd)
    finally:
        os.close(fd)


def summary(event: AuthorEvent, destination: str) -> str:
    """`signed citation_signature sha256:1da6c9b7… for pith:2023:NFG5PAOX… → out.jsonl`."""
    number = str(event["subject_pith_number"])
    short = number[: len("pith:YYYY:") + 8] + "…"
    return f"signed {event['event_type']} {event['event_id'][:15]}… for {short} → {destination}"
