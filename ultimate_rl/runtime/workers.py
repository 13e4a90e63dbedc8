"""Worker processes: how one starts, and the loop that keeps a few jobs in flight on a pool.

Self-play actors, the inference server and the warm start's labelling jobs run in spawned
processes. Each gets one BLAS / OpenMP thread (``ACTOR_ENV``: N processes on N cores, not
N x cores threads fighting) and ignores Ctrl-C and SIGTERM, which the parent handles: it stops
them after saving. ``bounded_jobs`` feeds a pool (processes, or Ray tasks) a few jobs at a time,
so only a few results wait in memory (the arena's games, the warm start's labels). It sits below
every layer that starts processes, so none of them imports another for it.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent import futures
from contextlib import contextmanager
from typing import Any, TypeVar

Task = TypeVar("Task")
Handle = TypeVar("Handle", bound=Hashable)

ACTOR_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
"""One BLAS / OpenMP thread per worker process."""


def ignore_stop_signals() -> None:
    """Actors leave Ctrl-C and SIGTERM to the learner, which stops them after saving."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)


@contextmanager
def actor_start_environment() -> Iterator[None]:
    """While an actor process starts: stop signals ignored (a spawned interpreter keeps an
    ignored SIGINT ignored, so a Ctrl-C during its imports cannot kill it) and ``ACTOR_ENV``."""
    previous_env = {k: os.environ.get(k) for k in ACTOR_ENV}
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    os.environ.update(ACTOR_ENV)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for key, value in previous_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def bounded_jobs(
    tasks: Iterable[Task],
    submit: Callable[[Task], Handle],
    wait: Callable[[list[Handle]], Iterable[Handle]],
    cancel: Callable[[Handle], object],
    limit: int,
    should_stop: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[Task, Handle]]:
    """``(task, handle)`` for each task as it finishes, at most ``limit`` submitted and not yet
    yielded; ``submit`` starts a task and returns its handle (a future, a Ray reference), and
    ``wait`` returns the handles that have finished (some, or none after a timeout). Once
    ``should_stop()`` (checked before each wait) or when closed, it cancels the rest."""
    pending: dict[Handle, Task] = {}
    queue = iter(tasks)
    try:
        while not should_stop():
            for task in queue:
                pending[submit(task)] = task
                if len(pending) >= limit:
                    break
            if not pending:
                return
            for handle in wait(list(pending)):
                yield pending.pop(handle), handle
    finally:
        for handle in pending:
            cancel(handle)


def first_finished(
    pending: list[futures.Future[Any]], timeout: float | None = None
) -> set[futures.Future[Any]]:
    """``bounded_jobs``' ``wait`` for a process pool: the futures done once one is (or none
    after ``timeout`` seconds)."""
    return futures.wait(pending, timeout, futures.FIRST_COMPLETED).done
