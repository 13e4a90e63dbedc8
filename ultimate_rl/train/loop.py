"""The AlphaZero training loop, in one place (CleanRL style): read ``train`` top to bottom.

Each iteration:

1. self-play: ``selfplay.games_per_iteration`` games with the current network and batched search;
2. their positions go into the replay buffer (a window of the latest ``train.replay_window``);
3. optimise: ``train.steps_per_iteration`` minibatches sampled from the buffer, each position
   under a random board symmetry; AdamW or SGD with warm-up and a cosine or step schedule;
4. gating (``eval.gating.enabled``, off by default as in AlphaZero): self-play uses its own copy
   of the weights, replaced by the new network only when that scores at least
   ``eval.gating.threshold`` against it over ``eval.gating.num_games`` batched games;
5. every ``eval.every`` iterations: matches against the baselines (and, for solved games, the
   optimal-move rate and the match against the exact solver), written as JSON and to TensorBoard;
   every ``eval.elo_every`` iterations, the Elo rating from ``rating_hook`` (see ``train``);
6. checkpoint (atomic; model, self-play copy, optimiser, replay buffer, RNG streams, counters):
   the resume point.

It stops at ``train.iterations``, after ``train.max_minutes`` (summed over resumes), when the
play is perfect (``train.stop_when_perfect``, solved games), or on Ctrl-C / SIGTERM, always after
saving a checkpoint. A run killed outright (SIGKILL) resumes from its last checkpoint, so it loses
at most the iteration in progress (``train.checkpoint_every=1``); the temp file of a save it
interrupted is removed when the run starts again.
"""

from __future__ import annotations

import copy
import json
import math
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from ultimate_rl.games import Game, is_solvable, sample_positions
from ultimate_rl.games import kernels as K
from ultimate_rl.nn import (
    alphazero_loss,
    autocast,
    build_model,
    load_checkpoint,
    make_evaluator,
    resolve_device,
    resolve_precision,
    save_checkpoint,
)
from ultimate_rl.nn.atomic import remove_stale_temp_files
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.selfplay.replay import ReplayBuffer
from ultimate_rl.selfplay.worker import SelfPlayData
from ultimate_rl.train.config import ConfigError, check_config
from ultimate_rl.train.evaluation import MatchScore, evaluate_network, gating_match, is_perfect
from ultimate_rl.train.tensorboard import probe_image

CHECKPOINT = "checkpoints/latest.pt"
PROBE_POSITIONS = 4
PROBE_SEED = 99

RatingHook = Callable[[Path, int], dict[str, float]]
"""Rates a model snapshot (path, optimiser step) and returns flat figures such as ``elo``."""


@dataclass
class Progress:
    """Counters that survive a resume (stored in the checkpoint)."""

    iteration: int = 0
    step: int = 0
    seconds: float = 0.0  # training wall time, summed over resumes
    games: int = 0
    positions: int = 0
    perfect: bool = False
    last_eval: dict[str, Any] = field(default_factory=dict)
    selfplay_iteration: int = 0  # gating: the iteration whose network plays self-play


