"""Agent specs: how a match names its players, so every worker process can rebuild them.

A spec is a name for ``ultimate_rl.agents.make`` plus its options, written as a dict
(``{"name": "uct", "num_simulations": 1000}``) or a string (``"uct:num_simulations=1000"``,
``"network:checkpoint=runs/x/checkpoints/step_100.pt,num_simulations=50"``). An optional
``label`` names the player in tables and game records; by default it is derived from the spec
(``uct-1000``, ``random``, ``network(step_100)``).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultimate_rl.agents.base import Agent


class EvaluationError(ValueError):
    """Bad evaluator input (agent spec, checkpoint, match file, settings), found before playing."""


@dataclass(frozen=True)
class AgentSpec:
    """A player: the agent name, its options (sorted, hashable) and a display label."""

    name: str
    options: tuple[tuple[str, Any], ...] = ()
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", default_label(self.name, dict(self.options)))

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.options)

    def with_options(self, **extra: Any) -> AgentSpec:
        """The same player with more options (the label is kept)."""
        return AgentSpec(self.name, tuple(sorted({**self.kwargs, **extra}.items())), self.label)

    def with_label(self, label: str) -> AgentSpec:
        return AgentSpec(self.name, self.options, label)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.kwargs, "label": self.label}

    def __str__(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.options)
        return f"{self.name}:{opts}" if opts else self.name


AgentSpecLike = str | Mapping[str, Any] | AgentSpec


def parse_spec(spec: AgentSpecLike) -> AgentSpec:
    """An ``AgentSpec`` from a string, a dict or a spec; a clear error for anything else."""
    if isinstance(spec, AgentSpec):
        return spec
    if isinstance(spec, str):
        name, _, rest = spec.strip().partition(":")
        options: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in rest.split(","))):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise EvaluationError(
                    f"bad agent spec {spec!r}: option {item!r} is not key=value; "
                    "write e.g. 'uct:num_simulations=1000,seed=1'"
                )
            options[key.strip()] = _literal(value.strip())
    elif isinstance(spec, Mapping):
        options = {str(k): v for k, v in spec.items()}
        name = options.pop("name", None)
        if not isinstance(name, str):
            raise EvaluationError(
                f"bad agent spec {dict(spec)!r}: it needs a 'name' (e.g. {{'name': 'uct', "
                "'num_simulations': 1000}})"
            )
    else:
        raise EvaluationError(
            f"an agent spec is a string like 'uct:num_simulations=1000' or a dict, got "
            f"{type(spec).__name__}"
        )
    if not name:
        raise EvaluationError(f"bad agent spec {spec!r}: the agent name is empty")
    label = str(options.pop("label", "") or "")
    return AgentSpec(name, tuple(sorted(options.items())), label)


def _literal(text: str) -> Any:
    """``1000`` -> int, ``0.5`` -> float, ``true``/``none`` -> bool/None, anything else a string."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def default_label(name: str, options: Mapping[str, Any]) -> str:
    """``uct-1000`` for a simulation count alone, ``network(step_100,...)`` with a checkpoint."""
    shown = {k: v for k, v in options.items() if k != "seed"}
    if not shown:
        return name
    if set(shown) == {"num_simulations"}:
        return f"{name}-{shown['num_simulations']}"
    parts = [Path(str(v)).stem if k == "checkpoint" else f"{k}={v}" for k, v in shown.items()]
    return f"{name}({','.join(parts)})"


AgentFactory = Callable[[AgentSpec, int | None], Agent]


def takes_option(agent: object, option: str) -> bool:
    """Whether the agent's constructor names ``option`` (a catch-all ``**options`` does not
    count: it usually forwards to something stricter)."""
    try:
        return option in inspect.signature(type(agent)).parameters
    except (TypeError, ValueError):
        return False


def build_agent(spec: AgentSpec, seed: int | None = None) -> Agent:
    """Builds the agent through ``ultimate_rl.agents.make``; ``seed`` (for agents that take one)
    is used unless the spec fixes its own, so each game is reproducible from its own seed."""
    from ultimate_rl import agents

    options = spec.kwargs
    if seed is not None and "seed" not in options:
        options["seed"] = seed
    return agents.make(spec.name, **options)
