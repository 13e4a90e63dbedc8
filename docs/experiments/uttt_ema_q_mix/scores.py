"""W / D / L and score of the first-named agent of each match file in a games folder."""

import json
import sys
from pathlib import Path

for path in sorted(Path(sys.argv[1]).glob("*.jsonl")):
    with path.open() as lines:
        records = [json.loads(line) for line in lines]
    first = records[0]["agents"][0]["label"]
    wins = draws = losses = 0
    for game in (r for r in records[1:] if r.get("type") == "game"):
        # ``result``: the first player's (``players[0]``'s) result
        mine = game["result"] * (1 if game["players"][0] == first else -1)
        wins, draws, losses = wins + (mine > 0), draws + (mine == 0), losses + (mine < 0)
    played = max(wins + draws + losses, 1)
    score = (wins + draws / 2) / played
    print(f"{path.name:45s} {wins:3d} / {draws:3d} / {losses:3d}  {score:.3f}")
