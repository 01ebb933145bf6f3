"""`pith auth login|logout|status`: sign-in tokens for registries that want them."""

from __future__ import annotations

import os

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import REGISTRY_HELP
from pithauthor._cli.output import data, message
from pithauthor.errors import InputError

auth_app = new_app(summary("auth"))


@auth_app.command("login")
def auth_login(
    registry: str | None = typer.Option(None, "--registry", help=REGISTRY_HELP),
    token_file: str | None = typer.Option(None, "--token-file", help="Read the token from F."),
    token_stdin: bool = typer.Option(False, "--token-stdin", help="Read the token from stdin."),
) -> None:
    """Store a bearer token for a registry's origin (OS keyring, else a 0600 file)."""
    from pithauthor.fs import MAX_SECRET_BYTES, read_user_text
    from pithauthor.registry.client import registry_url
    from pithauthor.registry.credentials import store_token

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
    from pithauthor.registry.client import registry_url
    from pithauthor.registry.credentials import forget_token

    url = registry_url(registry)
    message(f"token for {url} removed" if forget_token(url) else f"no token stored for {url}")


@auth_app.command("status")
def auth_status() -> None:
    """List the registries a token is stored for (never the tokens)."""
    from pithauthor.registry.credentials import TOKEN_ENV, env_token_origin, stored_registries

    for url in stored_registries():
        data(url)
    if os.environ.get(TOKEN_ENV):
        message(f"{TOKEN_ENV} is set; it is sent only to {env_token_origin()} (PITH_REGISTRY)")


def register(app: typer.Typer) -> None:
    app.add_typer(auth_app, name="auth", short_help=summary("auth"))
