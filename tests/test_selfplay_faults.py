"""Self-play worker processes: a killed worker is replaced and its games replayed unchanged;
Ctrl-C or SIGTERM to the whole process group stops a run cleanly, and it resumes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from test_train_loop import ROOT, TINY, checkpoint_iteration, wait_for_iteration

from ultimate_rl.games import make
from ultimate_rl.nn import build_model
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.selfplay.schema import SelfPlaySettings

GAME_SPEC = {"name": "tictactoe", "options": {}}


def make_pool(workers: int = 2, **options) -> SelfPlayPool:
    game = make("tictactoe")
    model = build_model(game, ModelConfig.from_dict({"arch": "mlp", "mlp_hidden": [16]}), seed=0)
    search = SearchConfig.from_dict({"num_simulations": 64})
    settings = SelfPlaySettings(workers=workers, parallel_games=4, **options)
    return SelfPlayPool(GAME_SPEC, model, search, settings, torch.device("cpu"))


def kill_worker_0_when_its_job_is_sent(backend) -> None:
    """Worker 0 dies the moment its next job is sent, once: a kill mid-round on any machine
    (processes or Ray backend)."""
    submit, victim, killed = backend.submit, backend.pids()[0], []

    def submit_then_kill(actor, job):
        submit(actor, job)
        if actor == 0 and not killed:
            killed.append(os.kill(victim, signal.SIGKILL))

    backend.submit = submit_then_kill


def test_a_worker_killed_mid_round_is_replaced_and_the_round_is_unchanged(caplog):
    pool = make_pool()
    try:
        expected = pool.play(40, seed=7)  # also waits until both workers are up
        kill_worker_0_when_its_job_is_sent(pool.backend)
        again = pool.play(40, seed=7)
        assert pool.backend.replaced == 1
    finally:
        pool.close()
    assert again.stats.games == 40
    for name in ("states", "policies", "values", "full_search"):
        np.testing.assert_array_equal(getattr(again, name), getattr(expected, name))
    assert "self-play worker 0 died (exit code -9); replaced" in caplog.text


def start_in_own_group(run_dir: Path, *overrides: str) -> subprocess.Popen:
    """``scripts/train.py`` with two worker processes, in a process group of its own, as a
    terminal runs it (a terminal's Ctrl-C reaches every process of the group)."""
    settings = [] if "resume=true" in overrides else [*TINY, "selfplay.workers=2"]
    command = [sys.executable, "scripts/train.py", *settings, f"hydra.run.dir={run_dir}"]
    return subprocess.Popen(
        [*command, "eval.every=0", "selfplay.games_per_iteration=32", *overrides],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def stop_group_after(process: subprocess.Popen, iteration: int, signum: int) -> str:
    """Signals the whole group as the round after ``iteration`` starts its self-play; asserts a
    clean exit and returns the output."""
    output = wait_for_iteration(process, iteration)
    os.killpg(process.pid, signum)
    rest, _ = process.communicate(timeout=180)
    output += rest
    assert process.returncode == 0, output
    assert "stop requested" in output and "Error" not in output, output
    return output


def test_ctrl_c_and_sigterm_to_the_process_group_stop_cleanly_and_resume(tmp_path: Path):
    stop_group_after(start_in_own_group(tmp_path, "train.iterations=1000"), 1, signal.SIGINT)
    saved = checkpoint_iteration(tmp_path)  # loads: the checkpoint is intact
    step = json.loads((tmp_path / "summary.json").read_text())["steps"]

    resumed = start_in_own_group(tmp_path, "resume=true", "train.iterations=1000")
    output = stop_group_after(resumed, saved + 1, signal.SIGTERM)
    assert f"resumed {tmp_path} at iteration {saved}" in output
    first = re.search(rf"^iter {saved + 1}/\d+ \| step (\d+)", output, flags=re.M)
    assert first is not None and int(first.group(1)) == step + 5  # steps_per_iteration=5
    assert checkpoint_iteration(tmp_path) >= saved + 1
