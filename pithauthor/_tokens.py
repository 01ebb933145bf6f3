"""Bearer tokens for registries that want sign-in: `PITH_TOKEN`, or one stored per registry
by `pith auth login` in `<PITH_HOME>/auth/tokens.json` (folder 0700, file 0600)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pithauthor._core.strict_json import JSONFault, parse_json
from pithauthor.errors import InputError

TOKEN_ENV = "PITH_TOKEN"


def _path() -> Path:
    from pithauthor._paths import private_dir

    return private_dir("auth") / "tokens.json"


def _read(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    from pithauthor._paths import check_private

    check_private(path, is_dir=False)
    try:
        doc = parse_json(path.read_bytes())
    except (OSError, JSONFault):
        raise InputError(f"{path} is not a token file pith wrote; remove it") from None
    return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}


def _write(path: Path, tokens: dict[str, str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(tokens, fh, indent=2, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def token_for(registry: str) -> str | None:
    """PITH_TOKEN when set, else the token stored for `registry`, else None."""
    env = os.environ.get(TOKEN_ENV, "").strip()
    if env:
        return env
    return _read(_path()).get(registry.rstrip("/"))


def store_token(registry: str, token: str) -> None:
    token = token.strip()
    if not token or any(c.isspace() for c in token):
        raise InputError("a token is one non-empty word (no spaces or line breaks)")
    path = _path()
    tokens = _read(path)
    tokens[registry.rstrip("/")] = token
    _write(path, tokens)


def forget_token(registry: str) -> bool:
    path = _path()
    tokens = _read(path)
    if tokens.pop(registry.rstrip("/"), None) is None:
        return False
    _write(path, tokens)
    return True


def stored_registries() -> list[str]:
    return sorted(_read(_path()))
