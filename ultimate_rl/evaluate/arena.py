"""The arena: plays two agents against each other for N games and records every game.

Fairness: game ``i`` starts from opening ``i // 2`` (``opening_plies`` uniformly random moves,
seeded, never ending the game) and agent A plays first-player in the even games, so the first
player changes every game and each opening is played once from each side. Deterministic agents
therefore do not replay one game, and a first-move advantage cancels out.

Reproducibility: every game has its own seed derived from the match seed and the game index; the
agents are rebuilt for each game from their specs with that seed (in whichever worker process
plays it), so a game's moves do not depend on the number of workers or on the order of play.

Records: with ``record_path`` each game is appended as one JSON line (players, opening, moves,
seconds per move, result) after a header line describing the match. Starting the same match again
on the same file keeps the games already there and plays only the missing ones (a partial last
line from a killed run is dropped); a file of a different match is refused (``records.py``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ultimate_rl.agents.match import IllegalMoveError, one_by_one, play_games
from ultimate_rl.evaluate.distributed import play_on_ray
from ultimate_rl.evaluate.elo import Z95, elo_difference
from ultimate_rl.evaluate.records import (
    RECORD_FORMAT,
    GameRecord,
    RecordWriter,
    load_records,
    weights_digests,
)
from ultimate_rl.evaluate.specs import (
    Agent,
    AgentFactory,
    AgentSpec,
    AgentSpecLike,
    EvaluationError,
    build_agent,
    parse_spec,
    takes_option,
)
from ultimate_rl.evaluate.sprt import SPRTConfig, SPRTResult, sprt
from ultimate_rl.games import Game, random_opening
from ultimate_rl.runtime.workers import bounded_jobs, first_finished

OVER_BUDGET_SLACK = 1.5  # a move counts as over budget past this multiple of time_per_move


@dataclass(frozen=True)
class MatchConfig:
    """How a match is played. ``workers=None`` uses every core; 1 plays in this process."""

    num_games: int
    opening_plies: int = 2
    seed: int = 0
    time_per_move: float | None = None
    workers: int | None = None
    sprt: SPRTConfig | None = None
    progress: bool = True
    backend: str = "processes"  # or "ray": games as Ray tasks (evaluate.distributed)
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.backend not in ("processes", "ray"):
            raise EvaluationError(f"backend must be processes or ray, got {self.backend!r}")
        if self.num_games < 1:
            raise EvaluationError(f"num_games must be >= 1, got {self.num_games}")
        if self.opening_plies < 0:
            raise EvaluationError(f"opening_plies must be >= 0, got {self.opening_plies}")
        if self.time_per_move is not None and not self.time_per_move > 0:
            raise EvaluationError(
                f"time_per_move must be > 0 seconds (or None for none), got {self.time_per_move}"
            )
        if self.workers is not None and self.workers < 1:
            raise EvaluationError(f"workers must be >= 1 (or None for every core): {self.workers}")

    @property
    def num_workers(self) -> int:
        return self.workers or os.cpu_count() or 1


@dataclass
class MatchResult:
    """Every game of a match between A and B, from A's point of view."""

    agent_a: AgentSpec
    agent_b: AgentSpec
    records: list[GameRecord]
    time_per_move: float | None = None
    sprt: SPRTResult | None = None
    _scores: list[float] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.records.sort(key=lambda r: r.index)
        self._scores = [r.score_of(self.agent_a.label) for r in self.records]

    @property
    def num_games(self) -> int:
        return len(self.records)

    @property
    def wins(self) -> int:
        return sum(s == 1.0 for s in self._scores)

    @property
    def draws(self) -> int:
        return sum(s == 0.5 for s in self._scores)

    @property
    def losses(self) -> int:
        return sum(s == 0.0 for s in self._scores)

    @property
    def score(self) -> float:
        """A's mean score (win 1, draw 0.5)."""
        return float(np.mean(self._scores)) if self._scores else float("nan")

    def score_interval(self) -> tuple[float, float]:
        """95% interval of A's mean score from the per-game (trinomial) variance."""
        n = len(self._scores)
        if n == 0:
            return float("nan"), float("nan")
        half = Z95 * float(np.std(self._scores)) / math.sqrt(n)
        return max(self.score - half, 0.0), min(self.score + half, 1.0)

    def elo(self) -> tuple[float, float, float]:
        """A's Elo advantage over B with its 95% interval (from ``score_interval``)."""
        low, high = self.score_interval()
        return elo_difference(self.score), elo_difference(low), elo_difference(high)

    @property
    def first_player_score(self) -> float:
        """Mean score of whoever moved first (player 0): the first-move advantage, 0.5 if none."""
        return float(np.mean([(r.result + 1.0) / 2.0 for r in self.records]))

    def move_times(self, label: str) -> list[float]:
        """Seconds of every move ``label`` played."""
        times = []
        for r in self.records:
            side = r.players.index(label)
            first_mover = len(r.opening) % 2  # the player to move after the opening
            times += [t for k, t in enumerate(r.times) if (first_mover + k) % 2 == side]
        return times

    def over_budget_moves(self) -> int:
        """Moves slower than ``OVER_BUDGET_SLACK * time_per_move`` (0 without a budget)."""
        if self.time_per_move is None:
            return 0
        limit = OVER_BUDGET_SLACK * self.time_per_move
        return sum(t > limit for r in self.records for t in r.times)

    def summary(self) -> dict[str, Any]:
        elo, low, high = self.elo()
        return {
            "agent_a": self.agent_a.as_dict(),
            "agent_b": self.agent_b.as_dict(),
            "games": self.num_games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": self.score,
            "score_ci": list(self.score_interval()),
            "elo_difference": elo,
            "elo_ci": [low, high],
            "draw_rate": self.draws / self.num_games if self.num_games else float("nan"),
            "first_player_score": self.first_player_score,
            "max_move_seconds": max((t for r in self.records for t in r.times), default=0.0),
            "over_budget_moves": self.over_budget_moves(),
            "sprt": self.sprt.as_dict() if self.sprt else None,
        }


