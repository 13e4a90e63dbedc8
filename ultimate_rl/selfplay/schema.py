"""The ``selfplay`` and ``ray`` config sections: one dataclass per section, a docstring per key.

``train/schema.py`` declares the rest of the training config and holds these as its ``selfplay``
and ``ray`` sections, but the self-play code reads them too, and ``selfplay`` may not import
``train`` (``tests/test_layering.py``), so they are declared here, in the layer below it, as
``nn/config.py`` and ``search/config.py`` declare ``model`` and ``search``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ultimate_rl.nn.evaluator import BACKENDS
from ultimate_rl.search import SearchConfig


@dataclass
class PlayoutCapSettings:
    """Playout-cap randomisation (KataGo): a share of moves searched cheaply, value target only."""

    fraction_full: float = 1.0
    """Share of moves searched with ``search.num_simulations`` and Dirichlet noise: they give
    the policy targets. Below 1 the other moves cost little, so more games fit in the time."""
    fast_simulations: int = 8
    """Simulations of the other moves: a cheap search without noise, kept as value targets
    only."""

    def __post_init__(self) -> None:
        _check_fraction("playout_cap.fraction_full", self.fraction_full)
        _check_at_least("playout_cap.fast_simulations", self.fast_simulations, 1)


@dataclass
class ResignSettings:
    """Resignation, with a share of games that play on to measure false resignations."""

    enabled: bool = False
    """Let games resign: a lost game ends early, so more games fit in the time."""
    threshold: float = -0.95
    """Resign when the mover's root search value falls below this."""
    min_moves: int = 10
    """Never resign before this many moves."""
    disabled_fraction: float = 0.2
    """Share of games that never resign, to measure how often resigning would have been wrong
    (logged as ``selfplay/resign_false_positive_rate``)."""

    def __post_init__(self) -> None:
        _check_fraction("resign.disabled_fraction", self.disabled_fraction)


@dataclass
class RandomOpeningSettings:
    """A share of games that start after uniformly random moves (not recorded)."""

    fraction: float = 0.0
    """Share of games that start after uniformly random moves (not recorded): widens the
    positions seen beyond the ones search-guided play reaches."""
    max_plies: int = 8
    """Those games' random moves number 0..max_plies, uniformly."""
    one_sided: float = 0.0
    """Share of those openings in which one side, drawn at random, moves at random and the other
    plays its search's moves: the positions a perfect player meets against every line of a
    blundering opponent (the every-line verdict, ``agents/every_line.py``), which an opening of
    random moves on both sides reaches only where the strong side's random moves were good. Its
    moves are not recorded either (their results follow the blunders; but see
    ``record_searching_side``), except one that would end the game: there the opening stops and
    the search's move is played and recorded."""
    record_searching_side: bool = False
    """In a one-sided opening, record the searching side's moves after all, with the search's
    root value as their value target in place of the game's result (which follows the random
    side's blunders): the policy targets of the very positions the opening exists to reach."""

    def __post_init__(self) -> None:
        _check_fraction("random_opening.fraction", self.fraction)
        _check_fraction("random_opening.one_sided", self.one_sided)
        _check_at_least("random_opening.max_plies", self.max_plies, 0)


