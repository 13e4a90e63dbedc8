"""The training config's keys: one dataclass per section, one docstring per key.

``TrainConfig`` is the shape of the training config: its top-level keys, then one field per
section, each a dataclass (``selfplay``'s and ``ray``'s are declared in ``selfplay/schema.py``,
``model``'s and ``search``'s are ``ModelConfig`` and ``SearchConfig``). The string under a field
is that key's documentation, read by ``train/reference.py``, which writes
``docs/reference/config.md`` from them, so the reference cannot drift from the code. No YAML
file repeats the defaults: ``train/presets.py`` stores them (and each config group's presets,
as changes to them) in Hydra's ConfigStore.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields, is_dataclass
from typing import Any

from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.losses import AUX_LOSSES, LOSSES
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.schema import RaySettings, SelfPlaySettings


@dataclass
class WarmStartSection:
    """``train.warm_start``: supervised rounds on UCT labels before self-play (0 positions: off)."""

    positions: int = 0
    """Random-opening positions labelled by UCT before a new run's first self-play (0: no warm
    start). A network that starts from UCT's play instead of noise: +111 Elo at 10 CPU minutes
    on uttt (``experiment=uttt_cpu``). At most ``train.replay_window``."""
    simulations: int = 1000
    """UCT rollout simulations per labelled position: its visits are the policy target, its
    root value the value target. The labelling runs on ``selfplay.workers`` processes."""
    max_plies: int = 40
    """Each labelled position follows 0..max_plies uniformly random moves from the start."""
    steps: int = 1000
    """Optimiser steps on the labels before self-play; the labels then stay in the replay
    window until self-play pushes them out."""


@dataclass
class TrainSection:
    """``train``: the loop's length, the replay buffer, the optimiser's pace, checkpoints."""

    mode: str = "sync"
    """``sync``: a self-play round, then training; a seeded run reproduces exactly. ``async``:
    actors play nonstop with the latest weights while the learner trains as positions arrive
    (an iteration is ``selfplay.games_per_iteration`` games); faster on many cores."""
    samples_per_position: float | None = None
    """The replay ratio: optimiser samples per new self-play position (KataGo keeps it <= 4).
    ``null``: ``steps_per_iteration`` steps per ``selfplay.games_per_iteration`` games."""
    publish_every: int = 10
    """``async``: optimiser steps between weight versions sent to the actors; fewer send more
    often, at the cost of the copies."""
    iterations: int = 100
    """Stop after this many iterations (self-play, optimise, evaluate, checkpoint); with
    ``steps_per_iteration`` it also sets the length of the cosine learning-rate schedule."""
    max_minutes: float | None = None
    """Stop after this much training time, summed over resumes (``null``: no limit); the cosine
    schedule then ends by the clock if that comes first."""
    batch_size: int = 256
    """Positions per optimiser step."""
    steps_per_iteration: int = 100
    """Optimiser steps after each self-play round (``sync``, unless ``samples_per_position``
    is set)."""
    min_replay: int = 512
    """Positions in the replay buffer before the first optimiser step; at most
    ``replay_window``."""
    replay_window: int = 50000
    """Positions kept in the replay buffer, oldest dropped first: larger trains on older
    networks' games, smaller overfits the latest."""
    augment: bool = True
    """Apply a random board symmetry to every sampled position (the game's symmetries)."""
    checkpoint_every: int = 1
    """Iterations between checkpoints, the resume point: a run killed outright loses at most
    the iterations since the last one."""
    keep_checkpoints: int = 3
    """Numbered model snapshots kept besides the latest checkpoint."""
    keep_every: int = 0
    """Also keep every snapshot whose iteration is a multiple of this, for an Elo-against-step
    curve (``scripts/evaluate.py run=RUN_DIR``); 0: none."""
    stop_when_perfect: bool = False
    """Solved games only: stop once an evaluation finds the play perfect
    (``eval.perfect_optimal_rate``, no game lost to the solver, and no opponent line lost at
    any of ``eval.perfect_budgets``); needs ``eval.every > 0``."""
    probe_image_every: int = 5
    """Iterations between TensorBoard images of the network's policy and value on the probe
    positions (0: none)."""
    progress_bar: bool = True
    """Show a progress bar (by iteration, or by minute with ``max_minutes``); ``false`` for
    logs written to a file."""
    threads: int | None = 1
    """torch intra-op threads of the learner: 1 is fastest for small CPU batches (``null``:
    torch's default)."""
    init_from: str | None = None
    """PATH of a training checkpoint (``.pt``) or an exported agent file (``.urla``): a new run
    starts from its network's weights (fresh optimiser, counters and, unless ``init_replay``,
    replay buffer; a resume ignores it, and so does the warm start). The run's model config must
    fit the network, or be a bigger one of the same kind (a ResNet with more blocks, channels,
    head channels or value width; an MLP with wider layers, as many): the small network then
    grows into it, computing the same outputs at the start (``nn/grow.py``)."""
    init_replay: bool = False
    """With ``init_from`` a run's ``checkpoints/latest.pt`` (the checkpoint that keeps the replay
    window): start from that window too (the newest positions that fit ``replay_window``, with
    their targets), so the network, grown or not, goes on learning the data the source run last
    learned instead of a window its first games fill. The optimiser stays fresh. A fresh window
    costs a trained network ground (numerical tic-tac-toe: a network whose raw policy lost 69
    lines lost 289-445 at its first three evaluations; the ``numerical_ttt_perfect`` record)."""
    precision: str = "auto"
    """Optimiser arithmetic: ``auto`` (bf16 on CUDA and on CPUs with AMX, else fp32),
    ``fp32``, ``bf16``, ``fp16`` (CUDA only)."""
    warm_start: WarmStartSection = field(default_factory=WarmStartSection)
    """uttt.ai's first stage: a new run first learns positions labelled by UCT (supervised),
    inside its clock, then starts self-play. Not with ``init_from`` (its network is trained)."""


