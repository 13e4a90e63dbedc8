"""Warm start from rollout-MCTS labels, as a file: UCT labels positions, a network learns them.

    python scripts/pretrain_uct.py --out checkpoints/uttt_uct_warm.pt experiment=uttt_cpu
    python scripts/train.py experiment=uttt_cpu train.init_from=checkpoints/uttt_uct_warm.pt

The same warm start runs inside a training run with train.warm_start.positions=N (then its
minutes count against train.max_minutes); this script keeps it for reuse across many runs.

Positions come from 0..--max-plies random moves; each is searched by UCT with --simulations
random-rollout simulations (visit distribution: policy target; root value: value target). The
trailing key=value arguments are training overrides: they pick the game, the model (it must be
the model of the run that starts from it), the optimiser and the batch size.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch

from ultimate_rl.nn import resolve_device
from ultimate_rl.train import ConfigError, check_config
from ultimate_rl.train.config import WarmStartSection
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.warm_start import learn_labels, parallel_uct_labels, save_warm_start


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="checkpoint to write (.pt)")
    parser.add_argument("--positions", type=int, default=20000, help="positions to label")
    parser.add_argument("--simulations", type=int, default=1000, help="UCT simulations each")
    parser.add_argument("--max-plies", type=int, default=40, help="random opening length bound")
    parser.add_argument("--steps", type=int, default=5000, help="optimiser steps")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="labelling processes"
    )
    parser.add_argument("overrides", nargs="*", help="training config overrides (key=value)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    window = f"train.replay_window={max(args.positions, 1)}"
    try:
        run = check_config(compose_train_config([*args.overrides, window, "train.min_replay=1"]))
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr)
        return 2
    if run.train.threads:
        torch.set_num_threads(run.train.threads)
    warm = WarmStartSection(args.positions, args.simulations, args.max_plies, args.steps)
    game = {"name": run.game.name, "options": run.game_options}
    labels = parallel_uct_labels(game, warm, args.workers, run.seed)
    learner = Learner(run, resolve_device(run.device))
    losses = learn_labels(learner, labels, args.steps)
    print(f"{args.steps} steps: loss {losses.get('loss/total', float('nan')):.3f}")
    print(f"wrote {save_warm_start(learner, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
