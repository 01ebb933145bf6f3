"""`pith submit`, `pith outbox`, `pith auth` and `pith fetch`: the registry side of the CLI."""

from __future__ import annotations

from typing import Any, Literal

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.registryopts import LOCAL_HELP, REGISTRY_HELP, TRUST_HELP, make_client

outbox_app = new_app("The events waiting for, accepted by, or rejected by a registry.")
auth_app = new_app("Sign-in tokens for registries that want them.")


def submit(
    file: str | None = typer.Argument(None, help="Signed events (JSON or JSONL) to add first."),
    registry: str | None = typer.Option(None, "--registry", help=REGISTRY_HELP),
    parallel: int = typer.Option(8, "--parallel", min=1, max=64, help="Requests in flight."),
    trust_manifest: list[str] = typer.Option([], "--trust-manifest", help=TRUST_HELP),
    trust_local: bool = typer.Option(False, "--trust-local-registry", help=LOCAL_HELP),
    retries: int = typer.Option(6, "--retries", min=1, max=20, help="Attempts per request."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.1, help="Seconds per attempt."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Send every pending event of the outbox (after storing FILE's events, if given)."""
    from pithauthor._cli.output import data, emit_json, message
    from pithauthor._outbox import Outbox
    from pithauthor.submit import submit_pending
    from pithauthor.verify import read_documents

    if file is not None:
        docs = read_documents(file)
        with Outbox() as outbox:
            new, old = outbox.store(docs)
        message(f"stored {new} new event(s) in the outbox ({old} already there)")
    client = make_client(registry, trust_manifest, trust_local, parallel, retries, timeout)
    with client, _progress(not as_json) as progress:
        result = submit_pending(client=client, parallel=parallel, progress=progress)
    if as_json:
        emit_json(result.as_dict())
    else:
        data(result.summary())
        for eid, reason in result.rejected.items():
            message(f"rejected {eid}: {reason}")
    if result.error is not None:
        raise result.error
    if result.rejected:
        raise typer.Exit(1)


class _progress:
    """A progress bar on stderr, only when stderr is a terminal and output is not JSON."""

    def __init__(self, wanted: bool) -> None:
        import sys

        self.enabled = wanted and sys.stderr.isatty()
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import Progress

        self._bar = Progress(console=Console(stderr=True), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task("submitting", total=None)
        return self.update

    def update(self, done: int, total: int) -> None:
        self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


@outbox_app.command("list")
def outbox_list(
    state: str | None = typer.Option(None, "--state", help="pending, accepted or rejected."),
    as_json: bool = typer.Option(False, "--json", help="Print entries as JSON."),
) -> None:
    """List the outbox (newest last)."""
    from pithauthor._cli.output import data, emit_json, message
    from pithauthor._outbox import STATES, Outbox
    from pithauthor.errors import InputError

    if state is not None and state not in STATES:
        raise InputError(f"--state must be one of {', '.join(STATES)}")
    with Outbox() as outbox:
        entries = outbox.entries(state)
        counts = outbox.counts()
    if as_json:
        emit_json([e.summary() for e in entries])
        return
    for e in entries:
        extra = f"  {e.reason}" if e.reason else ""
        data(f"{e.state:<9} {e.event_id}  {e.event_type:<19} {e.subject}{extra}")
    message(", ".join(f"{n} {s}" for s, n in counts.items()))


@outbox_app.command("retry")
def outbox_retry(
    event_ids: list[str] = typer.Argument(None, help="Events to retry (default: all rejected)."),
) -> None:
    """Put rejected events back to pending (then run `pith submit`)."""
    from pithauthor._cli.output import message
    from pithauthor._outbox import Outbox

    with Outbox() as outbox:
        n = outbox.retry(event_ids or None)
    message(f"{n} event(s) pending again; send them with: pith submit")


@outbox_app.command("drop")
def outbox_drop(
    event_ids: list[str] = typer.Argument(None, help="Events to delete from the outbox."),
    rejected: bool = typer.Option(False, "--rejected", help="Drop every rejected event."),
    accepted: bool = typer.Option(False, "--accepted", help="Drop every accepted event."),
) -> None:
    """Delete events from the outbox (they are not withdrawn from any registry)."""
    from pithauthor._cli.output import message
    from pithauthor._outbox import Outbox
    from pithauthor.errors import InputError

    if not (event_ids or rejected or accepted):
        raise InputError("name event ids, or pass --rejected / --accepted")
    with Outbox() as outbox:
        n = outbox.drop(event_ids or [])
        n += outbox.drop_state("rejected") if rejected else 0
        n += outbox.drop_state("accepted") if accepted else 0
    message(f"dropped {n} event(s)")


@auth_app.command("login")
def auth_login(
    registry: str | None = typer.Option(None, "--registry", help=REGISTRY_HELP),
    token_file: str | None = typer.Option(None, "--token-file", help="Read the token from F."),
    token_stdin: bool = typer.Option(False, "--token-stdin", help="Read the token from stdin."),
) -> None:
    """Store a bearer token for a registry's origin (OS keyring, else a 0600 file)."""
    from pithauthor._cli.output import message
    from pithauthor._files import MAX_SECRET_BYTES, read_user_text
    from pithauthor._tokens import store_token
    from pithauthor.errors import InputError
    from pithauthor.submit import registry_url

    if bool(token_file) == token_stdin:
        raise InputError("give exactly one of --token-file F or --token-stdin")
    token = read_user_text(
        token_file or "-", InputError, "a token file", limit=MAX_SECRET_BYTES, stdin=token_stdin
    )
    url = registry_url(registry)
    where = store_token(url, token)
    message(f"token stored for {url} in {where}; it is sent only there")


@auth_app.command("logout")
def auth_logout(
    registry: str | None = typer.Option(None, "--registry", help=REGISTRY_HELP),
) -> None:
    """Forget the token stored for a registry."""
    from pithauthor._cli.output import message
    from pithauthor._tokens import forget_token
    from pithauthor.submit import registry_url

    url = registry_url(registry)
    message(f"token for {url} removed" if forget_token(url) else f"no token stored for {url}")


@auth_app.command("status")
def auth_status() -> None:
    """List the registries a token is stored for (never the tokens)."""
    import os

    from pithauthor._cli.output import data, message
    from pithauthor._tokens import TOKEN_ENV, stored_registries

    for url in stored_registries():
        data(url)
    if os.environ.get(TOKEN_ENV):
        from pithauthor._tokens import env_token_origin

        message(f"{TOKEN_ENV} is set; it is sent only to {env_token_origin()} (PITH_REGISTRY)")


def fetch(
    ref: str = typer.Argument(..., help="A Pith Number, alias, or arXiv id."),
    what: Literal["record", "bundle", "state", "number"] = typer.Option(
        "record", "--what", help="What to fetch."
    ),
    registry: str | None = typer.Option(None, "--registry", help=REGISTRY_HELP),
    trust_manifest: list[str] = typer.Option([], "--trust-manifest", help=TRUST_HELP),
    trust_local: bool = typer.Option(False, "--trust-local-registry", help=LOCAL_HELP),
    retries: int = typer.Option(6, "--retries", min=1, max=20, help="Attempts per request."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.1, help="Seconds per attempt."),
    output: str | None = typer.Option(None, "-o", "--out", metavar="FILE", help="Write to FILE."),
    allow_unverifiable: bool = typer.Option(
        False,
        "--allow-unverifiable",
        help="Take a bundle or state whose registry parts cannot be verified (they are named).",
    ),
) -> None:
    """Fetch a record, bundle or merged state, verified before it is shown. A bundle or state
    with parts nobody can verify (registry event ids, the registry's merge) is refused (exit 1)
    unless --allow-unverifiable is given."""
    import json

    from pithauthor._cli.output import data, emit_json, message
    from pithauthor.errors import InputError

    if what not in ("record", "bundle", "state", "number"):
        raise InputError("--what must be record, bundle, state or number")
    if output:
        from pithauthor._files import check_output_file

        check_output_file(output, InputError, "a file to write")
    with make_client(registry, trust_manifest, trust_local, 4, retries, timeout) as client:
        if what == "number":
            data(client.record(ref)["pith_number"])
            return
        if what == "record":
            doc = client.record(ref)
        else:
            doc = getattr(client, what)(ref, strict=not allow_unverifiable)
    verdict = "verified" if not allow_unverifiable or what == "record" else "checked"
    if output:
        from pathlib import Path

        from pithauthor._atomic import replace_file

        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        replace_file(Path(output), text, mode=0o644)
        message(f"{verdict} {what} of {doc.get('pith_number')} written to {output}")
    else:
        emit_json(doc)
        message(f"OK: {what} of {doc.get('pith_number')} {verdict}")
    if verdict == "checked":
        message("parts of it are unverifiable; `pith verify FILE` lists them")


def register(app: typer.Typer) -> None:
    app.command("submit")(submit)
    app.command("fetch")(fetch)
    app.add_typer(outbox_app, name="outbox")
    app.add_typer(auth_app, name="auth")
