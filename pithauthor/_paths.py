"""Where pithauthor keeps its data: PITH_HOME, or the platform's user data folder.

Every private folder under it (keys, outbox, caches) is made with mode 0700 and is refused when
others can reach it, with the command that fixes it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pithauthor.errors import UnsafePermissions

# platformdirs is imported only when PITH_HOME is unset.

APP_NAME = "pithauthor"
HOME_ENV = "PITH_HOME"
POSIX_MODES = os.name == "posix"


def pith_home() -> Path:
    """The root data folder: `$PITH_HOME`, else platformdirs' user data folder."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def private_dir(*parts: str) -> Path:
    """`pith_home()/parts...`, created with mode 0700; refused when others can reach it."""
    home = pith_home()
    if not home.exists():
        home.mkdir(parents=True, mode=0o700)
    path = home.joinpath(*parts)
    for depth in range(1, len(parts) + 1):
        folder = home.joinpath(*parts[:depth])
        if not folder.exists():
            folder.mkdir(mode=0o700)
            if POSIX_MODES:
                os.chmod(folder, 0o700)
    check_private(path, is_dir=True)
    return path


def loose_bits(path: Path) -> int:
    """The group/other permission bits of `path` (0 on systems without POSIX modes)."""
    if not POSIX_MODES:
        return 0
    return stat.S_IMODE(path.stat().st_mode) & 0o077


def check_private(path: Path, *, is_dir: bool) -> None:
    """Raise UnsafePermissions when `path` is reachable by others or owned by someone else."""
    if not POSIX_MODES:
        return
    st = path.stat()
    want = "700" if is_dir else "600"
    what = "folder" if is_dir else "file"
    if st.st_uid != os.getuid():
        raise UnsafePermissions(f"{what} {path} is owned by another user (uid {st.st_uid})")
    if stat.S_IMODE(st.st_mode) & 0o077:
        mode = oct(stat.S_IMODE(st.st_mode))[2:]
        raise UnsafePermissions(
            f"{what} {path} has mode {mode}, others can read it; fix it with: chmod {want} {path}"
        )
