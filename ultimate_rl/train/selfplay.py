"""Steps 1-3 of an iteration, self-play -> replay -> optimise, in either ``train.mode``.

- ``sync`` (``Rounds``): a round of ``selfplay.games_per_iteration`` games with the current
  weights, then ``train.steps_per_iteration`` optimiser steps. Self-play and training take turns,
  and a seeded run reproduces exactly (the tests pin it).
- ``async`` (``Stream``): actors play nonstop with the latest published weights while the
  learner trains on what has arrived, never faster than the replay ratio allows, and publishes
  a new weight version every ``train.publish_every`` steps (the version is the learner's step,
  so ``policy_lag`` is in steps). An iteration ends when ``games_per_iteration`` games arrived.

The replay ratio is ``train.samples_per_position`` optimiser samples per new position; unset,
it is ``steps_per_iteration`` steps per ``games_per_iteration`` games, as in sync mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ultimate_rl.runtime.faults import failpoint
from ultimate_rl.selfplay.actor import Result
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.selfplay.worker import SelfPlayStats
from ultimate_rl.train.config import RunConfig
from ultimate_rl.train.learner import Learner

StopCheck = Callable[[], bool]


@dataclass
class Collected:
    """What steps 1-3 of one iteration produced."""

    stats: SelfPlayStats
    losses: dict[str, float]  # mean loss terms by TensorBoard tag; empty if no step ran
    pipeline: dict[str, float] = field(default_factory=dict)  # throughputs, lag, queue depth


class Rounds:
    """``train.mode=sync``: one self-play round, then the optimiser."""

    def __init__(self, run: RunConfig, pool: SelfPlayPool, learner: Learner) -> None:
        self.run, self.pool, self.learner = run, pool, learner

    def __call__(self, should_stop: StopCheck) -> Collected:
        run, learner = self.run, self.learner
        data = self.pool.play(run.selfplay.games_per_iteration, learner.next_seed())
        failpoint("selfplay")  # tests: a kill with the round's games played, not yet stored
        learner.add(data)
        if not learner.ready:
            return Collected(data.stats, {})
        ratio = run.train.samples_per_position
        steps = run.train.steps_per_iteration
        if ratio is not None:
            steps = round(ratio * len(data.states) / run.train.batch_size)
        started, before = time.perf_counter(), learner.progress.step
        losses = learner.train_steps(steps, should_stop)
        samples = (learner.progress.step - before) * run.train.batch_size
        rate = samples / max(time.perf_counter() - started, 1e-9)
        return Collected(data.stats, losses, {"learner_samples_per_s": rate})


class Stream:
    """``train.mode=async``: actors play nonstop, the learner keeps to the replay ratio."""

    def __init__(self, run: RunConfig, pool: SelfPlayPool, learner: Learner) -> None:
        self.run, self.pool, self.learner = run, pool, learner
        self.games = self.positions = self.steps = 0  # since this process started
        pool.publish(learner.progress.step)
        pool.start(learner.next_seed())

    def allowed_steps(self) -> int:
        """Optimiser steps the replay ratio allows now, beyond those taken."""
        train = self.run.train
        if train.samples_per_position is None:
            allowed = train.steps_per_iteration * self.games / self.run.selfplay.games_per_iteration
        else:
            allowed = train.samples_per_position * self.positions / train.batch_size
        return int(allowed) - self.steps

    def __call__(self, should_stop: StopCheck) -> Collected:
        learner, train = self.learner, self.run.train
        started, train_seconds = time.perf_counter(), 0.0
        results: list[Result] = []
        sums: dict[str, float] = {}
        lags: list[int] = []
        depths: list[int] = []
        games = steps = 0
        while games < self.run.selfplay.games_per_iteration and not should_stop():
            may_train = learner.ready and self.allowed_steps() > 0
            done = self.pool.poll(0.0 if may_train else 0.2)
            failpoint("selfplay")
            depths += [len(done)] if done else []
            for result in done:
                learner.add(result.data)
                results.append(result)
                lags.append(learner.progress.step - result.job.version)
                games += result.data.stats.games
                self.games += result.data.stats.games
                self.positions += len(result.data.states)
            if learner.ready and self.allowed_steps() > 0:
                step_started = time.perf_counter()
                for key, value in learner.train_steps(1).items():
                    sums[key] = sums.get(key, 0.0) + value
                train_seconds += time.perf_counter() - step_started
                steps += 1
                self.steps += 1
                if learner.progress.step % train.publish_every == 0:
                    self.pool.publish(learner.progress.step)
        seconds = time.perf_counter() - started
        stats = self._stats(results, seconds)
        pipeline = {
            "actor_positions_per_s": stats.moves / max(seconds, 1e-9),
            "learner_samples_per_s": steps * train.batch_size / max(train_seconds, 1e-9),
            "policy_lag": sum(lags) / max(len(lags), 1),
            "policy_lag_max": float(max(lags, default=0)),
            "queue_depth": sum(depths) / max(len(depths), 1),
            "samples_per_position": steps * train.batch_size / max(stats.positions, 1),
        }
        return Collected(stats, {k: v / steps for k, v in sums.items()}, pipeline)

    @staticmethod
    def _stats(results: list[Result], seconds: float) -> SelfPlayStats:
        """The jobs' counters summed; times are the iteration's wall time (actors overlap), the
        network's share of it the actors' mean."""
        stats = SelfPlayStats()
        busy = nn = 0.0
        for result in results:
            stats = stats.merge(result.data.stats)
            busy += result.data.stats.seconds
            nn += result.data.stats.nn_seconds
        stats.seconds, stats.nn_seconds = seconds, seconds * nn / max(busy, 1e-9)
        return stats


def make_selfplay(run: RunConfig, pool: SelfPlayPool, learner: Learner) -> Rounds | Stream:
    """Steps 1-3 for ``train.mode``."""
    return Stream(run, pool, learner) if run.train.mode == "async" else Rounds(run, pool, learner)
