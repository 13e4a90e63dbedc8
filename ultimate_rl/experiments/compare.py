"""Training recipes compared at equal wall-clock: train each (recipe, seed), rate all in one pool.

A comparison file (``configs/compare/*.yaml``) names a ``base`` list of training overrides, the
``recipes`` (each a list of overrides on top of the base), the ``seeds`` and the ``minutes`` per
run, and the ``evaluate`` settings (``configs/evaluate.yaml``'s keys: ladder, games_per_opponent,
network options, ...). Every run trains in its own folder, one after the other, for
``train.max_minutes``: equal wall-clock is only fair when nothing else shares the machine. Then
every final network plays the UCT ladder, and ONE Bradley-Terry fit over all those games rates
them all (so recipes compare on one scale, with 95% intervals). Each recipe is then judged
against the first (the baseline): better, worse, or no measured difference (a null, reported
like the winners). With ``curve_minutes``, each run's snapshot at those earlier minutes joins the
same pool, and each recipe gets a learning curve (mean Elo by training minute): whether a lever
pays early, late, or only at the budget measured.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import yaml

from ultimate_rl.evaluate.cli import ladder_without, settings_from_config
from ultimate_rl.evaluate.curve import snapshot_minutes
from ultimate_rl.evaluate.ladder import Evaluation, evaluate_agents
from ultimate_rl.games import Game, make_from_config
from ultimate_rl.nn import load_checkpoint
from ultimate_rl.runtime.machine import Machine, this_machine
from ultimate_rl.train.checkpoints import CHECKPOINT, has_checkpoint

TRAIN_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train.py"
FINISHED = "summary.json"  # written by a training run when it ends (``interrupted`` or not)
UNKNOWN_MACHINE = "unknown (a run from before summaries named the machine)"
Z95 = 1.959964


@dataclass(frozen=True)
class Comparison:
    """What to compare (see the module doc); ``load`` reads it from a YAML file."""

    name: str
    recipes: dict[str, list[str]]
    seeds: list[int] = field(default_factory=lambda: [0, 1])
    minutes: float = 30.0
    base: list[str] = field(default_factory=list)
    evaluate: dict[str, Any] = field(default_factory=dict)
    curve_minutes: list[float] = field(default_factory=list)
    """Earlier points of the learning curve: each run's newest snapshot at or before each of
    these training minutes is rated beside the final networks (``train.keep_every`` decides
    how close a snapshot lies); empty rates the final networks only."""

    def __post_init__(self) -> None:
        if not self.recipes:
            raise ValueError("a comparison needs at least one recipe (the first is the baseline)")
        if len(set(self.seeds)) < 2:
            raise ValueError(f"give at least two distinct seeds, got {self.seeds}")
        if self.minutes <= 0:
            raise ValueError(f"minutes per run must be > 0, got {self.minutes}")
        early = [m for m in self.curve_minutes if not 0 < m < self.minutes]
        if early:
            raise ValueError(
                f"curve_minutes must lie between 0 and the run's {self.minutes:g} minutes "
                f"(the final network is always rated), got {early}"
            )

    @classmethod
    def load(cls, path: str | Path, **overrides: Any) -> Comparison:
        """The comparison in ``path`` (its ``name`` defaults to the file's stem), with
        ``overrides`` (e.g. ``seeds``, ``minutes``) replacing its values where not None."""
        data = yaml.safe_load(Path(path).read_text()) or {}
        data.setdefault("name", Path(path).stem)
        data.update({k: v for k, v in overrides.items() if v is not None})
        recipes = {str(k): [str(o) for o in v or []] for k, v in data.pop("recipes", {}).items()}
        return cls(recipes=recipes, **data)

    def select(self, names: Sequence[str]) -> Comparison:
        """Only the recipes ``names``, in that order (the first is the baseline); all when
        empty."""
        unknown = sorted(set(names) - set(self.recipes))
        if unknown:
            raise ValueError(f"unknown recipe(s) {unknown}; this file has {list(self.recipes)}")
        kept = {k: self.recipes[k] for k in names} if names else dict(self.recipes)
        return replace(self, recipes=kept)

    def runs(self) -> list[tuple[str, int]]:
        """Seed by seed, every recipe in turn: a drift in the machine's speed over the hours
        falls on every recipe alike, and an interrupted comparison has each recipe's first
        seeds."""
        return [(recipe, seed) for seed in self.seeds for recipe in self.recipes]


def run_dir(out: Path, recipe: str, seed: int) -> Path:
    return out / "runs" / recipe / f"seed{seed}"


def label(recipe: str, seed: int, minute: float | None = None) -> str:
    """A run's name in the pool; ``minute``: its snapshot at that point of the curve."""
    return f"{recipe}-s{seed}" if minute is None else f"{recipe}-s{seed}@{minute:g}min"


def curve_snapshots(folder: Path, minutes: Sequence[float]) -> dict[float, tuple[Path, float]]:
    """For each of ``minutes``: the run's newest numbered snapshot (``checkpoints/iter_*.pt``)
    saved at or before it, and the minute it was saved; a minute with none that early is left
    out. Each snapshot is read once."""
    if not minutes:
        return {}
    found = [(path, load_checkpoint(path)) for path in folder.glob("checkpoints/iter_*.pt")]
    saved = snapshot_minutes(folder, [(c.step, c.extra) for _, c in found])
    by_minute = sorted((saved[c.step], path) for path, c in found if c.step in saved)
    chosen = {}
    for minute in minutes:
        early = [(at, path) for at, path in by_minute if at <= minute]
        if early:
            chosen[minute] = (early[-1][1], early[-1][0])
    return chosen


def train_command(comparison: Comparison, recipe: str, seed: int, folder: Path) -> list[str]:
    """``scripts/train.py`` for one run: a new one, or the resume of an interrupted one (whose
    saved config already holds the recipe; its summed training time keeps the budget)."""
    command = [sys.executable, str(TRAIN_SCRIPT), f"hydra.run.dir={folder}"]
    if has_checkpoint(folder):
        return [*command, f"resume={folder}"]
    budget = [f"seed={seed}", f"train.max_minutes={comparison.minutes}"]
    return [*command, *comparison.base, *comparison.recipes[recipe], *budget]


COMPILE_OVERRIDES = [
    "train.iterations=1",
    "train.steps_per_iteration=2",
    "train.warm_start.positions=256",
    "train.warm_start.steps=2",
    "eval.every=0",
    "eval.elo_every=0",
]
"""A throwaway run's overrides: one short pass through every stage (warm start, self-play,
optimiser), enough for numba to compile and cache each kernel a recipe's runs call."""


def compile_command(comparison: Comparison, recipe: str, folder: Path) -> list[str]:
    """``scripts/train.py`` for ``recipe``'s throwaway compiling run (``COMPILE_OVERRIDES``)."""
    overrides = [*comparison.base, *comparison.recipes[recipe], *COMPILE_OVERRIDES]
    return [sys.executable, str(TRAIN_SCRIPT), f"hydra.run.dir={folder}", *overrides]


def compile_kernels(comparison: Comparison, out: Path, log: Callable[[str], None]) -> None:
    """Before any run trains, each recipe with a run left to train makes one throwaway run
    outside every budget, then deletes it: a checkout's first run would otherwise spend part of
    its minutes compiling numba kernels (0.8 of 30 measured) that the runs after it find
    cached, and in seed-major order that run is always the baseline's first seed."""
    scratch = out / "compile"
    shutil.rmtree(scratch, ignore_errors=True)
    for recipe in comparison.recipes:
        if all(is_finished(run_dir(out, recipe, seed)) for seed in comparison.seeds):
            continue
        folder = scratch / recipe
        folder.mkdir(parents=True)
        log(f"{recipe}: compiling its kernels (a throwaway run, outside the budget)")
        run_logged(compile_command(comparison, recipe, folder), folder)
    shutil.rmtree(scratch, ignore_errors=True)  # a failure shows again in the recipe's runs


def run_logged(command: list[str], folder: Path) -> None:
    """``run_passing_interrupts`` with the output appended to ``folder/compare_train.log``; a
    Ctrl-C it passed on stops the comparison (KeyboardInterrupt)."""
    with open(folder / "compare_train.log", "a") as output:
        if run_passing_interrupts(command, output):
            raise KeyboardInterrupt


def train_all(
    comparison: Comparison,
    out: Path,
    log: Callable[[str], None] = print,
) -> dict[str, str]:
    """Trains every run in turn, skipping finished ones, after ``compile_kernels``; each run's
    status by label (``finished`` or ``failed: ...``). A failed run (e.g. an option this branch
    lacks) does not stop the others; a Ctrl-C does (KeyboardInterrupt), once the run it stopped
    has saved."""
    status = {}
    here = this_machine().label()
    compile_kernels(comparison, out, log)
    for recipe, seed in comparison.runs():
        folder = run_dir(out, recipe, seed)
        if is_finished(folder):
            log(f"{label(recipe, seed)}: finished before, skipped")
        else:
            warning = machine_warning(comparison, out, label(recipe, seed), here)
            if warning:
                log(warning)
            folder.mkdir(parents=True, exist_ok=True)
            command = train_command(comparison, recipe, seed, folder)
            log(f"{label(recipe, seed)}: training {comparison.minutes:g} min -> {folder}")
            run_logged(command, folder)
        finished = is_finished(folder)
        status[label(recipe, seed)] = "finished" if finished else _failure(folder)
        if not finished:
            log(f"{label(recipe, seed)}: {status[label(recipe, seed)]}")
    return status


def is_finished(folder: Path) -> bool:
    """The run in ``folder`` trained its whole budget: a summary not written by a stop."""
    path = folder / FINISHED
    return path.is_file() and not json.loads(path.read_text()).get("interrupted", False)


def run_passing_interrupts(command: list[str], output: IO[str]) -> bool:
    """Runs a training ``command`` in its own session and passes each Ctrl-C / SIGTERM on to it
    once, so that it stops as it does at a terminal (its iteration finished, its checkpoint
    saved) instead of being killed with this process; whether one came."""
    process = subprocess.Popen(
        command, stdout=output, stderr=subprocess.STDOUT, env=_env(), start_new_session=True
    )
    received = []

    def pass_on(signum: int, _frame: Any) -> None:
        received.append(signum)
        process.send_signal(signum)

    previous = {sig: signal.signal(sig, pass_on) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        process.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return bool(received)


def machine_of(summary: Mapping[str, Any]) -> str:
    """The label of the machine a finished run trained on, from its ``summary.json``."""
    machine = summary.get("machine")
    return Machine.from_dict(machine).label() if machine else UNKNOWN_MACHINE


def run_machine(folder: Path) -> str:
    """``machine_of`` the finished run in ``folder``."""
    return machine_of(json.loads((folder / FINISHED).read_text()))


def machine_warning(comparison: Comparison, out: Path, name: str, here: str) -> str | None:
    """A warning when run ``name``, about to train on machine ``here``, joins finished runs
    that trained on another (runs from before summaries named the machine are not counted)."""
    folders = [run_dir(out, recipe, seed) for recipe, seed in comparison.runs()]
    finished = {run_machine(f) for f in folders if is_finished(f)}
    others = finished - {here, UNKNOWN_MACHINE}
    if not others:
        return None
    return (
        f"warning: {name} trains on {here}, but finished runs of this comparison trained on "
        f"{'; '.join(sorted(others))}: equal wall-clock compares runs of one machine only"
    )


def _env() -> dict[str, str]:
    """This process's environment, with this checkout first on the path: the runs train with
    the code that compares them (not another installed copy)."""
    root = str(TRAIN_SCRIPT.parents[1])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, path] if path else [root])}


