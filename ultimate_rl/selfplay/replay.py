"""Replay buffer: the last ``capacity`` self-play positions in preallocated numpy ring arrays.

Each position stores the game state (32 int32, ``ultimate_rl.games.layout``) and one array per
training target (``selfplay.targets``: the search's policy, the value from the mover's view, and
whether the policy came from a full search, as playout-cap randomisation trains cheap searches'
values only). Network planes and legal masks are a pure function of the state, so ``sample``
computes them for the drawn positions only (one numba kernel call): a uttt position costs
~0.46 KB instead of ~3 KB with stored planes, which keeps large windows, and the checkpoints that
save them for exact resume, small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ultimate_rl.games import kernels, layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.symmetry import Symmetry
from ultimate_rl.nn.losses import Batch
from ultimate_rl.selfplay.augment import apply_random_symmetries
from ultimate_rl.selfplay.targets import TARGETS, Target

__all__ = ["Batch", "ReplayBuffer"]


class ReplayBuffer:
    """A window of the most recent ``capacity`` positions with uniform sampling.

    ``add`` takes whole batches (one per finished game or self-play step) and writes them with
    one vectorised copy each; once full, the oldest positions are overwritten. ``state_dict`` /
    ``load_state_dict`` restore the exact contents and slot layout, so sampling resumes exactly
    with the same generator state.
    """

    def __init__(self, game: Game, capacity: int, targets: Sequence[Target] = TARGETS) -> None:
        if not isinstance(capacity, int | np.integer) or capacity < 1:
            raise ValueError(
                f"replay capacity must be a positive number of positions, got {capacity!r}"
            )
        self.capacity = int(capacity)
        self.game_id = int(game.game_id)
        self.observation_shape = tuple(int(d) for d in game.observation_shape)
        self.num_actions = int(game.num_actions)
        self.specs = tuple(targets)
        self.states = np.zeros((self.capacity, layout.STATE_LEN), dtype=layout.STATE_DTYPE)
        self.ownership_grids = game.ownership_grids  # how symmetries move the ownership target
        self.targets = {t.name: t.zeros(self.capacity, game) for t in self.specs}
        self.size = 0  # filled slots: 0..size-1
        self.cursor = 0  # the slot the next position goes to
        self.total_added = 0  # positions ever added (a statistic; the window keeps `capacity`)

    @classmethod
    def for_game(cls, game: Game, capacity: int) -> ReplayBuffer:
        """The buffer for ``game``'s states, planes and action space."""
        return cls(game, capacity)

    def __len__(self) -> int:
        return self.size

    def add(self, states: np.ndarray, targets: Mapping[str, np.ndarray | float | bool]) -> None:
        """Appends ``n`` positions (first axis) with their ``targets`` by name; a target may be
        one value for all of them (e.g. ``full_search=False``)."""
        states = np.asarray(states, dtype=layout.STATE_DTYPE)
        n = states.shape[0] if states.ndim == 2 else -1
        if n < 0 or states.shape[1] != layout.STATE_LEN:
            raise ValueError(
                f"replay add: states must have shape [n, ...] = ['n', {layout.STATE_LEN}] for this "
                f"game, got {list(states.shape)}"
            )
        if sorted(targets) != sorted(self.targets):
            raise ValueError(
                f"replay add: got targets {sorted(targets)}, this buffer stores "
                f"{sorted(self.targets)}"
            )
        arrays = {t.name: self._checked(t, targets[t.name], n) for t in self.specs}
        if np.any(states[:, layout.GAME] != self.game_id):
            found = sorted(set(states[:, layout.GAME].tolist()) - {self.game_id})
            raise ValueError(
                f"replay add: states of game id(s) {found} in a buffer for game id "
                f"{self.game_id}; add only positions of the buffer's game"
            )
        self.total_added += n
        skip = max(n - self.capacity, 0)  # only the newest `capacity` positions would survive
        slots = (self.cursor + np.arange(n - skip)) % self.capacity
        self.states[slots] = states[skip:]
        for name, source in arrays.items():
            self.targets[name][slots] = source[skip:]
        self.cursor = (self.cursor + n - skip) % self.capacity
        self.size = min(self.size + n - skip, self.capacity)

    def _checked(self, target: Target, values: Any, n: int) -> np.ndarray:
        """``values`` as ``n`` entries of ``target``'s shape (one value is broadcast)."""
        array = np.asarray(values, dtype=target.dtype)
        want = (n, *self.targets[target.name].shape[1:])
        if array.ndim == 0:
            return np.broadcast_to(array, want)
        if array.shape != want:
            raise ValueError(
                f"replay add: {target.name} must have shape [n, ...] = "
                f"{['n', *want[1:]]} for this game, got {list(array.shape)}"
            )
        return array

    def sample(
        self,
        batch_size: int,
        rng: np.random.Generator,
        symmetries: Sequence[Symmetry] | None = None,
    ) -> Batch:
        """``batch_size`` positions drawn uniformly (with replacement) from the window.

        Planes and legal masks are encoded from the drawn states here. With ``symmetries``
        (e.g. ``game.symmetries``) each sample then gets a random one applied (see
        ``ultimate_rl.selfplay.augment``).
        """
        if len(self) == 0:
            raise ValueError("the replay buffer is empty; add self-play positions before sampling")
        if batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
        index = rng.integers(0, len(self), size=batch_size)
        planes = np.empty((batch_size, *self.observation_shape), dtype=np.float32)
        masks = np.empty((batch_size, self.num_actions), dtype=bool)
        kernels.encode_batch(self.states[index], planes, masks)
        batch = Batch(planes, masks, {name: a[index] for name, a in self.targets.items()})
        if symmetries:
            batch = apply_random_symmetries(
                batch, symmetries, rng, self.specs, self.ownership_grids
            )
        return batch

    def state_dict(self) -> dict[str, Any]:
        """The filled part only, as torch tensors sharing memory with the buffer; each target
        under its name.

        Tensors (not numpy arrays) so the dict can go into a checkpoint's ``extra`` and load
        with ``torch.load(weights_only=True)``.
        """
        size = self.size
        return {
            "capacity": self.capacity,
            "size": size,
            "cursor": self.cursor,
            "total_added": self.total_added,
            "game_id": self.game_id,
            "observation_shape": list(self.observation_shape),
            "num_actions": self.num_actions,
            "states": torch.from_numpy(self.states[:size]),
            **{name: torch.from_numpy(a[:size]) for name, a in self.targets.items()},
        }

    def missing_targets(self, state: Mapping[str, Any]) -> list[str]:
        """The targets this buffer stores that ``state`` (a ``state_dict()``) lacks."""
        return sorted(set(self.targets) - set(state))

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restores ``state_dict()`` output; a different capacity keeps the newest positions."""
        if "states" not in state:
            raise ValueError(
                "this replay state stores network planes (the buffer format before positions "
                "were kept as game states); states cannot be rebuilt from planes, so it cannot "
                "be resumed: start the run in a new directory, or delete its "
                "checkpoints/latest.pt to restart from scratch"
            )
        shape = tuple(int(d) for d in state["observation_shape"])
        game_id = int(state["game_id"])
        if (game_id, shape, int(state["num_actions"])) != (
            self.game_id,
            self.observation_shape,
            self.num_actions,
        ):
            raise ValueError(
                f"replay state is for game id {game_id}, planes {shape} and "
                f"{state['num_actions']} actions, this buffer holds game id {self.game_id}, "
                f"planes {self.observation_shape} and {self.num_actions} actions; "
                "is it another game's run?"
            )
        missing = self.missing_targets(state)
        if missing:
            raise ValueError(
                f"replay state has no {missing} target(s): it was saved before they existed, "
                "so it cannot be resumed; start the run in a new directory"
            )
        states = np.asarray(state["states"])
        targets = {name: np.asarray(state[name]) for name in self.targets}
        size, cursor = int(state["size"]), int(state["cursor"])
        if int(state["capacity"]) == self.capacity:
            self.states[:size] = states
            for name, source in targets.items():
                self.targets[name][:size] = source
            self.size, self.cursor = size, cursor
        else:  # another window size: re-add the stored positions oldest first
            oldest = cursor if size == int(state["capacity"]) else 0
            order = (oldest + np.arange(size)) % max(size, 1)
            self.size = self.cursor = 0
            self.add(states[order], {name: a[order] for name, a in targets.items()})
        self.total_added = int(state["total_added"])
