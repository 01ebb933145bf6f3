"""The built wheel carries what the package needs at run time: pith.sty, the pinned manifest,
the payload schemas and the example papers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from support.paths import REPO

from pithauthor.latex.sty import SHIPPED


def test_the_wheel_is_told_to_carry_exactly_the_shipped_latex_files() -> None:
    # hatch reads no Python: pyproject.toml names the files again, held equal to the manifest
    # (`sty.MANIFEST`) here, so a file added to one and not the other fails at once
    with (REPO / "pyproject.toml").open("rb") as handle:
        pyproject = tomllib.load(handle)
    included = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    tex = {k: v for k, v in included.items() if k != "latex/LICENSE"}
    assert tex == {f"latex/{name}": f"pithauthor/data/{name}" for name in SHIPPED}
    assert all((REPO / source).is_file() for source in tex)


@pytest.mark.slow
def test_the_wheel_carries_pith_sty_the_manifest_and_the_schemas(tmp_path: Path) -> None:
    """Slow: builds the wheel with pip (10-20 s)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path),
         str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("pithauthor-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        shipped = {name: zf.read(f"pithauthor/data/{name}") for name in SHIPPED}
        manifest = zf.read("pithauthor/data/pith-mirrors.json")
    for name, data in shipped.items():  # the file itself, not a link
        assert data == (REPO / "latex" / name).read_bytes(), name
    assert manifest == (REPO / "pithauthor" / "data" / "pith-mirrors.json").read_bytes()
    schemas = {n for n in names if n.startswith("pithauthor/schemas/") and n.endswith(".json")}
    assert {Path(n).name for n in schemas} == {
        "author_attestation.schema.json",
        "citation_signature.schema.json",
        "replication_record.schema.json",
        "timestamp_anchor.schema.json",
        "storage_attestation.schema.json",
    }
    assert "pithauthor/data/examples/2302.12445.json" in names
    assert "pithauthor/data/demo/refs.bib" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
    licences = {n.split("/licenses/", 1)[1] for n in names if "/licenses/" in n}
    assert licences == {"LICENSE", "latex/LICENSE"}  # MIT for Python, LPPL 1.3c for pith.sty
    assert "pithauthor/data/LICENSE-pith.sty" in names
    assert "pithauthor/py.typed" in names  # type checkers read the package's hints (PEP 561)


def _build_wheel(tmp_path: Path) -> Path:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels),
         str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = wheels.glob("pithauthor-*.whl")
    return wheel


def _installed_pith_signs_and_verifies(venv: Path, pith: Path, tmp_path: Path) -> None:
    """`pith --version`, a key, a claim and its verification with the installed `pith`, run
    from a folder away from the sources and without PYTHONPATH, so nothing of the repository
    can be imported by accident; the package it imports is the installed one."""
    from pithauthor._version import __version__

    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PITH_", "PYTHON"))}
    env.update(PITH_HOME=str(tmp_path / "home"), PITH_PASSPHRASE="a long test passphrase")
    # the claim's --position is checked against arXiv's author order: the suite's local stand-in
    # for arXiv's API (conftest), never the real one
    env["PITH_ARXIV_API"] = os.environ["PITH_ARXIV_API"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(pith), *args], capture_output=True, text=True, env=env,
                              cwd=away, timeout=120)  # fmt: skip

    version = run("--version")
    assert version.returncode == 0 and version.stdout == f"pith {__version__}\n", version
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import pithauthor; print(pithauthor.__file__)"],
        capture_output=True, text=True, cwd=away, env=env, timeout=60,
    )  # fmt: skip
    assert where.stdout.startswith(str(venv)), where  # the installed copy, not the sources
    made = run("keys", "generate", "--name", "ci", "--public-name", "Lin Zhang",
               "--backend", "file", "--json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    key_id = json.loads(made.stdout)["key_id"]
    records = venv.glob("lib/python*/site-packages/pithauthor/data/demo/record-*.json")
    (record_file,) = list(records)  # the record shipped in the wheel
    claim = run("claim", "2302.12445", "--record", str(record_file), "--position", "1",
                "-o", "claim.jsonl")  # fmt: skip
    assert claim.returncode == 0, claim.stderr
    (event,) = [json.loads(x) for x in (away / "claim.jsonl").read_text("utf-8").splitlines()]
    assert event["signer"]["key_id"] == key_id
    assert event["payload"]["author"] == {"name": "Lin Zhang", "position": 1}  # arXiv's order
    verified = run("verify", "claim.jsonl", "--signer", key_id)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.slow
def test_the_wheel_installs_with_pip_in_a_fresh_venv_and_its_pith_signs_a_claim(
    tmp_path: Path,
) -> None:
    """Slow: builds the wheel and pip-installs it with its dependencies into a new venv."""
    wheel = _build_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    _installed_pith_signs_and_verifies(venv, venv / "bin" / "pith", tmp_path)


@pytest.mark.slow
def test_pipx_installs_the_wheel_and_puts_a_working_pith_in_its_bin_folder(
    tmp_path: Path,
) -> None:
    """Slow: `pipx install WHEEL` as the README says, with pipx's folders in tmp_path; the
    `pith` it puts in PIPX_BIN_DIR is the one on an author's PATH."""
    wheel = _build_wheel(tmp_path)
    env = {
        **os.environ,
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    installed = subprocess.run(
        [sys.executable, "-m", "pipx", "install", str(wheel)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    pith = tmp_path / "bin" / "pith"
    assert pith.exists()
    _installed_pith_signs_and_verifies(tmp_path / "pipx" / "venvs" / "pithauthor", pith, tmp_path)
