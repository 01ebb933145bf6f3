r"""Find, with pylatexenc's parser, where the preamble is and where lines may safely be added.

Only the preamble (up to the first live `\begin{document}`) is parsed, so the cost does not grow
with the length of the body. "Live" means outside comments, `comment`/`verbatim`-like
environments, groups, and `\iffalse ... \fi` branches (pylatexenc knows nothing of TeX
conditionals; they are tracked here over the top-level nodes).

Two rewrites, each keeping every position, come before the parse, because real preambles hold
what pylatexenc's LaTeX model does not:

- every `\begin`/`\end` but those of verbatim-like environments becomes an unknown macro of the
  same length. In a preamble an environment is almost only ever opened inside a macro body
  (`\newcommand{\beq}{\begin{equation}}`, `\def\be{...}`, `\let\bea\begin`,
  `\newenvironment`, `\end@float` in a `\makeatletter` block), and pylatexenc would open it
  there and never close it, swallowing the rest of the file;
- the text TeX skips in `\iffalse ... \fi` (to its `\else`) is blanked: TeX does not count
  braces there, so an unbalanced `{` in a disabled block must not open a group.

`add_author_keys` puts `\pithauthorkey{KEY_ID}` lines where the preamble has room for them (the
paper proof of docs/identity.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pithauthor.errors import ManuscriptError
from pithauthor.latex.conditionals import TEX_TOKEN, blank_false_branches, conditional_states
from pithauthor.latex.verbatim import VERBATIM_ENVIRONMENTS

# pylatexenc is imported where a preamble is parsed: it takes longer to load than Typer.

# `\begin{document}`, spaces allowed before the brace: where the preamble ends (`sources`
# looks for it in the head of a file it reads only in part)
BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")


# `\begin` / `\end` as control words (not `\beginx`), with the environment name when it follows
_ENVIRONMENT_COMMAND = re.compile(r"\\(begin|end)(?![A-Za-z])(?:\s*\{([^{}\\]*)\})?")


# same-length stand-ins that pylatexenc does not know (so they take no argument)
_MASKS = {"begin": "\\pithB", "end": "\\ptE"}


# blanks as pylatexenc's tokenizer skips them (str.isspace) before a macro's next argument
_SPACE = re.compile(r"\s*")


_PACKAGE_LOADERS = ("usepackage", "RequirePackage")
# `\PassOptionsToPackage{review}{cvpr}`: options for a later load of that package or class
OPTION_PASSERS = ("PassOptionsToPackage", "PassOptionsToClass")


_INPUTS = ("input", "include")


# each candidate `\begin{document}` costs a parse of the text before it: a file with thousands
# of them (in comments, in a dead branch) must not cost thousands of parses
_MAX_CANDIDATES = 1000


_PLACEHOLDER_NAME = "pithauthorBegin"  # 15 letters: `\\begin{document}` has 16 characters


def _placeholder(match: re.Match[str]) -> str:
    """`\\pithauthorBegin` padded with letters to the length of `match`."""
    size = len(match.group(0)) - 1
    return "\\" + (_PLACEHOLDER_NAME + "x" * size)[:size]


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range [start, end) of the decoded text."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class PithNumberUse:
    """A live `\\pithnumber{VALUE}`: the whole macro and the inside of its braces."""

    macro: Span
    value: Span
    text: str


@dataclass(frozen=True, slots=True)
class InputUse:
    """A live `\\input{NAME}` or `\\include{NAME}` of the preamble, at its top level."""

    macro: Span
    name: str


@dataclass(frozen=True, slots=True)
class Load:
    """A live top-level `\\documentclass`, `\\usepackage` or `\\RequirePackage`: its
    options and names, as written (`review.py` reads a review copy from them)."""

    macro: str
    options: tuple[str, ...]
    names: tuple[str, ...]


@dataclass(slots=True)
class Fragment:
    """What a piece of preamble holds: a whole preamble, or a file it inputs."""

    documentclass: Span | None = None
    hyperref: Span | None = None
    pith_package: Span | None = None
    pith_numbers: list[PithNumberUse] = field(default_factory=list)
    boundaries: list[int] = field(default_factory=list)  # safe line starts, ascending
    inputs: list[InputUse] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    commands: set[str] = field(default_factory=set)  # the live top-level macros' names


@dataclass(slots=True)
class Preamble:
    """What `locate` found in a manuscript's preamble (positions in the decoded text)."""

    begin_document: int
    documentclass: Span
    hyperref: Span | None
    pith_package: Span | None
    pith_numbers: list[PithNumberUse] = field(default_factory=list)
    boundaries: list[int] = field(default_factory=list)  # safe line starts, ascending
    inputs: list[InputUse] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    commands: set[str] = field(default_factory=set)  # the live top-level macros' names

    def line_start_after(self, position: int) -> int | None:
        """The first safe line start at or after `position` (None when there is none)."""
        for boundary in self.boundaries:
            if boundary >= position:
                return boundary
        return None


