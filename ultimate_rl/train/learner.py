"""The learner: the network in training and everything its optimisation carries over a resume.

``Learner`` owns the model, the optimiser and its gradient scaler, the replay buffer, the random
streams (numpy for sampling and seeds, torch's global one) and the progress counters; with
``optim.ema_decay``, the averaged copy of the weights that the run offers (``network``); with
gating, also the self-play copy. ``state_dict`` / ``load_state_dict`` are what the resume
checkpoint stores (``train.checkpoints``), so a resumed run continues exactly.
``train_steps`` runs the optimiser on sampled, augmented minibatches and returns the mean of
every loss term, keyed by TensorBoard tag (``ultimate_rl.nn.losses``). The losses are the
model's (its ``aux_heads`` add theirs), and the replay buffer stores the targets they read
(plus the root values when ``optim.value_target_q_weight`` mixes them into the value target).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from ultimate_rl.games.symmetry import Symmetry
from ultimate_rl.nn import autocast, build_model
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.device import training_precision
from ultimate_rl.nn.grow import can_grow, extends_encoding, grown_state, size_name
from ultimate_rl.nn.losses import Batch, Loss, losses_for, policy_loss, training_loss
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.nn.weights import load_network_weights
from ultimate_rl.runtime.faults import failpoint
from ultimate_rl.selfplay.replay import ReplayBuffer
from ultimate_rl.selfplay.targets import OPTIONAL_TARGETS, TARGETS, Target
from ultimate_rl.selfplay.worker import SelfPlayData
from ultimate_rl.train.config import ConfigError, OptimSection, RunConfig
from ultimate_rl.train.presets import PRESETS, preset_values

Lessons = Callable[[int, np.random.Generator, Sequence[Symmetry] | None], Batch | None]
"""``lessons(size, rng, symmetries)``: a batch of positions with policy targets alone, or
``None`` while there are none (``train.walk_book.RunBook.lesson_batch``)."""


@dataclass
class Progress:
    """Counters that survive a resume (stored in the checkpoint)."""

    iteration: int = 0
    step: int = 0
    seconds: float = 0.0  # training wall time, summed over resumes
    games: int = 0
    positions: int = 0
    perfect: bool = False  # this iteration's weights were judged perfect (eval.every)
    last_eval: dict[str, Any] = field(default_factory=dict)
    selfplay_iteration: int = 0  # gating: the iteration whose network plays self-play
    warm_start_positions: int = 0  # UCT-labelled positions learned before self-play
    book_rows: int = 0  # selfplay.book.walk: the run's book.npy up to here (train/walk_book.py)
    book_lost: list[int] = field(default_factory=list)  # ... its rows the latest walk lost
    book_walks: int = 0  # ... the walks so far (they start at selfplay.book.walk_from_optimal)
    book_missed: list[int] = field(default_factory=list)  # ... lessons the raw policy missed then


def make_optimizer(model: PolicyValueNet, optim: OptimSection) -> torch.optim.Optimizer:
    """AdamW or SGD (Nesterov momentum) with decoupled weight decay."""
    if optim.name == "sgd":
        return torch.optim.SGD(
            model.parameters(),
            lr=optim.lr,
            momentum=optim.momentum,
            weight_decay=optim.weight_decay,
            nesterov=optim.momentum > 0,
        )
    return torch.optim.AdamW(model.parameters(), lr=optim.lr, weight_decay=optim.weight_decay)


def learning_rate(
    optim: OptimSection, step: int, total_steps: int, time_spent: float = 0.0
) -> float:
    """Linear warm-up, then constant, cosine (down to ``min_lr_fraction``) or step decay.

    The cosine runs over the run's budget: ``total_steps``, or ``time_spent`` (the fraction of
    ``train.max_minutes`` used) when that runs out first, so a run stopped by the clock still
    ends annealed."""
    if step < optim.warmup_steps:
        return optim.lr * (step + 1) / optim.warmup_steps
    if optim.schedule == "cosine":
        by_steps = (step - optim.warmup_steps) / max(total_steps - optim.warmup_steps, 1)
        progress = min(max(by_steps, time_spent), 1)
        floor = optim.min_lr_fraction
        return optim.lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
    if optim.schedule == "step":
        return optim.lr * optim.step_gamma ** (step // optim.step_every)
    return optim.lr


def stored_targets(run: RunConfig, losses: Sequence[Loss]) -> tuple[Target, ...]:
    """The targets the replay buffer keeps: ``TARGETS``, those ``losses`` read, and the root
    values when the value target mixes them in."""
    names = [name for loss in losses for name in loss.targets]
    if run.optim.value_target_q_weight > 0:
        names.append("root_values")
    return (*TARGETS, *(OPTIONAL_TARGETS[name] for name in dict.fromkeys(names)))


def mix_value_targets(batch: Batch, q_weight: float) -> Batch:
    """The batch with value targets ``(1 - w) * z + w * q``: the game result z blended with the
    root search value q, both mover's view (lower variance than z alone; a WDL head reads the
    blend through ``nn.losses.wdl_targets``)."""
    targets = dict(batch.targets)
    targets["values"] = (1.0 - q_weight) * targets["values"] + q_weight * targets["root_values"]
    return Batch(batch.planes, batch.masks, targets)


def channels_last(batch: Batch) -> Batch:
    """The batch with its planes in the model's channels-last layout (same values)."""
    planes = batch.planes.contiguous(memory_format=torch.channels_last)
    return Batch(planes, batch.masks, batch.targets)


