"""The training config, checked and typed before anything trains.

Hydra already rejects unknown group options and unknown keys on the command line; this module
also catches keys misspelled inside config files (presets), values of the wrong type, and
combinations that cannot work (a 9x9 network on a 3x3 game, the exact solver on uttt), each
with a message naming the key and the valid choices. ``check_config`` returns every section as
its dataclass (``RunConfig``), so the loop reads typed values.

The keys, their defaults and their documentation are the dataclasses of ``train/schema.py``
(``TrainConfig``); ``train/presets.py`` stores them in Hydra's ConfigStore for the command
line, so no YAML file repeats them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from ultimate_rl.games import Game, UnknownGameError, is_solvable, make_from_config
from ultimate_rl.nn.config import ModelConfig, ModelConfigError
from ultimate_rl.nn.device import PRECISIONS, resolve_device, training_precision
from ultimate_rl.nn.losses import AUX_LOSSES, LOSSES, losses_for
from ultimate_rl.search import SearchConfig, SearchError
from ultimate_rl.selfplay.book import BookError, load_book
from ultimate_rl.selfplay.schema import RaySettings, SelfPlaySettings
from ultimate_rl.train.schema import (
    SECTIONS,
    TOP_LEVEL,
    EvalSection,
    OptimSection,
    TrainSection,
    field_default,
)
from ultimate_rl.train.schema import GatingSection as GatingSection
from ultimate_rl.train.schema import WarmStartSection as WarmStartSection

EVAL_OPPONENTS = ("random", "uct", "perfect")
OPTIMIZERS = ("adamw", "sgd")
LR_SCHEDULES = ("constant", "cosine", "step")


class ConfigError(ValueError):
    """A training config that cannot run; the message names the key and how to fix it."""


TRAIN_MODES = ("sync", "async")


@dataclass(frozen=True)
class RunConfig:
    """A checked training config: the game built, every section as its dataclass."""

    game: Game
    game_options: dict[str, Any]  # the game node without its name: ``games.make``'s options
    model: ModelConfig
    search: SearchConfig
    selfplay: SelfPlaySettings
    train: TrainSection
    optim: OptimSection
    eval: EvalSection
    ray: RaySettings
    seed: int
    device: str


def check_config(cfg: DictConfig) -> RunConfig:
    """Validates the whole config and returns it typed; raises ``ConfigError`` on the first
    problem found.

    Keys a section lacks get their defaults, in place: a run saved before a key existed
    (e.g. ``eval.gating``) resumes with it.
    """
    unknown = sorted(set(cfg.keys()) - set(TOP_LEVEL))
    if unknown:
        raise ConfigError(f"unknown config key(s) {unknown}; valid top-level keys: {TOP_LEVEL}")
    _upgrade_value_loss_weight(cfg)
    sections = {}
    for name, schema in SECTIONS.items():
        if name not in cfg:  # a section newer than the saved run (e.g. ``ray``)
            cfg[name] = {}
        _check_section(name, cfg[name], schema)
        defaults = OmegaConf.create(OmegaConf.to_container(OmegaConf.structured(schema)))
        cfg[name] = OmegaConf.merge(defaults, cfg[name])
        try:  # the typed node, as the dataclass (its own checks run here)
            sections[name] = OmegaConf.to_object(
                OmegaConf.merge(OmegaConf.structured(schema), cfg[name])
            )
        except ValueError as err:
            raise ConfigError(str(err)) from None
    game = _make_game(cfg.game)
    if not isinstance(cfg.seed, int) or isinstance(cfg.seed, bool):
        raise ConfigError(f"seed must be an integer, got {cfg.seed!r}")
    run = RunConfig(
        game=game,
        game_options=_game_options(cfg.game),
        model=_build(ModelConfig.from_dict, "model", cfg.model, (ModelConfigError,)),
        search=_build(SearchConfig.from_dict, "search", cfg.search, (SearchError,)),
        seed=cfg.seed,
        device=str(cfg.device),
        **sections,
    )
    _check_choices(run)
    _check_combinations(run)
    return run


def _upgrade_value_loss_weight(cfg: DictConfig) -> None:
    """A run saved when the value loss had its own key (``optim.value_loss_weight``) resumes
    with that weight as ``optim.loss_weights.value``."""
    if "value_loss_weight" in cfg.optim:
        with open_dict(cfg.optim):
            weight = cfg.optim.pop("value_loss_weight")
            cfg.optim.loss_weights = {**cfg.optim.get("loss_weights", {}), "value": weight}


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
        default = field_default(f)
        if is_dataclass(default) and key in node:
            _check_section(f"{name}.{key}", node[key], type(default))
    try:
        OmegaConf.merge(OmegaConf.structured(schema), node)
    except Exception as err:  # omegaconf raises several types for a value of the wrong type
        key = f"{name}.{err.full_key}" if getattr(err, "full_key", None) else name
        raise ConfigError(f"bad value for {key}: {_first_line(err)}") from None


def _make_game(node: DictConfig) -> Game:
    """The ``game`` node's game; a bad name or option is a ``ConfigError`` naming the choices."""
    spec = {"name": node.get("name"), **_game_options(node)}
    try:
        return make_from_config(spec)
    except (UnknownGameError, ValueError) as err:
        raise ConfigError(f"bad game config {spec}: {err}") from None


