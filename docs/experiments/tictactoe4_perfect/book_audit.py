"""A 4x4 run's book against the solver. Of the taught rows: where the raw
policy's move loses the solver's value, where the lesson's top move does, where the lesson is
'missed' (missed_lessons' rule), and their overlaps; and what each phase of an evaluation costs.

    python docs/experiments/tictactoe4_perfect/book_audit.py RUN [SAMPLE]

RUN: a run folder with book.npy, book_lessons.npy and checkpoints/latest.pt; SAMPLE: how many
book positions time the 200-simulation lessons (5,000)."""

import sys
import time
from pathlib import Path

import numpy as np

from ultimate_rl.agents.network import agent_search_config
from ultimate_rl.agents.network_player import NetworkPlayer
from ultimate_rl.games import solver
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.train.walk_book import grow_book, missed_lessons, search_lessons

run = Path(sys.argv[1])
sample = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
cp = load_checkpoint(run / "checkpoints/latest.pt")
game = cp.make_game()
ev = make_evaluator(cp.build_model("cpu"), "cpu", backend="onnxruntime", game=game, batch_size=256)
book = np.load(run / "book.npy")
lessons = np.load(run / "book_lessons.npy")[: len(book)]
taught = np.flatnonzero(lessons.sum(axis=1) > 0)
print(f"{run.name}: book {len(book)}, taught {len(taught)}", flush=True)
t = time.perf_counter()
raw = NetworkPlayer(game, ev, 0, agent_search_config(0))
top = np.concatenate([raw.actions(book[taught[s : s + 4096]]) for s in range(0, len(taught), 4096)])
print(f"raw moves: {time.perf_counter() - t:.1f} s", flush=True)
t = time.perf_counter()
solver.action_values(game, book[0])  # builds the table
print(f"solver table: {time.perf_counter() - t:.1f} s", flush=True)
t = time.perf_counter()
best = np.empty(len(taught), np.int64)
rawv = np.empty_like(best)
lesv = np.empty_like(best)
nbest = np.empty_like(best)
nlegal = np.empty_like(best)
les_top = lessons[taught].argmax(axis=1)
for i, r in enumerate(taught):
    v = solver.action_values(game, book[r])
    legal = v != solver.ILLEGAL
    best[i] = v[legal].max()
    rawv[i] = v[top[i]]
    lesv[i] = v[les_top[i]]
    nbest[i] = (v == best[i]).sum()
    nlegal[i] = legal.sum()
print(f"solver values: {time.perf_counter() - t:.1f} s", flush=True)
les = lessons[taught]
missed = les[np.arange(len(taught)), top] < 0.5 * les.max(axis=1)
rb, lw = rawv < best, lesv < best
print(
    f"raw move loses value: {rb.sum()}  lesson top loses value: {lw.sum()}  "
    f"missed (rule): {missed.sum()}"
)
print(
    f"missed & raw loses: {(missed & rb).sum()}  raw loses & not missed: {(rb & ~missed).sum()}  "
    f"raw & lesson both lose: {(rb & lw).sum()}"
)
print(
    f"positions with a single value-keeping move: {(nbest == 1).sum()}; "
    f"all legal moves keep value: {(nbest == nlegal).sum()}"
)
for name, m in (("raw loses", rb), ("missed", missed)):
    if m.any():
        print(
            f"  {name}: plies (empty cells left) histogram",
            np.bincount(nlegal[m], minlength=17)[1:],
        )
rng = np.random.default_rng(0)
pick = rng.choice(len(book), min(sample, len(book)), replace=False)
t = time.perf_counter()
search_lessons(game, ev, book[pick], 200)
dt = time.perf_counter() - t
print(
    f"lessons at 200: {len(pick)} positions in {dt:.1f} s ({dt / len(pick) * 1e3:.2f} ms each; "
    f"200k: {dt / len(pick) * 2e5 / 60:.1f} min)",
    flush=True,
)
t = time.perf_counter()
missed_lessons(game, ev, book[taught], lessons[taught])
print(f"missed_lessons on the taught rows: {time.perf_counter() - t:.1f} s", flush=True)
t = time.perf_counter()
g = grow_book(book, game, ev, (0,), True)
print(
    f"raw walks (both sides, position by position): {time.perf_counter() - t:.1f} s; "
    f"figures {g.figures}",
    flush=True,
)
