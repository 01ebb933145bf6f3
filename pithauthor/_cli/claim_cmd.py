"""`pith claim`: sign that you are an author of a paper."""

from __future__ import annotations

import typer

from pithauthor._cli.access import registry_access
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    ARXIV_API_OPTION,
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


def claim(
    subject: str = typer.Argument(..., help="The paper: a Pith Number or an arXiv id."),
    record: str | None = RECORD_OPTION,
    name: str | None = typer.Option(
        None,
        "--name",
        help="Your public name as the paper writes it (e.g. 'A. Lovelace'); it must be the "
        "key's public name (`pith keys set`) up to accents and initials (default: that name).",
    ),
    orcid: str | None = typer.Option(None, "--orcid", help="Your ORCID iD (default: the key's)."),
    position: int | None = typer.Option(
        None,
        "--position",
        min=1,
        help="Your 1-based position in the author list, as arXiv lists the authors of that "
        "version (checked with arXiv's API: the registry's list is not in the paper's order).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Sign although the name (or --position) does not match the paper's author list, "
        "the record lists no authors, arXiv's author order cannot be had to check --position, "
        "or --name is not the key's public name.",
    ),
    statement: str | None = typer.Option(
        None, "--statement", help="The statement (default: 'I am an author of this paper.')."
    ),
    proof: list[str] = typer.Option(
        [],
        "--proof",
        metavar="orcid|web:URL|paper[:URL]",
        help="Carry an identity proof (repeatable): your ORCID record, your site's "
        "/.well-known/pith-keys.json, or the paper's PDF (default: its arXiv PDF). "
        "See docs/identity.md.",
    ),
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
    arxiv_api: str | None = ARXIV_API_OPTION,
) -> None:
    """Sign an author attestation of SUBJECT with your key. Claiming again what the outbox
    holds reuses that event; a different claim on the same paper needs --replace."""
    from pithauthor._cli.signing import claim_preview
    from pithauthor.bibliography.arxiv_order import author_order
    from pithauthor.identity.proofs import proofs_from_specs
    from pithauthor.protocol.identity import normalize_orcid
    from pithauthor.protocol.record import check_claimant, check_own_name
    from pithauthor.registry.access import subject_for
    from pithauthor.registry.submit import check_destination
    from pithauthor.sign import attest_authorship

    check_destination(out)
    orcid = normalize_orcid(orcid) if orcid else None
    with registry_access(registry, trust_manifest, trust_local) as access:
        output = Output(
            key, passphrase_file, out, as_json, submit, access, yes=yes, timestamp=not no_timestamp
        )
        paper = subject_for(subject, record, access)
        signer = output.signer()
        # what the registry holds of yours, when it is asked anyway (a record file: offline)
        output.recall(paper.pith_number, signer.key_id, ask=record is None or submit)
        key_orcid = signer.orcid
        if orcid and key_orcid and orcid != key_orcid:
            raise InputError(
                f"--orcid {orcid} is not the key's ORCID iD ({key_orcid}); claim with your own key"
            )
        # The name signed is the author's public name, never the key's label ("ada"), nor
        # somebody else's: a --name must be the public name written another way.
        if name:
            check_own_name(name, signer.public_name, force=force)
        author = name or signer.public_name
        if not author:
            raise InputError(
                "the key has no public name, the name a claim signs: set it once with "
                'pith keys set --public-name "Your Name"'
            )
        # the position is a place in arXiv's list of this version; the record's list (sorted
        # by given name on pith.science) only says who the authors are
        order = author_order(paper.source_id, paper.source_version, api_url=arxiv_api)
        checked = check_claimant(
            paper.authors,
            author,
            position,
            order=order.names,
            why_no_order=f"arXiv's author order of {order.paper} could not be had "
            f"({order.why_not})",
            force=force,
        )
        proofs = proofs_from_specs(proof, orcid or key_orcid, paper)
        event = attest_authorship(
            signer,
            paper,
            name=author,
            orcid=orcid or key_orcid,
            position=position,
            statement=statement,
            identity_proofs=proofs,
            settle=output.settle("replace" if replace else "refuse"),
        )
        # Signed in memory only: until the author says yes, nothing is stored or sent.
        if not output.reused(event):  # nothing new to publish: nothing to ask
            output.confirm("this claim", claim_preview(paper, signer, event, checked))
        output.one(event)


def register(app: typer.Typer) -> None:
    app.command("claim", short_help=summary("claim"))(claim)
