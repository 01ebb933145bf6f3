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
  `iclrYYYY_conference` without `\iclrfinalcopy`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass

from pithauthor.latex.preamble import Load, Preamble

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


def _written(load: Load, name: str) -> str:
    options = f"[{','.join(load.options)}]" if load.options else ""
    return f"\\{load.macro}{options}{{{name}}}"


# a venue's package and the options that make its copy final (any other: a submission)
_FINAL_UNLESS = (
    (re.compile(r"icml\d{4}$"), ("accepted",), True),
    (re.compile(r"(neurips|nips)_?\d{4}$"), ("final", "preprint"), True),
    (re.compile(r"tmlr$"), ("accepted", "preprint"), True),
)

# NeurIPS options under which a submission shows its authors (still under review)
_NAMED_SUBMISSION = ("sglblindworkshop", "nonanonymous")

_ICLR = re.compile(r"iclr\d{4}_conference$")


def review_copy(
    preamble: Preamble, more_loads: Sequence[Load] = (), more_commands: Set[str] = frozenset()
) -> ReviewCopy | None:
    """The review mode `preamble` sets (with `more_loads` and `more_commands`, those of the
    files it inputs: an Overleaf-style `\\input{preamble}`), or None for a paper that is not
    a review copy."""
    commands = preamble.commands | more_commands
    for load in [*preamble.loads, *more_loads]:
        is_class = load.macro == "documentclass"
        for name in load.names:
            lower = name.lower()
            if _option(load.options, "anonymous"):
                return ReviewCopy(f"{_written(load, name)}: option anonymous", True)
            if _option(load.options, "review") and (not is_class or lower == "acmart"):
                # acmart's review numbers the lines and keeps the authors (anonymous hides
                # them, caught above); a venue package's review mode (CVPR, ECCV, ACL) is blind
                return ReviewCopy(f"{_written(load, name)}: option review", not is_class)
            if _option(load.options, "submission") and not is_class:
                return ReviewCopy(f"{_written(load, name)}: option submission", True)
            for pattern, final, anonymous in _FINAL_UNLESS:
                if is_class or not pattern.match(lower):
                    continue
                if not any(_option(load.options, f) for f in final):
                    named = any(_option(load.options, n) for n in _NAMED_SUBMISSION)
                    return ReviewCopy(
                        f"{_written(load, name)} without {' or '.join(final)}",
                        anonymous and not named,
                    )
            if not is_class and _ICLR.match(lower) and "iclrfinalcopy" not in commands:
                return ReviewCopy(f"{_written(load, name)} without \\iclrfinalcopy", True)
    return None
