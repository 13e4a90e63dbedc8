"""Replay buffer (ring window, sampling, exact resume, state encoding) and symmetry augmentation."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from helpers import random_play_states

import ultimate_rl.games as games
from ultimate_rl.games import kernels, layout
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.selfplay.augment import apply_random_symmetries, apply_symmetries
from ultimate_rl.selfplay.replay import Batch, ReplayBuffer

TICTACTOE = games.make("tictactoe")


def game_positions(game, count: int, seed: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``count`` random non-terminal positions of ``game`` as ``add`` arguments: states and
    targets (a random policy over each one's legal actions, distinct values and random
    full-search flags)."""
    rng = np.random.default_rng(seed)
    states = np.stack(random_play_states(game, count, rng))
    masks = np.stack([game.legal_mask(s) for s in states])
    policies = rng.random(masks.shape).astype(np.float32) * masks
    policies /= policies.sum(axis=1, keepdims=True)
    values = rng.permutation(np.linspace(-1, 1, count, dtype=np.float32))
    targets = {"policies": policies, "values": values, "full_search": rng.random(count) < 0.5}
    return states, targets


def as_batch(game, positions: tuple[np.ndarray, dict[str, np.ndarray]]) -> Batch:
    """``game_positions`` output as a batch, encoded one state at a time by the ``Game`` API."""
    states, targets = positions
    planes = np.stack([game.encode(s) for s in states])
    masks = np.stack([game.legal_mask(s) for s in states])
    return Batch(planes, masks, targets)


POOL = game_positions(TICTACTOE, 23, seed=0)[0]


