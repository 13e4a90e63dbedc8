"""Inference paths: each agrees with float32 (exactly for the float32 ones, by the numerics rule
for bf16 and int8), ``auto`` chooses by measurement, and new weights reach the next self-play
round on every path.

An onnxruntime session is a snapshot of the weights, unlike the torch evaluator that holds the
live model; these tests check that the snapshot is renewed whenever the weights change, in the
learner's process and in worker processes, and that seeded self-play still reproduces.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ultimate_rl.games as games
from ultimate_rl.nn import (
    MASKED_LOGIT,
    PATHS,
    ModelConfig,
    NetworkEvaluator,
    build_model,
    make_evaluator,
    numerics,
    probe_positions,
)
from ultimate_rl.nn import choice as path_choice
from ultimate_rl.nn.evaluator import float32_outputs
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlayWorker
from ultimate_rl.train.learner import Progress
from ultimate_rl.train.logs import IterationRecord, status_line

GAMES = ["uttt", "numerical_ttt", "tictactoe"]
SMALL = {"blocks": 2, "channels": 8, "value_hidden": 8, "mlp_hidden": (16, 16)}


def small_model(
    game_name: str, arch: str = "mlp", value_head: str = "wdl", seed: int = 0, **options
):
    """A small network whose batch-norm statistics are away from their defaults (so folding them
    into the convolutions for the ONNX graph is exercised)."""
    game = games.make(game_name)
    config = ModelConfig(arch=arch, value_head=value_head, **SMALL, **options)
    model = build_model(game, config, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5, generator=generator)
                module.running_var.uniform_(0.5, 2.0, generator=generator)
    return game, model


def random_inputs(game, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    planes = rng.random((count, *game.observation_shape), dtype=np.float32)
    return planes, rng.random((count, game.num_actions)) < 0.7


# the recipe options that change the network: global pooling (resnet), auxiliary heads
OPTIONS = {
    "resnet": {},
    "mlp": {},
    "resnet_pooled": {"arch": "resnet", "global_pooling": True},
    "mlp_aux": {"arch": "mlp", "aux_heads": ("opponent_policy", "soft_policy")},
}


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("arch", list(OPTIONS))
@pytest.mark.parametrize("value_head", ["scalar", "wdl"])
def test_backends_give_the_same_logits_and_values(name: str, arch: str, value_head: str):
    game, model = small_model(name, value_head=value_head, **(OPTIONS[arch] or {"arch": arch}))
    planes, masks = random_inputs(game, 33, seed=1)
    expected = make_evaluator(model, "cpu", backend="torch")(planes, masks)
    got = make_evaluator(model, "cpu", backend="onnxruntime")(planes, masks)
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-4)
    assert np.all(got[0][~masks] == np.float32(MASKED_LOGIT))


REDUCED = ["torch_bf16", "onnxruntime_int8"]


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("arch", list(OPTIONS))
@pytest.mark.parametrize("path", REDUCED)
def test_reduced_precision_paths_pass_the_numerics_rule(name: str, arch: str, path: str):
    """bf16 and int8 against float32 on real positions of each game, for each model kind: the
    stated tolerance is ``nn.numerics``' rule (the best move float32's or a near tie on >= 95% of
    positions, every value within 0.15); raw logits of legal moves within 0.25 besides."""
    game, model = small_model(name, **(OPTIONS[arch] or {"arch": arch}))
    probe = probe_positions(game, 128, seed=3)
    reference = float32_outputs(model, probe.planes)
    evaluator = make_evaluator(model, "cpu", backend=path, game=game)
    assert evaluator.backend == path
    got = evaluator(probe.planes, probe.masks)
    check = numerics.compare(reference, got, probe.masks)
    assert check.passes, check.summary()
    assert np.abs(got[0] - reference[0])[probe.masks].max() < 0.25
    assert np.all(got[0][~probe.masks] == np.float32(MASKED_LOGIT))
    if path == "onnxruntime_int8":
        assert evaluator.fallbacks == 0  # it ran int8, not its float32 fallback


def test_int8_networks_of_one_game_with_other_planes_get_their_own_probes():
    """uttt with and without its threat planes starts from one state: the probe cache must tell
    the planes apart, or the second network is calibrated on the first one's inputs."""
    for options in ({}, {"threat_planes": True}):
        game = games.make("uttt", **options)
        model = build_model(game, ModelConfig(arch="resnet", **SMALL), seed=0)
        assert probe_positions(game).planes.shape[1:] == game.observation_shape
        evaluator = make_evaluator(model, "cpu", backend="onnxruntime_int8", game=game)
        probe = probe_positions(game)
        evaluator(probe.planes, probe.masks)
        assert evaluator.numerics is not None