def has_live_begin_document(text: str) -> bool:
    """True when `text` has a `\\begin{document}` outside comments and dead branches."""
    try:
        _parse_to_document(text, "<text>")
    except ManuscriptError:
        return False
    return True


def locate(text: str, name: str) -> Preamble:
    """Parse the preamble of `text` (file `name`, for messages); raise ManuscriptError when
    there is no live `\\documentclass` or `\\begin{document}`."""
    nodes, begin = _parse_to_document(text, name)
    found = _scan(text, nodes, begin, name)
    if found.documentclass is None:
        where = _line(text, begin)
        raise ManuscriptError(
            f"{name}: no \\documentclass before \\begin{{document}} (line {where})"
            + (f"; it inputs {', '.join(u.name for u in found.inputs)}" if found.inputs else "")
        )
    return Preamble(
        begin_document=begin,
        documentclass=found.documentclass,
        hyperref=found.hyperref,
        pith_package=found.pith_package,
        pith_numbers=found.pith_numbers,
        boundaries=found.boundaries,
        inputs=found.inputs,
        loads=found.loads,
        commands=found.commands,
    )


def locate_fragment(text: str, name: str) -> Fragment:
    """What a file read by the preamble (`\\input{macros}`) holds, parsed as a whole."""
    prepared, _ = _prepare(text)
    return _scan(text, _nodes(prepared, name), len(text), name)


def _nodes(prepared: str, name: str) -> list[Any]:
    """pylatexenc's top-level nodes of `prepared`. Its parser recurses once per nested group:
    braces nested some hundreds deep exhaust Python's stack, which is bad input, not a bug."""
    from pylatexenc.latexwalker import LatexWalker

    walker = LatexWalker(prepared, latex_context=_context(), tolerant_parsing=True)
    try:
        nodes, _, _ = walker.get_latex_nodes(pos=0)
    except RecursionError:
        raise ManuscriptError(f"{name}: braces or environments nested too deep to read") from None
    return list(nodes)


def _scan(text: str, nodes: list[Any], limit: int, name: str) -> Fragment:
    """The live top-level facts of `nodes` (parsed from `text`) before position `limit`."""
    found = Fragment()
    for node, (depth, dead, _) in zip(nodes, conditional_states(nodes), strict=True):
        if node.pos >= limit:
            break
        kind = type(node).__name__
        if not dead and depth == 0:
            found.boundaries.extend(_line_starts(text, node, limit))
        if dead or kind != "LatexMacroNode":
            continue
        span = Span(node.pos, _core_end(node))
        found.commands.add(node.macroname)
        if node.macroname in ("documentclass", *_PACKAGE_LOADERS):
            found.loads.append(_load(node))
        elif node.macroname in OPTION_PASSERS:
            found.loads.append(_passed_options(node))
        # `\documentstyle`: a LaTeX 2.09 file, which LaTeX still runs in compatibility mode
        if node.macroname in ("documentclass", "documentstyle") and found.documentclass is None:
            found.documentclass = span
        elif node.macroname in _PACKAGE_LOADERS:
            packages = _package_names(node)
            if "hyperref" in packages:
                found.hyperref = span
            if "pith" in packages and found.pith_package is None:
                found.pith_package = span
        elif node.macroname == "pithnumber":
            found.pith_numbers.append(_pith_number_use(text, node, span, name))
        elif node.macroname in _INPUTS:
            args = node.nodeargd.argnlist if node.nodeargd else []
            if args and args[-1] is not None and type(args[-1]).__name__ == "LatexGroupNode":
                found.inputs.append(InputUse(span, _group_chars(args[-1]).strip()))
    return found


