"""Atomic ``torch.save``: a crash at any moment leaves the old file or the new one, never a part.

The data goes to a temp file beside the target (``.NAME.XXXXXXXX.tmp``), is flushed to disk and
renamed over the target. Checkpoints and exported agent files both go through ``save_atomically``.
A process killed outright (SIGKILL) before the rename leaves its temp file behind;
``remove_stale_temp_files`` clears those, and only those, when a training run starts.

The temp file is created with mode 0666 less the umask, like any file a user creates
(``tempfile.mkstemp`` would make it, and so the renamed file, private: 0600).
"""

from __future__ import annotations

import os
import re
import secrets
import string
from pathlib import Path
from typing import Any

import torch

from ultimate_rl.runtime.faults import failpoint

# mkstemp's alphabet and length, so the pattern also matches temp files of earlier versions
_TOKEN_CHARS = string.ascii_lowercase + string.digits + "_"
_TOKEN_LENGTH = 8
_TEMP_NAME = re.compile(rf"\..+\.[{_TOKEN_CHARS}]{{{_TOKEN_LENGTH}}}\.tmp")


def save_atomically(payload: Any, path: str | os.PathLike) -> Path:
    """``torch.save(payload)`` to ``path`` via a temp file, fsync and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    token = "".join(secrets.choice(_TOKEN_CHARS) for _ in range(_TOKEN_LENGTH))
    temp = path.with_name(f".{path.name}.{token}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        with os.fdopen(os.open(temp, flags, 0o666), "wb") as handle:
            torch.save(payload, handle)
            failpoint("checkpoint_write")  # tests: a kill or a full disk before the rename
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


def is_temp_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is named like a temp file of ``save_atomically``."""
    return _TEMP_NAME.fullmatch(Path(path).name) is not None


def remove_stale_temp_files(folder: str | os.PathLike) -> list[Path]:
    """Deletes the temp files that interrupted saves left in ``folder``; returns them.

    Call it only when no other process is saving into ``folder`` (e.g. as a run starts): a temp
    file of a save in progress looks the same.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stale = sorted(p for p in folder.iterdir() if p.is_file() and is_temp_file(p))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def _fsync_dir(folder: Path) -> None:
    """Makes the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
