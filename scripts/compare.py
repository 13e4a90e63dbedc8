"""Compare training recipes at equal wall-clock.

    python scripts/compare.py configs/compare/uttt_recipes.yaml [--recipes A B] [--minutes M]
        [--curve-minutes 10 20 | --curve-minutes]

Trains every (recipe, seed) of the comparison file in turn for the same minutes, rates every
final network in ONE Bradley-Terry pool against the UCT ladder (95% intervals), and writes
docs/experiments/<name>/results.md, results.json and elo.png. With --curve-minutes (or the file's
curve_minutes), each run's snapshot at those minutes joins the pool: a learning curve per recipe
in results.md and curve.png; --curve-minutes alone rates the final networks only. Running it
again resumes: finished runs are skipped, an interrupted one continues. See
ultimate_rl/experiments/compare.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ultimate_rl.evaluate import EvaluationError
from ultimate_rl.experiments.compare import (
    Comparison,
    rate_all,
    summarise,
    train_all,
)
from ultimate_rl.experiments.results import write_results

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("file", type=Path, help="comparison YAML (configs/compare/*.yaml)")
    parser.add_argument(
        "--recipes",
        nargs="+",
        default=[],
        help="only these recipes (the first "
        "one given is the baseline of the verdicts); default: all in the file",
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", help="seeds per recipe (>= 2; default: the file's)"
    )
    parser.add_argument(
        "--minutes", type=float, help="training minutes per run (default: the file's)"
    )
    parser.add_argument(
        "--curve-minutes",
        type=float,
        nargs="*",
        help="also rate each run's snapshot at these training minutes, for a learning curve "
        "per recipe (default: the file's curve_minutes; the flag alone: none, the final "
        "networks only); finished runs are not retrained",
    )
    parser.add_argument("--out", type=Path, help="output folder (default: docs/experiments/NAME)")
    parser.add_argument("--no-plot", action="store_true", help="skip elo.png and curve.png")
    return parser.parse_args(argv)


def comparison_of(args: argparse.Namespace) -> Comparison:
    """The file's comparison with the command line's overrides; ValueError where invalid."""
    comparison = Comparison.load(
        args.file, seeds=args.seeds, minutes=args.minutes, curve_minutes=args.curve_minutes
    )
    return comparison.select(args.recipes)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        comparison = comparison_of(args)
    except (OSError, ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = args.out or ROOT / "docs" / "experiments" / comparison.name
    runs = len(comparison.runs())
    hours = runs * comparison.minutes / 60
    print(
        f"{runs} runs x {comparison.minutes:g} min, one after the other (~{hours:.1f} h of "
        "training). Equal wall-clock is a fair budget only on an otherwise idle machine: "
        "run nothing else meanwhile."
    )
    try:
        status = train_all(comparison, out)
        evaluation = rate_all(comparison, out, status)
    except (EvaluationError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "interrupted: the runs trained so far and the matches played are kept; the same "
            "command resumes",
            file=sys.stderr,
        )
        return 130
    for path in write_results(
        summarise(comparison, evaluation, status, out), out, not args.no_plot
    ):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
