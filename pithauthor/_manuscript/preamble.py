"""Find, with pylatexenc's parser, where the preamble is and where lines may safely be added.

Only the preamble (up to the first live `\\begin{document}`) is parsed, so the cost does not grow
with the length of the body. "Live" means outside comments, `comment`/`verbatim`-like
environments, groups, and `\\iffalse ... \\fi` branches (pylatexenc knows nothing of TeX
conditionals; they are tracked here over the top-level nodes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pithauthor._core.tex_verbatim import VERBATIM_ENVIRONMENTS
from pithauthor.errors import ManuscriptError

# pylatexenc is imported where a preamble is parsed: it takes longer to load than Typer.

_BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_CONDITIONALS = frozenset(
    {
        "if",
        "ifcat",
        "ifnum",
        "ifdim",
        "ifodd",
        "ifvmode",
        "ifhmode",
        "ifmmode",
        "ifinner",
        "ifvoid",
        "ifhbox",
        "ifvbox",
        "ifx",
        "ifeof",
        "iftrue",
        "iffalse",
        "ifcase",
        "ifdefined",
        "ifcsname",
        "iffontchar",
        "ifincsname",
        "ifpdfprimitive",
        "ifpdfabsnum",
        "ifpdfabsdim",
        "ifabsnum",
        "ifabsdim",
        "ifpdf",
        "ifxetex",
        "ifluatex",
        "ifPDFTeX",
        "ifXeTeX",
        "ifLuaTeX",
        "ifpdftex",
        "iftutex",
        "ifvtex",
    }
)
_PACKAGE_LOADERS = ("usepackage", "RequirePackage")
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


@dataclass(slots=True)
class Preamble:
    """What `locate` found in a manuscript's preamble (positions in the decoded text)."""

    begin_document: int
    documentclass: Span
    hyperref: Span | None
    pith_package: Span | None
    pith_numbers: list[PithNumberUse] = field(default_factory=list)
    boundaries: list[int] = field(default_factory=list)  # safe line starts, ascending

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
    states = _conditional_states(nodes)
    documentclass: Span | None = None
    hyperref: Span | None = None
    pith_package: Span | None = None
    numbers: list[PithNumberUse] = []
    boundaries: list[int] = []
    for node, (depth, dead) in zip(nodes, states, strict=True):
        if node.pos >= begin:
            break
        kind = type(node).__name__
        if not dead and depth == 0:
            boundaries.extend(_line_starts(text, node, begin))
        if dead or kind != "LatexMacroNode":
            continue
        span = Span(node.pos, _core_end(node))
        if node.macroname in ("documentclass", "documentstyle") and documentclass is None:
            documentclass = span
        elif node.macroname in _PACKAGE_LOADERS:
            packages = _package_names(node)
            if "hyperref" in packages:
                hyperref = span
            if "pith" in packages and pith_package is None:
                pith_package = span
        elif node.macroname == "pithnumber":
            numbers.append(_pith_number_use(text, node, span, name))
    if documentclass is None:
        raise ManuscriptError(f"{name}: no \\documentclass before \\begin{{document}}")
    return Preamble(
        begin_document=begin,
        documentclass=documentclass,
        hyperref=hyperref,
        pith_package=pith_package,
        pith_numbers=numbers,
        boundaries=boundaries,
    )


