"""What ``scripts/evaluate.py`` does, as a function of its config (so it is testable in-process).

Three modes, exactly one per call: ``checkpoint=PATH`` (one training checkpoint ``.pt`` or
exported agent file ``.urla`` against the ladder),
``run=RUN_DIR`` (every ``*.pt`` of ``RUN_DIR/checkpoints``, Elo against the training step stored
in each), ``agents=[...]`` (a round robin of agent specs, plus the ladder unless it is empty).
An agent that is also a rung of the ladder (the same spec) plays once, as an agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ultimate_rl.evaluate.curve import snapshot_minutes, write_curve
from ultimate_rl.evaluate.ladder import Evaluation, EvaluationSettings, evaluate_agents
from ultimate_rl.evaluate.report import write_report
from ultimate_rl.evaluate.specs import EvaluationError, parse_spec
from ultimate_rl.evaluate.sprt import SPRTConfig
from ultimate_rl.games import Game, make_from_config


def evaluate_from_config(cfg: Mapping[str, Any]) -> tuple[Evaluation, list[Path]]:
    """Runs the evaluation ``cfg`` asks for and writes its report; returns it and the files."""
    modes = [key for key in ("checkpoint", "run", "agents") if cfg.get(key)]
    if len(modes) != 1:
        raise EvaluationError(
            "give exactly one of checkpoint=PATH, run=RUN_DIR or agents=[spec,...]"
            + (f" (got {modes})" if modes else "")
        )
    mode = modes[0]
    steps: dict[str, int] = {}
    if mode == "agents":
        if not cfg.get("game"):
            raise EvaluationError("agents=[...] needs the game: add game=uttt (or another game)")
        game = make_from_config(cfg["game"])
        subjects: list[Any] = list(cfg["agents"])
        default_out = Path("outputs/evaluation") / game.name
    else:
        found = (
            [_read_checkpoint(Path(cfg["checkpoint"]))]
            if mode == "checkpoint"
            else run_checkpoints(Path(cfg["run"]))
        )
        game = make_from_config(cfg["game"]) if cfg.get("game") else found[0][2]
        subjects, steps = checkpoint_subjects(
            found, dict(cfg.get("network") or {}), sweep_allowed=mode == "checkpoint"
        )
        default_out = (
            Path(cfg["run"]) / "evaluation"
            if mode == "run"
            else Path("outputs/evaluation") / Path(cfg["checkpoint"]).stem
        )
    out_dir = Path(cfg["output_dir"]) if cfg.get("output_dir") else default_out
    evaluation = evaluate_agents(
        game,
        subjects,
        ladder_without(subjects, list(cfg.get("ladder") or [])),
        settings_from_config(cfg),
        records_dir=out_dir / "games",
        round_robin=mode == "agents",
        steps=steps,
    )
    written = write_report(evaluation, out_dir, plot=bool(cfg.get("plot", True)))
    if mode == "run":  # the learning curve by training minute
        snapshots = [(step, _extra(path)) for path, step, _ in found]
        written += write_curve(evaluation, snapshot_minutes(Path(cfg["run"]), snapshots), out_dir)
    return evaluation, written


def checkpoint_subjects(
    found: list[tuple[Path, int, Game]], network: Mapping[str, Any], sweep_allowed: bool = True
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The player spec of each checkpoint or agent file, with the ``network`` options, and the
    training step of each label. ``network.num_simulations`` as a list (a sweep) gives one
    player per count, labelled ``NAME@COUNT``: the score-vs-simulations report of one agent."""
    # None keeps the agent's own default (an agent file's stored search settings)
    options = {k: v for k, v in network.items() if v is not None}
    counts = options.pop("num_simulations", None)
    sweep = isinstance(counts, list | tuple)
    if sweep and not sweep_allowed:
        raise EvaluationError(
            "a list of network.num_simulations (a sweep) is for one checkpoint=PATH, not run=..."
        )
    if sweep and (not counts or len(set(counts)) < len(counts)):
        raise EvaluationError(
            f"network.num_simulations={list(counts)}: give distinct counts, e.g. [100,200,800]"
        )
    subjects: list[dict[str, Any]] = []
    steps: dict[str, int] = {}
    for path, step, _ in found:
        name = path.stem if _is_agent_file(path) else f"step-{step}"
        player = (
            {"name": "file", "path": str(path)}
            if _is_agent_file(path)
            else {"name": "network", "checkpoint": str(path)}
        )
        for count in counts if sweep else [counts]:
            label = f"{name}@{count}" if sweep else name
            extra = {} if count is None else {"num_simulations": count}
            subjects.append({**player, **options, **extra, "label": label})
            if not sweep:  # the Elo-vs-step plot: one point per step
                steps[label] = step
    return subjects, steps


def settings_from_config(cfg: Mapping[str, Any]) -> EvaluationSettings:
    """``EvaluationSettings`` from the config keys of the same names."""
    defaults = EvaluationSettings()
    keys = [k for k in vars(defaults) if k != "sprt" and cfg.get(k) is not None]
    sprt = cfg.get("sprt")
    return EvaluationSettings(
        **{k: cfg[k] for k in keys},
        sprt=SPRTConfig(**dict(sprt)) if sprt else None,
    )


def ladder_without(subjects: list[Any], ladder: list[Any]) -> list[Any]:
    """The rungs that are not also ``subjects``: ``agents=[random,...]`` with the default ladder
    (which holds ``random``) means one player ``random``, not two. An agent still meets every rung
    it would have met as one, since a round robin plays every pair."""
    given = [parse_spec(s) for s in subjects]
    return [rung for rung in ladder if parse_spec(rung) not in given]


def run_checkpoints(run_dir: Path) -> list[tuple[Path, int, Game]]:
    """Every checkpoint of a run as (path, step, game), one per step, in step order."""
    folder = run_dir / "checkpoints"
    if not folder.is_dir():
        raise EvaluationError(
            f"{run_dir} has no checkpoints/ folder; give the folder of a training run "
            "(the one holding checkpoints/ and the TensorBoard events)"
        )
    by_step: dict[int, tuple[Path, int, Game]] = {}
    for path in sorted(folder.glob("*.pt")):  # "latest.pt" repeats a numbered step: keep one
        entry = _read_checkpoint(path)
        by_step.setdefault(entry[1], entry)
    if not by_step:
        raise EvaluationError(f"no *.pt checkpoint in {folder}; has the run saved one yet?")
    games = {repr(g) for _, _, g in by_step.values()}
    if len(games) > 1:
        raise EvaluationError(f"the checkpoints in {folder} are for different games: {games}")
    return [by_step[s] for s in sorted(by_step)]


def _extra(path: Path) -> dict[str, Any]:
    """A training checkpoint's extra fields (an agent file has none)."""
    from ultimate_rl.nn.checkpoint import load_checkpoint

    return {} if _is_agent_file(path) else load_checkpoint(path).extra


def _is_agent_file(path: Path) -> bool:
    return path.suffix == ".urla"


def _read_checkpoint(path: Path) -> tuple[Path, int, Game]:
    """(path, training step, game) of a training checkpoint or an exported agent file."""
    from ultimate_rl import agents
    from ultimate_rl.nn.checkpoint import CheckpointError, load_checkpoint

    try:
        if _is_agent_file(path):
            checkpoint = agents.make("file", path=str(path), num_simulations=0).checkpoint
        else:
            checkpoint = load_checkpoint(path)
    except (CheckpointError, ValueError) as err:  # BundleError is a ValueError
        raise EvaluationError(str(err)) from err
    return path, checkpoint.step, checkpoint.make_game()
