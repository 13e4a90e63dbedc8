"""The training config's reference page, generated from the keys' declarations.

Every key is a field of ``TrainConfig`` (``train/schema.py``) or of a section dataclass it holds
(``SelfPlaySettings``, ``ModelConfig``, ``SearchConfig``, ...), documented by the string literal
under the field (an attribute docstring, as CleanRL's ``Args`` and mkdocstrings read them); the
game options are the game classes' constructor arguments, documented the same way in the class.
``config_reference`` walks them, reading the docstrings and annotations with ``ast``;
``config_reference_markdown`` is the page ``docs/reference/config.md``, with the presets of each
config group (``train/presets.py``; the files of ``configs/experiment/``). The page is committed
(it reads on GitHub too); ``write_config_reference`` rewrites it when stale, which the site's
MkDocs hook (``docs/hooks/site.py``) does at every build, and ``tests/test_docs.py`` fails while
the committed page differs from the code.

A key's default is the value ``python scripts/train.py`` runs with: its dataclass default, or
in a config group with presets (``model``, ``search``, ...) the value of the default preset,
which ``configs/train.yaml``'s defaults list names.
"""

from __future__ import annotations

import ast
import html
import inspect
import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from ultimate_rl.game_configs import game_node, game_parameters
from ultimate_rl.games import GAMES
from ultimate_rl.train.presets import PRESETS, preset_values
from ultimate_rl.train.run import CONFIG_DIR
from ultimate_rl.train.schema import GameSection, TrainConfig, field_default

REFERENCE_PAGE = "docs/reference/config.md"
"""Where the page goes, relative to the repository root."""


@dataclass(frozen=True)
class KeyDoc:
    """One key of the training config, as the reference page shows it."""

    key: str
    """The dotted Hydra key, e.g. ``train.warm_start.positions``."""
    type: str
    """The annotation as written in the declaration, e.g. ``float | None``."""
    default: str
    """The value the default config runs with, as YAML writes it (``null``, ``[random, uct]``)."""
    doc: str
    """The field's docstring, dedented."""
    section: str
    """The section the key sits in, e.g. ``train.warm_start`` (``""``: the top level)."""
    declared: Any = None
    """The declared default itself (the dataclass's, or the game constructor's)."""


@dataclass(frozen=True)
class SectionDoc:
    """One section of the config (``""``: the top-level keys) and its keys."""

    name: str
    """The section's dotted key, e.g. ``selfplay.resign``."""
    doc: str
    """The section field's docstring (the top level: ``TrainConfig``'s)."""
    declared_in: str
    """The dataclass that declares its keys, e.g. ``ultimate_rl.selfplay.schema.ResignSettings``."""
    keys: tuple[KeyDoc, ...]
    """Its keys (not those of the sections inside it)."""


@dataclass(frozen=True)
class Preset:
    """One option of a config group: a game, a ``train.presets`` preset or a file
    ``configs/GROUP/NAME.yaml``."""

    group: str
    """The config group, e.g. ``model``."""
    name: str
    """The option's name, as in ``model=NAME``."""
    description: str
    """Its one sentence (a game: its class docstring's first; a file: its header comment's)."""
    values: dict[str, Any]
    """What it sets (a global ``experiment`` preset: for the whole config)."""
    picks: dict[str, str]
    """The presets it picks in other groups (its defaults list), e.g. ``{"model": "mlp"}``."""
    default: bool
    """Whether ``configs/train.yaml``'s defaults list picks it."""


def attribute_docs(cls: type) -> dict[str, tuple[str, str]]:
    """``name -> (annotation as written, docstring)`` for each annotated attribute of ``cls``'s
    body; the docstring is the string literal right under it, ``""`` when there is none."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = next(node for node in tree.body if isinstance(node, ast.ClassDef)).body
    found = {}
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            doc = ""
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                doc = after.value.value if isinstance(after.value.value, str) else ""
            found[node.target.id] = (ast.unparse(node.annotation), inspect.cleandoc(doc))
    return found


def default_choices() -> dict[str, str | None]:
    """The option ``configs/train.yaml``'s defaults list picks in each config group, by group
    (``None``: the group is off by default, e.g. ``experiment``)."""
    entries = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "train.yaml").defaults)
    assert isinstance(entries, list)
    return {str(k): v for entry in entries if isinstance(entry, dict) for k, v in entry.items()}


def group_presets(group: str) -> list[Preset]:
    """The options of a config group: the games (``games.registry``), the presets of
    ``train.presets.PRESETS``, or the files of ``configs/GROUP/`` (``experiment``)."""
    chosen = default_choices().get(group)
    if group == "game":  # derived from the list of games
        return [
            Preset(
                group,
                name,
                _first_sentence(inspect.getdoc(cls) or ""),
                game_node(name),
                {},
                name == chosen,
            )
            for name, cls in GAMES.items()
        ]
    if group in PRESETS:
        return [
            Preset(group, name, preset.description, preset_values(group, name), {}, name == chosen)
            for name, preset in PRESETS[group].items()
        ]
    out = []
    for path in sorted((CONFIG_DIR / group).glob("*.yaml")):
        values = OmegaConf.to_container(OmegaConf.load(path))
        assert isinstance(values, dict)
        picks = _picks(values.pop("defaults", []))
        values = {str(k): v for k, v in values.items()}
        description = _header_sentence(path.read_text())
        out.append(Preset(group, path.stem, description, values, picks, path.stem == chosen))
    return out


def _picks(entries: Any) -> dict[str, str]:
    """``{group: option}`` of a preset's defaults list (``override /model: mlp``)."""
    pairs = [(k, v) for entry in entries if isinstance(entry, dict) for k, v in entry.items()]
    return {str(k).removeprefix("override ").lstrip("/"): str(v) for k, v in pairs}


