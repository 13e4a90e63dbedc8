"""Can the raw policy fit the deep search's moves on every line? Rounds of: walk the run's network
agent against every opponent line (``walk_at_stake``) as both sides at each ``--walks`` budget,
search each new position met with its value at stake at ``--teacher`` simulations (the agent's
search, no noise), and train the network ``--steps`` optimiser steps on two batches a step: one
from the run's replay window with every loss (so the value head keeps its targets), one from the
walked positions with the policy loss alone against the teacher's visit distribution. The
walked positions accumulate over the rounds (a position keeps the target of the round that first
met it). Each round prints the lost lines (positions where a move the agent may play gives the
side's value away) at each budget before its training; the last also walks ``--check`` budgets.

    python docs/experiments/numerical_ttt_perfect/distill.py RUN_DIR [--teacher 800]
        [--walks 0 32 200] [--check 800] [--rounds 4] [--steps 2000] [--lr 2e-4] [--out RUN_DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf

from ultimate_rl.agents.every_line import walk_at_stake
from ultimate_rl.games import kernels
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.nn.checkpoint import save_checkpoint
from ultimate_rl.nn.losses import losses_for, policy_loss, training_loss
from ultimate_rl.selfplay.replay import ReplayBuffer
from ultimate_rl.train import check_config
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.learner import make_optimizer, stored_targets
from ultimate_rl.train.walk_book import lesson_batch, search_lessons


def walk_figures(game, evaluate, budgets: list[int]) -> tuple[list[np.ndarray], str]:
    """The positions at stake of both sides' walks at each budget, and a line of lost lines."""
    found, line = [], []
    for budget in budgets:
        lost = []
        for side in (0, 1):
            walk = walk_at_stake(game, evaluate, side, budget)
            found.append(walk.at_stake)
            lost.append(int(walk.lost.sum()))
        line.append(f"{budget}: {lost[0]}/{lost[1]}")
    return found, "lost lines first/second " + ", ".join(line)


def train(model, optimizer, run, replay, states, targets, args, rng) -> tuple[float, float]:
    """``args.steps`` steps on a replay batch (every loss) plus a walk batch (the policy loss
    against the teacher's ``targets``, weighted ``args.weight``); the two losses' means."""
    game, size = run.game, run.train.batch_size
    losses = losses_for(model.config)
    sums = np.zeros(2)
    model.train()
    for _ in range(args.steps):
        batch = replay.sample(size, rng, game.symmetries).to_torch("cpu")
        total, terms = training_loss(model, batch, run.optim.loss_weights, losses)
        index = rng.integers(0, len(states), size)
        taught = lesson_batch(game, states[index], targets[index], rng, game.symmetries)
        taught = taught.to_torch("cpu")
        distilled, _ = policy_loss(model, model(taught.planes), taught)
        optimizer.zero_grad(set_to_none=True)
        (total + args.weight * distilled).backward()
        optimizer.step()
        sums += (terms["loss/total"], float(distilled.detach()))
    model.eval()
    return sums[0] / args.steps, sums[1] / args.steps


def agreement(game, evaluate, states: np.ndarray, targets: np.ndarray) -> float:
    """The share of ``states`` where the raw policy's top move is one of the teacher's."""
    planes = np.empty((len(states), *game.observation_shape), np.float32)
    masks = np.empty((len(states), game.num_actions), bool)
    kernels.encode_batch(states, planes, masks)
    logits, _ = evaluate(planes, masks)
    top = np.where(masks, logits, -np.inf).argmax(axis=1)
    best = targets == targets.max(axis=1, keepdims=True)
    return float(best[np.arange(len(states)), top].mean())


def main(args: argparse.Namespace) -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    checkpoint = load_checkpoint(args.run / CHECKPOINT)
    game = checkpoint.make_game()
    run = check_config(OmegaConf.load(args.run / "config.yaml"))
    model = checkpoint.build_model("cpu")
    losses = losses_for(model.config)
    replay = ReplayBuffer(game, run.train.replay_window, stored_targets(run, losses))
    replay.load_state_dict(checkpoint.extra["replay"])
    optimizer = make_optimizer(model, run.optim)
    for group in optimizer.param_groups:
        group["lr"] = args.lr
    known: dict[bytes, None] = {}
    states = np.zeros((0, game.initial_state().shape[0]), np.int32)
    targets = np.zeros((0, game.num_actions), np.float32)
    for round_ in range(args.rounds + 1):
        model.eval()
        evaluate = make_evaluator(model, "cpu", precision="fp32")
        started = time.perf_counter()
        budgets = args.walks + (args.check if round_ == args.rounds else [])
        walked, line = walk_figures(game, evaluate, budgets)
        if len(states):
            line += (
                f"; raw top move the teacher's on {agreement(game, evaluate, states, targets):.4f}"
            )
            line += " of the taught positions"
        print(f"round {round_}: {line} ({time.perf_counter() - started:.0f} s)", flush=True)
        if round_ == args.rounds:
            break
        walked = np.unique(np.concatenate(walked), axis=0)
        new = walked[[s.tobytes() not in known for s in walked]]
        known.update(dict.fromkeys(s.tobytes() for s in new))
        started = time.perf_counter()
        targets = np.concatenate([targets, search_lessons(game, evaluate, new, args.teacher)])
        states = np.concatenate([states, new])
        seconds = time.perf_counter() - started
        print(
            f"  {len(new)} new positions searched at {args.teacher} ({seconds:.0f} s), "
            f"{len(states)} in all",
            flush=True,
        )
        started = time.perf_counter()
        replay_loss, walk_loss = train(model, optimizer, run, replay, states, targets, args, rng)
        print(
            f"  trained {args.steps} steps: replay loss {replay_loss:.3f}, walk policy loss "
            f"{walk_loss:.3f} ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    if args.out:  # a run folder that train.init_from (and init_replay) or budget_walks.py take
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "config.yaml").write_text((args.run / "config.yaml").read_text())
        save_checkpoint(
            args.out / CHECKPOINT,
            model=model.eval(),
            game_name=checkpoint.game_name,
            game_options=checkpoint.game_options,
            step=checkpoint.step,
            extra={"replay": checkpoint.extra["replay"]},
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--teacher", type=int, default=800)
    parser.add_argument("--walks", type=int, nargs="+", default=[0, 32, 200])
    parser.add_argument("--check", type=int, nargs="*", default=[800])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--weight", type=float, default=1.0, help="the walk's policy loss weight")
    parser.add_argument("--out", type=Path)
    main(parser.parse_args())
