r"""Whether a manuscript is a review copy: anonymous, or set for a venue's review.

A badge links to the public record of a named paper version: on a double-blind submission it
names the authors. `inject` refuses to add one to a paper whose preamble says it is a review
copy (unless `--force`), and `--check` reports it. What says so is the venue's own switch, read
from the live top-level preamble and the files it inputs (`preamble.Load`, `Preamble.commands`):

- any class or package option `anonymous` (acmart, LIPIcs, ...), or `anonymous=true`;
- the option `review` of a venue's package (CVPR, ICCV, ECCV, WACV, ACL and its siblings; any
  package option `review`: anonymous), or of acmart (line numbers, authors kept: under
  review); `submission` (AAAI, COLM);
- ICML's `icmlYYYY` without `accepted`; NeurIPS's `neurips_YYYY` (or `nips_YYYY`) without
  `final` or `preprint` (its workshops' `sglblindworkshop` and the E&D track's `nonanonymous`
  are under review, not anonymous); TMLR's `tmlr` without `accepted` or `preprint`; ICLR's
  `iclrYYYY_conference` without `\iclrfinalcopy`; CVPR's, ICCV's and WACV's templates before
  2022 (`\usepackage{cvpr}` whose preamble tests `\ifcvprfinal`) without `\cvprfinalcopy`
  (`\iccvfinalcopy`, `\wacvfinalcopy`).

Options given with `\PassOptionsToPackage{OPTIONS}{NAME}` (or `...ToClass`) count as written in
the load of NAME that follows; passed to a package never loaded, they say nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass

from pithauthor.latex.preamble import OPTION_PASSERS, Load, Preamble

__all__ = ["ReviewCopy", "review_copy"]


@dataclass(frozen=True, slots=True)
class ReviewCopy:
    """What makes a manuscript a review copy, and whether it is anonymous too."""

    why: str  # "\\usepackage{icml2024} without `accepted`"
    anonymous: bool

    def message(self) -> str:
        """One sentence for the author: what was found and why the badge does not belong."""
        kind = "an anonymous review copy" if self.anonymous else "a copy under review"
        harm = (
            "the badge links to the public record of a named paper version and would "
            "de-anonymise it"
            if self.anonymous
            else "the badge links to the public record of a paper version, not a submission"
        )
        return f"the paper is {kind} ({self.why}): {harm}"


def _option(options: tuple[str, ...], name: str) -> bool:
    """Whether `name` is among `options`, bare or `name=true`."""
    for option in options:
        key, _, value = option.partition("=")
        if key.strip().lower() == name and value.strip().lower() in ("", "true"):
            return True
    return False


def _written(load: Load, name: str, passed: tuple[str, ...] = ()) -> str:
    options = f"[{','.join(load.options)}]" if load.options else ""
    written = f"\\{load.macro}{options}{{{name}}}"
    if passed:  # what the load has from `\PassOptionsTo...`, said as the author wrote it
        kind = "Class" if load.macro == "documentclass" else "Package"
        written = f"\\PassOptionsTo{kind}{{{','.join(passed)}}}{{{name}}} and {written}"
    return written


def _passed(loads: Sequence[Load]) -> dict[tuple[bool, str], tuple[str, ...]]:
    r"""The options passed ahead to each (is a class, name) by `\PassOptionsTo...`."""
    passed: dict[tuple[bool, str], tuple[str, ...]] = {}
    for load in loads:
        if load.macro in OPTION_PASSERS:
            for name in load.names:
                key = (load.macro == "PassOptionsToClass", name.lower())
                passed[key] = passed.get(key, ()) + load.options
    return passed


# a venue's package and the options that make its copy final (any other: a submission)
_FINAL_UNLESS = (
    (re.compile(r"icml\d{4}$"), ("accepted",), True),
    (re.compile(r"(neurips|nips)_?\d{4}$"), ("final", "preprint"), True),
    (re.compile(r"tmlr$"), ("accepted", "preprint"), True),
)

# NeurIPS options under which a submission shows its authors (still under review)
_NAMED_SUBMISSION = ("sglblindworkshop", "nonanonymous")

_ICLR = re.compile(r"iclr\d{4}_conference$")

# CVPR-family templates before 2022: review mode unless the preamble says `\cvprfinalcopy`;
# the old template is told from today's (`[review]` option, no switch) by its `\ifcvprfinal`
_OLD_FINAL_COPY = {
    "cvpr": ("ifcvprfinal", "cvprfinalcopy"),
    "iccv": ("ificcvfinal", "iccvfinalcopy"),
    "wacv": ("ifwacvfinal", "wacvfinalcopy"),
}


def review_copy(
    preamble: Preamble, more_loads: Sequence[Load] = (), more_commands: Set[str] = frozenset()
) -> ReviewCopy | None:
    """The review mode `preamble` sets (with `more_loads` and `more_commands`, those of the
    files it inputs: an Overleaf-style `\\input{preamble}`), or None for a paper that is not
    a review copy."""
    commands = preamble.commands | more_commands
    loads = [*preamble.loads, *more_loads]
    passed = _passed(loads)
    for load in loads:
        if load.macro in OPTION_PASSERS:
            continue
        is_class = load.macro == "documentclass"
        for name in load.names:
            lower = name.lower()
            ahead = passed.get((is_class, lower), ())
            options = load.options + ahead
            written = _written(load, name, ahead)
            if _option(options, "anonymous"):
                return ReviewCopy(f"{written}: option anonymous", True)
            if _option(options, "review") and (not is_class or lower == "acmart"):
                # acmart's review numbers the lines and keeps the authors (anonymous hides
                # them, caught above); a venue package's review mode (CVPR, ECCV, ACL) is blind
                return ReviewCopy(f"{written}: option review", not is_class)
            if _option(options, "submission") and not is_class:
                return ReviewCopy(f"{written}: option submission", True)
            for pattern, final, anonymous in _FINAL_UNLESS:
                if is_class or not pattern.match(lower):
                    continue
                if not any(_option(options, f) for f in final):
                    named = any(_option(options, n) for n in _NAMED_SUBMISSION)
                    return ReviewCopy(
                        f"{written} without {' or '.join(final)}", anonymous and not named
                    )
            if not is_class and _ICLR.match(lower) and "iclrfinalcopy" not in commands:
                return ReviewCopy(f"{written} without \\iclrfinalcopy", True)
            old = _OLD_FINAL_COPY.get(lower)
            if not is_class and old and old[0] in commands and old[1] not in commands:
                return ReviewCopy(f"{written} without \\{old[1]}", True)
    return None
