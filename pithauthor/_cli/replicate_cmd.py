"""`pith replicate`: sign a replication, falsification or formal bridge of a paper."""

from __future__ import annotations

import typer

from pithauthor._cli.access import registry_access
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    EVENT_JSON_OPTION,
    KEY_OPTION,
    NO_TIMESTAMP_OPTION,
    OUT_OPTION,
    PASSPHRASE_FILE_OPTION,
    RECORD_OPTION,
    REGISTRY_OPTION,
    REPLACE_OPTION,
    SUBMIT_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    YES_OPTION,
)
from pithauthor._cli.signing import Output
from pithauthor.errors import InputError


def replicate(
    subject: str = typer.Argument(..., help="The paper: a Pith Number or an arXiv id."),
    kind: str = typer.Option(..., "--kind", help="replication, falsification or formal_bridge."),
    outcome: str = typer.Option(
        ...,
        "--outcome",
        help="replication: reproduced, partially_reproduced, not_reproduced, inconclusive; "
        "falsification: falsified, not_falsified, inconclusive; "
        "formal_bridge: formalized, partially_formalized, not_formalized.",
    ),
    summary_text: str = typer.Option(..., "--summary", help="What was done and found."),
    proof_system: str | None = typer.Option(
        None, "--proof-system", help="For a formal bridge: lean4, coq or isabelle."
    ),
    artifact: list[str] = typer.Option(
        [],
        "--artifact",
        help="An artifact URI; repeat, each with its --sha256 or its --artifact-file.",
    ),
    sha256: list[str] = typer.Option(
        [], "--sha256", help="The sha256 of the artifact at the same place."
    ),
    artifact_file: list[str] = typer.Option(
        [],
        "--artifact-file",
        metavar="FILE",
        help="A local copy of the artifact at the same place: its SHA-256 is computed.",
    ),
    record: str | None = RECORD_OPTION,
    key: str | None = KEY_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    out: str | None = OUT_OPTION,
    as_json: bool = EVENT_JSON_OPTION,
    submit: bool = SUBMIT_OPTION,
    yes: bool = YES_OPTION,
    no_timestamp: bool = NO_TIMESTAMP_OPTION,
    replace: bool = REPLACE_OPTION,
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
) -> None:
    """Sign a replication record of SUBJECT. Recording again what the outbox holds reuses
    that event; a different record with the same kind and artifacts needs --replace."""
    from pithauthor._cli.signing import replication_preview
    from pithauthor.protocol.payloads import Artifact
    from pithauthor.registry.access import subject_for
    from pithauthor.registry.submit import check_destination
    from pithauthor.sign import artifact_sha256, record_replication

    if sha256 and artifact_file:  # two lists cannot say which digest goes with which URI
        raise InputError(
            "give either --sha256 or --artifact-file for the artifacts, not both kinds; "
            "compute a digest with: sha256sum FILE"
        )
    given = "--artifact-file" if artifact_file else "--sha256"
    if len(artifact) != len(sha256) + len(artifact_file):
        raise InputError(
            f"{len(artifact)} --artifact but {len(sha256) + len(artifact_file)} {given}: "
            f"give one {given} per artifact"
        )
    if artifact_file:
        sha256 = [artifact_sha256(path) for path in artifact_file]
    artifacts = [
        Artifact(uri, digest.lower()) for uri, digest in zip(artifact, sha256, strict=True)
    ]
    check_destination(out)
    with registry_access(registry, trust_manifest, trust_local) as access:
        output = Output(
            key, passphrase_file, out, as_json, submit, access, yes=yes, timestamp=not no_timestamp
        )
        paper = subject_for(subject, record, access)
        signer = output.signer()
        # what the registry holds of yours, when it is asked anyway (a record file: offline)
        output.recall(paper.pith_number, signer.key_id, ask=record is None or submit)
        event = record_replication(
            signer,
            paper,
            kind=kind,
            outcome=outcome,
            summary=summary_text,
            artifacts=artifacts,
            proof_system=proof_system,
            settle=output.settle("replace" if replace else "refuse"),
        )
        # Signed in memory only: until the author says yes, nothing is stored or sent.
        if not output.reused(event):  # nothing new to publish: nothing to ask
            pairs = [(a.uri, a.sha256) for a in artifacts]
            preview = replication_preview(paper, signer, kind, outcome, summary_text, pairs)
            output.confirm(f"this {kind.replace('_', ' ')} record", preview)
        output.one(event)


def register(app: typer.Typer) -> None:
    app.command("replicate", short_help=summary("replicate"))(replicate)
