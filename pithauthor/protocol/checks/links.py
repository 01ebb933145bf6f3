"""Checks of the links and agent actions a record carries: each must point at the registry
that signed the receipt and name this paper (pure).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.text import is_loopback, origin_of
from pithauthor.protocol.verdict import (
    RegistryKey,
    Report,
)

__all__ = []


def _url_ok(url: Any, key: RegistryKey | None, names: tuple[str, ...]) -> bool:
    """On the origin of the registry whose key signed the record, and about this paper. The
    origin and loopback tests are the network layer's one rule (`protocol.text`); a LOCAL
    registry's key also covers its other loopback spellings (`localhost` for `127.0.0.1`, any
    port), as a local registry may be reached by either."""
    if not isinstance(url, str) or key is None or key.base_url is None:
        return False
    got, want = origin_of(url), origin_of(key.base_url)
    if got is None or want is None:
        return False
    same = got == want or (
        key.local and is_loopback(got[1]) and is_loopback(want[1]) and got[0] == want[0]
    )
    return same and any(n in url for n in names)


def _check_links(
    report: Report, field: str, links: Any, key: RegistryKey | None, names: tuple[str, ...]
) -> None:
    """Every URL of `agent_actions` / `links`: on the registry's origin, naming this paper."""
    if not isinstance(links, Mapping):
        report.add(field, False, "not an object")
        return
    urls = [(k, v) for k, v in links.items() if not isinstance(v, Mapping)]
    urls += [
        (f"{k}.{n}", u) for k, v in links.items() if isinstance(v, Mapping) for n, u in v.items()
    ]
    wrong = [k for k, u in urls if not _url_ok(u, key, names)]
    where = key.base_url if key is not None and key.base_url else "(no trusted registry origin)"
    report.add(
        field,
        not wrong,
        f"not on {where} or not about this paper: " + ", ".join(wrong)
        if wrong
        else f"every link is on {where} and names this paper",
    )


def _check_actions(report: Report, agent_actions: Any, number: PithNumber) -> None:
    actions = agent_actions.get("actions") if isinstance(agent_actions, Mapping) else None
    if not isinstance(actions, Mapping):
        report.add("action_links", False, "agent_actions.actions is not an object")
        return
    wrong = [
        name
        for name, url in actions.items()
        if not (isinstance(url, str) and f"/pith/{number.body}/action/" in url)
    ]
    report.add(
        "action_links",
        not wrong,
        "links not to this record: " + ", ".join(wrong)
        if wrong
        else "every action names this body",
    )
