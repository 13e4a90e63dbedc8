"""Train an AlphaZero agent: `python scripts/train.py experiment=tictactoe_quick`.

Any config value can be overridden (`train.iterations=5 search.num_simulations=32`); sweeps with
`-m`. Continue a run with `resume=runs/...` (or `resume=true hydra.run.dir=runs/...`).
Watch it with `tensorboard --logdir runs`.

Elo during training: `eval.elo_every=N` rates the network against the `eval.elo_opponents` ladder
every N iterations (`ultimate_rl.evaluate`, injected here because the training code must not
import the evaluator); the games go to RUN_DIR/evaluations/games. Gating (off by default):
`eval.gating.enabled=true eval.gating.threshold=0.55`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from ultimate_rl.evaluate import EvaluationError
from ultimate_rl.evaluate.training import rating_hook
from ultimate_rl.nn import CheckpointError
from ultimate_rl.train import ConfigError, RunFolderError, check_config, prepare_run, train
from ultimate_rl.train.run import RUN_DIR_RESOLVER, resumed_run_dir

OmegaConf.register_new_resolver(RUN_DIR_RESOLVER, resumed_run_dir)  # used by hydra.run.dir


@hydra.main(version_base=None, config_path="../configs", config_name="train")
def main(cfg: DictConfig) -> None:
    hydra_cfg = HydraConfig.get()
    try:
        cfg, run_dir = prepare_run(
            cfg, Path(hydra_cfg.runtime.output_dir), list(hydra_cfg.overrides.task)
        )
        game = check_config(cfg).game  # fills keys an older run's config lacks
        hook = None
        if cfg.eval.elo_every > 0:
            hook = rating_hook(
                game,
                cfg.eval,
                run_dir / "evaluations" / "games",
                algorithm=str(cfg.search.algorithm),
                seed=int(cfg.seed),
            )
        summary = train(cfg, run_dir, rating_hook=hook)
    except (ConfigError, EvaluationError) as err:
        print(f"config error: {err}", file=sys.stderr)
        sys.exit(2)
    except (RunFolderError, CheckpointError) as err:  # a damaged, held or unwritable run folder
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
    # perfect play is measured only against an exact solver: say it only where one is asked for
    solved = cfg.train.stop_when_perfect or "perfect" in cfg.eval.opponents
    perfect = f", perfect={summary['perfect']}" if solved else ""
    print(
        f"run folder: {run_dir}  (iterations {summary['iterations']}, "
        f"{summary['minutes']:.1f} min{perfect})"
    )


if __name__ == "__main__":
    main()