def play_match(
    game: Game,
    agent_a: AgentSpecLike,
    agent_b: AgentSpecLike,
    config: MatchConfig,
    record_path: str | Path | None = None,
    agent_factory: AgentFactory = build_agent,
) -> MatchResult:
    """Plays A against B (see the module docstring); returns every game, old and new.

    Both agents are built once here first, so a bad spec fails before any game starts.
    ``agent_factory`` (a module-level function, for the worker processes) replaces
    ``ultimate_rl.agents.make``, e.g. in tests.
    """
    a, b = _distinct_labels(parse_spec(agent_a), parse_spec(agent_b))
    built = [check_agent(game, spec, agent_factory) for spec in (a, b)]
    a, b = (
        _with_time_budget(s, config.time_per_move, x) for s, x in zip((a, b), built, strict=True)
    )
    seeded = {s.label: takes_option(x, "seed") for s, x in zip((a, b), built, strict=True)}
    path = Path(record_path) if record_path is not None else None
    header = _header(game, a, b, config)
    done = {r.index: r for r in load_records(path, header)} if path else {}
    todo = [i for i in range(config.num_games) if i not in done]
    if todo and not _decided(a, done, config):
        tasks = [_task(game, a, b, config, i, agent_factory, seeded) for i in todo]
        with (
            RecordWriter(path, header) as writer,
            tqdm(
                total=config.num_games,
                initial=config.num_games - len(todo),
                desc=f"{a.label} vs {b.label}",
                disable=not config.progress,
                leave=False,
            ) as bar,
        ):
            games = _run_tasks(tasks, config.num_workers)  # a generator: starts nothing yet
            if config.backend == "ray":
                games = play_on_ray(play_game, tasks, config.workers, config.ray_address)
            for record in games:
                writer.write(record)  # flushed at once: an interrupted match keeps it
                done[record.index] = record
                bar.update(1)
                if _decided(a, done, config):
                    break
    result = MatchResult(a, b, list(done.values()), config.time_per_move)
    result.sprt = _sprt(result, config)
    return result


def check_agent(game: Game, spec: AgentSpec, agent_factory: AgentFactory = build_agent) -> Agent:
    """Builds ``spec`` and plays one move from the start (reading its checkpoint first if it
    names one), so that an unknown agent, a bad option, a missing or damaged checkpoint, one for
    another game, or an agent that cannot play this game fails before any game; the move also
    compiles the agent's kernels, which would otherwise count against the first move's time."""
    checkpoint = spec.kwargs.get("checkpoint")
    try:
        if checkpoint is not None:
            from ultimate_rl.nn.checkpoint import load_checkpoint

            load_checkpoint(checkpoint).check_game(game, same_encoding=False)
        agent = agent_factory(spec, None)
        agent.select_action(game, game.initial_state())
        return agent
    except Exception as err:  # any failure to build is a bad spec from the caller's view
        raise EvaluationError(f"agent {str(spec)!r} cannot be used: {err}") from err


def replay(game: Game, record: GameRecord) -> np.ndarray:
    """The final position of a recorded game; checks that it ends with the recorded result."""
    state = game.apply_sequence(record.opening + record.moves)
    if not game.is_terminal(state) or game.returns(state) != record.result:
        raise EvaluationError(
            f"game {record.index} does not replay to its recorded result {record.result}; "
            "the record belongs to another game or was edited"
        )
    return state