def config_sections() -> list[SectionDoc]:
    """Every section of the training config, the top level first, each before those inside it;
    keys show the default config's values."""
    chosen = {p.group: p.values for g in default_choices() for p in group_presets(g) if p.default}
    out: list[SectionDoc] = []
    _walk(TrainConfig, "", inspect.cleandoc(TrainConfig.__doc__ or ""), chosen, out)
    return out


def config_reference() -> list[KeyDoc]:
    """Every key of the training config with its type, default and docstring."""
    return [key for section in config_sections() for key in section.keys]


def _walk(
    schema: type, prefix: str, doc: str, chosen: dict[str, Any], out: list[SectionDoc]
) -> None:
    """Appends the section ``schema`` at ``prefix`` (and the sections inside it) to ``out``;
    ``chosen`` holds the default presets' values by group."""
    docs = attribute_docs(schema)
    entries, inner = [], []
    for f in fields(schema):
        key, value = f"{prefix}{f.name}", field_default(f)
        annotation, field_doc = docs.get(f.name, ("", ""))
        if is_dataclass(value):
            inner.append((type(value), f"{key}.", field_doc))
        else:
            entries.append((key, annotation, field_doc, value))
    if schema is GameSection:
        entries += game_options()
    section, keys = prefix[:-1], []
    for key, annotation, text, value in entries:
        shown = yaml_value(_preset_value(key, value, chosen))
        keys.append(KeyDoc(key, annotation, shown, text, section, value))
    declared_in = f"{schema.__module__}.{schema.__qualname__}"
    out.append(SectionDoc(section, doc, declared_in, tuple(keys)))
    for inner_schema, inner_prefix, inner_doc in inner:
        _walk(inner_schema, inner_prefix, inner_doc, chosen, out)


def game_options() -> list[tuple[str, str, str, Any]]:
    """``(key, type, docstring, default)`` of each game option (``game.size``...): the game
    constructors' arguments, documented by attribute docstrings in the game's class."""
    out = []
    for name, cls in GAMES.items():
        docs = attribute_docs(cls)
        for param in game_parameters(name):
            annotation, doc = docs.get(param.name, (str(param.annotation), ""))
            default = None if param.default is param.empty else param.default
            if doc:
                doc = f"{doc} Only with ``game={name}``."
            out.append((f"game.{param.name}", annotation, doc, default))
    return out


def preset_defaults(preset: Preset, keys: Sequence[KeyDoc]) -> dict[str, str]:
    """What each of ``keys`` (keys of ``preset``'s group) is under ``preset``, as YAML writes
    it: the preset's value, else the declared default."""
    files = {preset.group: preset.values}
    return {key.key: yaml_value(_preset_value(key.key, key.declared, files)) for key in keys}


def _preset_value(key: str, declared: Any, presets: Mapping[str, Any]) -> Any:
    """``key``'s value under ``presets`` (group -> the values a preset sets): the preset's
    (a mapping merged over the declared one, as Hydra merges it) or else ``declared``."""
    node: Any = presets
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return declared
        node = node[part]
    if isinstance(node, Mapping) and isinstance(declared, Mapping):
        return {**declared, **node}
    return node


_PLAIN = re.compile(r"[A-Za-z_][\w.\-/]*")
_RESERVED = {"null", "true", "false", "yes", "no", "on", "off", "y", "n", "~"}


def yaml_value(value: Any) -> str:
    """``value`` as YAML writes it in flow style: ``null``, ``true``, ``0.002``, ``[random, uct]``,
    ``{policy: 1.0}``; a string that YAML would misread is quoted."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        plain = _PLAIN.fullmatch(value) and value.lower() not in _RESERVED
        return value if plain else json.dumps(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {yaml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    return str(value)


def _header_sentence(text: str) -> str:
    """The first sentence of a YAML file's leading comment, skipping a ``@package`` line and
    the line that points to this reference."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        comment = line.lstrip("#").strip()
        if not comment.startswith("@package") and REFERENCE_PAGE not in comment:
            lines.append(comment)
    return _first_sentence(" ".join(lines))


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+(?=[A-Za-z])", " ".join(text.split()), maxsplit=1)[0]