def _game_options(node: DictConfig) -> dict[str, Any]:
    options = OmegaConf.to_container(node, resolve=True)
    assert isinstance(options, dict)
    return {str(k): v for k, v in options.items() if k != "name"}


def _build(factory: Any, name: str, node: DictConfig, errors: tuple[type, ...]) -> Any:
    try:
        return factory(OmegaConf.to_container(node, resolve=True))
    except (*errors, TypeError) as err:
        raise ConfigError(f"bad {name} config: {err}") from None


def _check_choices(run: RunConfig) -> None:
    train, optim, evaluation = run.train, run.optim, run.eval
    choices = {
        "optim.name": (optim.name, OPTIMIZERS),
        "optim.schedule": (optim.schedule, LR_SCHEDULES),
        "train.mode": (train.mode, TRAIN_MODES),
        "train.precision": (train.precision, PRECISIONS),
    }
    for key, (value, valid) in choices.items():
        if value not in valid:
            raise ConfigError(f"unknown {key} {value!r}; choose one of {list(valid)}")
    _check_loss_weights(run)
    for opponent in evaluation.opponents:
        if opponent not in EVAL_OPPONENTS:
            raise ConfigError(
                f"unknown eval opponent {opponent!r}; choose from {list(EVAL_OPPONENTS)}"
            )
    positive = {
        "train.iterations": train.iterations,
        "train.batch_size": train.batch_size,
        "train.replay_window": train.replay_window,
        "train.checkpoint_every": train.checkpoint_every,
        "train.publish_every": train.publish_every,
        "optim.lr": optim.lr,
    }
    for key, value in positive.items():
        if value <= 0:
            raise ConfigError(f"{key} must be > 0, got {value}")
    if train.samples_per_position is not None and train.samples_per_position <= 0:
        raise ConfigError(
            f"train.samples_per_position must be > 0 or null, got {train.samples_per_position}"
        )
    if train.max_minutes is not None and train.max_minutes <= 0:
        raise ConfigError(f"train.max_minutes must be > 0 or null, got {train.max_minutes}")
    at_least = {
        "eval.elo_every": (evaluation.elo_every, 0),
        "eval.elo_games": (evaluation.elo_games, 2),
        "eval.gating.num_games": (evaluation.gating.num_games, 2),
        "eval.gating.threshold": (evaluation.gating.threshold, 0),
        "eval.gating.opening_plies": (evaluation.gating.opening_plies, 0),
        "train.warm_start.positions": (train.warm_start.positions, 0),
        "train.warm_start.simulations": (train.warm_start.simulations, 1),
        "train.warm_start.max_plies": (train.warm_start.max_plies, 0),
        "train.warm_start.steps": (train.warm_start.steps, 0),
    }
    for key, (value, least) in at_least.items():
        if value < least:
            raise ConfigError(f"{key} must be >= {least}, got {value}")


def _check_loss_weights(run: RunConfig) -> None:
    """A weight for every loss; an auxiliary head trains iff it is in ``model.aux_heads`` and
    its weight is > 0 (a weight without the head, or the head without a weight, is a mistake)."""
    weights = run.optim.loss_weights
    try:
        losses_for(run.model)
    except ModelConfigError as err:
        raise ConfigError(str(err)) from None
    losses = sorted([loss.name for loss in LOSSES] + list(AUX_LOSSES))
    if sorted(weights) != losses:
        raise ConfigError(
            f"optim.loss_weights names {sorted(weights)}; give a weight for each loss: {losses}"
        )
    for head in AUX_LOSSES:
        if (head in run.model.aux_heads) != (weights[head] > 0):
            raise ConfigError(
                f"auxiliary head {head!r}: model.aux_heads={list(run.model.aux_heads)} and "
                f"optim.loss_weights.{head}={weights[head]}; to train it, list it in "
                f"model.aux_heads AND give it a weight > 0 (e.g. model.aux_heads=[{head}] "
                f"optim.loss_weights.{head}=0.15), to leave it out, neither"
            )
    if not 0.0 <= run.optim.value_target_q_weight <= 1.0:
        raise ConfigError(
            f"optim.value_target_q_weight must be in [0, 1], got {run.optim.value_target_q_weight}"
        )
    if not 0.0 <= run.optim.ema_decay < 1.0:
        raise ConfigError(
            f"optim.ema_decay must be in [0, 1) (0: no average; 0.999 averages ~1,000 steps), "
            f"got {run.optim.ema_decay}"
        )


