"""W / D / L and score of the first-named agent of each match file in a games folder."""

import json
import sys
from pathlib import Path

from ultimate_rl.evaluate.records import GameRecord

for path in sorted(Path(sys.argv[1]).glob("*.jsonl")):
    with path.open() as lines:
        records = [json.loads(line) for line in lines]
    first = records[0]["agents"][0]["label"]
    games = [GameRecord.from_dict(r) for r in records[1:] if r.get("type") == "game"]
    mine = [game.score_of(first) for game in games]
    wins, draws, losses = mine.count(1.0), mine.count(0.5), mine.count(0.0)
    score = sum(mine) / max(len(mine), 1)
    print(f"{path.name:45s} {wins:3d} / {draws:3d} / {losses:3d}  {score:.3f}")
