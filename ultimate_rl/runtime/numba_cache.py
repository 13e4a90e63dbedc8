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

PACKAGE = Path(__file__).resolve().parents[1]
"""The ``ultimate_rl`` package folder, whose sources key the cache."""


def use_source_keyed_cache() -> None:
    """Points numba's cache at ``<cache>/ultimate_rl/numba/<hash of kernel sources>``."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    digest = kernel_source_digest(PACKAGE)
    numba.config.CACHE_DIR = str(user_cache_root() / "numba" / digest)


def kernel_sources(package: Path) -> list[Path]:
    """The files under ``package`` whose edit must start a fresh cache: those that hold numba
    kernels, and every file under ``games/``."""
    return [
        path
        for path in sorted(package.rglob("*.py"))
        if b"njit" in path.read_bytes() or path.relative_to(package).parts[0] == "games"
    ]


def kernel_source_digest(package: Path) -> str:
    """16 hex digits naming numba's version and the kernel sources' paths and contents."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in kernel_sources(package):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def user_cache_root() -> Path:
    """``<XDG_CACHE_HOME or ~/.cache>/ultimate_rl``: where the project keeps what it can remake
    (compiled kernels, inference path timings)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ultimate_rl"
