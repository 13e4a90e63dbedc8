"""Which agent a person plays: an exported agent file, or a named agent (uct, random, perfect).

``default`` is the shipped agent ``checkpoints/<game>_agent.urla`` when it exists (looked up in
the working folder, then next to the package's source tree), else UCT. An agent file's modules
(torch among them: seconds to import) load only when a file is asked for, so a play server whose
levels are UCT or random starts without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultimate_rl import agents
from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.play.session import Agent

DEFAULT_GAME = "uttt"
SUFFIX = ".urla"  # ``export.bundle.SUFFIX``, spelled out here: importing ``export`` loads torch
SHIPPED_FOLDERS = (Path("checkpoints"), Path(__file__).resolve().parents[2] / "checkpoints")


def shipped_agent(game_name: str) -> Path | None:
    """The shipped agent file for ``game_name``, if there is one."""
    for folder in SHIPPED_FOLDERS:
        path = folder / f"{game_name}_agent{SUFFIX}"
        if path.is_file():
            return path
    return None


def is_agent_file(spec: str) -> bool:
    """A spec names an agent file (rather than an agent name) if it looks like a path."""
    return spec.endswith(SUFFIX) or "/" in spec or "\\" in spec or Path(spec).is_file()


def thinking_limits(simulations: int | None, seconds: float | None) -> dict[str, Any]:
    """The agent options for a thinking limit: simulations or seconds per move (not both)."""
    if simulations is not None and seconds is not None:
        raise ValueError("give the agent simulations OR seconds per move, not both")
    if simulations is not None:
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 0:
            raise ValueError(f"simulations must be an integer >= 0, got {simulations!r}")
        return {"num_simulations": simulations}
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            raise ValueError(f"seconds per move must be a number > 0, got {seconds!r}")
        return {"time_per_move": float(seconds)}
    return {}


def make_opponent(
    agent: str = "default",
    game: str | None = None,
    game_options: dict[str, Any] | None = None,
    *,
    simulations: int | None = None,
    seconds: float | None = None,
    seed: int | None = None,
) -> tuple[Game, Agent, str]:
    """The game, the agent and a label for it, from the play command's settings.

    An agent file brings its own game; asking for another game with it is an error.
    """
    spec = str(agent)
    limits = thinking_limits(simulations, seconds)
    if spec == "default":
        shipped = shipped_agent(game or DEFAULT_GAME)
        spec = str(shipped) if shipped is not None else "uct"
    if seed is not None:
        limits["seed"] = seed
    if is_agent_file(spec):
        return _from_agent_file(spec, game, limits)
    built = make_game(game or DEFAULT_GAME, **(game_options or {}))
    shown = {k: v for k, v in limits.items() if k != "seed"}
    label = spec + "".join(f" {k}={v}" for k, v in shown.items())
    return built, agents.make(spec, **limits), label


def _from_agent_file(
    spec: str, game: str | None, limits: dict[str, Any]
) -> tuple[Game, Agent, str]:
    """``make_opponent`` for an agent file; imports torch (here, not at start-up)."""
    from ultimate_rl.agents.network import TIME_BUDGET_SIMULATIONS
    from ultimate_rl.export.bundle import read_bundle
    from ultimate_rl.loading import agent_from_bundle

    bundle = read_bundle(spec)
    if game is not None and game != bundle.game_name:
        raise ValueError(
            f"agent file {spec} plays {bundle.game_name!r}, not {game!r}; drop game=... or "
            "pick an agent for that game"
        )
    if "time_per_move" in limits:  # the clock alone bounds its search
        limits["num_simulations"] = TIME_BUDGET_SIMULATIONS
    step = bundle.metadata.get("step")
    label = f"{Path(spec).stem}" + (f" (step {step})" if step is not None else "")
    return bundle.make_game(), agent_from_bundle(bundle, **limits), label
