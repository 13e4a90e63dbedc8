"""The exported agent file (``.urla``, "ultimate_rl agent"): one self-contained file per agent.

It is one ``torch.save`` file of plain data (dicts, lists, numbers, strings, tensors), readable
with ``torch.load(weights_only=True)`` and without Hydra or the training code::

    {"format": "ultimate_rl.agent", "format_version": 1,
     "game": {"name": "uttt", "options": {}},
     "encoding": {"version": "<16 hex digits>", "observation_shape": [C, H, W], "num_actions": A},
     "model": {"config": {...ModelConfig...}, "state": {name: tensor}},
     "search": {...default options of the network agent, e.g. num_simulations...},
     "metadata": {"step": ..., "exported_at": ISO date, "source": checkpoint name, versions...}}

The encoding version is a fingerprint of the game's ``encode`` on fixed positions: an agent whose
input planes no longer match the installed engine is refused instead of playing nonsense.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.nn.atomic import save_atomically
from ultimate_rl.nn.checkpoint import AGENT_FORMAT_NAME, Checkpoint, load_checkpoint
from ultimate_rl.nn.checkpoint import FORMAT_VERSION as CHECKPOINT_FORMAT_VERSION
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.device import resolve_device
from ultimate_rl.nn.models import PolicyValueNet, build_model
from ultimate_rl.nn.weights import (
    AGENT_FORMAT_VERSION,
    check_agent_encoding,
    check_agent_version,
    encoding_version,
)

FORMAT_NAME = AGENT_FORMAT_NAME
FORMAT_VERSION = AGENT_FORMAT_VERSION
SUFFIX = ".urla"


class BundleError(ValueError):
    """An agent file that cannot be used: damaged, not an agent file, too new, or stale."""


class BundleNotFoundError(BundleError, FileNotFoundError):
    """No file at the agent path."""


@dataclass
class AgentBundle:
    """An exported agent, decoded: the game, the network, the search defaults, the metadata."""

    game_name: str
    game_options: dict[str, Any]
    encoding: dict[str, Any]
    model_config: ModelConfig
    model_state: dict[str, torch.Tensor]
    search: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def make_game(self) -> Game:
        return make_game(self.game_name, **self.game_options)

    def build_model(self, device: str | torch.device = "cpu") -> PolicyValueNet:
        """The network with the stored weights, in eval mode on ``device``."""
        model = build_model(self.make_game(), self.model_config)
        model.load_state_dict(self.model_state)
        return model.to(resolve_device(device)).eval()

    def to_checkpoint(self) -> Checkpoint:
        """The network as an in-memory ``Checkpoint``: what the network agent plays with."""
        return Checkpoint(
            path=self.path or Path(f"<agent {self.game_name}>"),
            format_version=CHECKPOINT_FORMAT_VERSION,
            game_name=self.game_name,
            game_options=dict(self.game_options),
            observation_shape=tuple(int(d) for d in self.encoding["observation_shape"]),
            num_actions=int(self.encoding["num_actions"]),
            model_config=self.model_config,
            model_state=self.model_state,
            step=int(self.metadata.get("step", 0)),
            judged_perfect=bool(self.metadata.get("judged_perfect", False)),
        )

    def to_payload(self) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "game": {"name": self.game_name, "options": dict(self.game_options)},
            "encoding": dict(self.encoding),
            "model": {"config": self.model_config.to_dict(), "state": self.model_state},
            "search": dict(self.search),
            "metadata": dict(self.metadata),
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Writes the file atomically (temp file in the same folder, then rename)."""
        self.path = save_atomically(self.to_payload(), path)
        return self.path


