"""Batched self-play: one worker plays many games at once through the batched search.

Every search step of every unfinished game goes through ONE ``evaluate`` call per simulation
wave, so the network sees large batches even on a CPU. A game slot that finishes is refilled
with a new game until the requested number of games has started.

Per move the worker applies the usual AlphaZero/KataGo options: a temperature schedule,
Dirichlet noise at the root, playout-cap randomisation (a share of moves searched cheaply, kept
as value targets only), resignation (with a share of games that play on, to measure how often
resigning would have been wrong) and tree reuse. Value targets are the final result from each
mover's point of view (the search's root value for a one-sided opening's recorded moves); each
position also records its root search value (``root_values``, to mix into the value target),
the next position's policy target (``opponent_policies``: the opponent's reply, all zeros where
there is none) and the ownership of the game's final position
(``ownership``, mover's view; a resigned game's last position), which training stores only when a
recipe option uses them (``train.learner``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

import numpy as np

from ultimate_rl.games import kernels, layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.ownership import movers_view
from ultimate_rl.games.positions import random_opening
from ultimate_rl.search import BatchedSearch, Evaluator, SearchConfig
from ultimate_rl.selfplay.book import BookFile, lost_path

# the settings were declared here before selfplay/schema.py: their old import path still works
from ultimate_rl.selfplay.schema import PlayoutCapSettings as PlayoutCapSettings
from ultimate_rl.selfplay.schema import RandomOpeningSettings as RandomOpeningSettings
from ultimate_rl.selfplay.schema import ResignSettings as ResignSettings
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.selfplay.targets import ALL_TARGETS, search_targets


@dataclass
class SelfPlayStats:
    """Counters of one self-play round; ``merge`` sums the rounds of several workers."""

    games: int = 0
    positions: int = 0  # positions recorded for training
    moves: int = 0  # moves played (some positions are not recorded)
    simulations: int = 0
    seconds: float = 0.0
    nn_seconds: float = 0.0  # wall time inside evaluate
    first_wins: int = 0
    draws: int = 0
    second_wins: int = 0
    resignations: int = 0
    resign_checks: int = 0  # would-be resignations in games where resigning was disabled
    resign_false: int = 0  # ... after which the would-be resigner did not lose
    rounds: int = 0  # worker rounds summed here
    float32_rounds: int = 0  # ... whose reduced-precision weights failed their check (float32)
    float_stem_rounds: int = 0  # ... whose int8 graph passed with its stem in float32

    def merge(self, other: SelfPlayStats) -> SelfPlayStats:
        """Sums counters; times are the slowest worker's (they ran side by side)."""
        out = SelfPlayStats()
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            setattr(out, f.name, max(a, b) if f.name.endswith("seconds") else a + b)
        return out

    def summary(self) -> dict[str, float]:
        """Rates for logging (per second, per game, fractions)."""
        games = max(self.games, 1)
        seconds = max(self.seconds, 1e-9)
        return {
            "games_per_s": self.games / seconds,
            "positions_per_s": self.moves / seconds,
            "simulations_per_s": self.simulations / seconds,
            "game_length": self.moves / games,
            "first_player_win_rate": self.first_wins / games,
            "draw_rate": self.draws / games,
            "first_player_loss_rate": self.second_wins / games,
            "resign_rate": self.resignations / games,
            "resign_false_positive_rate": self.resign_false / max(self.resign_checks, 1),
            "nn_time_fraction": self.nn_seconds / seconds,
            "float32_fallback_rate": self.float32_rounds / max(self.rounds, 1),
            "float_stem_rate": self.float_stem_rounds / max(self.rounds, 1),
        }


@dataclass
class SelfPlayData:
    """Training positions of one self-play round (the replay buffer's ``add`` arguments).

    Positions are raw states, not network planes: 128 bytes each instead of the planes' kilobytes,
    which is what worker processes send back and the replay buffer keeps. ``targets`` holds one
    array per ``ALL_TARGETS`` entry, also read as the attribute of its name (``data.policies``).
    """

    states: np.ndarray  # [N, STATE_LEN] int32
    targets: dict[str, np.ndarray]  # [N, ...] per target, by name (``selfplay.targets``)
    stats: SelfPlayStats = field(default_factory=SelfPlayStats)

    def __getattr__(self, name: str) -> np.ndarray:
        # only called for names that are not attributes; ``__dict__`` lookup is safe mid-unpickle
        targets = self.__dict__.get("targets", {})
        if name not in targets:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return targets[name]

    @classmethod
    def empty(cls, game: Game) -> SelfPlayData:
        """No positions, every array of its shape: what a round of no games returns."""
        states = np.zeros((0, layout.STATE_LEN), layout.STATE_DTYPE)
        return cls(states, {t.name: t.zeros(0, game) for t in ALL_TARGETS})

    @classmethod
    def concatenate(cls, parts: list[SelfPlayData]) -> SelfPlayData:
        """The parts' positions in order, their stats merged."""
        stats = SelfPlayStats()
        for part in parts:
            stats = stats.merge(part.stats)
        states = np.concatenate([p.states for p in parts])
        targets = {
            name: np.concatenate([p.targets[name] for p in parts]) for name in parts[0].targets
        }
        return cls(states, targets, stats)


