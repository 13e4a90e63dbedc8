"""Self-play actors on a Ray cluster (``selfplay.backend=ray``; ``pip install -e ".[ray]"``).

Each actor is a ``SelfPlayActor`` reserving ``ray.num_cpus`` cores and ``ray.num_gpus`` of a
GPU. Weights go into the object store once per version (one ``ray.put``) and every job names
that object, which actors on one node share zero-copy. One job in flight per actor bounds what
the store holds. A killed actor is restarted by Ray (``max_restarts``) and its job retried
(``max_task_retries``) with the same seed, so the round it belonged to does not change.

``ray.address=null`` starts a local Ray runtime for the run and stops it at the end; ``auto``
or ``ray://HOST:PORT`` joins a running cluster. Workers import this package through
``PYTHONPATH`` (passed on in the runtime env): on a cluster every node needs the same checkout
at the same path, or the package installed. Numba's kernel cache is keyed by the kernels'
source (``ultimate_rl.runtime.numba_cache``), so the actors of one node compile once between them.
"""

from __future__ import annotations

import os
from typing import Any

import ray

from ultimate_rl.runtime.workers import ACTOR_ENV
from ultimate_rl.selfplay.actor import ActorCore, ActorSpec, Job, Result, Weights
from ultimate_rl.selfplay.schema import RaySettings


class SelfPlayActor:
    """A Ray actor that plays self-play jobs (``ray.remote`` wraps it in ``RayBackend``)."""

    def __init__(self, spec: ActorSpec) -> None:
        self.core = ActorCore(spec)

    def run(self, job: Job, weights: Weights) -> Result:
        return self.core.run(job, weights)

    def pid(self) -> int:
        return os.getpid()


def init_ray(settings: RaySettings) -> bool:
    """Connects to (or starts) Ray; whether this call started it (and should shut it down)."""
    if ray.is_initialized():
        return False
    env = dict(ACTOR_ENV)
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    ray.init(
        address=settings.address,
        runtime_env={"env_vars": env},
        include_dashboard=False,
        logging_level="warning",
        log_to_driver=True,
    )
    return True


class RayBackend:
    """``workers`` ``SelfPlayActor``s; the ``Backend`` of ``selfplay.parallel``."""

    def __init__(self, spec: ActorSpec, workers: int, settings: RaySettings | None) -> None:
        settings = settings or RaySettings()
        self.owns_runtime = init_ray(settings)
        remote = ray.remote(SelfPlayActor).options(
            num_cpus=settings.num_cpus,
            num_gpus=settings.num_gpus,
            max_restarts=-1,
            max_task_retries=-1,
        )
        self.actors = [remote.remote(spec) for _ in range(workers)]
        self.weights: Any = None
        self.pending: dict[Any, int] = {}  # job's result reference -> actor

    @property
    def num_actors(self) -> int:
        return len(self.actors)

    def publish(self, weights: Weights, version: int) -> None:
        """One object per weight version; jobs submitted from now on play with it."""
        self.weights = ray.put(weights)

    def submit(self, actor: int, job: Job) -> None:
        self.pending[self.actors[actor].run.remote(job, self.weights)] = actor

    def wait(self, timeout: float) -> list[tuple[int, Result]]:
        """The jobs finished within ``timeout`` seconds, as (actor, result)."""
        if not self.pending:
            return []
        ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(list(self.pending), num_returns=len(self.pending), timeout=0)
        return [(self.pending.pop(ref), ray.get(ref)) for ref in ready]

    def pids(self) -> list[int]:
        """The actors' process ids (what an operator, or a test, would kill)."""
        return ray.get([actor.pid.remote() for actor in self.actors])

    def close(self) -> None:
        """Kills the actors (their unfinished jobs are not wanted); stops a runtime we started."""
        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        self.actors, self.pending = [], {}
        if self.owns_runtime:
            ray.shutdown()
