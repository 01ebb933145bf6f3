"""`pith claim --proof ...`: identity proofs named on the command line, as payload entries."""

from __future__ import annotations

from collections.abc import Sequence

from pithauthor._core.identity import IdentityProof, arxiv_pdf_url, web_origin
from pithauthor._core.subject import Subject
from pithauthor.errors import InputError


def proofs_from_options(
    specs: Sequence[str], orcid: str | None, subject: Subject
) -> list[IdentityProof]:
    """`orcid` (the author's iD), `web:URL` (the site's origin), `paper` (the subject's arXiv
    PDF) or `paper:URL`; InputError for anything else."""
    proofs: list[IdentityProof] = []
    for spec in specs:
        kind, _, rest = spec.partition(":")
        kind = kind.strip().lower()
        if kind == "orcid" and not rest:
            if orcid is None:
                raise InputError("--proof orcid needs an ORCID iD (--orcid, or a key that has one)")
            proofs.append({"kind": "orcid", "locator": orcid})
        elif kind == "web" and rest:
            proofs.append({"kind": "web", "locator": web_origin(rest)})
        elif kind == "paper" and rest:
            web_origin(rest)  # refuses what is not an https address
            proofs.append({"kind": "paper", "locator": rest.strip()})
        elif kind == "paper":
            if subject.source_id is None:
                raise InputError("--proof paper: the record names no arXiv id; give paper:URL")
            url = arxiv_pdf_url(subject.source_id, subject.source_version)
            proofs.append({"kind": "paper", "locator": url})
        else:
            raise InputError(
                f"--proof {spec!r}: use orcid, web:https://your.site or paper[:https://...pdf]"
            )
    if len({(p["kind"], p["locator"]) for p in proofs}) != len(proofs):
        raise InputError("--proof: the same proof is given twice")
    return proofs
