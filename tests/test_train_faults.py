"""A training run loses nothing, whatever breaks: each test injects one fault and resumes.

Damaged or missing ``latest.pt`` (resume from the newest intact snapshot), no intact checkpoint
(one line), a full disk (one line, the previous checkpoint intact), two runs on one folder (the
second refused, the lock gone with a killed holder), and SIGKILL at failpoints all through an
iteration, resumed each time, ending exactly where an uninterrupted run ends.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from test_train_loop import (
    ROOT,
    TINY,
    checkpoint_iteration,
    last_printed_iteration,
    start_run,
    tiny,
    wait_for_iteration,
)

from ultimate_rl.nn import load_checkpoint
from ultimate_rl.runtime.faults import FAULT_ENV, planned_faults
from ultimate_rl.train import RunFolderError, prepare_run, train
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.run import RunFolderLock

QUICK = ("eval.every=0",)


def run_script(*args: str, fault: str = "") -> subprocess.CompletedProcess:
    """``scripts/train.py ARGS`` to the end, stdout and stderr apart."""
    env = {**os.environ, FAULT_ENV: fault}
    command = [sys.executable, "scripts/train.py", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def cut_in_half(path: Path) -> bytes:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return data[: len(data) // 2]


def damaged_copies(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}.damaged-*"))


def test_a_damaged_latest_resumes_from_the_newest_snapshot_and_is_kept_aside(tmp_path: Path):
    train(tiny("train.iterations=3", *QUICK), tmp_path)
    folder = (tmp_path / CHECKPOINT).parent
    replay = len(load_checkpoint(folder / "latest.pt").extra["replay"]["policies"])
    damaged = cut_in_half(folder / "latest.pt")
    result = run_script(f"resume={tmp_path}", "train.iterations=4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "latest.pt is damaged; moved it to" in result.stdout
    assert "Resumed" in result.stdout and "from iter_00003.pt at iteration 3, step 15" in (
        result.stdout
    )
    assert f"lost: the optimiser's moments and the replay buffer ({replay} positions" in (
        result.stdout
    )
    [kept] = damaged_copies(folder, "latest.pt")
    assert kept.read_bytes() == damaged  # moved aside, never deleted or rewritten
    assert checkpoint_iteration(tmp_path) == 4


def test_a_missing_latest_and_a_damaged_snapshot_fall_back_to_an_older_one(tmp_path: Path, capsys):
    train(tiny("train.iterations=3", *QUICK), tmp_path)
    folder = (tmp_path / CHECKPOINT).parent
    (folder / "latest.pt").unlink()
    cut_in_half(folder / "iter_00003.pt")
    capsys.readouterr()
    cfg, run_dir = prepare_run(tiny(f"resume={tmp_path}"), tmp_path / "unused", [])
    summary = train(cfg, run_dir)
    out = capsys.readouterr().out
    assert "latest.pt is missing; iter_00003.pt is damaged too; moved it to" in out
    assert "from iter_00002.pt at iteration 2, step 10; lost: 1 iteration(s)," in out
    assert damaged_copies(folder, "iter_00003.pt")
    assert summary["iterations"] == 3 and checkpoint_iteration(tmp_path) == 3


def test_a_snapshot_resume_keeps_the_counters_and_random_streams(tmp_path: Path):
    """From a snapshot, the counters and random streams go on as from latest.pt; only the
    optimiser's moments and the replay differ."""
    train(tiny("train.iterations=2", *QUICK), tmp_path)
    latest = load_checkpoint(tmp_path / CHECKPOINT).extra
    snapshot = load_checkpoint(tmp_path / "checkpoints" / "iter_00002.pt").extra
    assert snapshot["progress"] == latest["progress"]
    assert snapshot["rng"]["numpy"] == latest["rng"]["numpy"]
    assert torch.equal(snapshot["rng"]["torch"], latest["rng"]["torch"])


