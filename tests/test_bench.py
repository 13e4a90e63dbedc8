"""The engine benchmark runs end to end through its Hydra entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ultimate_rl.runtime.machine import this_machine

ENGINE_FIGURES = {
    "uttt_random_playouts_per_s",
    "numerical_ttt_random_playouts_per_s",
    "tictactoe_random_playouts_per_s",
    "uttt_env_steps_per_s",
    "uttt_vector_env_steps_per_s",
}


def test_engine_benchmark_prints_the_five_figures(tmp_path: Path) -> None:
    """Runs as a subprocess, as CI and users run it; its LAST line must be the JSON figures."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [
            sys.executable,
            "scripts/bench.py",
            "suite=engine",
            "seconds=0.05",
            f"hydra.run.dir={tmp_path}",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.stdout.startswith(f"machine: {this_machine().label()}\n")
    assert set(figures) >= ENGINE_FIGURES
    assert all(figures[k] > 0 for k in ENGINE_FIGURES)
