"""Arena games on a Ray cluster (``scripts/evaluate.py backend=ray``).

Each game is one Ray task (retried if its worker dies: a game's moves depend only on its seed,
so a retry plays the same game). At most ``2 * workers`` are in flight, so the object store
holds only a few finished games; ``workers=None`` takes the cluster's CPU count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ultimate_rl.selfplay.parallel import RaySettings


def play_on_ray(
    play: Callable[[Any], Any], tasks: list[Any], workers: int | None, address: str | None
) -> Iterator[Any]:
    """Yields ``play(task)`` for every task as the games finish, played by Ray tasks."""
    import ray

    from ultimate_rl.selfplay.ray_backend import init_ray

    owns_runtime = init_ray(RaySettings(address=address))
    remote = ray.remote(num_cpus=1, max_retries=3)(play)
    workers = workers or int(ray.cluster_resources().get("CPU", 1))
    pending: list[Any] = []
    queue = iter(tasks)
    try:
        while True:
            for task in queue:
                pending.append(remote.remote(task))
                if len(pending) >= 2 * workers:
                    break
            if not pending:
                return
            finished, pending = ray.wait(pending, num_returns=1)
            yield from ray.get(finished)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if owns_runtime:
            ray.shutdown()
