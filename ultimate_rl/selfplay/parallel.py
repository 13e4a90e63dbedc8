"""Self-play on several cores or machines: rounds (``train.mode=sync``) or a stream (``async``).

``selfplay.workers=1`` with the processes backend plays rounds in the learner's process with the
learner's model (the right choice on a 2-core machine: torch already uses the second core).
Otherwise ``selfplay.workers`` actors play: worker processes (``selfplay.backend=processes``,
``selfplay.processes``) or Ray actors (``ray``, ``selfplay.ray_backend``). Both run ``Job``s
(``selfplay.actor``) and replace an actor that dies, replaying its job.

- ``play`` (sync): one round; each actor plays its share of the games, seeded by the round seed
  and its index, with the weights of that moment. A seeded run reproduces.
- ``start`` / ``poll`` / ``publish`` (async): every actor always has one job of
  ``selfplay.parallel_games`` games in flight, played with the latest published weights; the
  learner collects finished jobs as they come (at most one waiting per actor).

The network runs on ``selfplay.inference``'s backend; an onnxruntime evaluator sees new weights
by itself (``ultimate_rl.nn.OnnxEvaluator``), in-process and after an actor loads them.
``selfplay.inference_server=true`` (processes backend) replaces the actors' evaluators with one
batching server process (``selfplay.inference_server``).
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from ultimate_rl.games import make as make_game
from ultimate_rl.nn import make_evaluator
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.actor import ActorSpec, Job, Result, Weights, export_weights, play_round
from ultimate_rl.selfplay.schema import RaySettings as RaySettings  # its old import path
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlayWorker


class Backend(Protocol):
    """Where actors run: ``ProcessBackend`` or ``RayBackend``."""

    num_actors: int

    def publish(self, weights: Weights, version: int) -> None: ...
    def submit(self, actor: int, job: Job) -> None: ...
    def wait(self, timeout: float) -> list[tuple[int, Result]]: ...
    def close(self) -> None: ...


def split_games(num_games: int, workers: int) -> list[int]:
    """``num_games`` shared as evenly as possible (the first workers take the remainder)."""
    base, extra = divmod(num_games, workers)
    return [base + (w < extra) for w in range(workers)]


def make_backend(spec: ActorSpec, workers: int, ray: RaySettings | None = None) -> Backend:
    """The backend ``spec.settings.backend`` names, with ``workers`` actors."""
    if spec.settings.backend == "ray":
        from ultimate_rl.selfplay.ray_backend import RayBackend

        return RayBackend(spec, workers, ray)
    from ultimate_rl.selfplay.processes import ProcessBackend

    return ProcessBackend(spec, workers)


class SelfPlayPool:
    """Self-play with the current weights of ``model``: rounds or a stream (module doc).

    ``streaming`` (async mode) and ``inference_server`` always use actors, even for one worker.
    ``ray`` is the run's ``RaySettings`` (``selfplay.backend=ray`` only).
    """

    def __init__(
        self,
        game_spec: dict[str, Any],
        model: PolicyValueNet,
        search: SearchConfig,
        settings: SelfPlaySettings,
        device: torch.device,
        ray: RaySettings | None = None,
        streaming: bool = False,
    ) -> None:
        self.settings, self.model = settings, model
        self.backend: Backend | None = None
        self.version, self.seed, self.jobs = -1, 0, 0
        in_process = settings.workers == 1 and settings.backend == "processes"
        if in_process and not streaming and not settings.inference_server:
            game = make_game(game_spec["name"], **game_spec["options"])
            self.local = SelfPlayWorker(game, search, settings)
            self.evaluate = make_evaluator(
                model,
                device,
                backend=settings.inference,
                game=game,
                batch_size=settings.evaluation_batch(search),
            )
            return
        spec = ActorSpec(game_spec, model.config.to_dict(), search, settings, settings.actor_device)
        self.backend = make_backend(spec, settings.workers, ray)

    def play(self, num_games: int, seed: int) -> SelfPlayData:
        """``num_games`` finished games with the model's current weights (one round)."""
        if self.backend is None:
            return play_round(self.local, self.evaluate, num_games, seed, 0)
        self.publish(self.version + 1)
        shares = split_games(num_games, self.backend.num_actors)
        for index, share in enumerate(shares):
            if share:
                self.backend.submit(index, Job(self.version, share, seed, index))
        parts: dict[int, SelfPlayData] = {}
        while len(parts) < sum(share > 0 for share in shares):
            parts.update((index, result.data) for index, result in self.backend.wait(1.0))
        return SelfPlayData.concatenate([parts[i] for i in sorted(parts)])

    def publish(self, version: int) -> None:
        """The model's weights as they are now become ``version``, which new jobs play with."""
        assert self.backend is not None
        self.version = version
        self.backend.publish(export_weights(self.model), version)

    def start(self, seed: int) -> None:
        """Async: gives every actor its first job (call ``publish`` first)."""
        assert self.backend is not None
        self.seed = seed
        for actor in range(self.backend.num_actors):
            self._next_job(actor)

    def poll(self, timeout: float) -> list[Result]:
        """Async: the jobs finished within ``timeout`` seconds; their actors get new ones."""
        assert self.backend is not None
        done = self.backend.wait(timeout)
        for actor, _ in done:
            self._next_job(actor)
        return [result for _, result in done]

    def _next_job(self, actor: int) -> None:
        assert self.backend is not None
        job = Job(self.version, self.settings.parallel_games, self.seed, self.jobs)
        self.jobs += 1
        self.backend.submit(actor, job)

    def close(self) -> None:
        """Stops the actors (no-op in-process)."""
        if self.backend is not None:
            self.backend.close()
            self.backend = None
