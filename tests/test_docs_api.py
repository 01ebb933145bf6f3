"""README.md and docs/*.md name only public API.

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

import ast
import importlib
import importlib.util
import io
import re
import tokenize
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


# --- Prose checked like code -------------------------------------------------------------------
# A module moves and the prose that names it does not: the docstrings, comments and pages then
# send a reader to code that is not there. Every backticked name of the package's code in them
# (`pithauthor.registry.access.badge_number`, `protocol.urls.checked_url`, a path such as
# `registry/outbox.py`) must resolve; and none cites an issue number, which a reader of the code
# cannot look up: the why is said in words instead.

PACKAGE = REPO / "pithauthor"
_BACKTICKED = re.compile(r"`([^`\n]{2,120})`")
_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?$")
_PATH = re.compile(r"^[\w./-]+/[\w.-]+\.(?:py|md)$")
# a path in prose without backticks (`tests/support/faces.py` written bare)
_BARE_PATH = re.compile(
    r"(?<![\w`/.-])((?:pithauthor|tests|docs|benchmarks)/[\w/.-]+\.(?:py|md))\b"
)
# a placeholder in a path: `_cli/NAME_cmd.py`
_PLACEHOLDER = re.compile(r"[A-Z]{2,}|[*{}<>]")
_PATH_ROOTS = ("pithauthor", "tests", "benchmarks", "latex", "docs")
# a suffix a dotted name ends with when it is a file, not code (`keys.json`, `outbox.sqlite3`)
_FILE_SUFFIXES = (".json", ".jsonl", ".sqlite3", ".v1", ".lock", ".toml", ".md", ".py", ".sty")
_ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")

# Prose that names what no longer exists on purpose, each with why it may.
STALE_ALLOWED: dict[tuple[str, str], str] = {
    (
        "docs/performance.md",
        "benchmarks/RESULTS.partial.md",
    ): "a partial run writes it; not committed",
    (
        "benchmarks/run.py",
        "benchmarks/RESULTS.partial.md",
    ): "a partial run writes it; not committed",
    ("docs/performance.md", "options.cited"): "history: where the function was before a pass",
}


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _top_level_names(path: Path) -> set[str]:
    """The names a module's source binds at top level (nothing imported: no side effects)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


# the fields of the protocol's documents: `signer.key_id`, `record.status` are field paths
FIELDS = {
    node.target.id
    for node in ast.walk(ast.parse((PACKAGE / "protocol" / "documents.py").read_text("utf-8")))
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
}
DEFINED = {name: module for module, path in MODULES.items() for name in _top_level_names(path)}


