"""The model configuration: plain data, so it round-trips through Hydra and checkpoints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

Architecture = Literal["resnet", "mlp"]
ValueHead = Literal["scalar", "wdl"]

ARCHITECTURES: tuple[str, ...] = ("resnet", "mlp")
VALUE_HEADS: tuple[str, ...] = ("scalar", "wdl")


class ModelConfigError(ValueError):
    """A model configuration that is invalid or does not fit the game."""


@dataclass(frozen=True)
class ModelConfig:
    """What ``build_model`` needs besides the game.

    ``arch``: ``resnet`` (conv tower over the planes, any square board) or ``mlp`` (flattened
    planes, meant for the 3x3 games). ``value_head``: ``scalar`` (tanh) or ``wdl`` (win/draw/loss
    logits; draws are common in these games, and a WDL head keeps them apart from uncertainty).
    ``board_size``: the board side the model is meant for (e.g. 9 for a uttt preset); ``None``
    accepts any game. It lets a preset fail early on the wrong game instead of training a net
    sized for another board.
    """

    arch: Architecture = "resnet"
    blocks: int = 4
    channels: int = 64
    value_head: ValueHead = "wdl"
    policy_channels: int = 4
    value_channels: int = 2
    value_hidden: int = 64
    mlp_hidden: tuple[int, ...] = (128, 128)
    board_size: int | None = None

    def __post_init__(self) -> None:
        if self.arch not in ARCHITECTURES:
            raise ModelConfigError(
                f"unknown model arch {self.arch!r}; choose one of {list(ARCHITECTURES)}"
            )
        if self.value_head not in VALUE_HEADS:
            raise ModelConfigError(
                f"unknown value_head {self.value_head!r}; choose one of {list(VALUE_HEADS)}"
            )
        for name in ("channels", "policy_channels", "value_channels", "value_hidden"):
            _require_positive(name, getattr(self, name))
        if self.blocks < 0:
            raise ModelConfigError(f"model.blocks must be >= 0, got {self.blocks}")
        object.__setattr__(self, "mlp_hidden", tuple(int(h) for h in self.mlp_hidden))
        if not self.mlp_hidden:
            raise ModelConfigError("model.mlp_hidden needs at least one layer size, e.g. [128]")
        for size in self.mlp_hidden:
            _require_positive("mlp_hidden entries", size)
        if self.board_size is not None:
            _require_positive("board_size", self.board_size)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python data (lists, not tuples) for checkpoints and logs."""
        data = asdict(self)
        data["mlp_hidden"] = list(self.mlp_hidden)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Builds a config from a dict (a Hydra node or a checkpoint); unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ModelConfigError(
                f"unknown model config key(s) {unknown}; valid keys: {sorted(known)}"
            )
        values = dict(data)
        if "mlp_hidden" in values:
            values["mlp_hidden"] = tuple(values["mlp_hidden"])
        return cls(**values)


def _require_positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ModelConfigError(f"model.{name} must be a positive integer, got {value!r}")
