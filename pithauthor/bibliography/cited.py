r"""What a manuscript cites: the citation macros it defines itself (pure), and the keys its
`\cite` commands (and those macros) cite, read from the .aux files or the .tex sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pithauthor.errors import ManuscriptError
from pithauthor.fs import MAX_TEX_BYTES, read_user_file
from pithauthor.latex.verbatim import verbatim_block

# Citation macros a manuscript defines itself, and the keys their uses cite (pure).
#
# Authors wrap `\cite` in their own commands (`\newcommand{\refref}[1]{\cite{#1}}`). A
# definition is followed when it is one of
#
# - `\newcommand`, `\renewcommand`, `\providecommand`, `\DeclareRobustCommand` (starred or
#   not, `[N]` arguments, `[default]` for an optional first one);
# - `\NewDocumentCommand` and its Renew/Provide/Declare forms with argument types `m`, `o`,
#   `O{...}`, `s`;
# - `\def`, `\gdef`, `\edef`, `\xdef` with undelimited parameters `#1#2...`;
# - `\let\refref\cite` (or `=`): then `\refref` is `\cite`;
#
# and its body passes whole arguments to a citation command (`\cite{#1}`, `\citep[#1]{#2}`,
# `\cite{#1,#2}`, another followed macro) or cites fixed keys (`\cite{knuth84}`). Anything
# else in a definition that holds a citation (a key built from an argument, `\cite{pre#1}`;
# delimited `\def` parameters; other xparse argument types) is *not followed* and named, so that
# the author knows which entries `--only-cited` may have missed. Reading the `.aux` is exact.

#: A citation command by name: anything with `cite` in it, and `\nocite`. Broad on purpose:
#: natbib, biblatex and the styles define dozens (`\citet`, `\parencite`, `\autocite`,
#: `\Citeauthor`...), and a missed one drops an entry from `--only-cited` without a word.
CITE_NAME = re.compile(r"[A-Za-z]*[Cc]ite[A-Za-z]*|nocite")


# names holding `cite` that configure citations and cite nothing (`\DeclareCiteCommand`, ...):
# also biblatex's hooks (`\AtNextCite{code}`, `\AtEveryCitekey{code}`: their argument is code,
# not keys), natbib's `\setcitestyle{...}` and `\defcitealias{key}{text}` (names an alias,
# cites nothing), and biblatex's `\citereset`
NOT_CITATIONS = (
    "Declare",
    "New",
    "Renew",
    "Provide",
    "citestyle",
    "citesetup",
    "At",
    "setcitestyle",
    "defcitealias",
    "citereset",
)


_NAME = r"(?:\{\s*\\([A-Za-z@]+)\s*\}|\\([A-Za-z@]+))"


_NEWCOMMAND = re.compile(
    r"\\(?:newcommand|renewcommand|providecommand|DeclareRobustCommand)\s*\*?\s*"
    + _NAME
    + r"\s*(?:\[\s*([0-9])\s*\])?\s*(\[)?"
)


_DOCUMENT_COMMAND = re.compile(
    r"\\(?:New|Renew|Provide|Declare)DocumentCommand\s*" + _NAME + r"\s*\{"
)


_TEX_DEF = re.compile(r"\\[gex]?def\s*\\([A-Za-z@]+)([^{]*)\{")


_LET = re.compile(r"\\let\s*\\([A-Za-z@]+)\s*=?\s*\\([A-Za-z@]+)(?![A-Za-z@])")


COMMAND = re.compile(r"\\([A-Za-z@]+)(?![A-Za-z@])")


_PARAMS = re.compile(r"(?:#[1-9])*")


_ARG_LIST = re.compile(r"\s*#([1-9])\s*(?:,\s*#[1-9]\s*)*")


_ARG = re.compile(r"#([1-9])")


_OPTIONAL = re.compile(r"\s*(?:\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]|<[^<>]*>|\([^()]*\))")


_ROUNDS = 5  # macros wrapping macros wrapping \cite: followed this deep


@dataclass(frozen=True, slots=True)
class Macro:
    """How to read one use of a citation macro: its arguments (`s` star, `o` optional `[..]`,
    `m` mandatory), which of them hold keys (1-based), and the keys it always cites."""

    kinds: tuple[str, ...]
    key_args: tuple[int, ...] = ()
    fixed: frozenset[str] = frozenset()


@dataclass
class Definitions:
    """The citation macros of a manuscript, and those that could not be followed."""

    macros: dict[str, Macro] = field(default_factory=dict)
    aliases: set[str] = field(default_factory=set)  # `\let\x\cite`: read like `\cite`
    unfollowed: dict[str, str] = field(default_factory=dict)  # name -> why
    spans: list[tuple[int, int]] = field(default_factory=list)  # the definitions' text


def group(text: str, start: int) -> tuple[str, int] | None:
    """The text of the brace group opening at `text[start]` and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{" and text[i - 1 : i] != "\\":
            depth += 1
        elif text[i] == "}" and text[i - 1 : i] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    return None


def is_citation(name: str, defs: Definitions) -> bool:
    if name in defs.macros or name in defs.aliases:
        return True
    return bool(CITE_NAME.fullmatch(name)) and not name.startswith(NOT_CITATIONS)


_Raw = tuple[str, "tuple[str, ...] | None", str, int, int]


def _raw_definitions(text: str) -> list[_Raw]:
    """(name, argument kinds or None when unreadable, body, start, end) of every definition."""
    found: list[_Raw] = []
    for match in _NEWCOMMAND.finditer(text):
        name = match.group(1) or match.group(2)
        count = int(match.group(3) or 0)
        position = match.end()
        if match.group(4):  # `[default]` of an optional first argument
            close = text.find("]", position)
            if close < 0:
                continue
            position = close + 1
        kinds: tuple[str, ...] = ("o",) * bool(match.group(4)) + ("m",) * count
        kinds = kinds[:count] if count else ()
        body_start = _skip_spaces(text, position)
        body = group(text, body_start)
        if body is not None:
            found.append((name, kinds, body[0], match.start(), body[1]))
    for match in _DOCUMENT_COMMAND.finditer(text):
        name = match.group(1) or match.group(2)
        spec = group(text, match.end() - 1)
        if spec is None:
            continue
        body = group(text, _skip_spaces(text, spec[1]))
        if body is not None:
            found.append((name, _xparse_kinds(spec[0]), body[0], match.start(), body[1]))
    for match in _TEX_DEF.finditer(text):
        params = match.group(2).strip()
        body = group(text, match.end() - 1)
        if body is None:
            continue
        plain = ("m",) * params.count("#") if _PARAMS.fullmatch(params) else None
        found.append((match.group(1), plain, body[0], match.start(), body[1]))
    return found


def _skip_spaces(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _xparse_kinds(spec: str) -> tuple[str, ...] | None:
    kinds, i = [], 0
    while i < len(spec):
        char = spec[i]
        if char.isspace():
            i += 1
        elif char in "mos":
            kinds.append(char)
            i += 1
        elif char == "O" and (default := group(spec, _skip_spaces(spec, i + 1))) is not None:
            kinds.append("o")
            i = default[1]
        else:
            return None  # another argument type: not followed
    return tuple(kinds)


def definitions(text: str) -> Definitions:
    """The citation macros defined in `text` (cleaned LaTeX: no comments, no verbatim)."""
    defs = Definitions()
    raw = _raw_definitions(text)
    defs.spans = [(start, end) for *_, start, end in raw]
    for match in _LET.finditer(text):
        if is_citation(match.group(2), defs):
            defs.aliases.add(match.group(1))
            defs.spans.append(match.span())
    for _ in range(_ROUNDS):  # a macro may wrap one defined before or after it
        known = (dict(defs.macros), set(defs.aliases))
        for name, kinds, body, *_ in raw:
            _follow(name, kinds, body, defs)
        if known == (defs.macros, defs.aliases):
            break
    for name in list(defs.unfollowed):
        if name in defs.macros:
            del defs.unfollowed[name]
    return defs


def _follow(name: str, kinds: tuple[str, ...] | None, body: str, defs: Definitions) -> None:
    key_args: list[int] = []
    fixed: set[str] = set()
    cites = False
    for command, arguments in _calls(body, defs):
        cites = True
        for raw in arguments:
            if "#" not in raw:
                fixed |= split_keys(raw)
            elif kinds is not None and _ARG_LIST.fullmatch(raw):
                key_args += [int(n) for n in _ARG.findall(raw)]
            else:
                why = (
                    "its arguments are not all plain (delimited or of another type)"
                    if kinds is None
                    else f"\\{command}{{{raw.strip()}}} builds keys from its arguments"
                )
                defs.unfollowed.setdefault(name, why)
                return
    if cites and kinds is not None and name not in defs.aliases:
        defs.macros[name] = Macro(kinds, tuple(dict.fromkeys(key_args)), frozenset(fixed))


def _calls(text: str, defs: Definitions) -> list[tuple[str, list[str]]]:
    """Every citation command or macro in `text`, with its key arguments' raw text."""
    calls = []
    for match in COMMAND.finditer(text):
        name = match.group(1)
        if not is_citation(name, defs):
            continue
        arguments, _ = read_use(text, match.end(), defs.macros.get(name), name)
        calls.append((name, arguments))
    return calls


def read_use(text: str, position: int, macro: Macro | None, name: str) -> tuple[list[str], int]:
    """The raw key arguments of one use at `position` (just after the command's name), and
    where the use ends. A macro is read by its argument kinds; a citation command (or an
    alias of one) as `\\cite` is: optional arguments, then keys (several groups for
    biblatex's `\\cites`)."""
    if macro is None:
        keys: list[str] = []
        if text.startswith("*", position):
            position += 1
        while True:
            while optional := _OPTIONAL.match(text, position):
                position = optional.end()
            mandatory = group(text, _skip_spaces(text, position))
            if mandatory is None:
                return keys, position
            keys.append(mandatory[0])
            position = mandatory[1]
            if not name.endswith("cites"):
                return keys, position
    values: list[str] = []
    for kind in macro.kinds:
        start = _skip_spaces(text, position)
        if kind == "s":
            position = start + 1 if text.startswith("*", start) else position
            values.append("")
        elif kind == "o":
            optional = _OPTIONAL.match(text, position)
            position = optional.end() if optional else position
            values.append("")
        else:
            braced = group(text, start)
            if braced is None:  # an undelimited argument: one token
                token = COMMAND.match(text, start)
                end = token.end() if token else min(start + 1, len(text))
                values.append(text[start:end])
                position = end
            else:
                values.append(braced[0])
                position = braced[1]
    keys = [values[n - 1] for n in macro.key_args if n <= len(values)]
    if macro.fixed:
        keys.append(",".join(sorted(macro.fixed)))
    return keys, position


def split_keys(text: str) -> set[str]:
    """The keys of one argument (`a, b`); none holding `#` (a macro's parameter)."""
    return {key.strip() for key in text.split(",") if key.strip() and "#" not in key}


# The keys a manuscript cites, from its `.aux` file or from its LaTeX source.
#
# From LaTeX: every `\cite`-like command (natbib, biblatex, apacite, starred, with optional
# arguments, biblatex's multicite `\cites[..]{a}[..]{b}`) and `\nocite`, outside comments and
# verbatim-like environments, in the main file and the files it `\input`s or `\include`s inside
# its own folder tree, and the citation macros the manuscript defines (`cite_macros`). `*` in the
# result means `\nocite{*}`: every entry is cited (reading.ALL).


_VERB = re.compile(r"\\verb\*?([^a-zA-Z\s*])(?:(?!\1).)*\1")


_INPUT = re.compile(
    r"\\(?:input|include|subfile|InputIfFileExists)\s*(?:\{([^{}]+)\}|([^\s{}\\%]+))"
)


_AUX_CITATION = re.compile(r"\\citation\{([^{}]*)\}")


_AUX_BIBLATEX = re.compile(r"\\abx@aux@cite(?:\{[^{}]*\})?\{([^{}]*)\}")


_AUX_INPUT = re.compile(r"\\@input\{([^{}]+)\}")


@dataclass(frozen=True, slots=True)
class Citations:
    """What a manuscript cites: its keys, and the citation macros it defines that could not be
    followed (name -> why; their uses may cite keys that are not in `keys`)."""

    keys: frozenset[str]
    unfollowed: dict[str, str] = field(default_factory=dict)


def cited_keys(path: Path) -> set[str]:
    """The citation keys of a `.tex` manuscript (with its inputs) or a `.aux` file."""
    return set(read_citations(path).keys)


def read_citations(path: Path) -> Citations:
    """`cited_keys`, with the citation macros that could not be followed (LaTeX source only:
    an `.aux` lists every key exactly)."""
    path = Path(path)
    try:
        root = path.resolve().parent
    except (OSError, RuntimeError):  # RuntimeError: a link loop, before Python 3.13
        raise ManuscriptError(f"{path}: a loop of symbolic links (or too many of them)") from None
    unfollowed: dict[str, str] = {}
    if path.suffix.lower() == ".aux":
        keys = _aux_keys(path, root=root, seen=set())
    else:
        source = "\n".join(_tex_sources(path, root=root, seen=set()))
        defs = definitions(source)
        keys = keys_in_source(source, defs)
        unfollowed = defs.unfollowed
    if not keys:
        raise ManuscriptError(
            f"{path}: no citation found in it (no \\cite, \\citation or \\bibcite); "
            "give the manuscript's main .tex or its .aux"
        )
    return Citations(frozenset(keys), unfollowed)


def _read(path: Path) -> str:
    data = read_user_file(
        path, ManuscriptError, "a .tex or .aux file", limit=MAX_TEX_BYTES, text_only=False
    )
    return data.decode("utf-8", errors="replace")


def _split_keys(text: str) -> set[str]:
    return {key.strip() for key in text.split(",") if key.strip()}


def _aux_keys(path: Path, *, root: Path, seen: set[Path]) -> set[str]:
    seen.add(path.resolve())
    text = _read(path)
    keys: set[str] = set()
    for match in _AUX_CITATION.finditer(text):
        keys |= _split_keys(match.group(1))
    for match in _AUX_BIBLATEX.finditer(text):
        keys |= _split_keys(match.group(1))
    for match in _AUX_INPUT.finditer(text):
        child = _inside(root, path.parent / match.group(1))
        if child is not None and child not in seen and child.is_file():
            keys |= _aux_keys(child, root=root, seen=seen)
    return keys


def strip_comments(text: str) -> str:
    """`text` without TeX comments: a `%` preceded by an even number of backslashes."""
    if "%" not in text:
        return text
    out = []
    for line in text.split("\n"):
        cut = _comment_start(line)
        out.append(line if cut is None else line[:cut])
    return "\n".join(out)


def _comment_start(line: str) -> int | None:
    start = 0
    while (i := line.find("%", start)) >= 0:
        backslashes = len(line[:i]) - len(line[:i].rstrip("\\"))
        if backslashes % 2 == 0:
            return i
        start = i + 1
    return None


def clean_source(text: str) -> str:
    """LaTeX source without comments, verbatim-like environments and `\\verb` arguments."""
    text = verbatim_block().sub(" ", text)
    text = _VERB.sub(" ", text)
    return strip_comments(text)


def keys_in_source(text: str, defs: Definitions | None = None) -> set[str]:
    """Citation keys in already cleaned LaTeX: every citation command, and every use of a
    citation macro (`defs`, by default the ones `text` defines). The definitions themselves
    are not uses."""
    if defs is None:
        defs = definitions(text)
    for start, end in defs.spans:
        text = text[:start] + " " * (end - start) + text[end:]
    keys: set[str] = set()
    for match in COMMAND.finditer(text):
        name = match.group(1)
        if is_citation(name, defs):
            arguments, _ = read_use(text, match.end(), defs.macros.get(name), name)
            for raw in arguments:
                keys |= split_keys(raw)
    return keys


def _inside(root: Path, candidate: Path) -> Path | None:
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):  # a link loop: not a file the build can read either
        return None
    return resolved if resolved.is_relative_to(root) else None


def _tex_sources(path: Path, *, root: Path, seen: set[Path]) -> list[str]:
    """The cleaned text of `path` and of the files it inputs, in reading order."""
    seen.add(path.resolve())
    text = clean_source(_read(path))
    texts = [text]
    for match in _INPUT.finditer(text):
        name = (match.group(1) or match.group(2)).strip()
        for candidate in (root / f"{name}.tex", root / name):
            child = _inside(root, candidate)
            if child is not None and child.is_file():
                if child not in seen:
                    texts += _tex_sources(child, root=root, seen=seen)
                break
    return texts
