"""TEST ONLY: run a real `pith` process on a pseudo-terminal and answer its question."""

from __future__ import annotations

import os
import pty
import select
import subprocess


def on_terminal(argv: list[str], answer: bytes | None, prompt: bytes = b"[y/N]") -> tuple[int, str]:
    """Run `argv` with stdin and stderr on a pseudo-terminal; when it shows `prompt`, type
    `answer` (None: expect no question). Returns the exit code and what the terminal showed."""
    main, child = pty.openpty()
    proc = subprocess.Popen(
        argv, stdin=child, stdout=subprocess.DEVNULL, stderr=child, env=dict(os.environ)
    )
    os.close(child)
    seen = b""
    asked = False
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 60)
            if not ready:
                raise AssertionError(f"the command neither asked nor ended: {seen!r}")
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if not asked and prompt in seen:
                asked = True
                if answer is None:
                    raise AssertionError(f"asked although it should not: {seen!r}")
                os.write(main, answer + b"\n")
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    if answer is not None:
        assert asked, seen
    return code, seen.decode("utf-8", "replace")
