r"""TeX conditionals in a preamble (`\iffalse`, `\newif` switches set false): the branches
TeX skips are blanked, length kept, before the preamble is parsed; then the state of the
conditionals after each parsed top-level node (pure).
"""

from __future__ import annotations

import re
from typing import Any

from pithauthor.latex.verbatim import verbatim_block

# a TeX token as these scanners see it: a control word (its name in group 1), a control
# symbol, a comment, or a brace (the preamble's scanner reads the same tokens)
TEX_TOKEN = re.compile(r"\\([A-Za-z]+)|\\.|%[^\n]*|[{}]", re.DOTALL)


_NEWIF = re.compile(r"\\newif\s*\\(if[A-Za-z]+)")


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


def blank_false_branches(text: str, end: int) -> tuple[str, list[tuple[int, int, int]]]:
    """Blank what TeX skips after a top-level `\\iffalse` (or a name `\\let` to it): up to its
    `\\else` or `\\fi`, nested conditionals counted, braces not (TeX does not count them there
    either). Only `text[:end]` is read and returned; `\\newif` declarations and verbatim blocks
    are still found in the whole text, as before the bound."""
    if "\\iffalse" not in text[:end]:
        return text[:end], []
    conditionals = _CONDITIONALS | set(_NEWIF.findall(text))
    verbatim = [(m.start(), m.end()) for m in verbatim_block().finditer(text)]
    regions: list[tuple[int, int, int]] = []
    depth = 0
    recent: list[str] = []  # the last control words, to tell `\let\ifdraft\iffalse` apart
    false = {"iffalse"}  # and the names let to \iffalse
    tokens = TEX_TOKEN.finditer(text, 0, end)  # as if the text stopped at `end`
    for token in tokens:
        if any(a <= token.start() < b for a, b in verbatim):
            continue
        piece = token.group(0)
        if token.group(1) is not None:
            recent = [*recent[-2:], token.group(1)]
        if piece == "{":
            depth += 1
        elif piece == "}":
            depth = max(depth - 1, 0)
        elif recent[-2:-1] == ["let"]:
            pass  # `\let\ifdraft...`: \ifdraft is being given a meaning, not tested
        elif token.group(1) in conditionals and _assigned(recent[:-1]) is not None:
            # `\let\ifdraft\iffalse`: \ifdraft is a conditional, and false until let again
            named = _assigned(recent[:-1]) or "iffalse"
            conditionals = conditionals | {named}
            if named != "iffalse":
                false = false | {named} if token.group(1) in false else false - {named}
        elif token.group(1) in false and depth == 0:
            nested, start, stop = 0, token.end(), end
            for inner in tokens:
                word = inner.group(1)
                if word in conditionals:
                    nested += 1
                elif word == "fi" or (word == "else" and nested == 0):
                    if nested == 0:
                        stop = inner.start()
                        break
                    nested -= 1
            regions.append((start, stop, token.start()))
    if not regions:
        return text[:end], []
    parts, at = [], 0
    for start, stop, _ in regions:
        parts.append(text[at:start])
        parts.append(re.sub(r"[^\r\n]", " ", text[start:stop]))
        at = stop
    parts.append(text[at:end])
    return "".join(parts), regions


def _assigned(before: list[str]) -> str | None:
    """The name a conditional is given when the control words just before it are `\\let\\NAME`
    (`\\let\\ifdraft\\iffalse` declares a switch: it opens no branch), '' after `\\endcsname`
    (`\\expandafter\\let\\csname ifdraft\\endcsname\\iffalse`); None for a real conditional."""
    if before[-1:] == ["endcsname"]:
        return ""
    if len(before) >= 2 and before[-2] == "let":
        return before[-1]
    return None


def conditional_states(nodes: list[Any]) -> list[tuple[int, bool, int]]:
    """For each top-level node: (conditional depth, inside a dead branch, where the innermost
    dead conditional starts, or -1) after the node.

    The preamble states. Only `\\iffalse` (before its `\\else`) and `\\iftrue` (after it) are
    known to be dead here (`conditionals.py` has blanked the switches `\\let` to `\\iffalse`):
    what an `\\ifpdf` or a `\\newif` switch does is not known without running TeX, so both
    branches count as live, and as inside a conditional (depth > 0), where `_scan` finds no safe
    line: a line added there would be read by one engine or setting and not by another."""
    declared: set[str] = set()
    stack: list[list[Any]] = []  # [kind, in_else, position]
    states: list[tuple[int, bool, int]] = []
    # the last three macro names (blanks and `=` between them skipped): enough to see
    # `\let\ifdraft\iffalse`, an assignment of a switch, not a conditional to open
    recent: list[str] = []
    for node in nodes:
        kind_of = type(node).__name__
        if kind_of == "LatexMacroNode":
            recent = [*recent[-2:], node.macroname]
        elif not (kind_of == "LatexCharsNode" and node.chars.strip() in ("", "=")):
            recent = []
        if kind_of == "LatexMacroNode":
            name = node.macroname
            assigned = _assigned(recent[:-1]) if name in _CONDITIONALS or name in declared else None
            if assigned is not None:  # `\let\ifdraft\iffalse`: a new switch, no branch
                if assigned:
                    declared.add(assigned)
            elif name == "newif":
                args = node.nodeargd.argnlist if node.nodeargd else []
                for arg in args:
                    if arg is not None and type(arg).__name__ == "LatexMacroNode":
                        declared.add(arg.macroname)
            elif name in _CONDITIONALS or name in declared:
                kind = {"iffalse": "false", "iftrue": "true"}.get(name, "other")
                stack.append([kind, False, node.pos])
            elif name == "else" and stack:
                stack[-1][1] = True
            elif name == "fi" and stack:
                stack.pop()
        openers = [
            pos
            for kind, in_else, pos in stack
            if (kind == "false" and not in_else) or (kind == "true" and in_else)
        ]
        states.append((len(stack), bool(openers), openers[-1] if openers else -1))
    return states
