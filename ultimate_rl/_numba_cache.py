"""Where numba keeps the compiled kernels: a folder named after the kernels' own source.

numba's ``cache=True`` re-checks only the file a function is written in, so a cached search or
dispatch kernel would keep an OLD copy of a game kernel it calls after that game's file changes.
Keying the cache folder on a hash of every source file that holds numba kernels, and of every file
under ``games/`` (the layout constants and the list of games that kernels read as globals), makes
any such edit start a fresh cache, and keeps caches out of a possibly read-only install folder.
Set ``NUMBA_CACHE_DIR`` yourself to choose the folder.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def use_source_keyed_cache() -> None:
    """Points numba's cache at ``<cache>/ultimate_rl/numba/<hash of kernel sources>``."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    package = Path(__file__).parent
    digest = hashlib.sha256(numba.__version__.encode())
    for path in sorted(package.rglob("*.py")):
        source = path.read_bytes()
        if b"njit" in source or path.relative_to(package).parts[0] == "games":
            digest.update(str(path.relative_to(package)).encode() + b"\0" + source)
    numba.config.CACHE_DIR = str(user_cache_root() / "numba" / digest.hexdigest()[:16])


def user_cache_root() -> Path:
    """``<XDG_CACHE_HOME or ~/.cache>/ultimate_rl``: where the project keeps what it can remake
    (compiled kernels, inference path timings)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ultimate_rl"
