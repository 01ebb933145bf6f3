"""Which fields of a JSON document a verdict covers, and which it does not (pure).

A verifier names what it checked as path patterns (`receipt.key_id`, `aliases[*].alias_kind`,
`current.graph_snapshots[3]`); a pattern covers the node it names and everything inside it.
`uncovered` walks the document and returns the paths of the largest subtrees no pattern covers,
so every field present is either checked or reported (as not signed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

Segments = tuple[str, ...]
_SEGMENT_RE = re.compile(r"([^.\[\]]+)|\[([0-9]+|\*)\]")


def segments(pattern: str) -> Segments:
    """`a.b[0].c` -> ('a', 'b', '[0]', 'c'); `*` and `[*]` are wildcards for a key / an item."""
    out: list[str] = []
    for key, index in _SEGMENT_RE.findall(pattern):
        out.append(key if key else f"[{index}]")
    return tuple(out)


def path_text(segs: Segments) -> str:
    """('a', '[0]', 'b') -> `a[0].b`."""
    text = ""
    for seg in segs:
        text += seg if seg.startswith("[") else ("." + seg if text else seg)
    return text


def _matches(pattern: Segments, path: Segments) -> bool:
    """`pattern` matches the first len(pattern) segments of `path`."""
    if len(pattern) > len(path):
        return False
    for want, got in zip(pattern, path, strict=False):
        if want == "*" and not got.startswith("["):
            continue
        if want == "[*]" and got.startswith("["):
            continue
        if want != got:
            return False
    return True


def uncovered(doc: Any, patterns: Iterable[str | Segments]) -> tuple[str, ...]:
    """Paths of the largest parts of `doc` that no pattern covers (document order).

    An empty object or list that patterns reach into has nothing uncovered in it."""
    pats = [segments(p) if isinstance(p, str) else p for p in patterns]
    found: list[str] = []

    def walk(node: Any, path: Segments) -> None:
        if any(_matches(p, path) for p in pats):
            return  # covered, with everything inside
        deeper = not path or any(
            len(p) > len(path) and _matches(p[: len(path)], path) for p in pats
        )
        if deeper and isinstance(node, Mapping):
            for key, value in node.items():
                walk(value, (*path, str(key)))
        elif deeper and isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, (*path, f"[{index}]"))
        elif path:
            found.append(path_text(path))

    walk(doc, ())
    return tuple(found)


def under(prefix: str, names: Iterable[str]) -> tuple[str, ...]:
    """`under('receipt', ['key_id'])` -> ('receipt.key_id',)."""
    return tuple(f"{prefix}.{n}" if prefix and not n.startswith("[") else prefix + n for n in names)