def model_fix(source: ModelConfig, target: ModelConfig) -> str:
    """How to make a run's ``model`` config build ``source``'s network: the preset that matches
    it (``train.presets.PRESETS["model"]``), if one does, and the keys that differ; first, any
    auxiliary head of ``source``'s that ``target`` lacks (a run may add heads, not drop them)."""
    dropped = [head for head in source.aux_heads if head not in target.aux_heads]
    if dropped:
        heads = _override([*target.aux_heads, *dropped])
        return f"set model.aux_heads={heads} to keep its auxiliary heads"
    keep = ("aux_heads",)
    wanted = {k: v for k, v in source.to_dict().items() if k not in keep}
    have = {k: v for k, v in target.to_dict().items() if k not in keep}
    keys = " ".join(f"model.{k}={_override(v)}" for k, v in wanted.items() if have.get(k) != v)
    for name in sorted(PRESETS["model"]):
        config = ModelConfig.from_dict(preset_values("model", name)).to_dict()
        if all(config.get(k) == v for k, v in wanted.items()):
            return f"set model={name} to match (or {keys})"
    return f"set {keys} to match"


def _override(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ",".join(str(v) for v in value) + "]"
    return (
        "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )


class Learner:
    """The optimisation side of a run (see the module doc).

    ``losses`` and ``targets`` default to the model's (``losses_for``, ``stored_targets``); a
    new head passes its own here (``tests/test_learner.py`` shows a toy one). Every loss needs
    a weight in ``optim.loss_weights``.
    """

    def __init__(
        self,
        run: RunConfig,
        device: torch.device,
        losses: Sequence[Loss] | None = None,
        targets: Sequence[Target] | None = None,
    ) -> None:
        losses = losses_for(run.model) if losses is None else losses
        targets = stored_targets(run, losses) if targets is None else targets
        unweighted = sorted({loss.name for loss in losses} - set(run.optim.loss_weights))
        if unweighted:
            raise ValueError(f"no weight in optim.loss_weights for the loss(es) {unweighted}")
        self.run, self.device, self.losses = run, device, tuple(losses)
        self.precision = training_precision(run.train.precision, device)
        self.rng = np.random.default_rng(run.seed)
        torch.manual_seed(run.seed)
        # channels-last: the layout oneDNN and cuDNN convolve fastest (1.3x per step on a CPU)
        model = build_model(run.game, run.model, seed=run.seed).to(device)
        self.model = model.to(memory_format=torch.channels_last)
        self.optimizer = make_optimizer(self.model, run.optim)
        self.scaler = torch.amp.GradScaler(device.type, enabled=self.precision == torch.float16)
        self.replay = ReplayBuffer(run.game, run.train.replay_window, targets)
        # optim.ema_decay: self-play, evaluation and snapshots take the average; the model trains
        self.network = copy.deepcopy(self.model).eval() if run.optim.ema_decay > 0 else self.model
        # gating: self-play keeps its own copy (the incumbent) until a new network beats it
        gated = run.eval.gating.enabled
        self.selfplay_model = copy.deepcopy(self.network) if gated else self.network
        self.progress = Progress()
        self.total_steps = run.train.iterations * run.train.steps_per_iteration
        # selfplay.book.teacher: a batch of the run book's lessons joins each step (walk_book)
        self.lessons: Lessons | None = None

    def time_spent(self) -> float:
        """The fraction of ``train.max_minutes`` used so far (0 without a time limit); it moves
        once per iteration, when the loop adds that iteration's seconds."""
        minutes = self.run.train.max_minutes
        return self.progress.seconds / (60 * minutes) if minutes else 0.0

    def next_seed(self) -> int:
        """A seed for a self-play round or a match, drawn from the learner's stream."""
        return int(self.rng.integers(2**31))

    def add(self, data: SelfPlayData) -> None:
        """A self-play round's positions into the replay window: the targets it stores."""
        targets = {name: data.targets[name] for name in self.replay.targets}
        self.replay.add(data.states, targets)
        self.progress.games += data.stats.games
        self.progress.positions += data.stats.moves

    @property
    def ready(self) -> bool:
        """Whether the replay window holds ``train.min_replay`` positions to learn from."""
        return len(self.replay) >= self.run.train.min_replay

    def train_steps(
        self, n: int, should_stop: Callable[[], bool] = lambda: False
    ) -> dict[str, float]:
        """Up to ``n`` optimiser steps (fewer once ``should_stop()``); the mean of every loss
        term by TensorBoard tag, with ``train/learning_rate``. Empty if no step ran."""
        self.model.train()
        symmetries = self.run.game.symmetries if self.run.train.augment else None
        sums: dict[str, float] = {}
        steps = 0
        for _ in range(n):
            if should_stop():
                break
            lr = learning_rate(
                self.run.optim, self.progress.step, self.total_steps, self.time_spent()
            )
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            batch = self.replay.sample(self.run.train.batch_size, self.rng, symmetries)
            if self.run.optim.value_target_q_weight > 0:
                batch = mix_value_targets(batch, self.run.optim.value_target_q_weight)
            lesson = self.lessons(len(batch), self.rng, symmetries) if self.lessons else None
            failpoint("optimiser")  # tests: a kill between two optimiser steps
            taught = None if lesson is None else channels_last(lesson.to_torch(self.device))
            terms = self._step(channels_last(batch.to_torch(self.device)), taught)
            for key, value in terms.items():
                sums[key] = sums.get(key, 0.0) + value
            self.progress.step += 1
            steps += 1
        self.model.eval()
        if not steps:
            return {}
        means = {key: value / steps for key, value in sums.items()}
        means["train/learning_rate"] = self.optimizer.param_groups[0]["lr"]
        return means

    def _step(self, batch: Batch, lesson: Batch | None = None) -> dict[str, float]:
        """One optimiser step on ``batch`` and the policy loss on ``lesson``; the loss terms
        (the lesson's as ``loss/lesson_policy``)."""
        weights = self.run.optim.loss_weights
        with autocast(self.device, self.precision):
            loss, terms = training_loss(self.model, batch, weights, self.losses)
            if lesson is not None:
                taught, _ = policy_loss(self.model, self.model(lesson.planes), lesson)
                loss = loss + weights["policy"] * taught
                terms["loss/lesson_policy"] = float(taught.detach())
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        if self.run.optim.grad_clip:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.run.optim.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self._average()
        return terms

    def _average(self) -> None:
        """``optim.ema_decay``: moves the offered network (weights and batch-norm statistics)
        toward the trained one, with a smaller decay over the first steps."""
        if self.network is self.model:
            return
        step = self.progress.step
        decay = min(self.run.optim.ema_decay, (1 + step) / (10 + step))
        trained = self.model.state_dict()
        with torch.no_grad():
            for name, averaged in self.network.state_dict().items():
                if averaged.is_floating_point():
                    averaged.lerp_(trained[name], 1.0 - decay)
                else:  # batch norm's step counters
                    averaged.copy_(trained[name])

    def _offer_trained(self) -> None:
        """The offered and self-play networks become the trained one (a new start)."""
        if self.network is not self.model:
            self.network.load_state_dict(self.model.state_dict())
        self.selfplay_model.load_state_dict(self.network.state_dict())

    def init_weights(self, path: str) -> str | None:
        """Starts from the network at ``path`` (``train.init_from``): a training checkpoint
        (e.g. a supervised warm start) or an exported agent file (``.urla``). Its weights, and
        with ``train.init_replay`` its replay window (``_init_replay``, from the same read); the
        optimiser stays fresh. Auxiliary heads it lacks keep their initial weights; a smaller
        network of the same kind grows into this run's (``nn.grow``), as does one whose input
        planes this run's encoding extends (uttt's 8 planes into the threat planes' 15); any
        other difference (an auxiliary head of its that this run lacks, too) is an error naming
        both configs and the fix. Returns how it grew (``"from 3x32"``), else None."""
        game = self.run.game
        checkpoint = load_network_weights(path, expected_game=game.name)
        checkpoint.check_game(game, same_encoding=False)  # the same rules
        theirs = checkpoint.make_game()
        more_planes = theirs.observation_shape != game.observation_shape
        if more_planes and not extends_encoding(theirs, game):
            raise ConfigError(
                f"train.init_from={path}: its network reads {theirs.observation_shape[0]} input "
                f"planes ({checkpoint.game_options or 'no options'}) that this run's "
                f"{game.observation_shape[0]} ({game.options or 'no options'}) do not start "
                "with; set the game options to the file's, or to ones that add planes after its"
            )
        state = checkpoint.model_state
        grew = can_grow(checkpoint.model_config, self.run.model, more_planes)
        unexpected = []
        if grew:
            grown = grown_state(state, self.model)
            unexpected = [key for key in state if key not in grown]  # growing keeps none of them
            state = grown
        try:
            missing, dropped = self.model.load_state_dict(state, strict=False)
        except RuntimeError as err:  # a tensor of another shape
            missing, dropped = [str(err).splitlines()[-1].strip()], []
        wrong = [key for key in missing if not key.startswith("aux_heads.")] + unexpected + dropped
        if wrong:
            raise ConfigError(
                f"train.init_from={path}: its network ({checkpoint.model_config}) does not fit "
                f"this run's model ({self.run.model}); "
                f"{model_fix(checkpoint.model_config, self.run.model)}; mismatched: {wrong[:4]}"
            )
        self._offer_trained()
        if self.run.train.init_replay:
            self._init_replay(checkpoint.extra.get("replay"), path)
        if not grew:
            return None
        growth = [f"from {size_name(checkpoint.model_config)}"]
        if more_planes:
            growth.append(
                f"its {theirs.observation_shape[0]} input planes to {game.observation_shape[0]}"
            )
        return ", ".join(growth)

    def _init_replay(self, replay: dict[str, Any] | None, path: str) -> None:
        """Fills the replay window from ``replay``, the ``train.init_from`` file's: its newest
        positions that fit, with their targets. A file without a window (an agent file, an
        iteration snapshot) or whose window lacks a target this run stores is a
        ``ConfigError`` naming the fix."""
        fix = "use the source run's checkpoints/latest.pt, or drop train.init_replay"
        if not replay:
            raise ConfigError(f"train.init_replay=true: {path} keeps no replay window; {fix}")
        lacking = self.replay.missing_targets(replay)
        if lacking:  # e.g. an auxiliary head's target that the source run did not store
            raise ConfigError(
                f"train.init_replay=true: the replay window of {path} has no {lacking} "
                "target(s), which this run trains on; drop train.init_replay"
            )
        try:
            self.replay.load_state_dict(replay)
        except ValueError as err:
            raise ConfigError(
                f"train.init_replay=true: the replay window of {path} does not fit this run: {err}"
            ) from None

    def _check_heads(self, model_state: dict[str, torch.Tensor]) -> None:
        """A resumed network must have this run's auxiliary heads: one more or one fewer is a
        ``ConfigError`` naming ``model.aux_heads`` (a head is added by ``train.init_from``)."""
        saved = sorted({key.split(".")[1] for key in model_state if key.startswith("aux_heads.")})
        have = sorted(self.model.aux_heads)
        if saved != have:
            raise ConfigError(
                f"the run's checkpoint holds a network with model.aux_heads={_override(saved)}, "
                f"this config asks for model.aux_heads={_override(have)}: a resumed run keeps "
                f"its heads. Resume with model.aux_heads={_override(saved)}, or start a new run "
                "from its weights with train.init_from=CHECKPOINT (heads it lacks start fresh)"
            )

    def promote(self) -> None:
        """Gating accepted the new network: self-play plays with its weights from now on."""
        self.selfplay_model.load_state_dict(self.network.state_dict())
        self.progress.selfplay_iteration = self.progress.iteration

    def state_dict(self) -> dict[str, Any]:
        """Everything a resume needs, as plain data (tensors, numbers, strings). Like torch's
        ``state_dict``, its tensors share memory with the learner: save or copy it at once.
        ``model`` is the offered network; with ``optim.ema_decay``, ``trained_model`` the one
        the optimiser moves."""
        state = {
            "model": self.network.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "replay": self.replay.state_dict(),
            **self.counters(),
        }
        if self.network is not self.model:
            state["trained_model"] = self.model.state_dict()
        if self.selfplay_model is not self.network:
            state["selfplay_model"] = self.selfplay_model.state_dict()
        return state

    def counters(self) -> dict[str, Any]:
        """The progress counters and random streams (small; numbered snapshots carry them)."""
        return {
            "progress": json.loads(json.dumps(asdict(self.progress))),
            "rng": {"numpy": self.rng.bit_generator.state, "torch": torch.get_rng_state()},
        }

    def resume_from_snapshot(
        self, model_state: dict[str, torch.Tensor], step: int, extra: dict[str, Any]
    ) -> None:
        """Resumes from a numbered snapshot (its ``latest.pt`` lost): the weights, and the
        counters and random streams where the snapshot has them (older ones hold the iteration
        and minutes only); the optimiser and replay buffer stay fresh (and, with
        ``optim.ema_decay``, the trained weights restart from the snapshot's average)."""
        self._check_heads(model_state)
        self.model.load_state_dict(model_state)
        self._offer_trained()
        if "progress" in extra:
            self.progress = Progress(**extra["progress"])
            self.rng.bit_generator.state = extra["rng"]["numpy"]
            torch.set_rng_state(extra["rng"]["torch"])
        else:
            seconds = 60 * float(extra.get("minutes", 0.0))
            self.progress = Progress(int(extra.get("iteration", 0)), step, seconds)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restores ``state_dict()`` output into this freshly built learner.

        A gated learner's self-play copy gets the saved self-play weights, or the model's when
        the run was not gated before (gating then starts from the latest network). The trained
        weights are ``trained_model`` where the run averaged them, else ``model``; a run that
        turns ``optim.ema_decay`` on starts its average there.
        """
        self._check_heads(state["model"])
        self.model.load_state_dict(state.get("trained_model", state["model"]))
        if self.network is not self.model:
            self.network.load_state_dict(state["model"])
        if self.selfplay_model is not self.network:
            self.selfplay_model.load_state_dict(state.get("selfplay_model", state["model"]))
        if state["optimizer"] is not None:
            self.optimizer.load_state_dict(state["optimizer"])
        self.replay.load_state_dict(state["replay"])
        self.rng.bit_generator.state = state["rng"]["numpy"]
        torch.set_rng_state(state["rng"]["torch"])
        self.progress = Progress(**state["progress"])
