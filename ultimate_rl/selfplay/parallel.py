"""Self-play on several cores: worker processes, each with its own copy of the network.

``selfplay.workers=1`` plays in the learner's process with the learner's model (the right choice
on a 2-core machine: torch already uses the second core). With more workers, each is a spawned
process that receives the learner's weights at the start of every round (``play``), plays its
share of the games with its own batched searcher, and sends the positions back. Each worker's
generator is derived from the round seed and the worker's index, so a seeded run reproduces.
The network runs on ``selfplay.inference``'s backend; an onnxruntime evaluator sees new weights
by itself (``ultimate_rl.nn.OnnxEvaluator``), in-process and after a worker loads them.
"""

from __future__ import annotations

import traceback
from typing import Any

import numpy as np
import torch
import torch.multiprocessing as mp

from ultimate_rl.games import kernels as K
from ultimate_rl.games import make as make_game
from ultimate_rl.nn import build_model, make_evaluator
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlaySettings, SelfPlayWorker


def split_games(num_games: int, workers: int) -> list[int]:
    """``num_games`` shared as evenly as possible (the first workers take the remainder)."""
    base, extra = divmod(num_games, workers)
    return [base + (w < extra) for w in range(workers)]


def _play_round(
    worker: SelfPlayWorker, evaluate: Any, num_games: int, seed: int, index: int
) -> SelfPlayData:
    rng = np.random.default_rng([seed, index])
    K.seed(int(rng.integers(2**31)))  # numba's generator (noise, tie breaks inside kernels)
    return worker.play(evaluate, num_games, rng)


def _worker_main(
    index: int,
    game_spec: dict[str, Any],
    model_config: dict[str, Any],
    search: SearchConfig,
    settings: SelfPlaySettings,
    jobs: Any,
    results: Any,
) -> None:
    """A worker process: waits for (weights, games, seed), plays, sends the data back."""
    torch.set_num_threads(1)
    try:
        game = make_game(game_spec["name"], **game_spec["options"])
        model = build_model(game, ModelConfig.from_dict(model_config))
        worker = SelfPlayWorker(game, search, settings)
        evaluate = make_evaluator(model, "cpu", backend=settings.inference)
        while (job := jobs.get()) is not None:
            weights, num_games, seed = job
            model.load_state_dict(weights)
            results.put((index, _play_round(worker, evaluate, num_games, seed, index)))
    except BaseException:
        results.put((index, traceback.format_exc()))


class SelfPlayPool:
    """Plays a round of self-play games with the current weights, in-process or in workers."""

    def __init__(
        self,
        game_spec: dict[str, Any],
        model: PolicyValueNet,
        search: SearchConfig,
        settings: SelfPlaySettings,
        device: torch.device,
    ) -> None:
        self.settings = settings
        self.model = model
        self.processes: list[Any] = []
        if settings.workers == 1:
            game = make_game(game_spec["name"], **game_spec["options"])
            self.local = SelfPlayWorker(game, search, settings)
            self.evaluate = make_evaluator(model, device, backend=settings.inference)
            return
        context = mp.get_context("spawn")
        self.results = context.Queue()
        self.jobs = [context.Queue() for _ in range(settings.workers)]
        config = model.config.to_dict()
        for index, jobs in enumerate(self.jobs):
            process = context.Process(
                target=_worker_main,
                args=(index, game_spec, config, search, settings, jobs, self.results),
                daemon=True,
            )
            process.start()
            self.processes.append(process)

    def play(self, num_games: int, seed: int) -> SelfPlayData:
        """``num_games`` finished games with the model's current weights."""
        if not self.processes:
            return _play_round(self.local, self.evaluate, num_games, seed, 0)
        weights = {k: v.detach().cpu() for k, v in self.model.state_dict().items()}
        shares = split_games(num_games, len(self.processes))
        for jobs, share in zip(self.jobs, shares, strict=True):
            jobs.put((weights, share, seed))
        parts: dict[int, SelfPlayData] = {}
        while len(parts) < len(self.processes):
            index, data = self.results.get()
            if isinstance(data, str):
                self.close()
                raise RuntimeError(f"self-play worker {index} failed:\n{data}")
            parts[index] = data
        return SelfPlayData.concatenate([parts[i] for i in sorted(parts)])

    def close(self) -> None:
        """Stops the worker processes (no-op in-process)."""
        for jobs in getattr(self, "jobs", []):
            jobs.put(None)
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
        self.processes = []
