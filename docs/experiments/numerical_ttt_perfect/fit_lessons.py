"""Capacity or passes? Fit a run's book lessons (``RUN/book.npy``, ``RUN/book_lessons.npy``) by the
policy loss alone, with the run's network (``--hidden warm``) or a fresh MLP of ``--hidden``
widths, and print the share of rows whose raw top move gives the side's value away (the solver's
verdict, as the walk judges: the first player must keep its win, the second its draw), on 5,000
trained rows and 5,000 held out. ``--missed S`` draws the share S of each batch from the rows
whose top move gets under half the lesson's top visits (``walk_book.missed_lessons``), found
again every 500 steps.

    python docs/experiments/numerical_ttt_perfect/fit_lessons.py RUN [--hidden warm|1024x1024]
        [--steps 16000] [--lr 1e-3] [--batch 256] [--missed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import torch
from lesson_misses import losing_moves  # this folder's script

from ultimate_rl.agents.network import agent_search_config
from ultimate_rl.agents.network_player import NetworkPlayer
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.nn.losses import policy_loss
from ultimate_rl.nn.models import build_model
from ultimate_rl.train.walk_book import lesson_batch, missed_lessons

HELD_OUT = 5000


def main(args: argparse.Namespace) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    checkpoint = load_checkpoint(args.run / "checkpoints/latest.pt")
    game = checkpoint.make_game()
    if args.hidden == "warm":
        model = checkpoint.build_model("cpu")
    else:
        widths = [int(width) for width in args.hidden.split("x")]
        model = build_model(game, dataclasses.replace(checkpoint.model_config, mlp_hidden=widths))
    book = np.load(args.run / "book.npy")
    lessons = np.load(args.run / "book_lessons.npy")
    rows = rng.permutation(np.flatnonzero(lessons.sum(axis=1) > 0))
    held, trained = rows[:HELD_OUT], rows[HELD_OUT:]
    probes = {"trained": trained[:HELD_OUT], "held out": held}
    bad = {
        name: np.stack([losing_moves(game, s) for s in book[probe]])
        for name, probe in probes.items()
    }

    def figures() -> str:
        model.eval()
        evaluate = make_evaluator(model, "cpu", precision="fp32", backend="torch")
        shares = []
        for name, probe in probes.items():
            top = NetworkPlayer(game, evaluate, 0, agent_search_config(0)).actions(book[probe])
            shares.append(f"{name} {bad[name][np.arange(len(probe)), top].mean():.4f}")
        return "bad top moves: " + ", ".join(shares)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    missed = np.zeros(0, np.int64)
    started = time.perf_counter()
    print(f"{args.hidden}: step 0 {figures()}", flush=True)
    for step in range(1, args.steps + 1):
        if args.missed and step % 500 == 1:
            model.eval()
            evaluate = make_evaluator(model, "cpu", precision="fp32", backend="torch")
            missed = trained[missed_lessons(game, evaluate, book[trained], lessons[trained])]
        model.train()
        batch_rows = trained[rng.integers(0, len(trained), args.batch)]
        if len(missed):
            count = round(args.missed * args.batch)
            batch_rows[:count] = missed[rng.integers(0, len(missed), count)]
        batch = lesson_batch(game, book[batch_rows], lessons[batch_rows], rng, game.symmetries)
        batch = batch.to_torch("cpu")
        loss, _ = policy_loss(model, model(batch.planes), batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % max(args.steps // 8, 1) == 0:
            seconds = time.perf_counter() - started
            print(f"  step {step} {figures()}, missed {len(missed)} ({seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--hidden", default="warm", help="warm, or widths such as 1024x1024")
    parser.add_argument("--steps", type=int, default=16000)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--missed", type=float, default=0.0)
    main(parser.parse_args())