class _TimedEvaluate:
    """Wraps ``evaluate`` to add up the wall time spent inside it."""

    def __init__(self, evaluate: Evaluator) -> None:
        self.evaluate = evaluate
        self.seconds = 0.0

    def __call__(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = time.perf_counter()
        out = self.evaluate(planes, masks)
        self.seconds += time.perf_counter() - start
        return out


@dataclass
class _LiveGame:
    """A game in progress: its position, the positions recorded so far, its resignation rule."""

    state: np.ndarray
    can_resign: bool
    would_resign: int = -1  # in a game that plays on: the player who would have resigned
    opening_plies: int = 0  # moves of a one-sided opening still to play (not recorded)
    random_side: int = -1  # ... the player whose moves in it are random
    # per recorded move: position, policy target, full search, root value, whether the root
    # value is also its value target (else the game's result is)
    history: list[tuple[np.ndarray, np.ndarray, bool, float, bool]] = field(default_factory=list)


class _SelfPlayRound:
    """The games of one ``SelfPlayWorker.play`` call. Live game ``i`` is searched with tree ``i``;
    when it ends, row ``i`` takes a new game or, once all have started, the last live game, whose
    tree moves with it."""

    def __init__(
        self,
        game: Game,
        search: SearchConfig,
        settings: SelfPlaySettings,
        num_games: int,
        rng: np.random.Generator,
        book: np.ndarray | None = None,
        lost: np.ndarray | None = None,
    ) -> None:
        self.game, self.search_config, self.settings, self.rng = game, search, settings, rng
        self.book, self.lost = book, lost
        self.initial = game.initial_state()
        slots = min(settings.parallel_games, num_games)
        self.searcher = BatchedSearch(game, max(slots, 1), search, seed=int(rng.integers(2**63)))
        self.num_games, self.started = num_games, 0
        self.stats = SelfPlayStats()
        # one part per finished game, after an empty one: a round of no games has its arrays too
        self.recorded = [SelfPlayData.empty(game)]
        self.live = [self._start_game(i) for i in range(slots)]

    def _start_game(self, row: int) -> _LiveGame:
        """A new game for ``row`` (whose tree is forgotten): from a book position or a random
        opening for a share, else from the start."""
        s, opening = self.settings, self.settings.random_opening
        state, one_sided_plies, random_side = self.initial.copy(), 0, -1
        # no draw where the book is off: seeded runs of the presets keep their games
        if self.book is not None and self.rng.random() < s.book.fraction:
            book = self.book
            if s.book.lost_share > 0 and self.rng.random() < s.book.lost_share:
                book = self.book if self.lost is None else self.lost
            state = book[self.rng.integers(len(book))].copy()
        elif self.rng.random() < opening.fraction:
            plies = int(self.rng.integers(opening.max_plies + 1))
            # no draw where the option is off: seeded runs of the presets keep their games
            if opening.one_sided > 0 and self.rng.random() < opening.one_sided:
                one_sided_plies, random_side = plies, int(self.rng.integers(2))
            else:
                moves = random_opening(self.game, plies, self.rng, if_game_ends="stop")
                state = self.game.apply_sequence(moves)
        can_resign = s.resign.enabled and self.rng.random() >= s.resign.disabled_fraction
        self.searcher.reset(row)
        self.started += 1
        return _LiveGame(state, can_resign, opening_plies=one_sided_plies, random_side=random_side)

    def step(self, evaluate: Evaluator) -> None:
        """Searches every live game once and plays the chosen moves."""
        s = self.settings
        full = bool(self.rng.random() < s.playout_cap.fraction_full)
        sims = self.search_config.num_simulations if full else s.playout_cap.fast_simulations
        states = np.stack([g.state for g in self.live])
        early = states[:, layout.MOVES] < s.temperature_moves
        temperature = np.where(early, s.temperature, s.final_temperature)
        out = self.searcher.search(
            states, evaluate, add_noise=full, num_simulations=sims, temperature=temperature
        )
        self.stats.simulations += sims * len(states)
        # highest row first: a finished game's row takes the last live game, already played
        for i in range(len(states) - 1, -1, -1):
            game = self.live[i]
            root_value, action = float(out.root_value[i]), int(out.action[i])
            in_opening = game.opening_plies > 0
            searched = not in_opening or int(game.state[layout.PLAYER]) != game.random_side
            opening = self._opening_move(game, action) if in_opening else None
            if opening is None or (searched and s.random_opening.record_searching_side):
                valued_by_search = opening is not None
                game.history.append(
                    (game.state.copy(), out.policy_target[i], full, root_value, valued_by_search)
                )
            if opening is not None:
                action = opening
            result = self._play_move(game, root_value, action, may_resign=opening is None)
            if result is not None:
                self._finish(i, result)

    def _opening_move(self, game: _LiveGame, searched: int) -> int | None:
        """A one-sided opening's next move (the random side's random move, else ``searched``),
        or None where it would end the game: the opening stops and the search's move counts."""
        action = searched
        if int(game.state[layout.PLAYER]) == game.random_side:
            legal = self.game.legal_actions(game.state)
            action = int(legal[self.rng.integers(len(legal))])
        if self.game.is_terminal(self.game.apply(game.state, action)):
            game.opening_plies = 0
            return None
        game.opening_plies -= 1
        return action

    def _play_move(
        self, game: _LiveGame, root_value: float, action: int, may_resign: bool
    ) -> float | None:
        """Resigns (where ``may_resign``: not in an unrecorded opening) or plays ``action``;
        returns the first player's result if the game ended."""
        resign = self.settings.resign
        mover = int(game.state[layout.PLAYER])
        resigning = (
            may_resign
            and resign.enabled
            and int(game.state[layout.MOVES]) >= resign.min_moves
            and root_value < resign.threshold
        )
        if resigning and game.can_resign:
            self.stats.resignations += 1
            return -1.0 if mover == 0 else 1.0
        if resigning and game.would_resign < 0:
            game.would_resign = mover
        kernels.apply(game.state, action)
        self.stats.moves += 1
        return (
            None
            if game.state[layout.STATUS] == layout.ONGOING
            else float(kernels.outcome(game.state))
        )

    def _finish(self, row: int, first_player_result: float) -> None:
        """Counts and records the game of ``row``, then refills the row (or drops it)."""
        game, stats = self.live[row], self.stats
        stats.games += 1
        stats.first_wins += first_player_result > 0
        stats.second_wins += first_player_result < 0
        stats.draws += first_player_result == 0
        if game.would_resign >= 0:
            stats.resign_checks += 1
            stats.resign_false += first_player_result * (1 - 2 * game.would_resign) >= 0
        ownership = self.game.final_ownership(game.state)
        self.recorded.append(_game_data(game.history, first_player_result, ownership))
        if self.started < self.num_games:
            self.live[row] = self._start_game(row)
            return
        last = self.live.pop()
        if row < len(self.live):
            self.live[row] = last
            self.searcher.move_tree(len(self.live), row)


class SelfPlayWorker:
    """Plays rounds of games, ``parallel_games`` at a time, through one batched search."""

    def __init__(self, game: Game, search: SearchConfig, settings: SelfPlaySettings) -> None:
        self.game = game
        self.search_config = search
        self.settings = settings
        book = settings.book
        self.book = BookFile(book.path, game, book.walk) if book.fraction > 0 else None
        self.lost = BookFile(lost_path(book.path), game, True) if book.lost_share > 0 else None

    def play(self, evaluate: Evaluator, num_games: int, rng: np.random.Generator) -> SelfPlayData:
        """Plays ``num_games`` games to the end and returns their training positions."""
        start_time = time.perf_counter()
        timed = _TimedEvaluate(evaluate)
        games = _SelfPlayRound(
            self.game,
            self.search_config,
            self.settings,
            num_games,
            rng,
            self.book.current() if self.book else None,
            self.lost.current() if self.lost else None,
        )
        while games.live:
            games.step(timed)
        stats = games.stats
        stats.seconds = time.perf_counter() - start_time
        stats.nn_seconds = timed.seconds
        stats.rounds = 1
        # the int8 path checks each new set of weights on its first call of the round; one that
        # failed ran the round with a float32 stem, or in float32 at float32's speed: the run's
        # log says so
        stats.float32_rounds = int(getattr(evaluate, "fell_back", False))
        stats.float_stem_rounds = int(
            getattr(evaluate, "float_stem", False) and not stats.float32_rounds
        )
        data = SelfPlayData.concatenate(games.recorded)
        stats.positions = len(data.states)
        data.stats = stats
        return data


def _game_data(
    history: list[tuple[np.ndarray, np.ndarray, bool, float, bool]],
    first_player_result: float,
    final_ownership: np.ndarray,
) -> SelfPlayData:
    """A finished game's positions with their targets: each move's search, the game's result
    and its final position's ownership (``Game.final_ownership``) from the mover's view, and
    the reply's policy where a full search gave it."""
    states = np.stack([move[0] for move in history])
    policies = np.stack([move[1] for move in history])
    full = np.array([move[2] for move in history])
    root_values = np.array([move[3] for move in history])
    valued_by_search = np.array([move[4] for move in history])
    results = first_player_result * (1.0 - 2.0 * states[:, layout.PLAYER])
    values = np.where(valued_by_search, root_values, results)
    replies = np.zeros_like(policies)
    replies[:-1] = np.where(full[1:, None], policies[1:], 0.0)
    ownership = movers_view(final_ownership, states[:, layout.PLAYER])
    targets = search_targets(policies, values, root_values, full, ownership, replies)
    return SelfPlayData(states, targets)
