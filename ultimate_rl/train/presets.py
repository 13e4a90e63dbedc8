"""The training config's defaults and presets, stored in Hydra's ConfigStore: no YAML repeats them.

Every key's default is declared once, in its section's dataclass (``train/schema.py``,
``selfplay/schema.py``, ``ModelConfig``, ``SearchConfig``). A preset of a config group
(``model=resnet_small``, ``optim=sgd``...) is written here only as what it changes in those
defaults (``PRESETS``). ``register_train_configs`` stores, for Hydra's command line:

- ``train_defaults``: the keys outside the groups (``seed``, ``device``, ``train.*``, ``ray.*``),
  the first entry of ``configs/train.yaml``'s defaults list;
- one option per preset in its group (``model/resnet_small``), every key of the section with the
  preset's changes applied, so any key can be overridden (``model.blocks=5``).

``import ultimate_rl.train`` runs it, as ``import ultimate_rl`` stores the ``game`` group
(``game_configs.py``). A new preset is one ``Preset`` entry; a new key is one dataclass field.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

from hydra.core.config_store import ConfigStore

from ultimate_rl.train.schema import TrainConfig, field_default, sections

BASE_NAME = "train_defaults"
"""The ConfigStore name of the keys outside the config groups."""


@dataclass(frozen=True)
class Preset:
    """One option of a config group: what it is for, and the keys it changes."""

    description: str
    """One sentence, shown by the config reference and ``--help``'s group list."""
    changes: dict[str, Any] = field(default_factory=dict)
    """The keys whose values differ from the section's dataclass defaults."""


PRESETS: dict[str, dict[str, Preset]] = {
    "model": {
        "mlp": Preset(
            "A small MLP: enough for the 3x3 games (tictactoe, numerical_ttt), and fast on a CPU.",
            {"arch": "mlp", "board_size": 3},
        ),
        "resnet": Preset(
            "The uttt network for a GPU run.",
            {"blocks": 8, "channels": 96, "value_hidden": 128, "board_size": 9},
        ),
        "resnet_small": Preset(
            "A small residual tower for 9x9 uttt planes on a CPU.",
            {"blocks": 3, "channels": 32, "board_size": 9},
        ),
    },
    "search": {
        "puct": Preset("AlphaZero PUCT.", {"num_simulations": 64}),
        "gumbel": Preset(
            "Gumbel root search (Danihelka et al. 2022): a good policy target from few "
            "simulations.",
            {"algorithm": "gumbel", "num_simulations": 16},
        ),
    },
    "selfplay": {"default": Preset("The self-play settings' defaults.")},
    "optim": {
        "adamw": Preset("AdamW, the default optimiser."),
        "sgd": Preset(
            "SGD with Nesterov momentum, at 10x AdamW's learning rate.", {"name": "sgd", "lr": 0.02}
        ),
    },
    "eval": {"default": Preset("The evaluation settings' defaults.")},
}
"""The options of each config group, by group then name; each group is a section of
``TrainConfig``."""


def _plain(value: Any) -> Any:
    """``value`` as YAML data: dataclasses as dicts, tuples as lists."""
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def section_defaults(group: str) -> dict[str, Any]:
    """Every key of section ``group`` with its dataclass default."""
    return _plain(sections(TrainConfig)[group]())


def preset_values(group: str, name: str) -> dict[str, Any]:
    """Every key of section ``group`` as preset ``name`` sets it."""
    values = section_defaults(group)
    unknown = sorted(set(PRESETS[group][name].changes) - set(values))
    if unknown:
        raise KeyError(f"preset {group}={name} changes unknown key(s) {unknown}")
    return {**values, **_plain(PRESETS[group][name].changes)}


def base_values() -> dict[str, Any]:
    """The training config's keys outside the config groups, with their defaults."""
    grouped = {"game", *PRESETS}
    return {f.name: _plain(field_default(f)) for f in fields(TrainConfig) if f.name not in grouped}


def register_train_configs() -> None:
    """Stores ``train_defaults`` and every preset; calling it again stores the same again."""
    store = ConfigStore.instance()
    store.store(name=BASE_NAME, node=base_values())
    for group, options in PRESETS.items():
        for name in options:
            store.store(group=group, name=name, node=preset_values(group, name))