def test_the_int8_path_quantizes_and_falls_back_to_float32_when_it_strays(monkeypatch):
    game, model = small_model("uttt", "resnet")
    probe = probe_positions(game)
    evaluator = make_evaluator(model, "cpu", backend="onnxruntime_int8", game=game)
    float32 = make_evaluator(model, "cpu", backend="onnxruntime")
    int8_out = evaluator(probe.planes, probe.masks)
    exact = float32(probe.planes, probe.masks)
    assert not np.array_equal(int8_out[0], exact[0])  # it is not float32 in disguise
    assert evaluator.numerics is not None and evaluator.numerics.passes
    monkeypatch.setattr(numerics, "MAX_VALUE_DIFFERENCE", -1.0)  # nothing passes now
    evaluator.refresh()
    assert evaluator.fallbacks == 1 and not evaluator.numerics.passes
    np.testing.assert_array_equal(evaluator(probe.planes, probe.masks)[0], exact[0])
    with pytest.raises(ValueError, match="calibrates on positions of the network's game"):
        make_evaluator(model, "cpu", backend="onnxruntime_int8")


def test_int8_weights_that_stray_try_a_float32_stem_before_float32(monkeypatch):
    """The graded fallback: a network whose int8 graph strays runs the int8 graph with its stem
    in float32 when that passes (later weights try it first), float32 only when both stray."""
    import onnx

    from ultimate_rl.nn import evaluator as evaluator_module
    from ultimate_rl.nn.quantize import int8_graph

    game, model = small_model("uttt", "resnet")
    probe = probe_positions(game)
    stem = onnx.load_from_string(int8_graph(model, probe.half(0).planes, float_stem=True))
    dequantized = {n.output[0] for n in stem.graph.node if n.op_type == "DequantizeLinear"}
    convs = {n.name: n.input[1] in dequantized for n in stem.graph.node if n.op_type == "Conv"}
    assert not any(int8 for name, int8 in convs.items() if "stem" in name)  # float32 weights
    assert any(int8 for name, int8 in convs.items() if "stem" not in name)  # the trunk is int8
    stray = build_model(game, ModelConfig(arch="resnet", **SMALL), seed=1)  # other weights
    built = []

    def graph(network, calibration, float_stem=False):
        built.append(float_stem)
        return int8_graph(network if float_stem else stray, calibration, float_stem)

    monkeypatch.setattr(evaluator_module, "int8_graph", graph)
    evaluator = make_evaluator(model, "cpu", backend="onnxruntime_int8", game=game)
    got = evaluator(probe.planes, probe.masks)
    assert built == [False, True] and evaluator.float_stem and not evaluator.fell_back
    assert (
        evaluator.fallbacks == 0
        and numerics.compare(float32_outputs(model, probe.planes), got, probe.masks).passes
    )
    evaluator.refresh()
    evaluator(probe.planes, probe.masks)
    assert built == [False, True, True]  # a network that strayed keeps straying: stem first
    monkeypatch.setattr(numerics, "MAX_VALUE_DIFFERENCE", -1.0)  # nothing passes now
    evaluator.refresh()
    evaluator(probe.planes, probe.masks)
    assert evaluator.fell_back and evaluator.fallbacks == 1


def test_self_play_on_int8_weights_that_fell_back_says_so_in_the_run_log(monkeypatch):
    """A round whose int8 weights failed their check ran at float32's speed: the iteration's
    line and TensorBoard (``selfplay/float32_fallback_rate``) say so, a passing round says
    nothing."""
    game, model = small_model("tictactoe", "mlp")
    evaluator = make_evaluator(model, "cpu", backend="onnxruntime_int8", game=game)
    settings = SelfPlaySettings(parallel_games=2)
    worker = SelfPlayWorker(game, SearchConfig(num_simulations=4), settings)
    rng = np.random.default_rng(0)
    passed = worker.play(evaluator, 2, rng).stats
    monkeypatch.setattr(numerics, "MAX_VALUE_DIFFERENCE", -1.0)  # nothing passes now
    evaluator.refresh()
    failed = worker.play(evaluator, 2, rng).stats
    assert (passed.rounds, passed.float32_rounds, failed.float32_rounds) == (1, 0, 1)
    assert failed.float_stem_rounds == 0  # float32 after both graphs strayed
    both = passed.merge(failed)
    assert both.summary()["float32_fallback_rate"] == 0.5
    line = status_line(Progress(iteration=1), 10, IterationRecord(both, {}, 0))
    assert "1/2 rounds in float32: int8 check failed" in line
    assert "float32" not in status_line(Progress(iteration=1), 10, IterationRecord(passed, {}, 0))
    passed.float_stem_rounds = 1  # int8 with its stem in float32
    line = status_line(Progress(iteration=1), 10, IterationRecord(passed, {}, 0))
    assert "1/1 rounds with a float32 stem: int8 check failed" in line


