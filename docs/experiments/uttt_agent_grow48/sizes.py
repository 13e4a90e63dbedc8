"""Throughput of the uttt_cpu recipe by ResNet size on this machine (one thread): self-play
positions/s on the path `inference=auto` picks, with the network's share of the time, and the
learner's samples/s in float32 and bf16 at one and two threads. Run alone on the idle machine:
`python docs/experiments/uttt_agent_grow48/sizes.py 3x32 4x48 6x64`."""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from ultimate_rl.nn import make_evaluator
from ultimate_rl.selfplay.worker import SelfPlayWorker
from ultimate_rl.train.config import check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config


def learner_rate(run, data, threads: int, seconds: float = 8.0) -> float:
    torch.set_num_threads(threads)
    learner = Learner(run, torch.device("cpu"))
    learner.add(data)
    learner.train_steps(2)  # warm-up
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        learner.train_steps(1)
        steps += 1
    return steps * run.train.batch_size / (time.perf_counter() - start)


for size in sys.argv[1:]:
    blocks, channels = map(int, size.split("x"))
    base = ["experiment=uttt_cpu", "device=cpu", f"model.blocks={blocks}"]
    runs = {
        p: check_config(compose_train_config([*base, f"model.channels={channels}", p]))
        for p in ("train.precision=fp32", "train.precision=bf16")
    }
    run = runs["train.precision=fp32"]
    torch.set_num_threads(1)
    model = Learner(run, torch.device("cpu")).model
    worker = SelfPlayWorker(run.game, run.search, run.selfplay)
    rng = np.random.default_rng(0)
    batch = run.selfplay.evaluation_batch(run.search)
    evaluate = make_evaluator(model, "cpu", game=run.game, batch_size=batch)
    worker.play(evaluate, 4, rng)  # warm-up: compiles the search kernels
    data = worker.play(evaluate, run.selfplay.parallel_games, rng)
    stats = data.stats
    rates = {
        f"{p.split('=')[1]}_{t}t": learner_rate(r, data, t) for p, r in runs.items() for t in (1, 2)
    }
    print(
        f"{size}: {sum(p.numel() for p in model.parameters()):,} parameters, self-play "
        f"{stats.moves / stats.seconds:,.0f} positions/s on {evaluate.backend} (network "
        f"{stats.nn_seconds / stats.seconds:.0%}), learner samples/s "
        + ", ".join(f"{k} {v:,.0f}" for k, v in rates.items()),
        flush=True,
    )
