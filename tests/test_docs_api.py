"""README.md and docs/*.md name only public API (issue 26).

Every Python name a page gives, in an import (`from pithauthor.keys import load_signing_key`,
`import pithauthor.registry`) or in prose (`pithauthor.registry.Statements.settle`), must be a
public face (tests/support/faces.py) or a name that face offers: in its `__all__`, or for a
top-level module with no `__all__` (`pithauthor.errors`, `pithauthor.doctor`) a name without a
leading underscore; what follows such a name (`Statements.settle`) must be one of its attributes.
The modules behind a face may change without notice, so a page that tells a reader to import
one teaches them to write a script that breaks. A page may still point at the source as a path
(`pithauthor/protocol/checks/record.py`), as docs/architecture.md's map and the protocol notes
do: that says where a rule is written, not what to import.

Two strings look like dotted names and are not Python: the payload schema ids
(`pithauthor.citation_signature.v1`) and the local registry's logger name; both are read from
the code that defines them.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from support.faces import FACES

from pithauthor.protocol.payloads import PAYLOAD_SCHEMAS
from pithauthor.registry.local.pool import log

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

NOT_PYTHON = {*PAYLOAD_SCHEMAS.values(), log.name}

# `from pithauthor.x import a, b as c` (names in parentheses may run over several lines)
_FROM = re.compile(r"\bfrom\s+(pithauthor(?:\.\w+)*)\s+import\s+(\([^)]*\)|[\w \t,]+)")
_IMPORT = re.compile(r"^\s*import\s+(pithauthor(?:\.\w+)*)", re.MULTILINE)
# a dotted name in prose or code; a path (`pithauthor/fs.py`) has no dot after `pithauthor`
_DOTTED = re.compile(r"(?<![\w./-])pithauthor(?:\.\w+)+")


def public_names(face: str) -> set[str]:
    """What the face `face` offers."""
    module = importlib.import_module(face)
    listed = getattr(module, "__all__", None)
    if listed is not None:
        return set(listed)
    return {name for name in vars(module) if not name.startswith("_")}


def fault(dotted: str) -> str | None:
    """None when `dotted` names a face, or a name a face offers (and attributes of it); else
    what is wrong with it."""
    if dotted in NOT_PYTHON or dotted in FACES:
        return None
    parts = dotted.split(".")
    # the longest prefix that is a face, then the name it must offer
    for cut in range(len(parts) - 1, 0, -1):
        face = ".".join(parts[:cut])
        if face in FACES:
            break
    name, rest = parts[cut], parts[cut + 1 :]
    if name not in public_names(face):
        return f"{face} offers no {name}"
    value = getattr(importlib.import_module(face), name)
    for attribute in rest:
        if not hasattr(value, attribute):
            return f"{'.'.join(parts[: cut + 1])} has no attribute {attribute}"
        value = getattr(value, attribute)
    return None


def named(text: str) -> list[str]:
    """Every dotted Python name of pithauthor that `text` gives, imports spelt as dotted names."""
    found = [m.group(1) for m in _IMPORT.finditer(text)]
    for m in _FROM.finditer(text):
        module = m.group(1)
        names = m.group(2).strip("()").replace("\n", " ").split(",")
        found += [f"{module}.{n.split()[0]}" for n in names if n.split()]
    # an import's module is found by _DOTTED too, and checked as a face
    found += _DOTTED.findall(text)
    return found


def faults(text: str) -> list[str]:
    return sorted({f"{name}: {why}" for name in named(text) if (why := fault(name)) is not None})


def test_the_docs_name_only_public_api() -> None:
    found = {
        str(page.relative_to(REPO)): problems
        for page in PAGES
        if (problems := faults(page.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_docs_check_sees_every_way_of_naming_a_private_module() -> None:
    """Proves the check above can fail: each form a page could use is caught, and the public
    forms and the strings that are not Python pass."""
    page = (
        "```python\n"
        "from pithauthor.registry.client import RegistryClient\n"
        "from pithauthor.keys import (\n    load_signing_key,\n    storage,\n)\n"
        "import pithauthor.registry.outbox\n"
        "from pithauthor import keys, sign\n"
        "from pithauthor.registry import Statements as S\n"
        "```\n"
        "Call `pithauthor.registry.submit.submit_events`,\n"
        "or `pithauthor.registry.Statements.nope`, or `pithauthor.verify_document`;\n"
        "see pithauthor/registry/client.py and the payload\n"
        'schema "pithauthor.citation_signature.v1", logged as `pithauthor.registry.local`.\n'
    )
    assert faults(page) == [
        "pithauthor.keys.storage: pithauthor.keys offers no storage",
        "pithauthor.registry.Statements.nope: pithauthor.registry.Statements has no attribute nope",
        "pithauthor.registry.client.RegistryClient: pithauthor.registry offers no client",
        "pithauthor.registry.client: pithauthor.registry offers no client",
        "pithauthor.registry.outbox: pithauthor.registry offers no outbox",
        "pithauthor.registry.submit.submit_events: pithauthor.registry offers no submit",
        "pithauthor.sign: pithauthor offers no sign",
    ]