@pytest.mark.parametrize("backend", PATHS)
def test_chunked_and_empty_batches(backend: str):
    game, model = small_model("uttt", "resnet")
    planes, masks = random_inputs(game, 10, seed=4)
    whole = make_evaluator(model, "cpu", backend=backend, game=game)(planes, masks)
    chunked = make_evaluator(model, "cpu", backend=backend, max_batch=3, game=game)(planes, masks)
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    empty = make_evaluator(model, "cpu", backend=backend, game=game)(planes[:0], masks[:0])
    assert empty[0].shape == (0, game.num_actions) and empty[1].shape == (0,)


@pytest.fixture
def unpinned(monkeypatch):
    """``auto`` chooses by measurement (the suite's conftest pins it to onnxruntime)."""
    monkeypatch.delenv("ULTIMATE_RL_INFERENCE", raising=False)


def test_auto_times_every_candidate_and_takes_the_fastest_that_passes(monkeypatch, unpinned):
    game, model = small_model("uttt", "resnet")
    evaluator = make_evaluator(model, "cpu", game=game, batch_size=16)
    choice = evaluator.choice
    expected = {"torch", "onnxruntime", "onnxruntime_int8"}
    if torch.ops.mkldnn._is_mkldnn_bf16_supported():
        expected.add("torch_bf16")
    assert set(choice.positions_per_s) == expected and not choice.cached
    assert evaluator.backend == choice.path
    passing = [p for p in expected if p not in choice.numerics or choice.numerics[p].passes]
    assert choice.path == max(passing, key=choice.positions_per_s.get)
    assert choice.summary().startswith(f"inference: {choice.path} (auto")
    # the same machine, network shape and batch: the timings come from the cache
    again = make_evaluator(model, "cpu", game=game, batch_size=16).choice
    assert again.cached and again.positions_per_s == choice.positions_per_s
    # reduced precision that strays is passed over, however fast it is
    fast = dict.fromkeys(expected, 1.0) | {"onnxruntime_int8": 1e9, "torch_bf16": 1e9}
    monkeypatch.setattr(path_choice, "time_paths", lambda *args: fast)
    monkeypatch.setattr(numerics, "MAX_VALUE_DIFFERENCE", -1.0)
    strict = make_evaluator(model, "cpu", game=game, batch_size=17)
    assert strict.backend in ("torch", "onnxruntime")
    assert "fails the rule" in strict.choice.summary()


def test_auto_without_a_game_times_only_the_float32_paths_and_a_bad_cache_is_remeasured(unpinned):
    _, model = small_model("tictactoe")
    evaluator = make_evaluator(model, "cpu", batch_size=5)
    assert set(evaluator.choice.positions_per_s) == {"torch", "onnxruntime"}
    path_choice.cache_path().write_text("{not json")
    again = make_evaluator(model, "cpu", batch_size=5).choice
    assert not again.cached and path_choice.cache_path().read_text().startswith("{")


def test_a_pinned_path_is_taken_without_timing(monkeypatch):
    game, model = small_model("tictactoe")
    monkeypatch.setenv("ULTIMATE_RL_INFERENCE", "onnxruntime_int8")
    evaluator = make_evaluator(model, "cpu", game=game)
    assert evaluator.backend == "onnxruntime_int8" and evaluator.choice is None
    monkeypatch.setenv("ULTIMATE_RL_INFERENCE", "tpu")
    with pytest.raises(ValueError, match="ULTIMATE_RL_INFERENCE='tpu' is not an inference path"):
        make_evaluator(model, "cpu", game=game)


