"""The sweep's table: every setting's match against UCT-100,000 from its games, with the
shipped defaults' games on the same openings (the v3 record's first N games) as the first row.

    python docs/experiments/uttt_agent_rollouts/table.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

HERE = Path(__file__).parent
DEFAULTS = HERE.parent / "uttt_agent_v3" / "vs_uct100k" / "games" / "v3__vs__uct-100000.jsonl"


def scores(path: Path, limit: int | None = None) -> tuple[list[float], list[float]]:
    """The subject's score in each game (by index) and its seconds per move."""
    records = [json.loads(line) for line in path.open()]
    label = records[0]["agents"][0]["label"]
    games = sorted((r for r in records if r["type"] == "game"), key=lambda r: r["index"])
    games = games[:limit]
    result, seconds = [], []
    for game in games:
        side = game["players"].index(label)
        result.append(0.5 + (game["result"] if side == 0 else -game["result"]) / 2)
        mover = len(game["opening"]) % 2  # who moves first after the opening
        seconds += [t for k, t in enumerate(game["times"]) if (mover + k) % 2 == side]
    return result, seconds


def row(name: str, result: list[float], seconds: list[float]) -> str:
    n = len(result)
    mean = sum(result) / n
    half = 1.96 * math.sqrt(sum((s - mean) ** 2 for s in result) / n / n)
    wdl = f"{result.count(1.0)} / {result.count(0.5)} / {result.count(0.0)}"
    spent = f"{sum(seconds) / len(seconds):.3f} / {max(seconds):.3f}"
    return f"| {name} | {n} | {wdl} | {mean:.3f} [{mean - half:.3f}, {mean + half:.3f}] | {spent} |"


def paired(result: list[float], twin: list[float]) -> str:
    """The mean difference of each game against its twin (the same opening and sides) with its
    95% interval, over the games both have."""
    diffs = [a - b for a, b in zip(result, twin, strict=False)]
    n = len(diffs)
    mean = sum(diffs) / n
    half = 1.96 * math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
    return f"{mean:+.3f} ± {half:.3f} over {n}"


def main() -> None:
    matches = sorted(HERE.glob("*/games/*__vs__uct-100000.jsonl"))
    print("| setting | games | W / D / L | score [95% CI] | s / move: mean / slowest |")
    print("| --- | ---: | --- | --- | ---: |")
    matches = [m for m in matches if scores(m)[0]]  # a match just started has no game yet
    for limit in sorted({len(scores(m)[0]) for m in matches}):
        print(row(f"defaults (early stop), first {limit}", *scores(DEFAULTS, limit)))
    for match in matches:
        print(row(match.parent.parent.name, *scores(match)))
    full = scores(HERE / "full" / "games" / "full__vs__uct-100000.jsonl")[0]
    print(f"\nfull against the defaults: {paired(full, scores(DEFAULTS)[0])}")
    for match in matches:
        if match.parent.parent.name != "full":
            print(f"{match.parent.parent.name} against full: {paired(scores(match)[0], full)}")


if __name__ == "__main__":
    main()
