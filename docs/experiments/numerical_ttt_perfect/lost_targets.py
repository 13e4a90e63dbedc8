"""At the positions where a run's raw policy loses a line (``walk_at_stake`` at budget 0 as
``SIDE``), what self-play's search would teach it: the mass the raw policy and the search's
policy target (PUCT at each ``SIMS``, with the run's root noise averaged over 8 searches, and
without noise) put on the moves that keep the side's value, how often their top move keeps it,
and the margin of the best keeping move over the best losing one.

    python docs/experiments/numerical_ttt_perfect/lost_targets.py RUN_DIR SIDE SIMS [SIMS ...]
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

from ultimate_rl.agents.every_line import required, value_after, walk_at_stake
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.search.batched import BatchedSearch
from ultimate_rl.train import check_config
from ultimate_rl.train.checkpoints import CHECKPOINT

NOISY_SEARCHES = 8


def show(name: str, policy: np.ndarray, good: np.ndarray) -> None:
    """One line of figures for ``policy`` [N, A] against the value-keeping moves ``good``."""
    mass = (policy * good).sum(axis=1)
    top_keeps = good[np.arange(len(policy)), policy.argmax(axis=1)]
    margin = np.where(good, policy, -1).max(axis=1) - np.where(good, -1, policy).max(axis=1)
    print(
        f"{name:>14}: keeping mass mean {mass.mean():.3f} median {np.median(mass):.3f} | "
        f"top move keeps {top_keeps.mean():.3f} | margin mean {margin.mean():+.3f}"
    )


def main(run_dir: Path, side: int, budgets: list[int]) -> None:
    checkpoint = load_checkpoint(run_dir / CHECKPOINT)
    game = checkpoint.make_game()
    search = check_config(OmegaConf.load(run_dir / "config.yaml")).search  # self-play's
    evaluate = make_evaluator(checkpoint.build_model("cpu"), "cpu", precision="fp32")
    walk = walk_at_stake(game, evaluate, side, 0)
    lost, floor = walk.at_stake[walk.lost], required(game, side)
    good = np.zeros((len(lost), game.num_actions), bool)
    for row, state in enumerate(lost):
        for action in game.legal_actions(state):
            good[row, action] = value_after(game, state, int(action)) >= floor
    masks = np.stack([game.legal_mask(s) for s in lost])
    logits, _ = evaluate(np.stack([game.encode(s) for s in lost]), masks)
    logits = np.where(masks, logits, -np.inf)
    raw = np.exp(logits - logits.max(axis=1, keepdims=True))
    print(
        f"{run_dir.name}: {len(lost)} lost positions, {masks.sum(1).mean():.1f} moves and "
        f"{good.sum(1).mean():.2f} value-keeping ones each"
    )
    show("raw policy", raw / raw.sum(axis=1, keepdims=True), good)
    for budget in budgets:
        config = replace(search, num_simulations=budget, tree_reuse=False)
        for noise, repeats in ((True, NOISY_SEARCHES), (False, 1)):
            target = np.zeros(raw.shape)
            for seed in range(repeats):
                searcher = BatchedSearch(game, len(lost), config, seed=seed)
                target += searcher.search(lost, evaluate, add_noise=noise).policy_target
            show(f"{budget} {'noise' if noise else 'no noise'}", target / repeats, good)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), [int(b) for b in sys.argv[3:]])