class StopRequest:
    """Ctrl-C / SIGTERM set a flag that the loop checks; a second Ctrl-C interrupts at once."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopRequest:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True
        tqdm.write("stop requested: finishing this iteration and saving (Ctrl-C again to abort)")

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def train(cfg: DictConfig, run_dir: Path, rating_hook: RatingHook | None = None) -> dict[str, Any]:
    """Runs (or resumes, if ``run_dir`` holds a checkpoint) the training; returns the summary.

    ``rating_hook`` rates a snapshot every ``eval.elo_every`` iterations. It is injected because
    the rating (Elo against the MCTS ladder) lives in ``ultimate_rl.evaluate``, a layer above
    this one: ``scripts/train.py`` passes ``ultimate_rl.evaluate.training.rating_hook``.
    """
    checked = check_config(cfg)  # every config error surfaces here, before any work
    game, t = checked.game, cfg.train
    if cfg.eval.elo_every > 0 and rating_hook is None:
        raise ConfigError(
            f"eval.elo_every={cfg.eval.elo_every} needs a rating hook: run scripts/train.py, pass "
            "rating_hook=ultimate_rl.evaluate.training.rating_hook(...) to train(), or set "
            "eval.elo_every=0"
        )
    if t.threads:
        torch.set_num_threads(int(t.threads))
    device = resolve_device(cfg.device)
    precision = resolve_precision("auto", device)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))

    # --- the learner's state: model, optimiser, replay buffer, RNG streams, counters ----------
    rng = np.random.default_rng(int(cfg.seed))
    torch.manual_seed(int(cfg.seed))
    model = build_model(game, checked.model, seed=int(cfg.seed)).to(device)
    optimizer = make_optimizer(model, cfg.optim)
    scaler = torch.amp.GradScaler(device.type, enabled=precision == torch.float16)
    replay = ReplayBuffer.for_game(game, int(t.replay_window))
    gating = bool(cfg.eval.gating.enabled)
    selfplay_model = copy.deepcopy(model) if gating else model  # the incumbent when gating
    progress = Progress()
    for leftover in remove_stale_temp_files((run_dir / CHECKPOINT).parent):
        tqdm.write(f"removed {leftover}: the temp file of a save that a kill interrupted")
    if (run_dir / CHECKPOINT).exists():
        progress = restore(
            run_dir / CHECKPOINT, game, model, selfplay_model, optimizer, replay, rng
        )
        tqdm.write(f"resumed {run_dir} at iteration {progress.iteration}, step {progress.step}")
    total_steps = int(t.iterations) * int(t.steps_per_iteration)

    game_spec = {"name": game.name, "options": game_options(cfg)}
    pool = SelfPlayPool(game_spec, selfplay_model, checked.search, checked.selfplay, device)
    evaluate = make_evaluator(model, device)
    evaluate_selfplay = make_evaluator(selfplay_model, device)
    solved = is_solvable(game)
    positions = (
        sample_positions(game, int(cfg.eval.optimal_positions), int(cfg.eval.positions_seed))
        if solved and cfg.eval.optimal_positions > 0
        else None
    )
    probes = [game.initial_state(), *sample_positions(game, PROBE_POSITIONS - 1, PROBE_SEED)]
    writer = SummaryWriter(str(run_dir / "tensorboard"), purge_step=progress.iteration + 1)
    bar = tqdm(
        total=int(t.iterations),
        initial=progress.iteration,
        disable=not t.progress_bar,
        desc="train",
        unit="iter",
        dynamic_ncols=True,
    )

    with StopRequest() as stop:
        try:
            while not _finished(progress, cfg) and not stop.requested:
                started = time.perf_counter()
                # 1. self-play with the current weights (with gating: the last accepted ones)
                data = pool.play(int(cfg.selfplay.games_per_iteration), int(rng.integers(2**31)))
                # 2. into the replay window
                replay.add(data.states, data.policies, data.values, data.full_search)
                # 3. optimise on sampled, augmented minibatches
                losses = {}
                if len(replay) >= int(t.min_replay):
                    losses = optimise(
                        model,
                        optimizer,
                        scaler,
                        replay,
                        rng,
                        cfg,
                        progress,
                        total_steps,
                        game,
                        device,
                        precision,
                        stop,
                    )
                progress.iteration += 1
                progress.games += data.stats.games
                progress.positions += data.stats.moves
                # 4. gating: the new network must beat the self-play one to replace it
                gate = None
                if gating and losses:
                    match = gating_match(
                        game,
                        evaluate,
                        evaluate_selfplay,
                        checked.search,
                        cfg.eval,
                        int(rng.integers(2**31)),
                    )
                    gate = promote_if_accepted(match, cfg, model, selfplay_model, progress)
                # 5. evaluation (before the checkpoint, so the checkpoint knows the result)
                report = None
                if _due(progress.iteration, int(cfg.eval.every)):
                    report = evaluate_network(
                        game, evaluate, checked.search, cfg.eval, int(cfg.seed), positions
                    )
                    progress.perfect = solved and is_perfect(
                        game, report, float(cfg.eval.perfect_optimal_rate)
                    )
                if rating_hook and _due(progress.iteration, int(cfg.eval.elo_every)):
                    snapshot = save_snapshot(run_dir, cfg, model, progress)
                    report = {**(report or {}), **rating_hook(snapshot, progress.step)}
                if report is not None or gate is not None:
                    progress.last_eval = {**progress.last_eval, **(report or {})}
                    write_json(
                        run_dir / "evaluations" / f"iter_{progress.iteration:05d}.json",
                        {
                            "iteration": progress.iteration,
                            "step": progress.step,
                            "perfect": progress.perfect,
                            **(report or {}),
                            **({"gating": gate} if gate else {}),
                        },
                    )
                progress.seconds += time.perf_counter() - started
                # 6. checkpoint: the resume point
                last = _finished(progress, cfg) or stop.requested
                if last or progress.iteration % int(t.checkpoint_every) == 0:
                    save(run_dir, cfg, model, selfplay_model, optimizer, replay, rng, progress)
                log_iteration(writer, progress, data, losses, replay, optimizer, report, gate)
                if t.probe_image_every and progress.iteration % int(t.probe_image_every) == 0:
                    log_probes(writer, game, evaluate, probes, progress.iteration)
                bar.update(1)
                tqdm.write(status_line(progress, cfg, data, losses, len(replay), report, gate))
        finally:
            bar.close()
            pool.close()
    summary = finish(run_dir, writer, cfg, progress)
    writer.close()
    return summary


# --- the pieces, in the order the loop uses them ---------------------------------------------


def make_optimizer(model: PolicyValueNet, optim: DictConfig) -> torch.optim.Optimizer:
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


def learning_rate(optim: DictConfig, step: int, total_steps: int) -> float:
    """Linear warm-up, then constant, cosine (down to ``min_lr_fraction``) or step decay."""
    if step < optim.warmup_steps:
        return optim.lr * (step + 1) / optim.warmup_steps
    if optim.schedule == "cosine":
        progress = min((step - optim.warmup_steps) / max(total_steps - optim.warmup_steps, 1), 1)
        floor = optim.min_lr_fraction
        return optim.lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
    if optim.schedule == "step":
        return optim.lr * optim.step_gamma ** (step // optim.step_every)
    return float(optim.lr)


def optimise(
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    replay: ReplayBuffer,
    rng: np.random.Generator,
    cfg: DictConfig,
    progress: Progress,
    total_steps: int,
    game: Game,
    device: torch.device,
    precision: torch.dtype | None,
    stop: StopRequest,
) -> dict[str, float]:
    """``train.steps_per_iteration`` optimiser steps; returns the mean of each loss term."""
    model.train()
    symmetries = game.symmetries if cfg.train.augment else None
    sums: dict[str, float] = {}
    steps = 0
    for _ in range(int(cfg.train.steps_per_iteration)):
        if stop.requested:
            break
        lr = learning_rate(cfg.optim, progress.step, total_steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        batch = replay.sample(int(cfg.train.batch_size), rng, symmetries).to_torch(device)
        with autocast(device, precision):
            loss, terms = alphazero_loss(
                model, *batch, value_weight=float(cfg.optim.value_loss_weight)
            )
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if cfg.optim.grad_clip:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), float(cfg.optim.grad_clip))
        scaler.step(optimizer)
        scaler.update()
        progress.step += 1
        steps += 1
        for key, value in terms.items():
            sums[key] = sums.get(key, 0.0) + value
    model.eval()
    means = {key: value / max(steps, 1) for key, value in sums.items()}
    if steps:
        means["learning_rate"] = optimizer.param_groups[0]["lr"]
    return means


def promote_if_accepted(
    match: MatchScore,
    cfg: DictConfig,
    model: PolicyValueNet,
    selfplay_model: PolicyValueNet,
    progress: Progress,
) -> dict[str, float]:
    """Gating: copies the new weights into the self-play network if ``match`` (the new network's
    result against it) reaches ``eval.gating.threshold``; returns the figures to log."""
    accepted = match.score >= float(cfg.eval.gating.threshold)
    if accepted:
        selfplay_model.load_state_dict(model.state_dict())
        progress.selfplay_iteration = progress.iteration
    return {
        "score": match.score,
        "accepted": float(accepted),
        "selfplay_iteration": float(progress.selfplay_iteration),
        "wins": float(match.wins),
        "draws": float(match.draws),
        "losses": float(match.losses),
    }


def save(
    run_dir: Path,
    cfg: DictConfig,
    model: PolicyValueNet,
    selfplay_model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    replay: ReplayBuffer,
    rng: np.random.Generator,
    progress: Progress,
) -> None:
    """The resume checkpoint (everything, the gated self-play weights too), then a small
    numbered model snapshot."""
    extra = {
        "progress": json.loads(json.dumps(asdict(progress))),
        "replay": replay.state_dict(),
        "rng": {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()},
        "config": OmegaConf.to_container(cfg, resolve=True),
    }
    if selfplay_model is not model:
        extra["selfplay_model"] = selfplay_model.state_dict()
    save_checkpoint(
        run_dir / CHECKPOINT,
        optimizer_state=optimizer.state_dict(),
        extra=extra,
        **_checkpoint_fields(cfg, model, progress),
    )
    snapshot = save_snapshot(run_dir, cfg, model, progress)
    keep_every = int(cfg.train.keep_every)
    snapshots = [
        path
        for path in sorted(snapshot.parent.glob("iter_*.pt"))
        if not (keep_every and int(path.stem.removeprefix("iter_")) % keep_every == 0)
    ]
    for old in snapshots[: max(len(snapshots) - int(cfg.train.keep_checkpoints), 0)]:
        old.unlink(missing_ok=True)


def save_snapshot(
    run_dir: Path, cfg: DictConfig, model: PolicyValueNet, progress: Progress
) -> Path:
    """The model alone as ``checkpoints/iter_N.pt`` (what agents and the evaluator load)."""
    snapshot = run_dir / "checkpoints" / f"iter_{progress.iteration:05d}.pt"
    save_checkpoint(
        snapshot,
        extra={"iteration": progress.iteration},
        **_checkpoint_fields(cfg, model, progress),
    )
    return snapshot


def _checkpoint_fields(
    cfg: DictConfig, model: PolicyValueNet, progress: Progress
) -> dict[str, Any]:
    return {
        "model": model,
        "model_config": model.config,
        "game_name": str(cfg.game.name),
        "game_options": game_options(cfg),
        "step": progress.step,
    }


def restore(
    path: Path,
    game: Game,
    model: PolicyValueNet,
    selfplay_model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    replay: ReplayBuffer,
    rng: np.random.Generator,
) -> Progress:
    """Loads a ``save`` checkpoint into the freshly built objects; returns the counters.

    A gated ``selfplay_model`` gets the saved self-play weights, or the model's when the run
    was not gated before (gating then starts from the latest network).
    """
    checkpoint = load_checkpoint(path, expected_game=game)
    model.load_state_dict(checkpoint.model_state)
    if selfplay_model is not model:
        selfplay_model.load_state_dict(
            checkpoint.extra.get("selfplay_model", checkpoint.model_state)
        )
    if checkpoint.optimizer_state is not None:
        optimizer.load_state_dict(checkpoint.optimizer_state)
    extra = checkpoint.extra
    replay.load_state_dict(extra["replay"])
    rng.bit_generator.state = extra["rng"]["numpy"]
    torch.set_rng_state(extra["rng"]["torch"])
    return Progress(**extra["progress"])


def log_iteration(
    writer: SummaryWriter,
    progress: Progress,
    data: SelfPlayData,
    losses: dict[str, float],
    replay: ReplayBuffer,
    optimizer: torch.optim.Optimizer,
    report: dict[str, Any] | None,
    gate: dict[str, float] | None,
) -> None:
    """Scalars of one iteration, all at x = iteration (the optimiser step is logged too)."""
    i = progress.iteration
    names = {
        "policy_loss": "loss/policy",
        "value_loss": "loss/value",
        "total_loss": "loss/total",
        "policy_entropy": "train/policy_entropy",
        "value_accuracy": "train/value_accuracy",
        "learning_rate": "train/learning_rate",
    }
    for key, value in losses.items():
        writer.add_scalar(names[key], value, i)
    writer.add_scalar("train/step", progress.step, i)
    for key, value in data.stats.summary().items():
        writer.add_scalar(f"selfplay/{key}", value, i)
    writer.add_scalar("replay/size", len(replay), i)
    writer.add_scalar("time/minutes", progress.seconds / 60, i)
    for key, value in flat_eval(report or {}).items():
        writer.add_scalar(f"eval/{key}", value, i)
    for key, value in (gate or {}).items():
        writer.add_scalar(f"gating/{key}", value, i)
    writer.flush()


def log_probes(
    writer: SummaryWriter, game: Game, evaluate: Any, probes: list[np.ndarray], iteration: int
) -> None:
    """The network's policy and value on the fixed probe positions, as one image."""
    states = np.stack(probes)
    planes = np.zeros((len(states), *game.observation_shape), dtype=np.float32)
    masks = np.zeros((len(states), game.num_actions), dtype=bool)
    K.encode_batch(states, planes, masks)
    logits, values = evaluate(planes, masks)
    policies = np.exp(logits - logits.max(axis=1, keepdims=True)) * masks
    policies /= policies.sum(axis=1, keepdims=True)
    writer.add_image("probes/policy_value", probe_image(game, planes, policies, values), iteration)
    for k, value in enumerate(values):
        writer.add_scalar(f"probes/value_{k}", float(value), iteration)