def _failure(folder: Path) -> str:
    """The run's last error line (a config error, Hydra's override error, an exception)."""
    lines = (folder / "compare_train.log").read_text().splitlines()
    said = [line.strip() for line in lines if line.strip() and "HYDRA_FULL_ERROR" not in line]
    errors = [line for line in said if "rror" in line or line.startswith("Could not override")]
    last = (errors or said or ["no output"])[-1]
    return f"failed: {last} (see {folder}/compare_train.log)"


def rate_all(comparison: Comparison, out: Path, status: Mapping[str, str]) -> Evaluation:
    """Every finished run's final network (and its snapshots at ``curve_minutes``) against the
    ladder, in one Bradley-Terry fit."""
    settings = dict(comparison.evaluate)
    network = {k: v for k, v in dict(settings.get("network") or {}).items() if v is not None}
    subjects = []
    for recipe, seed in comparison.runs():
        if status.get(label(recipe, seed)) != "finished":
            continue
        folder = run_dir(out, recipe, seed)
        checkpoints = {label(recipe, seed): folder / CHECKPOINT}
        for minute, (path, _) in curve_snapshots(folder, comparison.curve_minutes).items():
            checkpoints[label(recipe, seed, minute)] = path
        subjects += [
            {"name": "network", "checkpoint": str(path), "label": name, **network}
            for name, path in checkpoints.items()
        ]
    if not subjects:
        raise ValueError("no run finished: nothing to rate (see the runs' compare_train.log)")
    ladder = ladder_without(subjects, list(settings.get("ladder") or []))
    return evaluate_agents(
        _game(out, comparison),
        subjects,
        ladder,
        settings_from_config(settings),
        records_dir=out / "games",
    )