def _check_combinations(run: RunConfig) -> None:
    """Combinations that would fail (or waste a run) later, caught before training starts."""
    game, model, train = run.game, run.model, run.train
    height, width = game.observation_shape[1:]
    if model.board_size is not None and (height, width) != (model.board_size, model.board_size):
        raise ConfigError(
            f"model preset is for {model.board_size}x{model.board_size} boards, but game "
            f"{game.name!r} encodes {height}x{width} planes; pick a model preset for this game "
            f"(e.g. model=mlp for 3x3 games, model=resnet_small for uttt) or model.board_size=null"
        )
    if not is_solvable(game) and ("perfect" in run.eval.opponents or train.stop_when_perfect):
        raise ConfigError(
            f"eval opponent 'perfect' and train.stop_when_perfect need an exactly solved game "
            f"(numerical_ttt, tictactoe up to 4x4), not {game.name!r}; drop them for this game"
        )
    if run.search.contempt:
        raise ConfigError(
            f"search.contempt={run.search.contempt} is for an agent that plays one side "
            "(load_agent(path, contempt=0.2), or evaluate.py's file:path=...,contempt=0.2): "
            "self-play searches both sides and would learn from skewed draws; drop it here"
        )
    if train.init_replay and not train.init_from:
        raise ConfigError(
            "train.init_replay=true needs train.init_from=RUN/checkpoints/latest.pt: the "
            "checkpoint whose replay window the run starts from"
        )
    if train.stop_when_perfect and run.eval.every <= 0:
        raise ConfigError("train.stop_when_perfect needs evaluations: set eval.every > 0")
    selfplay = run.selfplay
    book = selfplay.book
    if book.path and (book.fraction > 0 or book.walk):
        try:
            load_book(book.path, game)
        except BookError as err:
            raise ConfigError(str(err)) from None
    used = book.fraction > 0 or book.teacher > 0
    if book.walk and not (is_solvable(game) and used and run.eval.every > 0):
        raise ConfigError(
            "selfplay.book.walk=true grows the book at each evaluation from the every-line walk "
            f"of an exactly solved game (numerical_ttt, tictactoe), for a share of the games or "
            f"the policy's lessons: it needs such a game (this is {game.name!r}), "
            f"selfplay.book.fraction > 0 (it is {book.fraction}) or selfplay.book.teacher > 0 "
            f"(it is {book.teacher}), and eval.every > 0 (it is {run.eval.every})"
        )
    if book.walk_from_optimal > 0 and run.eval.optimal_positions <= 0:
        raise ConfigError(
            f"selfplay.book.walk_from_optimal={book.walk_from_optimal} waits for the evaluation's "
            "optimal-move rate, which eval.optimal_positions=0 turns off: set "
            "eval.optimal_positions > 0 (e.g. 200) or selfplay.book.walk_from_optimal=0"
        )
    if selfplay.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError('selfplay.backend=ray needs Ray: pip install -e ".[ray]"')
    if selfplay.backend == "ray" and selfplay.actor_device != "cpu" and run.ray.num_gpus <= 0:
        raise ConfigError(
            f"selfplay.actor_device={selfplay.actor_device} on Ray needs ray.num_gpus > 0 (a "
            "share of a GPU per actor, e.g. 0.25), or Ray hides the GPUs from the actors"
        )
    if train.precision == "fp16" and not str(run.device).startswith("cuda"):
        try:  # fp16 needs CUDA; a preset for a CUDA machine still composes on a CPU
            training_precision(train.precision, resolve_device(run.device))
        except ValueError as err:
            raise ConfigError(f"train.precision: {err}") from None
    if train.warm_start.positions > train.replay_window:
        raise ConfigError(
            f"train.warm_start.positions ({train.warm_start.positions}) exceeds "
            f"train.replay_window ({train.replay_window}): the window would drop labels before "
            "the warm start learns them; raise the window or label fewer positions"
        )
    if train.min_replay > train.replay_window:
        raise ConfigError(
            f"train.min_replay ({train.min_replay}) exceeds train.replay_window "
            f"({train.replay_window}): training would never start"
        )


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