@dataclass
class OptimSection:
    """``optim``: the optimiser, its learning-rate schedule and the loss terms' weights."""

    name: str = "adamw"
    """``adamw`` or ``sgd`` (Nesterov momentum); the presets ``optim=adamw`` and ``optim=sgd``
    pick one with a learning rate that suits it."""
    lr: float = 0.002
    """Peak learning rate, reached after ``warmup_steps``."""
    weight_decay: float = 0.0001
    """Weight decay (decoupled for AdamW, L2 for SGD)."""
    momentum: float = 0.9
    """SGD only: Nesterov momentum (0: plain SGD)."""
    schedule: str = "cosine"
    """``constant``, ``cosine`` (down to ``min_lr_fraction``; it spans ``train.iterations`` or
    ``train.max_minutes``, whichever ends the run first) or ``step``."""
    warmup_steps: int = 100
    """Optimiser steps of linear warm-up to ``lr``."""
    min_lr_fraction: float = 0.1
    """``cosine``: the final learning rate as a fraction of ``lr``."""
    step_every: int = 10000
    """``step``: multiply the learning rate by ``step_gamma`` every this many steps."""
    step_gamma: float = 0.1
    """``step``: the factor applied every ``step_every`` steps."""
    loss_weights: dict[str, float] = field(
        default_factory=lambda: {
            **{loss.name: 1.0 for loss in LOSSES},
            **{name: 0.0 for name in AUX_LOSSES},
        }
    )
    """One weight per loss term (``ultimate_rl.nn.losses``): ``policy``, ``value`` and the
    auxiliary heads', which train only with a weight > 0 AND their head in ``model.aux_heads``
    (e.g. ``optim.loss_weights.opponent_policy=0.15 model.aux_heads=[opponent_policy]``)."""
    grad_clip: float | None = 5.0
    """Largest gradient norm; larger gradients are scaled down (``null``: no clipping)."""
    value_target_q_weight: float = 0.0
    """The value target is ``(1 - w) * game result + w * root search value``: > 0 lowers the
    target's variance (the search value is biased by the network); 0 stores no root values."""
    ema_decay: float = 0.0
    """The network a run offers (to self-play, evaluation, snapshots and export) is the
    exponential moving average of the trained weights, updated after every optimiser step with
    this decay (0: the trained weights themselves). It smooths a constant learning rate's noise
    at no cost in speed (KataGo plays and exports averaged weights); 0.999 averages over ~1,000
    steps. The first steps average with a smaller decay, ``(1 + t) / (10 + t)``, so the start's
    random weights fade at once."""


@dataclass
class GatingSection:
    """``eval.gating``: self-play's network is replaced only by a network that beats it."""

    enabled: bool = False
    """Gate the self-play network (AlphaGo Zero; AlphaZero, and the default, do not)."""
    num_games: int = 40
    """Games of each gating match (>= 2); each random opening is played from both sides."""
    threshold: float = 0.55
    """The new network's mean score (win 1, draw 1/2) needed to replace the self-play one;
    above 1: never switch."""
    opening_plies: int = 2
    """Random moves before each pair of games, so the games differ."""


