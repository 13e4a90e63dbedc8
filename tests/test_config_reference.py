"""The configuration reference: every key documented where it is declared, the page generated.

Every key of the composed training config (default and presets) has an entry with a docstring,
every field of the config's dataclasses (and every game option) has an attribute docstring, so
a new key without one fails here, and the page shows every key with the default the config
really runs with.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from ultimate_rl.games import GAMES
from ultimate_rl.train.reference import (
    KeyDoc,
    attribute_docs,
    config_reference,
    config_reference_markdown,
    config_sections,
    default_choices,
    group_presets,
    preset_defaults,
    write_config_reference,
    yaml_value,
)
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.schema import TOP_LEVEL, TrainConfig, field_default

PRESETS = [
    [],
    ["experiment=uttt_cpu"],
    ["experiment=uttt_gpu"],
    ["experiment=numerical_ttt"],
    ["experiment=tictactoe4"],
    ["search=gumbel"],
    ["model=resnet"],
    ["optim=sgd"],
    ["game=uttt", "model=resnet_small"],
]


def flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted keys of a nested mapping, down to its leaves (a list is a leaf)."""
    if not isinstance(node, dict):
        return {prefix[:-1]: node}
    out: dict[str, Any] = {}
    for key, value in node.items():
        out.update(flatten(value, f"{prefix}{key}."))
    return out


def composed(overrides: list[str]) -> dict[str, Any]:
    return flatten(OmegaConf.to_container(compose_train_config(overrides), resolve=False))


def entry_for(key: str, entries: dict[str, KeyDoc]) -> KeyDoc | None:
    """The entry documenting ``key``: its own, or that of a mapping-valued key above it
    (``optim.loss_weights`` documents ``optim.loss_weights.policy``)."""
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        entry = entries.get(".".join(parts[:end]))
        if entry is not None and (end == len(parts) or entry.type.startswith("dict")):
            return entry
    return None


def undocumented(schema: type, prefix: str = "") -> list[str]:
    """Dotted names of the fields of ``schema`` (and of the sections inside it) that have no
    attribute docstring."""
    docs = attribute_docs(schema)
    missing = []
    for f in fields(schema):
        if not docs.get(f.name, ("", ""))[1]:
            missing.append(f"{prefix}{f.name}")
        value = field_default(f)
        if is_dataclass(value):
            missing += undocumented(type(value), f"{prefix}{f.name}.")
    return missing


@pytest.mark.parametrize("overrides", PRESETS, ids=lambda o: " ".join(o) or "default")
def test_every_composed_key_has_a_documented_entry(overrides: list[str]):
    entries = {entry.key: entry for entry in config_reference()}
    for key in composed(overrides):
        entry = entry_for(key, entries)
        assert entry is not None, f"{key} (with {overrides}) is missing from the reference"
        assert entry.doc.strip(), f"{entry.key} has no docstring"
        assert entry.type, f"{entry.key} has no type"


def test_every_field_and_game_option_has_a_docstring():
    assert undocumented(TrainConfig) == []
    for name, cls in GAMES.items():
        docs = attribute_docs(cls)
        for param in list(inspect.signature(cls.__init__).parameters)[1:]:
            assert docs.get(param, ("", ""))[1], f"game option {name}.{param} has no docstring"


def test_a_field_without_a_docstring_is_caught():
    @dataclass
    class Inner:
        documented: int = 1
        """Has one."""
        bare: int = 2

    @dataclass
    class Outer:
        inner: Inner = field(default_factory=Inner)
        """A section."""
        plain: str = "x"

    assert attribute_docs(Inner) == {"documented": ("int", "Has one."), "bare": ("int", "")}
    assert undocumented(Outer) == ["inner.bare", "plain"]


def test_one_entry_per_key_walked_from_the_one_schema():
    keys = [entry.key for entry in config_reference()]
    assert len(keys) == len(set(keys))
    top = {entry.key for entry in config_reference() if entry.section == ""}
    sections = {s.name for s in config_sections()}
    assert top | {name for name in sections if "." not in name and name} == set(TOP_LEVEL)
    assert {"train.warm_start", "selfplay.resign", "eval.gating"} <= sections


def test_defaults_shown_are_the_composed_configs():
    config = OmegaConf.to_container(compose_train_config([]), resolve=False)
    compared = set()
    for entry in config_reference():
        node: Any = config
        for part in entry.key.split("."):
            node = node.get(part, KeyError) if isinstance(node, dict) else KeyError
        if node is not KeyError:
            assert entry.default == yaml_value(node), entry.key
            compared.add(entry.key)
    assert compared >= {"optim.loss_weights", "game.size", "train.warm_start.steps"}
    members = len(config["optim"]["loss_weights"])
    assert len(compared) == len(composed([])) - (members - 1)  # its members: one entry
    by_key = {entry.key: entry for entry in config_reference()}
    assert by_key["model.arch"].default == "mlp"  # the default preset's, not ModelConfig's
    assert by_key["search.num_simulations"].default == "64"
    assert by_key["run_name"].default == '"${game.name}"'
    assert by_key["eval.opponents"].default == "[random, uct]"


@pytest.mark.parametrize("group", ["game", "model", "search", "optim"])
def test_each_presets_values_are_what_composing_it_gives(group: str):
    keys = [entry for entry in config_reference() if entry.key.startswith(f"{group}.")]
    presets = group_presets(group)
    assert len(presets) > 1 and sum(p.default for p in presets) == 1
    for preset in presets:
        values = composed([f"{group}={preset.name}"])
        for key, shown in preset_defaults(preset, keys).items():
            if key in values:
                assert shown == yaml_value(values[key]), (preset.name, key)


def test_the_markdown_lists_every_key_and_every_preset():
    page = config_reference_markdown()
    assert page.startswith("# Training configuration")
    for entry in config_reference():
        assert f"| `{entry.key}` |" in page, entry.key
    for group in default_choices():
        for preset in group_presets(group):
            assert f"{group}={preset.name}" in page or f"`{preset.name}`" in page, preset.name
    assert "| `uttt_cpu` | Ultimate tic-tac-toe on a CPU" in page
    assert "`blocks: 8`" in page  # model=resnet's change from the default preset


def test_yaml_values_read_back_as_the_value():
    cases = [None, True, 0.002, 19652.0, [], ["random", "uct:num_simulations=100"], "${game.name}"]
    cases += [{"policy": 1.0, "value": 0.5}, "null", "auto", (128, 128)]
    for value in cases:
        read = OmegaConf.to_container(OmegaConf.create(f"x: {yaml_value(value)}"), resolve=False)
        assert read["x"] == (list(value) if isinstance(value, tuple) else value), value
    assert yaml_value("auto") == "auto" and yaml_value(None) == "null"


def test_write_config_reference_writes_only_a_changed_page(tmp_path: Path):
    path = write_config_reference(tmp_path / "reference" / "config.md")
    assert path.read_text() == config_reference_markdown()
    stamp = path.stat().st_mtime_ns
    write_config_reference(path)
    assert path.stat().st_mtime_ns == stamp
