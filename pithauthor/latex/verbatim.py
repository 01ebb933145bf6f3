r"""Environments whose body TeX reads verbatim (or skips): the one list, used by the preamble
parser, the comment stripper (a `%` inside them is text) and the citation scanner (a `\cite`
inside them is text).
"""

from __future__ import annotations

import re
from functools import cache

VERBATIM_ENVIRONMENTS = (
    "verbatim",
    "verbatim*",
    "Verbatim",
    "Verbatim*",
    "BVerbatim",
    "LVerbatim",
    "alltt",
    "comment",
    "lstlisting",
    "minted",
    "filecontents",
    "filecontents*",
)


COMMANDS_STAY_ACTIVE = frozenset({"alltt"})


"""Verbatim-like for `%` and spaces, but `\\commands` still run there (a `\\cite` is real)."""


@cache  # compiled on first use: only the manuscript readers need it (start-up)
def verbatim_block() -> re.Pattern[str]:
    """One environment whose commands do not run, from `\\begin{NAME}` to its `\\end{NAME}`."""
    return re.compile(
        r"\\begin\{("
        + "|".join(re.escape(n) for n in VERBATIM_ENVIRONMENTS if n not in COMMANDS_STAY_ACTIVE)
        + r")\}.*?\\end\{\1\}",
        re.DOTALL,
    )
