"""Play an agent: `python scripts/play.py [agent=PATH|uct|random] [game=uttt] [ui=terminal|web]`.

`python scripts/play.py --help` lists the settings and the move notation.
"""

from __future__ import annotations

import sys

import hydra
import torch
from omegaconf import DictConfig, OmegaConf

from ultimate_rl.play.opponent import make_opponent
from ultimate_rl.play.terminal import play_terminal
from ultimate_rl.play.web import WebPlay, serve

UIS = ("terminal", "web")


@hydra.main(version_base=None, config_path="../configs", config_name="play")
def main(cfg: DictConfig) -> None:
    if cfg.ui not in UIS:
        sys.exit(f"play: unknown ui {cfg.ui!r}; choose one of {list(UIS)}")
    # The agent's search asks the network about one position at a time: on a CPU a second torch
    # thread costs more than it gives (measured up to 10x slower on a busy 2-core machine).
    torch.set_num_threads(1)
    game_cfg = OmegaConf.to_container(cfg.game, resolve=True) if "game" in cfg else {}
    game_name = game_cfg.pop("name", None) if game_cfg else None
    try:
        game, agent, label = make_opponent(
            cfg.agent,
            game_name,
            game_cfg,
            simulations=cfg.simulations,
            seconds=cfg.seconds,
            seed=cfg.seed,
        )
        if cfg.ui == "terminal":
            play_terminal(
                game,
                agent,
                stdin=sys.stdin,
                stdout=sys.stdout,
                side=cfg.side,
                games=cfg.games,
                agent_name=label,
                color=cfg.color,
            )
        else:
            app = WebPlay(game, agent, agent_name=label, max_games=cfg.max_games)
            serve(app, cfg.host, cfg.port)
    except (ValueError, FileNotFoundError, OSError) as err:
        sys.exit(f"play: {err}")


if __name__ == "__main__":
    main()
