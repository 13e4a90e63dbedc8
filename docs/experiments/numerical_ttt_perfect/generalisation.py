"""Does a policy MLP generalise the second player's exact moves, and what would help: more
positions, a wider layer, or inputs that show the numbers' sums?

Positions: uniformly random play to ply 5 (``N / 2`` of them) and ply 7 (``N``), second player
to move, kept where it can still hold a draw and some legal move would lose it (the moves the
every-line rule judges). Target: every move of the best exact value. An MLP (``HIDDEN``, e.g.
``256,256`` as the preset) trains its policy alone on 80% of them for 40 epochs; it prints the
share of positions whose top move is not optimal, on those and on the 20% held out, by ply.
``INPUTS``: ``plain`` (the game's planes), ``magnitude`` (plus each cell's number / 9) or
``sums`` (plus each line's sum / 15 and count of numbers / 3).

    python docs/experiments/numerical_ttt_perfect/generalisation.py N HIDDEN INPUTS...
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from ultimate_rl.games import make
from ultimate_rl.nn.models import mask_logits

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
game = make("numerical_ttt")


def sample(ply: int, count: int, rng: np.random.Generator) -> list[tuple]:
    """``count`` distinct judged positions at ``ply``: (planes, optimal moves, legal, ply)."""
    seen: set[bytes] = set()
    found = []
    while len(found) < count:
        state = game.initial_state()
        for _ in range(ply):
            legal = game.legal_actions(state)
            state = game.apply(state, int(legal[rng.integers(len(legal))]))
            if game.is_terminal(state):
                break
        if game.is_terminal(state) or state.tobytes() in seen:
            continue
        seen.add(state.tobytes())
        values, legal = game.exact_action_values(state), game.legal_mask(state)
        best = values[legal].max()
        if best < 0 or values[legal].min() == best:
            continue
        optimal = (legal & (values == best)).astype(np.float32)
        found.append((game.encode(state), optimal, legal, ply))
    return found


def inputs(planes: torch.Tensor, kind: str) -> torch.Tensor:
    """The network's input: the planes flattened, with the extra features of ``kind``."""
    where = planes[:, :9].reshape(len(planes), 9, 9)  # [position, number - 1, cell]
    value = (where * torch.arange(1, 10).float()[None, :, None]).sum(1)  # [position, cell]
    if kind not in ("plain", "magnitude", "sums"):
        raise SystemExit(f"unknown INPUTS {kind!r}: plain, magnitude or sums")
    extra = [] if kind == "plain" else [value / 9]
    if kind == "sums":
        filled = where.sum(1)
        for line in LINES:
            extra += [value[:, line].sum(1, keepdim=True) / 15]
            extra += [filled[:, line].sum(1, keepdim=True) / 3]
    return torch.cat([planes.flatten(1), *extra], 1)


def main(count: int, hidden: list[int], kinds: list[str]) -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    start = time.time()
    rows = sample(5, count // 2, rng) + sample(7, count, rng)
    print(f"{len(rows)} positions sampled in {time.time() - start:.0f} s", flush=True)
    planes = torch.tensor(np.stack([r[0] for r in rows]))
    optimal = torch.tensor(np.stack([r[1] for r in rows]))
    masks = torch.tensor(np.stack([r[2] for r in rows]))
    plies = np.array([r[3] for r in rows])
    held = rng.random(len(rows)) < 0.2
    train, test = np.flatnonzero(~held), np.flatnonzero(held)
    for kind in kinds:
        x = inputs(planes, kind)
        torch.manual_seed(0)
        layers: list[torch.nn.Module] = []
        width = x.shape[1]
        for size in hidden:
            layers += [torch.nn.Linear(width, size), torch.nn.ReLU()]
            width = size
        model = torch.nn.Sequential(*layers, torch.nn.Linear(width, game.num_actions))
        optimiser = torch.optim.AdamW(model.parameters(), lr=2e-3)

        def wrong(rows: np.ndarray, model: torch.nn.Module = model, x: torch.Tensor = x) -> dict:
            with torch.no_grad():
                top = mask_logits(model(x[rows]), masks[rows]).argmax(1)
            missed = (optimal[rows].gather(1, top[:, None])[:, 0] == 0).numpy()
            return {ply: round(float(missed[plies[rows] == ply].mean()), 3) for ply in (5, 7)}

        start = time.time()
        for epoch in range(1, 41):
            order = np.random.default_rng(epoch).permutation(train)
            for i in range(0, len(order), 256):
                batch = order[i : i + 256]
                logits = mask_logits(model(x[batch]), masks[batch])
                goal = optimal[batch] / optimal[batch].sum(1, keepdim=True)
                loss = -(goal * torch.log_softmax(logits, 1)).sum(1).mean()
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
            if epoch % 20 == 0:
                print(
                    f"N={count} hidden={hidden} {kind} epoch {epoch} ({time.time() - start:.0f} s)"
                    f" wrong: trained {wrong(train)} held out {wrong(test)}",
                    flush=True,
                )


if __name__ == "__main__":
    main(int(sys.argv[1]), [int(h) for h in sys.argv[2].split(",")], sys.argv[3:])
