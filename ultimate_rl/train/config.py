"""Strict checks of a training config, done before anything trains.

Hydra already rejects unknown group options and unknown keys on the command line; this module
also catches keys misspelled inside config files (presets), values of the wrong type, and
combinations that cannot work (a 9x9 network on a 3x3 game, the exact solver on uttt), each
with a message naming the key and the valid choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ultimate_rl.games import GAMES, Game, is_solvable
from ultimate_rl.games import make as make_game
from ultimate_rl.nn.config import ModelConfig, ModelConfigError
from ultimate_rl.search import SearchConfig, SearchError
from ultimate_rl.selfplay.worker import SelfPlaySettings

EVAL_OPPONENTS = ("random", "uct", "perfect")
OPTIMIZERS = ("adamw", "sgd")
LR_SCHEDULES = ("constant", "cosine", "step")


class ConfigError(ValueError):
    """A training config that cannot run; the message names the key and how to fix it."""


@dataclass
class TrainSection:
    iterations: int = 100
    max_minutes: float | None = None
    batch_size: int = 256
    steps_per_iteration: int = 100
    min_replay: int = 512
    replay_window: int = 50000
    augment: bool = True
    checkpoint_every: int = 1
    keep_checkpoints: int = 3
    keep_every: int = 0
    stop_when_perfect: bool = False
    probe_image_every: int = 5
    progress_bar: bool = True
    threads: int | None = None


@dataclass
class OptimSection:
    name: str = "adamw"
    lr: float = 0.002
    weight_decay: float = 0.0001
    momentum: float = 0.9
    schedule: str = "cosine"
    warmup_steps: int = 100
    min_lr_fraction: float = 0.1
    step_every: int = 10000
    step_gamma: float = 0.1
    value_loss_weight: float = 1.0
    grad_clip: float | None = 5.0


@dataclass
class GatingSection:
    enabled: bool = False
    num_games: int = 40
    threshold: float = 0.55
    opening_plies: int = 2


@dataclass
class EvalSection:
    every: int = 5
    games: int = 20
    num_simulations: int = 0
    opponents: list[str] = field(default_factory=lambda: ["random", "uct"])
    uct_simulations: int = 200
    optimal_positions: int = 200
    positions_seed: int = 1234
    perfect_optimal_rate: float = 0.98
    elo_every: int = 0
    elo_opponents: list[str] = field(
        default_factory=lambda: ["random", "uct:num_simulations=100", "uct:num_simulations=1000"]
    )
    elo_games: int = 10
    gating: GatingSection = field(default_factory=GatingSection)


# Sections checked against a dataclass; `selfplay`'s is the settings the self-play worker takes.
# `game`, `model` and `search` are checked by the game factory, ModelConfig and SearchConfig,
# which own their keys.
SECTIONS: dict[str, type] = {
    "train": TrainSection,
    "selfplay": SelfPlaySettings,
    "optim": OptimSection,
    "eval": EvalSection,
}
TOP_LEVEL = (*SECTIONS, "game", "model", "search", "seed", "device", "resume", "run_name")


@dataclass(frozen=True)
class Checked:
    """The pieces a run needs, built and validated from the config."""

    game: Game
    model: ModelConfig
    search: SearchConfig
    selfplay: SelfPlaySettings


def check_config(cfg: DictConfig) -> Checked:
    """Validates the whole config; raises ``ConfigError`` on the first problem found.

    Keys a section lacks get their defaults, in place: a run saved before a key existed
    (e.g. ``eval.gating``) resumes with it.
    """
    unknown = sorted(set(cfg.keys()) - set(TOP_LEVEL))
    if unknown:
        raise ConfigError(f"unknown config key(s) {unknown}; valid top-level keys: {TOP_LEVEL}")
    for name, schema in SECTIONS.items():
        _check_section(name, cfg[name], schema)
        defaults = OmegaConf.create(OmegaConf.to_container(OmegaConf.structured(schema)))
        cfg[name] = OmegaConf.merge(defaults, cfg[name])
    game = _make_game(cfg.game)
    model = _build(ModelConfig.from_dict, "model", cfg.model, (ModelConfigError,))
    search = _build(SearchConfig.from_dict, "search", cfg.search, (SearchError,))
    try:  # the typed node, as the dataclass (its own checks run here)
        selfplay = OmegaConf.to_object(
            OmegaConf.merge(OmegaConf.structured(SelfPlaySettings), cfg.selfplay)
        )
    except ValueError as err:
        raise ConfigError(str(err)) from None
    assert isinstance(selfplay, SelfPlaySettings)
    _check_choices(cfg)
    _check_combinations(cfg, game, model)
    return Checked(game=game, model=model, search=search, selfplay=selfplay)


def _check_section(name: str, node: Any, schema: type) -> None:
    """Unknown keys (recursively) and values that do not fit the schema's types."""
    if not isinstance(node, DictConfig):
        raise ConfigError(f"config section {name!r} must be a mapping, got {node!r}")
    valid = {f.name: f for f in fields(schema)}
    unknown = sorted(set(node.keys()) - set(valid))
    if unknown:
        raise ConfigError(
            f"unknown config key(s) {[f'{name}.{k}' for k in unknown]}; "
            f"valid keys in {name}: {sorted(valid)}"
        )
    for key, f in valid.items():
        default = f.default_factory() if callable(f.default_factory) else f.default  # type: ignore[misc]
        if is_dataclass(default) and key in node:
            _check_section(f"{name}.{key}", node[key], type(default))
    try:
        OmegaConf.merge(OmegaConf.structured(schema), node)
    except Exception as err:  # omegaconf raises several types for a value of the wrong type
        key = f"{name}.{err.full_key}" if getattr(err, "full_key", None) else name
        raise ConfigError(f"bad value for {key}: {_first_line(err)}") from None


