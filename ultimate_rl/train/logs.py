"""What a run reports: TensorBoard scalars and probe images, the console line, JSON records.

Every iteration logs its scalars at x = iteration: each loss term under the tag the learner
returns it with (``loss/<name>``, ``train/<diagnostic>``: no list of names to keep up to date),
self-play statistics, replay size, time, evaluation and gating figures. Evaluations also go to
``evaluations/iter_N.json``; the end of a run writes ``summary.json`` and TensorBoard hparams.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from ultimate_rl.games import kernels, sample_positions
from ultimate_rl.nn import NetworkEvaluator
from ultimate_rl.nn.evaluator import PIN_ENV
from ultimate_rl.runtime.faults import failpoint
from ultimate_rl.runtime.machine import this_machine
from ultimate_rl.selfplay.worker import SelfPlayStats
from ultimate_rl.train.config import RunConfig
from ultimate_rl.train.learner import Progress
from ultimate_rl.train.tensorboard import probe_image

STEP_TAG = "train/step"  # TensorBoard scalars by iteration: the optimiser step reached ...
MINUTES_TAG = "time/minutes"  # ... and the training wall time (``evaluate.curve`` reads both,
# by name: the evaluate layer may not import this one; tests/test_evaluate_cli.py ties them)

PROBE_POSITIONS = 4
PROBE_SEED = 99


@dataclass
class IterationRecord:
    """What one iteration produced, as the logs show it."""

    selfplay: SelfPlayStats
    losses: dict[str, float]  # mean loss terms by TensorBoard tag; empty if no step ran
    replay_size: int
    pipeline: dict[str, float] = field(default_factory=dict)  # lag, throughputs, queue depth
    report: dict[str, Any] | None = None  # evaluation (matches, optimal rate, Elo)
    gate: dict[str, float] | None = None  # gating figures


def progress_bar(run: RunConfig, progress: Progress) -> tqdm:
    """The run's bar: by training minute when ``train.max_minutes`` bounds it (its time left is
    then true, where iterations would promise hours), by iteration otherwise."""
    common = {"disable": not run.train.progress_bar, "desc": "train", "dynamic_ncols": True}
    minutes = run.train.max_minutes
    if minutes is None:
        return tqdm(total=run.train.iterations, initial=progress.iteration, unit="iter", **common)
    shown = (
        "{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:g} min [{elapsed}<{remaining}{postfix}]"
    )
    initial = min(progress.seconds / 60, minutes)
    return tqdm(total=minutes, initial=initial, unit="min", bar_format=shown, **common)


STATUS_LOG = "status.log"
"""The run folder's copy of its console lines (machine, inference path, warm start, every
iteration), appended to across resumes: the run's record without the progress bar."""


