"""Reports of an evaluation: ``evaluation.json``, a markdown table and a PNG plot of Elo."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ultimate_rl.evaluate.figure import figure, rung_lines
from ultimate_rl.evaluate.ladder import Evaluation

JSON_NAME = "evaluation.json"
MARKDOWN_NAME = "evaluation.md"
PLOT_NAME = "elo.png"


def markdown_table(evaluation: Evaluation) -> str:
    """One row per player, strongest first, with the record behind each rating."""
    ratings = evaluation.ratings
    anchor = (
        f"anchored at {ratings.anchor} = {ratings.anchor_elo:g}"
        if ratings.anchor
        else f"mean rating pinned at {ratings.anchor_elo:g}"
    )
    lines = [
        f"Elo by Bradley–Terry maximum likelihood over {ratings.num_games} games, {anchor}; "
        "95% intervals from the Fisher information.",
        "",
        "| player | step | Elo | 95% CI | games | W / D / L | score | draw rate | "
        "score as 1st | score as 2nd | s / move | slowest move (s) |",
        "| --- | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in sorted(ratings.players.values(), key=lambda r: -r.elo):
        step = evaluation.steps.get(r.name)
        mean_seconds, max_seconds = evaluation.move_seconds(r.name)
        lines.append(
            f"| {r.name} | {'' if step is None else step} | {r.elo:.0f} | "
            f"[{r.ci_low:.0f}, {r.ci_high:.0f}] | {r.games} | {r.wins} / {r.draws} / {r.losses} | "
            f"{r.score:.3f} | {r.draw_rate:.3f} | {_fmt(r.first_player_score)} | "
            f"{_fmt(r.second_player_score)} | {_fmt(mean_seconds)} | {_fmt(max_seconds)} |"
        )
    lines += ["", "| match | games | W / D / L (A) | score A | Elo A − B [95% CI] | SPRT |"]
    lines.append("| --- | ---: | --- | ---: | --- | --- |")
    for m in evaluation.matches:
        elo, low, high = m.elo()
        verdict = f"{m.sprt.decision or 'open'} (LLR {m.sprt.llr:.2f})" if m.sprt else ""
        lines.append(
            f"| {m.agent_a.label} vs {m.agent_b.label} | {m.num_games} | "
            f"{m.wins} / {m.draws} / {m.losses} | {m.score:.3f} | "
            f"{elo:+.0f} [{low:+.0f}, {high:+.0f}] | {verdict} |"
        )
    lines += sweep_table(evaluation)
    if evaluation.solved:
        lines += [
            "",
            "| player | optimal moves | vs perfect W / D / L | every line as first | as second "
            "| walked on |",
            "| --- | ---: | --- | --- | --- | --- |",
        ]
        for label, s in evaluation.solved.items():
            m = s.vs_perfect
            walks = s.every_line or {}
            lines.append(
                f"| {label} | {s.optimal} / {s.positions} ({s.optimal_rate:.1%}) | "
                f"{m.wins} / {m.draws} / {m.losses} | {_walk_cell(walks.get('first'))} | "
                f"{_walk_cell(walks.get('second'))} | "
                f"{(walks.get('first') or {}).get('inference', '')} |"
            )
    return "\n".join(lines) + "\n"


def _walk_cell(walk: dict[str, Any] | None) -> str:
    """One side's every-line walk in the table: held, or where its moves gave the value away."""
    if walk is None:
        return "not walked"
    if walk["worst"] is None:
        return "too many positions to walk"
    if walk["worst"] < walk["required"]:
        return f"lost at {walk['lost']:,} of {walk['at_stake']:,} positions"
    in_games = walk.get("worst_in_games", walk["required"])
    if in_games is None:
        return "held by position; games too many to walk"
    if in_games < walk["required"]:
        return "held by position, lost in a game (tree kept)"
    return f"held ({walk['at_stake']:,} positions)"


def sweep_table(evaluation: Evaluation) -> list[str]:
    """Score against each opponent by simulation count, for a sweep (players ``NAME@COUNT``,
    from ``network.num_simulations=[...]``); no lines otherwise."""
    swept = [label for label in evaluation.subjects if "@" in label]
    if not swept:
        return []
    lines = ["", "| player | simulations | opponent | games | W / D / L | score |"]
    lines.append("| --- | ---: | --- | ---: | --- | ---: |")
    for label in swept:
        for m in evaluation.matches_of(label):
            first = m.agent_a.label == label
            wins, losses = (m.wins, m.losses) if first else (m.losses, m.wins)
            lines.append(
                f"| {label} | {label.rsplit('@', 1)[1]} | "
                f"{m.agent_b.label if first else m.agent_a.label} | {m.num_games} | "
                f"{wins} / {m.draws} / {losses} | {m.score if first else 1.0 - m.score:.3f} |"
            )
    return lines


def _fmt(value: float | None) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.3f}"


def plot_elo(evaluation: Evaluation, path: Path) -> Path:
    """Elo against training step with its 95% band (ladder rungs as dashed lines) for two or
    more checkpoints; otherwise every player's Elo with its interval."""
    ratings = evaluation.ratings
    with figure(path) as ax:
        if len(evaluation.steps) > 1:
            labels = sorted(evaluation.steps, key=evaluation.steps.__getitem__)
            steps = [evaluation.steps[label] for label in labels]
            rows = [ratings[label] for label in labels]
            low, high = [r.ci_low for r in rows], [r.ci_high for r in rows]
            ax.fill_between(steps, low, high, alpha=0.25, label="95% CI")
            ax.plot(steps, [r.elo for r in rows], marker="o", label="checkpoint")
            rung_lines(ax, {name: ratings[name].elo for name in evaluation.opponents})
            ax.set_xlabel("training step")
            ax.legend(loc="lower right")
        else:
            rows = sorted(ratings.players.values(), key=lambda r: r.elo)
            ax.errorbar(
                range(len(rows)),
                [r.elo for r in rows],
                yerr=[[r.elo - r.ci_low for r in rows], [r.ci_high - r.elo for r in rows]],
                fmt="o",
                capsize=4,
            )
            ax.set_xticks(range(len(rows)), [r.name for r in rows], rotation=30, ha="right")
        ax.set_ylabel("Elo")
        ax.set_title(f"Elo ({ratings.anchor or 'mean'} = {ratings.anchor_elo:g}), 95% intervals")
        ax.grid(alpha=0.3)
    return path


def write_report(evaluation: Evaluation, out_dir: str | Path, plot: bool = True) -> list[Path]:
    """Writes the JSON, the markdown table and (with ``plot``) the PNG; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / JSON_NAME, out / MARKDOWN_NAME]
    written[0].write_text(json.dumps(evaluation.as_dict(), indent=2) + "\n")
    written[1].write_text(markdown_table(evaluation))
    if plot:
        written.append(plot_elo(evaluation, out / PLOT_NAME))
    return written
