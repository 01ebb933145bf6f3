"""Real `keyring` backends for the key tests (selected with PYTHON_KEYRING_BACKEND or
`keyring.set_keyring`). They are never auto-selected: their priority is below every real one."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    """Secrets in a dict: for in-process tests."""

    priority = -1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


class FileKeyring(KeyringBackend):
    """Secrets in the JSON file named by PITH_TEST_KEYRING_FILE: survives across processes."""

    priority = -1  # type: ignore[assignment]

    def _path(self) -> Path:
        return Path(os.environ["PITH_TEST_KEYRING_FILE"])

    def _load(self) -> dict[str, str]:
        path = self._path()
        return json.loads(path.read_text()) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._load()
        entries[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(entries))

    def delete_password(self, service: str, username: str) -> None:
        entries = self._load()
        if entries.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError(username)
        self._path().write_text(json.dumps(entries))


class HangingKeyring(KeyringBackend):
    """A keyring that never answers (like a locked desktop keyring waiting for a dialog)."""

    priority = -1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        time.sleep(600)
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        time.sleep(600)

    def delete_password(self, service: str, username: str) -> None:
        time.sleep(600)