def match_opening(game: Game, config: MatchConfig, index: int) -> list[int]:
    """The opening of game ``index``: games ``2k`` and ``2k + 1`` share opening ``k``. Its seeding
    is part of the record format: a rerun reuses recorded games only if it draws them again."""
    rng = np.random.default_rng([config.seed, index // 2, 0x0BE])
    return random_opening(game, config.opening_plies, rng, if_game_ends="redraw")


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of a match seeded ``seed``."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


# --- internals ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Task:
    game: Game
    index: int
    seed: int
    players: tuple[AgentSpec, AgentSpec]  # first player, second player
    opening: list[int]
    agent_factory: AgentFactory
    seeded: tuple[bool, bool]  # whether each player's agent takes a seed


def _task(
    game: Game,
    a: AgentSpec,
    b: AgentSpec,
    config: MatchConfig,
    index: int,
    factory: AgentFactory,
    seeded: dict[str, bool],
) -> _Task:
    players = (a, b) if index % 2 == 0 else (b, a)
    opening = match_opening(game, config, index)
    flags = (seeded[players[0].label], seeded[players[1].label])
    return _Task(game, index, game_seed(config.seed, index), players, opening, factory, flags)


def play_game(task: _Task) -> GameRecord:
    """Plays one game in this process (the unit of work of the worker pool)."""
    game = task.game
    seeds = np.random.SeedSequence(task.seed).generate_state(2)
    first, second = (
        one_by_one(game, task.agent_factory(spec, int(s) if seeded else None))
        for spec, s, seeded in zip(task.players, seeds, task.seeded, strict=True)
    )
    labels = (task.players[0].label, task.players[1].label)
    try:
        start = game.apply_sequence(task.opening)
        played = play_games(game, (first, second), [start], np.zeros(1, int), labels)
    except IllegalMoveError as err:
        raise EvaluationError(
            f"agent {err.player!r} played {err.action!r} in game {task.index}: {err}"
        ) from err
    moves, seconds, result = played.moves[0], played.seconds[0], played.results[0]
    return GameRecord(task.index, task.seed, labels, task.opening, moves, seconds, result)


def _run_tasks(tasks: list[_Task], workers: int) -> Iterator[GameRecord]:
    """Yields finished games as they complete; at most ``2 * workers`` are queued at a time."""
    workers = min(workers, len(tasks))
    if workers <= 1:
        yield from map(play_game, tasks)
        return
    # spawn, not fork: a forked child of a process that already ran torch threads can hang.
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_init_worker)
    jobs = bounded_jobs(
        tasks, partial(pool.submit, play_game), first_finished, Future.cancel, 2 * workers
    )
    try:
        with closing(jobs):
            for _, future in jobs:
                yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _init_worker() -> None:
    """One thread per worker process: the processes, not threads, share out the cores."""
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"


def _distinct_labels(a: AgentSpec, b: AgentSpec) -> tuple[AgentSpec, AgentSpec]:
    """A match of an agent against itself needs two names to tell the copies apart."""
    return (a, b.with_label(f"{b.label} (copy)")) if a.label == b.label else (a, b)


def _with_time_budget(spec: AgentSpec, time_per_move: float | None, agent: Agent) -> AgentSpec:
    """Gives the match's budget to agents that take one and set no budget of their own; for an
    agent with ``num_simulations`` it is a cap (its search stops at whichever comes first)."""
    own = "time_per_move" in spec.kwargs
    if time_per_move is None or own or not takes_option(agent, "time_per_move"):
        return spec
    return spec.with_options(time_per_move=time_per_move)


def _sprt(result: MatchResult, config: MatchConfig) -> SPRTResult | None:
    if config.sprt is None:
        return None
    return sprt(result.wins, result.draws, result.losses, config.sprt)


def _decided(a: AgentSpec, done: dict[int, GameRecord], config: MatchConfig) -> bool:
    """Whether the SPRT (if any) has stopped the match on the games in ``done``."""
    if config.sprt is None:
        return False
    scores = [r.score_of(a.label) for r in done.values()]
    counts = (scores.count(1.0), scores.count(0.5), scores.count(0.0))
    return sprt(*counts, config.sprt).decision is not None


def _header(game: Game, a: AgentSpec, b: AgentSpec, config: MatchConfig) -> dict[str, Any]:
    """What must match for a record file to be continued (the game count may grow)."""
    return {
        "type": "match",
        "format": RECORD_FORMAT,
        "game": repr(game),
        "agents": [a.as_dict(), b.as_dict()],
        "opening_plies": config.opening_plies,
        "seed": config.seed,
        "time_per_move": config.time_per_move,
        **weights_digests(a, b),
    }