def _prepare(text: str, end: int | None = None) -> tuple[str, list[tuple[int, int, int]]]:
    """`text[:end]` with its `\\iffalse` branches blanked and its environments masked (see the
    module docstring), and the blanked regions as (start, end, position of their `\\iffalse`).

    Only the part before `end` is rewritten: a candidate `\\begin{document}` needs nothing after
    it, and rewriting a 50,000-line body to parse a 60-line preamble cost more than the parse.
    Both rewrites read left to right, so the prefix comes out as it would from the
    whole text; a region still open at `end` ends there."""
    end = len(text) if end is None else end
    blanked, regions = blank_false_branches(text, end)

    def mask(match: re.Match[str]) -> str:
        word, env = match.group(1), match.group(2)
        env = env.strip() if env is not None else None
        if env in VERBATIM_ENVIRONMENTS or (word == "begin" and env == "document"):
            return match.group(0)
        return _MASKS[word] + match.group(0)[len(word) + 1 :]

    return _ENVIRONMENT_COMMAND.sub(mask, blanked), regions


def _parse_to_document(text: str, name: str) -> tuple[list[Any], int]:
    """Top-level nodes of the text up to the first live `\\begin{document}`, and its position."""
    reasons: list[tuple[int, str, bool]] = []  # (position, why it is not live, structural)
    for count, match in enumerate(BEGIN_DOCUMENT.finditer(text)):
        if count >= _MAX_CANDIDATES:
            break
        # rewritten up to this candidate only (usually the only one, ending the preamble)
        prepared, regions = _prepare(text, match.end())
        dead_region = next((r for r in regions if r[0] <= match.start() < r[1]), None)
        if dead_region is not None:
            why = f"inside the \\iffalse of line {_line(text, dead_region[2])}"
            reasons.append((match.start(), why, False))
            continue
        # Every `\begin{document}` becomes a same-length placeholder macro, so that pylatexenc
        # does not open an environment that is never closed (positions stay the same).
        prefix = BEGIN_DOCUMENT.sub(_placeholder, prepared)
        nodes = _nodes(prefix, name)
        if not nodes:
            continue
        last = nodes[-1]
        if (
            type(last).__name__ == "LatexMacroNode"
            and last.macroname.startswith(_PLACEHOLDER_NAME)
            and last.pos == match.start()
        ):
            _, dead, opener = conditional_states(nodes)[-1]
            if not dead:
                return nodes, match.start()
            why = f"inside the disabled branch of the conditional of line {_line(text, opener)}"
            reasons.append((match.start(), why, False))
            continue
        reasons.append((match.start(), *_container(text, last)))
    if not reasons:
        raise ManuscriptError(f"{name}: no \\begin{{document}}; is this the main file?")
    # the first one swallowed by an open brace or environment names the culprit best
    at, why, _ = next((r for r in reasons if r[2]), reasons[0])
    others = f" (and {len(reasons) - 1} more \\begin{{document}})" if len(reasons) > 1 else ""
    raise ManuscriptError(
        f"{name}: no \\begin{{document}} that TeX reaches: the one at line {_line(text, at)} "
        f"is {why}{others}"
    )


def _container(text: str, node: Any) -> tuple[str, bool]:
    """Why a `\\begin{document}` inside top-level `node` is not the real one, and whether the
    cause is structure (an open brace, environment, argument or math) rather than a comment."""
    kind = type(node).__name__
    where = _line(text, node.pos)
    if kind == "LatexCommentNode":
        return "in a comment", False
    if kind == "LatexEnvironmentNode":
        env = node.environmentname
        return f"inside \\begin{{{env}}} of line {where}, which TeX does not run", False
    if kind == "LatexGroupNode":
        return f"inside the {{ opened at line {where}, not closed before it", True
    if kind == "LatexMacroNode":
        return (
            f"inside an argument of \\{node.macroname} (line {where}), not closed before it",
            True,
        )
    if kind == "LatexMathNode":
        return f"inside math opened at line {where}, not closed before it", True
    return f"inside what opens at line {where}", True


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _core_end(node: Any) -> int:
    """Where a macro's name and arguments end (before the spaces pylatexenc attaches)."""
    args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
    if args:
        return max(int(a.pos + a.len) for a in args)
    return int(node.pos + 1 + len(node.macroname))


def _line_starts(text: str, node: Any, limit: int) -> list[int]:
    """Positions just after a newline that lies at top level inside `node`."""
    kind = type(node).__name__
    end = min(node.pos + node.len, limit)
    if kind == "LatexCharsNode":
        start = node.pos
    elif kind == "LatexCommentNode":
        start = node.pos + 1 + len(node.comment)
    elif kind == "LatexMacroNode":
        start = _core_end(node)
    else:
        return []
    starts = []
    position = text.find("\n", start, end)
    while position != -1:
        starts.append(position + 1)
        position = text.find("\n", position + 1, end)
    return starts


