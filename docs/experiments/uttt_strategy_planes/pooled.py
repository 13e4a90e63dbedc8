"""One Bradley-Terry fit over several record folders of one comparison's ladder games.

The strategy-planes A/B trained seeds 0 and 1 of both recipes, then seeds 2 and 3 of the strategy
planes on the same VM in the next session (``seeds23/``). This fits every final network's games
against the ladder together (each ladder pair counted once), then the per-recipe mean over seeds
and the verdict as ``scripts/compare.py`` writes them.

    D=docs/experiments/uttt_strategy_planes
    python $D/pooled.py $D/games $D/seeds23/games
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from ultimate_rl.evaluate.elo import fit_ratings
from ultimate_rl.evaluate.ladder import EvaluationSettings
from ultimate_rl.evaluate.records import GameRecord
from ultimate_rl.experiments.compare import _mean_elo, _verdict

LADDER = ("uct-1000", "uct-10000")


def load(folders: list[Path]) -> dict[str, list[GameRecord]]:
    """The games of every ``A__vs__B.jsonl``, by file name; a name met twice (the ladder's own
    pair, played again in each folder) keeps its first folder's games."""
    matches: dict[str, list[GameRecord]] = {}
    for folder in folders:
        for path in sorted(folder.glob("*__vs__*.jsonl")):
            if path.name in matches:
                continue
            lines = [json.loads(line) for line in path.read_text().splitlines() if line]
            matches[path.name] = [GameRecord.from_dict(e) for e in lines if e["type"] == "game"]
    return matches


def main(folders: list[Path]) -> None:
    matches = load(folders)
    settings = EvaluationSettings()
    ratings = fit_ratings(
        (g.as_rated() for games in matches.values() for g in games),
        anchor=settings.anchor,
        anchor_elo=settings.anchor_elo,
        prior_draws=settings.prior_draws,
        players=LADDER,
    )
    runs = defaultdict(list)
    for name in ratings.names:
        if name in LADDER:
            continue
        rating = ratings[name]
        recipe = name.rsplit("-s", 1)[0]
        score = {
            rung: sum(g.score_of(name) for g in games) / len(games)
            for file, games in matches.items()
            for rung in LADDER
            if file == f"{name}__vs__{rung}.jsonl"
        }
        runs[recipe].append({"elo": rating.elo, "stderr": rating.stderr})
        print(
            f"{name:22s} {rating.elo:6.0f} [{rating.ci_low:.0f}, {rating.ci_high:.0f}]  "
            + "  ".join(f"vs {rung} {s:.3f}" for rung, s in score.items())
        )
    recipes = {recipe: _mean_elo(rated) for recipe, rated in runs.items()}
    baseline = recipes.get("baseline")
    for recipe, stats in recipes.items():
        verdict = _verdict(stats, baseline)
        diff = stats.get("vs_baseline")
        against = f"  vs baseline {diff[0]:+.0f} [{diff[1]:+.0f}, {diff[2]:+.0f}]" if diff else ""
        print(
            f"{recipe:16s} {len(runs[recipe])} seeds  mean {stats['elo']:.0f} "
            f"[{stats['ci'][0]:.0f}, {stats['ci'][1]:.0f}]{against}  {verdict}"
        )


if __name__ == "__main__":
    main([Path(a) for a in sys.argv[1:]])
