"""Failpoints: named places where a test can make this process fail on purpose.

The tests that prove a run loses nothing (``tests/test_train_faults.py``) need a kill at an
exact moment (inside the optimiser, halfway through a checkpoint write) and a disk that fills
up; a timer cannot aim that well. ``ULTIMATE_RL_FAULT="POINT:N:ACTION"`` makes the N-th pass
(from 1) through ``failpoint(POINT)`` in this process do ACTION:

- ``kill``: SIGKILL this process, as the kernel's OOM killer or a lost node would;
- ``enospc``: raise ``OSError(ENOSPC)``, as a write to a full disk does.

Several faults are separated by commas. Unset (always, outside those tests), a failpoint costs
one dictionary lookup. The points: ``selfplay`` (each self-play round, its games played but not
yet stored; async: each poll), ``optimiser`` (before each optimiser step), ``evaluation`` (before
each evaluation match), ``checkpoint_write`` (each checkpoint file, written but not yet renamed
over the old one), ``tensorboard`` (each iteration's scalars, before the flush).
"""

from __future__ import annotations

import errno
import os
import signal

FAULT_ENV = "ULTIMATE_RL_FAULT"
ACTIONS = ("kill", "enospc")

_passes: dict[str, int] = {}


def planned_faults(spec: str | None = None) -> dict[str, list[tuple[int, str]]]:
    """``ULTIMATE_RL_FAULT`` (or ``spec``) parsed: point -> [(pass, action)]; a malformed entry
    is an error that names it."""
    spec = os.environ.get(FAULT_ENV, "") if spec is None else spec
    faults: dict[str, list[tuple[int, str]]] = {}
    for entry in filter(None, (part.strip() for part in spec.split(","))):
        point, _, rest = entry.partition(":")
        count, _, action = rest.partition(":")
        if not count.isdigit() or int(count) < 1 or action not in ACTIONS:
            raise ValueError(
                f"{FAULT_ENV} entry {entry!r}: write POINT:N:ACTION with N >= 1 and ACTION one "
                f"of {ACTIONS}, e.g. optimiser:3:kill"
            )
        faults.setdefault(point, []).append((int(count), action))
    return faults


_PLANNED = planned_faults()


def failpoint(point: str) -> None:
    """Does the fault planned for this pass through ``point``, if any."""
    if point not in _PLANNED:
        return
    _passes[point] = done = _passes.get(point, 0) + 1
    for count, action in _PLANNED[point]:
        if count == done:
            if action == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"failpoint {point}")
