"""Python's cycle collector, paused by the program that owns the process (the `pith` entry
point, never the library) while a command does work that leaves no cycles behind: a plain
`pith cite` until the first network client (`pithauthor.net.new_client`), whose requests do
leave some, a plain `pith status` or `pith bib scan` to the end of its process
(`pause_for_the_process`).

Why: a warm `pith cite refs.bib` loads about 90 modules and makes objects that either live to
the end of the process (modules, classes, functions) or are freed by reference counting. With
the collector running, its passes over what the imports made cost about 8 ms of CPU in about
60 collections and found nothing to free; with it paused, about 500 objects are left in cycles
at the end whether 10 or 300 entries were signed (measured: `gc.collect()` at exit). A request
is another matter: httpx leaves about 90 objects in cycles each (a cold cite of 300 entries
left 27,700), so the first client made turns the collector on for the rest of the process,
and the memory a command holds stays bounded by its work, not by how many requests it sends.
"""

from __future__ import annotations

import gc

# True while the collector is off because a pause here turned it off; and whether the first
# network client turns it back on.
_paused_here = False
_until_network = False


def pause_until_network() -> None:
    """Pause the cycle collector until `resume_collector` (the first network client made, or
    the program's own call). Nothing happens when it is off already (the caller's choice,
    which is then left alone)."""
    _pause(until_network=True)


def pause_for_the_process() -> None:
    """Pause the cycle collector to the end of the process, network or not (unless the program
    calls `resume_collector`): a second look at an unchanged paper is mostly imports and one
    JSON summary read, whose allocations set the collector walking everything made so far for
    no cycle worth finding, and at exit Python collects once more over every object still
    alive unless the collector is off (about 3% of the instructions of such a look). Its three
    requests leave a bounded few cycles to the process's end."""
    _pause(until_network=False)


def _pause(*, until_network: bool) -> None:
    global _paused_here, _until_network
    if gc.isenabled():
        gc.disable()
        _paused_here, _until_network = True, until_network


def network_started() -> None:
    """A network client was made: the collector paused `until_network` is turned back on."""
    if _until_network:
        resume_collector()


def resume_collector() -> None:
    """Turn the collector back on if `pause_until_network` paused it; else nothing."""
    global _paused_here, _until_network
    if _paused_here:
        _paused_here, _until_network = False, False
        gc.enable()
