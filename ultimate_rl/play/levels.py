"""Difficulty levels a person picks, with Elo ratings from the shipped calibration run.

The uttt levels and their ratings come from ``checkpoints/<game>_agent_evaluation/
evaluation.json``, the output of one ``scripts/evaluate.py`` run (Bradley-Terry over the UCT ladder,
anchored at UCT-1000 = 1000): every player of that run is a level, built from the agent spec the
run recorded, so the ratings shown are the ratings measured. Levels without a calibration (random,
perfect, the other games) are unrated: rated play against them is refused.

A level also varies its first moves (``decide``): among the moves its analysis rates nearly as
high as its best one it samples by that rating, so a person cannot replay a won game move by move;
after the opening it plays its own choice, as calibrated.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ultimate_rl import agents
from ultimate_rl.games import is_solvable
from ultimate_rl.games.base import Game
from ultimate_rl.play.opponent import SHIPPED_FOLDERS
from ultimate_rl.play.session import Agent

OPENING_PLIES = 4  # the agent's moves among the first plies of a game are varied
NEAR_BEST = 0.5  # a move is "near-equal" when its policy share is at least this share of the best


@dataclass
class Level:
    """A named opponent: how to build its agent, and its Elo (None: unrated)."""

    name: str
    agent: str
    options: dict[str, Any] = field(default_factory=dict)
    rating: float | None = None
    built: Agent | None = None  # a ready agent (tests, the command line's own agent)
    seed: int | None = None  # seeds the opening variety (and the agent, if it takes a seed)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def get_agent(self) -> Agent:
        """The level's agent, built on first use (loading a network takes a while)."""
        if self.built is None:
            seeded = {"seed": self.seed} if self.seed is not None else {}
            self.built = agents.make(self.agent, **self.options, **seeded)
        return self.built

    def analyse(self, game: Game, state: np.ndarray, *, wait: bool = True) -> dict[str, Any] | None:
        """The agent's analysis of ``state`` (not over) for a page: its policy (one share per
        action, legal moves only), value for the mover (None if the agent has none) and line
        (``pv``). It thinks under the level's lock and its own thinking limit, as for a move;
        ``wait=False`` returns None at once while the level is busy (a game's move, another
        analysis), so requests never queue up behind it."""
        if not self.lock.acquire(blocking=wait):
            return None
        try:  # an agent may keep search trees: one position at a time
            analysis = self.get_agent().analyse(game, state)
        finally:
            self.lock.release()
        policy, value = analysis_parts(analysis, game, state)
        return {
            "policy": policy.round(6).tolist(),  # sums to 1 within 1e-4 (81 moves)
            "value": None if value is None else round(min(max(value, -1.0), 1.0), 4),
            "pv": analysis_line(analysis, game, state, policy),
        }

    def to_json(self) -> dict[str, Any]:
        rating = None if self.rating is None else round(self.rating)
        return {"name": self.name, "rating": rating}


@dataclass(frozen=True)
class Decision:
    """The agent's move, and what it thought when it analysed: its preferred move and its value
    for the mover (``analysed`` False: it only chose, so the review asks for the value later)."""

    action: int
    best: int
    value: float | None = None
    analysed: bool = False

    def review(self) -> dict[str, Any]:
        """What the review keeps of it (the value only if there was an analysis)."""
        return {"best": self.best, **({"value": self.value} if self.analysed else {})}


def analysis_parts(analysis: Any, game: Game, state: np.ndarray) -> tuple[np.ndarray, float | None]:
    """The policy (legal moves only, summing to 1 when any is positive) and value of an analysis.

    Agents return an ``Analysis`` or a mapping with ``policy`` and ``value`` (mover's view).
    """
    get = _fields(analysis)
    policy = np.asarray(get("policy"), dtype=np.float64).reshape(-1)
    if policy.shape != (game.num_actions,) or not np.all(np.isfinite(policy)):
        raise ValueError(
            f"the agent's analysis has a policy of shape {policy.shape}; expected "
            f"({game.num_actions},) finite values"
        )
    policy = np.where(game.legal_mask(state), np.clip(policy, 0, None), 0.0)
    total = policy.sum()
    value = get("value")
    return (policy / total if total > 0 else policy), None if value is None else float(value)


