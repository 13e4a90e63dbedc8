"""A comparison's report: ``results.md`` (verdicts, learning curve, every run with its machine),
``results.json``, ``elo.png`` and ``curve.png``, from ``compare.summarise``'s results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ultimate_rl.evaluate.figure import figure, rung_lines


def results_markdown(results: dict[str, Any]) -> str:
    """The tables of ``results.md``: recipes with verdicts, then every run."""
    ladder = list(results["ladder"])
    lines = [
        f"# {results['name']}: {results['minutes_per_run']:g} min per run, "
        f"seeds {results['seeds']}",
        "",
        "One Bradley-Terry fit over every final network's games against the ladder "
        f"({', '.join(f'{k} = {v:.0f}' for k, v in results['ladder'].items())}); 95% intervals. "
        "A recipe's interval adds its runs' rating errors and the spread between seeds; "
        "the verdict compares it with the first recipe.",
        "",
        "| recipe | mean Elo [95% CI] | vs baseline [95% CI] | verdict |",
        "| --- | ---: | ---: | --- |",
    ]
    for recipe, s in results["recipes"].items():
        diff = s.get("vs_baseline")
        versus = f"{diff[0]:+.0f} [{diff[1]:+.0f}, {diff[2]:+.0f}]" if diff else ""
        lines.append(
            f"| {recipe} | {s['elo']:.0f} [{s['ci'][0]:.0f}, {s['ci'][1]:.0f}] | {versus} | "
            f"{s['verdict']} |"
        )
    machines = results.get("machines", [])
    letter = {m: chr(ord("A") + k) for k, m in enumerate(machines)}
    if len(machines) > 1:
        lines += [
            "",
            f"**The runs trained on {len(machines)} different machines** (the column machine): "
            "equal wall-clock does not make them comparable; compare their iterations, or "
            "retrain the runs of one machine.",
        ]
    lines += _curve_markdown(results)
    lines += [
        "",
        "| recipe | seed | Elo [95% CI] | minutes | iterations | positions | machine | "
        + " | ".join(f"score vs {o}" for o in ladder)
        + " |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |" + " ---: |" * len(ladder),
    ]
    for r in results["runs"]:
        if "elo" not in r:
            lines.append(
                f"| {r['recipe']} | {r['seed']} | {r['status']} | | | | |" + " |" * len(ladder)
            )
            continue
        scores = " | ".join(f"{r['score_vs'].get(o, float('nan')):.3f}" for o in ladder)
        iterations = "" if r.get("iterations") is None else str(r["iterations"])
        lines.append(
            f"| {r['recipe']} | {r['seed']} | {r['elo']:.0f} [{r['ci'][0]:.0f}, {r['ci'][1]:.0f}] "
            f"| {r['minutes']:.1f} | {iterations} | {r['positions']} "
            f"| {letter.get(r.get('machine', ''), '')} | {scores} |"
        )
    if machines:
        lines += ["", "Machines: " + "; ".join(f"{letter[m]} = {m}" for m in machines) + "."]
    return "\n".join(lines) + "\n"


def _curve_markdown(results: dict[str, Any]) -> list[str]:
    """The learning-curve table (mean Elo by training minute), when the comparison rated one."""
    curves = {r: s["curve"] for r, s in results["recipes"].items() if "curve" in s}
    if not curves:
        return []
    minutes = sorted({p["minute"] for curve in curves.values() for p in curve})
    lines = [
        "",
        "Learning curve: each recipe's mean Elo [95% CI] by training minute, from each run's "
        "newest snapshot at or before that minute (the last column: the final networks).",
        "",
        "| recipe | " + " | ".join(f"{m:g} min" for m in minutes) + " |",
        "| --- |" + " ---: |" * len(minutes),
    ]
    for recipe, curve in curves.items():
        at = {p["minute"]: p for p in curve}
        cells = [
            f"{at[m]['elo']:.0f} [{at[m]['ci'][0]:.0f}, {at[m]['ci'][1]:.0f}]" if m in at else ""
            for m in minutes
        ]
        lines.append(f"| {recipe} | " + " | ".join(cells) + " |")
    return lines


def plot_curves(results: dict[str, Any], path: Path) -> Path:
    """Mean Elo by training minute per recipe, with 95% intervals; the ladder's rungs dashed."""
    with figure(path) as ax:
        for k, (recipe, stats) in enumerate(results["recipes"].items()):
            curve = stats["curve"]
            nudge = 0.004 * (k - 0.5) * results["minutes_per_run"]  # intervals side by side
            low = [p["elo"] - p["ci"][0] for p in curve]
            high = [p["ci"][1] - p["elo"] for p in curve]
            x, y = [p["minute"] + nudge for p in curve], [p["elo"] for p in curve]
            ax.errorbar(x, y, yerr=[low, high], marker="o", capsize=4, label=recipe)
        rung_lines(ax, results["ladder"])
        ax.set_xlabel("training minutes")
        ax.set_ylabel("Elo")
        ax.set_title(f"{results['name']}: mean Elo by training minute, 95% intervals")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    return path


def plot_results(results: dict[str, Any], path: Path) -> Path:
    """Elo per recipe: each seed's rating with its interval (orange), the recipe's mean with its
    interval (black), the ladder's rungs as dashed lines."""
    recipes = list(results["recipes"])
    with figure(path, size=(max(6.0, 1.1 * len(recipes)), 4.5)) as ax:
        for x, recipe in enumerate(recipes):
            mean = results["recipes"][recipe]
            low, high = mean["elo"] - mean["ci"][0], mean["ci"][1] - mean["elo"]
            ax.errorbar(x, mean["elo"], yerr=[[low], [high]], fmt="s", color="black", capsize=6)
            rated = [r for r in results["runs"] if r["recipe"] == recipe and "elo" in r]
            for k, r in enumerate(rated):
                low, high = r["elo"] - r["ci"][0], r["ci"][1] - r["elo"]
                ax.errorbar(
                    x + 0.15 + k * 0.1,
                    r["elo"],
                    yerr=[[low], [high]],
                    fmt="o",
                    color="C1",
                    capsize=3,
                )
        rung_lines(ax, results["ladder"])
        ax.set_xticks(range(len(recipes)), recipes, rotation=30, ha="right")
        ax.set_ylabel("Elo")
        ax.set_title(f"{results['name']}: Elo per recipe and seed, 95% intervals")
        ax.grid(alpha=0.3, axis="y")
    return path


def write_results(results: dict[str, Any], out: Path, plot: bool = True) -> list[Path]:
    """``results.json``, ``results.md`` and (with ``plot``) ``elo.png`` in ``out``, and
    ``curve.png`` when every recipe has a learning curve."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "results.json", out / "results.md"]
    written[0].write_text(json.dumps(results, indent=2) + "\n")
    written[1].write_text(results_markdown(results))
    if plot:
        written.append(plot_results(results, out / "elo.png"))
        if all("curve" in stats for stats in results["recipes"].values()):
            written.append(plot_curves(results, out / "curve.png"))
    return written
