"""scripts/compare.py: recipes trained at equal wall-clock, rated in one pool, resumable."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from ultimate_rl.experiments import compare
from ultimate_rl.experiments import results as results_report
from ultimate_rl.experiments.compare import (
    FINISHED,
    Comparison,
    compile_command,
    curve_snapshots,
    is_finished,
    machine_warning,
    run_dir,
    run_passing_interrupts,
    train_command,
)
from ultimate_rl.games import make
from ultimate_rl.nn import ModelConfig, build_model, save_checkpoint
from ultimate_rl.runtime.machine import Machine
from ultimate_rl.train import check_config
from ultimate_rl.train.run import compose_train_config

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

TINY = {
    "name": "tiny",
    "seeds": [0, 1],
    "minutes": 0.05,
    "base": [
        "experiment=tictactoe_quick",
        "eval.every=0",
        "train.stop_when_perfect=false",
        "train.iterations=2",
        "selfplay.games_per_iteration=16",
        "selfplay.parallel_games=16",
        "train.steps_per_iteration=5",
        "train.min_replay=32",
        "train.progress_bar=false",
        "train.probe_image_every=0",
        "device=cpu",
    ],
    "recipes": {"baseline": [], "q_mix": ["optim.value_target_q_weight=0.5"]},
    "evaluate": {
        "ladder": ["random", "uct:num_simulations=10"],
        "games_per_opponent": 4,
        "network": {"num_simulations": 0},
        "workers": 1,
        "progress": False,
    },
}


def test_a_comparison_needs_two_seeds_and_names_its_recipes(tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(TINY))
    with pytest.raises(ValueError, match="at least two distinct seeds"):
        Comparison.load(path, seeds=[3])
    comparison = Comparison.load(path, minutes=2)
    assert comparison.name == "tiny" and comparison.minutes == 2
    assert list(comparison.select(["q_mix", "baseline"]).recipes) == ["q_mix", "baseline"]
    with pytest.raises(ValueError, match=r"unknown recipe\(s\) \['nope'\]"):
        comparison.select(["nope"])


def test_curve_minutes_lie_inside_the_run():
    with pytest.raises(ValueError, match=r"between 0 and the run's 0.05 minutes.*\[0.05\]"):
        Comparison(**{**TINY, "curve_minutes": [0.01, 0.05]})
    comparison = Comparison(**{**TINY, "curve_minutes": [0.01]})
    assert comparison.select(["q_mix"]).curve_minutes == [0.01]


def test_the_command_line_sets_or_clears_the_files_curve(tmp_path: Path):
    import compare as script  # scripts/compare.py

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**TINY, "curve_minutes": [0.01]}))
    curve = {
        (): [0.01],  # the file's
        ("--curve-minutes", "0.02", "0.03"): [0.02, 0.03],
        ("--curve-minutes",): [],  # the final networks only
    }
    for flags, minutes in curve.items():
        args = script.parse_args([str(path), *flags])
        assert script.comparison_of(args).curve_minutes == minutes


def test_a_curve_point_is_the_newest_snapshot_saved_by_that_minute(tmp_path: Path):
    config = ModelConfig(arch="resnet", blocks=1, channels=8, value_hidden=8)
    model = build_model(make("tictactoe"), config, seed=0)
    for iteration, minutes in ((0, 1.0), (10, 4.0), (20, 7.5)):
        save_checkpoint(
            tmp_path / "checkpoints" / f"iter_{iteration:05d}.pt",
            model=model,
            game_name="tictactoe",
            step=100 * iteration,
            extra={"minutes": minutes},
        )
    assert curve_snapshots(tmp_path, [0.5, 5.0, 7.5]) == {  # none saved by minute 0.5
        5.0: (tmp_path / "checkpoints" / "iter_00010.pt", 4.0),
        7.5: (tmp_path / "checkpoints" / "iter_00020.pt", 7.5),
    }


def test_a_new_run_gets_the_recipe_and_budget_an_interrupted_one_resumes(tmp_path: Path):
    comparison = Comparison(**TINY)
    folder = run_dir(tmp_path, "q_mix", 1)
    command = train_command(comparison, "q_mix", 1, folder)
    assert command[-4:] == [
        "device=cpu",
        "optim.value_target_q_weight=0.5",
        "seed=1",
        "train.max_minutes=0.05",
    ]
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "checkpoints" / "latest.pt").touch()
    assert train_command(comparison, "q_mix", 1, folder)[-1] == f"resume={folder}"


def test_the_compiling_run_is_the_recipe_cut_to_one_short_pass(tmp_path: Path):
    """Its overrides come last (Hydra's last value wins): the recipe's options, one iteration
    of two optimiser steps after a small warm start, no evaluation, no seed or budget."""
    comparison = Comparison(**TINY)
    command = compile_command(comparison, "q_mix", tmp_path / "compile" / "q_mix")
    assert command[2] == f"hydra.run.dir={tmp_path / 'compile' / 'q_mix'}"
    assert not any(a.startswith(("seed=", "train.max_minutes=")) for a in command)
    config = compose_train_config(command[3:])
    assert config.optim.value_target_q_weight == 0.5
    assert (config.train.iterations, config.train.steps_per_iteration) == (1, 2)
    assert (config.train.warm_start.positions, config.train.warm_start.steps) == (256, 2)
    assert config.eval.every == 0


def test_a_run_stopped_by_ctrl_c_is_not_finished(tmp_path: Path):
    """Its summary says so: the next call resumes it instead of rating a short run."""
    assert not is_finished(tmp_path)
    for interrupted in (True, False):
        (tmp_path / FINISHED).write_text(json.dumps({"interrupted": interrupted}))
        assert is_finished(tmp_path) is not interrupted


def test_ctrl_c_reaches_a_training_run_once_and_lets_it_finish(tmp_path: Path):
    """The run gets the signal (not a kill) and exits in its own time; the caller is told."""
    child = (
        "import signal, sys, time\n"
        "got = []\n"
        "signal.signal(signal.SIGINT, lambda *a: got.append(1))\n"
        "print('ready', flush=True)\n"
        "while not got: time.sleep(0.01)\n"
        "time.sleep(0.5)\n"
        "print('saved after', len(got), flush=True)\n"
    )
    log = tmp_path / "log"
    ready = threading.Event()

    def interrupt() -> None:
        while "ready" not in log.read_text():
            time.sleep(0.01)
        ready.set()
        os.kill(os.getpid(), signal.SIGINT)

    with open(log, "w") as output:
        threading.Thread(target=interrupt, daemon=True).start()
        assert run_passing_interrupts([sys.executable, "-c", child], output)
    assert ready.is_set() and log.read_text().split("\n")[1] == "saved after 1"
    with open(log, "w") as output:
        assert not run_passing_interrupts([sys.executable, "-c", "pass"], output)


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "compare").glob("*.yaml")))
def test_shipped_recipes_are_valid_training_configs(path: Path):
    """Every shipped recipe composes and passes the checks (keys of other branches aside)."""
    comparison = Comparison.load(path)
    assert next(iter(comparison.recipes)) == "baseline"
    for overrides in comparison.recipes.values():
        check_config(compose_train_config([*comparison.base, *overrides]))


def test_verdicts_report_nulls_as_well_as_winners():
    base = {"elo": 1000.0, "stderr": 20.0}
    assert compare._verdict(base, base) == "baseline"
    assert compare._verdict({"elo": 1100.0, "stderr": 20.0}, base) == "better"
    assert compare._verdict({"elo": 900.0, "stderr": 20.0}, base) == "worse"
    assert compare._verdict({"elo": 1030.0, "stderr": 20.0}, base).startswith("null")
    mean = compare._mean_elo([{"elo": 900.0, "stderr": 0.0}, {"elo": 1100.0, "stderr": 0.0}])
    assert mean["elo"] == 1000.0 and mean["stderr"] == pytest.approx(100.0)  # seed spread


def test_a_curve_is_reported_by_minute_for_each_recipe(tmp_path: Path):
    def point(minute: float, elo: float) -> dict:
        return {
            "minute": minute,
            "at": minute,
            "elo": elo,
            "stderr": 10.0,
            "ci": [elo - 20, elo + 20],
        }

    runs = [
        {
            "recipe": r,
            "seed": s,
            "elo": e,
            "stderr": 10.0,
            "ci": [e - 20, e + 20],
            "minutes": 30.0,
            "positions": 1000,
            "score_vs": {"uct-1000": 0.8},
            "curve": [point(10, e - 100), point(30, e)],
        }
        for r, s, e in (
            ("baseline", 0, 1400),
            ("baseline", 1, 1420),
            ("new", 0, 1500),
            ("new", 1, 1480),
        )
    ]
    recipes = {
        r: {**compare._mean_elo([x for x in runs if x["recipe"] == r]), "verdict": "baseline"}
        for r in ("baseline", "new")
    }
    for recipe, stats in recipes.items():
        stats["curve"] = compare._recipe_curve(
            Comparison(**{**TINY, "minutes": 30, "curve_minutes": [10]}),
            [x for x in runs if x["recipe"] == recipe],
        )
    assert [(p["minute"], p["seeds"], p["elo"]) for p in recipes["new"]["curve"]] == [
        (10, 2, 1390.0),
        (30, 2, 1490.0),
    ]
    results = {
        "name": "t",
        "minutes_per_run": 30.0,
        "seeds": [0, 1],
        "ladder": {"uct-1000": 1000.0},
        "runs": runs,
        "recipes": recipes,
    }
    written = results_report.write_results(results, tmp_path)
    assert {p.name for p in written} == {"results.json", "results.md", "elo.png", "curve.png"}
    markdown = (tmp_path / "results.md").read_text()
    assert "| recipe | 10 min | 30 min |" in markdown
    assert "| new | 1390 [" in markdown and "| baseline | 1310 [" in markdown


def test_a_run_joining_runs_of_another_machine_is_warned_and_reported(tmp_path: Path):
    comparison = Comparison(**TINY)
    fast = Machine("AMD EPYC", 2, ("avx2", "avx512f", "avx512_vnni"))
    slow = Machine("AMD EPYC", 2, ("avx2",))
    assert machine_warning(comparison, tmp_path, "q_mix-s0", slow.label()) is None  # none yet
    folder = run_dir(tmp_path, "baseline", 0)
    folder.mkdir(parents=True)
    summary = {"minutes": 0.05, "positions": 10, "iterations": 2}
    (folder / FINISHED).write_text(json.dumps(summary))  # from before machines were named
    assert machine_warning(comparison, tmp_path, "q_mix-s0", slow.label()) is None
    (folder / FINISHED).write_text(json.dumps({**summary, "machine": fast.as_dict()}))
    assert machine_warning(comparison, tmp_path, "q_mix-s0", fast.label()) is None
    warning = machine_warning(comparison, tmp_path, "q_mix-s0", slow.label())
    assert warning and "q_mix-s0 trains on AMD EPYC, 2 cores, avx2," in warning
    assert fast.label() in warning
    assert compare.run_machine(folder) == fast.label()

    runs = [
        {
            "recipe": recipe,
            "seed": 0,
            "elo": 1400.0,
            "stderr": 10.0,
            "ci": [1380.0, 1420.0],
            "minutes": 30.0,
            "iterations": iterations,
            "positions": 1000,
            "machine": machine.label(),
            "score_vs": {"uct-1000": 0.8},
        }
        for recipe, iterations, machine in (("baseline", 257, fast), ("new", 34, slow))
    ]
    results = {
        "name": "t",
        "minutes_per_run": 30.0,
        "seeds": [0],
        "machines": sorted({fast.label(), slow.label()}),
        "ladder": {"uct-1000": 1000.0},
        "runs": runs,
        "recipes": {"baseline": {**compare._mean_elo(runs[:1]), "verdict": "baseline"}},
    }
    markdown = results_report.results_markdown(results)
    assert "**The runs trained on 2 different machines**" in markdown
    assert "| baseline | 0 | 1400 [1380, 1420] | 30.0 | 257 | 1000 | B |" in markdown
    assert f"A = {slow.label()}; B = {fast.label()}." in markdown
    one = results_report.results_markdown({**results, "machines": [fast.label()]})
    assert "different machines" not in one


@pytest.mark.slow
def test_compare_trains_rates_in_one_pool_and_resumes(tmp_path: Path, capsys):
    """Tiny tictactoe runs (about a minute in all): every run rated in one fit, the report
    written, and a second call trains nothing."""
    import compare as script  # scripts/compare.py

    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY))
    out = tmp_path / "out"
    assert script.main([str(path), "--out", str(out)]) == 0
    assert capsys.readouterr().out.count("compiling its kernels") == 2  # once per recipe
    assert not (out / "compile").exists()
    results = json.loads((out / "results.json").read_text())
    assert [(r["recipe"], r["seed"]) for r in results["runs"]] == Comparison(**TINY).runs()
    assert set(results["ladder"]) == {"random", "uct-10"}
    assert set(results["recipes"]) == {"baseline", "q_mix"}
    assert all(r["ci"][0] <= r["elo"] <= r["ci"][1] for r in results["runs"])
    assert "| q_mix | 1 |" in (out / "results.md").read_text() and (out / "elo.png").is_file()
    assert len(results["machines"]) == 1 and all(r["iterations"] == 2 for r in results["runs"])
    assert "curve" not in results["recipes"]["baseline"] and not (out / "curve.png").exists()
    saved = yaml.safe_load((run_dir(out, "q_mix", 1) / "config.yaml").read_text())
    assert saved["optim"]["value_target_q_weight"] == 0.5 and saved["seed"] == 1
    capsys.readouterr()
    assert script.main([str(path), "--out", str(out), "--no-plot"]) == 0
    said = capsys.readouterr().out
    assert said.count("finished before, skipped") == 4 and "compiling" not in said
    # rated again with a learning curve: each run's snapshot of its first iteration joins
    minute = 0.9 * TINY["minutes"]
    arguments = [str(path), "--out", str(out), "--curve-minutes", str(minute)]
    assert script.main(arguments) == 0
    results = json.loads((out / "results.json").read_text())
    for recipe in ("baseline", "q_mix"):
        curve = results["recipes"][recipe]["curve"]
        assert [(p["minute"], p["seeds"]) for p in curve] == [(minute, 2), (TINY["minutes"], 2)]
    assert (out / "curve.png").is_file() and "Learning curve" in (out / "results.md").read_text()
