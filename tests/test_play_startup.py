"""A play server starts without torch: only a network level's first move loads it (issue 42)."""

from __future__ import annotations

import select
import signal
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_play_faults import ENV, ROOT, free_port, play_command
from test_play_web import ApiClient

MAPS = Path("/proc/self/maps")


def torch_loaded(pid: int) -> bool:
    """Whether the process has torch's shared library mapped (it imported torch)."""
    return "libtorch" in Path(f"/proc/{pid}/maps").read_text()


def play_out(client: ApiClient, level: str, moves: int, rng: np.random.Generator) -> dict[str, Any]:
    """Plays random legal moves against ``level`` until the game ends or ``moves`` are made."""
    status, game = client.call("POST", "/api/games", {"side": "x", "level": level})
    assert status == 201, game
    for _ in range(moves):
        if game["over"]:
            break
        legal = [a for actions in game["board"]["cell_actions"] for a in actions]
        status, game = client.call(
            "POST", f"/api/games/{game['id']}/move", {"action": int(rng.choice(legal))}
        )
        assert status == 200, game
    return game


@pytest.mark.skipif(not MAPS.exists(), reason="reads /proc/PID/maps (Linux)")
@pytest.mark.parametrize("settings", [(), ("agent=random",)], ids=["levels", "agent=random"])
def test_the_server_imports_torch_only_when_a_network_level_moves(
    tmp_path: Path, settings: tuple[str, ...]
) -> None:
    port = free_port()
    command = play_command(tmp_path / "play.sqlite3", "game=uttt", f"port={port}", *settings)
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=ENV
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        line = proc.stdout.readline() if ready else ""
        assert "Play at http://" in line, line
        client = ApiClient(line.split()[2].rstrip("/"))
        rng = np.random.default_rng(0)
        assert play_out(client, "random", 100, rng)["over"]
        assert len(play_out(client, "uct-1000", 2, rng)["actions"]) == 4
        assert not torch_loaded(proc.pid), "torch was imported before a network level moved"
        game = play_out(client, "uttt_agent", 1, rng)
        assert len(game["actions"]) == 2 and torch_loaded(proc.pid)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()


def test_the_play_sites_agent_file_suffix_is_the_exports() -> None:
    from ultimate_rl.export.bundle import SUFFIX
    from ultimate_rl.play import opponent

    assert opponent.SUFFIX == SUFFIX  # spelled out in play so that it loads without torch
