"""The AlphaZero training loop (CleanRL style): read ``train`` top to bottom.

A new run with ``train.warm_start.positions`` (and no ``train.init_from``) first learns
UCT-labelled positions (supervised, ``train.warm_start``; its minutes count). Then each iteration:

1. self-play: ``selfplay.games_per_iteration`` games with the current network and batched search
   (``selfplay.workers`` actors: processes or Ray, ``selfplay.parallel``);
2. their positions go into the replay buffer (a window of the latest ``train.replay_window``);
3. optimise: ``train.steps_per_iteration`` minibatches sampled from the buffer, each position
   under a random board symmetry; AdamW or SGD with warm-up and a cosine or step schedule
   (``train.learner``). ``train.mode=async`` overlaps 1-3: actors play nonstop while the learner
   trains at the replay ratio (``train.selfplay``);
4. gating (``eval.gating.enabled``, off by default as in AlphaZero): self-play uses its own copy
   of the weights, replaced by the new network only when that scores at least
   ``eval.gating.threshold`` against it over ``eval.gating.num_games`` batched games;
5. every ``eval.every`` iterations: matches against the baselines (and, for solved games, the
   optimal-move rate and the match against the exact solver), written as JSON and to TensorBoard;
   every ``eval.elo_every`` iterations, the Elo rating from ``rating_hook`` (see ``train``);
6. checkpoint (atomic; the learner's whole state, ``train.checkpoints``): the resume point.

It stops at ``train.iterations``, after ``train.max_minutes`` (summed over resumes), when the
play is perfect (``train.stop_when_perfect``, solved games), or on Ctrl-C / SIGTERM, always after
saving a checkpoint (self-play workers ignore those signals: the learner stops them). A run
killed outright (SIGKILL) resumes from its last checkpoint, so it loses at most the iteration in
progress (``train.checkpoint_every=1``) and then goes on as if never killed; the temp file of a
save it interrupted is removed when the run starts again. A self-play worker killed outright is
replaced and its games replayed. A damaged ``latest.pt``, a full disk and a second run on the
folder: ``train.checkpoints`` and ``train.run``. ``tests/test_train_faults.py`` injects each.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from ultimate_rl.agents.every_line import KEY_PREFIX, judge_perfect
from ultimate_rl.games import is_solvable
from ultimate_rl.nn import NetworkEvaluator, make_evaluator, resolve_device
from ultimate_rl.nn.evaluator import float32_path
from ultimate_rl.search import Evaluator
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.train.checkpoints import RunCheckpoints
from ultimate_rl.train.config import ConfigError, RunConfig, TrainSection, check_config
from ultimate_rl.train.evaluation import evaluate_network, gating_match
from ultimate_rl.train.learner import Learner, Progress
from ultimate_rl.train.logs import IterationRecord, RunLog
from ultimate_rl.train.run import RunFolderLock
from ultimate_rl.train.selfplay import make_selfplay
from ultimate_rl.train.walk_book import RunBook
from ultimate_rl.train.warm_start import warm_start, warm_start_due

BOOK = "book.npy"
"""The run's own self-play book (``selfplay.book.walk``; its length is in the checkpoint)."""

RatingHook = Callable[[Path, int], dict[str, float]]
"""Rates a model snapshot (path, optimiser step) and returns flat figures such as ``elo``."""


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

    def is_set(self) -> bool:
        return self.requested

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def train(cfg: DictConfig, run_dir: Path, rating_hook: RatingHook | None = None) -> dict[str, Any]:
    """Runs (or resumes, if ``run_dir`` holds a checkpoint) the training; returns the summary.

    ``rating_hook`` rates a snapshot every ``eval.elo_every`` iterations. It is injected because
    the rating (Elo against the MCTS ladder) lives in ``ultimate_rl.evaluate``, a layer above
    this one: ``scripts/train.py`` passes ``ultimate_rl.evaluate.training.rating_hook``.
    """
    run = check_config(cfg)  # every config error surfaces here, before any work
    if run.eval.elo_every > 0 and rating_hook is None:
        raise ConfigError(
            f"eval.elo_every={run.eval.elo_every} needs a rating hook: run scripts/train.py, pass "
            "rating_hook=ultimate_rl.evaluate.training.rating_hook(...) to train(), or set "
            "eval.elo_every=0"
        )
    if run.train.threads:
        torch.set_num_threads(run.train.threads)
    with RunFolderLock(run_dir):  # before any write: a second run on the folder is refused
        return train_in_folder(run, cfg, run_dir, rating_hook)


