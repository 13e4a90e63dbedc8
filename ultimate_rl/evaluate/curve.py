"""A run's learning curve by wall-clock minute: each snapshot's score against each ladder rung.

``scripts/evaluate.py run=RUN_DIR`` rates every snapshot of a run; this turns that evaluation into
``curve.md`` and ``curve.png`` (score against each opponent by training minute), the figure that
says what an hour of training buys. A snapshot's minute is its training wall time, which the run
stores in the snapshot (``minutes``); older runs lack it, and their minutes are read from the
run's TensorBoard scalars (each iteration logs the optimiser step it reached and its training
minutes, ``train.logs``).
"""

from __future__ import annotations

from pathlib import Path

from ultimate_rl.evaluate.figure import figure
from ultimate_rl.evaluate.ladder import Evaluation

CURVE_MARKDOWN = "curve.md"
CURVE_PLOT = "curve.png"
STEP_TAG, MINUTES_TAG = "train/step", "time/minutes"  # as ``train.logs`` writes them


def snapshot_minutes(run_dir: Path, snapshots: list[tuple[int, dict]]) -> dict[int, float]:
    """Training minute of each snapshot, by step: ``snapshots`` is (step, checkpoint extra)."""
    stored = {step: float(extra["minutes"]) for step, extra in snapshots if "minutes" in extra}
    if len(stored) == len(snapshots):
        return stored
    return {**_minutes_from_events(run_dir, [step for step, _ in snapshots]), **stored}


def _minutes_from_events(run_dir: Path, steps: list[int]) -> dict[int, float]:
    """Training minutes at which each of ``steps`` was reached, from the run's TensorBoard
    scalars: the iteration that logged that optimiser step, and that iteration's minutes."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    step_at: dict[int, float] = {}  # iteration -> optimiser step
    minutes_at: dict[int, float] = {}  # iteration -> training minutes
    for events in sorted((run_dir / "tensorboard").glob("**/events.out.tfevents.*")):
        accumulator = EventAccumulator(str(events), size_guidance={"scalars": 0})
        accumulator.Reload()
        tags = accumulator.Tags()["scalars"]
        for tag, into in ((STEP_TAG, step_at), (MINUTES_TAG, minutes_at)):
            if tag in tags:
                into.update({event.step: event.value for event in accumulator.Scalars(tag)})
    minutes = {int(step): minutes_at[i] for i, step in step_at.items() if i in minutes_at}
    return {step: minutes[step] for step in steps if step in minutes}


def curve_rows(evaluation: Evaluation, minutes: dict[int, float]) -> list[dict]:
    """One row per (snapshot, opponent): minute, step, games, W/D/L and score, by minute."""
    rows = []
    for label, step in evaluation.steps.items():
        if step not in minutes:
            continue
        for match in evaluation.matches_of(label):
            first = match.agent_a.label == label
            wins, losses = (match.wins, match.losses) if first else (match.losses, match.wins)
            rows.append(
                {
                    "minute": minutes[step],
                    "step": step,
                    "opponent": match.agent_b.label if first else match.agent_a.label,
                    "games": match.num_games,
                    "wins": wins,
                    "draws": match.draws,
                    "losses": losses,
                    "score": match.score if first else 1.0 - match.score,
                }
            )
    return sorted(rows, key=lambda r: (r["minute"], r["opponent"]))


def write_curve(evaluation: Evaluation, minutes: dict[int, float], out_dir: Path) -> list[Path]:
    """``curve.md`` (and ``curve.png``) in ``out_dir``; nothing when no snapshot has a minute."""
    rows = curve_rows(evaluation, minutes)
    if not rows:
        return []
    lines = [
        "Score of each snapshot against each opponent by training minute.",
        "",
        "| minute | step | opponent | games | W / D / L | score |",
        "| ---: | ---: | --- | ---: | --- | ---: |",
    ]
    lines += [
        f"| {r['minute']:.1f} | {r['step']} | {r['opponent']} | {r['games']} | "
        f"{r['wins']} / {r['draws']} / {r['losses']} | {r['score']:.3f} |"
        for r in rows
    ]
    markdown = out_dir / CURVE_MARKDOWN
    markdown.write_text("\n".join(lines) + "\n")
    return [markdown, _plot(rows, out_dir / CURVE_PLOT)]


def _plot(rows: list[dict], path: Path) -> Path:
    with figure(path) as ax:
        for opponent in sorted({r["opponent"] for r in rows}):
            points = [r for r in rows if r["opponent"] == opponent]
            minutes, scores = [r["minute"] for r in points], [r["score"] for r in points]
            ax.plot(minutes, scores, marker="o", label=f"vs {opponent}")
        ax.axhline(0.5, linestyle="--", linewidth=0.8, color="grey")
        ax.set_xlabel("training minutes")
        ax.set_ylabel("score (win 1, draw 0.5)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    return path