def test_unknown_backends_are_refused():
    _, model = small_model("tictactoe")
    torch_evaluator = make_evaluator(model, "cpu", backend="torch")
    assert type(torch_evaluator) is NetworkEvaluator and torch_evaluator.backend == "torch"
    with pytest.raises(ValueError, match="unknown inference backend 'tensorrt'"):
        make_evaluator(model, "cpu", backend="tensorrt")
    with pytest.raises(ValueError, match=r"selfplay\.inference must be one of"):
        SelfPlaySettings(inference="onnx")


@pytest.mark.parametrize("path", PATHS)
def test_an_optimiser_step_or_loaded_weights_are_seen_by_the_next_call(path: str):
    game, model = small_model("uttt", "resnet")
    planes, masks = random_inputs(game, 8, seed=2)
    evaluate = make_evaluator(model, "cpu", backend=path, game=game)
    exact = path in ("torch", "onnxruntime")
    tolerance = 1e-4 if exact else 0.25
    before = evaluate(planes, masks)
    model.train()  # as the trainer leaves it
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    outputs = model(torch.from_numpy(planes))
    (outputs["policy"].square().mean() + outputs["value"].square().mean()).backward()
    optimiser.step()
    stepped = evaluate(planes, masks)
    assert not np.allclose(stepped[0], before[0], atol=1e-3)
    reference = make_evaluator(model, "cpu", backend="torch")(planes, masks)[0]
    np.testing.assert_allclose(stepped[0], reference, atol=tolerance)
    model.load_state_dict(small_model("uttt", "resnet", seed=5)[1].state_dict())
    loaded = evaluate(planes, masks)
    fresh = small_model("uttt", "resnet", seed=5)[1]
    expected = make_evaluator(fresh, "cpu", backend=path, game=game)(planes, masks)
    if exact or path == "onnxruntime_int8":  # the same int8 graph from the same weights
        np.testing.assert_array_equal(loaded[0], expected[0])
    else:
        np.testing.assert_allclose(loaded[0], expected[0], atol=tolerance)


def assert_same_data(a: SelfPlayData, b: SelfPlayData) -> None:
    for field in ("states", "policies", "values", "full_search"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


def play_rounds(workers: int, inference: str = "onnxruntime") -> list[SelfPlayData]:
    """Three rounds with one seed: the first weights, new ones, then the first ones again."""
    spec = {"name": "tictactoe", "options": {}}
    settings = SelfPlaySettings(
        workers=workers, parallel_games=4, games_per_iteration=8, inference=inference
    )
    _, model = small_model("tictactoe", seed=0)
    weights = [model.state_dict(), small_model("tictactoe", seed=3)[1].state_dict()]
    weights[0] = {k: v.clone() for k, v in weights[0].items()}
    pool = SelfPlayPool(spec, model, SearchConfig(num_simulations=8), settings, torch.device("cpu"))
    rounds = []
    try:
        for state in (weights[0], weights[1], weights[0]):
            model.load_state_dict(state)
            rounds.append(pool.play(8, seed=11))
    finally:
        pool.close()
    return rounds


@pytest.mark.parametrize(
    ("workers", "inference"), [(1, p) for p in PATHS] + [(2, "onnxruntime"), (2, "auto")]
)
def test_new_weights_reach_the_next_self_play_round(workers: int, inference: str, unpinned):
    first, updated, restored = play_rounds(workers, inference)
    assert not np.array_equal(first.policies, updated.policies)
    assert_same_data(first, restored)  # the same weights and seed: the same games


def test_every_convolution_of_a_fresh_network_runs_in_int8():
    """A fresh network's folded biases are equal, which the exporter shares through Identity
    nodes; the int8 graph must still quantize every convolution's weights and bias."""
    import onnx

    from ultimate_rl.nn.quantize import int8_graph

    game = games.make("uttt")
    model = build_model(game, ModelConfig(arch="resnet", blocks=2, channels=8), seed=0)
    graph = onnx.load_from_string(int8_graph(model, probe_positions(game).planes[:64]))
    made_by = {output: node.op_type for node in graph.graph.node for output in node.output}
    convolutions = [node for node in graph.graph.node if node.op_type == "Conv"]
    trunk = [node for node in convolutions if "_head" not in node.name]
    assert len(trunk) == 5  # the stem and two blocks of two
    for node in trunk:
        assert [made_by.get(name) for name in node.input] == ["DequantizeLinear"] * 3, node.name