def train_in_folder(
    run: RunConfig, cfg: DictConfig, run_dir: Path, rating_hook: RatingHook | None
) -> dict[str, Any]:
    """``train``'s work, with the run folder held."""
    device = resolve_device(run.device)
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    learner = Learner(run, device)
    checkpoints = RunCheckpoints(run_dir, run, OmegaConf.to_container(cfg, resolve=True))
    checkpoints.restore(learner)
    game_spec = {"name": run.game.name, "options": run.game_options}
    streaming = run.train.mode == "async"
    selfplay_path, selfplay_settings = choose_selfplay_path(run, learner, device)
    run_book = None
    if run.selfplay.book.walk:  # the run's own book: actors read the file its walks rewrite
        run_book = RunBook((run_dir / BOOK).resolve(), run.game, run.selfplay.book, learner)
        if run.selfplay.book.teacher:
            learner.lessons = run_book.lesson_batch
        book = replace(selfplay_settings.book, path=str(run_book.path))
        selfplay_settings = replace(selfplay_settings, book=book)
    pool = SelfPlayPool(
        game_spec, learner.selfplay_model, run.search, selfplay_settings, device, run.ray, streaming
    )
    # evaluation, gating and probe images judge the network in float32, whatever self-play runs:
    # a reduced-precision path may flip a near tie, and "perfect play" must hold in float32
    network = learner.network
    evaluate = make_evaluator(network, device, backend=float32_path(device), precision="fp32")
    gating = Gating(run, learner, evaluate, device) if run.eval.gating.enabled else None
    evaluation = PeriodicEvaluation(run, evaluate, rating_hook, checkpoints.snapshot, run_book)
    progress = learner.progress
    log = RunLog(run_dir, run, progress, evaluate, selfplay_path)
    log.inference()

    with StopRequest() as stop:
        try:
            # 0. a new run's warm start on UCT labels (train.warm_start), inside its clock; not
            # for a network given by train.init_from (UCT-1000's labels would set it back)
            if warm_start_due(learner):
                started = time.perf_counter()
                losses = warm_start(
                    learner, run.selfplay.workers, stop.is_set, run.train.progress_bar
                )
                progress.seconds += time.perf_counter() - started
                checkpoints.save(learner)
                log.warm_start(progress, losses)
            # 1-3. self-play -> replay window -> optimiser, in rounds or streaming (train.mode)
            selfplay = make_selfplay(run, pool, learner)
            while not finished(progress, run.train) and not stop.requested:
                started = time.perf_counter()
                collected = selfplay(stop.is_set)
                progress.iteration += 1
                record = IterationRecord(
                    collected.stats, collected.losses, len(learner.replay), collected.pipeline
                )
                # 4. gating: the new network must beat the self-play one to replace it
                record.gate = gating(learner) if gating and collected.losses else None
                # 5. evaluation (before the checkpoint, so the checkpoint knows the result)
                record.report = evaluation(learner)
                log.write_evaluation(progress, record)
                progress.seconds += time.perf_counter() - started
                # 6. checkpoint: the resume point
                last = finished(progress, run.train) or stop.requested
                if last or progress.iteration % run.train.checkpoint_every == 0:
                    checkpoints.save(learner)
                log.iteration(progress, record)
        finally:
            log.close_bar()
            pool.close()
        interrupted = stop.requested and not finished(progress, run.train)
    return log.finish(progress, interrupted)


def choose_selfplay_path(
    run: RunConfig, learner: Learner, device: torch.device
) -> tuple[NetworkEvaluator, SelfPlaySettings]:
    """``selfplay.inference=auto``: the path is chosen once, here, and every self-play evaluator
    of the run takes it (actors on another device than the learner's choose their own)."""
    chosen = make_evaluator(
        learner.network,
        device,
        backend=run.selfplay.inference,
        game=run.game,
        batch_size=run.selfplay.evaluation_batch(run.search),
    )
    settings = run.selfplay
    if chosen.choice is not None and resolve_device(run.selfplay.actor_device) == device:
        settings = replace(run.selfplay, inference=chosen.backend)
    return chosen, settings


