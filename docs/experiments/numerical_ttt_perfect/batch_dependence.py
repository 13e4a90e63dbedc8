"""Whether a network's outputs on one inference path depend on the batch a position is in.

    python docs/experiments/numerical_ttt_perfect/batch_dependence.py CHECKPOINT [INFERENCE]

Evaluates 256 positions of random play (0-6 moves) in one batch and each alone, on the network
agent's path (``INFERENCE``: ``auto`` by default, or a path name such as onnxruntime_int8), and
prints the largest value difference and how many top moves differ.
"""

from __future__ import annotations

import sys

import numpy as np

from ultimate_rl import agents
from ultimate_rl.games import layout

if len(sys.argv) < 2:
    sys.exit(__doc__)
agent = agents.make(
    "network",
    checkpoint=sys.argv[1],
    num_simulations=0,
    inference=sys.argv[2] if len(sys.argv) > 2 else "auto",
)
game = agent.checkpoint.make_game()
rng = np.random.default_rng(0)
states: list[np.ndarray] = []
while len(states) < 256:
    state = game.initial_state()
    for _ in range(rng.integers(0, 7)):
        if state[layout.STATUS] != layout.ONGOING:
            break
        state = game.apply(state, int(rng.choice(game.legal_actions(state))))
    if state[layout.STATUS] == layout.ONGOING:
        states.append(state)
planes = np.stack([game.encode(s) for s in states]).astype(np.float32)
masks = np.stack([game.legal_mask(s) for s in states])
batch_logits, batch_values = agent.evaluate(planes, masks)
differences, moved = [], 0
for i in range(len(states)):
    logits, values = agent.evaluate(planes[i : i + 1], masks[i : i + 1])
    differences.append(abs(float(values[0]) - float(batch_values[i])))
    top = np.argmax(np.where(masks[i], logits[0], -np.inf))
    moved += int(top != np.argmax(np.where(masks[i], batch_logits[i], -np.inf)))
print(
    f"{type(agent.evaluate).__name__}: value difference alone vs in a batch of 256: max "
    f"{max(differences):.3g}, mean {np.mean(differences):.3g}; top move differs in {moved} of "
    f"{len(states)}"
)