def _group_chars(group: Any) -> str:
    parts = []
    for child in group.nodelist or []:
        if type(child).__name__ == "LatexCharsNode":
            parts.append(child.chars)
    return "".join(parts)


def _package_names(node: Any) -> list[str]:
    args = node.nodeargd.argnlist if node.nodeargd else []
    if not args or args[-1] is None or type(args[-1]).__name__ != "LatexGroupNode":
        return []
    return [part.strip() for part in _group_chars(args[-1]).split(",")]


def _load(node: Any) -> Load:
    args = node.nodeargd.argnlist if node.nodeargd else []
    options = ""
    if args and args[0] is not None and type(args[0]).__name__ == "LatexGroupNode":
        options = args[0].latex_verbatim().strip()[1:-1]
    split = [o.strip() for o in re.sub(r"%[^\n]*", "", options).split(",") if o.strip()]
    return Load(node.macroname, tuple(split), tuple(n for n in _package_names(node) if n))


def _passed_options(node: Any) -> Load:
    r"""`\PassOptionsToPackage{OPTIONS}{NAMES}` as a `Load` of its own macro (no package is
    loaded by it: `review.py` adds its options to a real load of the same name)."""
    args = node.nodeargd.argnlist if node.nodeargd else []
    groups = [a for a in args if a is not None and type(a).__name__ == "LatexGroupNode"]
    if len(groups) != 2:
        return Load(node.macroname, (), ())
    options = re.sub(r"%[^\n]*", "", _group_chars(groups[0])).split(",")
    names = re.sub(r"%[^\n]*", "", _group_chars(groups[1])).split(",")
    return Load(
        node.macroname,
        tuple(o.strip() for o in options if o.strip()),
        tuple(n.strip() for n in names if n.strip()),
    )


def _pith_number_use(text: str, node: Any, span: Span, name: str) -> PithNumberUse:
    args = node.nodeargd.argnlist if node.nodeargd else []
    group = args[0] if args else None
    if group is None or type(group).__name__ != "LatexGroupNode":
        raise ManuscriptError(f"{name}: \\pithnumber without a {{...}} argument")
    value = Span(group.pos + 1, group.pos + group.len - 1)
    return PithNumberUse(macro=span, value=value, text=text[value.start : value.end])


# the definitions pylatexenc knows, with its argument specs (pylatexenc/latexwalker/_defaultspecs)
_DEFINITIONS = dict.fromkeys(("newcommand", "renewcommand", "providecommand"), "*{[[{") | {
    "newenvironment": "*{[[{{",
    "renewenvironment": "*{[[{{",
}


@lru_cache(maxsize=1)
def _context() -> Any:
    """pylatexenc's default context, plus the macros and verbatim environments we care about."""
    from pylatexenc.latexwalker import get_default_latex_context_db
    from pylatexenc.macrospec import EnvironmentSpec, MacroSpec, std_macro

    db = get_default_latex_context_db()
    definitions = _definition_parser()
    db.add_context_category(
        "pithauthor",
        macros=[
            std_macro("pithnumber", False, 1),
            std_macro("RequirePackage", True, 1),
            *(std_macro(name, False, 2) for name in OPTION_PASSERS),
            # `\newif` takes its switch as an argument: `\newif\ifdraft` opens no conditional
            std_macro("newif", False, 1),
            *(MacroSpec(n, args_parser=definitions(spec)) for n, spec in _DEFINITIONS.items()),
        ],
        environments=[
            EnvironmentSpec(env, args_parser=_verbatim_parser(env)) for env in VERBATIM_ENVIRONMENTS
        ],
        prepend=True,
    )
    return db


def _verbatim_parser(environment: str) -> Any:
    """An argument parser that takes everything up to `\\end{environment}` (or the end)."""
    from pylatexenc.macrospec import ParsedVerbatimArgs, VerbatimArgsParser

    class _UntilEnd(VerbatimArgsParser):  # type: ignore[misc]
        def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> Any:
            end = w.s.find("\\end{" + environment + "}", pos)
            if end == -1:
                end = len(w.s)
            chars = _node(w, parsing_state, "LatexCharsNode", pos, end - pos, chars=w.s[pos:end])
            return (ParsedVerbatimArgs(verbatim_chars_node=chars), pos, end - pos)

    return _UntilEnd(verbatim_arg_type="verbatim-environment")


def _balanced_end(text: str, start: int) -> int:
    """Just after the `}` closing the `{` at `start`, braces counted as TeX counts them when it
    reads an argument (`\\{`, `\\}` and comments do not count); the end of `text` if none."""
    depth = 0
    for token in TEX_TOKEN.finditer(text, start):
        depth += {"{": 1, "}": -1}.get(token.group(0), 0)
        if depth == 0:
            return token.end()
    return len(text)