def _make_game(node: DictConfig) -> Game:
    options = OmegaConf.to_container(node, resolve=True)
    assert isinstance(options, dict)
    name = options.pop("name", None)
    if name not in GAMES:
        raise ConfigError(f"unknown game.name {name!r}; choose one of {sorted(GAMES)}")
    try:
        return make_game(name, **options)
    except ValueError as err:
        raise ConfigError(f"bad game options {options} for {name!r}: {err}") from None


def _build(factory: Any, name: str, node: DictConfig, errors: tuple[type, ...]) -> Any:
    try:
        return factory(OmegaConf.to_container(node, resolve=True))
    except (*errors, TypeError) as err:
        raise ConfigError(f"bad {name} config: {err}") from None


def _check_choices(cfg: DictConfig) -> None:
    choices = {
        "optim.name": (cfg.optim.name, OPTIMIZERS),
        "optim.schedule": (cfg.optim.schedule, LR_SCHEDULES),
    }
    for key, (value, valid) in choices.items():
        if value not in valid:
            raise ConfigError(f"unknown {key} {value!r}; choose one of {list(valid)}")
    for opponent in cfg.eval.opponents:
        if opponent not in EVAL_OPPONENTS:
            raise ConfigError(
                f"unknown eval opponent {opponent!r}; choose from {list(EVAL_OPPONENTS)}"
            )
    positive = {
        "train.iterations": cfg.train.iterations,
        "train.batch_size": cfg.train.batch_size,
        "train.replay_window": cfg.train.replay_window,
        "train.checkpoint_every": cfg.train.checkpoint_every,
        "optim.lr": cfg.optim.lr,
    }
    for key, value in positive.items():
        if value <= 0:
            raise ConfigError(f"{key} must be > 0, got {value}")
    if cfg.train.max_minutes is not None and cfg.train.max_minutes <= 0:
        raise ConfigError(f"train.max_minutes must be > 0 or null, got {cfg.train.max_minutes}")
    at_least = {
        "eval.elo_every": (cfg.eval.elo_every, 0),
        "eval.elo_games": (cfg.eval.elo_games, 2),
        "eval.gating.num_games": (cfg.eval.gating.num_games, 2),
        "eval.gating.threshold": (cfg.eval.gating.threshold, 0),
        "eval.gating.opening_plies": (cfg.eval.gating.opening_plies, 0),
    }
    for key, (value, least) in at_least.items():
        if value < least:
            raise ConfigError(f"{key} must be >= {least}, got {value}")


def _check_combinations(cfg: DictConfig, game: Game, model: ModelConfig) -> None:
    """Combinations that would fail (or waste a run) later, caught before training starts."""
    height, width = game.observation_shape[1:]
    if model.board_size is not None and (height, width) != (model.board_size, model.board_size):
        raise ConfigError(
            f"model preset is for {model.board_size}x{model.board_size} boards, but game "
            f"{game.name!r} encodes {height}x{width} planes; pick a model preset for this game "
            f"(e.g. model=mlp for 3x3 games, model=resnet_small for uttt) or model.board_size=null"
        )
    if not is_solvable(game) and ("perfect" in cfg.eval.opponents or cfg.train.stop_when_perfect):
        raise ConfigError(
            f"eval opponent 'perfect' and train.stop_when_perfect need an exactly solved game "
            f"(numerical_ttt, tictactoe up to 4x4), not {game.name!r}; drop them for this game"
        )
    if cfg.train.stop_when_perfect and cfg.eval.every <= 0:
        raise ConfigError("train.stop_when_perfect needs evaluations: set eval.every > 0")
    if cfg.train.min_replay > cfg.train.replay_window:
        raise ConfigError(
            f"train.min_replay ({cfg.train.min_replay}) exceeds train.replay_window "
            f"({cfg.train.replay_window}): training would never start"
        )


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