def test_no_intact_checkpoint_is_one_line_that_names_the_folder_and_the_fix(tmp_path: Path):
    train(tiny("train.iterations=2", *QUICK), tmp_path)
    folder = (tmp_path / CHECKPOINT).parent
    for path in sorted(folder.glob("*.pt")):
        cut_in_half(path)
    result = run_script(f"resume={tmp_path}")
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: no intact checkpoint in {folder} (latest.pt is damaged")
    assert "start a new run in another folder" in line
    for name in ("latest.pt", "iter_00001.pt", "iter_00002.pt"):
        assert damaged_copies(folder, name), name  # every damaged file kept


def test_a_full_disk_stops_the_run_in_one_line_with_the_previous_checkpoint_intact(
    tmp_path: Path,
):
    # each iteration writes latest.pt then its snapshot: the 3rd write is iteration 2's latest
    args = [*TINY, *QUICK, f"hydra.run.dir={tmp_path}", "train.iterations=5"]
    result = run_script(*args, fault="checkpoint_write:3:enospc")
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line == (
        f"error: could not write latest.pt in {tmp_path / 'checkpoints'}: No space left on "
        f"device; the previous latest.pt is intact. Free some space, then resume with "
        f"resume={tmp_path}"
    )
    assert checkpoint_iteration(tmp_path) == 1
    assert not [p for p in (tmp_path / "checkpoints").iterdir() if p.name.endswith(".tmp")]
    again = run_script(f"resume={tmp_path}", "train.iterations=3")
    assert again.returncode == 0, again.stdout + again.stderr
    assert checkpoint_iteration(tmp_path) == 3


def test_a_second_run_on_a_live_runs_folder_is_refused_and_a_killed_one_bars_nothing(
    tmp_path: Path,
):
    live = start_run(tmp_path, "train.iterations=1000", *QUICK)
    try:
        wait_for_iteration(live, 1)
        second = run_script(f"resume={tmp_path}")
        assert second.returncode == 1, second.stdout + second.stderr
        [line] = second.stderr.strip().splitlines()
        holder = f"error: {tmp_path} is in use by a live training run (pid {live.pid} on"
        assert line.startswith(holder)
        assert "kill -TERM PID" in line
    finally:
        live.send_signal(signal.SIGKILL)
        live.communicate(timeout=60)
    saved = checkpoint_iteration(tmp_path)
    resumed = run_script(f"resume={tmp_path}", f"train.iterations={saved + 1}")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert checkpoint_iteration(tmp_path) == saved + 1


def test_the_run_folder_lock_refuses_a_second_holder_in_one_process(tmp_path: Path):
    with RunFolderLock(tmp_path), pytest.raises(RunFolderError, match="in use by a live"):
        train(tiny("train.iterations=1", *QUICK), tmp_path)
    train(tiny("train.iterations=1", *QUICK), tmp_path)  # released on exit
    assert checkpoint_iteration(tmp_path) == 1


def test_a_malformed_fault_plan_names_the_entry():
    assert planned_faults("optimiser:3:kill, checkpoint_write:1:enospc") == {
        "optimiser": [(3, "kill")],
        "checkpoint_write": [(1, "enospc")],
    }
    with pytest.raises(ValueError, match="'optimiser:0:kill'"):
        planned_faults("optimiser:0:kill")


# SIGKILL all through an iteration. Per iteration of the run below, a failpoint is passed:
# selfplay once, optimiser 5 times (steps), evaluation twice (two opponents), checkpoint_write
# twice (latest.pt, the snapshot), tensorboard once.
PASSES = {"selfplay": 1, "optimiser": 5, "evaluation": 2, "checkpoint_write": 2, "tensorboard": 1}
KILL_RUN = ("eval.every=1", "eval.games=4", "eval.opponents=[random,perfect]")
KILL_RUN += ("optim.schedule=constant", "train.stop_when_perfect=false")  # no iteration count


def kill_and_resume(run_dir: Path, kills: int, seed: int) -> dict[str, int]:
    """Kills the run at ``kills`` seeded failpoints (every point in turn, at a pass within its
    first 3 iterations), resuming each time; returns the figures of the kills."""
    rng = np.random.default_rng(seed)
    points, lost = list(PASSES), []
    for index in range(kills):
        point = points[index % len(points)]
        fault = f"{point}:{rng.integers(1, 3 * PASSES[point] + 1)}:kill"
        before = checkpoint_iteration(run_dir) if (run_dir / CHECKPOINT).exists() else 0
        # killed before its first checkpoint, a run has nothing to resume: it starts anew
        resume = ("resume=true",) if (run_dir / CHECKPOINT).exists() else KILL_RUN
        process = start_run(run_dir, *resume, "train.iterations=1000", fault=fault)
        output, _ = process.communicate(timeout=300)
        assert process.returncode == -signal.SIGKILL, f"{fault} did not kill:\n{output}"
        if before:
            assert f"resumed {run_dir} at iteration {before}," in output, output
        saved = checkpoint_iteration(run_dir) if (run_dir / CHECKPOINT).exists() else 0
        printed = [int(n) for n in re.findall(r"^iter (\d+)/", output, flags=re.M)]
        assert saved >= max(printed, default=0)  # every reported iteration was saved first
        lost.append(max(printed, default=before) + 1 - saved)  # the iteration in flight
    return {"kills": kills, "most_iterations_lost": max(lost), "saved": saved}


def assert_same_run(a: Path, b: Path) -> None:
    """Two runs' resume points are the same: step, replay, random streams and weights."""
    x, y = load_checkpoint(a / CHECKPOINT), load_checkpoint(b / CHECKPOINT)
    px, py = x.extra["progress"], y.extra["progress"]
    for key in ("iteration", "step", "games", "positions"):
        assert px[key] == py[key], key
    assert x.extra["rng"]["numpy"] == y.extra["rng"]["numpy"]
    assert torch.equal(x.extra["rng"]["torch"], y.extra["rng"]["torch"])
    for key, value in x.extra["replay"].items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, y.extra["replay"][key]), key
    for key, value in x.model_state.items():
        assert torch.equal(value, y.model_state[key]), key


def kill_test(tmp_path: Path, kills: int, seed: int) -> None:
    figures = kill_and_resume(tmp_path / "killed", kills, seed)
    assert figures["most_iterations_lost"] <= 1
    total = figures["saved"] + 2
    finish = start_run(tmp_path / "killed", "resume=true", f"train.iterations={total}")
    output, _ = finish.communicate(timeout=300)
    assert finish.returncode == 0, output
    straight = start_run(tmp_path / "straight", *KILL_RUN, f"train.iterations={total}")
    output, _ = straight.communicate(timeout=300)
    assert straight.returncode == 0, output
    assert last_printed_iteration(output) == total
    assert_same_run(tmp_path / "killed", tmp_path / "straight")
    print(f"kill test: {figures}")


def test_sigkill_at_every_failpoint_resumes_to_the_uninterrupted_run(tmp_path: Path):
    kill_test(tmp_path, kills=len(PASSES), seed=0)


@pytest.mark.slow
def test_sigkill_30_times_resumes_to_the_uninterrupted_run(tmp_path: Path):
    kill_test(tmp_path, kills=30, seed=1)