def _definition_parser() -> Any:
    """The arguments of `\\newcommand` and the other `_DEFINITIONS`, each braced one a group of
    plain characters found by counting braces: TeX reads a definition's arguments as balanced
    text, and nothing here reads inside them (only top-level nodes), while pylatexenc parsed
    each body node by node, 3/4 of the parse of a preamble of `\\newcommand` lines.
    Each group has pylatexenc's position and length; anything unusual (a bare `\\newcommand\\x`,
    a comment or a paragraph break between the arguments, the end) is left to pylatexenc."""
    from pylatexenc.macrospec import MacroStandardArgsParser, ParsedMacroArgs

    def plain_args(w: Any, pos: int, argspec: str, state: Any) -> tuple[list[Any], int] | None:
        args: list[Any] = []
        at = pos
        for kind in argspec:
            ahead = _SPACE.match(w.s, at).end()  # type: ignore[union-attr]
            if ahead >= len(w.s) or "\n\n" in w.s[at:ahead]:
                return None  # the end, or a paragraph break (a token of its own)
            char = w.s[ahead]
            if kind in "*[" and char != kind:
                args.append(None)  # no star, no optional argument
            elif kind == "*":
                args.append(_node(w, state, "LatexCharsNode", ahead, 1, chars="*"))
                at = ahead + 1
            elif kind == "[":
                found = w.get_latex_maybe_optional_arg(at, parsing_state=state)
                args.append(None if found is None else found[0])
                at = at if found is None else found[1] + found[2]
            elif char != "{":
                return None
            else:
                end = _balanced_end(w.s, ahead)
                inner = end - 1 if w.s[end - 1] == "}" else end
                body = w.s[ahead + 1 : inner]
                chars = _node(w, state, "LatexCharsNode", ahead + 1, len(body), chars=body)
                args.append(_node(w, state, "LatexGroupNode", ahead, end - ahead, nodelist=[chars]))
                at = end
        return args, at

    class _DefinitionArgs(MacroStandardArgsParser):  # type: ignore[misc]
        def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> Any:
            state = w.make_parsing_state() if parsing_state is None else parsing_state
            found = plain_args(w, pos, self.argspec, state)
            if found is None:
                return super().parse_args(w, pos, parsing_state=parsing_state)
            args, at = found
            return ParsedMacroArgs(argspec=self.argspec, argnlist=args), pos, at - pos

    return _DefinitionArgs


def _node(w: Any, state: Any, kind: str, pos: int, size: int, **fields: Any) -> Any:
    """A new pylatexenc node of class `kind` at [pos, pos + size)."""
    from pylatexenc import latexwalker

    return w.make_node(getattr(latexwalker, kind), parsing_state=state, pos=pos, len=size, **fields)


_KEY_USE = re.compile(r"^[ \t]*\\pithauthorkey\s*\{\s*([^}]*?)\s*\}", re.MULTILINE)


def add_author_keys(text: str, name: str, newline: str, key_ids: Sequence[str]) -> tuple[str, int]:
    """`text` with a `\\pithauthorkey` line for each key id it lacks, and how many were added.

    The lines go after the last `\\pithauthorkey`, else after `\\pithnumber`, else after
    `\\usepackage{pith}`, else (with `\\usepackage{pith}`) after `\\documentclass`/hyperref."""
    pre = locate(text, name)
    head = text[: pre.begin_document]
    present = _KEY_USE.findall(head)
    missing = [k for k in dict.fromkeys(key_ids) if k not in present]
    if not missing:
        return text, 0
    lines = "".join(f"\\pithauthorkey{{{k}}}{newline}" for k in missing)
    uses = list(_KEY_USE.finditer(head))
    if uses:
        anchor = uses[-1].end()
    elif pre.pith_numbers:
        anchor = pre.pith_numbers[-1].macro.end
    elif pre.pith_package is not None:
        anchor = pre.pith_package.end
    else:
        anchor = pre.documentclass.end
        if pre.hyperref is not None and pre.hyperref.end > anchor:
            anchor = pre.hyperref.end
        lines = "\\usepackage{pith}" + newline + lines
    at = pre.line_start_after(anchor)
    if at is None:
        raise ManuscriptError(f"{name}: no safe line in the preamble for \\pithauthorkey")
    return text[:at] + lines + text[at:], len(missing)
