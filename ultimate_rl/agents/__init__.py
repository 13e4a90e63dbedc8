"""Players behind one interface (``Agent.select_action(game, state) -> action``), built by name.

``make("random" | "uct" | "perfect", **options)``; more players join through ``register``. The
network player lives in ``ultimate_rl.agents.network`` (written with the training code) and is
imported on first use of ``make("network", checkpoint=PATH)``, so this package loads without torch;
``make("file", path=PATH)`` loads an exported agent file (``.urla``) via ``ultimate_rl.loading``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from ultimate_rl.agents.base import Agent, Analysis, check_playable
from ultimate_rl.agents.perfect import PerfectAgent
from ultimate_rl.agents.random_agent import RandomAgent
from ultimate_rl.agents.uct import UctAgent

AgentFactory = Callable[..., Agent]

_REGISTRY: dict[str, AgentFactory] = {
    "random": RandomAgent,
    "uct": UctAgent,
    "perfect": PerfectAgent,
}
# Players whose module registers them when imported (kept lazy: they pull in heavy packages).
_LAZY_MODULES = {"network": "ultimate_rl.agents.network", "file": "ultimate_rl.loading"}


class AgentError(ValueError):
    """An unknown agent name or option."""


def register(name: str, factory: AgentFactory, replace: bool = False) -> None:
    """Makes ``make(name, **options)`` call ``factory(**options)``."""
    if name in _REGISTRY and not replace and _REGISTRY[name] is not factory:
        raise AgentError(f"agent {name!r} is already registered; pass replace=True to override it")
    _REGISTRY[name] = factory


def unregister(name: str) -> None:
    """Removes a registered agent (e.g. one a test or a plugin added)."""
    if name not in _REGISTRY:
        raise AgentError(f"agent {name!r} is not registered; registered: {sorted(_REGISTRY)}")
    del _REGISTRY[name]


def names() -> list[str]:
    """Every agent name ``make`` accepts."""
    return sorted({*_REGISTRY, *_LAZY_MODULES})


def make(name: str, **options: Any) -> Agent:
    """Builds the agent called ``name`` with keyword ``options`` (e.g. ``make("uct",
    num_simulations=1000, seed=0)``); unknown names and options raise AgentError listing the
    valid ones."""
    if name not in _REGISTRY and name in _LAZY_MODULES:
        importlib.import_module(_LAZY_MODULES[name])
    if name not in _REGISTRY:
        raise AgentError(f"unknown agent {name!r}; choose one of {names()}")
    factory = _REGISTRY[name]
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or C callable: let it check its own arguments
        return factory(**options)
    try:
        signature.bind(**options)
    except TypeError as err:
        valid = [p for p in signature.parameters if p != "self"]
        raise AgentError(f"bad options for agent {name!r} ({err}); its options: {valid}") from None
    return factory(**options)


__all__ = [
    "Agent",
    "AgentError",
    "Analysis",
    "PerfectAgent",
    "RandomAgent",
    "UctAgent",
    "check_playable",
    "make",
    "names",
    "register",
    "unregister",
]
