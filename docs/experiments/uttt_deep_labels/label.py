"""Labels self-play positions with an agent's deep PUCT search (expert iteration's labels).

    python label.py OUT_DIR AGENT SIMULATIONS WORKERS RUN_CHECKPOINT...

The positions are the distinct states in the runs' replay buffers (their resume points'
``latest.pt``), in a seeded random order; each chunk of ``CHUNK`` is searched by ``AGENT``'s
network with PUCT at ``SIMULATIONS`` simulations (no noise, no tree reuse) on one core and
written to ``OUT_DIR/chunk_KKKK.npz`` (visit distribution, root value); a rerun skips the chunks
already written. ``OUT_DIR/positions.npz`` keeps the states and their games' results.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import torch

CHUNK = 512  # positions a job: one batched search of 512 trees


def replay_positions(paths: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct states of the runs' replay buffers, shuffled, with their games' results."""
    states, results = [], []
    for path in paths:
        replay = torch.load(path, weights_only=False, map_location="cpu")["extra"]["replay"]
        size = int(replay["size"])
        states.append(replay["states"].numpy()[:size])
        results.append(replay["values"].numpy()[:size])
    every, result = np.concatenate(states), np.concatenate(results)
    _, first = np.unique(every, axis=0, return_index=True)
    order = np.random.default_rng(0).permutation(np.sort(first))
    return every[order], result[order]


def label_chunk(agent: str, simulations: int, states: np.ndarray, out: Path) -> int:
    """One job: ``states`` searched together, written atomically to ``out``."""
    torch.set_num_threads(1)
    from ultimate_rl.loading import load_agent
    from ultimate_rl.nn.choice import make_evaluator
    from ultimate_rl.search.batched import BatchedSearch
    from ultimate_rl.search.config import SearchConfig

    checkpoint = load_agent(agent, num_simulations=2).checkpoint
    game = checkpoint.make_game()
    model = checkpoint.build_model("cpu").for_inference()
    evaluate = make_evaluator(model, "cpu", game=game, batch_size=len(states))
    config = SearchConfig(algorithm="puct", num_simulations=simulations, tree_reuse=False)
    search = BatchedSearch(game, len(states), config, seed=0)
    found = search.search(states, evaluate, add_noise=False, temperature=0.0)
    visits = found.visit_counts.astype(np.float32)
    policies = visits / visits.sum(1, keepdims=True)
    temp = out.with_suffix(".tmp.npz")
    np.savez(temp, states=states, policies=policies, root_values=found.root_value)
    temp.rename(out)
    return len(states)


def main() -> None:
    out_dir, agent = Path(sys.argv[1]), sys.argv[2]
    simulations, workers = int(sys.argv[3]), int(sys.argv[4])
    out_dir.mkdir(parents=True, exist_ok=True)
    states, results = replay_positions(sys.argv[5:])
    np.savez(out_dir / "positions.npz", states=states, outcomes=results)
    print(f"{len(states)} distinct positions", flush=True)
    starts = range(0, len(states), CHUNK)
    todo = [k for k in starts if not (out_dir / f"chunk_{k // CHUNK:04d}.npz").exists()]
    began, done = time.time(), 0
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        jobs = [
            pool.submit(
                label_chunk,
                agent,
                simulations,
                states[k : k + CHUNK],
                out_dir / f"chunk_{k // CHUNK:04d}.npz",
            )
            for k in todo
        ]
        for job in jobs:
            done += job.result()
            minutes = (time.time() - began) / 60
            print(f"{done} labelled, {done / minutes / 60:.0f}/s, {minutes:.1f} min", flush=True)


if __name__ == "__main__":
    main()