def flat_eval(report: dict[str, Any]) -> dict[str, float]:
    """Numeric leaves of an evaluation report, as ``opponent/figure`` names."""
    out: dict[str, float] = {}
    for key, value in report.items():
        if isinstance(value, dict):
            out.update({f"{key}/{k}": float(v) for k, v in value.items() if _is_number(v)})
        elif _is_number(value):
            out[key] = float(value)
    return out


def status_line(
    progress: Progress,
    cfg: DictConfig,
    data: SelfPlayData,
    losses: dict[str, float],
    replay_size: int,
    report: dict[str, Any] | None,
    gate: dict[str, float] | None,
) -> str:
    """One readable line per iteration."""
    s = data.stats.summary()
    parts = [
        f"iter {progress.iteration}/{cfg.train.iterations}",
        f"step {progress.step}",
        f"{data.stats.games} games {s['games_per_s']:.1f}/s {s['positions_per_s']:.0f} pos/s "
        f"(nn {100 * s['nn_time_fraction']:.0f}%)",
        f"W/D/L {s['first_player_win_rate']:.2f}/{s['draw_rate']:.2f}/"
        f"{s['first_player_loss_rate']:.2f}",
        f"replay {replay_size}",
    ]
    if losses:
        parts.append(
            f"loss {losses['total_loss']:.3f} (p {losses['policy_loss']:.3f} "
            f"v {losses['value_loss']:.3f})"
        )
    if report:
        scores = [f"{k} {v['score']:.2f}" for k, v in report.items() if isinstance(v, dict)]
        if "optimal_rate" in report:
            scores.append(f"optimal {report['optimal_rate']:.3f}")
        if "elo" in report:
            scores.append(
                f"elo {report['elo']:.0f} [{report['elo_ci_low']:.0f}, {report['elo_ci_high']:.0f}]"
            )
        parts.append("eval " + " ".join(scores) + (" PERFECT" if progress.perfect else ""))
    if gate:
        verdict = (
            "accepted"
            if gate["accepted"]
            else f"rejected (keeps iter {progress.selfplay_iteration})"
        )
        parts.append(f"gate {gate['score']:.2f} {verdict}")
    parts.append(f"{progress.seconds / 60:.1f} min")
    return " | ".join(parts)


