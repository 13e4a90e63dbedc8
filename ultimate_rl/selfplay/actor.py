"""What a self-play worker process and a Ray ``SelfPlayActor`` share: jobs in, positions out.

The learner's side hands an actor a ``Job`` (how many games, with which weight version, from
which seed) and gets a ``Result`` back. A job's generators derive from its ``seed`` and
``index`` only, so a job replayed on a replacement actor (its first actor was killed) plays the
same games: a seeded run does not change when a worker dies.

``make_actor_evaluator`` and ``ActorCore.set_weights`` are the only places an actor builds its
evaluator and takes new weights, so an inference backend (ONNX Runtime) changes one line each.
With ``ActorSpec.server_address`` set (``selfplay.inference_server=true``) an actor holds no
network: its evaluator is an ``InferenceClient`` of the shared server, which takes the weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ultimate_rl.games import kernels
from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.nn import build_model, make_evaluator
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.search import Evaluator, SearchConfig
from ultimate_rl.selfplay.inference_server import InferenceClient
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlayWorker

Weights = dict[str, np.ndarray]
"""A model's state dict as numpy arrays: pickles small, ``ray.put`` stores it zero-copy."""


@dataclass(frozen=True)
class Job:
    """``num_games`` games with weight ``version``; ``seed`` and ``index`` seed them."""

    version: int
    num_games: int
    seed: int
    index: int


@dataclass
class Result:
    """A finished job: every position in ``data`` was played with ``job.version``."""

    job: Job
    data: SelfPlayData


@dataclass(frozen=True)
class ActorSpec:
    """What an actor needs to build itself (plain data: it crosses process boundaries)."""

    game_spec: dict[str, Any]
    model_config: dict[str, Any]
    search: SearchConfig
    settings: SelfPlaySettings
    device: str = "cpu"
    server_address: str | None = None  # set: evaluate through the inference server there


def export_weights(model: PolicyValueNet) -> Weights:
    """The model's weights as numpy arrays (CPU copies), the form actors receive."""
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


def play_round(
    worker: SelfPlayWorker, evaluate: Evaluator, num_games: int, seed: int, index: int
) -> SelfPlayData:
    """``num_games`` games whose every random choice derives from ``(seed, index)``."""
    rng = np.random.default_rng([seed, index])
    kernels.seed(int(rng.integers(2**31)))  # numba's generator (noise, tie breaks inside kernels)
    return worker.play(evaluate, num_games, rng)


def make_actor_evaluator(model: PolicyValueNet, spec: ActorSpec, game: Game) -> Evaluator:
    """The one place an actor (or the inference server) builds its evaluator
    (``selfplay.inference``'s path, checked on positions of ``game``; an onnxruntime evaluator
    sees the weights ``set_weights`` loads by itself)."""
    return make_evaluator(
        model,
        spec.device,
        backend=spec.settings.inference,
        game=game,
        batch_size=spec.settings.evaluation_batch(spec.search),
    )


class ActorCore:
    """An actor's game, network, searcher and evaluator; runs jobs."""

    def __init__(self, spec: ActorSpec) -> None:
        torch.set_num_threads(1)
        game = make_game(spec.game_spec["name"], **spec.game_spec["options"])
        self.worker = SelfPlayWorker(game, spec.search, spec.settings)
        self.version = -1
        self.model: PolicyValueNet | None = None
        if spec.server_address is not None:  # the server holds the network and its weights
            shape = game.encode(game.initial_state()).shape
            self.evaluate = InferenceClient(spec.server_address, shape, game.num_actions)
            return
        self.model = build_model(game, ModelConfig.from_dict(spec.model_config)).to(spec.device)
        self.evaluate = make_actor_evaluator(self.model, spec, game)

    def set_weights(self, weights: Weights, version: int) -> None:
        """The one place an actor takes new weights (with an inference server, the server's
        ``load`` does: ``ProcessBackend.publish``)."""
        assert self.model is not None
        self.model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
        self.version = version

    def run(self, job: Job, weights: Weights | None) -> Result:
        """Plays ``job``; ``weights`` (``job.version``'s) are loaded unless already held."""
        if job.version != self.version and self.model is None:
            self.version = job.version  # the inference server loaded it before the job came
        elif job.version != self.version:
            if weights is None:
                raise RuntimeError(f"actor holds weights {self.version}, job needs {job.version}")
            self.set_weights(weights, job.version)
        data = play_round(self.worker, self.evaluate, job.num_games, job.seed, job.index)
        return Result(job, data)
