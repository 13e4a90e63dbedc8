"""Arena games on a Ray cluster (``scripts/evaluate.py backend=ray``).

Each game is one Ray task (retried if its worker dies: a game's moves depend only on its seed,
so a retry plays the same game). At most ``2 * workers`` are in flight, so the object store
holds only a few finished games; ``workers=None`` takes the cluster's CPU count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing
from functools import partial
from typing import Any

from ultimate_rl.runtime.workers import bounded_jobs
from ultimate_rl.selfplay.schema import RaySettings


def play_on_ray(
    play: Callable[[Any], Any], tasks: list[Any], workers: int | None, address: str | None
) -> Iterator[Any]:
    """Yields ``play(task)`` for every task as the games finish, played by Ray tasks."""
    import ray

    from ultimate_rl.selfplay.ray_backend import init_ray

    owns_runtime = init_ray(RaySettings(address=address))
    remote = ray.remote(num_cpus=1, max_retries=3)(play)
    workers = workers or int(ray.cluster_resources().get("CPU", 1))

    def first_finished(pending: list[Any]) -> list[Any]:
        return ray.wait(pending, num_returns=1)[0]

    cancel = partial(ray.cancel, force=True)
    jobs = bounded_jobs(tasks, remote.remote, first_finished, cancel, 2 * workers)
    try:
        with closing(jobs):  # its unfinished tasks cancelled before the runtime stops
            for _, ref in jobs:
                yield ray.get(ref)
    finally:
        if owns_runtime:
            ray.shutdown()
