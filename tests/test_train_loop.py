"""The training loop end to end on tiny settings: run folder, exact resume, kill and Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from helpers import tiny_run_overrides

from ultimate_rl.nn import load_checkpoint
from ultimate_rl.runtime.faults import FAULT_ENV
from ultimate_rl.runtime.machine import Machine, this_machine
from ultimate_rl.train import prepare_run, train
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.logs import STATUS_LOG
from ultimate_rl.train.run import compose_train_config

ROOT = Path(__file__).resolve().parents[1]
TINY = tiny_run_overrides(
    "selfplay.playout_cap.fraction_full=0.5",
    "train.probe_image_every=1",
    "optim.warmup_steps=2",
    "eval.every=1",
    "eval.games=4",
    "eval.opponents=[random,perfect]",
    "eval.optimal_positions=20",
)


def tiny(*extra: str):
    return compose_train_config([*TINY, *extra])


def checkpoint_iteration(run_dir: Path) -> int:
    return int(load_checkpoint(run_dir / CHECKPOINT).extra["progress"]["iteration"])


def test_run_folder_holds_config_events_checkpoints_and_evaluations(tmp_path: Path):
    summary = train(tiny("train.iterations=2"), tmp_path)
    assert summary["iterations"] == 2 and summary["steps"] == 10 and not summary["interrupted"]
    assert (tmp_path / "config.yaml").is_file()
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert Machine.from_dict(saved["machine"]) == this_machine()  # what compare.py checks
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))
    status = (tmp_path / STATUS_LOG).read_text().splitlines()  # the console's lines, kept
    assert status[0] == f"machine: {this_machine().label()}" and status[1].startswith("inference")
    assert [line.split(" |")[0] for line in status[2:]] == ["iter 1/2", "iter 2/2"]
    report = json.loads((tmp_path / "evaluations" / "iter_00002.json").read_text())
    assert set(report) >= {"random", "perfect", "optimal_rate", "iteration"}
    assert 0.0 <= report["optimal_rate"] <= 1.0
    assert report["random"]["games"] == 4
    checkpoint = load_checkpoint(tmp_path / CHECKPOINT, expected_game="tictactoe")
    assert checkpoint.step == 10
    assert sorted(p.name for p in (tmp_path / "checkpoints").glob("iter_*.pt")) == [
        "iter_00001.pt",
        "iter_00002.pt",
    ]
    minutes = [
        load_checkpoint(tmp_path / "checkpoints" / f"iter_0000{i}.pt").extra["minutes"]
        for i in (1, 2)
    ]  # the training minute of each snapshot, for evaluate's curve by minute
    total = load_checkpoint(tmp_path / CHECKPOINT).extra["progress"]["seconds"] / 60
    assert 0 < minutes[0] < minutes[1] == pytest.approx(total)


def test_snapshots_beyond_the_last_few_are_kept_only_at_keep_every(tmp_path: Path):
    train(
        tiny(
            "train.iterations=7", "train.keep_checkpoints=2", "train.keep_every=3", "eval.every=0"
        ),
        tmp_path,
    )
    kept = sorted(p.name for p in (tmp_path / "checkpoints").glob("iter_*.pt"))
    assert kept == ["iter_00003.pt", "iter_00005.pt", "iter_00006.pt", "iter_00007.pt"]


def test_resumed_run_matches_an_uninterrupted_one_exactly(tmp_path: Path):
    straight, split = tmp_path / "straight", tmp_path / "split"
    common = ("eval.every=2", "optim.schedule=constant")  # cosine would depend on iterations
    train(tiny("train.iterations=3", *common), straight)
    train(tiny("train.iterations=2", *common), split)
    cfg, run_dir = prepare_run(tiny(f"resume={split}"), tmp_path / "unused", ["train.iterations=3"])
    assert run_dir == split and cfg.train.iterations == 3
    summary = train(cfg, run_dir)
    assert summary["iterations"] == 3 and summary["steps"] == 15
    status = (split / STATUS_LOG).read_text()  # the resume appended its lines
    assert [status.count(f"iter {i}/") for i in (1, 2, 3)] == [1, 1, 1]
    a = load_checkpoint(straight / CHECKPOINT)
    b = load_checkpoint(split / CHECKPOINT)
    for key, value in a.model_state.items():
        assert torch.equal(value, b.model_state[key]), key
    assert torch.equal(a.extra["replay"]["policies"], b.extra["replay"]["policies"])


def test_a_new_run_refuses_a_folder_that_holds_one(tmp_path: Path):
    train(tiny("train.iterations=1", "eval.every=0"), tmp_path)
    with pytest.raises(ValueError, match="resume=true"):
        prepare_run(tiny(), tmp_path, [])


def test_the_first_lines_name_the_machine_and_the_inference_path_auto_took_and_why(
    tmp_path: Path, capsys, monkeypatch
):
    monkeypatch.delenv("ULTIMATE_RL_INFERENCE")  # the suite pins auto; this run measures
    summary = train(tiny("train.iterations=1"), tmp_path)
    machine, first = capsys.readouterr().out.splitlines()[:2]
    assert machine == f"machine: {this_machine().label()}"
    assert first.startswith(f"inference: {summary['inference']} (auto, fastest passing at batch")
    for path in ("torch", "onnxruntime", "onnxruntime_int8"):
        assert f"{path} " in first and "/s" in first
    monkeypatch.setenv("ULTIMATE_RL_INFERENCE", "onnxruntime")
    train(tiny("train.iterations=1"), tmp_path / "pinned")
    assert capsys.readouterr().out.splitlines()[1] == (
        "inference: onnxruntime (selfplay.inference=auto, pinned by ULTIMATE_RL_INFERENCE)"
    )


def test_resume_removes_temp_files_of_interrupted_saves_only(tmp_path: Path, capsys):
    train(tiny("train.iterations=1", "eval.every=0"), tmp_path)
    folder = (tmp_path / CHECKPOINT).parent
    leftover, foreign = folder / ".latest.pt.q7x_2kd9.tmp", folder / "notes.tmp"
    leftover.write_bytes(b"half a checkpoint, as a SIGKILL during a save leaves it")
    foreign.write_text("not written by the checkpoint writer")
    capsys.readouterr()
    train(tiny("train.iterations=2", "eval.every=0"), tmp_path)
    assert not leftover.exists() and foreign.is_file()
    assert f"removed {leftover}" in capsys.readouterr().out
    assert checkpoint_iteration(tmp_path) == 2


def start_run(run_dir: Path, *overrides: str, fault: str = "") -> subprocess.Popen:
    """``scripts/train.py`` in a subprocess; a resumed run takes its settings from its folder.
    ``fault`` plans failpoints (``ultimate_rl.runtime.faults``) in it."""
    settings = [] if "resume=true" in overrides else TINY
    command = [
        sys.executable,
        "scripts/train.py",
        *settings,
        f"hydra.run.dir={run_dir}",
        *overrides,
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", FAULT_ENV: fault}
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def wait_for_iteration(process: subprocess.Popen, iteration: int, timeout: float = 300) -> str:
    """Reads the run's output until its status line for ``iteration``; returns the output."""
    assert process.stdout is not None
    output, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        output += line
        if re.match(rf"iter {iteration}/", line):
            return output
    process.kill()
    raise AssertionError(f"the run never reached iteration {iteration}:\n{output}")


