"""Checkpoints: written atomically, read with clear errors, loadable without the training code.

A checkpoint is one ``torch.save`` file holding plain data only (dicts, lists, numbers,
strings, tensors), so it loads with ``weights_only=True``: the model config and game options are
stored as dicts, never as pickled objects.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.nn.atomic import save_atomically
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.device import resolve_device
from ultimate_rl.nn.models import PolicyValueNet, build_model

FORMAT_NAME = "ultimate_rl.checkpoint"
FORMAT_VERSION = 1
AGENT_FORMAT_NAME = "ultimate_rl.agent"  # an exported agent file (``export.bundle``)


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: damaged, not ours, too new, or for another game."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """No file at the checkpoint path."""


class DamagedCheckpointError(CheckpointError):
    """A file that ``torch.load`` cannot read: cut short, overwritten, or not a torch file."""


class WrongGameError(CheckpointError):
    """A checkpoint trained for a different game than the one asked for."""


@dataclass
class Checkpoint:
    """What a checkpoint file holds, decoded."""

    path: Path
    format_version: int
    game_name: str
    game_options: dict[str, Any]
    observation_shape: tuple[int, int, int]
    num_actions: int
    model_config: ModelConfig
    model_state: dict[str, torch.Tensor]
    step: int
    optimizer_state: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    judged_perfect: bool = False
    """Its run's last verdict called it perfect (``Progress.perfect``: every opponent line at
    every budget of ``eval.perfect_budgets``, either side), a verdict its run reached in float32:
    the network agent then plays it in float32 (``inference=auto`` takes no reduced-precision
    path, whose moves the verdict did not walk)."""

    def make_game(self) -> Game:
        """The game this checkpoint was trained on."""
        return make_game(self.game_name, **self.game_options)

    def check_game(self, game: Game | str, same_encoding: bool = True) -> None:
        """Raises ``WrongGameError`` unless ``game`` (a Game or a name) is this checkpoint's:
        the same rules, and unless ``same_encoding=False`` (a player that encodes positions with
        ``make_game()``, as a network agent does) the same planes too."""
        name = game if isinstance(game, str) else game.name
        if name != self.game_name:
            raise WrongGameError(
                f"checkpoint {self.path} was trained for game {self.game_name!r}, "
                f"not for {name!r}; use a checkpoint of a {name!r} run"
            )
        if isinstance(game, str):
            return
        # Same name, other options (e.g. tictactoe k=3 vs k=4): the start states tell them apart.
        mine = self.make_game()
        same_rules = game.rules_options == mine.rules_options and np.array_equal(
            game.initial_state(), mine.initial_state()
        )
        if not same_rules or (
            same_encoding and tuple(game.observation_shape) != tuple(mine.observation_shape)
        ):
            raise WrongGameError(
                f"checkpoint {self.path} was trained for {self.game_name!r} with options "
                f"{self.game_options}, and this {name!r} game has other options; make the game "
                "with the checkpoint's options (checkpoint.make_game())"
            )

    def build_model(self, device: str | torch.device = "auto") -> PolicyValueNet:
        """The network with the stored weights, in eval mode on ``device``."""
        model = build_model(self.make_game(), self.model_config)
        model.load_state_dict(self.model_state)
        return model.to(resolve_device(device)).eval()


def save_checkpoint(
    path: str | os.PathLike,
    *,
    model: PolicyValueNet,
    model_config: ModelConfig | dict[str, Any] | None = None,
    game_name: str,
    game_options: dict[str, Any] | None = None,
    step: int,
    optimizer_state: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Writes a checkpoint atomically (``nn.atomic.save_atomically``): a crash at any moment
    leaves either the old file or the new one, never a partial file.
    ``extra`` must be plain data (dict/list/str/int/float/bool/None/torch tensors), e.g. a replay
    buffer's ``state_dict()`` or RNG states; numpy arrays must be converted with
    ``torch.from_numpy`` first. ``model_config`` defaults to ``model.config``; if given, it must
    match it, since loading rebuilds the network from it.
    """
    path = Path(path)
    model = getattr(model, "_orig_mod", model)  # a torch.compile'd model saves its original
    if model_config is None:
        model_config = model.config
    elif not isinstance(model_config, ModelConfig):
        model_config = ModelConfig.from_dict(dict(model_config))
    if model_config != model.config:
        raise ValueError(
            f"model_config {model_config} is not the config the model was built from "
            f"({model.config}); pass model.config or leave model_config out"
        )
    _check_plain("extra", extra)
    _check_plain("game_options", game_options)
    _check_plain("optimizer_state", optimizer_state)
    payload = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "game": game_name,
        "game_options": dict(game_options or {}),
        "observation_shape": list(model.observation_shape),
        "num_actions": model.num_actions,
        "model_config": model_config.to_dict(),
        "model_state": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "step": int(step),
        "optimizer_state": optimizer_state,
        "extra": dict(extra or {}),
    }
    return save_atomically(payload, path)