def bundle_from_checkpoint(
    checkpoint_path: str | os.PathLike,
    search: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> AgentBundle:
    """The agent bundle of a training checkpoint (weights, config, game) plus search defaults."""
    checkpoint = load_checkpoint(checkpoint_path)
    game = checkpoint.make_game()
    checkpoint.check_game(game)
    return AgentBundle(
        game_name=checkpoint.game_name,
        game_options=dict(checkpoint.game_options),
        encoding={
            "version": encoding_version(game),
            "observation_shape": list(checkpoint.observation_shape),
            "num_actions": checkpoint.num_actions,
        },
        model_config=checkpoint.model_config,
        model_state={k: v.detach().cpu().clone() for k, v in checkpoint.model_state.items()},
        search=dict(search or {}),
        metadata={
            "step": checkpoint.step,
            "exported_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "source": Path(checkpoint_path).name,
            "ultimate_rl_version": importlib.metadata.version("ultimate_rl"),
            "torch_version": str(torch.__version__),
            "judged_perfect": checkpoint.judged_perfect,
            **(metadata or {}),
        },
    )


def export_agent(
    checkpoint_path: str | os.PathLike,
    out: str | os.PathLike,
    search: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> AgentBundle:
    """Writes the ``.urla`` agent file of a checkpoint to ``out``; returns what it wrote.

    ``checkpoint_path`` may be an agent file too: the same network and metadata with new search
    defaults (``search``) and ``metadata`` added, e.g. to give a shipped agent a time budget.
    """
    if Path(checkpoint_path).suffix == SUFFIX:
        bundle = read_bundle(checkpoint_path)
        bundle.search = dict(search or {})
        bundle.metadata = {
            **bundle.metadata,
            "search_defaults_set_at": dt.datetime.now(dt.timezone.utc).isoformat(
                timespec="seconds"
            ),
            **(metadata or {}),
        }
    else:
        bundle = bundle_from_checkpoint(checkpoint_path, search, metadata)
    bundle.save(out)
    return bundle


def _require(payload: dict[str, Any], path: Path, *keys: str) -> Any:
    value: Any = payload
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise BundleError(
                f"{path} is an incomplete agent file (no {'.'.join(keys)!r}); export it again "
                "with scripts/export.py"
            )
        value = value[key]
    return value


def read_bundle(path: str | os.PathLike) -> AgentBundle:
    """Reads and checks an agent file; every way it can be wrong is a ``BundleError``."""
    path = Path(path)
    if not path.is_file():
        raise BundleNotFoundError(
            f"no agent file at {path}"
            + (" (it is a folder)" if path.is_dir() else "")
            + f"; export one with: python scripts/export.py checkpoint=CKPT out=agent{SUFFIX}"
        )
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch.load fails in many ways on a bad file; all mean "unreadable"
        first_line = str(err).splitlines()[0] if str(err) else "no detail"
        raise BundleError(
            f"{path} is damaged or not an agent file ({type(err).__name__}: {first_line}); "
            "export it again with scripts/export.py"
        ) from err
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_NAME:
        hint = (
            " (it is a training checkpoint: export it with "
            f"python scripts/export.py checkpoint={path})"
            if isinstance(payload, dict) and payload.get("format") == "ultimate_rl.checkpoint"
            else ""
        )
        raise BundleError(f"{path} is not an ultimate_rl agent file{hint}")
    check_agent_version(payload, path, BundleError)
    try:
        bundle = AgentBundle(
            game_name=str(_require(payload, path, "game", "name")),
            game_options=dict(_require(payload, path, "game", "options")),
            encoding=dict(_require(payload, path, "encoding")),
            model_config=ModelConfig.from_dict(_require(payload, path, "model", "config")),
            model_state=dict(_require(payload, path, "model", "state")),
            search=dict(payload.get("search") or {}),
            metadata=dict(payload.get("metadata") or {}),
            path=path,
        )
    except (TypeError, ValueError) as err:
        if isinstance(err, BundleError):
            raise
        raise BundleError(f"{path} is a malformed agent file ({err})") from err
    _check_encoding(bundle)
    try:
        bundle.build_model("cpu")
    except (RuntimeError, ValueError) as err:
        first_line = str(err).splitlines()[0]
        raise BundleError(
            f"{path}: the stored weights do not fit the stored architecture ({first_line}); "
            "export it again with scripts/export.py"
        ) from err
    return bundle


def _check_encoding(bundle: AgentBundle) -> None:
    """Refuses an agent whose game or input planes do not match the installed engine."""
    try:
        game = bundle.make_game()
    except ValueError as err:
        raise BundleError(f"{bundle.path}: its game cannot be made here ({err})") from err
    made_with = bundle.metadata.get("ultimate_rl_version")
    check_agent_encoding(game, bundle.encoding.get("version"), bundle.path, made_with, BundleError)
