"""Simulations and playouts a second of the shipped agent per sweep setting (issue 43).

The same positions for every setting (plies 6, 16 and 26 of the first games of the sweep's `full`
match), the settings taking turns position by position (the engine benchmark's
`simulation_rates`); each position is a fresh search of the setting's own time budget (positions
ten plies apart are beyond tree reuse's two moves, so no tree is kept). Playouts
a second are the simulations' new leaves times `rollouts` (a leaf that ends the game runs none,
so this is an upper bound by a few percent late in a game).

    python docs/experiments/uttt_agent_rollouts/rates.py [POSITIONS] > rates.md
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ultimate_rl.agents.network import NetworkAgent
from ultimate_rl.benchmarks.selfplay import simulation_rates
from ultimate_rl.games import make
from ultimate_rl.loading import load_agent

HERE = Path(__file__).parent
AGENT = HERE.parents[2] / "checkpoints" / "uttt_agent.urla"
SETTINGS = {
    "defaults (early stop)": {"stop_early": True},  # the agent's default until issue 43
    "full": {"stop_early": False},
    "full, r4 l0.5": {"stop_early": False, "rollouts": 4},
    "full, r16 l0.5": {"stop_early": False, "rollouts": 16},
    "full, g16 l0.5": {"stop_early": False, "rollouts": 16, "rollout_policy": "guided"},
    "full, r64 l0.5": {"stop_early": False, "rollouts": 64},
}


PLIES = (6, 16, 26)
"""The plies taken from each game: opening, middle game, before the endgame (whose small trees
end most simulations on finished games and would flatter the rates)."""


def positions(game, count: int) -> list:
    """Positions at ``PLIES`` of the `full` match's games in order, up to ``count``."""
    found = []
    with open(HERE / "full" / "games" / "full__vs__uct-100000.jsonl") as lines:
        for line in lines:
            record = json.loads(line)
            if record["type"] != "game":
                continue
            moves = record["opening"] + record["moves"]
            for ply in PLIES:
                if ply < len(moves) - 1:
                    found.append(game.apply_sequence(moves[:ply]))
                if len(found) == count:
                    return found
    return found


def measure(agents: dict[str, NetworkAgent], count: int) -> dict[str, float]:
    """Simulations a second of each agent over ``count`` positions, after one untimed move each
    (its kernels compiled or loaded)."""
    game = make("uttt")
    warm_up, *states = positions(game, count + 1)
    for agent in agents.values():
        agent.select_action(game, warm_up)
    return simulation_rates(game, agents, states)


def main(count: int) -> None:
    agents = {name: load_agent(AGENT, seed=0, **options) for name, options in SETTINGS.items()}
    rates = measure(agents, count)
    print(f"{count} positions, {time.strftime('%Y-%m-%d %H:%M')}\n")
    print("| setting | simulations / s | playouts / s (upper bound) |")
    print("| --- | ---: | ---: |")
    for name, agent in agents.items():
        playouts = rates[name] * agent.search_config.rollouts
        print(f"| {name} | {rates[name]:,.0f} | {playouts:,.0f} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