def _game(out: Path, comparison: Comparison) -> Game:
    config = yaml.safe_load((run_dir(out, *comparison.runs()[0]) / "config.yaml").read_text())
    return make_from_config(config["game"])


def summarise(
    comparison: Comparison, evaluation: Evaluation, status: Mapping[str, str], out: Path
) -> dict[str, Any]:
    """Per run: Elo [95% CI], score vs each rung, training minutes; per recipe: the mean Elo
    over seeds with an interval (rating error and seed spread) and its verdict against the
    baseline."""
    runs, recipes = [], {}
    for recipe, seed in comparison.runs():
        name = label(recipe, seed)
        row: dict[str, Any] = {"recipe": recipe, "seed": seed, "status": status.get(name)}
        if name in evaluation.subjects:
            rating, scalars = evaluation.rating(name), evaluation.scalars(name)
            summary = json.loads((run_dir(out, recipe, seed) / FINISHED).read_text())
            row |= {
                "elo": rating.elo,
                "ci": [rating.ci_low, rating.ci_high],
                "stderr": rating.stderr,
                "minutes": summary["minutes"],
                "positions": summary["positions"],
                "iterations": summary.get("iterations"),
                "machine": machine_of(summary),
                "score_vs": {
                    k.removeprefix("score_vs/"): v
                    for k, v in scalars.items()
                    if k.startswith("score_vs/")
                },
            }
            if comparison.curve_minutes:
                row["curve"] = _run_curve(comparison, evaluation, out, recipe, seed)
        runs.append(row)
    for recipe in comparison.recipes:
        rated = [r for r in runs if r["recipe"] == recipe and "elo" in r]
        if rated:
            recipes[recipe] = _mean_elo(rated)
            if comparison.curve_minutes:
                recipes[recipe]["curve"] = _recipe_curve(comparison, rated)
    baseline = recipes.get(next(iter(comparison.recipes)))
    for stats in recipes.values():
        stats["verdict"] = _verdict(stats, baseline)
    return {
        "name": comparison.name,
        "minutes_per_run": comparison.minutes,
        "machines": sorted({r["machine"] for r in runs if "machine" in r}),
        "seeds": comparison.seeds,
        "ladder": {o: evaluation.ratings[o].elo for o in evaluation.opponents},
        "runs": runs,
        "recipes": recipes,
    }


