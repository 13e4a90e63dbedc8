"""``load_agent``: an exported agent file back to a playing ``Agent``, without Hydra or training."""

from __future__ import annotations

import os
from typing import Any

from ultimate_rl import agents
from ultimate_rl.agents.network import NetworkAgent
from ultimate_rl.export.bundle import AgentBundle, read_bundle


def agent_from_bundle(bundle: AgentBundle, **overrides: Any) -> NetworkAgent:
    """The network agent of a decoded bundle; ``overrides`` replace its search defaults."""
    return NetworkAgent(bundle.to_checkpoint(), **{**bundle.search, **overrides})


def load_agent(path: str | os.PathLike, **overrides: Any) -> NetworkAgent:
    """The agent stored in ``path`` (a ``.urla`` file from ``scripts/export.py``).

    ``overrides`` replace the file's default search settings, e.g. ``num_simulations=800``,
    ``num_simulations=0`` (the raw policy), ``device="cuda"``, ``seed=1``. A missing, damaged or
    stale file raises ``ultimate_rl.export.BundleError`` saying what is wrong.
    """
    return agent_from_bundle(read_bundle(path), **overrides)


# ``agents.make("file", path=PATH, **overrides)``: agent files as players in matches and ladders.
agents.register("file", load_agent)