def prose_of_python(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring (a bare string statement too) of `path`."""
    source = path.read_text(encoding="utf-8")
    lines = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            lines += [
                (node.lineno + i, line) for i, line in enumerate(node.value.value.split("\n"))
            ]
    return lines


def prose_of_page(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))


def path_fault(token: str) -> str | None:
    """None when the path `token` names a file of the repository (from its root, or from inside
    the package: `registry/outbox.py`); else why not."""
    if _PLACEHOLDER.search(token):
        return None
    if token.split("/")[0] not in (*_PATH_ROOTS, *(p.name for p in PACKAGE.iterdir())):
        return None  # an arXiv id, a file under PITH_HOME, a fixture's own folder
    if (REPO / token).exists() or (PACKAGE / token).exists() or (REPO / "tests" / token).exists():
        return None
    return "no such file"


def name_fault(token: str) -> str | None:
    """None when the dotted name `token` resolves to code (a module and attributes of it), or is
    not about the package's code (a field path such as `record.orcid`); else why not."""
    token = token.removesuffix("()")
    if token.endswith(_FILE_SUFFIXES) or token in NOT_PYTHON:
        return None
    parts = token.split(".")
    # the module the name starts with: the longest run of leading parts that ends a module's name
    cut, module = 0, ""
    for name in MODULES:
        names = name.split(".")
        for k in range(len(parts), cut, -1):
            if names[-k:] == parts[:k] and (parts[0] != "pithauthor" or names[:k] == parts[:k]):
                cut, module = k, name
                break
    if not module:
        if (
            len(parts) == 2
            and parts[0].islower()
            and parts[1] in DEFINED
            and parts[1] not in FIELDS
            and importlib.util.find_spec(parts[0]) is None
        ):
            # code named by a module that is gone (envelope.Signer, after envelope.py moved)
            return f"no module {parts[0]} (it is in {DEFINED[parts[1]]})"
        return None  # not about a module: a variable, a field path
    value: object = importlib.import_module(module)
    for i, attribute in enumerate(parts[cut:]):
        if not hasattr(value, attribute):
            if i == 0 and cut == 1 and parts[0] != "pithauthor" and attribute not in DEFINED:
                return None  # `record.status`: a field of a document named like a module
            if i == 0 and cut == 1 and attribute in FIELDS:
                return None  # `record.status`: a field of a document named like a module
            home = f" (it is in {DEFINED[attribute]})" if attribute in DEFINED else ""
            return f"{'.'.join(parts[: cut + i])} has no attribute {attribute}{home}"
        value = getattr(value, attribute)
    return None


def stale(where: str, lines: list[tuple[int, str]]) -> list[str]:
    found = []
    for line, text in lines:
        for match in _BARE_PATH.finditer(text):
            token = match.group(1)
            if (why := path_fault(token)) and (where, token) not in STALE_ALLOWED:
                found.append(f"{where}:{line}: {token}: {why}")
        for match in _BACKTICKED.finditer(text):
            token = match.group(1).strip()
            if _PATH.match(token) and not token.startswith(("/", "~", "http")):
                why = path_fault(token)
            elif _NAME.match(token):
                why = name_fault(token)
            else:
                continue
            if why and (where, token) not in STALE_ALLOWED:
                found.append(f"{where}:{line}: `{token}`: {why}")
    return found


def test_every_name_the_prose_gives_resolves() -> None:
    faults = []
    for page in PAGES:
        faults += stale(str(page.relative_to(REPO)), prose_of_page(page))
    for folder in ("pithauthor", "tests", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            faults += stale(str(path.relative_to(REPO)), prose_of_python(path))
    assert faults == []


def issue_citations() -> list[str]:
    """Every comment, docstring or page line of the project that cites an issue number, and the
    labels a benchmark prints into benchmarks/RESULTS.md (all of a benchmark's text)."""
    found = []
    pages = [
        *PAGES,
        REPO / "benchmarks" / "RESULTS.md",
        *sorted((REPO / "tests").rglob("README.md")),
    ]
    lines = {page: prose_of_page(page) for page in pages}
    for folder in ("pithauthor", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            lines[path] = prose_of_python(path)
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        lines[path] = prose_of_page(path)
    makefile = REPO / "Makefile"
    lines[makefile] = [(n, t) for n, t in prose_of_page(makefile) if t.lstrip().startswith("#")]
    for path, texts in lines.items():
        for line, text in texts:
            found += [
                f"{path.relative_to(REPO)}:{line}: {m.group()}" for m in _ISSUE.finditer(text)
            ]
    return found


def test_no_prose_cites_an_issue_number() -> None:
    """A reader of the code or of RESULTS.md cannot see the tracker: the why is said in words."""
    assert issue_citations() == []


def test_the_prose_check_sees_stale_names() -> None:
    """Proves the checks above can fail: each kind of stale name is caught, and names that
    resolve, field paths and placeholders pass."""
    lines = [
        # moved to protocol/urls.py (`origin` alone is a document's field: a storage
        # attestation's code archive names one)
        (1, "see `protocol.text.checked_url` and `text.same_origin`"),
        (2, "read by `envelope.Signer`"),  # a module that is gone
        (3, "in `pithauthor/keys/backups.py`, `keys/backups.py` and tests/pith_launcher.py"),
        (4, "`pithauthor.registry.access.nope`, `pithauthor.verify.pinned_trust.nope`"),
        (5, "`protocol.urls.checked_url`, `pithauthor.registry.badge_number`, `keys/author.py`"),
        (6, "`record.status`, `signer.key_id`, `_cli/NAME_cmd.py`, `keys.json`, `os.path`"),
    ]
    assert stale("page.md", lines) == [
        "page.md:1: `protocol.text.checked_url`: protocol.text has no attribute checked_url"
        " (it is in pithauthor.protocol.urls)",
        "page.md:1: `text.same_origin`: text has no attribute same_origin"
        " (it is in pithauthor.protocol.urls)",
        "page.md:2: `envelope.Signer`: no module envelope (it is in pithauthor.protocol.events)",
        "page.md:3: tests/pith_launcher.py: no such file",
        "page.md:3: `pithauthor/keys/backups.py`: no such file",
        "page.md:3: `keys/backups.py`: no such file",
        "page.md:4: `pithauthor.registry.access.nope`: pithauthor.registry.access has no attribute"
        " nope",
        "page.md:4: `pithauthor.verify.pinned_trust.nope`: pithauthor.verify.pinned_trust has no"
        " attribute nope",
    ]
    assert _ISSUE.findall("as issue 27 asks (Issue 38: a bomb); a tissue 3 is no citation") == [
        "issue 27",
        "Issue 38",
    ]


def test_the_prose_of_a_module_is_its_comments_and_docstrings(tmp_path: Path) -> None:
    """What the checks read of a module: each comment and docstring (an attribute's too), with
    its line, and no code: a string the code uses is not prose."""
    module = tmp_path / "module.py"
    module.write_text(
        '"""Module (issue 1)."""\n'
        "X = 1  # issue 2\n"
        '"""X\'s docstring, issue 3."""\n'
        "def f() -> str:\n"
        '    """f,\n    issue 4."""\n'
        '    return "issue 5"\n',
        encoding="utf-8",
    )
    found = [
        (line, m.group()) for line, text in prose_of_python(module) for m in _ISSUE.finditer(text)
    ]
    assert sorted(found) == [(1, "issue 1"), (2, "issue 2"), (3, "issue 3"), (6, "issue 4")]