class Gating:
    """Step 4: the new network plays the self-play one (``train.evaluation.gating_match``) and
    replaces it when it scores at least ``eval.gating.threshold``."""

    def __init__(
        self, run: RunConfig, learner: Learner, candidate: NetworkEvaluator, device: torch.device
    ) -> None:
        self.run, self.candidate = run, candidate
        self.incumbent = make_evaluator(
            learner.selfplay_model, device, backend=candidate.backend, precision="fp32"
        )

    def __call__(self, learner: Learner) -> dict[str, float]:
        """Plays the match, promotes the new network if it passed; the figures to log."""
        run = self.run
        seed = learner.next_seed()
        match = gating_match(run.game, self.candidate, self.incumbent, run.search, run.eval, seed)
        accepted = match.score >= run.eval.gating.threshold
        if accepted:
            learner.promote()
        return {
            "score": match.score,
            "accepted": float(accepted),
            "selfplay_iteration": float(learner.progress.selfplay_iteration),
            "wins": float(match.wins),
            "draws": float(match.draws),
            "losses": float(match.losses),
        }


class PeriodicEvaluation:
    """Step 5: matches against the baselines every ``eval.every`` iterations (solved games: the
    optimal-move rate and the perfect-play verdict too, and with ``selfplay.book.walk`` the
    walk that grows the run's book), Elo every ``eval.elo_every``."""

    def __init__(
        self,
        run: RunConfig,
        evaluate: Evaluator,
        rating_hook: RatingHook | None,
        snapshot: Callable[[Learner], Path],
        run_book: RunBook | None = None,
    ) -> None:
        self.run, self.evaluate, self.run_book = run, evaluate, run_book
        self.rating_hook, self.snapshot = rating_hook, snapshot
        self.solved = is_solvable(run.game)
        wanted = run.eval.optimal_positions  # where the game's solver can value positions
        positions = run.game.exact_positions(wanted, run.eval.positions_seed) if wanted else []
        self.positions = positions or None

    def __call__(self, learner: Learner) -> dict[str, Any] | None:
        """The report of this iteration, or ``None`` if nothing was due; updates the progress's
        ``perfect`` (a verdict on this iteration's weights: an iteration not evaluated has
        trained them since, so it clears it) and ``last_eval``."""
        run, progress = self.run, learner.progress
        report = None
        progress.perfect = False
        if due(progress.iteration, run.eval.every):
            # the walks stop at the first lost line: a budget not walked now keeps no old verdict
            progress.last_eval = {
                k: v for k, v in progress.last_eval.items() if not k.startswith(KEY_PREFIX)
            }
            report = evaluate_network(
                run.game, self.evaluate, run.search, run.eval, run.seed, self.positions
            )
            if self.run_book is not None:  # selfplay.book.walk: the walk's positions join
                report.update(self.run_book.grow(self.evaluate, report.get("optimal_rate", 0.0)))
            # after the book's walks: the verdict takes their results instead of walking again
            progress.perfect = self.solved and judge_perfect(
                run.game, self.evaluate, report, run.eval
            )
        if self.rating_hook and due(progress.iteration, run.eval.elo_every):
            rating = self.rating_hook(self.snapshot(learner), progress.step)
            report = {**(report or {}), **rating}
        if report is not None:
            progress.last_eval = {**progress.last_eval, **report}
        return report


def finished(progress: Progress, train: TrainSection) -> bool:
    """Out of iterations, out of time, or (``train.stop_when_perfect``) playing perfectly."""
    out_of_time = train.max_minutes is not None and progress.seconds >= 60 * train.max_minutes
    perfect = train.stop_when_perfect and progress.perfect
    return progress.iteration >= train.iterations or out_of_time or perfect


def due(iteration: int, every: int) -> bool:
    return every > 0 and iteration % every == 0