class RunLog:
    """TensorBoard writer, progress bar and console line of one run, resumed at ``progress``.

    ``evaluate`` is the learner's network as the search calls it (float32), for the probe images;
    ``selfplay_path`` the evaluator whose path self-play runs (default ``evaluate``), for the
    inference line and hparams.
    """

    def __init__(
        self,
        run_dir: Path,
        run: RunConfig,
        progress: Progress,
        evaluate: NetworkEvaluator,
        selfplay_path: NetworkEvaluator | None = None,
    ):
        self.run_dir, self.run, self.evaluate = run_dir, run, evaluate
        self.selfplay_path = selfplay_path or evaluate
        game = run.game
        self.probes = [
            game.initial_state(),
            *sample_positions(game, PROBE_POSITIONS - 1, PROBE_SEED),
        ]
        self.writer = SummaryWriter(str(run_dir / "tensorboard"), purge_step=progress.iteration + 1)
        self.bar = progress_bar(run, progress)

    def say(self, line: str) -> None:
        """A console line, above the progress bar, and in the run folder's ``STATUS_LOG``."""
        tqdm.write(line)
        with open(self.run_dir / STATUS_LOG, "a") as log:
            log.write(line + "\n")

    def write_evaluation(self, progress: Progress, record: IterationRecord) -> None:
        """``evaluations/iter_N.json`` when the iteration evaluated or gated."""
        if record.report is None and record.gate is None:
            return
        write_json(
            self.run_dir / "evaluations" / f"iter_{progress.iteration:05d}.json",
            {
                "iteration": progress.iteration,
                "step": progress.step,
                "perfect": progress.perfect,
                **(record.report or {}),
                **({"gating": record.gate} if record.gate else {}),
            },
        )

    def iteration(self, progress: Progress, record: IterationRecord) -> None:
        """Scalars (and, when due, probe images) of one iteration, then the console line."""
        i = progress.iteration
        scalars = {
            **record.losses,
            STEP_TAG: progress.step,
            **{f"selfplay/{k}": v for k, v in record.selfplay.summary().items()},
            "replay/size": record.replay_size,
            **{f"pipeline/{k}": v for k, v in record.pipeline.items()},
            MINUTES_TAG: progress.seconds / 60,
            **{f"eval/{k}": v for k, v in flat_eval(record.report or {}).items()},
            **{f"gating/{k}": v for k, v in (record.gate or {}).items()},
        }
        for tag, value in scalars.items():
            self.writer.add_scalar(tag, value, i)
        failpoint("tensorboard")  # tests: a kill with the iteration's scalars unflushed
        self.writer.flush()
        every = self.run.train.probe_image_every
        if every and i % every == 0:
            self.probe_images(i)
        if self.run.train.max_minutes is None:
            self.bar.update(1)
        else:
            self.bar.update(min(progress.seconds / 60, self.bar.total) - self.bar.n)
            self.bar.set_postfix_str(f"iter {i}/{self.run.train.iterations}", refresh=False)
        self.say(status_line(progress, self.run.train.iterations, record))

    def warm_start(self, progress: Progress, losses: dict[str, float]) -> None:
        """The warm start's losses and time at iteration 0, and one console line."""
        scalars = {**losses, STEP_TAG: progress.step, MINUTES_TAG: progress.seconds / 60}
        for tag, value in scalars.items():
            self.writer.add_scalar(tag, value, 0)
        self.writer.flush()
        if self.run.train.max_minutes is not None:
            self.bar.update(min(progress.seconds / 60, self.bar.total) - self.bar.n)
        loss = f", loss {losses['loss/total']:.3f}" if "loss/total" in losses else " (stopped)"
        self.say(
            f"warm start: {progress.warm_start_positions} UCT-labelled positions, "
            f"{progress.step} steps{loss}, {progress.seconds / 60:.1f} min"
        )

    def inference(self) -> None:
        """The run's first lines: the machine, then the inference path and, when ``auto`` chose
        it, why."""
        self.say(f"machine: {this_machine().label()}")
        choice, configured = self.selfplay_path.choice, self.run.selfplay.inference
        if choice is not None:
            self.say(choice.summary())
            return
        pinned = (
            f", pinned by {PIN_ENV}" if configured == "auto" and os.environ.get(PIN_ENV) else ""
        )
        self.say(
            f"inference: {self.selfplay_path.backend} (selfplay.inference={configured}{pinned})"
        )

    def probe_images(self, iteration: int) -> None:
        """The network's policy and value on the fixed probe positions, as one image."""
        game = self.run.game
        states = np.stack(self.probes)
        planes = np.zeros((len(states), *game.observation_shape), dtype=np.float32)
        masks = np.zeros((len(states), game.num_actions), dtype=bool)
        kernels.encode_batch(states, planes, masks)
        logits, values = self.evaluate(planes, masks)
        policies = np.exp(logits - logits.max(axis=1, keepdims=True)) * masks
        policies /= policies.sum(axis=1, keepdims=True)
        image = probe_image(game, states, policies, values)
        self.writer.add_image("probes/policy_value", image, iteration)
        for k, value in enumerate(values):
            self.writer.add_scalar(f"probes/value_{k}", float(value), iteration)

    def close_bar(self) -> None:
        """Ends the progress bar (the loop is over, or failed)."""
        self.bar.close()

    def finish(self, progress: Progress, interrupted: bool = False) -> dict[str, Any]:
        """``summary.json`` and TensorBoard hparams with the final metrics; closes the writer.
        ``interrupted``: stopped by Ctrl-C / SIGTERM before its budget (a resume goes on)."""
        summary = {
            "interrupted": interrupted,
            "iterations": progress.iteration,
            "steps": progress.step,
            "minutes": progress.seconds / 60,
            "games": progress.games,
            "positions": progress.positions,
            "perfect": progress.perfect,
            "last_eval": progress.last_eval,
            "inference": self.selfplay_path.backend,
            "machine": this_machine().as_dict(),  # equal wall-clock holds on one machine only
        }
        choice = self.selfplay_path.choice
        if choice is not None:  # the machine's speed at the start, by the chosen path
            summary["inference_positions_per_s"] = choice.positions_per_s.get(choice.path)
        write_json(self.run_dir / "summary.json", summary)
        run = self.run
        hparams = {
            "game": run.game.name,
            "model": run.model.arch,
            "search": run.search.algorithm,
            "simulations": run.search.num_simulations,
            "optimizer": run.optim.name,
            "lr": run.optim.lr,
            "batch_size": run.train.batch_size,
            "games_per_iteration": run.selfplay.games_per_iteration,
            "seed": run.seed,
            "inference": self.selfplay_path.backend,
        }
        if self.selfplay_path.choice is not None:
            choice = self.selfplay_path.choice.as_dict()
            hparams.update({f"inference_{k}": v for k, v in choice.items()})
        metrics = {f"final/{k}": v for k, v in flat_eval(progress.last_eval).items()}
        metrics["final/minutes"] = progress.seconds / 60
        self.writer.add_hparams(hparams, metrics, run_name=".")
        self.writer.close()
        return summary


