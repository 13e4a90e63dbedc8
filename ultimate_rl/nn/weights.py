"""A network's weights from either file a run can start from (``train.init_from``): a training
checkpoint (``.pt``) or an exported agent file (``.urla``, written by ``export.bundle``).

The file's own format marker decides, not its suffix, so neither passes for the other. An agent
file stores the network exactly as training does (``PolicyValueNet.state_dict()``, batch norm
unfolded, with its ``ModelConfig``); its input-encoding fingerprint must match this engine's, or
the weights would be trained further on planes they never saw. The agent reader lives here, below
``train/``, because training never imports the export layer.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ultimate_rl.games import make as make_game
from ultimate_rl.games.base import Game
from ultimate_rl.nn.checkpoint import (
    AGENT_FORMAT_NAME,
    FORMAT_VERSION,
    Checkpoint,
    CheckpointError,
    checkpoint_from_payload,
    read_payload,
)
from ultimate_rl.nn.config import ModelConfig

AGENT_FORMAT_VERSION = 1  # the newest agent-file layout this reader (and ``export``) knows
FINGERPRINT_PLIES = 12  # positions hashed for the encoding version: the start and 12 moves on


def fixed_line(game: Game, plies: int) -> Iterator[np.ndarray]:
    """The start and up to ``plies`` positions after it on one fixed, game-independent line of
    play (the ``(7 * ply + 3)``-th legal move each ply), to compare encodings on."""
    state = game.initial_state()
    for ply in range(plies + 1):
        yield state
        legal = game.legal_actions(state)
        if game.is_terminal(state) or len(legal) == 0:
            return
        state = game.apply(state, int(legal[(7 * ply + 3) % len(legal)]))


def encoding_version(game: Game) -> str:
    """A fingerprint of ``game.encode`` (and the rules it sees) on a fixed line of play."""
    digest = hashlib.sha256(f"{game.name}:{game.observation_shape}:{game.num_actions}".encode())
    for state in fixed_line(game, FINGERPRINT_PLIES):
        digest.update(np.ascontiguousarray(game.encode(state), dtype=np.float32).tobytes())
    return digest.hexdigest()[:16]


def load_network_weights(
    path: str | os.PathLike, expected_game: Game | str | None = None
) -> Checkpoint:
    """The network of a training checkpoint or an agent file, as a ``Checkpoint`` (an agent
    file's has no optimiser state and its ``step`` is the exported one). Raises
    ``CheckpointError`` for a file that is neither, a stale agent file, or (with
    ``expected_game``) one for another game."""
    path = Path(path)
    payload = read_payload(path, "checkpoint or agent file")
    if isinstance(payload, dict) and payload.get("format") == AGENT_FORMAT_NAME:
        checkpoint = _agent_checkpoint(payload, path)
        if expected_game is not None:
            checkpoint.check_game(expected_game)
        return checkpoint
    return checkpoint_from_payload(payload, path, expected_game)


def check_agent_version(
    payload: dict[str, Any], path: Path, error: type[ValueError] = CheckpointError
) -> None:
    """Raises ``error`` when an agent file's layout is newer than this reader knows."""
    version = payload.get("format_version")
    if not isinstance(version, int) or version > AGENT_FORMAT_VERSION:
        raise error(
            f"{path} has agent format version {version!r}; this ultimate_rl reads up to "
            f"{AGENT_FORMAT_VERSION}: upgrade ultimate_rl"
        )


def check_agent_encoding(
    game: Game,
    stored: object,
    path: Path,
    made_with: object = None,
    error: type[ValueError] = CheckpointError,
) -> None:
    """Raises ``error`` when an agent file's input-encoding fingerprint ``stored`` is not this
    engine's for ``game``: its network saw other input planes."""
    current = encoding_version(game)
    if stored != current:
        raise error(
            f"{path} was exported for {game.name!r} input encoding {stored!r}, but this "
            f"ultimate_rl encodes positions as {current!r}: its network saw other input planes. "
            "Re-export its checkpoint with this version, or use the version the agent was made "
            f"with ({made_with or 'see its metadata'})"
        )


def _agent_checkpoint(payload: dict[str, Any], path: Path) -> Checkpoint:
    check_agent_version(payload, path)
    try:
        game_name = str(payload["game"]["name"])
        game_options = dict(payload["game"]["options"])
        encoding = dict(payload["encoding"])
        model_config = ModelConfig.from_dict(payload["model"]["config"])
        model_state = dict(payload["model"]["state"])
        metadata = dict(payload.get("metadata") or {})
        step = int(metadata.get("step", 0))
        game = make_game(game_name, **game_options)
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(
            f"{path} is an incomplete or malformed agent file ({err!r}); export it again "
            "with scripts/export.py"
        ) from err
    check_agent_encoding(game, encoding.get("version"), path, metadata.get("ultimate_rl_version"))
    return Checkpoint(
        path=path,
        format_version=FORMAT_VERSION,
        game_name=game_name,
        game_options=game_options,
        observation_shape=tuple(int(d) for d in game.observation_shape),
        num_actions=int(game.num_actions),
        model_config=model_config,
        model_state=model_state,
        step=step,
    )
