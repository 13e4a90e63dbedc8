"""How closely networks fit a label set: the raw policy's cross-entropy, KL and top-1 agreement
with the search's visit distribution, and the value's squared error to the search's root value.

    python fit.py LABEL_DIR AGENT.urla...

Measured on up to 8,000 labels of the last 16 chunks written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ultimate_rl.loading import load_agent

COUNT = 8000


def main() -> None:
    parts = [np.load(chunk) for chunk in sorted(Path(sys.argv[1]).glob("chunk_*.npz"))[-16:]]
    states = np.concatenate([part["states"] for part in parts])[:COUNT]
    target = np.concatenate([part["policies"] for part in parts])[:COUNT]
    q = np.concatenate([part["root_values"] for part in parts])[:COUNT]
    entropy = -(target * np.log(np.clip(target, 1e-12, 1))).sum(1).mean()
    print(f"{len(states)} labels, visit distribution entropy {entropy:.3f}")
    for path in sys.argv[2:]:
        agent = load_agent(path, num_simulations=0, inference="torch")
        game = agent.checkpoint.make_game()
        masks = np.stack([game.legal_mask(state) for state in states])
        logits, values = agent.evaluate(np.stack([game.encode(s) for s in states]), masks)
        logits = np.where(masks, logits, -1e9)
        logits -= logits.max(1, keepdims=True)
        log_policy = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        cross = -(target * log_policy).sum(1).mean()
        top = (log_policy.argmax(1) == target.argmax(1)).mean()
        error = ((values - q) ** 2).mean()
        print(
            f"{Path(path).name}: policy cross-entropy {cross:.3f}, KL {cross - entropy:.3f}, "
            f"top-1 {top:.3f}; value squared error to q {error:.4f}"
        )


if __name__ == "__main__":
    main()