def last_printed_iteration(output: str) -> int:
    return max(int(n) for n in re.findall(r"^iter (\d+)/", output, flags=re.M))


def test_sigkill_mid_run_loses_at_most_one_iteration_and_resumes(tmp_path: Path):
    process = start_run(tmp_path, "train.iterations=1000", "eval.every=3")
    output = wait_for_iteration(process, 3)
    time.sleep(0.3)  # somewhere inside the next iteration (self-play, optimiser or saving)
    process.send_signal(signal.SIGKILL)
    rest, _ = process.communicate(timeout=60)
    printed = last_printed_iteration(output + rest)
    saved = checkpoint_iteration(tmp_path)  # loads: the checkpoint is not damaged
    assert saved >= printed  # every reported iteration was saved first

    resumed = start_run(tmp_path, "resume=true", f"train.iterations={saved + 2}")
    output, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, output
    assert f"resumed {tmp_path} at iteration {saved}" in output
    assert checkpoint_iteration(tmp_path) == saved + 2


def test_resume_by_path_writes_into_the_run_and_creates_no_other_folder(tmp_path: Path):
    run_dir = tmp_path / "run"
    train(tiny("train.iterations=1", "eval.every=0"), run_dir)
    command = [sys.executable, str(ROOT / "scripts/train.py"), f"resume={run_dir}"]
    resumed = subprocess.run(
        [*command, "train.iterations=2"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert checkpoint_iteration(run_dir) == 2
    assert list(tmp_path.iterdir()) == [run_dir]  # no runs/NAME/DATE beside it


def test_ctrl_c_stops_cleanly_after_saving(tmp_path: Path):
    process = start_run(tmp_path, "train.iterations=1000", "eval.every=0")
    output = wait_for_iteration(process, 2)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output + rest
    assert "stop requested" in rest
    assert checkpoint_iteration(tmp_path) == last_printed_iteration(output + rest)
    assert json.loads((tmp_path / "summary.json").read_text())["interrupted"]


@pytest.mark.slow
def test_worker_processes_play_the_requested_games(tmp_path: Path):
    summary = train(
        tiny(
            "train.iterations=2", "eval.every=0", "selfplay.workers=2", "selfplay.parallel_games=4"
        ),
        tmp_path,
    )
    assert summary["iterations"] == 2
    assert summary["games"] == 2 * 8