def fake_positions(first: int, count: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Positions whose policy, value and flag encode their serial number, so slots can be
    traced; position ``i`` holds the state ``POOL[i % len(POOL)]``."""
    ids = np.arange(first, first + count)
    states = POOL[ids % len(POOL)]
    masks = np.stack([TICTACTOE.legal_mask(s) for s in states])
    policies = np.where(masks, ids[:, None], 0).astype(np.float32)
    targets = {"policies": policies, "values": ids.astype(np.float32), "full_search": ids % 2 == 0}
    return states, targets


def test_ring_wraps_and_keeps_the_newest_window():
    buffer = ReplayBuffer(TICTACTOE, 5)
    buffer.add(*fake_positions(0, 3))
    assert len(buffer) == 3
    buffer.add(*fake_positions(3, 4))  # wraps: 7 positions into 5 slots
    assert len(buffer) == 5 and buffer.total_added == 7
    assert sorted(buffer.targets["values"].tolist()) == [2, 3, 4, 5, 6]
    assert buffer.targets["values"].tolist() == [5, 6, 2, 3, 4]
    buffer.add(*fake_positions(7, 12))  # one batch larger than the window
    assert sorted(buffer.targets["values"].tolist()) == list(range(14, 19))
    for slot, value in enumerate(buffer.targets["values"].astype(int)):
        np.testing.assert_array_equal(buffer.states[slot], POOL[value % len(POOL)])
        assert buffer.targets["full_search"][slot] == (value % 2 == 0)
        assert buffer.targets["policies"][slot].max() == value


def test_sampling_is_uniform_over_the_filled_part_only():
    buffer = ReplayBuffer(TICTACTOE, 100)
    buffer.add(*fake_positions(0, 10))
    batch = buffer.sample(20_000, np.random.default_rng(0))
    counts = np.bincount(batch.targets["values"].astype(int), minlength=10)
    assert counts.size == 10  # never an unfilled slot
    expected = 20_000 / 10
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 30  # 9 degrees of freedom: p < 0.001 for a fair sampler
    row = batch.targets["values"].astype(int)[:5]
    np.testing.assert_array_equal(batch.targets["policies"][:5].max(axis=1), row)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_sampled_planes_and_masks_are_the_encoding_of_the_stored_states(name):
    game = games.make(name)
    states, targets = game_positions(game, 40, seed=7)
    buffer = ReplayBuffer.for_game(game, 64)
    buffer.add(states, targets)
    batch = buffer.sample(64, np.random.default_rng(8))
    row_of_value = {float(v): i for i, v in enumerate(targets["values"])}  # values are distinct
    sampled = zip(batch.planes, batch.masks, batch.targets["values"], strict=True)
    for planes, masks, value in sampled:
        state = states[row_of_value[float(value)]]
        np.testing.assert_array_equal(planes, game.encode(state))
        np.testing.assert_array_equal(masks, game.legal_mask(state))


def test_encode_batch_overwrites_its_outputs():
    states = POOL[:6]
    planes = np.full((6, *TICTACTOE.observation_shape), 7.0, dtype=np.float32)
    masks = np.ones((6, TICTACTOE.num_actions), dtype=bool)
    kernels.encode_batch(states, planes, masks)
    np.testing.assert_array_equal(planes, np.stack([TICTACTOE.encode(s) for s in states]))
    np.testing.assert_array_equal(masks, np.stack([TICTACTOE.legal_mask(s) for s in states]))


def test_full_search_can_be_one_flag_for_the_whole_batch():
    buffer = ReplayBuffer(TICTACTOE, 8)
    states, targets = fake_positions(0, 4)
    buffer.add(states, {**targets, "full_search": False})
    assert not buffer.targets["full_search"][:4].any()


def test_bad_input_is_rejected_with_the_field_name():
    buffer = ReplayBuffer(TICTACTOE, 8)
    states, targets = fake_positions(0, 4)
    with pytest.raises(ValueError, match="policies must have shape"):
        buffer.add(states, {**targets, "policies": targets["policies"][:, :4]})
    with pytest.raises(ValueError, match="states must have shape"):
        buffer.add(states[:, :10], targets)
    with pytest.raises(ValueError, match=r"got targets \['policies', 'values'\]"):
        buffer.add(states, {"policies": targets["policies"], "values": targets["values"]})
    uttt = games.make("uttt").initial_state()
    with pytest.raises(ValueError, match="game id"):
        buffer.add(np.stack([states[0], uttt]), {k: v[:2] for k, v in targets.items()})
    assert len(buffer) == 0  # nothing half-added
    with pytest.raises(ValueError, match="empty"):
        buffer.sample(4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(TICTACTOE, 0)


def test_state_dict_round_trip_resumes_sampling_exactly():
    buffer = ReplayBuffer(TICTACTOE, 6)
    buffer.add(*fake_positions(0, 9))
    rng = np.random.default_rng(1)
    rng_state = rng.bit_generator.state
    expected = buffer.sample(32, rng, TICTACTOE.symmetries)

    blob = io.BytesIO()
    torch.save({"replay": buffer.state_dict()}, blob)  # what a checkpoint's `extra` holds
    blob.seek(0)
    restored = ReplayBuffer(TICTACTOE, 6)
    restored.load_state_dict(torch.load(blob, weights_only=True)["replay"])
    rng = np.random.default_rng()
    rng.bit_generator.state = rng_state
    got = restored.sample(32, rng, TICTACTOE.symmetries)
    np.testing.assert_array_equal(expected.planes, got.planes)
    np.testing.assert_array_equal(expected.masks, got.masks)
    assert expected.targets.keys() == got.targets.keys()
    for name, array in expected.targets.items():
        np.testing.assert_array_equal(array, got.targets[name])
    assert (restored.total_added, restored.cursor) == (buffer.total_added, buffer.cursor)
    restored.add(*fake_positions(9, 1))
    buffer.add(*fake_positions(9, 1))
    np.testing.assert_array_equal(restored.targets["values"], buffer.targets["values"])
    np.testing.assert_array_equal(restored.states, buffer.states)


def test_positions_are_stored_as_states_not_planes():
    game = games.make("uttt")
    buffer = ReplayBuffer.for_game(game, 100)
    stored = buffer.states.nbytes + sum(a.nbytes for a in buffer.targets.values())
    planes_bytes = 4 * int(np.prod(game.observation_shape))
    assert stored / buffer.capacity < planes_bytes  # less than the planes of one position alone
    assert buffer.states.shape == (100, layout.STATE_LEN)


def test_state_dict_is_compact_and_loads_into_another_window():
    buffer = ReplayBuffer(TICTACTOE, 1000)
    buffer.add(*fake_positions(0, 7))
    state = buffer.state_dict()
    assert state["states"].shape[0] == 7
    blob = io.BytesIO()
    torch.save(state, blob)
    assert len(blob.getvalue()) < buffer.states.nbytes / 10  # the empty slots are not saved
    full = ReplayBuffer(TICTACTOE, 5)
    full.add(*fake_positions(0, 8))  # oldest slot is not slot 0
    smaller = ReplayBuffer(TICTACTOE, 3)
    smaller.load_state_dict(full.state_dict())
    assert sorted(smaller.targets["values"].tolist()) == [5, 6, 7]
    larger = ReplayBuffer(TICTACTOE, 10)
    larger.load_state_dict(full.state_dict())
    assert larger.targets["values"][: len(larger)].tolist() == [3, 4, 5, 6, 7]
    np.testing.assert_array_equal(larger.states[:5], POOL[np.arange(3, 8) % len(POOL)])
    with pytest.raises(ValueError, match="another game"):
        ReplayBuffer(games.make("numerical_ttt"), 5).load_state_dict(full.state_dict())


def test_old_replay_state_with_planes_is_refused_with_the_reason():
    old = ReplayBuffer(TICTACTOE, 5).state_dict()
    del old["states"]
    old["planes"] = torch.zeros(0, *TICTACTOE.observation_shape)
    old["masks"] = torch.zeros(0, TICTACTOE.num_actions, dtype=torch.bool)
    with pytest.raises(ValueError, match="format"):
        ReplayBuffer(TICTACTOE, 5).load_state_dict(old)


def test_batch_to_torch_feeds_the_loss_its_named_targets():
    buffer = ReplayBuffer(TICTACTOE, 4)
    buffer.add(*fake_positions(0, 4))
    tensors = buffer.sample(3, np.random.default_rng(0)).to_torch()
    assert isinstance(tensors, Batch)
    assert tensors.planes.dtype == torch.float32 and tensors.masks.dtype == torch.bool
    targets = tensors.targets
    assert targets["full_search"].dtype == torch.bool and targets["values"].shape == (3,)


@pytest.mark.parametrize("name", ["uttt", "numerical_ttt", "tictactoe"])
def test_augmented_samples_stay_consistent_positions(name):
    game = games.make(name)
    buffer = ReplayBuffer.for_game(game, 64)
    buffer.add(*game_positions(game, 40, seed=2))
    batch = buffer.sample(256, np.random.default_rng(3), symmetries=game.symmetries)
    # the policy mass sits on the legal actions of the augmented mask, and is still a distribution
    policies = batch.targets["policies"]
    assert np.all(policies[~batch.masks] == 0)
    np.testing.assert_allclose(policies.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(batch.masks.sum(axis=1) > 0)
    plain = buffer.sample(256, np.random.default_rng(3))
    for name in ("values", "full_search"):  # targets that do not move with a symmetry
        np.testing.assert_array_equal(batch.targets[name], plain.targets[name])
    # at least one sample really moved (the identity is 1 of len(game.symmetries) choices)
    assert not np.array_equal(batch.planes, plain.planes)


def test_tictactoe_augmented_mask_is_the_empty_cells_of_the_augmented_planes():
    game = games.make("tictactoe")
    samples = as_batch(game, game_positions(game, 30, seed=4))
    augmented = apply_random_symmetries(samples, game.symmetries, np.random.default_rng(5))
    occupied = (augmented.planes[:, 0] + augmented.planes[:, 1]).reshape(30, -1) > 0
    np.testing.assert_array_equal(augmented.masks, ~occupied)


def test_vectorised_augmentation_matches_one_symmetry_at_a_time():
    game = games.make("numerical_ttt")
    samples = as_batch(game, game_positions(game, 24, seed=6))
    choice = np.arange(24) % len(game.symmetries)
    augmented = apply_symmetries(samples, game.symmetries, choice)
    for i in range(24):
        sym = game.symmetries[choice[i]]
        np.testing.assert_array_equal(augmented.planes[i], sym.planes(samples.planes[i]))
        np.testing.assert_array_equal(augmented.masks[i], sym.policy(samples.masks[i]))
        np.testing.assert_array_equal(
            augmented.targets["policies"][i], sym.policy(samples.targets["policies"][i])
        )
