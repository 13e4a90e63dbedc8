"""Policy/value networks, their ``evaluate`` callable for search, the loss, and checkpoints.

Typical use::

    model = build_model(game, ModelConfig(arch="resnet", blocks=4, channels=64), seed=0)
    evaluate = make_evaluator(model, device="auto")      # the search contract callable
    loss, terms = training_loss(model, batch, weights={"policy": 1.0, "value": 1.0})
    save_checkpoint(path, model=model, model_config=model.config, game_name="uttt", step=n)
    model = load_model(path, device="auto", expected_game=game)
"""

from ultimate_rl.nn.checkpoint import (
    FORMAT_VERSION,
    Checkpoint,
    CheckpointError,
    CheckpointNotFoundError,
    DamagedCheckpointError,
    WrongGameError,
    load_checkpoint,
    load_model,
    save_checkpoint,
)
from ultimate_rl.nn.choice import make_evaluator
from ultimate_rl.nn.config import ModelConfig, ModelConfigError
from ultimate_rl.nn.device import autocast, resolve_device, resolve_precision
from ultimate_rl.nn.evaluator import (
    BACKENDS,
    PATHS,
    NetworkEvaluator,
    OnnxEvaluator,
    OnnxInt8Evaluator,
    TorchBf16Evaluator,
)
from ultimate_rl.nn.inference import InferenceNet, onnx_graph
from ultimate_rl.nn.losses import LOSSES, Batch, Loss, training_loss, wdl_targets
from ultimate_rl.nn.models import (
    MASKED_LOGIT,
    MLP,
    HeadOutputs,
    PolicyValueNet,
    ResNet,
    build_model,
    mask_logits,
    masked_softmax,
)
from ultimate_rl.nn.numerics import Numerics, Probe, probe_positions

__all__ = [
    "BACKENDS",
    "FORMAT_VERSION",
    "LOSSES",
    "MASKED_LOGIT",
    "MLP",
    "PATHS",
    "Batch",
    "Checkpoint",
    "CheckpointError",
    "CheckpointNotFoundError",
    "DamagedCheckpointError",
    "HeadOutputs",
    "InferenceNet",
    "Loss",
    "ModelConfig",
    "ModelConfigError",
    "NetworkEvaluator",
    "Numerics",
    "OnnxEvaluator",
    "OnnxInt8Evaluator",
    "PolicyValueNet",
    "Probe",
    "ResNet",
    "TorchBf16Evaluator",
    "WrongGameError",
    "autocast",
    "build_model",
    "load_checkpoint",
    "load_model",
    "make_evaluator",
    "mask_logits",
    "masked_softmax",
    "onnx_graph",
    "probe_positions",
    "resolve_device",
    "resolve_precision",
    "save_checkpoint",
    "training_loss",
    "wdl_targets",
]
