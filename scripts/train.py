"""Train an AlphaZero agent: `python scripts/train.py experiment=tictactoe_quick`.

Any config value can be overridden (`train.iterations=5 search.num_simulations=32`); sweeps with
`-m`. Continue a run with `resume=runs/...` (or `resume=true hydra.run.dir=runs/...`).
Watch it with `tensorboard --logdir runs`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from ultimate_rl.train import ConfigError, prepare_run, train


@hydra.main(version_base=None, config_path="../configs", config_name="train")
def main(cfg: DictConfig) -> None:
    hydra_cfg = HydraConfig.get()
    try:
        cfg, run_dir = prepare_run(
            cfg, Path(hydra_cfg.runtime.output_dir), list(hydra_cfg.overrides.task)
        )
        summary = train(cfg, run_dir)
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr)
        sys.exit(2)
    print(
        f"run folder: {run_dir}  (iterations {summary['iterations']}, "
        f"{summary['minutes']:.1f} min, perfect={summary['perfect']})"
    )


if __name__ == "__main__":
    main()
