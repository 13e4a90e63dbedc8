"""The training loop: self-play -> replay -> optimise -> checkpoint -> evaluate (see ``loop``)."""

from ultimate_rl.train.checkpoints import RunFolderError
from ultimate_rl.train.config import ConfigError, RunConfig, check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.loop import train
from ultimate_rl.train.presets import register_train_configs
from ultimate_rl.train.run import prepare_run

register_train_configs()  # Hydra's model=, search=, ... options and the keys' defaults

__all__ = [
    "ConfigError",
    "Learner",
    "RunConfig",
    "RunFolderError",
    "check_config",
    "prepare_run",
    "train",
]
