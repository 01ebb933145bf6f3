"""Which fields of a JSON document a verdict covers, and which it does not (pure).

A verifier names what it checked as path patterns (`receipt.key_id`, `aliases[*].alias_kind`,
`current.graph_snapshots[3]`); a pattern covers the node it names and everything inside it.
`uncovered` walks the document and returns the paths of the largest subtrees no pattern covers,
so every field present is either checked or reported (as not signed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

Segments = tuple[str, ...]
_SEGMENT_RE = re.compile(r"([^.\[\]]+)|\[([0-9]+|\*)\]")


@lru_cache(maxsize=4096)
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


class _Trie:
    """Patterns as a tree of segments; `end` marks a node a whole pattern reaches."""

    __slots__ = ("children", "end")

    def __init__(self) -> None:
        self.children: dict[str, _Trie] = {}
        self.end = False

    def add(self, segs: Segments) -> None:
        node = self
        for seg in segs:
            node = node.children.setdefault(seg, _Trie())
        node.end = True

    def step(self, seg: str) -> list[_Trie]:
        wildcard = "[*]" if seg.startswith("[") else "*"
        return [n for n in (self.children.get(seg), self.children.get(wildcard)) if n is not None]


@lru_cache(maxsize=64)
def _trie(patterns: tuple[str | Segments, ...]) -> _Trie:
    """The trie of `patterns`; the same patterns (one per kind of part) are built once."""
    root = _Trie()
    for p in patterns:
        root.add(segments(p) if isinstance(p, str) else p)
    return root


def uncovered(doc: Any, patterns: Iterable[str | Segments]) -> tuple[str, ...]:
    """Paths of the largest parts of `doc` that no pattern covers (document order).

    An empty object or list that patterns reach into has nothing uncovered in it."""
    root = _trie(tuple(patterns))
    found: list[str] = []

    def walk(node: Any, path: Segments, tries: list[_Trie]) -> None:
        if any(t.end for t in tries):
            return  # covered, with everything inside
        if not tries:
            found.append(path_text(path))
            return
        if isinstance(node, Mapping):
            for key, value in node.items():
                seg = str(key)
                walk(value, (*path, seg), [n for t in tries for n in t.step(seg)])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                seg = f"[{index}]"
                walk(value, (*path, seg), [n for t in tries for n in t.step(seg)])
        elif path:
            found.append(path_text(path))

    walk(doc, (), [root])
    return tuple(found)


def under(prefix: str, names: Iterable[str]) -> tuple[str, ...]:
    """`under('receipt', ['key_id'])` -> ('receipt.key_id',)."""
    return tuple(f"{prefix}.{n}" if prefix and not n.startswith("[") else prefix + n for n in names)