def _fallback(stats: SelfPlayStats) -> str:
    """Says when reduced-precision self-play fell back: to a float32 stem, or to float32 (its
    weights failed the checks)."""
    said = []
    if stats.float_stem_rounds:
        said.append(f"{stats.float_stem_rounds}/{stats.rounds} rounds with a float32 stem")
    if stats.float32_rounds:
        said.append(f"{stats.float32_rounds}/{stats.rounds} rounds in float32")
    return f", {' and '.join(said)}: int8 check failed" if said else ""


def status_line(progress: Progress, iterations: int, record: IterationRecord) -> str:
    """One readable line per iteration."""
    s = record.selfplay.summary()
    parts = [
        f"iter {progress.iteration}/{iterations}",
        f"step {progress.step}",
        f"{record.selfplay.games} games {s['games_per_s']:.1f}/s {s['positions_per_s']:.0f} "
        f"pos/s (nn {100 * s['nn_time_fraction']:.0f}%{_fallback(record.selfplay)})",
        f"W/D/L {s['first_player_win_rate']:.2f}/{s['draw_rate']:.2f}/"
        f"{s['first_player_loss_rate']:.2f}",
        f"replay {record.replay_size}",
    ]
    if "policy_lag" in record.pipeline:
        parts.append(f"lag {record.pipeline['policy_lag']:.1f} steps")
    if record.losses:
        terms = {
            tag.removeprefix("loss/"): value
            for tag, value in record.losses.items()
            if tag.startswith("loss/") and tag != "loss/total"
        }
        each = " ".join(f"{name} {value:.3f}" for name, value in terms.items())
        parts.append(f"loss {record.losses['loss/total']:.3f} ({each})")
    report, gate = record.report, record.gate
    if report:
        matches = {k: v for k, v in report.items() if isinstance(v, dict) and "score" in v}
        scores = [f"{k} {v['score']:.2f}" for k, v in matches.items()]
        if "optimal_rate" in report:
            scores.append(f"optimal {report['optimal_rate']:.3f}")
        if "elo" in report:
            scores.append(
                f"elo {report['elo']:.0f} [{report['elo_ci_low']:.0f}, {report['elo_ci_high']:.0f}]"
            )
        parts.append("eval " + " ".join(scores) + (" PERFECT" if progress.perfect else ""))
        if "book" in report:  # selfplay.book.walk: the lines lost on each budget's walk
            lost = [
                f"{'raw' if budget == '0' else budget} {w['lost_lines_first']}/"
                f"{w['lost_lines_second']}"
                for budget, w in report["walk"].items()
            ]
            book = report["book"]
            missed = f", {book['missed']} lessons missed" if "missed" in book else ""
            parts.append(
                f"lost lines {' '.join(lost)} book {book['size']} (+{book['added']}{missed})"
            )
    if gate:
        verdict = (
            "accepted"
            if gate["accepted"]
            else f"rejected (keeps iter {progress.selfplay_iteration})"
        )
        parts.append(f"gate {gate['score']:.2f} {verdict}")
    parts.append(f"{progress.seconds / 60:.1f} min")
    return " | ".join(parts)


def flat_eval(report: dict[str, Any]) -> dict[str, float]:
    """Numeric leaves of an evaluation report, as ``opponent/figure`` names."""
    out: dict[str, float] = {}
    for key, value in report.items():
        if isinstance(value, dict):
            out.update({f"{key}/{k}": float(v) for k, v in value.items() if _is_number(v)})
        elif _is_number(value):
            out[key] = float(value)
    return out


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomic JSON write (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