@dataclass
class EvalSection:
    """``eval``: matches against fixed opponents, the optimal-move rate, Elo, gating."""

    every: int = 5
    """Iterations between evaluations (0: never)."""
    games: int = 20
    """Games per opponent, half with each colour."""
    num_simulations: int = 0
    """The network's search per move in evaluations and gating matches (0: the raw policy's
    best move, the fastest and a pure measure of the network)."""
    opponents: list[str] = field(default_factory=lambda: ["random", "uct"])
    """Opponents of each evaluation: ``random``, ``uct`` (``uct_simulations``), ``perfect``
    (the exact solver; solved games only)."""
    uct_simulations: int = 200
    """Rollout simulations per move of the ``uct`` opponent."""
    optimal_positions: int = 200
    """Solved games: positions sampled by random play on which the optimal-move rate is
    measured (0: none)."""
    positions_seed: int = 1234
    """Seed of those positions, fixed so every run scores the same ones."""
    perfect_optimal_rate: float = 0.98
    """``train.stop_when_perfect``: the optimal-move rate needed (with no game lost to the
    solver) to call the play perfect."""
    perfect_budgets: list[int] = field(default_factory=lambda: [0, 32, 200, 800])
    """Perfect play must hold at each of these searches (simulations a move; 0: the raw policy),
    played as ``agents.make("network", num_simulations=N)`` plays: at none may a line of the
    opponent's legal moves, from either side, end below the game's value."""
    elo_every: int = 0
    """Iterations between Elo ratings against the ``elo_opponents`` ladder (0: off), logged as
    ``eval/elo``, ``eval/elo_ci_low``/``high`` and ``eval/score_vs/<rung>``. Needs the rater
    ``scripts/train.py`` injects; its games are saved to ``RUN_DIR/evaluations/games`` and
    reused on resume. Costly (``elo_games`` per rung, one game at a time): keep it rare."""
    elo_opponents: list[str] = field(
        default_factory=lambda: ["random", "uct:num_simulations=100", "uct:num_simulations=1000"]
    )
    """The ladder's rungs as agent specs (``ultimate_rl.evaluate``); UCT-1000 is pinned at Elo
    1000."""
    elo_games: int = 10
    """Games against each rung per rating, half with each colour (>= 2)."""
    gating: GatingSection = field(default_factory=GatingSection)
    """Gating (AlphaGo Zero; off as in AlphaZero): self-play keeps its network until a new one
    scores at least ``threshold`` against it over ``num_games`` batched games from random
    openings, both sides searching with ``eval.num_simulations``."""


@dataclass
class GameSection:
    """``game``: which game; its other keys are the game's options (``games.make``)."""

    name: str = "tictactoe"
    """The game: one of ``ultimate_rl.games.GAMES`` (``uttt``, ``tictactoe``...);
    pick it with ``game=NAME`` (one option per game of ``games.registry``), which also sets its
    options."""


@dataclass
class TrainConfig:
    """The training config: the top-level keys, then its sections."""

    seed: int = 0
    """Seeds every random stream of the run (initial weights, self-play, replay sampling,
    evaluations); with ``train.mode=sync`` two runs with one seed train the same network."""
    device: str = "auto"
    """The learner's device: ``auto`` (CUDA when there is one), ``cpu``, ``cuda``, ``cuda:N``.
    Self-play actors use ``selfplay.actor_device``."""
    resume: bool | str = False
    """``false``: a new run; ``true``: continue the run in this run folder (give
    ``hydra.run.dir``); PATH: continue the run folder PATH. A resumed run keeps its config;
    key overrides apply on top, config group choices cannot change."""
    run_name: str = "${game.name}"
    """Names the run folder, ``runs/RUN_NAME/DATE``; each experiment preset sets its own."""
    game: GameSection = field(default_factory=GameSection)
    """The game to learn: ``game=NAME`` (one per registered game); checked by ``games.make``."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """The network: ``model=NAME`` (``train/presets.py``); checked by ``ModelConfig``, and saved
    in every checkpoint, so an agent file rebuilds it."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """The tree search of self-play, evaluations and gating: ``search=NAME``
    (``train/presets.py``); checked by ``SearchConfig``."""
    selfplay: SelfPlaySettings = field(default_factory=SelfPlaySettings)
    """Self-play: how many games, where they run, and how moves are chosen
    (``selfplay=default``)."""
    train: TrainSection = field(default_factory=TrainSection)
    """The loop: its length, the replay buffer, the optimiser's pace, checkpoints, the warm
    start (no config group)."""
    optim: OptimSection = field(default_factory=OptimSection)
    """The optimiser and the loss: ``optim=NAME`` (``train/presets.py``)."""
    eval: EvalSection = field(default_factory=EvalSection)
    """Evaluation during training: baseline matches, the optimal-move rate of solved games, Elo,
    gating (``eval=default``)."""
    ray: RaySettings = field(default_factory=RaySettings)
    """``selfplay.backend=ray`` only (``pip install -e ".[ray]"``): the cluster, and what each
    self-play actor reserves (no config group)."""


def field_default(f: Field[Any]) -> Any:
    """A dataclass field's default value (a fresh one from its ``default_factory``)."""
    return f.default_factory() if callable(f.default_factory) else f.default


def sections(schema: type) -> dict[str, type]:
    """The fields of ``schema`` that are sections (their default is a dataclass), by name."""
    found = {f.name: field_default(f) for f in fields(schema)}
    return {name: type(value) for name, value in found.items() if is_dataclass(value)}


CHECKED_BY_OWNER = ("game", "model", "search")
"""Sections the game factory, ``ModelConfig`` and ``SearchConfig`` check (they own the keys)."""

SECTIONS: dict[str, type] = {
    name: schema for name, schema in sections(TrainConfig).items() if name not in CHECKED_BY_OWNER
}
"""Sections ``check_config`` checks against their dataclass, in ``TrainConfig``'s order."""

TOP_LEVEL: tuple[str, ...] = tuple(f.name for f in fields(TrainConfig))
"""Every top-level key of the training config (sections included)."""