def load_checkpoint(path: str | os.PathLike, expected_game: Game | str | None = None) -> Checkpoint:
    """Reads a checkpoint; with ``expected_game``, refuses one trained for another game."""
    path = Path(path)
    return checkpoint_from_payload(read_payload(path, "checkpoint"), path, expected_game)


def read_payload(path: Path, what: str = "checkpoint") -> Any:
    """The plain data of a ``torch.save`` file at ``path``; a clear error if there is none."""
    if not path.is_file():
        raise CheckpointNotFoundError(
            f"no {what} at {path}"
            + (" (it is a folder)" if path.is_dir() else "")
            + "; check the path, or train one with scripts/train.py"
        )
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch.load fails in many ways on a bad file; all mean "unreadable"
        raise DamagedCheckpointError(
            f"{path} is damaged or not a torch checkpoint ({type(err).__name__}: "
            f"{str(err).splitlines()[0] if str(err) else 'no detail'}); use another checkpoint"
        ) from err


def checkpoint_from_payload(
    payload: Any, path: Path, expected_game: Game | str | None = None
) -> Checkpoint:
    """A training checkpoint's payload decoded and checked (``load_checkpoint`` after reading)."""
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_NAME:
        agent_file = isinstance(payload, dict) and payload.get("format") == AGENT_FORMAT_NAME
        raise CheckpointError(
            f"{path} is an exported agent file (.urla), not a training checkpoint; play it "
            "with ultimate_rl.load_agent, or start a training run from its weights with "
            f"train.init_from={path}"
            if agent_file
            else f"{path} is a torch file but not an ultimate_rl checkpoint (no {FORMAT_NAME!r} "
            "marker); save checkpoints with ultimate_rl.nn.save_checkpoint"
        )
    version = payload.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has checkpoint format version {version!r}, newer than this ultimate_rl "
            f"reads (up to {FORMAT_VERSION}); upgrade ultimate_rl"
        )
    try:
        checkpoint = Checkpoint(
            path=path,
            format_version=version,
            game_name=payload["game"],
            game_options=dict(payload["game_options"]),
            observation_shape=tuple(int(d) for d in payload["observation_shape"]),
            num_actions=int(payload["num_actions"]),
            model_config=ModelConfig.from_dict(payload["model_config"]),
            model_state=payload["model_state"],
            step=int(payload["step"]),
            optimizer_state=payload.get("optimizer_state"),
            extra=dict(payload.get("extra") or {}),
        )
        checkpoint.judged_perfect = bool(checkpoint.extra.get("progress", {}).get("perfect"))
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{path} is an incomplete ultimate_rl checkpoint ({err!r})") from err
    if expected_game is not None:
        checkpoint.check_game(expected_game)
    return checkpoint


def load_model(
    path: str | os.PathLike,
    device: str | torch.device = "auto",
    expected_game: Game | str | None = None,
) -> PolicyValueNet:
    """The network stored at ``path``, rebuilt from its config, in eval mode on ``device``."""
    return load_checkpoint(path, expected_game).build_model(device)


# Exact types: numpy scalars subclass float/int but need numpy's unpickler to load.
_PLAIN_SCALARS = (str, int, float, bool, type(None))


def _check_plain(where: str, value: Any) -> None:
    """Refuses data that ``torch.load(weights_only=True)`` could not read back."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_plain(f"{where}[{key!r}]", item)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_plain(f"{where}[{index}]", item)
    elif not (type(value) in _PLAIN_SCALARS or isinstance(value, torch.Tensor)):
        hint = " (convert numpy arrays with torch.from_numpy)" if hasattr(value, "dtype") else ""
        raise TypeError(
            f"checkpoint {where} holds a {type(value).__name__}; only dict/list/str/int/float/"
            f"bool/None/torch.Tensor can be stored{hint}"
        )