def _parse_to_document(text: str, name: str) -> tuple[list[Any], int]:
    """Top-level nodes of the text up to the first live `\\begin{document}`, and its position."""
    from pylatexenc.latexwalker import LatexWalker

    found_any = False
    for count, match in enumerate(_BEGIN_DOCUMENT.finditer(text)):
        if count >= _MAX_CANDIDATES:
            break
        found_any = True
        # Every `\begin{document}` becomes a same-length placeholder macro, so that pylatexenc
        # does not open an environment that is never closed (positions stay the same).
        prefix = _BEGIN_DOCUMENT.sub(_placeholder, text[: match.end()])
        walker = LatexWalker(prefix, latex_context=_context(), tolerant_parsing=True)
        nodes, _, _ = walker.get_latex_nodes(pos=0)
        if not nodes:
            continue
        last = nodes[-1]
        if (
            type(last).__name__ == "LatexMacroNode"
            and last.macroname.startswith(_PLACEHOLDER_NAME)
            and last.pos == match.start()
        ):
            states = _conditional_states(nodes)
            if not states[-1][1]:
                return nodes, match.start()
    if not found_any:
        raise ManuscriptError(f"{name}: no \\begin{{document}}; is this the main file?")
    raise ManuscriptError(
        f"{name}: \\begin{{document}} appears only inside comments or disabled blocks"
    )


def _conditional_states(nodes: list[Any]) -> list[tuple[int, bool]]:
    """For each top-level node: (conditional depth, inside a dead branch) after the node."""
    declared: set[str] = set()
    stack: list[list[Any]] = []  # [kind, in_else]
    states: list[tuple[int, bool]] = []
    for node in nodes:
        if type(node).__name__ == "LatexMacroNode":
            name = node.macroname
            if name == "newif":
                args = node.nodeargd.argnlist if node.nodeargd else []
                for arg in args:
                    if arg is not None and type(arg).__name__ == "LatexMacroNode":
                        declared.add(arg.macroname)
            elif name in _CONDITIONALS or name in declared:
                kind = {"iffalse": "false", "iftrue": "true"}.get(name, "other")
                stack.append([kind, False])
            elif name == "else" and stack:
                stack[-1][1] = True
            elif name == "fi" and stack:
                stack.pop()
        dead = any(
            (kind == "false" and not in_else) or (kind == "true" and in_else)
            for kind, in_else in stack
        )
        states.append((len(stack), dead))
    return states


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


def _pith_number_use(text: str, node: Any, span: Span, name: str) -> PithNumberUse:
    args = node.nodeargd.argnlist if node.nodeargd else []
    group = args[0] if args else None
    if group is None or type(group).__name__ != "LatexGroupNode":
        raise ManuscriptError(f"{name}: \\pithnumber without a {{...}} argument")
    value = Span(group.pos + 1, group.pos + group.len - 1)
    return PithNumberUse(macro=span, value=value, text=text[value.start : value.end])


@lru_cache(maxsize=1)
def _context() -> Any:
    """pylatexenc's default context, plus the macros and verbatim environments we care about."""
    from pylatexenc.latexwalker import get_default_latex_context_db
    from pylatexenc.macrospec import EnvironmentSpec, std_macro

    db = get_default_latex_context_db()
    db.add_context_category(
        "pithauthor",
        macros=[
            std_macro("pithnumber", False, 1),
            std_macro("RequirePackage", True, 1),
            std_macro("newif", False, 1),
        ],
        environments=[
            EnvironmentSpec(env, args_parser=_verbatim_parser(env)) for env in VERBATIM_ENVIRONMENTS
        ],
        prepend=True,
    )
    return db


def _verbatim_parser(environment: str) -> Any:
    """An argument parser that takes everything up to `\\end{environment}` (or the end)."""
    from pylatexenc import latexwalker
    from pylatexenc.macrospec import ParsedVerbatimArgs, VerbatimArgsParser

    class _UntilEnd(VerbatimArgsParser):  # type: ignore[misc]
        def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> Any:
            end = w.s.find("\\end{" + environment + "}", pos)
            if end == -1:
                end = len(w.s)
            chars = w.make_node(
                latexwalker.LatexCharsNode,
                parsing_state=parsing_state,
                chars=w.s[pos:end],
                pos=pos,
                len=end - pos,
            )
            return (ParsedVerbatimArgs(verbatim_chars_node=chars), pos, end - pos)

    return _UntilEnd(verbatim_arg_type="verbatim-environment")