def _run_curve(
    comparison: Comparison, evaluation: Evaluation, out: Path, recipe: str, seed: int
) -> list[dict[str, Any]]:
    """A run's rated points by curve minute, the last its final network; ``at``: the training
    minute at which the rated network was saved."""
    folder = run_dir(out, recipe, seed)
    final = json.loads((folder / FINISHED).read_text())["minutes"]
    saved = {
        label(recipe, seed, minute): (minute, at)
        for minute, (_, at) in curve_snapshots(folder, comparison.curve_minutes).items()
    }
    saved[label(recipe, seed)] = (comparison.minutes, final)
    points = []
    for name, (minute, at) in sorted(saved.items(), key=lambda item: item[1]):
        if name in evaluation.subjects:
            rating = evaluation.rating(name)
            ci = [rating.ci_low, rating.ci_high]
            points.append(
                {"minute": minute, "at": at, "elo": rating.elo, "stderr": rating.stderr, "ci": ci}
            )
    return points


def _recipe_curve(comparison: Comparison, rated: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recipe's mean Elo by curve minute, over the seeds rated at that minute."""
    curve = []
    for minute in [*comparison.curve_minutes, comparison.minutes]:
        points = [p for r in rated for p in r["curve"] if p["minute"] == minute]
        if points:
            curve.append({"minute": minute, "seeds": len(points), **_mean_elo(points)})
    return curve


def _mean_elo(rated: list[dict[str, Any]]) -> dict[str, Any]:
    """The mean over seeds; its standard error adds each rating's error and the spread between
    seeds (which two seeds only roughly estimate)."""
    n = len(rated)
    elos = [r["elo"] for r in rated]
    mean = sum(elos) / n
    spread = sum((e - mean) ** 2 for e in elos) / (n - 1) if n > 1 else 0.0
    stderr = math.sqrt(sum(r["stderr"] ** 2 for r in rated) / n**2 + spread / n)
    return {"elo": mean, "stderr": stderr, "ci": [mean - Z95 * stderr, mean + Z95 * stderr]}


def _verdict(stats: dict[str, Any], baseline: dict[str, Any] | None) -> str:
    if baseline is None or stats is baseline:
        return "baseline"
    diff = stats["elo"] - baseline["elo"]
    margin = Z95 * math.hypot(stats["stderr"], baseline["stderr"])
    stats["vs_baseline"] = [diff, diff - margin, diff + margin]
    if diff - margin > 0:
        return "better"
    return "worse" if diff + margin < 0 else "null (no measured difference)"