def finish(run_dir: Path, writer: SummaryWriter, cfg: DictConfig, progress: Progress) -> dict:
    """``summary.json`` and TensorBoard hparams with the final metrics."""
    summary = {
        "iterations": progress.iteration,
        "steps": progress.step,
        "minutes": progress.seconds / 60,
        "games": progress.games,
        "positions": progress.positions,
        "perfect": progress.perfect,
        "last_eval": progress.last_eval,
    }
    write_json(run_dir / "summary.json", summary)
    hparams = {
        "game": str(cfg.game.name),
        "model": str(cfg.model.arch),
        "search": str(cfg.search.algorithm),
        "simulations": int(cfg.search.num_simulations),
        "optimizer": str(cfg.optim.name),
        "lr": float(cfg.optim.lr),
        "batch_size": int(cfg.train.batch_size),
        "games_per_iteration": int(cfg.selfplay.games_per_iteration),
        "seed": int(cfg.seed),
    }
    metrics = {f"final/{k}": v for k, v in flat_eval(progress.last_eval).items()}
    metrics["final/minutes"] = progress.seconds / 60
    writer.add_hparams(hparams, metrics, run_name=".")
    return summary


def game_options(cfg: DictConfig) -> dict[str, Any]:
    """The game node without its name: the options ``games.make`` takes."""
    options = OmegaConf.to_container(cfg.game, resolve=True)
    assert isinstance(options, dict)
    return {k: v for k, v in options.items() if k != "name"}


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomic JSON write (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def _finished(progress: Progress, cfg: DictConfig) -> bool:
    t = cfg.train
    out_of_time = t.max_minutes is not None and progress.seconds >= 60 * float(t.max_minutes)
    perfect = bool(t.stop_when_perfect) and progress.perfect
    return progress.iteration >= int(t.iterations) or out_of_time or perfect


def _due(iteration: int, every: int) -> bool:
    return every > 0 and iteration % every == 0


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value is not None
