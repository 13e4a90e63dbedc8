"""Play an agent: `python scripts/play.py [level=NAME|agent=PATH|uct|random] [ui=terminal|web]`.

`python scripts/play.py --help` lists the settings and the move notation.
"""

from __future__ import annotations

import os
import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.play.api import WebPlay
from ultimate_rl.play.levels import Level, default_levels
from ultimate_rl.play.opponent import DEFAULT_GAME, make_opponent
from ultimate_rl.play.service import PlayError, PlayService, load_service_game
from ultimate_rl.play.session import parse_turn_seconds
from ultimate_rl.play.store import Database, default_db_path
from ultimate_rl.play.terminal import TerminalPlay
from ultimate_rl.play.web import serve
from ultimate_rl.runtime.workers import ACTOR_ENV

UIS = ("terminal", "web")


def levels_for(cfg: DictConfig, db: Database) -> tuple[Game, list[Level], str | None]:
    """The game, the levels on offer and the default one, from the command line (or the game
    being resumed). ``agent=``/``simulations=``/``seconds=`` add that agent as an unrated level."""
    if cfg.resume is not None:
        game = load_service_game(db, str(cfg.resume))
        return game, default_levels(game, cfg.seed), None
    game_cfg = OmegaConf.to_container(cfg.game, resolve=True) if "game" in cfg else {}
    game_name = game_cfg.pop("name", None) if game_cfg else None
    if cfg.agent == "default" and cfg.simulations is None and cfg.seconds is None:
        game = make_game(game_name or DEFAULT_GAME, **(game_cfg or {}))
        return game, default_levels(game, cfg.seed), cfg.level
    game, agent, label = make_opponent(
        cfg.agent,
        game_name,
        game_cfg,
        simulations=cfg.simulations,
        seconds=cfg.seconds,
        seed=cfg.seed,
    )
    others = [level for level in default_levels(game, cfg.seed) if level.name != label]
    return game, [Level(label, str(cfg.agent), built=agent), *others], cfg.level or label


def run(cfg: DictConfig) -> None:
    # the web server keeps the file to itself: a second one would serve stale copies of its games
    db = Database(cfg.db or default_db_path(), exclusive=cfg.ui == "web")
    game, levels, default = levels_for(cfg, db)
    service = PlayService(
        game,
        levels,
        db,
        default_level=default,
        takeover_level=cfg.takeover_level,
        cache_size=cfg.max_games,
        ponder_seconds=cfg.ponder_seconds,
    )
    if cfg.ui == "web":
        serve(WebPlay(service), cfg.host, cfg.port)
        return
    session = TerminalPlay(
        service,
        stdin=sys.stdin,
        stdout=sys.stdout,
        level=default,
        turn_seconds=parse_turn_seconds(cfg.turn_seconds),
        rated=bool(cfg.rated),
        player=cfg.player,
        color=sys.stdout.isatty() if cfg.color is None else bool(cfg.color),
    )
    session.run(cfg.side, cfg.games, resume=None if cfg.resume is None else str(cfg.resume))


@hydra.main(version_base=None, config_path="../configs", config_name="play")
def main(cfg: DictConfig) -> None:
    if cfg.ui not in UIS:
        sys.exit(f"play: unknown ui {cfg.ui!r}; choose one of {list(UIS)}")
    # The agent's search asks the network about one position at a time: on a CPU a second torch
    # thread costs more than it gives (measured up to 10x slower on a busy 2-core machine). Set
    # for torch to read when a network level first imports it: importing it here cost every
    # start ~3 s, also with levels that never use it.
    os.environ.update(ACTOR_ENV)
    try:
        run(cfg)
    except (ValueError, PlayError, OSError, OverflowError) as err:
        sys.exit(f"play: {err}")
    except KeyboardInterrupt:
        sys.exit("play: interrupted")


if __name__ == "__main__":
    main()
