"""Config validation: every bad config fails before training, naming the key and the fix."""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException, HydraException
from omegaconf import OmegaConf

from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.train import ConfigError, check_config, prepare_run
from ultimate_rl.train.config import SECTIONS
from ultimate_rl.train.learner import learning_rate, model_fix
from ultimate_rl.train.presets import PRESETS, Preset, preset_values
from ultimate_rl.train.run import CONFIG_DIR, compose_train_config

ROOT = Path(__file__).resolve().parents[1]
# a run config saved before optim.loss_weights existed: the first shipped agent's
V1_RUN_CONFIG = ROOT / "docs/experiments/uttt_agent_v1/run/config.yaml"

EXPERIMENTS = sorted(path.stem for path in (CONFIG_DIR / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("preset", EXPERIMENTS)
def test_every_experiment_passes_the_checks(preset: str):
    cfg = compose_train_config([f"experiment={preset}"])
    checked = check_config(cfg)
    assert checked.game.name == cfg.game.name


def test_the_gpu_preset_is_sized_for_16_cores_and_one_gpu_and_builds_on_a_cpu():
    """``uttt_gpu``: the 8x96 ResNet, 15 async actors on CUDA, a larger batch; it composes and
    passes the checks here (no GPU needed), and its learner builds with ``device=cpu``."""
    import torch

    from ultimate_rl.train.learner import Learner

    run = check_config(compose_train_config(["experiment=uttt_gpu"]))
    assert (run.model.arch, run.model.blocks, run.model.channels) == ("resnet", 8, 96)
    assert run.device == "cuda" and run.selfplay.actor_device == "cuda"
    assert run.train.mode == "async" and run.selfplay.workers == 15
    assert run.train.batch_size >= 1024 and run.search.num_simulations >= 64
    cpu = check_config(compose_train_config(["experiment=uttt_gpu", "device=cpu"]))
    learner = Learner(cpu, torch.device("cpu"))
    params = sum(p.numel() for p in learner.model.parameters())
    assert 1_000_000 < params < 2_000_000  # 8 blocks x 2 convs x 96 x 96 x 9 ~ 1.3M


def test_unknown_key_in_a_file_or_override_is_named_with_the_valid_keys():
    cfg = compose_train_config([])
    OmegaConf.set_struct(cfg, False)
    cfg.train.iteratons = 5  # a typo, as a preset file could contain
    with pytest.raises(ConfigError, match=r"train\.iteratons.*valid keys in train.*iterations"):
        check_config(cfg)
    with pytest.raises(HydraException, match="iteratons"):
        compose_train_config(["train.iteratons=5"])


def test_unknown_group_option_lists_the_choices():
    with pytest.raises(ConfigCompositionException, match=r"(?s)resnet_huge.*mlp"):
        compose_train_config(["model=resnet_huge"])


def test_unknown_choice_inside_a_section():
    with pytest.raises(ConfigError, match=r"optim\.name 'adam'.*adamw"):
        check_config(compose_train_config(["optim.name=adam"]))
    with pytest.raises(ConfigError, match="eval opponent 'gnugo'"):
        check_config(compose_train_config(["eval.opponents=[gnugo]"]))


def test_a_bad_game_name_or_option_names_the_choices():
    with pytest.raises(ConfigError, match=r"unknown game 'chess'; choose one of \['connect_four'"):
        check_config(compose_train_config(["game.name=chess"]))
    with pytest.raises(ConfigError, match=r"tictactoe size must be one of \[3, 4, 5\], got 2"):
        check_config(compose_train_config(["game=tictactoe", "game.size=2"]))


def test_wrong_type_is_reported():
    with pytest.raises(ConfigError, match="batch_size"):
        check_config(compose_train_config(["train.batch_size=many"]))


def test_selfplay_section_is_the_workers_settings_with_their_defaults():
    assert OmegaConf.to_container(compose_train_config([]).selfplay) == asdict(SelfPlaySettings())
    overrides = ["selfplay.temperature=2", "selfplay.playout_cap.fraction_full=0.25"]
    settings = check_config(compose_train_config(overrides)).selfplay
    assert settings.playout_cap.fraction_full == 0.25
    assert settings.temperature == 2.0 and isinstance(settings.temperature, float)


def test_the_selfplay_sections_still_import_from_where_they_were_declared():
    from ultimate_rl.selfplay import parallel, schema, worker

    for name in (
        "SelfPlaySettings",
        "PlayoutCapSettings",
        "ResignSettings",
        "RandomOpeningSettings",
    ):
        assert getattr(worker, name) is getattr(schema, name)
    assert parallel.RaySettings is schema.RaySettings


def test_the_composed_config_holds_every_declared_key_with_its_default():
    """The dataclasses hold the defaults; what Hydra composes (``train/presets.py``'s
    ConfigStore entries) must say the same, so every key can be overridden by name."""
    cfg = compose_train_config([])
    for name, schema in SECTIONS.items():
        assert OmegaConf.to_container(cfg[name]) == asdict(schema()), name
    assert {k: cfg[k] for k in ("seed", "device", "resume")} == {
        "seed": 0,
        "device": "auto",
        "resume": False,
    }
    assert sorted(cfg.model) == sorted(f.name for f in fields(ModelConfig))
    assert sorted(cfg.search) == sorted(f.name for f in fields(SearchConfig))


@pytest.mark.parametrize(
    ("group", "name"), [(g, n) for g, options in PRESETS.items() for n in options]
)
def test_every_group_preset_composes_with_its_changes_and_passes_the_checks(group: str, name: str):
    game = "uttt" if PRESETS[group][name].changes.get("board_size") == 9 else "tictactoe"
    cfg = compose_train_config([f"{group}={name}", f"game={game}"])
    for key, value in PRESETS[group][name].changes.items():
        assert cfg[group][key] == value, (group, name, key)
    check_config(cfg)


def test_a_preset_that_changes_an_unknown_key_is_named(monkeypatch: pytest.MonkeyPatch):
    broken = {**PRESETS["model"], "typo": Preset("a misspelt key", {"chanels": 8})}
    monkeypatch.setitem(PRESETS, "model", broken)
    with pytest.raises(KeyError, match=r"model=typo changes unknown key\(s\) \['chanels'\]"):
        preset_values("model", "typo")


def test_a_network_mismatch_names_the_preset_that_builds_it():
    small = ModelConfig.from_dict(preset_values("model", "resnet_small"))
    fix = model_fix(small, ModelConfig.from_dict(preset_values("model", "mlp")))
    assert fix.startswith("set model=resnet_small to match (or ")
    assert "model.blocks=3" in fix and "model.arch=resnet" in fix


def test_sections_come_back_typed():
    run = check_config(compose_train_config(["train.max_minutes=2", "optim.lr=1"]))
    assert run.train.max_minutes == 2.0 and isinstance(run.train.max_minutes, float)
    assert run.optim.lr == 1.0 and isinstance(run.optim.lr, float)
    assert run.eval.gating.num_games == 40 and run.game_options == {"size": 3, "k": 3}


def test_loss_weights_name_every_loss():
    run = check_config(compose_train_config(["optim.loss_weights.value=0.5"]))
    aux_off = {"opponent_policy": 0.0, "soft_policy": 0.0, "ownership": 0.0}
    assert run.optim.loss_weights == {"policy": 1.0, "value": 0.5, **aux_off}
    with pytest.raises(
        ConfigError, match=r"optim\.loss_weights.*\['opponent_policy', 'ownership', 'policy'"
    ):
        check_config(compose_train_config(["+optim.loss_weights.valeu=1"]))


@pytest.mark.parametrize(
    "overrides",
    [
        ["model.aux_heads=[soft_policy]"],  # a head without a weight trains nothing
        ["optim.loss_weights.opponent_policy=0.15"],  # a weight without its head
    ],
)
def test_an_aux_head_needs_both_its_head_and_a_weight(overrides: list[str]):
    with pytest.raises(ConfigError, match=r"model\.aux_heads AND give it a weight"):
        check_config(compose_train_config(overrides))
    both = ["model.aux_heads=[opponent_policy]", "optim.loss_weights.opponent_policy=0.15"]
    assert check_config(compose_train_config(both)).model.aux_heads == ("opponent_policy",)


def test_value_target_q_weight_is_a_fraction():
    with pytest.raises(ConfigError, match=r"optim\.value_target_q_weight must be in \[0, 1\]"):
        check_config(compose_train_config(["optim.value_target_q_weight=1.5"]))


def test_a_run_saved_with_value_loss_weight_keeps_that_weight():
    saved = OmegaConf.load(V1_RUN_CONFIG)
    assert "value_loss_weight" in saved.optim  # written before optim.loss_weights
    aux_off = {
        "opponent_policy": 0.0,
        "soft_policy": 0.0,
        "ownership": 0.0,
    }  # heads added since: off
    assert check_config(saved).optim.loss_weights == {"policy": 1.0, "value": 1.0, **aux_off}
    saved = OmegaConf.load(V1_RUN_CONFIG)
    saved.optim.value_loss_weight = 0.25
    assert check_config(saved).optim.loss_weights == {"policy": 1.0, "value": 0.25, **aux_off}


def test_selfplay_keys_and_values_are_checked_by_name():
    cfg = compose_train_config([])
    OmegaConf.set_struct(cfg, False)
    cfg.selfplay.resign.treshold = 0.5
    with pytest.raises(
        ConfigError, match=r"selfplay\.resign\.treshold.*valid keys in selfplay\.resign.*threshold"
    ):
        check_config(cfg)
    with pytest.raises(ConfigError, match=r"selfplay\.random_opening\.max_plies must be >= 0"):
        check_config(compose_train_config(["selfplay.random_opening.max_plies=-1"]))


def test_nine_by_nine_network_on_a_three_by_three_game_fails_early():
    with pytest.raises(ConfigError, match=r"9x9 boards.*3x3"):
        check_config(compose_train_config(["game=tictactoe", "model=resnet_small"]))


def test_solver_based_options_need_a_solved_game():
    with pytest.raises(ConfigError, match="perfect"):
        check_config(compose_train_config(["experiment=uttt_cpu", "eval.opponents=[perfect]"]))


def test_model_and_search_keys_are_checked_by_their_owners():
    with pytest.raises(ConfigError, match="model"):
        check_config(compose_train_config(["+model.depth=3"]))
    with pytest.raises(ConfigError, match="search"):
        check_config(compose_train_config(["search.num_simulations=0"]))


def test_resume_needs_a_run_folder(tmp_path: Path):
    cfg = compose_train_config([f"resume={tmp_path}"])
    with pytest.raises(ConfigError, match="nothing to resume"):
        prepare_run(cfg, tmp_path / "new", [])


def test_learning_rate_schedules():
    optim = check_config(compose_train_config([])).optim
    optim.warmup_steps = 10
    assert learning_rate(optim, 0, 1000) == pytest.approx(optim.lr / 10)
    assert learning_rate(optim, 10, 1000) == pytest.approx(optim.lr)
    assert learning_rate(optim, 1000, 1000) == pytest.approx(optim.lr * optim.min_lr_fraction)
    # a run stopped by the clock anneals by its time: half the minutes spent, half the cosine
    half = optim.lr * (optim.min_lr_fraction + (1 - optim.min_lr_fraction) * 0.5)
    assert learning_rate(optim, 20, 1000, time_spent=0.5) == pytest.approx(half)
    assert learning_rate(optim, 20, 1000, time_spent=2.0) == pytest.approx(
        optim.lr * optim.min_lr_fraction
    )
    assert learning_rate(optim, 1000, 1000, time_spent=0.1) == pytest.approx(
        optim.lr * optim.min_lr_fraction
    )
    optim.schedule = "step"
    optim.step_every = 100
    assert learning_rate(optim, 250, 1000) == pytest.approx(optim.lr * optim.step_gamma**2)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.precision=fp8", r"unknown train\.precision 'fp8'"),
        ("train.precision=fp16", r"train\.precision: precision='fp16' is for CUDA only"),
    ],
)
def test_a_bad_training_precision_is_named(override: str, message: str):
    with pytest.raises(ConfigError, match=message):
        check_config(compose_train_config([override, "device=cpu"]))


def test_an_unknown_aux_head_is_named_with_the_valid_ones():
    with pytest.raises(ConfigError, match=r"unknown model\.aux_heads \['bogus'\]; choose from"):
        check_config(compose_train_config(["model.aux_heads=[bogus]"]))
    with pytest.raises(ConfigError, match=r"each at most once"):
        check_config(compose_train_config(["model.aux_heads=[soft_policy,soft_policy]"]))