@dataclass
class BookSettings:
    """A share of games that start from a file of positions (``selfplay/book.py``)."""

    path: str = ""
    """A ``.npy`` file of the game's raw states (``numpy.save`` of ``[N, STATE_LEN]`` int32,
    none finished); a relative path starts in the directory the run is launched from, and
    actors on other machines (Ray) read the same path there."""
    fraction: float = 0.0
    """Share of games that start at one of the book's positions, drawn uniformly (no random
    opening then): positions self-play must learn but seldom reaches by itself."""
    walk: bool = False
    """Solved games: the run grows its own book. Each evaluation adds the positions the network
    meets on the every-line walks of ``walk_budgets`` (``train/walk_book.py``) where its value
    is at stake; ``path``, if set, is the book it starts from. The book is the run folder's
    ``book.npy`` (the checkpoint keeps its length), which actors read as it grows (Ray actors
    on other machines need that folder too). Best from a network that already plays well: a
    weak one's walks fill the book with positions a trained one never meets (the numerical
    record; ``walk_from_optimal``)."""
    walk_budgets: list[int] = field(default_factory=lambda: [0])
    """With ``walk``: the simulations of the network agent whose every-line walks grow the book
    (0: the raw policy). A search walk meets other positions than the raw policy's, and loses
    lines where the value head misleads the search: to hold every budget of
    ``eval.perfect_budgets``, walk those (a 3x3 walk at 800 simulations takes seconds)."""
    walk_in_order: bool = False
    """With ``walk``: each evaluation walks ``walk_budgets`` in rising order and stops after the
    first budget where a walk loses a line (either side): a network far from perfect meets more
    positions than its deep searches can walk at every evaluation (4x4: its first walks at
    0/32/200/800 simulations had not ended after 26 minutes), so its raw policy is walked alone
    until it holds."""
    walk_from_optimal: float = 0.0
    """With ``walk``: the walks start at the first evaluation whose optimal-move rate
    (``eval/optimal_rate``) reaches this, and go on at every evaluation after it; until then no
    game starts from the run's book (they start as without one). A weak network's walks
    fill the book with positions a trained one never meets (the numerical record): 0.98 lets a
    run from scratch learn general play first."""
    lost_share: float = 0.0
    """With ``walk``: share of book games that start where the latest walks lost a line (their
    mistakes, a few thousand), the rest anywhere in the book (up to millions)."""
    teacher: int = 0
    """With ``walk``: the book's positions are lessons for the raw policy. Each position a walk
    meets that has no lesson yet, or where the walk lost a line, is searched at this many
    simulations (the network agent's search, no noise); every optimiser step then adds a batch
    of the book's lessons, trained by the policy loss alone toward that search's visits (0:
    none). The raw policy can then play the deep search's moves on every line, not only on the
    lines self-play reaches (numerical tic-tac-toe's second player, 300 iterations with a book:
    46 raw lost lines against 197 without lessons; docs/experiments/numerical_ttt_perfect)."""
    missed_share: float = 0.0
    """With ``teacher``: share of each batch of lessons drawn from those the raw policy has not
    learned (its top move gets under half the visits of the lesson's top move), found again at
    each walk; the rest from every lesson. A few thousand missed lessons among hundreds of
    thousands are otherwise drawn as rarely as the learned ones."""

    def __post_init__(self) -> None:
        _check_fraction("book.fraction", self.fraction)
        _check_fraction("book.lost_share", self.lost_share)
        _check_fraction("book.walk_from_optimal", self.walk_from_optimal)
        _check_fraction("book.missed_share", self.missed_share)
        if self.missed_share > 0 and not self.teacher:
            raise ValueError(
                "selfplay.book.missed_share > 0 needs selfplay.book.teacher > 0: the missed "
                "lessons are the teacher's"
            )
        if self.lost_share > 0 and not self.walk:
            raise ValueError(
                "selfplay.book.lost_share > 0 needs selfplay.book.walk=true: the walk finds "
                "the positions where the walks lose a line"
            )
        for name, value, default in (
            ("walk_budgets", list(self.walk_budgets), [0]),
            ("walk_from_optimal", self.walk_from_optimal, 0.0),
            ("walk_in_order", self.walk_in_order, False),
            ("teacher", self.teacher, 0),
        ):
            if value != default and not self.walk:
                raise ValueError(
                    f"selfplay.book.{name} is the walk's: it needs selfplay.book.walk=true"
                )
        if self.teacher < 0:
            raise ValueError(
                f"selfplay.book.teacher must be a number of simulations >= 0 (0: no lessons), "
                f"e.g. 800; it is {self.teacher}"
            )
        if not self.walk_budgets or min(self.walk_budgets) < 0:
            raise ValueError(
                f"selfplay.book.walk_budgets must list simulation counts >= 0 (0: the raw "
                f"policy), e.g. [0, 32, 200, 800]; it is {list(self.walk_budgets)}"
            )
        if self.fraction > 0 and not self.path and not self.walk:
            raise ValueError(
                "selfplay.book.fraction > 0 needs selfplay.book.path (the file of positions) "
                "or selfplay.book.walk=true (a book the run grows)"
            )


MAX_TIMED_BATCH = 256  # speeds per position level off well before this


