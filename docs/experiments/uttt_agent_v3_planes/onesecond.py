"""Issue 41's measure: the planes networks at the agent's one second a move against UCT-100,000,
each game against v3's twin on the same VM (the same opening and sides, `onesecond_v3/`, the
shipped file at the same search), and the simulations a second of each network. v3's 200 games
of `../uttt_agent_rollouts/full/` were played on a VM with ~1.8x the simulations a second, so they
are paired only with v3's here: at a time budget the machine is part of the agent.

    python docs/experiments/uttt_agent_v3_planes/onesecond.py            # the matches' table
    python docs/experiments/uttt_agent_v3_planes/onesecond.py --rates 30 # simulations a second
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
ROLLOUTS = HERE.parent / "uttt_agent_rollouts"
sys.path.insert(0, str(ROLLOUTS))
from rates import measure  # noqa: E402
from table import paired, row, scores  # noqa: E402

from ultimate_rl.loading import load_agent  # noqa: E402

V3_OTHER_VM = ROLLOUTS / "full" / "games" / "full__vs__uct-100000.jsonl"
V3_GAMES = HERE / "onesecond_v3" / "games" / "v3__vs__uct-100000.jsonl"
AGENTS = {"v3": HERE.parents[2] / "checkpoints" / "uttt_agent.urla"} | {
    path.stem.removeprefix("uttt_agent_"): path for path in sorted(HERE.glob("*.urla"))
}


def twins(path: Path, other: Path) -> tuple[list[float], list[float]]:
    """Both matches' scores on the game indices (openings and sides) they share, in order: a
    match stopped early has games up to about its last index, not exactly a prefix."""

    def by_index(match: Path) -> dict[int, float]:
        games = [json.loads(line) for line in match.open()]
        games = sorted((g for g in games if g["type"] == "game"), key=lambda g: g["index"])
        return {g["index"]: s for g, s in zip(games, scores(match)[0], strict=True)}

    mine, theirs = by_index(path), by_index(other)
    shared = sorted(mine.keys() & theirs.keys())
    return [mine[i] for i in shared], [theirs[i] for i in shared]


def table() -> None:
    print("| match | games | W / D / L | score [95% CI] | s / move: mean / slowest |")
    print("| --- | ---: | --- | --- | ---: |")
    print(row("v3, the 2026-12-04 VM", *scores(V3_OTHER_VM)))
    matches = sorted(HERE.glob("onesecond_*/games/*__vs__uct-100000.jsonl"))
    matches = [m for m in matches if scores(m)[0]]  # a match just started has no game yet
    for match in matches:
        print(row(match.parent.parent.name, *scores(match)))
    print(f"\nv3 here against v3 on the 2026-12-04 VM: {paired(*twins(V3_GAMES, V3_OTHER_VM))}")
    for match in matches:
        if match != V3_GAMES:
            print(f"\n{match.parent.parent.name} against v3: {paired(*twins(match, V3_GAMES))}")


def rates(count: int) -> None:
    agents = {name: load_agent(path, seed=0, stop_early=False) for name, path in AGENTS.items()}
    found = measure(agents, count)
    print(f"{count} positions, {time.strftime('%Y-%m-%d %H:%M')}\n")
    print("| network | simulations / s |\n| --- | ---: |")
    for name, rate in found.items():
        print(f"| {name} | {rate:,.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=int, metavar="POSITIONS", help="time the networks")
    args = parser.parse_args()
    if args.rates:
        rates(args.rates)
    else:
        table()
