"""TEST ONLY: how the test suite starts `pith` as a process.

It is `python -m pithauthor` plus one switch the installed command does not have: with
PITH_TEST_FAST_KDF=1 in the environment it turns on the test-only cheap key derivation
(`secrets.TEST_FAST_KDF`) before running the command. The package itself never reads that
variable, so setting it for the installed `pith` does nothing (docs/keys.md).
"""

from __future__ import annotations

import os

if os.environ.get("PITH_TEST_FAST_KDF") == "1":
    from pithauthor.keys import secrets

    secrets.TEST_FAST_KDF = True

from pithauthor._cli.entry import main

main()
