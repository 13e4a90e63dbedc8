"""Contempt's matches: the shipped agent at one second a move against UCT-100,000 at each
contempt, every game paired with contempt 0's on the same opening and sides, on the same VM
(``run.sh`` plays them), and contempt 0 paired with v3's games of the planes record (another VM).

    python docs/experiments/uttt_agent_contempt/table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent / "uttt_agent_rollouts"), str(HERE.parent / "uttt_agent_v3_planes")]
from onesecond import V3_GAMES, twins  # noqa: E402
from table import paired, row, scores  # noqa: E402

BASE = HERE / "v3c0" / "games" / "v3c0__vs__uct-100000.jsonl"


def main() -> None:
    matches = sorted(HERE.glob("*/games/*__vs__uct-100000.jsonl"))
    matches = [m for m in matches if scores(m)[0]]  # a match just started has no game yet
    print("| contempt | games | W / D / L | score [95% CI] | s / move: mean / slowest |")
    print("| --- | ---: | --- | --- | ---: |")
    for match in matches:
        print(row(match.parent.parent.name, *scores(match)))
    if BASE.exists():
        print(f"\nv3c0 against v3 on the planes record's VM: {paired(*twins(BASE, V3_GAMES))}")
        for match in matches:
            if match != BASE:
                print(f"\n{match.parent.parent.name} against v3c0: {paired(*twins(match, BASE))}")


if __name__ == "__main__":
    main()