@dataclass
class SelfPlaySettings:
    """The ``selfplay`` config group, ``selfplay=default`` (``train/presets.py``).

    It is also the training config's schema for that group (``train/config.py``), so an option
    is added here once.
    """

    workers: int = 1
    """Self-play actors. 1 plays in the learner's process (the right choice on a 2-core
    machine: torch already uses the second core); more: one actor per core."""
    backend: str = "processes"
    """Where the actors run (``workers > 1``, or ``train.mode=async``): ``processes`` on this
    machine, or ``ray`` (``pip install -e ".[ray]"``; see ``ray``)."""
    actor_device: str = "cpu"
    """Each actor's network: ``cpu``, ``cuda`` or ``auto`` (on Ray give ``ray.num_gpus`` too,
    or Ray hides the GPUs from the actors)."""
    inference_server: bool = False
    """One batching server process on ``actor_device`` evaluates for every worker process,
    even for ``workers: 1`` (``backend=processes`` only; README "Scaling out")."""
    parallel_games: int = 64
    """Games each worker plays at once: one network call serves all of them, so larger
    batches use the hardware better."""
    games_per_iteration: int = 128
    """Finished games per iteration, summed over the workers."""
    temperature: float = 1.0
    """PUCT's move choice for a game's first ``temperature_moves`` moves: sampled by
    ``visits ** (1 / T)`` (0: the most visited move). Gumbel search ignores it."""
    temperature_moves: int = 4
    """Moves (plies) played with ``temperature``; the rest with ``final_temperature``."""
    final_temperature: float = 0.0
    """The temperature after ``temperature_moves`` (0: the most visited move)."""
    playout_cap: PlayoutCapSettings = field(default_factory=PlayoutCapSettings)
    """Playout-cap randomisation (KataGo): a share of moves searched cheaply."""
    resign: ResignSettings = field(default_factory=ResignSettings)
    """Resignation, with a share of games that play on to check it."""
    random_opening: RandomOpeningSettings = field(default_factory=RandomOpeningSettings)
    """A share of games that start from a random opening."""
    book: BookSettings = field(default_factory=BookSettings)
    """A share of games that start from a file of positions."""
    inference: str = "auto"
    """The network's path (``ultimate_rl.nn.make_evaluator``): ``auto`` (the fastest on this
    machine that passes the numerics rule, timed at start-up; torch on CUDA), ``torch``,
    ``torch_bf16``, ``onnxruntime`` (float32) or ``onnxruntime_int8`` (README "Inference
    paths")."""

    def evaluation_batch(self, search: SearchConfig) -> int:
        """Positions per network call of one worker (what ``inference=auto`` times paths at)."""
        return min(self.parallel_games * search.leaves_per_tree, MAX_TIMED_BATCH)

    def __post_init__(self) -> None:
        for name in ("workers", "parallel_games", "games_per_iteration"):
            _check_at_least(name, getattr(self, name), 1)
        if self.inference not in BACKENDS:
            raise ValueError(
                f"selfplay.inference must be one of {list(BACKENDS)}, got {self.inference!r}"
            )
        if self.backend not in ("processes", "ray"):
            raise ValueError(f"unknown selfplay.backend {self.backend!r}; choose processes or ray")
        if self.inference_server and self.backend != "processes":
            raise ValueError(
                "selfplay.inference_server=true needs selfplay.backend=processes (Ray actors "
                "each keep their own evaluator): set selfplay.backend=processes or "
                "selfplay.inference_server=false"
            )
        if self.temperature < 0 or self.final_temperature < 0:
            raise ValueError("selfplay temperatures must be >= 0 (0 plays the most visited move)")


def _check_fraction(key: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"selfplay.{key} must be in [0, 1], got {value}")


def _check_at_least(key: str, value: int, least: int) -> None:
    if value < least:
        raise ValueError(f"selfplay.{key} must be >= {least}, got {value}")


@dataclass
class RaySettings:
    """The ``ray`` config section: which cluster, and what each ``SelfPlayActor`` reserves."""

    address: str | None = None
    """The Ray cluster: ``null`` starts a local Ray runtime for the run; ``auto`` joins the
    cluster of this machine, ``ray://HOST:PORT`` a remote one."""
    num_cpus: float = 1.0
    """CPUs each self-play actor reserves."""
    num_gpus: float = 0.0
    """GPUs each actor reserves, fractional to share one (with ``selfplay.actor_device=cuda``;
    0 hides the GPUs from the actors)."""
