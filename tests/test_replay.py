"""Replay buffer (ring window, sampling, exact resume) and symmetry augmentation."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import ultimate_rl.games as games
from ultimate_rl.selfplay.augment import apply_random_symmetries, apply_symmetries
from ultimate_rl.selfplay.replay import Batch, ReplayBuffer

SHAPE, ACTIONS = (2, 3, 3), 9


def fake_positions(first: int, count: int) -> tuple[np.ndarray, ...]:
    """Positions whose every field encodes its serial number, so slots can be traced."""
    ids = np.arange(first, first + count, dtype=np.float32)
    planes = np.broadcast_to(ids[:, None, None, None], (count, *SHAPE)).copy()
    masks = (np.arange(ACTIONS)[None, :] <= (ids[:, None] % ACTIONS)).astype(bool)
    policies = np.where(masks, ids[:, None], 0).astype(np.float32)
    return planes, masks, policies, ids, ids % 2 == 0


def test_ring_wraps_and_keeps_the_newest_window():
    buffer = ReplayBuffer(5, SHAPE, ACTIONS)
    buffer.add(*fake_positions(0, 3))
    assert len(buffer) == 3
    buffer.add(*fake_positions(3, 4))  # wraps: 7 positions into 5 slots
    assert len(buffer) == 5 and buffer.total_added == 7
    assert sorted(buffer.values.tolist()) == [2, 3, 4, 5, 6]
    assert buffer.values.tolist() == [5, 6, 2, 3, 4]
    buffer.add(*fake_positions(7, 12))  # one batch larger than the window
    assert sorted(buffer.values.tolist()) == list(range(14, 19))
    for slot, value in enumerate(buffer.values):
        np.testing.assert_array_equal(buffer.planes[slot], value)
        assert buffer.full_search[slot] == (value % 2 == 0)
        assert buffer.masks[slot].sum() == value % ACTIONS + 1


def test_sampling_is_uniform_over_the_filled_part_only():
    buffer = ReplayBuffer(100, SHAPE, ACTIONS)
    buffer.add(*fake_positions(0, 10))
    batch = buffer.sample(20_000, np.random.default_rng(0))
    counts = np.bincount(batch.values.astype(int), minlength=10)
    assert counts.size == 10  # never an unfilled slot
    expected = 20_000 / 10
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 30  # 9 degrees of freedom: p < 0.001 for a fair sampler
    row = batch.values.astype(int)[:5]
    np.testing.assert_array_equal(batch.planes[:5, 0, 0, 0], row)


def test_full_search_can_be_one_flag_for_the_whole_batch():
    buffer = ReplayBuffer(8, SHAPE, ACTIONS)
    planes, masks, policies, values, _ = fake_positions(0, 4)
    buffer.add(planes, masks, policies, values, full_search=False)
    assert not buffer.full_search[:4].any()


def test_bad_input_is_rejected_with_the_field_name():
    buffer = ReplayBuffer(8, SHAPE, ACTIONS)
    planes, masks, policies, values, full = fake_positions(0, 4)
    with pytest.raises(ValueError, match="policies must have shape"):
        buffer.add(planes, masks, policies[:, :4], values, full)
    with pytest.raises(ValueError, match="empty"):
        buffer.sample(4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(0, SHAPE, ACTIONS)


def test_state_dict_round_trip_resumes_sampling_exactly():
    buffer = ReplayBuffer(6, SHAPE, ACTIONS)
    buffer.add(*fake_positions(0, 9))
    rng = np.random.default_rng(1)
    rng_state = rng.bit_generator.state
    expected = buffer.sample(32, rng)

    blob = io.BytesIO()
    torch.save({"replay": buffer.state_dict()}, blob)  # what a checkpoint's `extra` holds
    blob.seek(0)
    restored = ReplayBuffer(6, SHAPE, ACTIONS)
    restored.load_state_dict(torch.load(blob, weights_only=True)["replay"])
    rng = np.random.default_rng()
    rng.bit_generator.state = rng_state
    got = restored.sample(32, rng)
    for a, b in zip(expected, got, strict=True):
        np.testing.assert_array_equal(a, b)
    assert (restored.total_added, restored.cursor) == (buffer.total_added, buffer.cursor)
    restored.add(*fake_positions(9, 1))
    buffer.add(*fake_positions(9, 1))
    np.testing.assert_array_equal(restored.values, buffer.values)


def test_state_dict_is_compact_and_loads_into_another_window():
    buffer = ReplayBuffer(1000, SHAPE, ACTIONS)
    buffer.add(*fake_positions(0, 7))
    state = buffer.state_dict()
    assert state["planes"].shape[0] == 7
    blob = io.BytesIO()
    torch.save(state, blob)
    assert len(blob.getvalue()) < buffer.planes.nbytes / 10  # the empty slots are not saved
    full = ReplayBuffer(5, SHAPE, ACTIONS)
    full.add(*fake_positions(0, 8))  # oldest slot is not slot 0
    smaller = ReplayBuffer(3, SHAPE, ACTIONS)
    smaller.load_state_dict(full.state_dict())
    assert sorted(smaller.values.tolist()) == [5, 6, 7]
    larger = ReplayBuffer(10, SHAPE, ACTIONS)
    larger.load_state_dict(full.state_dict())
    assert larger.values[: len(larger)].tolist() == [3, 4, 5, 6, 7]
    with pytest.raises(ValueError, match="another game"):
        ReplayBuffer(5, (3, 3, 3), ACTIONS).load_state_dict(full.state_dict())


def test_batch_to_torch_feeds_the_loss_in_field_order():
    buffer = ReplayBuffer(4, SHAPE, ACTIONS)
    buffer.add(*fake_positions(0, 4))
    tensors = buffer.sample(3, np.random.default_rng(0)).to_torch()
    assert isinstance(tensors, Batch)
    assert tensors.planes.dtype == torch.float32 and tensors.masks.dtype == torch.bool
    assert tensors.full_search.dtype == torch.bool and tensors.values.shape == (3,)


def game_samples(game, count: int, seed: int) -> Batch:
    """Random positions of ``game`` with a random policy target over their legal actions."""
    rng = np.random.default_rng(seed)
    planes, masks = [], []
    while len(planes) < count:
        state = game.initial_state()
        while not game.is_terminal(state) and len(planes) < count:
            planes.append(game.encode(state))
            masks.append(game.legal_mask(state))
            state = game.apply(state, int(rng.choice(game.legal_actions(state))))
    masks = np.stack(masks)
    policies = rng.random(masks.shape).astype(np.float32) * masks
    policies /= policies.sum(axis=1, keepdims=True)
    values = rng.uniform(-1, 1, count).astype(np.float32)
    return Batch(np.stack(planes), masks, policies, values, rng.random(count) < 0.5)


@pytest.mark.parametrize("name", ["uttt", "numerical_ttt", "tictactoe"])
def test_augmented_samples_stay_consistent_positions(name):
    game = games.make(name)
    buffer = ReplayBuffer.for_game(game, 64)
    buffer.add(*game_samples(game, 40, seed=2))
    batch = buffer.sample(256, np.random.default_rng(3), symmetries=game.symmetries)
    # the policy mass sits on the legal actions of the augmented mask, and is still a distribution
    assert np.all(batch.policies[~batch.masks] == 0)
    np.testing.assert_allclose(batch.policies.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(batch.masks.sum(axis=1) > 0)
    plain = buffer.sample(256, np.random.default_rng(3))
    np.testing.assert_array_equal(batch.values, plain.values)  # values are not transformed
    # at least one sample really moved (the identity is 1 of 8 choices)
    assert not np.array_equal(batch.planes, plain.planes)


def test_tictactoe_augmented_mask_is_the_empty_cells_of_the_augmented_planes():
    game = games.make("tictactoe")
    samples = game_samples(game, 30, seed=4)
    augmented = apply_random_symmetries(samples, game.symmetries, np.random.default_rng(5))
    occupied = (augmented.planes[:, 0] + augmented.planes[:, 1]).reshape(30, -1) > 0
    np.testing.assert_array_equal(augmented.masks, ~occupied)


def test_vectorised_augmentation_matches_one_symmetry_at_a_time():
    game = games.make("numerical_ttt")
    samples = game_samples(game, 24, seed=6)
    choice = np.arange(24) % len(game.symmetries)
    augmented = apply_symmetries(samples, game.symmetries, choice)
    for i in range(24):
        sym = game.symmetries[choice[i]]
        np.testing.assert_array_equal(augmented.planes[i], sym.planes(samples.planes[i]))
        np.testing.assert_array_equal(augmented.masks[i], sym.policy(samples.masks[i]))
        np.testing.assert_array_equal(augmented.policies[i], sym.policy(samples.policies[i]))
