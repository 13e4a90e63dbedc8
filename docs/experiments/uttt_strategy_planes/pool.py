"""One Bradley-Terry fit over the kept games of several comparisons' folders (UCT-1,000 = 1000):
each run's Elo at each rated minute, and each recipe's mean over seeds with the interval that
``scripts/compare.py`` gives (rating errors and the spread between seeds), against the first
recipe named. For a recipe rated in one session against a baseline whose runs trained in an
earlier one (the ladder is the same: UCT at fixed simulation counts, so the games are alike).

    cd docs/experiments
    python uttt_strategy_planes/pool.py baseline=uttt_threat_planes/games \\
        strategy_planes=uttt_strategy_planes/games

Each argument is RECIPE=FOLDER: the games of that folder's players named RECIPE-sN (with
their snapshots RECIPE-sN@Mmin); the ladder's own games come from the first folder.
"""

import json
import math
import re
import sys
from pathlib import Path

from ultimate_rl.evaluate.elo import fit_ratings
from ultimate_rl.evaluate.records import GameRecord

Z95 = 1.959964
RUN = re.compile(r"^(?P<recipe>.+)-s(?P<seed>\d+)(@(?P<minute>[\d.]+)min)?$")


def games_of(recipe: str, folder: Path, ladder: bool) -> list[GameRecord]:
    """The folder's games of ``recipe``'s runs, and with ``ladder`` the ladder's own games
    (taken from one folder only: a second session replays them with the same seeds)."""
    kept = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if '"type": "game"' not in line:
                continue
            record = GameRecord.from_dict(json.loads(line))
            runs = [RUN.match(p) for p in record.players]
            ours = all(m is None or m["recipe"] == recipe for m in runs)
            if ours and (ladder or any(runs)):
                kept.append(record)
    return kept


def main(arguments: list[str]) -> None:
    recipes = dict(argument.split("=", 1) for argument in arguments)
    games = [
        game
        for i, (recipe, folder) in enumerate(recipes.items())
        for game in games_of(recipe, Path(folder), ladder=i == 0)
    ]
    ratings = fit_ratings((g.as_rated() for g in games), anchor="uct-1000")
    by_point: dict[tuple[str, str], list] = {}
    for name in sorted(ratings.names):
        match = RUN.match(name)
        if match is None:
            print(f"{name:28s} {ratings[name].elo:7.0f}")
            continue
        minute = match["minute"] or "final"
        by_point.setdefault((match["recipe"], minute), []).append(ratings[name])
        r = ratings[name]
        print(f"{name:28s} {r.elo:7.0f} [{r.ci_low:.0f}, {r.ci_high:.0f}]")
    means = {}
    for (recipe, minute), rated in sorted(by_point.items()):
        n = len(rated)
        mean = sum(r.elo for r in rated) / n
        spread = sum((r.elo - mean) ** 2 for r in rated) / (n - 1) if n > 1 else 0.0
        stderr = math.sqrt(sum(r.stderr**2 for r in rated) / n**2 + spread / n)
        means[recipe, minute] = (mean, stderr)
    first = next(iter(recipes))
    for (recipe, minute), (mean, stderr) in means.items():
        low, high = mean - Z95 * stderr, mean + Z95 * stderr
        line = f"{recipe:16s} {minute:>5s}  {mean:6.0f} [{low:.0f}, {high:.0f}]"
        if recipe != first and (first, minute) in means:
            base, base_err = means[first, minute]
            margin = Z95 * math.hypot(stderr, base_err)
            diff = mean - base
            line += f"  vs {first}: {diff:+.0f} [{diff - margin:+.0f}, {diff + margin:+.0f}]"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
