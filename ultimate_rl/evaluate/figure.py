"""The reports' figures made one way: headless matplotlib, written at one resolution, closed.

Every plot (a run's Elo by step, its learning curve, a comparison's Elo by recipe or by minute)
draws into the axes that ``figure`` yields; the ladder's rungs are dashed lines named at the
left edge. matplotlib loads on first use, so the evaluator runs without it until a plot is asked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def figure(path: Path, size: tuple[float, float] = (7.0, 4.5)) -> Iterator[Any]:
    """The axes of a new figure, saved to ``path`` (its folder made) and closed on exit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    try:
        yield ax
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)


def rung_lines(ax: Any, rungs: Mapping[str, float]) -> None:
    """Each rung's Elo as a dashed grey line, named at the axes' left edge."""
    for name, elo in rungs.items():
        ax.axhline(elo, linestyle="--", linewidth=0.8, color="grey")
        ax.annotate(name, (0.0, elo), xycoords=("axes fraction", "data"), fontsize=8)
