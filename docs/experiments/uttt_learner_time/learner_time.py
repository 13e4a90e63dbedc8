"""Where `uttt_cpu`'s optimiser step spends its time, and what torch.compile buys (2026-12-07).

    python docs/experiments/uttt_learner_time/learner_time.py [THREADS] [--profile]

Builds the preset's learner, fills its replay window with 8,000 random-play positions (targets
made up: the time of a step does not depend on them), and times `train_steps`: eager against
`torch.compile` of the model's forward, in interleaved rounds of 50 steps (medians), or with
`--profile` 60 eager steps under cProfile. Figures in docs/recipe.md.
"""

import cProfile
import pstats
import sys
import time

import numpy as np
import torch

from ultimate_rl.train import check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config

POSITIONS = 8000


def random_positions(game, rng):
    states = []
    while len(states) < POSITIONS:
        state = game.initial_state()
        while not game.is_terminal(state):
            states.append(state.copy())
            state = game.apply(state, rng.choice(game.legal_actions(state)))
    return np.stack(states[:POSITIONS])


def filled_learner(run, states, rng, compiled):
    learner = Learner(run, torch.device("cpu"))
    n = len(states)
    policy = rng.random((n, run.game.num_actions)).astype(np.float32)
    policy *= np.stack([run.game.legal_mask(s) for s in states])
    targets = {
        "policies": policy / policy.sum(1, keepdims=True),
        "values": rng.choice([-1.0, 0.0, 1.0], n).astype(np.float32),
        "full_search": np.ones(n, bool),
        "root_values": rng.uniform(-1, 1, n).astype(np.float32),
    }
    learner.replay.add(states, targets)
    if compiled:  # the forward only: the parameters and state-dict names stay the model's
        learner.model.forward = torch.compile(learner.model.forward)
    return learner


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    torch.set_num_threads(int(args[0]) if args else 1)
    run = check_config(compose_train_config(["experiment=uttt_cpu"]))
    rng = np.random.default_rng(0)
    states = random_positions(run.game, rng)
    if "--profile" in sys.argv:
        learner = filled_learner(run, states, rng, compiled=False)
        learner.train_steps(10)
        profile = cProfile.Profile()
        profile.runcall(learner.train_steps, 60)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        return
    variants = {
        name: filled_learner(run, states, rng, name == "compile") for name in ("eager", "compile")
    }
    for name, learner in variants.items():
        started = time.perf_counter()
        learner.train_steps(20)
        print(f"{name}: warm-up 20 steps {time.perf_counter() - started:.1f} s", flush=True)
    rates = {name: [] for name in variants}
    for _ in range(4):
        for name, learner in variants.items():
            started = time.perf_counter()
            learner.train_steps(50)
            rates[name].append(50 / (time.perf_counter() - started))
    for name, found in rates.items():
        print(f"{name}: {np.median(found):.1f} steps/s at batch 256 (rounds {np.round(found, 1)})")


if __name__ == "__main__":
    main()
