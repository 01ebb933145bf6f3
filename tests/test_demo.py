"""`make demo` (python -m pithauthor._demo) runs end to end, exits 0, and leaves nothing behind."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest


@pytest.mark.slow
def test_demo_runs_end_to_end_and_stops_its_registry() -> None:
    """Slow: the whole demo as a process: a registry and a dozen `pith` runs."""
    result = subprocess.run(
        [sys.executable, "-m", "pithauthor._demo"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("verify: OK") == 4  # the real record, then three merged states
    assert result.stdout.count("rejected 0, pending 0") == 3  # claim, citations, replication
    assert "pith submit again: 0 sent, 0 pending" in result.stdout
    assert "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW  claims 0, citations 1, replications 1" in (
        result.stdout
    )
    # it ends saying how to get `pith` on PATH, naming the folder that holds it
    path = re.search(r'export PATH="([^"]+):\$PATH"', result.stdout)
    assert path is not None and (Path(path.group(1)) / "pith").is_file(), result.stdout[-400:]
    assert "pipx install ." in result.stdout
    # and names only routes that work on current Debian and Ubuntu (PEP 668 refuses --user there)
    assert "--user" not in result.stdout
    url = re.search(r"local registry at (http://127\.0\.0\.1:[0-9]+)", result.stdout)
    assert url is not None
    with pytest.raises(httpx.ConnectError):
        httpx.get(url.group(1) + "/pith-mirrors.json", timeout=2)
