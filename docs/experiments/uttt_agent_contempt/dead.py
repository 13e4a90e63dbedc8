"""When a match's games became dead draws: per result (of the subject), the games' mean length
and the ply at which neither player had a big-board line left (uttt's ``dead_draw`` kernel;
``-`` for a game never dead).

    python docs/experiments/uttt_agent_contempt/dead.py \
        docs/experiments/uttt_agent_v3_planes/onesecond_v3/games/v3__vs__uct-100000.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import mean

from ultimate_rl.games import kernels, make


def main(path: str) -> None:
    records = [json.loads(line) for line in Path(path).read_text().splitlines()]
    label = records[0]["agents"][0]["label"]
    game = make("uttt")
    found: dict[str, list[tuple[int, int | None]]] = {}
    for record in records[1:]:
        moves = record["opening"] + record["moves"]
        state, dead_at = game.initial_state(), None
        for ply, move in enumerate(moves, 1):
            state = game.apply(state, move)
            if dead_at is None and not game.is_terminal(state) and kernels.dead_draw(state):
                dead_at = ply
        winner, side = game.winner(state), record["players"].index(label)
        result = "D" if winner is None else "W" if winner == side else "L"
        found.setdefault(result, []).append((len(moves), dead_at))
    for result, games in sorted(found.items()):
        dead = [d for _, d in games if d is not None]
        when = f"dead in {len(dead)}, at ply {mean(dead):.1f} on average" if dead else "never dead"
        print(f"{result}: {len(games)} games, {mean(n for n, _ in games):.1f} plies; {when}")


if __name__ == "__main__":
    main(sys.argv[1])
