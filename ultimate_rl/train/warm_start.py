"""A warm start from rollout-MCTS labels (uttt.ai's first stage): supervised, before self-play.

Positions from random openings are searched by UCT (random rollouts, no network); the visit
distribution is the policy target and the root value the value target. A network trained on
those already plays like a weak MCTS before it has played a game, so self-play starts from
sensible moves instead of noise. ``train.warm_start`` runs it inside a run (its minutes count
against ``train.max_minutes``, its labels stay in the replay window until self-play pushes them
out); ``scripts/pretrain_uct.py`` writes such a network to a file for ``train.init_from``.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import closing
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ultimate_rl.games import layout
from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.games.positions import random_opening
from ultimate_rl.nn.checkpoint import save_checkpoint
from ultimate_rl.runtime.workers import (
    actor_start_environment,
    bounded_jobs,
    first_finished,
    ignore_stop_signals,
)
from ultimate_rl.search.uct import UCT
from ultimate_rl.selfplay.targets import search_targets, unplayed_ownership
from ultimate_rl.train.config import WarmStartSection
from ultimate_rl.train.learner import Learner

Labels = tuple[np.ndarray, np.ndarray, np.ndarray]  # states [N, S], policies [N, A], values [N]
CHUNK = 250  # positions per labelling job: a progress tick and a stop check every ~1 s at 1,000


def uct_labels(
    game: Game, positions: int, simulations: int, max_plies: int, rng: np.random.Generator
) -> Labels:
    """``positions`` states after 0..``max_plies`` random moves, with UCT's visit distribution
    ``[N, A]`` and root value ``[N]`` (mover's view) after ``simulations`` simulations."""
    uct = UCT(num_simulations=simulations, seed=int(rng.integers(2**31)))
    states = np.zeros((positions, layout.STATE_LEN), layout.STATE_DTYPE)
    policies = np.zeros((positions, game.num_actions), np.float32)
    values = np.zeros(positions, np.float32)
    for i in range(positions):
        plies = int(rng.integers(max_plies + 1))
        states[i] = game.apply_sequence(random_opening(game, plies, rng, if_game_ends="stop"))
        result = uct.search(states[i])
        policies[i] = result.visit_counts / max(result.visit_counts.sum(), 1)
        values[i] = result.root_value
    return states, policies, values


def _label_job(
    game: dict[str, Any], positions: int, simulations: int, plies: int, seed: int
) -> Labels:
    """One labelling job in a worker process (the game travels as its name and options)."""
    built = make_game(game["name"], **game["options"])
    return uct_labels(built, positions, simulations, plies, np.random.default_rng(seed))


def parallel_uct_labels(
    game: dict[str, Any],
    warm: WarmStartSection,
    workers: int,
    seed: int,
    should_stop: Callable[[], bool] = lambda: False,
    show_progress: bool = True,
) -> Labels:
    """``uct_labels`` for ``warm.positions`` positions, in jobs of ``CHUNK`` on ``workers``
    processes; job ``k`` is seeded by ``seed`` and ``k`` alone, so the labels do not depend on
    the number of workers. Once ``should_stop()``, pending jobs are dropped and the finished
    ones returned (in job order)."""
    sizes = [min(CHUNK, warm.positions - start) for start in range(0, warm.positions, CHUNK)]
    seeds = np.random.SeedSequence(seed).generate_state(len(sizes))
    bar = tqdm(total=warm.positions, desc="warm start: UCT labels", disable=not show_progress)
    # spawn, not fork: a forked child of a process that already ran torch threads can hang;
    # the workers ignore Ctrl-C, as self-play actors do: the run stops them after saving
    with actor_start_environment():
        pool = ProcessPoolExecutor(
            max(workers, 1), mp_context=get_context("spawn"), initializer=ignore_stop_signals
        )

    def submit(job: tuple[int, int, int]) -> Future[Labels]:
        with actor_start_environment():  # a submit may start a worker process
            return pool.submit(_label_job, game, job[1], warm.simulations, warm.max_plies, job[2])

    jobs = [(k, n, int(s)) for k, (n, s) in enumerate(zip(sizes, seeds, strict=True))]
    wait = partial(first_finished, timeout=1.0)  # a stop check every second
    finished = bounded_jobs(jobs, submit, wait, Future.cancel, 2 * max(workers, 1), should_stop)
    done: dict[int, Labels] = {}
    with pool, closing(finished):
        for job, future in finished:
            done[job[0]] = future.result()
            bar.update(job[1])
    bar.close()
    parts = [done[k] for k in sorted(done)]
    if not parts:
        return _empty_labels(game)
    return tuple(np.concatenate([part[i] for part in parts]) for i in range(3))  # type: ignore[return-value]


def _empty_labels(game: dict[str, Any]) -> Labels:
    built = make_game(game["name"], **game["options"])
    return (
        np.zeros((0, layout.STATE_LEN), layout.STATE_DTYPE),
        np.zeros((0, built.num_actions), np.float32),
        np.zeros(0, np.float32),
    )


def learn_labels(
    learner: Learner,
    labels: Labels,
    steps: int,
    should_stop: Callable[[], bool] = lambda: False,
    show_progress: bool = True,
) -> dict[str, float]:
    """The labels into the learner's replay window, then up to ``steps`` optimiser steps on
    the window; the mean loss terms of the last tenth of the steps (empty if none ran)."""
    states, policies, values = labels
    if len(states):
        # UCT's root value is both the value target and the root value; a label has no reply
        # and, its game not played out, no ownership
        unplayed = unplayed_ownership(learner.run.game, len(states))
        given = search_targets(policies, values, values, np.ones(len(states), bool), unplayed)
        learner.replay.add(states, {name: given[name] for name in learner.replay.targets})
        learner.progress.warm_start_positions += len(states)
    if not len(learner.replay) or steps <= 0:
        return {}
    chunk = max(steps // 10, 1)
    losses: dict[str, float] = {}
    with tqdm(total=steps, desc="warm start: training", disable=not show_progress) as bar:
        for done in range(0, steps, chunk):
            if should_stop():
                break
            before = learner.progress.step
            losses = learner.train_steps(min(chunk, steps - done), should_stop) or losses
            bar.update(learner.progress.step - before)
    return losses


def warm_start(
    learner: Learner,
    workers: int,
    should_stop: Callable[[], bool] = lambda: False,
    show_progress: bool = True,
) -> dict[str, float]:
    """``train.warm_start`` on a new run's learner: UCT labels on ``workers`` processes, then
    its optimiser steps on them; the loss terms of its last steps. A warm start stopped after
    its labelling resumes with the labels it kept and runs only the steps still due."""
    run, progress = learner.run, learner.progress
    game = {"name": run.game.name, "options": run.game_options}
    warm = run.train.warm_start
    if progress.warm_start_positions:
        labels = _empty_labels(game)
    else:
        seed = learner.next_seed()
        labels = parallel_uct_labels(game, warm, workers, seed, should_stop, show_progress)
    steps = warm.steps - progress.step
    return learn_labels(learner, labels, steps, should_stop, show_progress)


def warm_start_due(learner: Learner) -> bool:
    """Whether a run's warm start is still to do (or to finish): configured, no
    ``train.init_from`` network, no self-play yet, and labels or steps missing."""
    run, progress = learner.run, learner.progress
    warm = run.train.warm_start
    if not warm.positions or run.train.init_from or progress.iteration:
        return False
    return not progress.warm_start_positions or progress.step < warm.steps


def save_warm_start(learner: Learner, path: Path) -> Path:
    """The network as a training checkpoint that ``train.init_from`` reads."""
    run = learner.run
    return save_checkpoint(
        path,
        model=learner.network,
        model_config=run.model,
        game_name=run.game.name,
        game_options=run.game_options,
        step=learner.progress.step,
    )