def config_reference_markdown() -> str:
    """The reference page (Markdown): an introduction, then one part per section, with the
    presets of its config group and a table of key, type, default and meaning."""
    choices = default_choices()
    sections = config_sections()
    names = {s.name for s in sections}
    keys = [key for section in sections for key in section.keys]
    parts = [_introduction(choices)]
    for section in sections:
        group_keys = [k for k in keys if k.key.startswith(f"{section.name}.")]
        presets = _presets_markdown(section.name, group_keys) if section.name in choices else ""
        parts.append(_section_markdown(section, presets))
        if section.name == "":
            parts += [_experiments_markdown(g) for g in choices if g not in names]
    return "\n\n".join(parts) + "\n"


def write_config_reference(path: str | Path = REFERENCE_PAGE) -> Path:
    """Writes ``config_reference_markdown()`` to ``path`` when it changed (so ``mkdocs serve``
    does not rebuild in a loop), creating its folder; returns the path."""
    target = Path(path)
    text = config_reference_markdown()
    if not target.is_file() or target.read_text() != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return target


def _introduction(choices: dict[str, str | None]) -> str:
    picked = ", ".join(f"`{g}={o}`" for g, o in choices.items() if o is not None)
    return textwrap.dedent(
        f"""\
        # Training configuration

        <!-- Generated by ultimate_rl.train.reference.config_reference_markdown() from the
        dataclasses that declare the keys; edit their docstrings, not this page. -->

        `scripts/train.py` composes its config with Hydra from `configs/train.yaml` and the
        config groups it lists. Any key below can be set on the command line
        (`python scripts/train.py train.iterations=5 selfplay.workers=2`), and a config group
        picks a preset (`model=resnet`, `experiment=uttt_cpu`). A run saves the config
        it ran with as `config.yaml` in its run folder.

        **Default** is the value `python scripts/train.py` runs with: that of the default
        presets ({picked}), else the declared default, which a preset that leaves the key out
        gets too. Each section names the dataclass that declares its keys: a key's meaning
        is the docstring under its field there, and this page is generated from them."""
    )


def _section_markdown(section: SectionDoc, presets: str) -> str:
    depth = "##" if section.name.count(".") == 0 else "###"
    title = f"`{section.name}`" if section.name else "Top-level keys"
    parts = [f"{depth} {title}", _one_line(section.doc)]
    parts.append(f"Declared in `{section.declared_in}`.")
    rows = ["| Key | Type | Default | Meaning |", "| --- | --- | --- | --- |"]
    for key in section.keys:
        rows.append(_row((_code(key.key), _code(key.type), _code(key.default), key.doc)))
    return "\n\n".join([*parts, *filter(None, [presets]), "\n".join(rows)])


def _presets_markdown(group: str, keys: list[KeyDoc]) -> str:
    """The presets of a section's config group: what each sets besides the defaults shown."""
    presets = group_presets(group)
    if len(presets) == 1:
        return f"Preset: `{group}={presets[0].name}` (the declared defaults)."
    where = (
        "one per game of `ultimate_rl/games/registry.py`"
        if group == "game"
        else "declared in `ultimate_rl/train/presets.py`"
    )
    lines = [f"Presets (`{group}=NAME`, {where}):", ""]
    lines += ["| Preset | Description | Sets, besides the defaults below |", "| --- | --- | --- |"]
    for preset in presets:
        name = f"`{preset.name}` (default)" if preset.default else f"`{preset.name}`"
        lines.append(_row((name, preset.description, _preset_changes(preset, keys))))
    return "\n".join(lines)


def _experiments_markdown(group: str) -> str:
    """A group of global presets (``experiment``): each sets keys of several sections."""
    lines = [f"## `{group}`", ""]
    lines.append(
        f"Presets that set keys across the sections (`{group}=NAME`, files in "
        f"`configs/{group}/`); a key given on the command line still wins."
    )
    lines += ["", "| Preset | Description | Picks |", "| --- | --- | --- |"]
    for preset in group_presets(group):
        picks = ", ".join(f"`{g}={o}`" for g, o in preset.picks.items()) or "—"
        name = f"`{preset.name}` (default)" if preset.default else f"`{preset.name}`"
        lines.append(_row((name, preset.description, picks)))
    return "\n".join(lines)


def _preset_changes(preset: Preset, keys: list[KeyDoc]) -> str:
    """The keys whose value under ``preset`` differs from the default shown for them."""
    values = preset_defaults(preset, keys)
    changed = [
        _code(f"{key.key.removeprefix(preset.group + '.')}: {values[key.key]}")
        for key in keys
        if values[key.key] != key.default
    ]
    return ", ".join(changed) or "—"


def _row(cells: Sequence[str]) -> str:
    """A Markdown table row; a ``|`` inside a cell is escaped."""
    return "| " + " | ".join(_one_line(c).replace("|", "\\|") for c in cells) + " |"


def _code(text: str) -> str:
    """``text`` as inline code; with a ``|``, as HTML, which no Markdown table splits."""
    if "|" not in text:
        return f"`{text}`"
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


def _one_line(text: str) -> str:
    return " ".join(text.split())