def analysis_line(analysis: Any, game: Game, state: np.ndarray, policy: np.ndarray) -> list[int]:
    """The line the agent expects from ``state``: its principal variation (a searching network
    agent's: the most visited move, then the most visited reply...) up to its first move that is
    not legal, or, for an agent without one, the move its ``policy`` favours most."""
    line = []
    for action in _fields(analysis)("pv") or ():
        if game.is_terminal(state) or not game.legal_mask(state)[int(action)]:
            break
        line.append(int(action))
        state = game.apply(state, int(action))
    if not line and policy.any():
        line = [int(np.argmax(policy))]
    return line


def _fields(analysis: Any) -> Callable[[str], Any]:
    """Reads a field of an ``Analysis`` or of a mapping alike (None when it is missing)."""
    return analysis.get if isinstance(analysis, dict) else lambda key: getattr(analysis, key, None)


def strongest(levels: list[Level], default: str) -> Level:
    """The strongest rated level (the analysis board's), else the level named ``default``."""
    rated = [level for level in levels if level.rating is not None]
    if rated:
        return max(rated, key=lambda level: level.rating or 0.0)
    return next(level for level in levels if level.name == default)


def assess(agent: Agent, game: Game, state: np.ndarray) -> Decision:
    """The agent's analysis of ``state`` as a decision: its most favoured move and its value."""
    policy, value = analysis_parts(agent.analyse(game, state), game, state)
    best = int(np.argmax(policy))
    return Decision(best, best, value, analysed=True)


def decide(
    agent: Agent, game: Game, state: np.ndarray, ply: int, rng: np.random.Generator
) -> Decision:
    """The agent's move at ``ply``: in the opening a near-equal one at random, later its own choice.

    After the opening the agent's ``select_action`` decides, not the most visited move of its
    analysis: a UCT-Solver plays a proven win even when another move has more visits, so the
    level plays exactly as it did in the calibration.
    """
    if ply >= OPENING_PLIES:
        action = int(agent.select_action(game, state))
        return Decision(action, action)
    policy, value = analysis_parts(agent.analyse(game, state), game, state)
    best = int(np.argmax(policy))
    action = best
    if policy[best] > 0:
        near = np.flatnonzero(policy >= NEAR_BEST * policy[best])
        action = int(rng.choice(near, p=policy[near] / policy[near].sum()))
    return Decision(action, best, value, analysed=True)


def evaluation_file(game_key: str) -> Path | None:
    """The shipped calibration run of the agent for ``game_key`` (``Game.rating_key``), if any."""
    for folder in SHIPPED_FOLDERS:
        path = folder / f"{game_key}_agent_evaluation" / "evaluation.json"
        if path.is_file():
            return path
    return None


def calibrated_levels(path: Path, seed: int | None = None) -> list[Level]:
    """One level per player of an evaluation run, weakest first, rated as the run measured."""
    report = json.loads(path.read_text())
    ratings = {p["name"]: float(p["elo"]) for p in report["ratings"]["players"]}
    specs: dict[str, dict[str, Any]] = {}
    for match in report["matches"]:
        for side in ("agent_a", "agent_b"):
            spec = dict(match[side])
            specs[spec.pop("label")] = spec
    root = path.parents[2]  # the run recorded agent files relative to the repository root
    levels = []
    for label, spec in specs.items():
        name = spec.pop("name")
        if name == "file" and not Path(spec["path"]).is_absolute():
            spec["path"] = str(root / spec["path"])
        levels.append(Level(label, name, spec, ratings.get(label), seed=seed))
    return sorted(levels, key=lambda level: level.rating if level.rating is not None else 0.0)


def default_levels(game: Game, seed: int | None = None) -> list[Level]:
    """The levels offered for ``game``: random, then the calibrated ladder, or UCT and perfect."""
    levels = [Level("random", "random", seed=seed)]
    path = evaluation_file(game.rating_key)
    if path is not None:
        return levels + calibrated_levels(path, seed)
    levels.append(Level("uct-1000", "uct", {"num_simulations": 1000}, seed=seed))
    if is_solvable(game):
        levels.append(Level("perfect", "perfect", seed=seed))
    return levels
